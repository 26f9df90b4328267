//! The ideal fat-tree of Bilardi, Codenotti, Del Corso, Pinotti & Resta ("Broadcast and
//! associative operations on fat-trees").
//!
//! # Rules (as `sim::fat_tree` applies them)
//!
//! `N` (a power of two) processors `P_0 … P_{N−1}` are the leaves, left to right, of a complete
//! binary tree; every node but the root has an up and a down channel to its parent, each of
//! capacity `w(n)` messages per step, `n` the number of leaves below the node (`n = 1` for the
//! processors' own links). Time is in steps. A message sent by `P_s` to `P_d` at step `t`:
//!
//! * climbs to the lowest common ancestor, of height `h` = the bit length of `s XOR d`, one
//!   channel per step — the up channel above the node of height `j` (`j = 0 … h − 1`) during
//!   step `t + j` — then descends, the down channel into the node of height `h − 1 − i` during
//!   step `t + h + i` (`i = 0 … h − 1`);
//! * arrives at step `t + 2h`: `P_d` holds it from then (and may forward it in a send starting
//!   then).
//!
//! A schedule is legal if no channel carries more than its capacity in any step. Since
//! `w(1) = 1` for every capacity function here, this includes "a processor submits at most one
//! message and receives at most one message per step". `n = N` must be a power of two.
//!
//! # Capacity functions (`--w`)
//!
//! All satisfy the paper's `w(n) ≤ w(2n) ≤ 2w(n)` and `w(1) = 1`, so `w(n) ≤ n`:
//! `1` (constant), `log` (`log2 n + 1`, the paper's Fig. 1), `sqrt` (`2^⌊log2(n)/2⌋`, i.e.
//! `√n` rounded down to a power of two), `linear` (`n`).
//!
//! # Rounding of the algorithms' `√r` and `w^{-1}` (`docs/fat-tree.md`)
//!
//! `w^{-1}(c)` is the smallest power of two `n` with `w(n) ≥ c` (subtrees have power-of-two
//! sizes). Sparse-Broadcast on `n` leaves makes `c(n)` copies, `c(n)` = the largest power of two
//! `≤ max(w(n), 2)`; a request for `c = 2^e ≥ 4` copies is split as `c = a·b` with
//! `a = 2^⌈e/2⌉`, `b = 2^⌊e/2⌋` (`a = b = √c` when `c` is a power of four), phase one on
//! `w^{-1}(a)` leaves and phase two on `w^{-1}(b)` leaves. [`FatTree::sparse_recurrence`],
//! [`FatTree::broadcast_recurrence`] and [`FatTree::pipelined_recurrence`] evaluate the paper's
//! recurrences (2)–(4) with exactly this rounding.

use super::{CostModel, ModelError, Problem, Timing};
use crate::time::{Ratio, Ticks, TimeBase};
use std::fmt;
use std::str::FromStr;

/// The channel capacity `w(n)` of an ideal fat-tree, as a function of the subtree size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FatTreeCapacity {
    /// `w(n) = 1`.
    One,
    /// `w(n) = log2 n + 1`.
    Log,
    /// `w(n) = 2^⌊log2(n)/2⌋` (`√n` rounded down to a power of two).
    Sqrt,
    /// `w(n) = n`.
    Linear,
}

impl FatTreeCapacity {
    /// Every capacity function, in the order of the table.
    pub const ALL: [FatTreeCapacity; 4] = [
        FatTreeCapacity::One,
        FatTreeCapacity::Log,
        FatTreeCapacity::Sqrt,
        FatTreeCapacity::Linear,
    ];
}

impl fmt::Display for FatTreeCapacity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FatTreeCapacity::One => "1",
            FatTreeCapacity::Log => "log",
            FatTreeCapacity::Sqrt => "sqrt",
            FatTreeCapacity::Linear => "linear",
        })
    }
}

impl FromStr for FatTreeCapacity {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<FatTreeCapacity, ModelError> {
        Ok(match s {
            "1" | "one" | "const" => FatTreeCapacity::One,
            "log" => FatTreeCapacity::Log,
            "sqrt" => FatTreeCapacity::Sqrt,
            "linear" | "n" => FatTreeCapacity::Linear,
            other => {
                return Err(ModelError::Parameter {
                    name: "w",
                    value: other.to_owned(),
                    why: "the fat-tree capacity is one of 1, log, sqrt, linear",
                })
            }
        })
    }
}

/// The ideal fat-tree model.
///
/// # Examples
///
/// ```
/// use herald::{CostModel, model::{FatTree, FatTreeCapacity, Problem}};
/// let ft = FatTree::new(FatTreeCapacity::Log);
/// assert_eq!(ft.w(16), 5); // Fig. 1: w(n) = log n + 1
/// assert_eq!(ft.latency(0, 15), 8); // the LCA is the root, of height 4
/// let lb = ft.broadcast_lower_bound(Problem { n: 16, m: 1 }, ft.time_base()?)?;
/// assert_eq!(lb, 8); // the diameter
/// # Ok::<(), herald::model::ModelError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FatTree {
    /// The capacity function.
    w: FatTreeCapacity,
}

impl FatTree {
    /// The ideal fat-tree with capacity function `w`.
    pub fn new(w: FatTreeCapacity) -> FatTree {
        FatTree { w }
    }

    /// The capacity function.
    pub fn capacity(&self) -> FatTreeCapacity {
        self.w
    }

    /// `w(n)` for a subtree of `n ≥ 1` leaves (`n` a power of two).
    pub fn w(&self, n: u64) -> u64 {
        let lg = u64::from(log2(n));
        match self.w {
            FatTreeCapacity::One => 1,
            FatTreeCapacity::Log => lg + 1,
            FatTreeCapacity::Sqrt => 1 << (lg / 2),
            FatTreeCapacity::Linear => n,
        }
    }

    /// `w^{-1}(c)`: the smallest power of two `n` with `w(n) ≥ c` (`u64::MAX` if none below
    /// `2^62`).
    pub fn w_inv(&self, c: u64) -> u64 {
        (0..63)
            .map(|e| 1u64 << e)
            .find(|&n| self.w(n) >= c)
            .unwrap_or(u64::MAX)
    }

    /// The largest `n` for which [`piece`](Self::piece) names every run of ranks.
    pub const MAX_PIECE_N: u32 = 1 << 15;

    /// The payload (`Transfer::what`) of a combining message on `n` leaves that carries the product
    /// of the ranks `lo ..= hi` (a *piece*, `1 + lo·n + hi`); `what = 0` is the sender's whole
    /// current value. A processor keeps every piece it received (and its own value) and may send
    /// any run it can tile with them, in rank order — the checker's piece rule
    /// (`docs/fat-tree.md`). Requires `lo ≤ hi < n ≤ MAX_PIECE_N`.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::model::FatTree;
    /// let what = FatTree::piece(8, 2, 5);
    /// assert_eq!(FatTree::piece_run(8, what), Some((2, 5)));
    /// assert_eq!(FatTree::piece_run(8, 0), None); // the whole current value
    /// ```
    pub fn piece(n: u32, lo: u32, hi: u32) -> u32 {
        debug_assert!(lo <= hi && hi < n && n <= Self::MAX_PIECE_N);
        1 + lo * n + hi
    }

    /// The run `(lo, hi)` a combining payload names on `n` leaves (`None` for `0`, the whole
    /// value, or a payload that names no run).
    pub fn piece_run(n: u32, what: u32) -> Option<(u32, u32)> {
        let x = what.checked_sub(1)?;
        let (lo, hi) = (x / n.max(1), x % n.max(1));
        (n <= Self::MAX_PIECE_N && lo <= hi && hi < n).then_some((lo, hi))
    }

    /// Height of the lowest common ancestor of leaves `a` and `b` (0 if equal).
    pub fn height(a: u32, b: u32) -> u32 {
        u32::BITS - (a ^ b).leading_zeros()
    }

    /// Steps a message from `a` to `b` takes: `2h`.
    pub fn latency(&self, a: u32, b: u32) -> Ticks {
        2 * u64::from(Self::height(a, b))
    }

    /// `c(n)`: the copies Sparse-Broadcast makes on `n` leaves — the largest power of two
    /// `≤ max(w(n), 2)`, at most `n`.
    pub fn copies(&self, n: u64) -> u64 {
        if n <= 1 {
            return 1;
        }
        let r = self.w(n).max(2).min(n);
        1 << log2(r)
    }

    /// The split `c = a·b` of a request for `c = 2^e ≥ 4` copies: `a = 2^⌈e/2⌉`, `b = 2^⌊e/2⌋`.
    pub fn split(c: u64) -> (u64, u64) {
        let e = log2(c);
        (1 << e.div_ceil(2), 1 << (e / 2))
    }

    /// Recurrence (2) with herald's rounding: steps for Sparse-Broadcast of `c` copies on `n`
    /// leaves — `0` for `c = 1`, `2·log n` for `c = 2`, else
    /// `S(w^{-1}(a), a) + S(w^{-1}(b), b) + 4·log n`.
    pub fn sparse_recurrence(&self, n: u64, c: u64) -> u64 {
        match c {
            0 | 1 => 0,
            2 => 2 * u64::from(log2(n)),
            _ => {
                let (a, b) = Self::split(c);
                self.sparse_recurrence(self.w_inv(a), a)
                    + self.sparse_recurrence(self.w_inv(b), b)
                    + 4 * u64::from(log2(n))
            }
        }
    }

    /// Recurrence (3): `T(n) = S(n) + T(n / c(n))`, `T(1) = 0`.
    pub fn broadcast_recurrence(&self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        let c = self.copies(n);
        self.sparse_recurrence(n, c) + self.broadcast_recurrence(n / c)
    }

    /// The fan-out `ℓ` of the pipelined phase of §3.3 on `n` leaves after `c` copies: the largest
    /// power of two `≤ log2 n`, at most `n / c`.
    pub fn pipeline_fanout(n: u64, c: u64) -> u64 {
        let lg = u64::from(log2(n)).max(1);
        (1u64 << log2(lg)).min(n / c).max(1)
    }

    /// Recurrence (4) with `γ = 3`: `T'(n) = S(n) + T'(n / (c·ℓ)) + 3·log n`, `T'(1) = 0`; the
    /// pipelined phase takes `(ℓ − 2) + 2·log(n/c) ≤ 3·log n` steps.
    pub fn pipelined_recurrence(&self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        let c = self.copies(n);
        let l = Self::pipeline_fanout(n, c);
        let phase = if l >= 2 { 3 * u64::from(log2(n)) } else { 0 };
        self.sparse_recurrence(n, c) + phase + self.pipelined_recurrence(n / (c * l))
    }

    /// Theorem 2's bound (in steps) on broadcasting one message to `n` leaves, with the proof's
    /// rounding: an empty subtree of `s` leaves needs `E(s) ≥ log s + E(s / 2^d)` more steps,
    /// `d = ⌈log2(w(s)·log2(2s/w(s)))⌉` (rounding `d` up only weakens the bound), `E(1) = 1`;
    /// the bound is `max(2 log n, E(n/2))` (the half without `P_0` is empty at time 0; `2 log n`
    /// is the diameter).
    pub fn theorem2_bound(&self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        let diameter = 2 * u64::from(log2(n));
        diameter.max(self.empty_subtree(n / 2))
    }

    /// `E(s)` of [`FatTree::theorem2_bound`].
    fn empty_subtree(&self, s: u64) -> u64 {
        if s <= 1 {
            return 1;
        }
        let lg = log2(s);
        let w = self.w(s) as f64;
        let x = w * (2.0 * s as f64 / w).log2();
        let d = if x <= 1.0 {
            0
        } else {
            (x.log2() - 1e-9).ceil().max(0.0) as u32
        };
        let d = d.clamp(1, lg);
        u64::from(lg) + self.empty_subtree(s >> d)
    }

    /// Theorem 3's bound for the round model: `(1/2)·log n · Σ_{i < log log n} 2^i /
    /// log2(w(2^{2^i}) + 1)`; every round-model broadcast takes *more* than this many steps.
    pub fn theorem3_bound(&self, n: u64) -> f64 {
        let lg = log2(n.max(1));
        if lg < 2 {
            return 0.0;
        }
        let loglog = (u32::BITS - lg.leading_zeros()) - 1 + u32::from(!lg.is_power_of_two());
        let mut sum = 0.0;
        for i in 0..loglog {
            let leaves = 1u64 << (1u64 << i).min(62);
            sum += f64::from(1u32 << i) / ((self.w(leaves) + 1) as f64).log2();
        }
        0.5 * f64::from(lg) * sum
    }

    /// Checks that `n` is a power of two (the fat-tree's leaf count).
    ///
    /// # Errors
    /// [`ModelError::Parameter`] otherwise.
    pub fn validate(&self, n: u32) -> Result<(), ModelError> {
        if n.is_power_of_two() {
            Ok(())
        } else {
            Err(ModelError::Parameter {
                name: "n",
                value: n.to_string(),
                why: "an ideal fat-tree has a power-of-two number of leaves",
            })
        }
    }
}

/// `⌊log2 n⌋` (0 for `n ≤ 1`).
pub(crate) fn log2(n: u64) -> u32 {
    (u64::BITS - n.max(1).leading_zeros()) - 1
}

impl fmt::Display for FatTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fattree w={}", self.w)
    }
}

impl CostModel for FatTree {
    fn name(&self) -> &'static str {
        match self.w {
            FatTreeCapacity::One => "fattree(w=1)",
            FatTreeCapacity::Log => "fattree(w=log)",
            FatTreeCapacity::Sqrt => "fattree(w=sqrt)",
            FatTreeCapacity::Linear => "fattree(w=linear)",
        }
    }

    fn params(&self) -> Vec<(&'static str, Ratio)> {
        Vec::new()
    }

    fn time_base(&self) -> Result<TimeBase, ModelError> {
        Ok(TimeBase::UNIT)
    }

    /// The fat-tree has no [`Timing`]: a message's latency depends on the pair of leaves. Its
    /// rules are checked by the fat-tree checker (module docs).
    fn timing(&self, _base: TimeBase) -> Result<Timing, ModelError> {
        Err(ModelError::Parameter {
            name: "model",
            value: self.name().to_owned(),
            why: "the fat-tree's latency depends on the pair of leaves (no uniform timing)",
        })
    }

    /// `(m − 1)` steps for the root to submit its last block, then Theorem 2 for that block.
    fn broadcast_lower_bound(&self, p: Problem, base: TimeBase) -> Result<Ticks, ModelError> {
        if p.n <= 1 {
            return Ok(0);
        }
        let steps = u64::from(p.m.saturating_sub(1)) + self.theorem2_bound(u64::from(p.n));
        Ok(crate::time::mul(base.units(1)?, steps)?)
    }

    fn fat_tree(&self) -> Option<&FatTree> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacities_are_monotone_and_sublinear() {
        for w in FatTreeCapacity::ALL {
            let ft = FatTree::new(w);
            assert_eq!(ft.w(1), 1);
            for e in 0..40 {
                let n = 1u64 << e;
                assert!(
                    ft.w(2 * n) >= ft.w(n) && ft.w(2 * n) <= 2 * ft.w(n),
                    "{w} {n}"
                );
            }
        }
    }

    #[test]
    fn pseudo_inverse_and_split() {
        let ft = FatTree::new(FatTreeCapacity::Sqrt);
        assert_eq!(ft.w_inv(4), 16);
        assert_eq!(FatTree::split(16), (4, 4));
        assert_eq!(FatTree::split(32), (8, 4));
        assert_eq!(FatTree::height(0, 1), 1);
        assert_eq!(FatTree::height(3, 4), 3);
    }
}
