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
//!   [`place`](crate::place) of the same orders, whichever is faster. [`alltoall_paper`] is §5.1
//!   verbatim; [`alltoall_bound_achievable`] is the exact condition for `L + 2o + g(k(P − 1) − 1)`.
//!
//! Only the crate's public names are used (`crate::Schedule`, …), so the file compiles wherever
//! those names resolve.

use crate::{Collective, Orders, Schedule, ScheduleError, Ticks, TimeError, Timing};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
pub(crate) fn reduce(n: u32, root: u32, timing: &Timing) -> Result<Schedule, ScheduleError> {
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
#[allow(dead_code)] // also exercised on its own by tests/logp_collectives.rs
pub(crate) fn summation_counts(
    n: u32,
    t: Ticks,
    timing: &Timing,
) -> Result<Vec<u64>, ScheduleError> {
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
pub(crate) fn summation(
    n: u32,
    operands: u64,
    timing: &Timing,
) -> Result<Summation, ScheduleError> {
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

/// A slotted view of a machine for symmetric schedules: sends start only at multiples of `step`,
/// each processor starts at most one send and receives at most one message per slot, and a
/// message sent in slot `j` can be forwarded from slot `j + lambda` on. `step` is the least
/// period `≥ max(send step, receive step)` (and `≥ send_busy + recv_busy` on a shared CPU) at
/// which the receive overheads, `latency − recv_busy` after each send, never meet a send overhead.
#[derive(Debug, Clone, Copy)]
struct Slots {
    /// Ticks per slot (> 0).
    step: Ticks,
    /// Slots from a send until its value can be forwarded: `⌈latency / step⌉ ≥ 1`.
    lambda: u64,
    /// The machine's latency (ticks).
    #[allow(dead_code)] // kept for the docs' arithmetic; tests read it
    latency: Ticks,
}

impl Slots {
    /// The slotted machine of `t`, or `None` if `t` lets a processor send unboundedly often.
    fn new(t: &Timing) -> Option<Slots> {
        let base = t.send_step().max(t.recv_step());
        let (sb, rb) = (t.send_busy, t.recv_busy);
        let cpu = t.shared_cpu && sb > 0 && rb > 0;
        let step = if !cpu {
            base
        } else {
            let lo = base.max(sb.saturating_add(rb));
            let hi = lo.max(t.latency);
            let x = t.latency.saturating_sub(rb);
            let fits = |s: Ticks| {
                let phi = x % s;
                phi >= sb && phi + rb <= s
            };
            (lo..=hi.min(lo.saturating_add(1 << 22)))
                .find(|&s| fits(s))
                .unwrap_or(hi)
        };
        (step > 0).then(|| Slots {
            step,
            lambda: t.latency.div_ceil(step).max(1),
            latency: t.latency,
        })
    }

    /// A schedule from `(slot, from, to)` sends.
    fn schedule(
        &self,
        n: u32,
        collective: Collective,
        base: crate::TimeBase,
        sends: &[(u64, u32, u32)],
    ) -> Result<Schedule, ScheduleError> {
        let mut b = Schedule::builder(n, collective, base)?;
        b.reserve(sends.len());
        for &(slot, from, to) in sends {
            b.push(mul(self.step, slot)?, from, to, 0);
        }
        b.build()
    }
}

/// The lengths `H_t` of the circulant's runs for decisions `d` (whether everyone sends in slot
/// `j`), up to slot `upto`, saturating.
fn run_lengths(d: &[bool], lambda: u64, upto: usize) -> Vec<u64> {
    let l = lambda as usize;
    let mut h = vec![1u64; upto + 1];
    for t in l..=upto {
        let j = t - l;
        let add = if d.get(j).copied().unwrap_or(false) {
            h[j]
        } else {
            0
        };
        h[t] = h[t - 1].saturating_add(add);
    }
    h
}

/// Decisions `d_0 ..= d_J` (`d_J` true, `J` least) with `H_{J + λ} = n` exactly, searched
/// depth-first with monotone bounds (`H` only grows with more sends) and a node budget.
fn circulant_decisions(n: u32, lambda: u64) -> Option<Vec<bool>> {
    let n = u64::from(n);
    let l = lambda as usize;
    if n <= 1 {
        return Some(Vec::new());
    }
    // The least J at which sending in every slot reaches n.
    let mut j_min = 0usize;
    loop {
        let h = run_lengths(&vec![true; j_min + 1], lambda, j_min + l);
        if h[j_min + l] >= n {
            break;
        }
        j_min += 1;
        if j_min > 1 << 20 {
            return None;
        }
    }
    /// The search.
    struct Dfs {
        /// Target.
        n: u64,
        /// λ.
        lambda: u64,
        /// Last slot.
        last: usize,
        /// Nodes left.
        budget: u64,
        /// Decisions so far.
        d: Vec<bool>,
    }
    impl Dfs {
        fn go(&mut self) -> bool {
            if self.budget == 0 {
                return false;
            }
            self.budget -= 1;
            let j = self.d.len();
            let l = self.lambda as usize;
            let choices: &[bool] = if j == self.last {
                &[true]
            } else {
                &[true, false]
            };
            for &c in choices {
                self.d.push(c);
                let h = run_lengths(&self.d, self.lambda, j + l);
                let now = h[j + l];
                let ok = if j == self.last {
                    now == self.n
                } else if now >= self.n {
                    false
                } else {
                    let mut all = self.d.clone();
                    all.resize(self.last + 1, true);
                    run_lengths(&all, self.lambda, self.last + l)[self.last + l] >= self.n
                };
                if ok && (j == self.last || self.go()) {
                    return true;
                }
                self.d.pop();
            }
            false
        }
    }
    for last in j_min..=j_min + 2 * l + 4 {
        let mut s = Dfs {
            n,
            lambda,
            last,
            budget: 200_000,
            d: Vec::new(),
        };
        if s.go() {
            return Some(s.d);
        }
    }
    None
}

/// The circulant allreduce's sends for decisions `d`: in every slot `j` with `d_j`, processor
/// `i` sends its value to `i + H_{j + λ − 1}` (mod n).
fn circulant_sends(n: u32, lambda: u64, d: &[bool]) -> Vec<(u64, u32, u32)> {
    let l = lambda as usize;
    let h = run_lengths(d, lambda, d.len() + l);
    let mut out = Vec::new();
    for (j, &send) in d.iter().enumerate() {
        if !send {
            continue;
        }
        let off = h[j + l - 1] % u64::from(n);
        for i in 0..n {
            out.push((j as u64, i, ((u64::from(i) + off) % u64::from(n)) as u32));
        }
    }
    out
}

/// Karp et al. §5.2.1 verbatim, generalized only in its clock: everyone sends every
/// `send_step` (the paper: every unit, g = 1), `λ = ⌈latency / send_step⌉` steps before a value
/// can be forwarded (the paper: L), in steps `j = 0 ..= T − λ` to `i + f_{j+λ−1}`, where `f` is
/// the paper's sequence and `T` the least with `f_T ≥ n`. For `n = f_T`, `o = 0`, `g = 1` and
/// free combining this is Theorem 5.1; otherwise the checker reports what breaks.
///
/// # Errors
/// [`ScheduleError::NotApplicable`] if the send step is 0; `n = 0`; overflow.
pub(crate) fn allreduce_paper(n: u32, timing: &Timing) -> Result<Schedule, ScheduleError> {
    let tc = timing.combining();
    let step = tc.send_step();
    if step == 0 {
        return Err(not("allreduce-paper", "the send step is 0"));
    }
    let lambda = tc.latency.div_ceil(step).max(1);
    let mut j = 0usize;
    let l = lambda as usize;
    while n > 1 && run_lengths(&vec![true; j + 1], lambda, j + l)[j + l] < u64::from(n) {
        j += 1;
    }
    let d = if n > 1 { vec![true; j + 1] } else { Vec::new() };
    let slots = Slots {
        step,
        lambda,
        latency: tc.latency,
    };
    let sends = circulant_sends(n.max(1), lambda, &d);
    slots.schedule(n, Collective::Allreduce, timing.base, &sends)
}

/// Recursive halving: the two halves `[lo, lo + a)` and `[lo + a, hi)` (`a = ⌈size/2⌉`) reduce
/// among themselves, then exchange: equal halves pairwise in one slot; if the first half has one
/// more, the second half's first member sends to the first half's last member one slot before
/// it exchanges with the first half's first member. Every combine joins adjacent runs of ranks.
/// Returns the slot from which everyone in the range holds the range's sum.
fn merge_sends(lo: u32, hi: u32, lambda: u64, out: &mut Vec<(u64, u32, u32)>) -> u64 {
    let size = hi - lo;
    if size <= 1 {
        return 0;
    }
    let a = size.div_ceil(2);
    let b = size - a;
    let f = merge_sends(lo, lo + a, lambda, out).max(merge_sends(lo + a, hi, lambda, out));
    let (aa, bb) = (lo, lo + a);
    if a == b {
        for i in 0..b {
            out.push((f, aa + i, bb + i));
            out.push((f, bb + i, aa + i));
        }
        f + lambda
    } else {
        out.push((f, bb, aa + b));
        for i in 1..b {
            out.push((f, aa + i, bb + i));
            out.push((f, bb + i, aa + i));
        }
        out.push((f + 1, aa, bb));
        out.push((f + 1, bb, aa));
        f + 1 + lambda
    }
}

/// An allreduce in which every processor ends with every contribution exactly once, for every
/// `n` and every model: the faster of the generalized circulant (when its recurrence reaches
/// `n`; runs are cyclic, results rotations) and recursive halving (linear runs, results in rank
/// order; chosen on ties). With no send step at all (`g = o = c = 0`), everyone sends its own
/// value to everyone at time 0.
///
/// # Errors
/// `n = 0`; overflow.
pub(crate) fn allreduce(n: u32, timing: &Timing) -> Result<Schedule, ScheduleError> {
    let tc = timing.combining();
    let Some(slots) = Slots::new(&tc) else {
        let mut b = Schedule::builder(n, Collective::Allreduce, timing.base)?;
        for i in 0..n {
            for k in 0..n {
                if k != i {
                    b.push(0, i, k, 0);
                }
            }
        }
        return b.build();
    };
    let mut merge = Vec::new();
    let done = merge_sends(0, n.max(1), slots.lambda, &mut merge);
    let merge_last = done.saturating_sub(slots.lambda);
    let circ = circulant_decisions(n, slots.lambda);
    let sends = match circ {
        Some(d) if (d.len() as u64).saturating_sub(1) < merge_last => {
            circulant_sends(n, slots.lambda, &d)
        }
        _ => merge,
    };
    slots.schedule(n, Collective::Allreduce, timing.base, &sends)
}

/// The generalized circulant allreduce alone, if its recurrence reaches `n` (see [`allreduce`]).
///
/// # Errors
/// `n = 0`; overflow.
#[allow(dead_code)] // also exercised on its own by tests/logp_collectives.rs
pub(crate) fn allreduce_circulant(
    n: u32,
    timing: &Timing,
) -> Result<Option<Schedule>, ScheduleError> {
    let tc = timing.combining();
    let Some(slots) = Slots::new(&tc) else {
        return Ok(None);
    };
    circulant_decisions(n, slots.lambda)
        .map(|d| {
            let sends = circulant_sends(n, slots.lambda, &d);
            slots.schedule(n, Collective::Allreduce, timing.base, &sends)
        })
        .transpose()
}

/// Recursive halving alone (see [`allreduce`]).
///
/// # Errors
/// [`ScheduleError::NotApplicable`] if the model has no send step; `n = 0`; overflow.
#[allow(dead_code)] // also exercised on its own by tests/logp_collectives.rs
pub(crate) fn allreduce_halving(n: u32, timing: &Timing) -> Result<Schedule, ScheduleError> {
    let tc = timing.combining();
    let slots = Slots::new(&tc).ok_or_else(|| not("allreduce-halving", "the send step is 0"))?;
    let mut sends = Vec::new();
    merge_sends(0, n.max(1), slots.lambda, &mut sends);
    slots.schedule(n, Collective::Allreduce, timing.base, &sends)
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
#[allow(dead_code)] // also exercised on its own by tests/logp_collectives.rs
pub(crate) fn alltoall_paper(
    n: u32,
    items: u32,
    timing: &Timing,
) -> Result<Schedule, ScheduleError> {
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
#[allow(dead_code)] // also exercised on its own by tests/logp_collectives.rs
pub(crate) fn alltoall_bound_achievable(n: u32, items: u32, timing: &Timing) -> bool {
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
/// (the same delays on every processor) and [`place`](crate::place) of the permutation orders.
///
/// # Errors
/// `n = 0`, `items = 0`, too large; overflow.
pub(crate) fn alltoall(n: u32, items: u32, timing: &Timing) -> Result<Schedule, ScheduleError> {
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
    let placed = crate::place(n, c, &orders, timing)?;
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
