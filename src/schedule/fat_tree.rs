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
//! * `prefix` — Theorem 6's "prefix as fast as broadcast", in exactly twice the broadcast's time.
//!   Every broadcast message also hands the receiver the *responsibility* for a run of leaves
//!   `lo..hi` (those it will serve: a Sparse-Broadcast copy stands for a whole block, the first
//!   phase's copies for distant blocks); responsibilities partition the leaves, and at the end
//!   each leaf is responsible for itself. The prefix runs the faster broadcast (Algorithm 1 or
//!   §3.3) twice: **up**, mirrored in time, every receiver returns to its sender the product of
//!   `lo..hi` (formed from its own value and the products returned to it, which arrived
//!   earlier in the mirror); **down**, as is, every sender hands the receiver the product of
//!   `0..lo` (formed from what it was handed and the products it got back). Leaf `x` ends with
//!   `0..x` and its own value. Messages name the run they carry ([`FatTree::piece`]): a processor
//!   keeps what it received, as the paper's processors compute `A_i ⋆ A_j` of stored partial
//!   products, and the checker's piece rule verifies every run can be formed in rank order, so
//!   the operation need only be associative. Channel loads mirror, so both halves are legal
//!   when the broadcast is.

use super::{Collective, Schedule, ScheduleBuilder, ScheduleError};
use crate::model::FatTree;
use crate::time::{Ticks, TimeBase};

/// One message of a broadcast as built: `(at, from, to, lo, hi)`. Besides the copy of the
/// block, the message hands the receiver the *responsibility* for the leaves `lo..hi`: the
/// receiver (or whoever it hands parts on to) will deliver the block to them. Responsibilities
/// partition the leaves at every moment, and at the end every leaf is responsible for itself
/// alone; the prefix reads them (module docs).
type Transfer = (Ticks, u32, u32, u32, u32);

/// A round-model schedule under construction.
struct Rounds {
    /// The sends, with the responsibility each hands over.
    sends: Vec<Transfer>,
}

impl Rounds {
    /// Sends one round of messages `(from, to, lo, hi)` starting at `t` (none: `t`); returns its
    /// end. A message to oneself is no message: the responsibility stays where it is.
    fn round(&mut self, t: Ticks, msgs: &[(u32, u32, u32, u32)]) -> Ticks {
        let mut end = t;
        for &(from, to, lo, hi) in msgs {
            if from != to {
                self.sends.push((t, from, to, lo, hi));
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

/// Sparse-Broadcast of `c` copies (a power of two ≤ `c(size)`) in lockstep on the `size` leaves
/// from each `first` of `calls`, starting at `t`; returns the end time. Copy `i` ends at leaf
/// `first + i·size/c` and is responsible for the leaves `origin + i·unit … origin + (i+1)·unit`
/// (`(first, origin)` in `calls`; at the top of a broadcast `origin = first`, `unit = size/c`; the
/// first phase's copies, inside a small subtree, stand for whole distant blocks).
fn sparse(
    tree: &FatTree,
    rounds: &mut Rounds,
    calls: &[(u32, u32)],
    size: u64,
    c: u64,
    unit: u64,
    t: Ticks,
) -> Ticks {
    let at = |base: u32, off: u64| base + off as u32;
    match c {
        0 | 1 => t,
        2 => {
            let msgs: Vec<_> = calls
                .iter()
                .map(|&(f, o)| (f, at(f, size / 2), at(o, unit), at(o, 2 * unit)))
                .collect();
            rounds.round(t, &msgs)
        }
        _ => {
            let (a, b) = FatTree::split(c);
            let ma = tree.w_inv(a).min(size);
            let mb = tree.w_inv(b).min(size / a);
            let t = sparse(tree, rounds, calls, ma, a, unit * b, t);
            let mut msgs = Vec::with_capacity(calls.len() * a as usize);
            for &(f, o) in calls {
                for i in 0..a {
                    let (lo, hi) = (at(o, i * b * unit), at(o, (i + 1) * b * unit));
                    msgs.push((at(f, i * ma / a), at(f, i * size / a), lo, hi));
                }
            }
            let t = rounds.round(t, &msgs);
            let blocks: Vec<(u32, u32)> = calls
                .iter()
                .flat_map(|&(f, o)| (0..a).map(move |i| (at(f, i * size / a), at(o, i * b * unit))))
                .collect();
            let t = sparse(tree, rounds, &blocks, mb, b, unit, t);
            msgs.clear();
            for &(f, o) in &blocks {
                for j in 0..b {
                    let (lo, hi) = (at(o, j * unit), at(o, (j + 1) * unit));
                    msgs.push((at(f, j * mb / b), at(f, j * size / c), lo, hi));
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
    let part = size / c;
    let calls: Vec<(u32, u32)> = firsts.iter().map(|&f| (f, f)).collect();
    let t = sparse(tree, rounds, &calls, size, c, part, t);
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
            rounds.sends.push((at, f, to, to, to + piece as u32));
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

/// The `(at, from, to)` of transfers.
fn plain(sends: &[Transfer]) -> Vec<(Ticks, u32, u32)> {
    sends.iter().map(|&(at, f, t, _, _)| (at, f, t)).collect()
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
    build(
        n,
        Collective::Broadcast { root, blocks: 1 },
        root,
        &plain(&r.sends),
    )
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
    let n64 = u64::from(n);
    sparse(tree, &mut r, &[(0, 0)], n64, c, n64 / c.max(1), 0);
    build(
        n,
        Collective::Broadcast { root, blocks: 1 },
        root,
        &plain(&r.sends),
    )
}

/// The product (reduce to `root`): `broadcast` reversed in time.
pub(crate) fn product(tree: &FatTree, n: u32, root: u32) -> Result<Schedule, ScheduleError> {
    leaves(tree, n)?;
    let mut r = Rounds { sends: Vec::new() };
    let end = broadcast_from(tree, &mut r, &[0], u64::from(n), 0, false);
    // Figure 2's computation graph: each node's *first* receipt (Sparse-Broadcast re-sends some
    // copies; a second receipt would count a contribution twice in reverse)
    let mut first: Vec<Option<(Ticks, Ticks, u32)>> = vec![None; n as usize];
    for &(at, from, to, _, _) in &r.sends {
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

/// The prefix: the faster of [`prefix_pieces`] and the Brent–Kung sweep (faster only for a few
/// `n ≤ 8`).
pub(crate) fn prefix(tree: &FatTree, n: u32) -> Result<Schedule, ScheduleError> {
    let fast = prefix_pieces(tree, n)?;
    let sweep = prefix_sweep(tree, n)?;
    let time = |s: &Schedule| {
        s.sends()
            .map(|x| x.at + tree.latency(x.from, x.to))
            .max()
            .unwrap_or(0)
    };
    Ok(if time(&sweep) < time(&fast) {
        sweep
    } else {
        fast
    })
}

/// The prefix in at most twice the broadcast's time (module docs): the broadcast's transfers
/// mirrored in time (each receiver returns the product of the leaves it took over, where that
/// product is needed) and then replayed (each sender hands the receiver the prefix up to those
/// leaves). The faster of Algorithm 1 and the pipelined broadcast is used.
pub(crate) fn prefix_pieces(tree: &FatTree, n: u32) -> Result<Schedule, ScheduleError> {
    leaves(tree, n)?;
    if n > FatTree::MAX_PIECE_N {
        return Err(ScheduleError::TooLarge(format!(
            "the fat-tree prefix names runs of ranks in 32 bits, for n ≤ {}, not {n}",
            FatTree::MAX_PIECE_N
        )));
    }
    let run = |pipelined: bool| {
        let mut r = Rounds { sends: Vec::new() };
        let end = broadcast_from(tree, &mut r, &[0], u64::from(n), 0, pipelined);
        (end, r.sends)
    };
    let (end, transfers) = [run(false), run(true)]
        .into_iter()
        .min_by_key(|x| x.0)
        .unwrap_or_default();
    // A returned product is needed by a sender that later hands over a prefix reaching past it
    // (another transfer of the sender starts at or beyond its end), or that returns a product
    // containing it itself; decided in forward time order (a role arrives before its parts leave).
    let mut reach = vec![0u32; n as usize];
    for &(_, from, _, lo, _) in &transfers {
        reach[from as usize] = reach[from as usize].max(lo);
    }
    let mut order: Vec<usize> = (0..transfers.len()).collect();
    order.sort_by_key(|&i| transfers[i].0);
    let mut roles: Vec<Vec<(u32, u32, bool)>> = vec![Vec::new(); n as usize];
    let mut need = vec![false; transfers.len()];
    for &i in &order {
        let (_, from, to, lo, hi) = transfers[i];
        let inherited = roles[from as usize]
            .iter()
            .any(|&(a, b, nd)| nd && a <= lo && hi <= b);
        need[i] = reach[from as usize] >= hi || inherited;
        roles[to as usize].push((lo, hi, need[i]));
    }
    let needed = |i: usize| need[i];
    let flight = |from: u32, to: u32| 2 * u64::from(FatTree::height(from, to));
    // the down half starts once the last needed product has arrived
    let start = transfers
        .iter()
        .enumerate()
        .filter(|&(i, _)| needed(i))
        .map(|(_, &(at, _, _, _, _))| end - at)
        .max()
        .unwrap_or(0);
    let mut b: ScheduleBuilder = Schedule::builder(n, Collective::Prefix, TimeBase::UNIT)?;
    b.reserve(2 * transfers.len());
    for (i, &(at, from, to, lo, hi)) in transfers.iter().enumerate() {
        if needed(i) {
            // up: the receiver returns the product of the leaves it took over
            b.push(
                end - at - flight(from, to),
                to,
                from,
                FatTree::piece(n, lo, hi - 1),
            );
        }
        // down: the sender hands over the prefix of everything before them
        b.push(start + at, from, to, FatTree::piece(n, 0, lo - 1));
    }
    b.build()
}

/// Brent–Kung up- and down-sweep in rank order, each message the sender's whole value: the
/// prefix herald had before, `Θ(log² N)` for every `w` (`docs/fat-tree.md`).
fn prefix_sweep(tree: &FatTree, n: u32) -> Result<Schedule, ScheduleError> {
    leaves(tree, n)?;
    let mut r = Rounds { sends: Vec::new() };
    let mut t = 0;
    let levels = n.trailing_zeros();
    for j in 1..=levels {
        let block = 1u32 << j;
        let msgs: Vec<_> = (0..n / block)
            .map(|k| (k * block + block / 2 - 1, k * block + block - 1, 0, 0))
            .collect();
        t = r.round(t, &msgs);
    }
    let mut s = n / 4;
    while s >= 1 {
        let msgs: Vec<_> = (0..)
            .map(|k: u32| (2 * s * (k + 1) - 1, 2 * s * (k + 1) + s - 1, 0, 0))
            .take_while(|&(_, to, _, _)| to < n)
            .collect();
        t = r.round(t, &msgs);
        s /= 2;
    }
    build(n, Collective::Prefix, 0, &plain(&r.sends))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FatTreeCapacity;

    #[test]
    fn responsibilities_partition_the_leaves() {
        // every transfer hands over a run the sender holds; at the end each leaf holds itself
        for w in FatTreeCapacity::ALL {
            let tree = FatTree::new(w);
            for e in 1..=10 {
                let n = 1u32 << e;
                for pipelined in [false, true] {
                    let mut r = Rounds { sends: Vec::new() };
                    broadcast_from(&tree, &mut r, &[0], u64::from(n), 0, pipelined);
                    let mut sends = r.sends.clone();
                    sends.sort_by_key(|s| s.0);
                    let mut owner = vec![0u32; n as usize];
                    for &(_, from, to, lo, hi) in &sends {
                        assert!(lo < hi && hi <= n);
                        for x in lo..hi {
                            assert_eq!(owner[x as usize], from, "n={n} w={w}");
                            owner[x as usize] = to;
                        }
                    }
                    assert!(owner.iter().enumerate().all(|(x, &o)| o == x as u32));
                }
            }
        }
    }

    #[test]
    fn prefix_takes_twice_the_broadcast() {
        for w in FatTreeCapacity::ALL {
            let tree = FatTree::new(w);
            for e in 1..=10 {
                let n = 1u32 << e;
                let t = |s: &Schedule| s.sends().map(|x| x.at + tree.latency(x.from, x.to)).max();
                let b = [false, true]
                    .map(|p| t(&broadcast(&tree, n, 1, 0, p).unwrap()).unwrap())
                    .into_iter()
                    .min();
                let p = t(&prefix_pieces(&tree, n).unwrap());
                assert!(p <= b.map(|b| 2 * b), "n={n} w={w}");
                assert!(p >= b, "n={n} w={w}");
                let old = t(&prefix_sweep(&tree, n).unwrap()).unwrap();
                eprintln!("w={w} n={n}: prefix {p:?} sweep {old}");
            }
        }
    }
}
