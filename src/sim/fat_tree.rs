//! The ideal fat-tree checker and value evaluator (Bilardi et al.; rules in
//! [`FatTree`](crate::model::FatTree)'s docs).
//!
//! # Rules, exactly
//!
//! `n` (a power of two) leaves; a send `{at: t, from: s, to: d}` with `h` = the bit length of
//! `s XOR d` (the height of the lowest common ancestor):
//!
//! 1. occupies, during step `t + j` (`j = 0 … h − 1`), the **up** channel of the node of height
//!    `j` above `s` (the subtree of `2^j` leaves containing `s`);
//! 2. occupies, during step `t + h + i` (`i = 0 … h − 1`), the **down** channel of the node of
//!    height `h − 1 − i` above `d`;
//! 3. delivers at `t + 2h`: `d` holds the payload from then, and may forward it in a send starting
//!    at that step (`Rule::Causality` otherwise);
//! 4. no channel carries more than `w(2^j)` messages in one step, `2^j` the size of its subtree
//!    (`Rule::ChannelCapacity`). With `w(1) = 1`, the leaf channels make "at most one send and one
//!    arrival per processor per step" part of this rule;
//! 5. the collective's finishing rule, as in the generic checker (every processor holds every
//!    block; for reduce/allreduce/prefix, the contribution sets, with each message carrying the
//!    sender's set at the send's start and merged at its arrival).
//!
//! The channel scan sweeps the steps in order with the messages in flight, so it costs
//! `O(Σ 2h) = O(sends · log n)` time and `O(n)` memory beyond the schedule; broadcasts keep the
//! first arrival of each (processor, block) (8 bytes each).

use super::values::{Operands, Span, ValueError};
use super::{CheckError, CheckOptions, Report, Rule, Tally};
use crate::model::FatTree;
use crate::schedule::{Collective, Schedule, Transfer};
use crate::time::{Ticks, TimeBase, TimeError};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

mod values;
pub use values::evaluate;
use values::tiling;

/// Largest `n · payloads` table a broadcast check keeps.
const MAX_TABLE: u64 = 1 << 27;

/// Checks `schedule` on the ideal fat-tree `tree` (module docs).
///
/// # Errors
/// [`CheckError::Model`] if `n` is not a power of two; [`CheckError::TooLarge`] beyond
/// `2^27` (processor, payload) pairs, or `n > 4096` for combining collectives.
pub(crate) fn check(
    schedule: &Schedule,
    tree: &FatTree,
    options: CheckOptions,
) -> Result<Report, CheckError> {
    let n = schedule.n();
    tree.validate(n)?;
    if schedule.base() != TimeBase::UNIT {
        return Err(CheckError::TooLarge(
            "fat-tree schedules are in whole steps (tick base 1)".into(),
        ));
    }
    if options.queue_arrivals {
        return Err(CheckError::Unsupported(
            "the fat-tree's rounds have no queued arrivals".into(),
        ));
    }
    let collective = schedule.collective();
    let mut c = FtChecker {
        schedule,
        tree,
        tally: Tally::default(),
    };
    let sends = c.valid_sends();
    c.channels(&sends)?;
    let pieces = collective.is_combining() && schedule.sends().any(|s| s.what != 0);
    let (makespan, completion) = if pieces {
        c.pieces(&sends)?
    } else if collective.is_combining() {
        c.contributions(&sends)?
    } else {
        c.holdings(&sends)?
    };
    let lower_bound = Some(super::bounds::lower_bound(
        tree,
        &collective,
        n,
        TimeBase::UNIT,
    )?);
    let busy_until = schedule
        .sends()
        .filter(|x| x.to < n)
        .map(|x| x.at + tree.latency(x.from, x.to))
        .max()
        .unwrap_or(0);
    Ok(Report {
        base: TimeBase::UNIT,
        collective,
        n,
        sends: schedule.len(),
        makespan,
        busy_until,
        queued: false,
        completion: options.completion.then_some(completion),
        lower_bound,
        violations: c.tally.listed,
        violation_count: c.tally.count,
    })
}

/// Working state.
struct FtChecker<'a> {
    /// The schedule.
    schedule: &'a Schedule,
    /// The model.
    tree: &'a FatTree,
    /// The violations found.
    tally: Tally,
}

impl FtChecker<'_> {
    /// Records a violation.
    fn flag(&mut self, rule: Rule, at: Ticks, p: u32, send: Option<Transfer>, detail: String) {
        self.tally.flag(rule, at, p, send, detail);
    }

    /// The sends with a real receiver and payload, in time order; flags the others.
    fn valid_sends(&mut self) -> Vec<Transfer> {
        let n = self.schedule.n();
        let width = self.schedule.collective().what_count(n);
        let mut out = Vec::with_capacity(self.schedule.len());
        for s in self.schedule.sends() {
            let rule = if s.to >= n {
                Rule::BadReceiver
            } else if s.to == s.from {
                Rule::SelfSend
            } else if width > 0 && u64::from(s.what) >= width {
                Rule::BadPayload
            } else {
                out.push(s);
                continue;
            };
            let detail = format!("send to {} of payload {}", s.to, s.what);
            self.flag(rule, s.at, s.from, Some(s), detail);
        }
        out.sort_by_key(|s| (s.at, s.from));
        out
    }

    /// Rule 4: channel loads per step.
    fn channels(&mut self, sends: &[Transfer]) -> Result<(), CheckError> {
        let n = self.schedule.n() as usize;
        let mut up = vec![0u32; 2 * n];
        let mut down = vec![0u32; 2 * n];
        let mut touched: Vec<(bool, u32, u32)> = Vec::new(); // (is_up, node id, height)
        let mut active: Vec<usize> = Vec::new();
        let mut next = 0;
        let mut step = 0;
        while next < sends.len() || !active.is_empty() {
            if active.is_empty() {
                step = sends[next].at;
            }
            while next < sends.len() && sends[next].at == step {
                active.push(next);
                next += 1;
            }
            for &i in &active {
                let s = sends[i];
                let h = FatTree::height(s.from, s.to);
                let j = (step - s.at) as u32;
                let (is_up, leaf, height) = if j < h {
                    (true, s.from, j)
                } else {
                    (false, s.to, 2 * h - 1 - j)
                };
                let id = (n >> height) + (leaf as usize >> height);
                let load = if is_up { &mut up[id] } else { &mut down[id] };
                if *load == 0 {
                    touched.push((is_up, id as u32, height));
                }
                *load += 1;
            }
            for &(is_up, id, height) in &touched {
                let load = if is_up {
                    up[id as usize]
                } else {
                    down[id as usize]
                };
                let cap = self.tree.w(1u64 << height);
                if u64::from(load) > cap {
                    let first = (id as usize - (n >> height)) << height;
                    let dir = if is_up { "up" } else { "down" };
                    let detail = format!(
                        "{dir} channel of leaves {first}..{} carries {load} messages, capacity {cap}",
                        first + (1 << height)
                    );
                    self.flag(Rule::ChannelCapacity, step, first as u32, None, detail);
                }
            }
            for (is_up, id, _) in touched.drain(..) {
                if is_up {
                    up[id as usize] = 0;
                } else {
                    down[id as usize] = 0;
                }
            }
            active.retain(|&i| {
                let s = sends[i];
                s.at + 2 * u64::from(FatTree::height(s.from, s.to)) > step + 1
            });
            step = step.checked_add(1).ok_or(TimeError::Overflow)?;
        }
        Ok(())
    }

    /// Rules 3 and 5 for broadcast and all-to-all; returns the makespan and completion times.
    fn holdings(&mut self, sends: &[Transfer]) -> Result<(Ticks, Vec<Ticks>), CheckError> {
        let n = self.schedule.n();
        let collective = self.schedule.collective();
        let width = collective.what_count(n);
        if u64::from(n) * width > MAX_TABLE {
            return Err(CheckError::TooLarge(format!(
                "{n} processors × {width} payloads on the fat-tree"
            )));
        }
        let initially = |p: u32, w: u32| match collective {
            Collective::Broadcast { root, .. } => p == root,
            Collective::AllToAll { items } => w / items == p,
            _ => true,
        };
        let idx = |p: u32, w: u32| p as usize * width as usize + w as usize;
        let mut first = vec![Ticks::MAX; (u64::from(n) * width) as usize];
        for p in 0..n {
            for w in 0..width as u32 {
                if initially(p, w) {
                    first[idx(p, w)] = 0;
                }
            }
        }
        for s in sends {
            let arrival = s.at + self.tree.latency(s.from, s.to);
            let f = &mut first[idx(s.to, s.what)];
            *f = (*f).min(arrival);
        }
        for s in sends {
            let held = first[idx(s.from, s.what)];
            if held > s.at {
                let detail = if held == Ticks::MAX {
                    format!("sends payload {}, which it never receives", s.what)
                } else {
                    format!("sends payload {}, which it holds only from {held}", s.what)
                };
                self.flag(Rule::Causality, s.at, s.from, Some(*s), detail);
            }
        }
        let mut makespan = 0;
        let mut completion = vec![0; n as usize];
        for p in 0..n {
            let row = &first[idx(p, 0)..idx(p, 0) + width as usize];
            let done = row.iter().copied().max().unwrap_or(0);
            if done == Ticks::MAX {
                let missing = row.iter().position(|&t| t == Ticks::MAX).unwrap_or(0);
                let detail = format!("never receives payload {missing}");
                self.flag(Rule::Incomplete, 0, p, None, detail);
            } else {
                makespan = makespan.max(done);
            }
            completion[p as usize] = done;
        }
        Ok((makespan, completion))
    }

    /// Rule 6 (the piece rule) for combining schedules that name their runs: every processor
    /// keeps each piece it receives and its own value; a send of the run `lo ..= hi` needs pieces
    /// held at the send's start that tile it in rank order (`Rule::Causality` otherwise; a
    /// payload naming no run is `Rule::BadPayload`); at the end the collective's run (`0 ..= q`
    /// for prefix at `q`, `0 ..= n − 1` at the root or everywhere) must be tiled, its completion
    /// the earliest time a tiling's last piece arrived.
    fn pieces(&mut self, sends: &[Transfer]) -> Result<(Ticks, Vec<Ticks>), CheckError> {
        let n = self.schedule.n();
        if n > 4096 {
            return Err(CheckError::TooLarge(format!(
                "combining collectives are checked for n ≤ 4096, not {n}"
            )));
        }
        let mut store: Vec<Vec<(u32, u32, Ticks)>> = (0..n).map(|p| vec![(p, p, 0)]).collect();
        let mut pending: BinaryHeap<Reverse<(Ticks, usize, u32, u32)>> = BinaryHeap::new();
        let deliver = |upto: Option<Ticks>,
                       pending: &mut BinaryHeap<Reverse<(Ticks, usize, u32, u32)>>,
                       store: &mut Vec<Vec<(u32, u32, Ticks)>>| {
            while let Some(&Reverse((a, k, lo, hi))) = pending.peek() {
                if upto.is_some_and(|t| a > t) {
                    break;
                }
                pending.pop();
                store[sends[k].to as usize].push((lo, hi, a));
            }
        };
        for (k, s) in sends.iter().enumerate() {
            deliver(Some(s.at), &mut pending, &mut store);
            let Some((lo, hi)) = FatTree::piece_run(n, s.what) else {
                let detail = format!("payload {} names no run of ranks", s.what);
                self.flag(Rule::BadPayload, s.at, s.from, Some(*s), detail);
                continue;
            };
            if tiling(&store[s.from as usize], lo, hi).is_none() {
                let detail = format!("cannot form the run {lo}..={hi} from the pieces it holds");
                self.flag(Rule::Causality, s.at, s.from, Some(*s), detail);
                continue;
            }
            let arrival = s.at.checked_add(self.tree.latency(s.from, s.to));
            pending.push(Reverse((arrival.ok_or(TimeError::Overflow)?, k, lo, hi)));
        }
        deliver(None, &mut pending, &mut store);
        let collective = self.schedule.collective();
        let (mut makespan, mut completion) = (0, vec![0; n as usize]);
        for q in 0..n {
            let hi = match collective {
                Collective::Reduce { root } if q != root => continue,
                Collective::Prefix => q,
                _ => n - 1,
            };
            match tiling(&store[q as usize], 0, hi) {
                Some((t, _)) => {
                    makespan = makespan.max(t);
                    completion[q as usize] = t;
                }
                None => {
                    let detail = format!("cannot form the run 0..={hi} from the pieces it holds");
                    self.flag(Rule::Incomplete, 0, q, None, detail);
                }
            }
        }
        Ok((makespan, completion))
    }

    /// Rule 5 for combining collectives: contribution sets in time order.
    fn contributions(&mut self, sends: &[Transfer]) -> Result<(Ticks, Vec<Ticks>), CheckError> {
        let n = self.schedule.n() as usize;
        let (words, mut sets) = super::own_contributions(n)?;
        let mut last = vec![0 as Ticks; n];
        let mut carried: Vec<Vec<u64>> = vec![Vec::new(); sends.len()];
        let mut pending: BinaryHeap<Reverse<(Ticks, usize)>> = BinaryHeap::new();
        let mut deliver = |c: &mut Self,
                           upto: Option<Ticks>,
                           pending: &mut BinaryHeap<Reverse<(Ticks, usize)>>,
                           carried: &mut Vec<Vec<u64>>,
                           sets: &mut Vec<u64>| {
            while let Some(&Reverse((a, k))) = pending.peek() {
                if upto.is_some_and(|t| a > t) {
                    break;
                }
                pending.pop();
                let q = sends[k].to as usize;
                let bits = std::mem::take(&mut carried[k]);
                let set = &mut sets[q * words..(q + 1) * words];
                let dup = super::merge_contributions(set, &bits);
                last[q] = a;
                if let Some(x) = dup {
                    let detail = format!("receives the contribution of {x} again");
                    c.flag(Rule::DoubleCount, a, q as u32, Some(sends[k]), detail);
                }
            }
        };
        for (k, s) in sends.iter().enumerate() {
            deliver(self, Some(s.at), &mut pending, &mut carried, &mut sets);
            let p = s.from as usize;
            carried[k] = sets[p * words..(p + 1) * words].to_vec();
            pending.push(Reverse((s.at + self.tree.latency(s.from, s.to), k)));
        }
        deliver(self, None, &mut pending, &mut carried, &mut sets);
        let collective = self.schedule.collective();
        let mut makespan = 0;
        let mut completion = vec![0; n];
        for q in 0..n {
            let want = |x: usize| match collective {
                Collective::Reduce { root } => (q == root as usize).then_some(true),
                Collective::Allreduce => Some(true),
                _ => Some(x <= q),
            };
            if want(0).is_none() {
                continue;
            }
            let has = |x: usize| sets[q * words + x / 64] >> (x % 64) & 1 == 1;
            let missing = (0..n).find(|&x| want(x) == Some(true) && !has(x));
            let extra = (0..n).find(|&x| want(x) == Some(false) && has(x));
            if let Some(x) = missing {
                let detail = format!("never receives the contribution of {x}");
                self.flag(Rule::Incomplete, 0, q as u32, None, detail);
            } else if let Some(x) = extra {
                let detail = format!("ends holding the contribution of {x}");
                self.flag(Rule::ExtraContribution, last[q], q as u32, None, detail);
            } else {
                makespan = makespan.max(last[q]);
                completion[q] = last[q];
            }
        }
        Ok((makespan, completion))
    }
}
