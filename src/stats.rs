//! Order statistics of samples: one definition of a quantile for the whole workspace.
//!
//! Calibration (mode finding, medians of probes) and the CLI's measurements (`herald bench`,
//! `herald fidelity`) summarize samples by their median, 10th and 90th percentiles. They all use
//! the same rule, the *nearest rank*: the `q`-quantile of `n` sorted samples is the sample at
//! index `round(q·(n − 1))` (halves round away from zero, so the median of an even count is the
//! upper of the two middle samples). Every quantile is therefore one of the samples, never an
//! interpolation between two.

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
}
