//! Postal multi-message broadcast (Bar-Noy & Kipnis, section 4): REPEAT, PACK, PIPELINE-1/2, and
//! a greedy schedule on the exact model (beyond the paper).
//!
//! Every generator here emits real unit-message sends `{at, from, to, what}` in ticks of the
//! postal time base (λ's denominator), root 0, blocks `0 … m−1`; the checker judges them.
//!
//! All three generalizations of BCAST run BCAST's range recursion on a *scaled* generalized
//! Fibonacci tree: a processor active at `t` with the range `p_lo … p_{lo+s−1}` computes
//! `f = f(s)` and `j = F(f − short)` of the tree whose two continuation delays are `short ≤
//! long` ([`UniversalTree`] with step `short`, latency `long`), starts a send (a message, a pack
//! or a stream) to a new processor of its range, and the two parties continue on sub-ranges of
//! sizes `j` (after `short`) and `s − j` (after `long`). In real time units:
//!
//! | algorithm | what one tree edge is | short | long | who continues after `short` |
//! |---|---|---|---|---|
//! | REPEAT | one block | 1 | λ | the sender (BCAST) |
//! | PACK | `m` consecutive blocks, forwarded when all have arrived | `m` | `m + λ − 1` | the sender |
//! | PIPELINE-1 (`m ≤ λ`) | `m` consecutive blocks, block `k` forwarded when it arrives | `m` | λ | the sender |
//! | PIPELINE-2 (`m ≥ λ`) | the same stream | λ | `m` | the **receiver** |
//!
//! PACK is BCAST with `λ' = 1 + (λ − 1)/m` and time scaled by `m`; PIPELINE-1 is BCAST with `λ' =
//! λ/m` scaled by `m`; PIPELINE-2 is BCAST with `λ' = m/λ` scaled by λ, with the roles of sender
//! and receiver swapped at every edge (the receiver can forward the stream λ after it started,
//! the sender is free again only `m` after it started). Scaling the tree instead of λ keeps
//! every time a whole number of ticks of the postal base: no refinement is needed.
//!
//! REPEAT runs BCAST once per block on the same tree: the root starts block `i + 1` right after
//! its last send of block `i`, and every other processor, on receiving a block, forwards it to
//! its BCAST children in order (after its sends of earlier blocks) — each send as early as that
//! allows, computed directly in one pass down the tree.

#[path = "multi_greedy.rs"]
mod greedy_impl;

use super::{Algorithm, Collective, Schedule, ScheduleBuilder, ScheduleError};
use crate::model::{CostModel, Model, Postal, UniversalTree};
use crate::time::{self, Ticks, TimeBase};
use std::collections::VecDeque;

/// REPEAT, PACK or PIPELINE for `m` blocks, root 0.
pub(super) fn generate(
    algorithm: Algorithm,
    n: u32,
    m: u32,
    postal: &Postal,
) -> Result<Schedule, ScheduleError> {
    let ticks = PostalTicks::new(postal)?;
    match algorithm {
        Algorithm::Repeat => repeat(n, m, ticks),
        Algorithm::Pack => pack(n, m, ticks),
        Algorithm::Pipeline => pipeline(n, m, ticks),
        other => Err(ScheduleError::NotApplicable {
            algorithm: other.to_string(),
            why: "not a generalization of BCAST (repeat, pack, pipeline)".into(),
        }),
    }
}

/// The greedy multi-block schedule, root 0.
pub(super) fn greedy(n: u32, m: u32, model: &Model) -> Result<Schedule, ScheduleError> {
    greedy_impl::greedy(n, m, model)
}

/// The postal model's parameters in ticks of its own time base.
#[derive(Debug, Clone, Copy)]
struct PostalTicks {
    /// The time base (λ's denominator ticks per unit).
    base: TimeBase,
    /// One unit (a send, a receive).
    unit: Ticks,
    /// λ.
    latency: Ticks,
}

impl PostalTicks {
    /// The ticks of `postal`.
    fn new(postal: &Postal) -> Result<PostalTicks, ScheduleError> {
        let base = postal.time_base()?;
        let timing = postal.timing(base)?;
        Ok(PostalTicks {
            base,
            unit: timing.send_step(),
            latency: timing.latency,
        })
    }

    /// `m` units.
    fn units(&self, m: u32) -> Result<Ticks, ScheduleError> {
        Ok(time::mul(self.unit, u64::from(m))?)
    }
}

/// A builder for `n` processors and `m` blocks with room for the `(n − 1)·m` sends of a
/// broadcast in which every processor receives every block once.
fn builder(n: u32, m: u32, base: TimeBase) -> Result<ScheduleBuilder, ScheduleError> {
    let sends = u64::from(n.saturating_sub(1)) * u64::from(m);
    if sends >= u64::from(u32::MAX) {
        return Err(ScheduleError::TooLarge(format!(
            "{n} processors × {m} blocks need {sends} sends"
        )));
    }
    let mut b = Schedule::builder(n, Collective::Broadcast { root: 0, blocks: m }, base)?;
    b.reserve(sends as usize);
    Ok(b)
}

/// Which party of a tree edge continues after the short delay (with the larger sub-range).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shorter {
    /// The sender (BCAST, PACK, PIPELINE-1).
    Sender,
    /// The receiver (PIPELINE-2).
    Receiver,
}

/// BCAST's range recursion on the tree with continuation delays `short ≤ long` (ticks).
///
/// Calls `visit(p, start, edges, payloads)` once per processor `p` that sends, parents before
/// children, with `start` the time `p` becomes active and `edges` its tree edges `(time,
/// child)` in time order; `visit` pushes one payload per edge (what the child needs to know) —
/// the payload of `p` itself is passed in. Returns nothing; every processor `1 … n−1` is the
/// child of exactly one edge.
fn split_tree<P>(
    n: u32,
    short: Ticks,
    long: Ticks,
    shorter: Shorter,
    root: P,
    mut visit: impl FnMut(u32, &P, &[(Ticks, u32)], &mut Vec<P>) -> Result<(), ScheduleError>,
) -> Result<(), ScheduleError> {
    let tree = UniversalTree::new(short, long);
    let table = tree.table(tree.index(u64::from(n))?)?;
    let mut edges: Vec<(Ticks, u32)> = Vec::new();
    let mut sizes: Vec<(u32, Ticks)> = Vec::new();
    let mut payloads: Vec<P> = Vec::new();
    // (first processor of the range, range size, time its first processor is active, payload)
    let mut stack = vec![(0u32, n, 0 as Ticks, root)];
    while let Some((lo, size0, start, payload)) = stack.pop() {
        edges.clear();
        sizes.clear();
        let (mut size, mut t) = (size0, start);
        while size > 1 {
            let f = table
                .index(u64::from(size))
                .ok_or(time::TimeError::Overflow)?;
            // f ≥ long ≥ short for size ≥ 2; 1 ≤ j < size by Claim 1 (as in BCAST).
            let j = u32::try_from(table.count(f - short)).unwrap_or(u32::MAX);
            if !(1..size).contains(&j) {
                return Err(ScheduleError::TooLarge(format!(
                    "generalized Fibonacci split {j} of a range of {size}"
                )));
            }
            let (keep, give, next) = match shorter {
                Shorter::Sender => (j, size - j, time::add(t, short)?),
                Shorter::Receiver => (size - j, j, time::add(t, long)?),
            };
            let child = lo + keep;
            let child_start = time::add(
                t,
                if shorter == Shorter::Sender {
                    long
                } else {
                    short
                },
            )?;
            edges.push((t, child));
            sizes.push((give, child_start));
            size = keep;
            t = next;
        }
        if edges.is_empty() {
            continue;
        }
        payloads.clear();
        visit(lo, &payload, &edges, &mut payloads)?;
        if payloads.len() != edges.len() {
            return Err(ScheduleError::TooLarge("payloads per edge".into()));
        }
        for ((&(_, child), &(give, child_start)), p) in
            edges.iter().zip(&sizes).zip(payloads.drain(..))
        {
            stack.push((child, give, child_start, p));
        }
    }
    Ok(())
}

/// Algorithm REPEAT: BCAST once per block, the root starting block `i + 1` right after its last
/// send of block `i`; every processor forwards each block to its BCAST children in order, as
/// early as it holds it and has sent the earlier ones.
fn repeat(n: u32, m: u32, tk: PostalTicks) -> Result<Schedule, ScheduleError> {
    let mut b = builder(n, m, tk.base)?;
    // Payload: when the processor holds each block.
    split_tree(
        n,
        tk.unit,
        tk.latency,
        Shorter::Sender,
        vec![0 as Ticks; m as usize],
        |p, arrivals: &Vec<Ticks>, edges, out| {
            let kids: Vec<u32> = edges.iter().map(|&(_, c)| c).collect();
            forward_blocks(&mut b, p, arrivals, &kids, tk, out)
        },
    )?;
    b.build()
}

/// `p`, holding block `i` from `arrivals[i]`, sends block 0 to each of `kids` in order, then
/// block 1, …, every send as early as `p` holds the block and its previous send is done; pushes
/// each kid's arrival times onto `out`. A kid hears only from `p`, whose sends are a unit apart,
/// so its receive port never makes a send wait: this is what [`place`](super::place) computes
/// for these orders, in one pass.
fn forward_blocks(
    b: &mut ScheduleBuilder,
    p: u32,
    arrivals: &[Ticks],
    kids: &[u32],
    tk: PostalTicks,
    out: &mut Vec<Vec<Ticks>>,
) -> Result<(), ScheduleError> {
    let first = out.len();
    out.extend(kids.iter().map(|_| Vec::with_capacity(arrivals.len())));
    let mut free = 0 as Ticks; // the first tick p's send port is free
    for (block, &held) in arrivals.iter().enumerate() {
        for (k, &child) in kids.iter().enumerate() {
            let t = held.max(free);
            b.push(t, p, child, block as u32);
            out[first + k].push(time::add(t, tk.latency)?);
            free = time::add(t, tk.unit)?;
        }
    }
    Ok(())
}

/// Algorithm DTREE(d) (section 4.3) under the postal model, timed directly: the left-to-right
/// almost-full d-ary tree (`v`'s children `d·v + 1 … d·v + d`), every processor forwarding each
/// block to its children in order as soon as it can. The same sends as
/// `place(tree_orders(Dary(d)))`, without the placement's heap: one breadth-first pass.
pub(super) fn dtree(n: u32, m: u32, d: u32, postal: &Postal) -> Result<Schedule, ScheduleError> {
    if d == 0 {
        return Err(ScheduleError::NotApplicable {
            algorithm: "dtree(0)".into(),
            why: "the degree of DTREE(d) is at least 1".into(),
        });
    }
    let tk = PostalTicks::new(postal)?;
    let mut b = builder(n, m, tk.base)?;
    // Breadth-first, so the sends come grouped by sender (the builder then need not move them).
    let mut queue: VecDeque<(u32, Vec<Ticks>)> = VecDeque::from([(0, vec![0; m as usize])]);
    let mut kids = Vec::new();
    let mut out = Vec::new();
    while let Some((v, arrivals)) = queue.pop_front() {
        let first = u64::from(v) * u64::from(d) + 1;
        kids.clear();
        kids.extend((first..(first + u64::from(d)).min(u64::from(n))).map(|c| c as u32));
        out.clear();
        forward_blocks(&mut b, v, &arrivals, &kids, tk, &mut out)?;
        queue.extend(kids.iter().copied().zip(out.drain(..)));
    }
    b.build()
}

/// Algorithm PACK: BCAST with `λ' = 1 + (λ − 1)/m` on time scaled by `m`; each tree edge is `m`
/// consecutive unit sends (blocks `0 … m−1`) to the same receiver, which forwards only once it
/// holds the whole pack.
fn pack(n: u32, m: u32, tk: PostalTicks) -> Result<Schedule, ScheduleError> {
    let mut b = builder(n, m, tk.base)?;
    let short = tk.units(m)?;
    let long = time::add(tk.units(m.saturating_sub(1))?, tk.latency)?;
    stream_edges(&mut b, n, m, short, long, Shorter::Sender, tk)?;
    b.build()
}

/// Algorithm PIPELINE: PIPELINE-1 if `m ≤ λ`, PIPELINE-2 otherwise (both apply at `m = λ`, where
/// they coincide).
fn pipeline(n: u32, m: u32, tk: PostalTicks) -> Result<Schedule, ScheduleError> {
    let mut b = builder(n, m, tk.base)?;
    let stream = tk.units(m)?;
    if stream <= tk.latency {
        // PIPELINE-1: λ' = λ/m, the sender keeps the larger group.
        stream_edges(&mut b, n, m, stream, tk.latency, Shorter::Sender, tk)?;
    } else {
        // PIPELINE-2: λ' = m/λ, the receiver keeps the larger group.
        stream_edges(&mut b, n, m, tk.latency, stream, Shorter::Receiver, tk)?;
    }
    b.build()
}

/// One stream of blocks `0 … m−1` on every edge of the split tree, block `k` sent `k` units after
/// the edge's start.
fn stream_edges(
    b: &mut ScheduleBuilder,
    n: u32,
    m: u32,
    short: Ticks,
    long: Ticks,
    shorter: Shorter,
    tk: PostalTicks,
) -> Result<(), ScheduleError> {
    split_tree(n, short, long, shorter, (), |p, (), edges, out| {
        for &(t, child) in edges {
            let mut at = t;
            for block in 0..m {
                b.push(at, p, child, block);
                at = time::add(at, tk.unit)?;
            }
            out.push(());
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::super::classic::{tree_orders, Dary};
    use super::super::place;
    use super::*;

    #[test]
    fn direct_dtree_is_the_placement_of_the_tree_orders() {
        for lambda in ["1", "3/2", "5/2", "7"] {
            let postal = Postal::new(lambda.parse().unwrap()).unwrap();
            let timing = postal.timing(postal.time_base().unwrap()).unwrap();
            for n in [1, 2, 3, 7, 20, 64] {
                for m in [1, 2, 5] {
                    for d in [1, 2, 3, 4, 70] {
                        let direct = dtree(n, m, d, &postal).unwrap();
                        let orders = tree_orders(&Dary(d), n, m).unwrap();
                        let c = Collective::Broadcast { root: 0, blocks: m };
                        let placed = place(n, c, &orders, &timing).unwrap();
                        assert_eq!(direct, placed, "λ={lambda} n={n} m={m} d={d}");
                    }
                }
            }
        }
    }
}
