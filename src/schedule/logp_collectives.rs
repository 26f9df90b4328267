//! The collectives of Karp, Sahay, Santos & Schauser beyond one-to-all broadcast (§4–5), under any
//! model's [`Timing`]: reduction by time reversal, summation S(t), allreduce with combining and
//! all-to-all broadcast. See `docs/logp-collectives.md` for the conditions and errata.
//!
//! * [`reduce`] — the optimal broadcast tree of the reversed combining machine
//!   (`timing.combining().reversed()`: send step `max(g, o + c)`, latency `L + 2o + c`), run
//!   backwards. Processors are numbered so that every combine joins adjacent runs of ranks: the
//!   root's value is `x_0 ∘ … ∘ x_{P−1}` in rank order, except for roots whose position no split of
//!   the root's subtrees reaches, where it is a rotation starting at the root.
//! * [`summation`] — Algorithm S(t) (§4): the fewest ticks `t` in which `N` operands can be summed
//!   by at most `P` processors: local additions (one combine time each) in every free interval,
//!   then the reversed broadcast. [`summation_counts`] is S(t) with exactly `P` processors.
//! * [`allreduce`] — the circulant algorithm of §5.2.1 generalized (skipped steps reach every `P`
//!   the recurrence can reach; a period that keeps send and receive overheads apart when `o > 0`),
//!   or recursive halving with one extra step for odd halves, whichever is faster.
//!   [`allreduce_paper`] is §5.2.1 verbatim, to show where it breaks.
//! * [`alltoall`] — §5.1's permutation schedule; when a send overhead would meet a receive
//!   overhead, the same permutation with each send delayed past the receives it would meet, or
//!   [`place`](crate::schedule::place) of the same orders, whichever is faster. [`alltoall_paper`] is §5.1
//!   verbatim; [`alltoall_bound_achievable`] is the exact condition for `L + 2o + g(k(P − 1) − 1)`.

use crate::model::Timing;
use crate::schedule::{Collective, Orders, Schedule, ScheduleError};
use crate::time::{Ticks, TimeError};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

mod allreduce;
pub use allreduce::{allreduce, allreduce_circulant, allreduce_halving, allreduce_paper};

/// Checked addition.
fn add(a: Ticks, b: Ticks) -> Result<Ticks, ScheduleError> {
    a.checked_add(b)
        .ok_or(ScheduleError::Time(TimeError::Overflow))
}

/// Checked multiplication.
fn mul(a: Ticks, b: u64) -> Result<Ticks, ScheduleError> {
    a.checked_mul(b)
        .ok_or(ScheduleError::Time(TimeError::Overflow))
}

/// A "does not apply" error.
fn not(algorithm: &str, why: impl Into<String>) -> ScheduleError {
    ScheduleError::NotApplicable {
        algorithm: algorithm.to_owned(),
        why: why.into(),
    }
}

/// An optimal single-item broadcast tree (the `n` smallest labels of the universal tree with the
/// given send step and latency). Nodes are numbered in label order, so a parent's number is
/// smaller than its children's.
#[derive(Debug, Clone)]
struct Tree {
    /// Information time per node.
    info: Vec<Ticks>,
    /// Parent per node (0 for the root).
    parent: Vec<u32>,
    /// When the parent starts the send to the node.
    sent: Vec<Ticks>,
    /// Children per node, in the parent's send order.
    children: Vec<Vec<u32>>,
}

impl Tree {
    /// The tree of `n` nodes.
    fn new(n: u32, step: Ticks, latency: Ticks) -> Result<Tree, ScheduleError> {
        let len = n as usize;
        let mut t = Tree {
            info: vec![0; len],
            parent: vec![0; len],
            sent: vec![0; len],
            children: vec![Vec::new(); len],
        };
        let mut heap = BinaryHeap::with_capacity(len);
        heap.push(Reverse((0u64, 0u32)));
        for child in 1..n {
            let Some(Reverse((at, sender))) = heap.pop() else {
                break; // the sender is pushed back every time: unreachable
            };
            let c = child as usize;
            t.parent[c] = sender;
            t.sent[c] = at;
            t.info[c] = add(at, latency)?;
            t.children[sender as usize].push(child);
            heap.push(Reverse((add(at, step)?, sender)));
            heap.push(Reverse((t.info[c], child)));
        }
        Ok(t)
    }

    /// Subtree sizes.
    fn sizes(&self) -> Vec<u32> {
        let mut size = vec![1u32; self.info.len()];
        for v in (1..self.info.len()).rev() {
            size[self.parent[v] as usize] += size[v];
        }
        size
    }

    /// Ranks for a reduction: the subtree of `v` gets the ranks `start ..`, `v` first, then its
    /// children's subtrees in the order the reduction receives them (reverse send order), so
    /// every combine appends an adjacent run on the right.
    fn place_subtree(&self, v: u32, start: u32, size: &[u32], rank: &mut [u32]) {
        let mut stack = vec![(v, start)];
        while let Some((v, start)) = stack.pop() {
            rank[v as usize] = start;
            let mut next = start + 1;
            for &c in self.children[v as usize].iter().rev() {
                stack.push((c, next));
                next += size[c as usize];
            }
        }
    }

    /// Ranks with the root at `root`: the root's subtrees are split into a left group (prepended
    /// in receive order) and a right group (appended) whose sizes put the root at `root`. If no
    /// split is found greedily, the layout is rotated (cyclic runs; the root's value is then the
    /// rotation starting at the root).
    fn layout(&self, root: u32) -> Vec<u32> {
        let n = self.info.len() as u32;
        let size = self.sizes();
        let mut rank = vec![0u32; n as usize];
        let recv: Vec<u32> = self.children[0].iter().rev().copied().collect();
        let mut by_size = recv.clone();
        by_size.sort_by_key(|&c| Reverse(size[c as usize]));
        let mut left = vec![false; n as usize];
        let mut need = root;
        for &c in &by_size {
            if size[c as usize] <= need {
                need -= size[c as usize];
                left[c as usize] = true;
            }
        }
        if need != 0 {
            self.place_subtree(0, 0, &size, &mut rank);
            for r in &mut rank {
                *r = ((u64::from(*r) + u64::from(root)) % u64::from(n)) as u32;
            }
            return rank;
        }
        rank[0] = root;
        let (mut l, mut r) = (root, root + 1);
        for &c in &recv {
            if left[c as usize] {
                l -= size[c as usize];
                self.place_subtree(c, l, &size, &mut rank);
            } else {
                self.place_subtree(c, r, &size, &mut rank);
                r += size[c as usize];
            }
        }
        rank
    }
}

/// The optimal reduction to `root`: the optimal broadcast tree of the reversed combining machine,
/// run backwards (see the module docs). Its makespan is the reduce lower bound of `sim::bounds`.
///
/// # Errors
/// [`ScheduleError`] for `n = 0` or a root out of range; time overflow.
pub fn reduce(n: u32, root: u32, timing: &Timing) -> Result<Schedule, ScheduleError> {
    let collective = Collective::Reduce { root };
    let mut b = Schedule::builder(n, collective, timing.base)?;
    let rev = timing.combining().reversed();
    let tree = Tree::new(n, rev.send_step(), rev.latency)?;
    let total = tree.info.iter().copied().max().unwrap_or(0);
    let rank = tree.layout(root);
    b.reserve(n as usize - 1);
    for v in 1..n as usize {
        let p = tree.parent[v] as usize;
        b.push(total - tree.info[v], rank[v], rank[p], 0);
    }
    b.build()
}

/// A summation plan (Karp et al. §4, Algorithm S(t)): which processor adds how many operands
/// locally, and the reduction that combines their partial sums.
///
/// Operands are numbered in rank order: rank `r` adds operands
/// `first_operand(r) .. first_operand(r) + operands()[r]` locally, in every interval in which its
/// CPU is free (one combine time per addition), then takes part in [`Summation::schedule`], a
/// [`Collective::Reduce`] to rank 0 whose combines join adjacent runs of ranks — so the sum is in
/// operand order, and non-commutative operations are summed correctly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summation {
    /// When the sum is complete, in ticks of the schedule's base.
    time: Ticks,
    /// Operands per rank.
    operands: Vec<u64>,
    /// The reduction, ending at `time`.
    schedule: Schedule,
}

impl Summation {
    /// When rank 0 holds the sum (ticks of the schedule's base).
    pub fn time(&self) -> Ticks {
        self.time
    }

    /// How many processors take part (the schedule's processor count; at most the number
    /// requested — fewer when that is faster).
    pub fn processors(&self) -> u32 {
        self.schedule.n()
    }

    /// Operands per rank (a rank with 0 contributes the identity).
    pub fn operands(&self) -> &[u64] {
        &self.operands
    }

    /// The first operand of rank `p`.
    pub fn first_operand(&self, p: u32) -> u64 {
        self.operands[..p as usize].iter().sum()
    }

    /// The reduction of the partial sums.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }
}

/// Per-node operand counts of S(t) on the first `used` nodes of `tree`, or `None` if `t` is too
/// short for them. Local additions fill every interval of `[0, S_v)` not spent receiving, where
/// `S_v = t − info(v)` is the node's send start (the root's is `t`).
fn counts(tree: &Tree, used: usize, t: Ticks, recv_busy: Ticks, c: Ticks) -> Option<Vec<u64>> {
    let mut first = vec![0; used]; // start of the earliest receive interval (or S_v)
    let mut adds = vec![0u64; used];
    for v in 0..used {
        let s = t.checked_sub(tree.info[v])?;
        first[v] = s;
        adds[v] = s / c;
        if v > 0 {
            let u = tree.parent[v] as usize;
            // The newest child's receive is the parent's earliest: it splits the first gap.
            let end = t - tree.sent[v];
            let start = end - recv_busy;
            adds[u] = adds[u] - first[u] / c + start / c + (first[u] - end) / c;
            first[u] = start;
        }
    }
    Some(adds.into_iter().map(|a| a + 1).collect())
}

/// The best total over every number of processors `1 ..= tree size` for time `t`:
/// `(total, processors)`.
fn best_total(tree: &Tree, t: Ticks, recv_busy: Ticks, c: Ticks) -> (u64, usize) {
    let mut first = vec![0; tree.info.len()];
    let mut adds = vec![0u64; tree.info.len()];
    let mut total: u64 = 0;
    let mut best = (0, 1);
    for v in 0..tree.info.len() {
        let Some(s) = t.checked_sub(tree.info[v]) else {
            break;
        };
        first[v] = s;
        adds[v] = s / c;
        total = total.saturating_add(adds[v] + 1);
        if v > 0 {
            let u = tree.parent[v] as usize;
            let end = t - tree.sent[v];
            let start = end - recv_busy;
            let new = start / c + (first[u] - end) / c;
            total = total - first[u] / c + new;
            adds[u] = adds[u] - first[u] / c + new;
            first[u] = start;
        }
        if total > best.0 {
            best = (total, v + 1);
        }
    }
    best
}

/// The tree and forward receive busy time of S(t) under `timing`; errors if combining is free.
fn summation_tree(n: u32, timing: &Timing) -> Result<(Tree, Ticks, Ticks), ScheduleError> {
    let c = timing.combine;
    if c == 0 {
        return Err(not(
            "summation",
            "additions take no time (combine = 0): any number of operands is summed at once",
        ));
    }
    if n == 0 {
        return Err(ScheduleError::NoProcessors);
    }
    let rev = timing.combining().reversed();
    let tree = Tree::new(n, rev.send_step(), rev.latency)?;
    Ok((tree, timing.combining().recv_busy, c))
}

/// S(t) with exactly `n` processors: operands per processor, in the tree's label order (the
/// root first), or an error if `t` is shorter than the reduction B(n) of the reversed machine.
///
/// # Errors
/// [`ScheduleError::NotApplicable`] if `t` is too short or combining is free; `n = 0`; overflow.
pub fn summation_counts(n: u32, t: Ticks, timing: &Timing) -> Result<Vec<u64>, ScheduleError> {
    let (tree, recv_busy, c) = summation_tree(n, timing)?;
    counts(&tree, n as usize, t, recv_busy, c).ok_or_else(|| {
        not(
            "summation",
            "t is shorter than the reduction of n processors",
        )
    })
}

/// The fastest summation of `operands` operands on at most `n` processors (Algorithm S(t) for the
/// least `t`, with the number of processors that sums the most in `t`).
///
/// # Errors
/// [`ScheduleError::NotApplicable`] for `operands = 0` or free combining; `n = 0`; overflow.
pub fn summation(n: u32, operands: u64, timing: &Timing) -> Result<Summation, ScheduleError> {
    if operands == 0 {
        return Err(not("summation", "there is nothing to sum (operands = 0)"));
    }
    let (tree, recv_busy, c) = summation_tree(n, timing)?;
    // One processor sums everything in (N − 1)·c: the answer is at most that.
    let (mut lo, mut hi) = (0, mul(c, operands - 1)?);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if best_total(&tree, mid, recv_busy, c).0 >= operands {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let t = lo;
    let (_, used) = best_total(&tree, t, recv_busy, c);
    let mut per_node = counts(&tree, used, t, recv_busy, c).unwrap_or_else(|| vec![1; used]);
    // Trim the surplus, largest counts first, keeping a contribution where possible.
    let mut surplus = per_node.iter().sum::<u64>().saturating_sub(operands);
    for floor in [1, 0] {
        for k in per_node.iter_mut() {
            let take = (*k - floor.min(*k)).min(surplus);
            *k -= take;
            surplus -= take;
        }
    }
    let sub = Tree {
        info: tree.info[..used].to_vec(),
        parent: tree.parent[..used].to_vec(),
        sent: tree.sent[..used].to_vec(),
        children: tree.children[..used]
            .iter()
            .map(|cs| {
                cs.iter()
                    .copied()
                    .filter(|&x| (x as usize) < used)
                    .collect()
            })
            .collect(),
    };
    let rank = sub.layout(0);
    let mut by_rank = vec![0u64; used];
    let mut b = Schedule::builder(used as u32, Collective::Reduce { root: 0 }, timing.base)?;
    for v in 0..used {
        by_rank[rank[v] as usize] = per_node[v];
        if v > 0 {
            b.push(t - sub.info[v], rank[v], rank[sub.parent[v] as usize], 0);
        }
    }
    Ok(Summation {
        time: t,
        operands: by_rank,
        schedule: b.build()?,
    })
}

/// The `j`-th message of processor `i` in §5.1's permutation schedule with `k` items:
/// `(receiver, what)`.
fn permutation(n: u32, items: u32, i: u32, j: u64) -> (u32, u32) {
    let per = u64::from(n - 1);
    let (r, d) = (j / per, j % per + 1);
    let to = ((u64::from(i) + d) % u64::from(n)) as u32;
    (to, i * items + r as u32)
}

/// §5.1 verbatim: processor `i` sends item `r` to `i + 1, …, i + P − 1` for `r = 0 .. k`, at
/// `0, g, 2g, …` (`g` the model's send gap).
///
/// # Errors
/// `n = 0`, `items = 0`, too large; overflow.
pub fn alltoall_paper(n: u32, items: u32, timing: &Timing) -> Result<Schedule, ScheduleError> {
    let c = Collective::AllToAll { items };
    let mut b = Schedule::builder(n, c, timing.base)?;
    let per = u64::from(items) * u64::from(n - 1);
    for i in 0..n {
        for j in 0..per {
            let (to, what) = permutation(n, items, i, j);
            b.push(mul(timing.send_gap, j)?, i, to, what);
        }
    }
    b.build()
}

/// Whether the all-to-all lower bound `latency + (k(P − 1) − 1)·s` (`s` = the receive step; LogP:
/// `L + 2o + max(g, o)(k(P − 1) − 1)`) is achievable: exactly when no multiple `e·s`,
/// `1 ≤ e ≤ k(P − 1) − 1`, lies strictly between `latency − recv_busy − send_busy` and `latency`
/// (LogP: between `L` and `L + 2o`), or the CPU is not shared, or an overhead is 0. (The bound
/// forces every processor to send at `0, s, 2s, …` and receive `latency` later; the condition
/// says exactly that no send overhead then meets a receive overhead.) Also requires the send
/// step to equal the receive step, as in LogP.
pub fn alltoall_bound_achievable(n: u32, items: u32, timing: &Timing) -> bool {
    let s = timing.recv_step();
    let k = u64::from(items) * u64::from(n.saturating_sub(1));
    if k <= 1 || !timing.shared_cpu || timing.send_busy == 0 || timing.recv_busy == 0 {
        return timing.send_step() <= s || k <= 1;
    }
    if timing.send_step() > s {
        return false;
    }
    let lo = timing
        .latency
        .saturating_sub(timing.recv_busy.saturating_add(timing.send_busy));
    let hi = timing.latency;
    if s == 0 {
        return true;
    }
    // The least multiple of s above lo.
    let e = lo / s + 1;
    !(e < k && e.saturating_mul(s) < hi)
}

/// The best all-to-all broadcast herald builds (see the module docs): §5.1's permutation at
/// `0, s, 2s, …` when [`alltoall_bound_achievable`] (then it meets the lower bound), otherwise the
/// faster of the permutation with each send delayed past the receive overheads it would meet
/// (the same delays on every processor) and [`place`](crate::schedule::place) of the permutation orders.
///
/// # Errors
/// `n = 0`, `items = 0`, too large; overflow.
pub fn alltoall(n: u32, items: u32, timing: &Timing) -> Result<Schedule, ScheduleError> {
    let c = Collective::AllToAll { items };
    let mut b = Schedule::builder(n, c, timing.base)?;
    let per = u64::from(items) * u64::from(n - 1);
    let s = timing.send_step().max(timing.recv_step());
    let cpu = timing.shared_cpu && timing.send_busy > 0 && timing.recv_busy > 0;
    let (sb, rb, lat) = (timing.send_busy, timing.recv_busy, timing.latency);
    let mut sigma: Vec<Ticks> = Vec::with_capacity(per as usize);
    let mut first_open = 0usize; // earliest receive interval that may still meet a send
    for j in 0..per as usize {
        let mut t = if j == 0 { 0 } else { add(sigma[j - 1], s)? };
        if cpu {
            while first_open < j {
                let start = add(sigma[first_open], lat - rb)?;
                let end = add(sigma[first_open], lat)?;
                if end <= t {
                    first_open += 1;
                } else if start < add(t, sb)? {
                    t = end;
                    first_open += 1;
                } else {
                    break;
                }
            }
        }
        sigma.push(t);
    }
    let symmetric_last = sigma.last().copied().unwrap_or(0);
    let orders = Orders::from_fn(n, |i, out| {
        for j in 0..per {
            out.push(permutation(n, items, i, j));
        }
    })?;
    let placed = crate::schedule::place(n, c, &orders, timing)?;
    let placed_last = placed.sends().map(|x| x.at).max().unwrap_or(0);
    if placed_last < symmetric_last {
        return Ok(placed);
    }
    b.reserve((per * u64::from(n)) as usize);
    for i in 0..n {
        for (j, &t) in sigma.iter().enumerate() {
            let (to, what) = permutation(n, items, i, j as u64);
            b.push(t, i, to, what);
        }
    }
    b.build()
}
