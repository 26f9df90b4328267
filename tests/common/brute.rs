//! Exhaustive search over single-message broadcast schedules, shared by the paper tests.
//!
//! Both papers' broadcast problems reduce, for one message, to the same abstract rules (all times
//! in integer ticks):
//!
//! * processor 0 is informed at time 0;
//! * an informed processor may start a send at any time at or after it is informed, its
//!   consecutive send starts at least `step` ticks apart (postal: 1 unit; LogP as herald models it:
//!   `max(g, o)`, since two send overheads on one CPU cannot overlap);
//! * the receiver of a send starting at `x` is informed at `x + latency` (postal: λ; LogP: L + 2o).
//!
//! # Why the search is exhaustive
//!
//! * **Receivers.** Only sends to processors that are neither informed nor already the target of a
//!   send in flight are explored. Deleting a send to such a processor keeps every other
//!   processor's first-information time (the deleted message informs nobody) and only frees ports
//!   (postal) or CPU time and capacity (LogP), so the pruned schedule is as legal and no later —
//!   for the maximum and for the sum of information times alike. In a pruned schedule every
//!   processor receives exactly one message, before it sends anything, so receive-port, receive-gap,
//!   CPU-sharing (LogP: the one receive overhead ends exactly when the processor is informed) and
//!   capacity rules (sends of one processor are ≥ g apart, each in transit for L) can never bind:
//!   the spacing rule above is the only one left. Uninformed processors are interchangeable, so
//!   which one receives does not matter either.
//! * **Times.** Send times are searched on the tick grid only. Take any legal schedule with real
//!   send times and round every send start down to the grid, `x ↦ ⌊x⌋`. Information times become
//!   `⌊x⌋ + latency = ⌊x + latency⌋` (the latency is a whole number of ticks), never later; a
//!   send at `x ≥ (information time of its sender)` still satisfies `⌊x⌋ ≥ ⌊info⌋`, because `⌊·⌋`
//!   is monotone and the rounded information time is `⌊info⌋`; and two sends `x₂ ≥ x₁ + step` of
//!   one processor stay `⌊x₂⌋ ≥ ⌊x₁ + step⌋ = ⌊x₁⌋ + step` apart (the step is whole too). So the
//!   rounded schedule is legal and no worse in every information time: the grid loses nothing.
//! * **Decisions.** At every tick each idle informed processor either starts a send or does not.
//!   Idle processors are interchangeable, so the choice is *how many* of them send now; busy
//!   processors differ only by the ticks until they are free, in-flight messages only by the ticks
//!   until they inform. The state (idle count, multiset of busy remainders, multiset of in-flight
//!   remainders, processors still untouched) is therefore all the future depends on, and a
//!   memoized DFS over it enumerates every schedule. Nothing of either paper's proof (recurrences,
//!   minimal or "greedy" schedules) is assumed.

#![allow(dead_code)]

use std::collections::HashMap;

/// The abstract single-message broadcast rules, in ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rules {
    /// Least distance between consecutive send starts of one processor (≥ 1).
    pub(crate) step: u64,
    /// From a send's start until its receiver is informed (≥ 1).
    pub(crate) latency: u64,
}

/// Search state at the current tick, before this tick's decisions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct State {
    /// Informed processors that may send now.
    idle: u8,
    /// Processors neither informed nor targeted yet.
    left: u8,
    /// Ticks until each busy processor may send again (each ≥ 1), sorted.
    busy: Vec<u64>,
    /// Ticks until each in-flight message informs its receiver (each ≥ 1), sorted.
    pending: Vec<u64>,
}

impl State {
    fn start(n: usize) -> State {
        assert!((1..=30).contains(&n));
        State {
            idle: 1,
            left: (n - 1) as u8,
            busy: vec![],
            pending: vec![],
        }
    }

    /// The state after `k` idle processors start a send now.
    fn send(&self, k: u8, r: Rules) -> State {
        let mut s = self.clone();
        s.idle -= k;
        s.left -= k;
        s.busy.extend(std::iter::repeat_n(r.step, k as usize));
        s.pending.extend(std::iter::repeat_n(r.latency, k as usize));
        s.busy.sort_unstable();
        s.pending.sort_unstable();
        s
    }

    /// Ticks until the next tick at which a decision can differ: 1 if someone is idle (it may send
    /// at the next tick), else the next moment a processor becomes free or informed.
    fn delta(&self) -> Option<u64> {
        if self.idle > 0 {
            return Some(1);
        }
        self.busy.iter().chain(&self.pending).copied().min()
    }

    /// The state `d` ticks later (no decision happens in between: see [`State::delta`]).
    fn advance(&self, d: u64) -> State {
        let mut s = State {
            idle: self.idle,
            left: self.left,
            busy: vec![],
            pending: vec![],
        };
        for &b in &self.busy {
            if b <= d {
                s.idle += 1;
            } else {
                s.busy.push(b - d);
            }
        }
        for &p in &self.pending {
            debug_assert!(p >= d);
            if p == d {
                s.idle += 1; // informed now, may send from now on
            } else {
                s.pending.push(p - d);
            }
        }
        s
    }
}

/// Exhaustive search for one `(n, rules)`.
#[derive(Debug)]
pub(crate) struct Search {
    rules: Rules,
    n: usize,
    feasible_memo: HashMap<(State, u64), bool>,
    sum_memo: HashMap<(State, u64), Option<u64>>,
}

impl Search {
    /// A search for broadcasting to `n` processors (root included) under `rules`.
    pub(crate) fn new(n: usize, rules: Rules) -> Search {
        assert!(rules.step >= 1 && rules.latency >= 1, "{rules:?}");
        Search {
            rules,
            n,
            feasible_memo: HashMap::new(),
            sum_memo: HashMap::new(),
        }
    }

    /// Whether some schedule informs everyone within `deadline` ticks.
    pub(crate) fn feasible(&mut self, deadline: u64) -> bool {
        self.feasible_from(&State::start(self.n), deadline)
    }

    fn feasible_from(&mut self, s: &State, r: u64) -> bool {
        if s.pending.last().is_some_and(|&p| p > r) {
            return false;
        }
        if s.left == 0 {
            return true;
        }
        let key = (s.clone(), r);
        if let Some(&v) = self.feasible_memo.get(&key) {
            return v;
        }
        let mut ok = false;
        for k in (0..=s.idle.min(s.left)).rev() {
            let next = s.send(k, self.rules);
            if next.pending.last().is_some_and(|&p| p > r) {
                continue;
            }
            if next.left == 0 {
                ok = true;
                break;
            }
            let Some(d) = next.delta() else { continue };
            if d <= r && self.feasible_from(&next.advance(d), r - d) {
                ok = true;
                break;
            }
        }
        self.feasible_memo.insert(key, ok);
        ok
    }

    /// The least makespan over all schedules (ticks).
    pub(crate) fn min_makespan(&mut self) -> u64 {
        (0..)
            .find(|&t| self.feasible(t))
            .expect("some deadline is feasible")
    }

    /// The least sum of information times over all schedules (ticks; the root's 0 included).
    pub(crate) fn min_sum(&mut self) -> u64 {
        // Any schedule with a smaller sum than the star (the root sends to everyone, one send
        // per step) has every information time, hence its makespan, at most that sum: searching
        // within this horizon is exhaustive for the minimum sum.
        let n = self.n as u64;
        let star = if n <= 1 {
            0
        } else {
            (n - 1) * self.rules.latency + self.rules.step * (n - 1) * (n - 2) / 2
        };
        self.sum_from(&State::start(self.n), star)
            .expect("the star fits its own horizon")
    }

    fn sum_from(&mut self, s: &State, h: u64) -> Option<u64> {
        if s.pending.last().is_some_and(|&p| p > h) {
            return None;
        }
        if s.left == 0 {
            return Some(s.pending.iter().sum());
        }
        let key = (s.clone(), h);
        if let Some(&v) = self.sum_memo.get(&key) {
            return v;
        }
        let mut best: Option<u64> = None;
        for k in 0..=s.idle.min(s.left) {
            let next = s.send(k, self.rules);
            if next.pending.last().is_some_and(|&p| p > h) {
                continue;
            }
            let cost = if next.left == 0 {
                Some(next.pending.iter().sum())
            } else {
                let Some(d) = next.delta() else { continue };
                if d > h {
                    continue;
                }
                // every processor not yet informed is informed at least `d` ticks from now
                let waiting = u64::from(next.left) + next.pending.len() as u64;
                self.sum_from(&next.advance(d), h - d)
                    .map(|c| c + d * waiting)
            };
            if let Some(c) = cost {
                best = Some(best.map_or(c, |b: u64| b.min(c)));
            }
        }
        self.sum_memo.insert(key, best);
        best
    }
}

/// `N(t)` for `t = 0 ..= t_max` ticks: the number of processors a broadcast can have informed by
/// time `t` when every informed processor sends every `step` ticks and each receiver is informed
/// `latency` ticks after the send starts (the universal tree of both papers, counted by splitting
/// off the root's first child: what remains is the same tree shifted by one `step`).
///
/// Saturates at `u128::MAX`.
pub(crate) fn tree_counts(step: u64, latency: u64, t_max: u64) -> Vec<u128> {
    assert!(step >= 1 && latency >= 1);
    let mut n: Vec<u128> = Vec::with_capacity(t_max as usize + 1);
    for t in 0..=t_max {
        let v = if t < latency {
            1
        } else {
            let rest = if t >= step { n[(t - step) as usize] } else { 1 };
            rest.saturating_add(n[(t - latency) as usize])
        };
        n.push(v);
    }
    n
}

/// The least `t` with `counts[t] ≥ p` (the optimal broadcast time for `p` processors), if the
/// table reaches it.
pub(crate) fn first_reaching(counts: &[u128], p: u128) -> Option<u64> {
    let i = counts.partition_point(|&c| c < p);
    (i < counts.len()).then_some(i as u64)
}
