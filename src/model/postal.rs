//! The postal model of Bar-Noy and Kipnis, and the generalized Fibonacci function.
//!
//! # Rules (as the checker applies them, in units of the send time)
//!
//! A send from `p` to `q` starting at `t`:
//! * occupies `p`'s output port during `[t, t + 1)`;
//! * occupies `q`'s input port during `[t + λ − 1, t + λ)`;
//! * makes the message available at `q` from `t + λ`.
//!
//! A processor sends at most one message at a time and receives at most one at a time, but may
//! send and receive simultaneously (Definition 1, "simultaneous I/O"). λ ≥ 1 is rational.
//!
//! # The generalized Fibonacci function
//!
//! `F_λ(t) = 1` for `0 ≤ t < λ` and `F_λ(t) = F_λ(t − 1) + F_λ(t − λ)` otherwise; `f_λ(n)` is its
//! index function, `min { t : F_λ(t) ≥ n }`. `F_λ(t)` is also the number of nodes with label at
//! most `t` in the infinite tree whose root has label 0 and where a node labelled `x` has children
//! labelled `x + λ + i`, `i = 0, 1, …` — a node at depth `b` is reached by `b` latencies and a
//! number of unit waits, so
//!
//! `F_λ(t) = Σ_{b = 0}^{⌊t/λ⌋} C(⌊t − bλ⌋ + b, b)`,
//!
//! which is what [`UniversalTree::count`] evaluates exactly (for λ = 1 it is `Σ_b C(⌊t⌋, b) =
//! 2^⌊t⌋`). The same tree with send step `s` and latency `A` is the LogP universal broadcast tree
//! of Karp et al. (Definition 3.4), so both models share [`UniversalTree`].

use super::{CostModel, ModelError, Timing};
use crate::time::{Ratio, Ticks, TimeBase, TimeError};

/// The postal model with latency λ ≥ 1.
///
/// # Examples
///
/// ```
/// use herald::Postal;
/// let p = Postal::new("5/2".parse()?)?;
/// assert_eq!(p.fib("15/2".parse()?)?, 14); // F_{5/2}(15/2) = 14
/// assert_eq!(p.index(14)?.to_string(), "15/2"); // f_{5/2}(14) = 15/2
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Postal {
    /// λ, in `1 ..= MAX_LAMBDA`.
    lambda: Ratio,
}

impl Postal {
    /// The largest latency supported (beyond it the Fibonacci tables grow too large).
    pub const MAX_LAMBDA: u64 = 10_000;

    /// The postal model with latency `lambda`.
    ///
    /// # Errors
    /// [`ModelError::Parameter`] unless `1 ≤ λ ≤ 10000`.
    pub fn new(lambda: Ratio) -> Result<Postal, ModelError> {
        let bad = |why| ModelError::Parameter {
            name: "lambda",
            value: lambda.to_string(),
            why,
        };
        if lambda < Ratio::ONE {
            return Err(bad("the postal model needs λ ≥ 1"));
        }
        if lambda > Ratio::integer(Self::MAX_LAMBDA) {
            return Err(bad("herald supports λ ≤ 10000"));
        }
        Ok(Postal { lambda })
    }

    /// λ.
    pub fn lambda(&self) -> Ratio {
        self.lambda
    }

    /// The universal tree of this model in `base`.
    fn tree(&self, base: TimeBase) -> Result<UniversalTree, ModelError> {
        Ok(UniversalTree::new(base.units(1)?, base.ticks(self.lambda)?))
    }

    /// `F_λ(t)`, saturating at `u64::MAX`.
    ///
    /// # Errors
    /// [`ModelError::Time`] if `t`'s denominator and λ's together need too fine a tick.
    pub fn fib(&self, t: Ratio) -> Result<u64, ModelError> {
        let base = self.time_base()?.refine(t.denom())?;
        Ok(self.tree(base)?.count(base.ticks(t)?))
    }

    /// `f_λ(n) = min { t : F_λ(t) ≥ n }`, exact; `n` up to `2^40` and beyond.
    ///
    /// # Errors
    /// [`ModelError::Time`] on overflow.
    pub fn index(&self, n: u64) -> Result<Ratio, ModelError> {
        let base = self.time_base()?;
        Ok(base.ratio(self.tree(base)?.index(n)?))
    }
}

impl CostModel for Postal {
    fn name(&self) -> &'static str {
        "postal"
    }

    fn params(&self) -> Vec<(&'static str, Ratio)> {
        vec![("lambda", self.lambda)]
    }

    fn timing(&self, base: TimeBase) -> Result<Timing, ModelError> {
        let unit = base.units(1)?;
        Ok(Timing {
            base,
            send_busy: unit,
            recv_busy: unit,
            latency: base.ticks(self.lambda)?,
            send_gap: unit,
            recv_gap: unit,
            shared_cpu: false,
            capacity: None,
            transit: (0, 0),
            combine: 0,
            ports: 1,
        })
    }
}

/// The infinite broadcast tree in which an informed processor sends every `step` ticks and each
/// message informs its receiver `latency` ticks after it was sent.
///
/// Labels are information times: the root has 0, a node labelled `x` has children
/// `x + latency + i·step`. [`count`](Self::count) is the generalized Fibonacci function,
/// [`index`](Self::index) its index function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UniversalTree {
    /// Ticks between consecutive sends of one processor (0: unbounded fan-out at once).
    step: Ticks,
    /// Ticks from a send's start until its receiver is informed; positive.
    latency: Ticks,
}

impl UniversalTree {
    /// The tree with the given send step and latency (both in ticks; `latency > 0`).
    pub fn new(step: Ticks, latency: Ticks) -> UniversalTree {
        debug_assert!(
            latency > 0,
            "a zero latency makes information instantaneous"
        );
        UniversalTree { step, latency }
    }

    /// Send step in ticks.
    pub fn step(&self) -> Ticks {
        self.step
    }

    /// Latency in ticks.
    pub fn latency(&self) -> Ticks {
        self.latency
    }

    /// The number of nodes with label ≤ `t`, saturating at `u64::MAX`.
    pub fn count(&self, t: Ticks) -> u64 {
        if self.step == 0 {
            return if t < self.latency { 1 } else { u64::MAX };
        }
        let mut total: u64 = 0;
        let mut b: u64 = 0;
        while let Some(rest) = t.checked_sub(b.saturating_mul(self.latency)) {
            let a = rest / self.step;
            total = total.saturating_add(binomial_saturating(a + b, b));
            if total == u64::MAX {
                break;
            }
            b += 1;
        }
        total
    }

    /// The least label `t` with `count(t) ≥ n` (0 for `n ≤ 1`).
    ///
    /// # Errors
    /// [`TimeError::Overflow`] if that time does not fit in `u64` ticks.
    pub fn index(&self, n: u64) -> Result<Ticks, TimeError> {
        if n <= 1 {
            return Ok(0);
        }
        if self.step == 0 {
            return Ok(self.latency);
        }
        // f is a label, i.e. a·step + b·latency: for each depth b take the least a that reaches n.
        let mut best: Option<Ticks> = None;
        for b in 1u64.. {
            let Some(offset) = b.checked_mul(self.latency) else {
                break;
            };
            if best.is_some_and(|x| offset >= x) {
                break;
            }
            let reaches = |a: u64| -> Result<bool, TimeError> {
                let t = a.checked_mul(self.step).and_then(|x| x.checked_add(offset));
                Ok(self.count(t.ok_or(TimeError::Overflow)?) >= n)
            };
            let mut hi = 1u64;
            while !reaches(hi)? {
                hi = hi.checked_mul(2).ok_or(TimeError::Overflow)?;
            }
            let mut lo = 0u64;
            if !reaches(0)? {
                // invariant: !reaches(lo), reaches(hi)
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if reaches(mid)? {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
            } else {
                hi = 0;
            }
            let t = hi * self.step + offset;
            best = Some(best.map_or(t, |x| x.min(t)));
        }
        best.ok_or(TimeError::Overflow)
    }

    /// A table of `(label, count(label))` for every distinct label up to `limit`, ascending.
    ///
    /// Used by generators that need `F` and `f` many times (BCAST).
    ///
    /// # Errors
    /// [`TimeError::Overflow`] if the table would exceed ten million labels.
    pub fn table(&self, limit: Ticks) -> Result<FibTable, TimeError> {
        let mut labels = vec![0];
        match std::num::NonZeroU64::new(self.step) {
            // step 0: everyone else is informed at once, one latency in
            None if limit >= self.latency => labels.push(self.latency),
            None => {}
            Some(step) => {
                let mut b = 1u64;
                while let Some(rest) = limit.checked_sub(b.saturating_mul(self.latency)) {
                    let offset = b * self.latency;
                    for a in 0..=rest / step {
                        labels.push(a * self.step + offset);
                        if labels.len() > 10_000_000 {
                            return Err(TimeError::Overflow);
                        }
                    }
                    b += 1;
                }
            }
        }
        labels.sort_unstable();
        labels.dedup();
        let counts = labels.iter().map(|&t| self.count(t)).collect();
        Ok(FibTable { labels, counts })
    }
}

/// Precomputed values of the generalized Fibonacci function at its breakpoints.
#[derive(Debug, Clone)]
pub struct FibTable {
    /// Distinct labels, ascending; starts with 0.
    labels: Vec<Ticks>,
    /// `counts[i] = F(labels[i])`, nondecreasing.
    counts: Vec<u64>,
}

impl FibTable {
    /// `F(t)`: the count at the largest label ≤ `t`.
    pub fn count(&self, t: Ticks) -> u64 {
        let i = self.labels.partition_point(|&x| x <= t);
        self.counts[i.saturating_sub(1)]
    }

    /// `f(n)`: the least label with count ≥ `n`, if the table reaches it.
    pub fn index(&self, n: u64) -> Option<Ticks> {
        if n <= 1 {
            return Some(0);
        }
        let i = self.counts.partition_point(|&c| c < n);
        self.labels.get(i).copied()
    }
}

/// `C(n, k)`, saturating at `u64::MAX`.
fn binomial_saturating(n: u64, k: u64) -> u64 {
    let k = k.min(n - k);
    let mut c: u128 = 1;
    for i in 1..=u128::from(k) {
        // C(n−k+i, i) = C(n−k+i−1, i−1)·(n−k+i)/i is exact at every step.
        c = c * (u128::from(n - k) + i) / i;
        if c >= u128::from(u64::MAX) {
            return u64::MAX;
        }
    }
    c as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomials() {
        assert_eq!(binomial_saturating(5, 2), 10);
        assert_eq!(binomial_saturating(40, 20), 137_846_528_820);
        assert_eq!(binomial_saturating(200, 100), u64::MAX);
        assert_eq!(binomial_saturating(7, 0), 1);
        assert_eq!(binomial_saturating(7, 7), 1);
    }

    #[test]
    fn table_agrees_with_direct_evaluation() {
        let tree = UniversalTree::new(2, 5);
        let table = tree.table(60).unwrap();
        for t in 0..=60 {
            assert_eq!(table.count(t), tree.count(t), "t={t}");
        }
        for n in 1..200 {
            let direct = tree.index(n).unwrap();
            if direct <= 60 {
                assert_eq!(table.index(n), Some(direct), "n={n}");
            }
        }
    }
}
