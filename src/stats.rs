//! Order statistics of samples: one definition of a quantile for the whole workspace.
//!
//! Calibration (mode finding, medians of probes) and the CLI's measurements (`herald bench`,
//! `herald fidelity`) summarize samples by their median, 10th and 90th percentiles. They all use
//! the same rule, the *nearest rank*: the `q`-quantile of `n` sorted samples is the sample at
//! index `round(q·(n − 1))` (halves round away from zero, so the median of an even count is the
//! upper of the two middle samples). Every quantile is therefore one of the samples, never an
//! interpolation between two.
//!
//! One exception, for single intervals read from a coarse clock: [`smoothed_median`] spreads
//! each sample over the clock's step, so that its median moves with the true time between steps.

/// The nearest-rank `q`-quantile (`0 ..= 1`, clamped) of `sorted` (ascending): the sample at
/// index `round(q·(n − 1))`; `None` for no samples.
///
/// # Examples
///
/// ```
/// use herald::stats::quantile;
/// let v = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
/// assert_eq!(quantile(&v, 0.5), Some(6));
/// assert_eq!(quantile(&v, 0.1), Some(2));
/// assert_eq!(quantile(&v, 0.9), Some(10));
/// assert_eq!(quantile(&[1, 2], 0.5), Some(2)); // the upper middle sample
/// assert_eq!(quantile::<u32>(&[], 0.5), None);
/// ```
pub fn quantile<T: Copy>(sorted: &[T], q: f64) -> Option<T> {
    let last = sorted.len().checked_sub(1)?;
    let i = (q.clamp(0.0, 1.0) * last as f64).round() as usize;
    Some(sorted[i.min(last)])
}

/// The finite values among `values`, sorted ascending (NaN and infinities dropped).
pub fn sorted_finite(values: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The nearest-rank median of the finite `values`; NaN if there are none.
///
/// # Examples
///
/// ```
/// assert_eq!(herald::stats::median(&[3.0, f64::NAN, 1.0, 2.0]), 2.0);
/// assert!(herald::stats::median(&[]).is_nan());
/// ```
pub fn median(values: &[f64]) -> f64 {
    quantile(&sorted_finite(values.iter().copied()), 0.5).unwrap_or(f64::NAN)
}

/// Median, 10th and 90th percentile of a sample (nearest rank).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary<T> {
    /// The median.
    pub median: T,
    /// The 10th percentile.
    pub p10: T,
    /// The 90th percentile.
    pub p90: T,
}

impl<T: Copy + Ord> Summary<T> {
    /// The summary of `samples`; `None` if empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::stats::Summary;
    /// let s = Summary::of(&[5u64, 1, 4, 2, 3]).unwrap();
    /// assert_eq!((s.p10, s.median, s.p90), (1, 3, 5));
    /// ```
    pub fn of(samples: &[T]) -> Option<Summary<T>> {
        let mut v = samples.to_vec();
        v.sort_unstable();
        Summary::of_sorted(&v)
    }
}

impl<T: Copy> Summary<T> {
    /// The summary of samples already sorted ascending; `None` if empty.
    pub fn of_sorted(sorted: &[T]) -> Option<Summary<T>> {
        Some(Summary {
            median: quantile(sorted, 0.5)?,
            p10: quantile(sorted, 0.1)?,
            p90: quantile(sorted, 0.9)?,
        })
    }
}

impl Summary<f64> {
    /// The summary of the finite values among `samples`; `None` if there are none.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::stats::Summary;
    /// let s = Summary::of_f64(&[2.5, f64::INFINITY, 0.5, 1.5]).unwrap();
    /// assert_eq!((s.p10, s.median, s.p90), (0.5, 1.5, 2.5));
    /// ```
    pub fn of_f64(samples: &[f64]) -> Option<Summary<f64>> {
        Summary::of_sorted(&sorted_finite(samples.iter().copied()))
    }
}

/// The median of `values` read from a clock that ticks every `step` ns: each finite sample
/// stands for the interval `step` wide around it, spread evenly, and the median is the point
/// with half of that spread mass on either side (the middle of the points where exactly half
/// is, if the mass has a gap there). NaN if no value is finite.
///
/// A single interval timed by a clock with a coarse step reads as one of the two multiples of
/// the step around the true time, the upper one with a probability that grows with the true
/// time's place between them. The nearest-rank [`median`] of such reads is one multiple or the
/// other, and a drift of a nanosecond can move it a whole step: on the development VM
/// (`step` 10 ns) a one-line broadcast of about 80 ns calibrated at 70 ns in one profile and at
/// 84 ns in the next (docs/fidelity.md, "Fifty-sixth session"). Spread over their step, the
/// reads' median moves with the true time: for a constant time it lies within 0.09 `step` of
/// it. With `step` 0 this is the classical median (the mean of the two middle samples of an
/// even count).
///
/// # Examples
///
/// ```
/// use herald::stats::smoothed_median;
/// // Seven reads of 80 and three of 70 from a 10-ns clock: about 77 ns, not 80.
/// let reads = [80.0, 70.0, 80.0, 80.0, 70.0, 80.0, 80.0, 80.0, 70.0, 80.0];
/// let m = smoothed_median(&reads, 10.0);
/// assert!((m - 77.857).abs() < 1e-3, "{m}");
/// assert_eq!(smoothed_median(&[1.0, 2.0, 4.0, 9.0], 0.0), 3.0);
/// assert!(smoothed_median(&[f64::NAN], 10.0).is_nan());
/// ```
pub fn smoothed_median(values: &[f64], step: f64) -> f64 {
    let v = sorted_finite(values.iter().copied());
    let k = v.len();
    if k == 0 {
        return f64::NAN;
    }
    let w = if step.is_finite() { step.max(0.0) } else { 0.0 };
    if w == 0.0 {
        // Without spread: the middle sample of an odd count, the middle of the two middle
        // samples of an even one.
        return if k % 2 == 1 {
            v[k / 2]
        } else {
            0.5 * (v[k / 2 - 1] + v[k / 2])
        };
    }
    let half = k as f64 / 2.0;
    // The spread mass at or below `t` (in samples): continuous and non-decreasing in `t`.
    let mass = |t: f64| -> f64 { v.iter().map(|&x| ((t - x) / w + 0.5).clamp(0.0, 1.0)).sum() };
    // Bisection for the least `t` with mass ≥ half and the greatest with mass ≤ half: the ends
    // of the set where it is exactly half (one point unless the mass has a gap there).
    let bound = |upper: bool| -> f64 {
        let (mut lo, mut hi) = (v[0] - w, v[k - 1] + w);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            let m = mass(mid);
            if m > half || (!upper && m == half) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        0.5 * (lo + hi)
    };
    0.5 * (bound(false) + bound(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On `0, 1, …, n − 1` every sample is its own index, so the quantile must lie within ½ of
    /// `q·(n − 1)`, for every `n` and `q`.
    #[test]
    fn quantile_is_a_sample_with_the_right_rank() {
        for n in 1..40usize {
            let v: Vec<usize> = (0..n).collect();
            for k in 0..=20 {
                let q = f64::from(k) / 20.0;
                let x = quantile(&v, q).unwrap();
                // x is its own index: its distance to q·(n − 1) is at most ½.
                let target = q * (n - 1) as f64;
                assert!(
                    (x as f64 - target).abs() <= 0.5 + 1e-12,
                    "n {n} q {q} → {x}"
                );
            }
        }
    }

    /// A constant time `x` read by a clock of step `w` whose phase is spread evenly: each read
    /// is a multiple of `w`, the upper one around `x` in the share `frac(x / w)` of the reads.
    fn dithered(x: f64, w: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| {
                let phase = (i as f64 + 0.5) / n as f64 * w;
                ((phase + x) / w).floor() * w - (phase / w).floor() * w
            })
            .collect()
    }

    /// Over a range of true times the smoothed median of dithered reads stays within 0.09 of a
    /// step of the truth (the bound derived in `smoothed_median`'s docs), where the
    /// nearest-rank median is off by up to half a step.
    #[test]
    fn smoothed_median_follows_the_true_time_between_clock_steps() {
        let w = 10.0;
        let mut worst_nearest: f64 = 0.0;
        for i in 0..400 {
            let x = 60.0 + f64::from(i) * 0.1;
            let reads = dithered(x, w, 1000);
            let m = smoothed_median(&reads, w);
            assert!((m - x).abs() <= 0.09 * w, "x {x}: smoothed {m}");
            worst_nearest = worst_nearest.max((median(&reads) - x).abs());
        }
        assert!(
            worst_nearest > 0.4 * w,
            "nearest-rank worst {worst_nearest}"
        );
    }

    #[test]
    fn smoothed_median_shifts_with_its_samples_and_is_the_median_without_a_step() {
        let v = [3.0, 9.0, 1.0, 7.0, 7.0, 20.0];
        let m = smoothed_median(&v, 2.0);
        let shifted: Vec<f64> = v.iter().map(|x| x + 1000.0).collect();
        assert!((smoothed_median(&shifted, 2.0) - (m + 1000.0)).abs() < 1e-9);
        // Step 0: the classical median (7 and 7 in the middle; 1, 3, 7 | 9 for 4 samples).
        assert_eq!(smoothed_median(&v, 0.0), 7.0);
        assert_eq!(smoothed_median(&[1.0, 3.0, 7.0, 9.0], 0.0), 5.0);
        // Two samples further apart than the step: half the mass lies on each, and the
        // median is the middle of the gap.
        assert_eq!(smoothed_median(&[0.0, 100.0], 10.0), 50.0);
        // A step far below the samples' spread moves the median by less than half a step.
        let wide: Vec<f64> = (0..101).map(|i| f64::from(i * i)).collect();
        assert!((smoothed_median(&wide, 1.0) - 2500.0).abs() <= 0.5);
        assert!(smoothed_median(&[], 1.0).is_nan());
    }
}
