//! Timing from per-processor send orders: every send as early as the model's rules allow.
//!
//! Input: for each processor, the ordered list of `(receiver, what)` it sends (the "program" of
//! an event-driven algorithm such as "forward each block to your children, left to right").
//! Output: a [`Schedule`] in which each send starts at the earliest tick at which
//! 1. the sender holds what it sends,
//! 2. the sender's previous send is at least one send step (gap, busy time) earlier,
//! 3. with a shared CPU, the send overhead meets none of the sender's receive overheads,
//! 4. the receiver's receive starts at least one receive step after its previous one,
//! 5. in-transit capacity is respected at both ends.
//!
//! Sends are placed in global time order (a heap of each processor's next send), so a placement
//! never invalidates an earlier one: every earlier send started no later, and a receive that a
//! later placement causes starts at least `latency − recv_busy ≥ send_busy` after that send's
//! start. Ties are broken by processor number. The result is legal by construction; the checker
//! verifies it independently in the tests. This is also what `sim::replay` uses to re-time a
//! schedule from its send orders.

use super::{Collective, Schedule, ScheduleError};
use crate::model::Timing;
use crate::time::{self, Ticks};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Per-processor send orders in compressed form: processor `p` sends
/// `items[starts[p] .. starts[p + 1]]`, each `(to, what)`, in that order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Orders {
    /// `starts.len() == n + 1`.
    starts: Vec<u32>,
    /// `(to, what)` pairs.
    items: Vec<(u32, u32)>,
}

impl Orders {
    /// Builds orders from one closure call per processor, which pushes that processor's sends.
    ///
    /// # Errors
    /// [`ScheduleError::TooLarge`] beyond `u32::MAX` sends.
    pub fn from_fn(
        n: u32,
        mut f: impl FnMut(u32, &mut Vec<(u32, u32)>),
    ) -> Result<Orders, ScheduleError> {
        let mut starts = Vec::with_capacity(n as usize + 1);
        let mut items = Vec::new();
        starts.push(0);
        for p in 0..n {
            f(p, &mut items);
            let len = u32::try_from(items.len())
                .map_err(|_| ScheduleError::TooLarge(format!("{} sends", items.len())))?;
            starts.push(len);
        }
        Ok(Orders { starts, items })
    }

    /// The send orders of an existing schedule (each sender's sends in time order).
    pub fn of(schedule: &Schedule) -> Orders {
        let (offsets, _, to, what) = schedule.columns();
        let items = to.iter().zip(what).map(|(&t, &w)| (t, w)).collect();
        Orders {
            starts: offsets.to_vec(),
            items,
        }
    }

    /// Processor count.
    pub fn n(&self) -> u32 {
        (self.starts.len() - 1) as u32
    }

    /// Processor `p`'s order.
    pub fn of_processor(&self, p: u32) -> &[(u32, u32)] {
        &self.items[self.starts[p as usize] as usize..self.starts[p as usize + 1] as usize]
    }
}

/// What a processor holds initially, for the collectives that move data (not combining).
fn initial_holdings(collective: Collective) -> impl Fn(u32, u32) -> bool {
    move |p, what| match collective {
        Collective::Broadcast { root, .. } => p == root,
        Collective::AllToAll { items } => what / items == p,
        _ => true, // a combining send carries the sender's partial value, always held
    }
}

/// Per-processor state of the placement (kept small: a million processors are routine).
#[derive(Debug, Clone, Copy)]
struct Proc {
    /// Index of the next send in this processor's order.
    next: u32,
    /// Whether the processor's next send is in the heap.
    queued: bool,
    /// Start of the last placed send (`Ticks::MAX`: none yet).
    last_send: Ticks,
    /// Start of the last receive caused by a placed send (`Ticks::MAX`: none yet).
    last_recv: Ticks,
}

/// Rules that need per-processor lists, allocated only when the model can make them bind.
#[derive(Debug, Default)]
struct Lists {
    /// Receive intervals `[start, end)` not yet behind the processor's sends (shared CPU only).
    recvs: Vec<VecDeque<(Ticks, Ticks)>>,
    /// Transit ends of outgoing messages possibly still in flight (capacity only).
    out_flight: Vec<VecDeque<Ticks>>,
    /// Likewise for incoming messages.
    in_flight: Vec<VecDeque<Ticks>>,
}

/// Places the sends of `orders` as early as `timing` allows (for a combining collective, with
/// the combine folded into each receive: [`Timing::combining`]). See the module docs.
///
/// # Errors
/// [`ScheduleError::Deadlock`] if some processor is to send what it never receives;
/// [`ScheduleError`] for an invalid collective; time overflow.
///
/// # Examples
///
/// ```
/// use herald::{place, Collective, CostModel, Orders, Postal};
/// let postal = Postal::new("2".parse()?)?;
/// let timing = postal.timing(postal.time_base()?)?;
/// // A chain 0 → 1 → 2 of one block: 1 gets it at λ = 2 and forwards at once.
/// let orders = Orders::from_fn(3, |p, out| if p < 2 { out.push((p + 1, 0)) })?;
/// let s = place(3, Collective::Broadcast { root: 0, blocks: 1 }, &orders, &timing)?;
/// assert_eq!(s.sends_of(1).next().unwrap().at, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn place(
    n: u32,
    collective: Collective,
    orders: &Orders,
    timing: &Timing,
) -> Result<Schedule, ScheduleError> {
    let combined;
    let timing = if collective.is_combining() {
        combined = timing.combining();
        &combined
    } else {
        timing
    };
    let mut builder = Schedule::builder(n, collective, timing.base)?;
    builder.reserve(orders.items.len());
    let holds_initially = initial_holdings(collective);
    let width = collective.what_count(n).max(1);
    let slots = u64::from(n)
        .checked_mul(width)
        .filter(|&s| s <= 1 << 32)
        .ok_or_else(|| ScheduleError::TooLarge(format!("{n} processors × {width} payloads")))?;
    let combining = collective.is_combining();
    // avail[p · width + what]: when p holds `what` (MAX: not yet).
    let mut avail = vec![Ticks::MAX; if combining { 0 } else { slots as usize }];
    if !combining {
        for p in 0..n {
            for w in 0..width as u32 {
                if holds_initially(p, w) {
                    avail[(u64::from(p) * width + u64::from(w)) as usize] = 0;
                }
            }
        }
    }
    let transit_len = timing.transit.1 - timing.transit.0;
    // Capacity binds only if more than `c` messages one step apart fit in one transit time.
    let binds = |step: Ticks| {
        timing
            .capacity
            .is_some_and(|c| transit_len > 0 && transit_len.div_ceil(step.max(1)) > u64::from(c))
    };
    let mut pl = Placer {
        orders,
        timing,
        width,
        combining,
        avail,
        procs: vec![
            Proc {
                next: 0,
                queued: false,
                last_send: Ticks::MAX,
                last_recv: Ticks::MAX
            };
            n as usize
        ],
        lists: Lists {
            recvs: lists(
                n,
                timing.shared_cpu && timing.recv_busy > 0 && timing.send_busy > 0,
            ),
            out_flight: lists(n, binds(timing.send_step())),
            in_flight: lists(n, binds(timing.recv_step())),
        },
        heap: BinaryHeap::new(),
    };
    for p in 0..n {
        pl.enqueue(p)?;
    }
    while let Some(Reverse((t0, p))) = pl.heap.pop() {
        pl.procs[p as usize].queued = false;
        let (to, what) = orders.of_processor(p)[pl.procs[p as usize].next as usize];
        let t = pl.earliest_start(t0, p, to)?;
        if t > t0 {
            pl.procs[p as usize].queued = true;
            pl.heap.push(Reverse((t, p)));
            continue;
        }
        builder.push(t, p, to, what);
        pl.commit(t, p, to, what)?;
    }
    if let Some(p) =
        (0..n).find(|&p| (pl.procs[p as usize].next as usize) < orders.of_processor(p).len())
    {
        let what = orders.of_processor(p)[pl.procs[p as usize].next as usize].1;
        return Err(ScheduleError::Deadlock { processor: p, what });
    }
    builder.build()
}

/// The placement's working state.
struct Placer<'a> {
    /// What each processor sends, in order.
    orders: &'a Orders,
    /// The model's rules.
    timing: &'a Timing,
    /// Distinct payloads (at least 1).
    width: u64,
    /// Whether sends carry partial values (always held).
    combining: bool,
    /// `avail[p · width + what]`: when `p` holds `what`.
    avail: Vec<Ticks>,
    /// Per-processor scalars.
    procs: Vec<Proc>,
    /// Per-processor lists, where the model needs them.
    lists: Lists,
    /// Candidate `(start, processor)` of each processor's next send.
    heap: BinaryHeap<Reverse<(Ticks, u32)>>,
}

impl Placer<'_> {
    /// When `p` holds `w`.
    fn held(&self, p: u32, w: u32) -> Ticks {
        if self.combining {
            return 0;
        }
        let slot = u64::from(p) * self.width + u64::from(w);
        self.avail.get(slot as usize).copied().unwrap_or(Ticks::MAX)
    }

    /// Pushes `p`'s next send into the heap if `p` holds its payload (otherwise the receive
    /// that brings it re-enqueues `p`).
    fn enqueue(&mut self, p: u32) -> Result<(), ScheduleError> {
        let st = self.procs[p as usize];
        if st.queued {
            return Ok(());
        }
        let Some(&(_, what)) = self.orders.of_processor(p).get(st.next as usize) else {
            return Ok(());
        };
        let ready = self.held(p, what);
        if ready == Ticks::MAX {
            return Ok(());
        }
        let earliest = match st.last_send {
            Ticks::MAX => 0,
            t => time::add(t, self.timing.send_step())?,
        };
        self.procs[p as usize].queued = true;
        self.heap.push(Reverse((ready.max(earliest), p)));
        Ok(())
    }

    /// Records the send `p → to` of `what` at `t`.
    fn commit(&mut self, t: Ticks, p: u32, to: u32, what: u32) -> Result<(), ScheduleError> {
        let timing = self.timing;
        let arrival = time::add(t, timing.latency)?;
        let transit_end = time::add(t, timing.transit.1)?;
        let st = &mut self.procs[p as usize];
        st.next += 1;
        st.last_send = t;
        if let Some(q) = self.lists.out_flight.get_mut(p as usize) {
            q.push_back(transit_end);
        }
        if let Some(rs) = self.procs.get_mut(to as usize) {
            let start = arrival - timing.recv_busy;
            rs.last_recv = start;
            if let Some(q) = self.lists.recvs.get_mut(to as usize) {
                q.push_back((start, arrival));
            }
            if let Some(q) = self.lists.in_flight.get_mut(to as usize) {
                q.push_back(transit_end);
            }
            if !self.combining {
                let slot = (u64::from(to) * self.width + u64::from(what)) as usize;
                if let Some(a) = self.avail.get_mut(slot) {
                    *a = (*a).min(arrival);
                }
            }
            self.enqueue(to)?;
        }
        self.enqueue(p)
    }

    /// The earliest start ≥ `t` for `p`'s next send to `to` given the placements so far; `t` is
    /// at least every placed send's start. Prunes list entries that lie behind `t`.
    fn earliest_start(&mut self, mut t: Ticks, p: u32, to: u32) -> Result<Ticks, ScheduleError> {
        let timing = self.timing;
        let recv_offset = timing.latency - timing.recv_busy;
        let (tr0, cap) = (
            timing.transit.0,
            timing.capacity.map_or(usize::MAX, |c| c as usize),
        );
        loop {
            let before = t;
            if let Some(q) = self.lists.recvs.get_mut(p as usize) {
                while q.front().is_some_and(|&(_, end)| end <= t) {
                    q.pop_front();
                }
                // Receive intervals are disjoint and sorted: only the first open one can meet
                // [t, t + send_busy) before a later one does.
                if let Some(&(start, end)) = q.front() {
                    if start < time::add(t, timing.send_busy)? {
                        t = end;
                    }
                }
            }
            if let Some(q) = self.lists.out_flight.get_mut(p as usize) {
                t = t.max(free_slot(q, time::add(t, tr0)?, cap).saturating_sub(tr0));
            }
            if let Some(rs) = self.procs.get(to as usize) {
                if rs.last_recv != Ticks::MAX {
                    let need = time::add(rs.last_recv, timing.recv_step())?;
                    let start = time::add(t, recv_offset)?;
                    t += need.saturating_sub(start);
                }
                if let Some(q) = self.lists.in_flight.get_mut(to as usize) {
                    t = t.max(free_slot(q, time::add(t, tr0)?, cap).saturating_sub(tr0));
                }
            }
            if t == before {
                return Ok(t);
            }
        }
    }
}

/// Drops transit ends `≤ now` from `q`; returns when fewer than `cap` remain in transit.
fn free_slot(q: &mut VecDeque<Ticks>, now: Ticks, cap: usize) -> Ticks {
    while q.front().is_some_and(|&e| e <= now) {
        q.pop_front();
    }
    if q.len() >= cap {
        q[q.len() - cap]
    } else {
        now
    }
}

/// One empty list per processor if `on`, else none.
fn lists<T: Clone>(n: u32, on: bool) -> Vec<VecDeque<T>> {
    if on {
        vec![VecDeque::new(); n as usize]
    } else {
        Vec::new()
    }
}
