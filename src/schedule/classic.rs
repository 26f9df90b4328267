//! The broadcasts MPI libraries use, for any model: each processor forwards every block to its
//! children in a fixed tree, blocks in order, children left to right, as soon as the model
//! allows ([`place`](super::place)); and scatter + ring allgather (van de Geijn).
//!
//! Trees over relative ranks `v = 0 … n−1` (root 0):
//! * binomial: `v` sends to `v + 2^k` for every `2^k` below its lowest set bit (all `2^k < n` for
//!   the root), largest `k` first;
//! * k-nomial (radix `R`): `v` sends to `v + j·R^k`, `j = 1 … R−1`, for every `R^k` below the
//!   weight of its lowest nonzero base-`R` digit, largest `k` first;
//! * d-ary (`d = 2`: binary): the left-to-right almost-full tree, `v` sends to `d·v + 1 … d·v + d`;
//! * chain: `v` sends to `v + 1`;
//! * star: the root sends to `1 … n−1`.

use super::{Algorithm, Orders, ScheduleError};

/// Children of `v` in a tree over `n` ranks rooted at 0, in send order.
pub(super) trait Tree {
    /// Appends the children of `v`.
    fn children(&self, v: u32, n: u32, out: &mut Vec<u32>);
}

/// The k-nomial tree; radix 2 is the binomial tree.
#[derive(Debug, Clone, Copy)]
pub(super) struct Knomial(pub(super) u32);

impl Tree for Knomial {
    fn children(&self, v: u32, n: u32, out: &mut Vec<u32>) {
        let r = u64::from(self.0);
        // weight of v's lowest nonzero digit (the root: beyond n)
        let limit = if v == 0 {
            u64::from(n)
        } else {
            let mut w = 1u64;
            while (u64::from(v) / w) % r == 0 {
                w *= r;
            }
            w
        };
        let mut weights = vec![];
        let mut w = 1u64;
        while w < limit && w < u64::from(n) {
            weights.push(w);
            w *= r;
        }
        for &w in weights.iter().rev() {
            for j in 1..r {
                let c = u64::from(v) + j * w;
                if c < u64::from(n) {
                    out.push(c as u32);
                }
            }
        }
    }
}

/// The left-to-right almost-full d-ary tree.
#[derive(Debug, Clone, Copy)]
pub(super) struct Dary(pub(super) u32);

impl Tree for Dary {
    fn children(&self, v: u32, n: u32, out: &mut Vec<u32>) {
        let d = u64::from(self.0);
        let first = u64::from(v) * d + 1;
        for c in first..(first + d).min(u64::from(n)) {
            out.push(c as u32);
        }
    }
}

/// The star: the root sends to everyone.
#[derive(Debug, Clone, Copy)]
pub(super) struct Star;

impl Tree for Star {
    fn children(&self, v: u32, n: u32, out: &mut Vec<u32>) {
        if v == 0 {
            out.extend(1..n);
        }
    }
}

/// Send orders for `m` blocks down `tree`: each processor forwards block 0 to all its children,
/// then block 1, and so on.
pub(super) fn tree_orders(tree: &dyn Tree, n: u32, m: u32) -> Result<Orders, ScheduleError> {
    let mut kids = Vec::new();
    Orders::from_fn(n, |v, out| {
        kids.clear();
        tree.children(v, n, &mut kids);
        for b in 0..m {
            out.extend(kids.iter().map(|&c| (c, b)));
        }
    })
}

/// Scatter + ring allgather of `m` blocks, sending nothing redundant: block `b` belongs to rank
/// `b mod n`; the root sends each block down the binomial tree to its owner (every rank on the
/// way keeps it), then the blocks travel around the ring `v → v + 1`, each rank passing on the
/// blocks of owners `v, v − 1, …, v − (n − 2)` — but never to a rank that already holds the block
/// from the scatter (the root, or an ancestor of the owner). So every rank but the root receives
/// every block exactly once: `(n − 1)·m` receptions in all.
pub(super) fn scatter_allgather_orders(n: u32, m: u32) -> Result<Orders, ScheduleError> {
    let owner = |b: u32| b % n;
    let tree = Knomial(2);
    let mut kids = Vec::new();
    Orders::from_fn(n, |v, out| {
        // Scatter: forward to each binomial child every block owned inside its subtree
        // (the subtree of child c spans c .. c + lowbit(c)).
        kids.clear();
        tree.children(v, n, &mut kids);
        for &c in &kids {
            let end = (u64::from(c) + u64::from(c & c.wrapping_neg())).min(u64::from(n));
            for b in 0..m {
                if (u64::from(c)..end).contains(&u64::from(owner(b))) {
                    out.push((c, b));
                }
            }
        }
        // Allgather: pass blocks owned by v, v−1, …, v−(n−2) to v+1 unless v+1 has them.
        if n > 1 {
            let right = (v + 1) % n;
            for back in 0..n - 1 {
                let o = (v + n - back) % n;
                if !scatter_holds(right, o) {
                    out.extend((o..m).step_by(n as usize).map(|b| (right, b)));
                }
            }
        }
    })
}

/// Whether rank `x` holds the blocks owned by `o` after the binomial scatter: `x` is the root or
/// an ancestor-or-self of `o` in the binomial tree (whose parent of `v > 0` is `v − lowbit(v)`),
/// i.e. `o` with some of its lowest set bits cleared.
fn scatter_holds(x: u32, o: u32) -> bool {
    x == 0 || (x <= o && o & !((x & x.wrapping_neg()) - 1) == x)
}

/// The send orders of the classic algorithm `algorithm` (binomial, k-nomial, binary, d-ary,
/// chain, star, scatter-allgather) for `n` ranks and `m` blocks; `None` for any other algorithm
/// or an invalid radix (< 2) or degree (0).
pub(super) fn orders(
    algorithm: Algorithm,
    n: u32,
    m: u32,
) -> Result<Option<Orders>, ScheduleError> {
    Ok(Some(match algorithm {
        Algorithm::Binomial => tree_orders(&Knomial(2), n, m)?,
        Algorithm::Knomial { radix } if radix >= 2 => tree_orders(&Knomial(radix), n, m)?,
        Algorithm::Binary => tree_orders(&Dary(2), n, m)?,
        Algorithm::Dtree { d } if d >= 1 => tree_orders(&Dary(d), n, m)?,
        Algorithm::Chain => tree_orders(&Dary(1), n, m)?,
        Algorithm::Star => tree_orders(&Star, n, m)?,
        Algorithm::ScatterAllgather => scatter_allgather_orders(n, m)?,
        _ => return Ok(None),
    }))
}
