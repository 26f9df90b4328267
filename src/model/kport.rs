//! The k-port round model (Bar-Noy & Ho, "Broadcasting multiple messages in the multiport
//! model"): synchronous rounds of unit length, `k` ports in and `k` ports out per processor.
//!
//! # Rules (as the checker applies them)
//!
//! In each round `r` (the interval `[r, r + 1)`) a processor sends at most `k` blocks, to `k`
//! *distinct* processors, and receives at most `k` blocks, from `k` distinct processors; a block
//! received in round `r` is available, and may be forwarded, from round `r + 1`. The same block
//! may go to several processors in one round (copies). These are the 1-port rules with `k`
//! simultaneous send intervals and `k` simultaneous receive intervals: the checker's
//! [`Timing::ports`] is `k`, and two intervals that overlap on one processor must have different
//! partners (`Rule::SamePartner`); more than `k` overlapping intervals break `Rule::PortLimit`.
//! `k = 1` is the 1-port model ([`OnePort`](super::OnePort)).
//!
//! With `n` processors at most `n − 1` partners exist, so the effective port count is
//! `k' = min(k, n − 1)`; every bound below uses `k'`.
//!
//! # Lower bounds (`docs/kport-reading.md`)
//!
//! * Lemma 1: one block needs `⌈log_{k'+1} n⌉` rounds (the informed set grows at most
//!   `(k' + 1)`-fold per round).
//! * Lemma 2: `m` blocks need `⌈m/k'⌉ + ⌈log_{k'+1} n⌉ − 1` rounds (the root's last distinct
//!   block leaves in round `⌈m/k'⌉` at the earliest, then needs one round less than Lemma 1).
//! * Lemma 3 (as reconstructed): let `β = m − k'(⌈m/k'⌉ − 1)` be the number of blocks the root can
//!   first send in its last sending round `R = ⌈m/k'⌉`, and `L = ⌈log_{k'+1} n⌉`. Those β blocks
//!   are held by nobody but the root before round `R`; in every round each holder of at least one
//!   of them sends at most `k'` copies, so after the `j` rounds `R … R + j − 1` at most
//!   `(k' + 1)^j − 1` (processor, block) pairs among them exist outside the root. All `(n − 1)β`
//!   pairs are needed, so if `(n − 1)β > (k' + 1)^L − 1` the bound of Lemma 2 rises by one.
//!   Corollary 4: for `n = (k + 1)^L` the bound is `⌈m/k⌉ + L` unless `m ≡ 1 (mod k)`.
//!
//! [`KPort::broadcast_lower_bound`](CostModel::broadcast_lower_bound) returns the Lemma 3 bound
//! (which contains Lemmas 1 and 2); `tests/kport.rs` confirms it against exhaustive search.

use super::{CostModel, ModelError, Problem, Timing};
use crate::time::{Ratio, Ticks, TimeBase};

/// The k-port send/receive round model.
///
/// # Examples
///
/// ```
/// use herald::{CostModel, model::{KPort, Problem}};
/// let m = KPort::new(4)?;
/// let base = m.time_base()?;
/// // ⌈64/4⌉ + ⌈log5 10000⌉ − 1 = 16 + 6 − 1, plus one by Lemma 3 (β = 4 blocks in the last round).
/// assert_eq!(m.broadcast_lower_bound(Problem { n: 10_000, m: 64 }, base)?, 22);
/// # Ok::<(), herald::model::ModelError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KPort {
    /// Ports per direction, `1 ..= MAX_PORTS`.
    k: u32,
}

impl KPort {
    /// The largest port count supported.
    pub const MAX_PORTS: u32 = 1 << 16;

    /// The k-port model with `k` ports in each direction.
    ///
    /// # Errors
    /// [`ModelError::Parameter`] unless `1 ≤ k ≤ 65536`.
    pub fn new(k: u32) -> Result<KPort, ModelError> {
        if k == 0 || k > Self::MAX_PORTS {
            return Err(ModelError::Parameter {
                name: "ports",
                value: k.to_string(),
                why: "the k-port model needs 1 ≤ k ≤ 65536",
            });
        }
        Ok(KPort { k })
    }

    /// Ports per direction.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// The effective port count `min(k, n − 1)` for `n ≥ 2` processors (1 for `n ≤ 2`).
    pub fn effective(&self, n: u32) -> u32 {
        self.k.min(n.saturating_sub(1)).max(1)
    }

    /// The lower bound in rounds (see the module docs): `0` for `n ≤ 1`.
    pub fn rounds_lower_bound(&self, n: u32, m: u32) -> u64 {
        if n <= 1 || m == 0 {
            return 0;
        }
        let k = u64::from(self.effective(n));
        let n = u64::from(n);
        let m = u64::from(m);
        let levels = log_ceil(k + 1, n);
        let batches = m.div_ceil(k);
        let beta = m - k * (batches - 1);
        let reach = (k + 1).saturating_pow(levels as u32) - 1;
        let extra = u64::from((n - 1).saturating_mul(beta) > reach);
        batches + levels - 1 + extra
    }
}

/// `⌈log_b x⌉` for `b ≥ 2`, `x ≥ 1`: the least `L` with `b^L ≥ x`.
pub(crate) fn log_ceil(b: u64, x: u64) -> u64 {
    let mut l = 0;
    let mut p: u64 = 1;
    while p < x {
        p = p.saturating_mul(b);
        l += 1;
    }
    l
}

impl CostModel for KPort {
    fn name(&self) -> &'static str {
        "kport"
    }

    fn params(&self) -> Vec<(&'static str, Ratio)> {
        vec![("ports", Ratio::integer(u64::from(self.k)))]
    }

    fn time_base(&self) -> Result<TimeBase, ModelError> {
        Ok(TimeBase::UNIT)
    }

    fn timing(&self, base: TimeBase) -> Result<Timing, ModelError> {
        Timing::rounds(base, self.k)
    }

    fn broadcast_lower_bound(&self, p: Problem, base: TimeBase) -> Result<Ticks, ModelError> {
        Ok(crate::time::mul(
            base.units(1)?,
            self.rounds_lower_bound(p.n, p.m),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs() {
        assert_eq!(log_ceil(5, 1), 0);
        assert_eq!(log_ceil(5, 5), 1);
        assert_eq!(log_ceil(5, 6), 2);
        assert_eq!(log_ceil(2, 1 << 20), 20);
    }

    #[test]
    fn corollary_4() {
        // n = (k + 1)^L: ⌈m/k⌉ + L unless m ≡ 1 (mod k), then one less.
        let kp = KPort::new(3).unwrap();
        assert_eq!(kp.rounds_lower_bound(64, 4), 2 + 3 - 1);
        assert_eq!(kp.rounds_lower_bound(64, 5), 2 + 3);
        assert_eq!(kp.rounds_lower_bound(64, 6), 2 + 3);
        assert_eq!(kp.rounds_lower_bound(64, 3), 1 + 3);
        // n = 2 with k = 4: one partner, so k' = 1.
        let kp = KPort::new(4).unwrap();
        assert_eq!(kp.rounds_lower_bound(2, 7), 7);
        assert_eq!(kp.rounds_lower_bound(1, 7), 0);
    }
}
