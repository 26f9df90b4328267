//! The rule-by-rule checker.
//!
//! Event semantics, per send `s` from `p` to `q` starting at `t` (all from the model's
//! [`Timing`]): `p` busy `[t, t + send_busy)`; `q` busy `[t + latency − recv_busy, t + latency)`;
//! the payload is at `q` from `t + latency`, so `q` may forward it in a send starting at exactly
//! that tick; in transit `[t + transit.0, t + transit.1)`.
//!
//! Ports (`Timing::ports = k`, the k-port model): a processor's send intervals may overlap `k` at
//! a time, and its receive intervals likewise — the sends `i` and `i + k` (in time order) must not
//! overlap (`Rule::PortLimit`; for `k = 1` the familiar `Rule::SendOverlap`/`Rule::RecvOverlap`),
//! the gap applies between `i` and `i + k`, and two overlapping intervals must have different
//! partners (`Rule::SamePartner`). This adds O(k) work per send.
//!
//! The ideal fat-tree has no uniform timing: [`check`] hands it to `sim::fat_tree`.
//!
//! The hierarchical model ([`Hier`](crate::model::Hier)) has a [`Timing`] per pair of ranks: the
//! checker resolves each send's class (the level where its ranks meet) once, and every rule
//! above reads the timing of the send it concerns — the earlier of two consecutive sends or
//! receives for spacing, receives ordered by their receive start (for a uniform timing that is
//! the send order). In-flight capacity is swept over transit intervals of any lengths; boundary
//! capacities (`Rule::ChannelCapacity`) are swept per boundary. With one class this is exactly
//! the uniform check.
//!
//! The check runs in O(sends + n·payloads) time: sends are already grouped by sender in time
//! order; a stable counting sort groups them by receiver. Memory beyond the schedule is 4 bytes
//! per send and 4 per processor (plus 8 per processor if completion times are requested).
//! Combining collectives are checked with contribution sets in global time order (n ≤ 4096).

use super::{CheckError, Report, Rule, Tally};
use crate::model::{CostModel, PairTiming, Timing};
use crate::schedule::{Collective, Schedule, Transfer};
use crate::time::{Ticks, TimeBase, TimeError};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

mod rules;

/// What a check computes beyond legality and makespan, and which arrival rule it applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckOptions {
    /// Keep each processor's completion time in the report (8 bytes per processor).
    pub completion: bool,
    /// Queue arrivals (LogGOPSim's rule) instead of calling them illegal: a message that arrives
    /// while its receiver's CPU is busy waits, and the receive overhead starts at the first
    /// instant `≥` the arrival at which it fits between the receiver's sends (as given) and one
    /// receive step after the previous receive; messages are received in arrival order (ties:
    /// sender, then send order) and the payload is available when the overhead ends. Uniform
    /// one-port rules and non-combining collectives only ([`CheckError::Unsupported`]).
    pub queue_arrivals: bool,
}

/// Checks `schedule` under `model` (see the module docs of `sim`), keeping completion times.
///
/// # Errors
/// [`CheckError`] when the check cannot run (model parameters, time overflow, too large);
/// broken rules are not errors but [`Violation`](super::Violation)s in the report.
///
/// # Examples
///
/// ```
/// use herald::{check, Collective, Model, Postal, Schedule, sim::Rule, time::TimeBase};
/// let model = Model::from(Postal::new("2".parse()?)?);
/// let mut b = Schedule::builder(3, Collective::Broadcast { root: 0, blocks: 1 }, TimeBase::UNIT)?;
/// b.push(0, 0, 1, 0);
/// b.push(1, 1, 2, 0); // 1 holds the block only from time 2
/// let report = check(&b.build()?, &model)?;
/// assert!(!report.legal());
/// assert!(report.breaks(Rule::Causality));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check(schedule: &Schedule, model: &dyn CostModel) -> Result<Report, CheckError> {
    let options = CheckOptions {
        completion: true,
        ..CheckOptions::default()
    };
    check_with(schedule, model, options)
}

/// Checks `schedule` under `model` with the given options.
///
/// # Errors
/// As [`check`].
pub fn check_with(
    schedule: &Schedule,
    model: &dyn CostModel,
    options: CheckOptions,
) -> Result<Report, CheckError> {
    if let Some(tree) = model.fat_tree() {
        return super::fat_tree::check(schedule, tree, options);
    }
    let base = schedule
        .base()
        .refine(model.time_base()?.ticks_per_unit())?;
    let collective = schedule.collective();
    let n = schedule.n();
    let fold = |t: Timing| {
        if collective.is_combining() {
            t.combining()
        } else {
            t
        }
    };
    let (timing, pairs) = match model.hierarchical() {
        Some(h) => {
            let rules = h.pair_timing(n, base)?;
            let table: Vec<Timing> = (0..rules.classes())
                .map(|c| fold(rules.timing(c)))
                .collect();
            (table[0], Some(Pairs::new(schedule, rules, table)))
        }
        None => (fold(model.timing(base)?), None),
    };
    let single = [timing];
    let timings = pairs.as_ref().map_or(&single[..], |p| &p.table[..]);
    if timings.iter().any(|t| t.latency == 0) {
        return Err(CheckError::Time(TimeError::Overflow));
    }
    if options.queue_arrivals && (pairs.is_some() || timing.ports > 1 || collective.is_combining())
    {
        return Err(CheckError::Unsupported(
            "queued arrivals are checked under uniform one-port rules, for broadcast and \
             all-to-all"
                .into(),
        ));
    }
    let scale = base.ticks_per_unit() / schedule.base().ticks_per_unit();
    let mut state = Checker {
        schedule,
        timing,
        pairs,
        scale,
        width: collective.what_count(n),
        queue: options.queue_arrivals,
        busy_until: 0,
        tally: Tally::default(),
    };
    let (makespan, completion) = state.run(options)?;
    state.check_boundaries()?;
    let lower_bound = Some(super::bounds::lower_bound(model, &collective, n, base)?);
    Ok(Report {
        base,
        collective,
        n,
        sends: schedule.len(),
        makespan,
        busy_until: state.busy_until,
        queued: options.queue_arrivals,
        completion,
        lower_bound,
        violations: state.tally.listed,
        violation_count: state.tally.count,
    })
}

/// Per-pair rules (hierarchical models): each send's class and the timing of each class.
struct Pairs {
    /// The model's per-pair rules.
    rules: PairTiming,
    /// Timing per class, folded for combining collectives.
    table: Vec<Timing>,
    /// The class of each send (0 for a send to an invalid receiver).
    class: Vec<u8>,
}

impl Pairs {
    fn new(schedule: &Schedule, rules: PairTiming, table: Vec<Timing>) -> Pairs {
        let (offsets, _, to, _) = schedule.columns();
        let n = schedule.n();
        let mut class = vec![0u8; schedule.len()];
        for p in 0..n {
            for i in offsets[p as usize] as usize..offsets[p as usize + 1] as usize {
                if to[i] < n {
                    class[i] = u8::try_from(rules.class(p, to[i])).unwrap_or(u8::MAX);
                }
            }
        }
        Pairs {
            rules,
            table,
            class,
        }
    }
}

/// Working state of one check.
struct Checker<'a> {
    /// The schedule under check.
    schedule: &'a Schedule,
    /// The model's rules in the report's base (for a hierarchical model, class 0's: the
    /// family-wide flags `shared_cpu` and `ports` are the same in every class).
    timing: Timing,
    /// Per-pair rules, for a hierarchical model.
    pairs: Option<Pairs>,
    /// Report ticks per schedule tick.
    scale: u64,
    /// Distinct payloads (blocks, items); 0 for combining collectives.
    width: u64,
    /// Whether arrivals queue ([`CheckOptions::queue_arrivals`]).
    queue: bool,
    /// The end of the last send or receive so far.
    busy_until: Ticks,
    /// The violations found.
    tally: Tally,
}

impl Checker<'_> {
    /// Records a violation.
    fn flag(&mut self, rule: Rule, at: Ticks, p: u32, send: Option<Transfer>, detail: String) {
        self.tally.flag(rule, at, p, send, detail);
    }

    /// Start of send `i` in report ticks.
    #[inline]
    fn at(&self, i: usize) -> Result<Ticks, TimeError> {
        let (_, at, _, _) = self.schedule.columns();
        at[i].checked_mul(self.scale).ok_or(TimeError::Overflow)
    }

    /// The timing of send `i`.
    #[inline]
    fn tm(&self, i: usize) -> &Timing {
        match &self.pairs {
            None => &self.timing,
            Some(p) => &p.table[p.class[i] as usize],
        }
    }

    /// When send `i`'s receive starts, in report ticks.
    #[inline]
    fn recv_start(&self, i: usize) -> Result<Ticks, TimeError> {
        let t = self.tm(i);
        crate::time::add(self.at(i)?, t.latency - t.recv_busy)
    }

    /// Send `i` with its time in report ticks.
    fn send(&self, i: usize, from: u32) -> Transfer {
        let (_, at, to, what) = self.schedule.columns();
        Transfer {
            at: at[i].saturating_mul(self.scale),
            from,
            to: to[i],
            what: what[i],
        }
    }

    /// Whether send `i` from `p` names a real receiver and payload; flags it otherwise.
    fn valid(&mut self, i: usize, p: u32) -> Result<bool, TimeError> {
        let (_, _, to, what) = self.schedule.columns();
        let n = self.schedule.n();
        let rule = if to[i] >= n {
            Rule::BadReceiver
        } else if to[i] == p {
            Rule::SelfSend
        } else if self.width > 0 && u64::from(what[i]) >= self.width {
            Rule::BadPayload
        } else {
            return Ok(true);
        };
        let at = self.at(i)?;
        let s = self.send(i, p);
        self.flag(
            rule,
            at,
            p,
            Some(s),
            format!("send to {} of payload {}", s.to, s.what),
        );
        Ok(false)
    }

    /// Whether `p` holds payload `w` at time 0.
    fn initially(&self, p: u32, w: u32) -> bool {
        match self.schedule.collective() {
            Collective::Broadcast { root, .. } => p == root,
            Collective::AllToAll { items } => w / items == p,
            _ => true,
        }
    }

    /// Payloads `p` must receive to finish (non-combining collectives).
    fn needed(&self, p: u32) -> u64 {
        match self.schedule.collective() {
            Collective::Broadcast { root, blocks } => {
                if p == root {
                    0
                } else {
                    u64::from(blocks)
                }
            }
            Collective::AllToAll { items } => {
                u64::from(items) * u64::from(self.schedule.n().saturating_sub(1))
            }
            _ => 0,
        }
    }

    /// The whole check; returns the makespan and (optionally) completion times.
    fn run(&mut self, options: CheckOptions) -> Result<(Ticks, Option<Vec<Ticks>>), CheckError> {
        let n = self.schedule.n();
        let (offsets, _, to, _) = self.schedule.columns();
        // Validity first (flags bad receivers and payloads), then group valid sends by receiver.
        let mut in_offsets = vec![0u32; n as usize + 1];
        let mut valid = vec![0u64; self.schedule.len().div_ceil(64)];
        for p in 0..n {
            for i in offsets[p as usize] as usize..offsets[p as usize + 1] as usize {
                if self.valid(i, p)? {
                    valid[i / 64] |= 1 << (i % 64);
                    in_offsets[to[i] as usize + 1] += 1;
                }
            }
        }
        for q in 0..n as usize {
            in_offsets[q + 1] += in_offsets[q];
        }
        // Fill using in_offsets[q] as q's cursor (it ends at q's end = (q + 1)'s start), then
        // shift back: no second offsets array.
        let mut by_receiver = vec![0u32; in_offsets[n as usize] as usize];
        for i in 0..self.schedule.len() {
            if valid[i / 64] >> (i % 64) & 1 == 1 {
                let q = to[i] as usize;
                by_receiver[in_offsets[q] as usize] = i as u32;
                in_offsets[q] += 1;
            }
        }
        in_offsets.copy_within(0..n as usize, 1);
        in_offsets[0] = 0;
        let (_, at_col, _, _) = self.schedule.columns();
        for q in 0..n as usize {
            let seg = &mut by_receiver[in_offsets[q] as usize..in_offsets[q + 1] as usize];
            if self.pairs.is_some() {
                // receives in order of their receive starts (latencies differ per pair)
                let mut keyed = seg
                    .iter()
                    .map(|&i| Ok((self.recv_start(i as usize)?, i)))
                    .collect::<Result<Vec<(Ticks, u32)>, TimeError>>()?;
                keyed.sort_unstable();
                for (slot, (_, i)) in seg.iter_mut().zip(keyed) {
                    *slot = i;
                }
            } else if !seg.is_sorted_by_key(|&i| (at_col[i as usize], i)) {
                seg.sort_unstable_by_key(|&i| (at_col[i as usize], i));
            }
        }
        let mut completion = options.completion.then(|| vec![Ticks::MAX; n as usize]);
        let mut makespan = 0;
        let mut first = vec![
            Ticks::MAX;
            if self.width > 0 {
                self.width as usize
            } else {
                0
            }
        ];
        let mut touched: Vec<u32> = Vec::new();
        let mut queued: Vec<Ticks> = Vec::new();
        let combining = self.schedule.collective().is_combining();
        for p in 0..n {
            let recvs =
                &by_receiver[in_offsets[p as usize] as usize..in_offsets[p as usize + 1] as usize];
            if self.queue {
                self.queue_receives(p, recvs, &mut queued)?;
            }
            self.check_receives(p, recvs)?;
            for (k, &r) in recvs.iter().enumerate() {
                let r = r as usize;
                let arrival = if self.queue {
                    crate::time::add(queued[k], self.timing.recv_busy)?
                } else {
                    crate::time::add(self.at(r)?, self.tm(r).latency)?
                };
                self.busy_until = self.busy_until.max(arrival);
                if !combining {
                    let w = self.schedule.columns().3[r] as usize;
                    if first[w] == Ticks::MAX {
                        touched.push(w as u32);
                    }
                    first[w] = first[w].min(arrival);
                }
            }
            self.check_sends(p, recvs, &first, &valid)?;
            if !combining {
                let done = self.finish(p, &first, &touched);
                if done != Ticks::MAX {
                    makespan = makespan.max(done);
                }
                if let Some(c) = completion.as_mut() {
                    c[p as usize] = done;
                }
                for &w in &touched {
                    first[w as usize] = Ticks::MAX;
                }
                touched.clear();
            }
        }
        if combining {
            drop(by_receiver);
            makespan = self.check_contributions(&valid, completion.as_deref_mut())?;
        }
        Ok((makespan, completion))
    }

    /// When `p` holds all it needs (`Ticks::MAX`: never; flags the first missing payload).
    fn finish(&mut self, p: u32, first: &[Ticks], touched: &[u32]) -> Ticks {
        let needed = self.needed(p);
        let got = touched.iter().filter(|&&w| !self.initially(p, w)).count() as u64;
        if got == needed {
            return touched
                .iter()
                .filter(|&&w| !self.initially(p, w))
                .map(|&w| first[w as usize])
                .max()
                .unwrap_or(0);
        }
        let missing = (0..self.width as u32)
            .find(|&w| !self.initially(p, w) && first[w as usize] == Ticks::MAX)
            .unwrap_or(0);
        let more = needed - got;
        self.flag(
            Rule::Incomplete,
            0,
            p,
            None,
            format!("never receives payload {missing} ({more} missing in all)"),
        );
        Ticks::MAX
    }

    /// The receive starts of `p`'s messages `recvs` (in arrival order) under queued arrivals
    /// ([`CheckOptions::queue_arrivals`]), into `out`.
    fn queue_receives(
        &self,
        p: u32,
        recvs: &[u32],
        out: &mut Vec<Ticks>,
    ) -> Result<(), CheckError> {
        out.clear();
        let t = self.timing;
        let sends = self.schedule.range(p);
        let mut k = sends.start;
        let mut next = 0; // one receive step after the previous receive
        for &r in recvs {
            let mut start = self.recv_start(r as usize)?.max(next);
            if t.shared_cpu && t.recv_busy > 0 && t.send_busy > 0 {
                loop {
                    while k < sends.end && self.at(k)? + t.send_busy <= start {
                        k += 1;
                    }
                    if k < sends.end && self.at(k)? < crate::time::add(start, t.recv_busy)? {
                        start = self.at(k)? + t.send_busy; // wait for this send to end
                    } else {
                        break;
                    }
                }
            }
            out.push(start);
            next = crate::time::add(start, t.recv_step())?;
        }
        Ok(())
    }

    /// Gap, overlap and capacity rules on `p`'s receives (sorted by time); under queued arrivals
    /// only capacity (the queue spaces the receives).
    fn check_receives(&mut self, p: u32, recvs: &[u32]) -> Result<(), CheckError> {
        if self.queue {
            if self.capacity_binds(self.timing.recv_gap) {
                self.check_capacity(p, recvs, Rule::CapacityIn)?;
            }
            return Ok(());
        }
        let mut spacing_broken = false;
        let ports = self.timing.ports.max(1) as usize;
        if ports > 1 {
            self.check_partners(p, recvs, true)?;
        }
        for pair in recvs.windows(ports + 1) {
            let (a, b) = (pair[0] as usize, pair[ports] as usize);
            let t = *self.tm(a);
            let (ra, rb) = (self.recv_start(a)?, self.recv_start(b)?);
            let d = rb - ra;
            let rule = if d < t.recv_busy && ports > 1 {
                Rule::PortLimit
            } else if d < t.recv_busy {
                Rule::RecvOverlap
            } else if d < t.recv_gap {
                Rule::RecvGap
            } else {
                continue;
            };
            spacing_broken = true;
            let from = self.sender_of(b);
            let s = self.send(b, from);
            let other = self.sender_of(a);
            let detail = if ports > 1 {
                format!(
                    "receive from {other} starts {} earlier, {ports} receives between",
                    self.fmt(d)
                )
            } else {
                format!("receive from {other} starts {} earlier", self.fmt(d))
            };
            self.flag(rule, rb, p, Some(s), detail);
        }
        if spacing_broken || self.capacity_binds(self.timing.recv_gap) {
            self.check_capacity(p, recvs, Rule::CapacityIn)?;
        }
        Ok(())
    }

    /// Whether messages `gap` apart can exceed the capacity. If not, a capacity violation
    /// implies a gap violation on the same processor, so the capacity scan runs only there:
    /// with starts `gap` apart and transit intervals of equal length `len`, at most
    /// `⌈len / gap⌉` are in transit at once.
    fn capacity_binds(&self, gap: Ticks) -> bool {
        if let Some(pairs) = &self.pairs {
            return pairs
                .table
                .iter()
                .any(|t| t.capacity.is_some() && t.transit.1 > t.transit.0);
        }
        let Some(cap) = self.timing.capacity else {
            return false;
        };
        let len = self.timing.transit.1 - self.timing.transit.0;
        len > 0 && (gap == 0 || len.div_ceil(gap) > u64::from(cap))
    }

    /// The sender of send `i` (binary search in the offsets).
    fn sender_of(&self, i: usize) -> u32 {
        let (offsets, ..) = self.schedule.columns();
        (offsets.partition_point(|&o| o as usize <= i) - 1) as u32
    }

    /// Formats ticks exactly.
    fn fmt(&self, t: Ticks) -> String {
        TimeBase::format(self.base(), t)
    }

    /// The report's base.
    fn base(&self) -> TimeBase {
        self.timing.base
    }
}
