//! The greedy multi-block schedule on the exact postal rules (beyond the paper).
//!
//! Time advances tick by tick. At every tick, after the arrivals due, every processor whose send
//! port is free and that holds a block some processor still lacks sends one block:
//! * **which block** — the rarest one it holds (fewest processors holding it or having it in
//!   flight), ties to the lowest block: new blocks leave the root at once, one after the other,
//!   and every block spreads as a tree of its own, as in a pipelined multi-tree broadcast;
//! * **to whom** — a processor that neither holds nor expects the block and whose receive port is
//!   free during the arrival's last unit, preferring the one that holds (or expects) the fewest
//!   blocks, so that every processor soon has something to forward; ties to the lowest number.
//!
//! Nothing waits that could go, so the result is legal by construction (the tests check it). Two
//! variants of the receiver tie-break (lowest or highest number) are built and the faster kept —
//! a choice made on the times the construction itself fixes, not by simulation.
//!
//! It applies to any model with postal-shaped timing (one send step = one send = one receive,
//! latency ≥ one step, send and receive ports apart, no capacity): the postal and 1-port models.

use super::super::{Collective, Schedule, ScheduleError};
use crate::model::{CostModel, Model, Timing};
use crate::time::{self, Ticks};
use std::collections::VecDeque;

/// A send `(at, from, to, block)`.
type Sent = (Ticks, u32, u32, u32);

/// The largest `n·n·m` greedy accepts (its cost is about that many steps).
const MAX_WORK: u64 = 1 << 30;

/// The greedy multi-block schedule, root 0.
pub(super) fn greedy(n: u32, m: u32, model: &Model) -> Result<Schedule, ScheduleError> {
    let not = |why: String| ScheduleError::NotApplicable {
        algorithm: "greedy".into(),
        why,
    };
    let base = model.time_base()?;
    let timing = model.timing(base)?;
    let unit = timing.send_busy;
    let postal_shaped = |t: &Timing| {
        !t.shared_cpu
            && t.capacity.is_none()
            && unit > 0
            && t.send_gap <= unit
            && t.recv_busy == unit
            && t.recv_gap <= unit
            && t.latency >= unit
    };
    if !postal_shaped(&timing) {
        return Err(not(format!(
            "greedy needs postal-shaped timing (send = receive = step, separate ports, no \
             capacity); the {} model is not",
            model.name()
        )));
    }
    let work = u64::from(n)
        .saturating_mul(u64::from(n))
        .saturating_mul(u64::from(m));
    if work > MAX_WORK {
        return Err(not(format!(
            "n²·m = {work} is beyond greedy's budget of {MAX_WORK}"
        )));
    }
    let mut best: Option<(Ticks, Vec<Sent>)> = None;
    for prefer_high in [false, true] {
        let (makespan, sends) = run(n, m, unit, timing.latency, prefer_high)?;
        if best.as_ref().is_none_or(|b| makespan < b.0) {
            best = Some((makespan, sends));
        }
    }
    let sends = best.map(|b| b.1).unwrap_or_default();
    let mut b = Schedule::builder(n, Collective::Broadcast { root: 0, blocks: m }, base)?;
    b.reserve(sends.len());
    for (t, from, to, what) in sends {
        b.push(t, from, to, what);
    }
    b.build()
}

/// One greedy construction; returns its makespan and sends `(at, from, to, block)`.
fn run(
    n: u32,
    m: u32,
    unit: Ticks,
    latency: Ticks,
    prefer_high: bool,
) -> Result<(Ticks, Vec<Sent>), ScheduleError> {
    let (nu, mu) = (n as usize, m as usize);
    // held[q·m + b]: 0 lacks, 1 expects (in flight), 2 holds
    let mut held = vec![0u8; nu * mu];
    held[..mu].fill(2);
    let mut count = vec![1u32; mu]; // processors holding or expecting each block
    let mut owned = vec![0u32; nu]; // blocks each processor holds or expects
    owned[0] = m;
    let mut send_free = vec![0 as Ticks; nu];
    let mut recv_free = vec![0 as Ticks; nu]; // earliest arrival time the receive port allows
    let mut flight: VecDeque<(Ticks, u32, u32)> = VecDeque::new();
    let mut sends = Vec::with_capacity((nu - 1) * mu);
    let total = u64::from(n) * u64::from(m);
    let mut complete = u64::from(m); // (processor, block) pairs held
    let mut makespan = 0;
    let mut t: Ticks = 0;
    let mut blocks: Vec<u32> = Vec::with_capacity(mu);
    let mut senders: Vec<(u32, u32)> = Vec::new();
    while complete < total {
        while flight.front().is_some_and(|&(a, _, _)| a <= t) {
            if let Some((a, q, b)) = flight.pop_front() {
                held[q as usize * mu + b as usize] = 2;
                complete += 1;
                makespan = makespan.max(a);
            }
        }
        let arrival = time::add(t, latency)?;
        // free senders, those with the fewest blocks to offer first (the root, which can send
        // anything, chooses last and serves what the others cannot)
        senders.clear();
        for p in 0..n {
            if send_free[p as usize] > t {
                continue;
            }
            let row = &held[p as usize * mu..(p as usize + 1) * mu];
            let useful = (0..mu).filter(|&b| row[b] == 2 && count[b] < n).count() as u32;
            if useful > 0 {
                senders.push((useful, p));
            }
        }
        senders.sort_unstable();
        for &(_, p) in &senders {
            // the blocks p holds that someone lacks, rarest first
            blocks.clear();
            let row = &held[p as usize * mu..(p as usize + 1) * mu];
            blocks.extend((0..m).filter(|&b| row[b as usize] == 2 && count[b as usize] < n));
            blocks.sort_by_key(|&b| (count[b as usize], b));
            for &b in &blocks {
                let mut choice: Option<u32> = None;
                for q in 0..n {
                    if held[q as usize * mu + b as usize] != 0 || recv_free[q as usize] > arrival {
                        continue;
                    }
                    let better = match choice {
                        None => true,
                        Some(c) => {
                            let (oq, oc) = (owned[q as usize], owned[c as usize]);
                            oq < oc || (oq == oc && prefer_high)
                        }
                    };
                    if better {
                        choice = Some(q);
                    }
                }
                if let Some(q) = choice {
                    sends.push((t, p, q, b));
                    held[q as usize * mu + b as usize] = 1;
                    count[b as usize] += 1;
                    owned[q as usize] += 1;
                    send_free[p as usize] = time::add(t, unit)?;
                    recv_free[q as usize] = time::add(arrival, unit)?;
                    flight.push_back((arrival, q, b));
                    break;
                }
            }
        }
        if complete < total {
            t = time::add(t, 1)?;
        }
    }
    Ok((makespan, sends))
}
