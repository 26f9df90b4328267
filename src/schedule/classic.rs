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
//!
//! Two cases need no placement, their times being closed forms (the tests compare them with
//! [`place`](super::place) and with brute force):
//! * one block down any of these trees ([`tree_single`]): the `k`-th child of `v` (from 0, in send
//!   order) is sent at `a(v) + k·step`, where `a(v)` is when `v` holds the block — exactly what
//!   the placement computes, since nothing else competes for a processor; O(1) per send, no heap.
//! * the chain with `m` blocks ([`chain`]): `v` forwards block `b` at `v·D + b·P`, `D` the latency
//!   and `P` the least period every rank can sustain — the send step, the receive step, and on a
//!   shared CPU (n ≥ 3) a relay's receive plus send overhead. No timing of the chain's send order
//!   finishes earlier (docs/simulator.md proves it). The placement, sending every block as early
//!   as the root can, lets the root's next block land on a relay's CPU just before the relay
//!   forwards: for `g < 2o` each relay receives all blocks before forwarding any (issue 20's
//!   `L = 5, o = 3, g = 2`, n = 1024, m = 8: 32,736 instead of 11,295).

use super::{Algorithm, Collective, Orders, Schedule, ScheduleError};
use crate::model::Timing;
use crate::time::{self, Ticks};

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
        let (v, n) = (u64::from(v), u64::from(n));
        // weights r^k below the weight of v's lowest nonzero digit (the root: below n)
        let limit = if v == 0 {
            n
        } else {
            let mut w = 1u64;
            while (v / w) % r == 0 {
                w *= r;
            }
            w
        }
        .min(n);
        if limit <= 1 {
            return;
        }
        let mut w = 1u64;
        while w * r < limit {
            w *= r;
        }
        loop {
            for j in 1..r {
                let c = v + j * w;
                if c < n {
                    out.push(c as u32);
                }
            }
            if w == 1 {
                break;
            }
            w /= r;
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

/// Whether at most `capacity` messages in transit can bind for messages `step` apart.
fn capacity_binds(t: &Timing, step: Ticks) -> bool {
    let len = t.transit.1 - t.transit.0;
    t.capacity
        .is_some_and(|c| len > 0 && len.div_ceil(step.max(1)) > u64::from(c))
}

/// One block down `tree` from rank 0, every send at its closed-form time (module docs); `None`
/// if the in-flight capacity could bind (then the placement decides). Every child must have a
/// larger number than its parent (true of every tree here).
pub(super) fn tree_single<T: Tree>(
    tree: &T,
    n: u32,
    t: &Timing,
) -> Result<Option<Schedule>, ScheduleError> {
    let step = t.send_step();
    if capacity_binds(t, step) {
        return Ok(None);
    }
    let mut s = Schedule::empty(n, Collective::Broadcast { root: 0, blocks: 1 }, t.base)?;
    let mut kids = Vec::new();
    let offsets = &mut s.offsets;
    offsets.reserve_exact(n as usize + 1);
    offsets.push(0u32);
    let mut total = 0u64;
    for v in 0..n {
        kids.clear();
        tree.children(v, n, &mut kids);
        total += kids.len() as u64;
        offsets.push(
            u32::try_from(total).map_err(|_| ScheduleError::TooLarge(format!("{total} sends")))?,
        );
    }
    s.at.reserve_exact(total as usize);
    s.to.reserve_exact(total as usize);
    // when each rank holds the block (filled in before the rank is reached: children > parent)
    let mut holds = vec![Ticks::MAX; n as usize];
    holds[0] = 0;
    for v in 0..n {
        kids.clear();
        tree.children(v, n, &mut kids);
        let mut x = holds[v as usize];
        debug_assert!(kids.is_empty() || x != Ticks::MAX, "child before parent");
        for &c in &kids {
            debug_assert!(c > v);
            s.at.push(x);
            s.to.push(c);
            holds[c as usize] = time::add(x, t.latency)?;
            x = time::add(x, step)?;
        }
    }
    drop(holds);
    s.checked().map(Some)
}

/// The least period `P` at which every rank of a chain can pass on blocks, when the message from
/// chain position `v` to `v + 1` follows `hop(v)`: every sender's send step, every receiver's
/// receive step, and for a relay `v` on a shared CPU its receive overhead (`hop(v − 1)`) plus its
/// send overhead (`hop(v)`) per block.
pub(crate) fn chain_period(n: u32, hop: &dyn Fn(u32) -> Timing) -> Ticks {
    let mut p = 0;
    for v in 0..n.saturating_sub(1) {
        let t = hop(v);
        p = p.max(t.send_step()).max(t.recv_step());
        if v > 0 && t.shared_cpu {
            p = p.max(hop(v - 1).recv_busy + t.send_busy);
        }
    }
    p
}

/// The chain broadcast of `m` blocks from rank 0 under per-hop rules `hop(v)` (the message from
/// `v` to `v + 1`; all in one tick base): rank `v` forwards block `b` at `A(v) + b·P`, where
/// `A(v)` is the sum of the latencies of hops `0 … v − 1` and `P` = [`chain_period`]. Its
/// makespan `A(n − 1) + (m − 1)·P` is the least of any timing of the chain's send order
/// (docs/simulator.md). `None` if some hop's in-flight capacity could bind at that period (then
/// the placement decides).
pub(super) fn chain_hops(
    n: u32,
    m: u32,
    hop: &dyn Fn(u32) -> Timing,
) -> Result<Option<Schedule>, ScheduleError> {
    let period = chain_period(n, hop);
    if (0..n.saturating_sub(1)).any(|v| capacity_binds(&hop(v), period)) {
        return Ok(None);
    }
    let total = u64::from(n - 1) * u64::from(m);
    if total >= u64::from(u32::MAX) {
        return Err(ScheduleError::TooLarge(format!("{total} sends")));
    }
    let mut s = Schedule::empty(n, Collective::Broadcast { root: 0, blocks: m }, hop(0).base)?;
    s.offsets = (0..=n).map(|v| v.min(n - 1) * m).collect();
    s.at.reserve_exact(total as usize);
    s.to.reserve_exact(total as usize);
    if m > 1 {
        s.what.reserve_exact(total as usize);
    }
    let mut first = 0;
    for v in 0..n - 1 {
        for b in 0..m {
            s.at.push(time::add(first, time::mul(period, u64::from(b))?)?);
            s.to.push(v + 1);
            if m > 1 {
                s.what.push(b);
            }
        }
        first = time::add(first, hop(v).latency)?;
    }
    s.checked().map(Some)
}

/// [`chain_hops`] under one timing for every hop: rank `v` forwards block `b` at `v·D + b·P`,
/// makespan `(n − 1)·D + (m − 1)·P`.
pub(super) fn chain(n: u32, m: u32, t: &Timing) -> Result<Option<Schedule>, ScheduleError> {
    chain_hops(n, m, &|_| *t)
}

/// The closed-form schedule of a classic algorithm from rank 0, where one applies: one block down
/// a tree, or the chain ([`tree_single`], [`chain`]); `None` otherwise.
pub(super) fn closed_form(
    algorithm: Algorithm,
    n: u32,
    m: u32,
    t: &Timing,
) -> Result<Option<Schedule>, ScheduleError> {
    match (algorithm, m) {
        (Algorithm::Chain, _) | (Algorithm::Dtree { d: 1 }, _) => chain(n, m, t),
        (Algorithm::Binomial, 1) => tree_single(&Knomial(2), n, t),
        (Algorithm::Knomial { radix }, 1) if radix >= 2 => tree_single(&Knomial(radix), n, t),
        (Algorithm::Binary, 1) => tree_single(&Dary(2), n, t),
        (Algorithm::Dtree { d }, 1) if d >= 1 => tree_single(&Dary(d), n, t),
        (Algorithm::Star, 1) => tree_single(&Star, n, t),
        _ => Ok(None),
    }
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
