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
//!
//! Per-pair timing (the hierarchical model, `place_pairs`): each send takes its pair's timing,
//! the spacing after a send or receive is that message's step, and three more rules keep every
//! earlier placement legal although latencies differ: a receive must start at least one receive
//! step after the receiver's previous one (receives stay in placement order), must not meet the
//! receiver's last send overhead (shared CPU), and a message's transit may not start before a
//! transit already placed on the same processor (so counting at its own start suffices).
//! Boundary capacities are fitted like in-flight capacities. With one class this is exactly the
//! uniform placement.

use super::{Collective, Schedule, ScheduleError};
use crate::model::{PairTiming, Timing};
use crate::time::{self, Ticks};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

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
        let items = to.iter().enumerate().map(|(i, &t)| (t, what[i])).collect();
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
    /// Least distance from the last send's start to the next send's.
    send_step: Ticks,
    /// Least distance from the last receive's start to the next receive's.
    recv_step: Ticks,
    /// End of the last send's busy interval.
    send_end: Ticks,
}

/// A transit interval `[start, end)` with its capacity, in a capacity list.
type Span = (Ticks, Ticks, u32);

/// Rules that need per-processor lists, allocated only when the model can make them bind.
#[derive(Debug, Default)]
struct Lists {
    /// Receive intervals `[start, end)` not yet behind the processor's sends (shared CPU only).
    recvs: Vec<VecDeque<(Ticks, Ticks)>>,
    /// Transit intervals of outgoing messages possibly still in flight (capacity only).
    out_flight: Vec<Vec<Span>>,
    /// Likewise for incoming messages.
    in_flight: Vec<Vec<Span>>,
    /// Occupancy of bounded boundaries by crossing key (hierarchical model).
    boundaries: HashMap<u64, Vec<Span>>,
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
/// use herald::{Collective, CostModel, Postal, schedule::{place, Orders}};
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
    place_rules(n, collective, orders, timing, None)
}

/// [`place`] under per-pair rules (module docs); `pairs` must cover ranks `0 … n−1`.
///
/// # Errors
/// As [`place`].
pub(crate) fn place_pairs(
    n: u32,
    collective: Collective,
    orders: &Orders,
    pairs: &PairTiming,
) -> Result<Schedule, ScheduleError> {
    place_rules(n, collective, orders, &pairs.timing(0), Some(pairs))
}

fn place_rules(
    n: u32,
    collective: Collective,
    orders: &Orders,
    timing: &Timing,
    pairs: Option<&PairTiming>,
) -> Result<Schedule, ScheduleError> {
    let fold = |t: Timing| {
        if collective.is_combining() {
            t.combining()
        } else {
            t
        }
    };
    let timing = &fold(*timing);
    let table: Vec<Timing> = pairs.map_or_else(Vec::new, |r| {
        (0..r.classes()).map(|c| fold(r.timing(c))).collect()
    });
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
    let classes = if table.is_empty() {
        std::slice::from_ref(timing)
    } else {
        &table[..]
    };
    // Capacity binds only if more than `c` messages one step apart fit in one transit time.
    let binds = |step: fn(&Timing) -> Ticks| {
        classes.iter().any(|t| {
            let len = t.transit.1 - t.transit.0;
            let step = if pairs.is_some() { 0 } else { step(t) };
            t.capacity
                .is_some_and(|c| len > 0 && len.div_ceil(step.max(1)) > u64::from(c))
        })
    };
    let mut pl = Placer {
        orders,
        timing,
        pairs: pairs.map(|r| (r, table.as_slice())),
        width,
        combining,
        avail,
        procs: vec![
            Proc {
                next: 0,
                queued: false,
                last_send: Ticks::MAX,
                last_recv: Ticks::MAX,
                send_step: 0,
                recv_step: 0,
                send_end: 0,
            };
            n as usize
        ],
        lists: Lists {
            recvs: lists(
                n,
                timing.shared_cpu
                    && classes.iter().any(|t| t.recv_busy > 0)
                    && classes.iter().any(|t| t.send_busy > 0),
            ),
            out_flight: lists(n, binds(Timing::send_step)),
            in_flight: lists(n, binds(Timing::recv_step)),
            boundaries: HashMap::new(),
        },
        crossings: Vec::new(),
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
    /// The model's rules (for per-pair rules: class 0's, for the family-wide flags).
    timing: &'a Timing,
    /// Per-pair rules and the timing of each class.
    pairs: Option<(&'a PairTiming, &'a [Timing])>,
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
    /// Scratch: the bounded boundaries of the send being placed.
    crossings: Vec<crate::model::Crossing>,
}

impl Placer<'_> {
    /// The timing of a send from `p` to `to` (class 0's for a receiver out of range).
    fn tm(&self, p: u32, to: u32) -> Timing {
        match self.pairs {
            Some((rules, table)) if to < self.procs.len() as u32 => table[rules.class(p, to)],
            _ => *self.timing,
        }
    }

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
            t => time::add(t, st.send_step)?,
        };
        self.procs[p as usize].queued = true;
        self.heap.push(Reverse((ready.max(earliest), p)));
        Ok(())
    }

    /// Records the send `p → to` of `what` at `t`.
    fn commit(&mut self, t: Ticks, p: u32, to: u32, what: u32) -> Result<(), ScheduleError> {
        let timing = self.tm(p, to);
        let arrival = time::add(t, timing.latency)?;
        let span = (
            time::add(t, timing.transit.0)?,
            time::add(t, timing.transit.1)?,
            timing.capacity.unwrap_or(u32::MAX),
        );
        let st = &mut self.procs[p as usize];
        st.next += 1;
        st.last_send = t;
        st.send_step = timing.send_step();
        st.send_end = time::add(t, timing.send_busy)?;
        if let Some(q) = self.lists.out_flight.get_mut(p as usize) {
            if span.1 > span.0 {
                q.push(span);
            }
        }
        for &(key, w) in &self.crossings {
            self.lists
                .boundaries
                .entry(key)
                .or_default()
                .push((t, arrival, w));
        }
        if let Some(rs) = self.procs.get_mut(to as usize) {
            let start = arrival - timing.recv_busy;
            rs.last_recv = start;
            rs.recv_step = timing.recv_step();
            if let Some(q) = self.lists.recvs.get_mut(to as usize) {
                q.push_back((start, arrival));
            }
            if let Some(q) = self.lists.in_flight.get_mut(to as usize) {
                if span.1 > span.0 {
                    q.push(span);
                }
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
    /// at least every placed send's start. Prunes list entries that lie behind `t`. Leaves the
    /// send's bounded boundary crossings in `self.crossings` for [`Placer::commit`].
    fn earliest_start(&mut self, mut t: Ticks, p: u32, to: u32) -> Result<Ticks, ScheduleError> {
        let timing = self.tm(p, to);
        let recv_offset = timing.latency - timing.recv_busy;
        let (tr0, tr1) = timing.transit;
        let cap = timing.capacity.unwrap_or(u32::MAX);
        let n = self.procs.len() as u32;
        // Lists shared with other senders (the receiver's, the boundaries') are pruned only up
        // to the start `t` was popped with: another sender may still place a message earlier
        // than this send's final start.
        let floor = t;
        self.crossings.clear();
        if let Some((rules, _)) = self.pairs {
            if to < n && rules.has_boundaries() {
                rules.crossings(p, to, rules.class(p, to), &mut self.crossings);
            }
        }
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
            if tr1 > tr0 {
                if let Some(q) = self.lists.out_flight.get_mut(p as usize) {
                    t = fit(q, t, t, tr0, cap);
                }
            }
            if let Some(rs) = self.procs.get(to as usize) {
                if rs.last_recv != Ticks::MAX {
                    let need = time::add(rs.last_recv, rs.recv_step)?;
                    let start = time::add(t, recv_offset)?;
                    t += need.saturating_sub(start);
                }
                // The receive must not meet the receiver's last send (never binds for a uniform
                // timing: the receive starts at least one send busy time after this send).
                if timing.shared_cpu && timing.recv_busy > 0 {
                    let start = time::add(t, recv_offset)?;
                    t += rs.send_end.saturating_sub(start);
                }
                if tr1 > tr0 {
                    if let Some(q) = self.lists.in_flight.get_mut(to as usize) {
                        t = fit(q, floor, t, tr0, cap);
                    }
                }
            }
            for &(key, w) in &self.crossings {
                if let Some(q) = self.lists.boundaries.get_mut(&key) {
                    t = fit(q, floor, t, 0, w);
                }
            }
            if t == before {
                return Ok(t);
            }
        }
    }
}

/// The earliest start `≥ t` of a message whose interval begins `offset` after it, given the
/// intervals of `q` (pruned of those ended by `floor ≤ t`, the earliest any later placement
/// starts): it begins no earlier than any interval of `q`,
/// and when it begins, the intervals then open plus itself number at most the least capacity
/// among them and `cap` (the in-flight and boundary rules, counted at each start).
fn fit(q: &mut Vec<Span>, floor: Ticks, t: Ticks, offset: Ticks, cap: u32) -> Ticks {
    q.retain(|&(_, end, _)| end > floor);
    let mut a = q.iter().map(|s| s.0).fold(t + offset, Ticks::max);
    loop {
        let open = q.iter().filter(|s| s.1 > a);
        let (count, least) = open.fold((0usize, cap), |(k, c), s| (k + 1, c.min(s.2)));
        if count < least as usize {
            return a - offset;
        }
        a = q.iter().map(|s| s.1).filter(|&e| e > a).min().unwrap_or(a);
    }
}

/// One empty list per processor if `on`, else none.
fn lists<L: Clone + Default>(n: u32, on: bool) -> Vec<L> {
    if on {
        vec![L::default(); n as usize]
    } else {
        Vec::new()
    }
}
