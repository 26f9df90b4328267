//! When a calibration has measured enough: the per-slice samples of the eight profile
//! quantities, and the settling rule both calibrations (in-process threads and `herald-mpi`'s
//! ranks) apply to them.
//!
//! After each slice the modes of every quantity are found again ([`find_modes`]); a quantity is
//! *settled* once [`STABLE_CHECKS`] consecutive checks agreed with the one before (the same
//! number of modes, every centre within 3 % or the quantity's absolute tolerance), with at least
//! 10 slices and 3 samples in every mode.

use super::modes::modes_agree;
use super::{distribution, find_modes};
use crate::model::{Distribution, Mode};

/// The quantities recorded per slice, in profile key order.
pub const QUANTITIES: [&str; 8] = [
    "raw_hop_ns",
    "one_way_ns",
    "L_ns",
    "o_s_ns",
    "o_r_ns",
    "g_ns",
    "G_ns_per_byte",
    "lambda",
];

/// Absolute tolerance of the settling check per quantity (the relative tolerance is 3 %).
const ABS_TOL: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.01, 0.05];

/// Consecutive agreeing checks that make a quantity settled.
pub const STABLE_CHECKS: u32 = 3;

/// The samples of one measured pair and how settled each quantity is.
///
/// # Examples
///
/// ```
/// use herald::calibrate::Settling;
/// let mut s = Settling::default();
/// for _ in 0..40 {
///     s.push([50.0, 40.0, 30.0, 5.0, 5.0, 10.0, 0.1, 2.0], 0.01);
///     s.check();
/// }
/// assert!(s.all_settled());
/// assert_eq!(s.distribution(0).unwrap().modes[0].center, 50.0);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Settling {
    /// Per slice, the eight quantities.
    samples: Vec<[f64; 8]>,
    /// Per slice, its weight (its duration).
    weights: Vec<f64>,
    /// The modes found at the last check, per quantity.
    previous: Vec<Vec<Mode>>,
    /// Consecutive agreeing checks, per quantity.
    stable: [u32; 8],
}

impl Settling {
    /// Records one slice's quantities with its weight.
    pub fn push(&mut self, sample: [f64; 8], weight: f64) {
        self.samples.push(sample);
        self.weights.push(weight);
    }

    /// Slices recorded.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether no slice is recorded.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Quantity `k`'s samples with their weights, in the order they were pushed.
    pub(crate) fn weighted(&self, k: usize) -> Vec<(f64, f64)> {
        self.samples
            .iter()
            .zip(&self.weights)
            .map(|(s, &w)| (s[k], w))
            .collect()
    }

    /// Finds the modes of every quantity again and updates the settling counters.
    pub fn check(&mut self) {
        let current: Vec<Vec<Mode>> = (0..QUANTITIES.len())
            .map(|k| find_modes(&self.weighted(k)))
            .collect();
        for (k, modes) in current.iter().enumerate() {
            let enough = self.samples.len() >= 10 && modes.iter().all(|m| m.samples >= 3);
            let agree = self
                .previous
                .get(k)
                .is_some_and(|p| modes_agree(p, modes, 0.03, ABS_TOL[k]));
            self.stable[k] = if enough && agree {
                self.stable[k] + 1
            } else {
                0
            };
        }
        self.previous = current;
    }

    /// Whether quantity `k` is settled.
    pub fn settled(&self, k: usize) -> bool {
        self.stable[k] >= STABLE_CHECKS
    }

    /// Whether every quantity is settled.
    pub fn all_settled(&self) -> bool {
        (0..QUANTITIES.len()).all(|k| self.settled(k))
    }

    /// The quantities not settled, each as `name.quantity`.
    pub fn unsettled(&self, name: &str) -> Vec<String> {
        (0..QUANTITIES.len())
            .filter(|&k| !self.settled(k))
            .map(|k| format!("{name}.{}", QUANTITIES[k]))
            .collect()
    }

    /// Quantity `k`'s distribution, marked settled or not; `None` before the first slice.
    pub fn distribution(&self, k: usize) -> Option<Distribution> {
        if self.samples.is_empty() {
            return None;
        }
        let mut d = distribution(&self.weighted(k));
        d.settled = self.settled(k);
        Some(d)
    }
}
