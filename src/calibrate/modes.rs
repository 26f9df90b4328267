//! Distributions and their modes: a histogram on a log scale with valley detection.
//!
//! # The mode finder
//!
//! Given weighted samples (a value per measurement slice, weighted by the slice's duration):
//!
//! 1. Work on `ln(value)` when every value is positive (latencies spread multiplicatively),
//!    on the value itself otherwise (a fitted `L` may be negative).
//! 2. Clip to the 1st–99th percentile for the histogram (outliers — a preempted slice — then
//!    join the nearest mode instead of making one), and stop if that range is narrower than 5 %
//!    of the value (`ln 1.05` on the log scale): one mode.
//! 3. Histogram with the Rice rule's `⌈2·n^(1/3)⌉` bins (10 to 60), counts smoothed once with
//!    the `[1, 2, 1]/4` kernel.
//! 4. Peaks are local maxima. Walking left to right, two neighbouring peaks are kept apart
//!    only if the lowest bin between them (the valley) is at most half the smaller peak **and**
//!    lower than it by at least two Poisson standard deviations (`2·√peak`); otherwise the lower
//!    peak is merged into the higher one. So noise in a unimodal histogram does not split it.
//! 5. Modes are cut at the valleys; a mode with less than 5 % of the samples joins its
//!    neighbour on the side of the shallower valley.
//! 6. Each mode reports the median, p10 and p90 of its own samples and its share of the total
//!    weight (time). Modes are listed by share, largest first.
//!
//! Percentiles are *lower* sample percentiles (a sample value, never an interpolation), so no
//! reported number lies in a gap between modes unless a sample did.

use crate::model::{Distribution, Mode};
use crate::stats::sorted_finite;

/// Shortest log-range that can hold two modes (5 %).
const MIN_SPLIT_RANGE: f64 = 0.048_790_164; // ln(1.05)
/// Smallest share of samples a mode must hold.
const MIN_MODE_SHARE: f64 = 0.05;

/// The nearest-rank `q`-quantile of sorted values (NaN for none).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    crate::stats::quantile(sorted, q).unwrap_or(f64::NAN)
}

/// Finds the modes of weighted samples `(value, weight)` (weights are e.g. slice durations;
/// non-finite values are ignored). Returns the modes largest share first; empty for no
/// samples. See the module docs for the method.
///
/// # Examples
///
/// ```
/// // Two regimes, 48 ns and 225 ns, a third of the time in the second.
/// let mut samples = Vec::new();
/// for i in 0..300 {
///     let jitter = f64::from(i % 7) - 3.0;
///     let v = if i % 3 == 0 { 225.0 + 2.0 * jitter } else { 48.0 + jitter };
///     samples.push((v, 1.0));
/// }
/// let modes = herald::calibrate::find_modes(&samples);
/// assert_eq!(modes.len(), 2);
/// assert!((modes[0].center - 48.0).abs() < 2.0 && (modes[1].center - 225.0).abs() < 5.0);
/// assert!((modes[1].share - 1.0 / 3.0).abs() < 0.01);
/// ```
pub fn find_modes(samples: &[(f64, f64)]) -> Vec<Mode> {
    find_modes_of_share(samples, MIN_MODE_SHARE)
}

/// [`find_modes`] with modes of at least `min_share` of the samples (step 5 of the module
/// notes) instead of 5 %: for a measure whose rarer modes matter, such as the host's latency
/// states the calibration must tell apart however seldom they come.
pub(crate) fn find_modes_of_share(samples: &[(f64, f64)], min_share: f64) -> Vec<Mode> {
    let mut pts: Vec<(f64, f64)> = samples
        .iter()
        .copied()
        .filter(|(v, w)| v.is_finite() && w.is_finite() && *w >= 0.0)
        .collect();
    if pts.is_empty() {
        return Vec::new();
    }
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let log = pts.iter().all(|p| p.0 > 0.0);
    let xs: Vec<f64> = pts
        .iter()
        .map(|p| if log { p.0.ln() } else { p.0 })
        .collect();
    let cuts = valleys(&xs, log, min_share);
    let mut groups: Vec<&[(f64, f64)]> = Vec::new();
    let mut start = 0;
    for cut in cuts {
        let end = xs.partition_point(|&x| x < cut);
        groups.push(&pts[start..end]);
        start = end;
    }
    groups.push(&pts[start..]);
    let total: f64 = pts.iter().map(|p| p.1).sum();
    let mut modes: Vec<Mode> = groups
        .into_iter()
        .filter(|g| !g.is_empty())
        .map(|g| {
            let values: Vec<f64> = g.iter().map(|p| p.0).collect();
            let weight: f64 = g.iter().map(|p| p.1).sum();
            Mode {
                center: quantile(&values, 0.5),
                p10: quantile(&values, 0.1),
                p90: quantile(&values, 0.9),
                share: if total > 0.0 {
                    weight / total
                } else {
                    g.len() as f64 / pts.len() as f64
                },
                samples: g.len(),
                regime_hop_ns: None,
            }
        })
        .collect();
    modes.sort_by(|a, b| b.share.total_cmp(&a.share));
    modes
}

/// The cut points (in the working scale) between modes of sorted `xs`.
fn valleys(xs: &[f64], log: bool, min_share: f64) -> Vec<f64> {
    let n = xs.len();
    if n < 20 {
        return Vec::new();
    }
    let (lo, hi) = (quantile(xs, 0.01), quantile(xs, 0.99));
    let scale = if log { 1.0 } else { hi.abs().max(lo.abs()) };
    if hi - lo <= MIN_SPLIT_RANGE * scale || (hi - lo).is_nan() {
        return Vec::new();
    }
    let bins = ((2.0 * (n as f64).cbrt()).ceil() as usize).clamp(10, 60);
    let width = (hi - lo) / bins as f64;
    let mut counts = vec![0.0f64; bins];
    for &x in xs {
        let b = ((x - lo) / width).floor().clamp(0.0, (bins - 1) as f64) as usize;
        counts[b] += 1.0;
    }
    let smooth: Vec<f64> = (0..bins)
        .map(|i| {
            let left = if i > 0 { counts[i - 1] } else { 0.0 };
            let right = if i + 1 < bins { counts[i + 1] } else { 0.0 };
            (left + 2.0 * counts[i] + right) / 4.0
        })
        .collect();
    // Peaks: local maxima (plateaus count once, at their first bin).
    let mut peaks: Vec<usize> = (0..bins)
        .filter(|&i| {
            let left = if i > 0 { smooth[i - 1] } else { -1.0 };
            let right = if i + 1 < bins { smooth[i + 1] } else { -1.0 };
            smooth[i] > left && smooth[i] >= right && smooth[i] > 0.0
        })
        .collect();
    // Merge peaks separated by shallow valleys, until every remaining valley is deep.
    loop {
        let mut merged = false;
        for k in 0..peaks.len().saturating_sub(1) {
            let (a, b) = (peaks[k], peaks[k + 1]);
            let valley = (a..=b).map(|i| smooth[i]).fold(f64::INFINITY, f64::min);
            let small = smooth[a].min(smooth[b]);
            let deep = valley <= 0.5 * small && small - valley >= 2.0 * small.sqrt();
            if !deep {
                peaks.remove(if smooth[a] < smooth[b] { k } else { k + 1 });
                merged = true;
                break;
            }
        }
        if !merged {
            break;
        }
    }
    // Cut at the lowest bin between neighbouring peaks (middle of a flat valley).
    let mut cuts: Vec<(f64, f64)> = peaks
        .windows(2)
        .map(|w| {
            let valley = (w[0]..=w[1])
                .map(|i| smooth[i])
                .fold(f64::INFINITY, f64::min);
            let flat: Vec<usize> = (w[0]..=w[1]).filter(|&i| smooth[i] == valley).collect();
            let mid = flat[flat.len() / 2];
            (lo + (mid as f64 + 0.5) * width, valley)
        })
        .collect();
    // Drop cuts that leave a mode with too few samples (merging across the shallower valley).
    loop {
        let bounds: Vec<usize> = std::iter::once(0)
            .chain(cuts.iter().map(|c| xs.partition_point(|&x| x < c.0)))
            .chain(std::iter::once(n))
            .collect();
        let small = (0..bounds.len() - 1)
            .find(|&m| ((bounds[m + 1] - bounds[m]) as f64) < min_share * n as f64);
        let Some(m) = small else { break };
        if cuts.is_empty() {
            break;
        }
        // The small group lies between cut m − 1 and cut m: drop the shallower (higher) one.
        let drop = if m == cuts.len() || (m > 0 && cuts[m - 1].1 >= cuts[m].1) {
            m - 1
        } else {
            m
        };
        cuts.remove(drop);
    }
    cuts.into_iter().map(|c| c.0).collect()
}

/// The index of the mode in `modes` whose center is nearest `x` on a log scale (values at or
/// below zero count as a thousandth); `None` without modes. Modes are found on a log scale
/// ([`find_modes`]), so this is how a sample is told its mode.
///
/// # Examples
///
/// ```
/// // Two regimes, 48 ns and 225 ns (as in `find_modes`).
/// let samples: Vec<(f64, f64)> = (0..300)
///     .map(|i| {
///         let jitter = f64::from(i % 7) - 3.0;
///         (if i % 3 == 0 { 225.0 + 2.0 * jitter } else { 48.0 + jitter }, 1.0)
///     })
///     .collect();
/// let modes = herald::calibrate::find_modes(&samples);
/// assert_eq!(modes.len(), 2);
/// let nearest = |x| herald::calibrate::nearest_mode(&modes, x).map(|k| modes[k].center);
/// // their geometric mean is about 104
/// assert!(nearest(100.0).is_some_and(|c| c < 60.0));
/// assert!(nearest(110.0).is_some_and(|c| c > 200.0));
/// assert!(nearest(0.0).is_some_and(|c| c < 60.0)); // zero counts as a thousandth
/// assert_eq!(herald::calibrate::nearest_mode(&[], 1.0), None);
/// ```
pub fn nearest_mode(modes: &[Mode], x: f64) -> Option<usize> {
    let log = |v: f64| v.max(1e-3).ln();
    let far = |k: usize| (log(x) - log(modes[k].center)).abs();
    (0..modes.len()).min_by(|&i, &j| far(i).total_cmp(&far(j)))
}

/// The distribution of weighted samples: median, p10, p90 over all samples, and the modes.
/// `settled` is set by the caller's stability check; here it is `false`.
///
/// # Examples
///
/// ```
/// let d = herald::calibrate::distribution(&[(10.0, 1.0), (11.0, 1.0), (12.0, 1.0)]);
/// // nearest rank (`herald::stats`): p90 is the sample at round(0.9 · 2) = 2
/// assert_eq!((d.median, d.p10, d.p90, d.samples), (11.0, 10.0, 12.0, 3));
/// assert_eq!(d.modes.len(), 1);
/// ```
pub fn distribution(samples: &[(f64, f64)]) -> Distribution {
    let sorted = sorted_finite(samples.iter().map(|p| p.0));
    Distribution {
        median: quantile(&sorted, 0.5),
        p10: quantile(&sorted, 0.1),
        p90: quantile(&sorted, 0.9),
        samples: sorted.len(),
        modes: find_modes(samples),
        settled: false,
    }
}

/// Whether two successive mode estimates agree: the same number of modes, and each center
/// moved by less than `rel` (relative) or `abs` (absolute), whichever is larger.
pub(crate) fn modes_agree(a: &[Mode], b: &[Mode], rel: f64, abs: f64) -> bool {
    if a.len() != b.len() || a.is_empty() {
        return false;
    }
    let centers = |m: &[Mode]| sorted_finite(m.iter().map(|m| m.center));
    centers(a)
        .iter()
        .zip(centers(b))
        .all(|(x, y)| (x - y).abs() <= (rel * x.abs().max(y.abs())).max(abs))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state in 3 % of the samples, far from the rest (hops of 46 ns and of 200 ns, as the
    /// calibration's fast and slow states): a mode of its own at a 2 % floor, merged into its
    /// neighbour at the default 5 %.
    #[test]
    fn a_rare_far_state_is_a_mode_only_above_its_floor() {
        let samples: Vec<(f64, f64)> = (0..1000)
            .map(|i| {
                let jitter = f64::from(i % 9) * 0.5;
                let v = if i % 100 < 3 { 200.0 } else { 44.0 };
                (v + jitter, 1.0)
            })
            .collect();
        let rare = find_modes_of_share(&samples, 0.02);
        assert_eq!(rare.len(), 2, "{rare:?}");
        assert!((rare[1].center - 202.0).abs() < 3.0, "{rare:?}");
        assert!((rare[1].share - 0.03).abs() < 1e-9, "{rare:?}");
        assert_eq!(find_modes(&samples).len(), 1);
        assert_eq!(find_modes_of_share(&samples, MIN_MODE_SHARE).len(), 1);
    }
}
