//! Broadcast, Sparse-Broadcast, pipelined broadcast, product and prefix on the ideal fat-tree
//! (Bilardi et al.; model and rounding in [`FatTree`]). Tables and proofs: `docs/fat-tree.md`.
//!
//! Everything runs in *rounds* (the paper's round model): all messages of a round leave at its
//! start, and the next round starts when the last one has arrived, `2·(round height)` steps
//! later. Parallel recursive calls on disjoint subtrees run in lockstep.
//!
//! * `broadcast` — Algorithm 1: Sparse-Broadcast makes `c(n)` copies, one at the first leaf of
//!   each subtree of `n/c(n)` leaves, then Broadcast recurses in all of them. Time ≤ recurrence
//!   (3).
//! * `sparse` — Algorithm 2 alone (on the whole tree): `c(N)` equally spaced copies, the other
//!   leaves left without the message (so the checker reports them incomplete, by design). A
//!   request for `c = a·b` copies on `n` leaves: Sparse-Broadcast of `a` copies on the first
//!   `w^{-1}(a)` leaves; one round moving copy `i` to `first + i·n/a`; Sparse-Broadcast of `b`
//!   copies on the first `w^{-1}(b)` leaves of each of the `a` blocks; one round spreading them to
//!   spacing `n/c`. `c = 2` is one message `first → first + n/2`. Time ≤ recurrence (2).
//! * `pipelined` — §3.3: after Sparse-Broadcast each copy holder sends `ℓ − 1` messages, one per
//!   step, nearest target first, to the first leaves of the other `ℓ − 1` parts of its subtree
//!   (`ℓ` = the largest power of two ≤ log2 n, at most `n/c`); arrivals `t + 2h` strictly increase,
//!   so no channel carries two of them at once. Then recursion on `n/(c·ℓ)` leaves. Time ≤
//!   recurrence (4) with `γ = 3`.
//! * `product` — Figure 2: the time reversal of `broadcast`'s computation graph (each node's
//!   first receipt; Sparse-Broadcast sends some copies twice), every message reversed and the
//!   schedule mirrored in time: a reduction to the root. Channel loads mirror (both directions have
//!   capacity `w(n)`), and a node's single send to its broadcast parent happens after all its
//!   children's sends arrived. The broadcast tree's subtrees are not runs of consecutive ranks,
//!   so this product needs a commutative operation (as the paper says).
//! * `prefix` — the product's up-sweep restricted to rank order (Brent–Kung: in round `j` the last
//!   leaf of each left half of a `2^j`-block sends to the last leaf of the right half), then the
//!   down-sweep (stride `s = N/4, …, 1`: leaf `2s(k + 1) − 1` sends to `2s(k + 1) + s − 1`). Every
//!   message carries a run of ranks ending at its sender that is adjacent to the receiver's, so it
//!   is correct for any associative operation. One message per block per round: no channel ever
//!   carries two. Time `Σ_j 2j + Σ (2·round height)`, `O(log² N)`.

use super::{Collective, Schedule, ScheduleBuilder, ScheduleError};
use crate::model::FatTree;
use crate::time::{Ticks, TimeBase};

/// A round-model schedule under construction: `(at, from, to)` messages of one block.
struct Rounds {
    /// The sends.
    sends: Vec<(Ticks, u32, u32)>,
}

impl Rounds {
    /// Sends one round of messages starting at `t` (none: `t`); returns its end.
    fn round(&mut self, t: Ticks, msgs: &[(u32, u32)]) -> Ticks {
        let mut end = t;
        for &(from, to) in msgs {
            if from != to {
                self.sends.push((t, from, to));
                end = end.max(t + 2 * u64::from(FatTree::height(from, to)));
            }
        }
        end
    }
}

/// Checks `n` for the fat-tree generators.
fn leaves(tree: &FatTree, n: u32) -> Result<(), ScheduleError> {
    tree.validate(n)?;
    Ok(())
}

/// Sparse-Broadcast of `c` copies (a power of two ≤ `c(size)`) from leaf `first` on the `size`
/// leaves from each of `firsts`, in lockstep, starting at `t`; returns the end time. Copies end
/// at `first + i·size/c`.
fn sparse(
    tree: &FatTree,
    rounds: &mut Rounds,
    firsts: &[u32],
    size: u64,
    c: u64,
    t: Ticks,
) -> Ticks {
    match c {
        0 | 1 => t,
        2 => {
            let msgs: Vec<(u32, u32)> =
                firsts.iter().map(|&f| (f, f + (size / 2) as u32)).collect();
            rounds.round(t, &msgs)
        }
        _ => {
            let (a, b) = FatTree::split(c);
            let ma = tree.w_inv(a).min(size);
            let mb = tree.w_inv(b).min(size / a);
            let t = sparse(tree, rounds, firsts, ma, a, t);
            let mut msgs = Vec::with_capacity(firsts.len() * a as usize);
            for &f in firsts {
                for i in 0..a {
                    msgs.push((f + (i * ma / a) as u32, f + (i * size / a) as u32));
                }
            }
            let t = rounds.round(t, &msgs);
            let blocks: Vec<u32> = firsts
                .iter()
                .flat_map(|&f| (0..a).map(move |i| f + (i * size / a) as u32))
                .collect();
            let t = sparse(tree, rounds, &blocks, mb, b, t);
            msgs.clear();
            for &f in &blocks {
                for j in 0..b {
                    msgs.push((f + (j * mb / b) as u32, f + (j * size / c) as u32));
                }
            }
            rounds.round(t, &msgs)
        }
    }
}

/// Algorithm 1 on subtrees of `size` leaves from each of `firsts`, starting at `t`.
fn broadcast_from(
    tree: &FatTree,
    rounds: &mut Rounds,
    firsts: &[u32],
    size: u64,
    t: Ticks,
    pipelined: bool,
) -> Ticks {
    if size <= 1 {
        return t;
    }
    let c = tree.copies(size);
    let t = sparse(tree, rounds, firsts, size, c, t);
    let part = size / c;
    let mut next: Vec<u32> = firsts
        .iter()
        .flat_map(|&f| (0..c).map(move |i| f + (i * part) as u32))
        .collect();
    if !pipelined {
        return broadcast_from(tree, rounds, &next, part, t, false);
    }
    let l = FatTree::pipeline_fanout(size, c);
    if l < 2 {
        return broadcast_from(tree, rounds, &next, part, t, true);
    }
    let piece = part / l;
    let mut end = t;
    for &f in &next {
        for j in 1..l {
            let to = f + (j * piece) as u32;
            let at = t + (j - 1);
            rounds.sends.push((at, f, to));
            end = end.max(at + 2 * u64::from(FatTree::height(f, to)));
        }
    }
    next = next
        .iter()
        .flat_map(|&f| (0..l).map(move |j| f + (j * piece) as u32))
        .collect();
    broadcast_from(tree, rounds, &next, piece, end, true)
}

/// Builds a single-block broadcast schedule rooted at 0, relabelled (`r ↦ r XOR root`, a
/// fat-tree automorphism) to `root`.
fn build(
    n: u32,
    collective: Collective,
    root: u32,
    sends: &[(Ticks, u32, u32)],
) -> Result<Schedule, ScheduleError> {
    let mut b: ScheduleBuilder = Schedule::builder(n, collective, TimeBase::UNIT)?;
    b.reserve(sends.len());
    for &(at, from, to) in sends {
        b.push(at, from ^ root, to ^ root, 0);
    }
    b.build()
}

/// Algorithm 1 (`pipelined`: §3.3) broadcasting one block from `root` to `n` leaves.
pub(crate) fn broadcast(
    tree: &FatTree,
    n: u32,
    m: u32,
    root: u32,
    pipelined: bool,
) -> Result<Schedule, ScheduleError> {
    leaves(tree, n)?;
    single(m)?;
    let mut r = Rounds { sends: Vec::new() };
    broadcast_from(tree, &mut r, &[0], u64::from(n), 0, pipelined);
    build(n, Collective::Broadcast { root, blocks: 1 }, root, &r.sends)
}

/// Algorithm 2 alone: `c(n)` copies of the block, equally spaced (the rest stay empty).
pub(crate) fn sparse_only(
    tree: &FatTree,
    n: u32,
    m: u32,
    root: u32,
) -> Result<Schedule, ScheduleError> {
    leaves(tree, n)?;
    single(m)?;
    let mut r = Rounds { sends: Vec::new() };
    let c = tree.copies(u64::from(n));
    sparse(tree, &mut r, &[0], u64::from(n), c, 0);
    build(n, Collective::Broadcast { root, blocks: 1 }, root, &r.sends)
}

/// The product (reduce to `root`): `broadcast` reversed in time.
pub(crate) fn product(tree: &FatTree, n: u32, root: u32) -> Result<Schedule, ScheduleError> {
    leaves(tree, n)?;
    let mut r = Rounds { sends: Vec::new() };
    let end = broadcast_from(tree, &mut r, &[0], u64::from(n), 0, false);
    // Figure 2's computation graph: each node's *first* receipt (Sparse-Broadcast re-sends some
    // copies; a second receipt would count a contribution twice in reverse)
    let mut first: Vec<Option<(Ticks, Ticks, u32)>> = vec![None; n as usize];
    for &(at, from, to) in &r.sends {
        let arrival = at + 2 * u64::from(FatTree::height(from, to));
        let slot = &mut first[to as usize];
        if slot.is_none_or(|(a, _, _)| arrival < a) {
            *slot = Some((arrival, at, from));
        }
    }
    let tree_sends: Vec<(Ticks, u32, u32)> = first
        .iter()
        .enumerate()
        .filter_map(|(to, x)| x.map(|(_, at, from)| (at, from, to as u32)))
        .collect();
    let reversed: Vec<(Ticks, u32, u32)> = tree_sends
        .iter()
        .map(|&(at, from, to)| {
            (
                end - at - 2 * u64::from(FatTree::height(from, to)),
                to,
                from,
            )
        })
        .collect();
    build(n, Collective::Reduce { root }, root, &reversed)
}

/// Brent–Kung prefix in rank order (module docs).
pub(crate) fn prefix(tree: &FatTree, n: u32) -> Result<Schedule, ScheduleError> {
    leaves(tree, n)?;
    let mut r = Rounds { sends: Vec::new() };
    let mut t = 0;
    let levels = crate::model::log2_floor(u64::from(n));
    for j in 1..=levels {
        let block = 1u32 << j;
        let msgs: Vec<(u32, u32)> = (0..n / block)
            .map(|k| (k * block + block / 2 - 1, k * block + block - 1))
            .collect();
        t = r.round(t, &msgs);
    }
    let mut s = n / 4;
    while s >= 1 {
        let msgs: Vec<(u32, u32)> = (0..)
            .map(|k: u32| (2 * s * (k + 1) - 1, 2 * s * (k + 1) + s - 1))
            .take_while(|&(_, to)| to < n)
            .collect();
        t = r.round(t, &msgs);
        s /= 2;
    }
    build(n, Collective::Prefix, 0, &r.sends)
}

/// The fat-tree broadcasts move one block.
fn single(m: u32) -> Result<(), ScheduleError> {
    if m == 1 {
        Ok(())
    } else {
        Err(ScheduleError::NotApplicable {
            algorithm: "fat-tree broadcast".into(),
            why: "the ideal fat-tree algorithms broadcast one message (m = 1)".into(),
        })
    }
}
