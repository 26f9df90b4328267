//! The checker's rules, one method each: in-flight and boundary capacity, distinct partners, send gaps and overheads, contributions, arrivals.

use super::*;

impl Checker<'_> {
    /// In-flight capacity on the sends `ids` (sorted by time): at the start of each message's
    /// transit, the messages in transit (itself included) number at most the least capacity
    /// among them (for a uniform timing: at most `capacity` in transit at any instant).
    pub(super) fn check_capacity(
        &mut self,
        p: u32,
        ids: &[u32],
        rule: Rule,
    ) -> Result<(), CheckError> {
        let mut spans: Vec<(Ticks, Ticks, u32, u32)> = Vec::with_capacity(ids.len());
        for &i in ids {
            let t = *self.tm(i as usize);
            if t.transit.1 == t.transit.0 {
                continue; // never in transit
            }
            let at = self.at(i as usize)?;
            let cap = t.capacity.unwrap_or(u32::MAX);
            spans.push((at + t.transit.0, at + t.transit.1, cap, i));
        }
        if spans.iter().all(|s| s.2 == u32::MAX) {
            return Ok(());
        }
        if self.pairs.is_some() {
            spans.sort_unstable(); // transit offsets differ per pair
        }
        let mut active: BinaryHeap<Reverse<(Ticks, u32)>> = BinaryHeap::new();
        for (start, end, cap, i) in spans {
            while active.peek().is_some_and(|Reverse((e, _))| *e <= start) {
                active.pop();
            }
            active.push(Reverse((end, cap)));
            let least = active.iter().map(|Reverse((_, c))| *c).min().unwrap_or(cap);
            if active.len() > least as usize {
                let i = i as usize;
                let s = self.send(i, self.sender_of(i));
                let detail = format!("{} messages in transit, capacity {least}", active.len());
                self.flag(rule, start, p, Some(s), detail);
            }
        }
        Ok(())
    }

    /// Boundary capacities of a hierarchical model (rule 6 of `Hier`): per boundary and
    /// direction, at each message's start, the messages crossing it number at most its capacity.
    pub(super) fn check_boundaries(&mut self) -> Result<(), CheckError> {
        let Some(pairs) = &self.pairs else {
            return Ok(());
        };
        if !pairs.rules.has_boundaries() {
            return Ok(());
        }
        let (_, _, to, _) = self.schedule.columns();
        let n = self.schedule.n();
        let mut spans: Vec<(u64, Ticks, Ticks, u32, u32, u32)> = Vec::new();
        let mut crossings = Vec::new();
        for p in 0..n {
            for i in self.schedule.range(p) {
                if to[i] >= n || to[i] == p {
                    continue;
                }
                let c = pairs.class[i] as usize;
                pairs.rules.crossings(p, to[i], c, &mut crossings);
                let at = self.at(i)?;
                let end = crate::time::add(at, pairs.table[c].latency)?;
                for &(key, cap) in &crossings {
                    spans.push((key, at, end, cap, i as u32, p));
                }
            }
        }
        spans.sort_unstable();
        let mut found = Vec::new();
        let mut active: BinaryHeap<Reverse<Ticks>> = BinaryHeap::new();
        for (k, &(key, start, end, cap, i, p)) in spans.iter().enumerate() {
            if k == 0 || spans[k - 1].0 != key {
                active.clear();
            }
            while active.peek().is_some_and(|Reverse(e)| *e <= start) {
                active.pop();
            }
            active.push(Reverse(end));
            if active.len() > cap as usize {
                let who = if key & 1 == 1 { to[i as usize] } else { p };
                let detail = format!(
                    "{} messages cross {} at once, capacity {cap}",
                    active.len(),
                    pairs.rules.describe(key)
                );
                found.push((start, who, i as usize, p, detail));
            }
        }
        for (start, who, i, p, detail) in found {
            let s = self.send(i, p);
            self.flag(Rule::ChannelCapacity, start, who, Some(s), detail);
        }
        Ok(())
    }

    /// Distinct partners (ports > 1): no two overlapping intervals of `p` — receives
    /// (`incoming`) or sends — with the same partner. `ids` are sorted by start; intervals have
    /// equal length, so only the `ports − 1` predecessors can overlap in a legal schedule (more
    /// is a port-limit violation, flagged elsewhere).
    pub(super) fn check_partners(
        &mut self,
        p: u32,
        ids: &[u32],
        incoming: bool,
    ) -> Result<(), CheckError> {
        let t = self.timing;
        let (len, offset) = if incoming {
            (t.recv_busy, t.latency - t.recv_busy)
        } else {
            (t.send_busy, 0)
        };
        if len == 0 {
            return Ok(());
        }
        let ports = t.ports.max(1) as usize;
        let partner = |c: &Self, i: usize| {
            if incoming {
                c.sender_of(i)
            } else {
                c.schedule.columns().2[i]
            }
        };
        for b in 1..ids.len() {
            let ib = ids[b] as usize;
            let tb = self.at(ib)?;
            let who = partner(self, ib);
            for a in (b.saturating_sub(ports - 1)..b).rev() {
                let ia = ids[a] as usize;
                if tb - self.at(ia)? >= len {
                    break;
                }
                if partner(self, ia) == who {
                    let from = if incoming { who } else { p };
                    let s = self.send(ib, from);
                    let detail = if incoming {
                        format!("receives twice at once from {who}")
                    } else {
                        format!("sends twice at once to {who}")
                    };
                    self.flag(Rule::SamePartner, tb + offset, p, Some(s), detail);
                    break;
                }
            }
        }
        Ok(())
    }

    /// Gap, overlap, causality, CPU-sharing and capacity rules on `p`'s sends.
    pub(super) fn check_sends(
        &mut self,
        p: u32,
        recvs: &[u32],
        first: &[Ticks],
        valid: &[u64],
    ) -> Result<(), CheckError> {
        let range = self.schedule.range(p);
        let is_valid = |i: usize| valid[i / 64] >> (i % 64) & 1 == 1;
        let ports = self.timing.ports.max(1) as usize;
        // the receive with the latest end among those starting before the current send ends
        let mut latest: Option<(Ticks, usize)> = None;
        if ports > 1 {
            let ids: Vec<u32> = range.clone().map(|i| i as u32).collect();
            self.check_partners(p, &ids, false)?;
        }
        let start = range.start;
        let mut j = 0; // receives starting before the current send ends
        let mut spacing_broken = false;
        for i in range {
            let at = self.at(i)?;
            if i >= start + ports {
                let t = *self.tm(i - ports);
                let d = at - self.at(i - ports)?;
                let rule = if d < t.send_busy && ports > 1 {
                    Some(Rule::PortLimit)
                } else if d < t.send_busy {
                    Some(Rule::SendOverlap)
                } else if d < t.send_gap {
                    Some(Rule::SendGap)
                } else {
                    None
                };
                if let Some(rule) = rule {
                    spacing_broken = true;
                    let s = self.send(i, p);
                    self.flag(
                        rule,
                        at,
                        p,
                        Some(s),
                        if ports > 1 {
                            format!("send {ports} before starts {} earlier", self.fmt(d))
                        } else {
                            format!("previous send starts {} earlier", self.fmt(d))
                        },
                    );
                }
            }
            if !is_valid(i) {
                continue;
            }
            let what = self.schedule.columns().3[i];
            if self.width > 0 && !self.initially(p, what) && first[what as usize] > at {
                let s = self.send(i, p);
                let held = first[what as usize];
                let detail = if held == Ticks::MAX {
                    format!("sends payload {what}, which it never receives")
                } else {
                    format!(
                        "sends payload {what}, which it holds only from {}",
                        self.fmt(held)
                    )
                };
                self.flag(Rule::Causality, at, p, Some(s), detail);
            }
            let t = *self.tm(i);
            self.busy_until = self.busy_until.max(at + t.send_busy);
            if t.shared_cpu && t.send_busy > 0 && !self.queue {
                let end = at + t.send_busy;
                while j < recvs.len() && self.recv_start(recvs[j] as usize)? < end {
                    let r = recvs[j] as usize;
                    let tr = *self.tm(r);
                    let r_end = self.at(r)? + tr.latency;
                    if tr.recv_busy > 0 && latest.is_none_or(|(e, _)| r_end > e) {
                        latest = Some((r_end, r));
                    }
                    j += 1;
                }
                if let Some((r_end, r)) = latest {
                    if r_end > at {
                        let s = self.send(i, p);
                        let from = self.sender_of(r);
                        let detail = format!("send overhead meets the receive overhead of a message from {from} ending at {}", self.fmt(r_end));
                        self.flag(Rule::CpuOverlap, at, p, Some(s), detail);
                    }
                }
            }
        }
        if spacing_broken || self.capacity_binds(self.timing.send_gap) {
            let sent: Vec<u32> = self
                .schedule
                .range(p)
                .filter(|&i| is_valid(i))
                .map(|i| i as u32)
                .collect();
            self.check_capacity(p, &sent, Rule::CapacityOut)?;
        }
        Ok(())
    }

    /// Contribution sets in global time order (reduce, allreduce, prefix); returns the makespan.
    pub(super) fn check_contributions(
        &mut self,
        valid: &[u64],
        mut completion: Option<&mut [Ticks]>,
    ) -> Result<Ticks, CheckError> {
        let n = self.schedule.n() as usize;
        let (words, mut sets) = crate::sim::own_contributions(n)?;
        let mut last_change = vec![0 as Ticks; n];
        let mut order: Vec<(Ticks, u32, u32)> = Vec::with_capacity(self.schedule.len());
        for p in 0..n as u32 {
            for i in self.schedule.range(p) {
                if valid[i / 64] >> (i % 64) & 1 == 1 {
                    order.push((self.at(i)?, i as u32, p));
                }
            }
        }
        order.sort_unstable();
        let mut pending: BinaryHeap<Reverse<(Ticks, u32)>> = BinaryHeap::new();
        let mut carried: Vec<Vec<u64>> = vec![Vec::new(); self.schedule.len()];
        // Each send in time order, then `None`: deliver everything still in flight.
        for next in order.iter().map(Some).chain([None]) {
            while let Some(&Reverse((a, k))) = pending.peek() {
                if next.is_some_and(|&(at, _, _)| a > at) {
                    break;
                }
                pending.pop();
                self.arrive(
                    k as usize,
                    a,
                    &mut sets,
                    &mut carried,
                    &mut last_change,
                    words,
                );
            }
            let Some(&(at, i, p)) = next else { break };
            let p = p as usize;
            carried[i as usize] = sets[p * words..(p + 1) * words].to_vec();
            pending.push(Reverse((
                crate::time::add(at, self.tm(i as usize).latency)?,
                i,
            )));
        }
        let mut makespan = 0;
        let want = |q: usize, x: usize| -> Option<bool> {
            match self.schedule.collective() {
                Collective::Reduce { root } if q == root as usize => Some(true),
                Collective::Reduce { .. } => None,
                Collective::Allreduce => Some(true),
                _ => Some(x <= q), // prefix
            }
        };
        for q in 0..n {
            let mut missing = None;
            let mut extra = None;
            for x in 0..n {
                let has = sets[q * words + x / 64] >> (x % 64) & 1 == 1;
                match want(q, x) {
                    None => break,
                    Some(true) if !has => missing = missing.or(Some(x)),
                    Some(false) if has => extra = extra.or(Some(x)),
                    _ => {}
                }
            }
            if want(q, 0).is_none() {
                continue;
            }
            if let Some(x) = missing {
                self.flag(
                    Rule::Incomplete,
                    0,
                    q as u32,
                    None,
                    format!("never receives the contribution of {x}"),
                );
            } else if let Some(x) = extra {
                self.flag(
                    Rule::ExtraContribution,
                    last_change[q],
                    q as u32,
                    None,
                    format!("ends holding the contribution of {x}"),
                );
            } else {
                makespan = makespan.max(last_change[q]);
                if let Some(c) = completion.as_deref_mut() {
                    c[q] = last_change[q];
                }
            }
        }
        Ok(makespan)
    }

    /// Applies the arrival of send `k` at time `a`: union, flagging double counting.
    pub(super) fn arrive(
        &mut self,
        k: usize,
        a: Ticks,
        sets: &mut [u64],
        carried: &mut [Vec<u64>],
        last: &mut [Ticks],
        words: usize,
    ) {
        let q = self.schedule.columns().2[k] as usize;
        let bits = std::mem::take(&mut carried[k]);
        let set = &mut sets[q * words..(q + 1) * words];
        let dup = crate::sim::merge_contributions(set, &bits);
        last[q] = a;
        if let Some(x) = dup {
            let from = self.sender_of(k);
            let s = self.send(k, from);
            self.flag(
                Rule::DoubleCount,
                a,
                q as u32,
                Some(s),
                format!("receives the contribution of {x} again"),
            );
        }
    }
}
