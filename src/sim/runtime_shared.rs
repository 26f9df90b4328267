//! The runtime's time for a broadcast whose ranks share PUs (more ranks than PUs): each PU's
//! threads take turns, simulated. [`RuntimeCosts`]' module docs state the rules; in short:
//!
//! * A PU runs one of its ranks at a time, and its ranks take turns in a fixed cycle (rank
//!   order). A rank that runs does all it can: it makes its next sends while it holds their
//!   blocks, reads what reached it (a stream along as it arrives, each line read after its
//!   arrival costing what it cost to write, the first excepted; a single copy chunk by chunk),
//!   and returns when it holds every block, made every send and (single copy) saw its readers'
//!   copies done. When it can do nothing more it yields.
//! * A rank that gets the PU and has nothing to do yields again: one bare thread switch `b`.
//!   One that has something to do starts it after the runtime's handoff `S ≥ b`. A rank alone
//!   on its PU never yields (the runtime spins there). A rank's first work in a stream that runs
//!   the executor costs it the executor's set-up too ([`RuntimeCosts::exec_ps`]).
//! * A sender's separate messages are the channel's gap apart.
//! * A stream longer than a ring is sent ring by ring: the next ring's worth once the reader has
//!   started on the previous one (at most [`MAX_PIECES`] pieces in all: a block of a
//!   broadcast of `m` blocks is cut into at most `MAX_PIECES / m`, and at least one).
//! * Where a non-root PU's cycle stands when the call starts is unknown, and so is how fast
//!   its turns go: the prediction is the mean over starting ranks ([`OFFSETS`]), phases
//!   ([`PHASES`]) and the speeds of [`RuntimeCosts::turn_scales`] (a non-root PU's bare switch
//!   and handoff scaled by each); the root's PU starts with the root, at the calibrated speed.
//! * Messages between PUs travel as between ranks with PUs of their own.
//! * While no rank of a PU can work, its turns are skipped in one step up to the next moment
//!   one could (an arrival already sent, or another PU's next move): the same result as taking
//!   them one by one.

use super::runtime::{PredictError, Ramp, RING_LINES};
use crate::model::{RuntimeCosts, RuntimeLevel, Transport};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A broadcast's shape and sizes, as `predict_runtime` prepared them.
pub(super) struct Shape<'a> {
    pub(super) n: u32,
    pub(super) root: u32,
    /// Per rank: its sends `(to, block)` in program order.
    pub(super) sends: &'a [Vec<(u32, u32)>],
    /// Per rank: what its single copy of the payload costs beyond the copy because readers on
    /// other PUs hold its buffer, because the broadcast's buffers outgrow the caches, and
    /// because it copies from a forwarder's buffer streamed to memory, ps (0 for other
    /// transports).
    pub(super) held: &'a [u64],
    /// Units (lines or chunks) per block.
    pub(super) units: &'a [u64],
    /// Payload bytes per block (single copy: copied bytes).
    pub(super) unit_bytes: &'a [u64],
    pub(super) bytes: u64,
    pub(super) transport: Transport,
    pub(super) call: u64,
    /// What each rank's first turn of work costs beyond the handoff when its stream runs the
    /// executor ([`RuntimeCosts::exec_ps`]; 0 otherwise).
    pub(super) exec: u64,
    /// A posted broadcast's costs (zero for the other transports).
    pub(super) post: Post,
    /// Per rank: whether it is a single copy's lender of one descriptor none of whose PU's
    /// other ranks forwards, which spins for readers on other PUs ([`RuntimeCosts::spin_ps`]).
    pub(super) spins: &'a [bool],
}

/// What a posted broadcast costs where ranks share PUs, ps.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Post {
    /// The root's post.
    pub(super) write: u64,
    /// A read by a rank on the root's PU.
    pub(super) read: u64,
    /// The slot's lines written (a reader on another PU pays its level's posted call of
    /// these lines, less `write` and the hop).
    pub(super) lines: u64,
}

/// One rank's progress.
struct Rank {
    next: usize,
    /// Per piece: when its units reach this rank (stream: lines; single copy: descriptors),
    /// and from whom.
    avail: Vec<Option<(Ramp, u32)>>,
    /// Per piece: when this rank holds its units (read or copied), `None` before it ran.
    hold: Vec<Option<Ramp>>,
    /// Pieces it receives and does not hold yet.
    missing: usize,
    /// Pieces on their way to it or arrived, that it has not read: `(first unit's arrival,
    /// piece)`, earliest first (the earliest never one it holds).
    pending: BinaryHeap<Reverse<(u64, usize)>>,
    /// Single copy: pieces this rank lent whose readers have not copied them yet, and when the
    /// last copy done so far is known to it (a hop after the copy).
    lent_open: usize,
    lent_done: u64,
    /// Single copy: per piece, the ranks that lent it to this one (usually one).
    lenders: Vec<Vec<u32>>,
    /// When it may start its next message (its last start plus the gap).
    free: u64,
    returned: Option<u64>,
    /// Whether it has worked yet (its first work pays [`Shape::exec`]).
    started: bool,
}

/// At most this many pieces per broadcast (each block at least one): a stream of more rings is
/// cut into pieces of several rings each, and waits for its reader once per piece (its stalls
/// undercounted). The bound keeps a prediction's events, and a planned communicator's set-up,
/// in proportion to the ranks, not to the payload (a 64 MiB stream in 64 blocks was 4096
/// pieces before: 12 ms a prediction at 8 ranks, 10 s for an 8-rank communicator's plan).
const MAX_PIECES: u64 = 64;

/// The broadcast cut into pieces: a stream block longer than a ring is sent ring by ring (the
/// sender writes the next ring's worth once its reader has started on the last).
struct Pieces {
    /// Per piece: units and payload bytes.
    units: Vec<u64>,
    bytes: Vec<u64>,
    /// Per piece: the previous piece of the same block.
    prev: Vec<Option<usize>>,
    /// Per rank: its sends `(to, piece)` in program order.
    sends: Vec<Vec<(u32, usize)>>,
    /// Per piece: its block.
    block: Vec<u32>,
}

impl Pieces {
    fn new(shape: &Shape<'_>) -> Pieces {
        let mut of_block: Vec<Vec<usize>> = Vec::with_capacity(shape.units.len());
        let (mut units, mut bytes, mut prev, mut block) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let per_block = (MAX_PIECES / shape.units.len().max(1) as u64).max(1);
        for (b, &u) in shape.units.iter().enumerate() {
            let cut = match shape.transport {
                Transport::Stream => u.div_ceil(RING_LINES).clamp(1, per_block),
                Transport::Direct | Transport::Posted => 1,
            };
            let per = u.div_ceil(cut);
            let mut ids = Vec::new();
            let mut given = 0;
            for j in 0..cut {
                let lines = per.min(u - j * per);
                let share = if j + 1 == cut {
                    shape.unit_bytes[b] - given
                } else {
                    shape.unit_bytes[b] * lines / u.max(1)
                };
                given += share;
                prev.push(ids.last().copied());
                ids.push(units.len());
                units.push(lines);
                bytes.push(share);
                block.push(b as u32);
            }
            of_block.push(ids);
        }
        let sends = shape
            .sends
            .iter()
            .map(|s| {
                s.iter()
                    .flat_map(|&(to, b)| of_block[b as usize].iter().map(move |&p| (to, p)))
                    .collect()
            })
            .collect();
        Pieces {
            units,
            bytes,
            prev,
            sends,
            block,
        }
    }
}

/// Phases of the non-root PUs' cycles at the call: their first turn ends `(2i + 1)/(2·PHASES)`
/// of a switch after it, for `i` in `0..PHASES` (a mean of half a switch).
///
/// The makespan is a step function of the phase (a rank whose turn comes just before what it
/// waits for runs a whole cycle later), so the mean is a quadrature of steps: 2 phases put the
/// step of a 4-rank star's return wholly on one side or the other and ranked its block counts
/// by where their steps fell. With 16 the picks of 4, 8 and 16 ranks are those of 64 phases in
/// 73 of 78 (ranks, size) rows of three data sets, and their regret against every candidate's
/// measurements pooled over 4–5 runs fell from a mean of 12.8 % to 8.6 %, the worst from 164 %
/// to 54 % (docs/fidelity.md, run AF). Only ranks that share PUs pay for it: a prediction runs 8
/// times the simulations it ran with 2.
const PHASES: u64 = 16;
/// Phases per turn speed where [`RuntimeCosts::turn_scales`] gives several (4 speeds × 4
/// phases: as many simulations as [`PHASES`] alone). Forty-third session: with 16 phases per
/// speed the picks of profiles H1, F1 and F2 at 4, 8 and 16 ranks, 8 B – 4 MiB, are the same in
/// 67 of 72 entries (four of the others trade `dtree(3)` and `knomial(3)` at 4 ranks, one
/// posting and streaming 8 B at 4 ranks); a prediction checked moved by 4 % (H1, 8 ranks, a
/// one-block star of 32 KiB: 14.9 µs, 15.5 with 16).
const PHASES_PER_SCALE: u64 = 4;
/// Starting positions of the non-root PUs' cycles averaged over: all of them, or this many
/// spread evenly.
const OFFSETS: usize = 4;

/// The predicted makespan and last hold, ps, of `shape` on shared PUs: the mean over the
/// starting positions and phases of the non-root PUs' cycles.
pub(super) fn predict(shape: &Shape<'_>, costs: &RuntimeCosts) -> Result<(u64, u64), PredictError> {
    let pus = costs.pus().max(1);
    let threads: Vec<Vec<u32>> = (0..pus)
        .map(|p| (0..shape.n).filter(|&r| costs.pu(r) == p).collect())
        .filter(|t: &Vec<u32>| !t.is_empty())
        .collect();
    let pieces = Pieces::new(shape);
    let k = threads.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let (mut span, mut hold) = (0u128, 0u128);
    let offsets = k.min(OFFSETS);
    let scales = costs.turn_scales();
    let phases = if scales.len() > 1 {
        PHASES_PER_SCALE
    } else {
        PHASES
    };
    for &scale in scales {
        for offset in (0..offsets).map(|i| i * k / offsets) {
            for phase in 0..phases {
                let turn = Turn {
                    offset,
                    phase,
                    phases,
                    scale,
                };
                let (m, h) = Sim::new(shape, &pieces, costs)?.run(&threads, turn)?;
                span += u128::from(m);
                hold += u128::from(h);
            }
        }
    }
    let runs = (scales.len() * offsets * phases as usize) as u128;
    Ok(((span / runs) as u64, (hold / runs) as u64))
}

/// Where the non-root PUs' cycles stand at the call, and how fast they turn.
#[derive(Clone, Copy)]
struct Turn {
    /// The thread of each non-root PU that runs first.
    offset: usize,
    /// Its first turn ends `(2·phase + 1)/(2·phases)` of a bare switch after the call.
    phase: u64,
    phases: u64,
    /// The non-root PUs' bare switch and handoff, per mille of the calibrated ones.
    scale: u64,
}

/// Per PU: which of its threads runs and from when.
struct Pu {
    cur: usize,
    time: u64,
    /// The running thread has just taken the PU (its first work pays the handoff).
    fresh: bool,
    /// Whether a thread has yielded yet (a non-root PU's first turn is part of a switch: its
    /// threads were yielding in a phase unknown to the call, [`PHASES`]).
    yielded: bool,
    /// The running thread spins for readers on other PUs until then (one spin a turn: when
    /// it ends the thread yields at once).
    spin_end: Option<u64>,
}

struct Sim<'a> {
    shape: &'a Shape<'a>,
    pieces: &'a Pieces,
    costs: &'a RuntimeCosts,
    finest: &'a RuntimeLevel,
    ranks: Vec<Rank>,
}

impl<'a> Sim<'a> {
    fn new(
        shape: &'a Shape<'a>,
        pieces: &'a Pieces,
        costs: &'a RuntimeCosts,
    ) -> Result<Sim<'a>, PredictError> {
        let finest = costs
            .levels()
            .iter()
            .rev()
            .flatten()
            .next()
            .ok_or(PredictError::NoCosts)?;
        let count = pieces.units.len();
        let mut ranks: Vec<Rank> = (0..shape.n)
            .map(|_| Rank {
                next: 0,
                avail: vec![None; count],
                hold: vec![None; count],
                missing: 0,
                pending: BinaryHeap::new(),
                lent_open: 0,
                lent_done: 0,
                lenders: vec![Vec::new(); count],
                free: 0,
                returned: None,
                started: false,
            })
            .collect();
        let mut expects = vec![vec![false; count]; shape.n as usize];
        for s in &pieces.sends {
            for &(to, p) in s {
                expects[to as usize][p] = true;
            }
        }
        let root = shape.root as usize;
        let start = Ramp {
            first: shape.call,
            last: shape.call,
        };
        ranks[root].hold = vec![Some(start); count];
        expects[root] = vec![false; count];
        for (r, rank) in ranks.iter_mut().enumerate() {
            rank.missing = expects[r].iter().filter(|&&e| e).count();
        }
        for (r, s) in pieces.sends.iter().enumerate() {
            // A rank that sends a block nobody sends it would wait forever.
            if let Some(&(_, p)) = s.iter().find(|&&(_, p)| r != root && !expects[r][p]) {
                return Err(PredictError::Stuck {
                    rank: r as u32,
                    block: pieces.block[p],
                });
            }
        }
        Ok(Sim {
            shape,
            pieces,
            costs,
            finest,
            ranks,
        })
    }

    fn level(&self, a: u32, b: u32) -> &'a RuntimeLevel {
        self.costs.between(a, b).unwrap_or(self.finest)
    }

    /// Rank `r`'s next send, if it can make it at `t`: it holds the piece, and the reader has
    /// started on the piece's previous ring.
    fn sendable(&self, r: u32, t: u64) -> Option<(u32, usize, Ramp)> {
        self.next_send(r)
            .filter(|&(_, _, _, at)| at <= t)
            .map(|(to, p, h, _)| (to, p, h))
    }

    /// Rank `r`'s next send `(to, piece, its hold of the piece)` and the earliest moment it
    /// can make it, as far as is known (`None`: none left, or what it waits for is not known).
    fn next_send(&self, r: u32) -> Option<(u32, usize, Ramp, u64)> {
        let me = &self.ranks[r as usize];
        let &(to, p) = self.pieces.sends[r as usize].get(me.next)?;
        let h = me.hold[p]?;
        let at = match self.pieces.prev[p] {
            Some(q) => h.first.max(self.ranks[to as usize].hold[q]?.first),
            None => h.first,
        };
        Some((to, p, h, at))
    }

    /// Whether piece `p`, read by rank `r` from rank `from`, is in `r`'s PU's cache: `from`
    /// runs on that PU, or another rank of it already holds `p` read from `from`.
    fn cached(&self, r: u32, from: u32, p: usize) -> bool {
        let pu = self.costs.pu(r);
        self.costs.pu(from) == pu
            || (0..self.shape.n).any(|q| {
                let other = &self.ranks[q as usize];
                q != r
                    && self.costs.pu(q) == pu
                    && other.hold[p].is_some()
                    && other.avail[p].is_some_and(|(_, f)| f == from)
            })
    }

    /// Whether ranks `r` and `from` run on one PU and no other rank of the broadcast runs
    /// there.
    fn pair_alone(&self, r: u32, from: u32) -> bool {
        let pu = self.costs.pu(r);
        self.costs.pu(from) == pu
            && (0..self.shape.n).all(|q| q == r || q == from || self.costs.pu(q) != pu)
    }

    /// A piece that reached rank `r` by `t` and that it has not read yet.
    fn readable(&self, r: u32, t: u64) -> Option<usize> {
        let &Reverse((first, p)) = self.ranks[r as usize].pending.peek()?;
        (first <= t).then_some(p)
    }

    /// Whether rank `r` may return at `t`: it holds every piece, made every send, and its
    /// readers (single copy) are done with what it lent, a hop ago.
    fn finished(&self, r: u32, t: u64) -> bool {
        self.may_return(r).is_some_and(|at| at <= t)
    }

    /// When rank `r` may return, once it holds every piece, made every send and (single copy)
    /// knows every reader done (`None`: not yet known).
    fn may_return(&self, r: u32) -> Option<u64> {
        let me = &self.ranks[r as usize];
        (me.next == self.pieces.sends[r as usize].len() && me.missing == 0 && me.lent_open == 0)
            .then_some(me.lent_done)
    }

    /// The earliest moment from `t` on at which rank `r` could work, as far as the messages
    /// already sent tell (`None`: nothing it waits for is on its way yet).
    fn next_event(&self, r: u32, t: u64) -> Option<u64> {
        let me = &self.ranks[r as usize];
        if me.returned.is_some() {
            return None;
        }
        let reads = me.pending.peek().map(|&Reverse((first, _))| first);
        let send = self.next_send(r).map(|(_, _, _, at)| at);
        reads
            .into_iter()
            .chain(send)
            .chain(self.may_return(r))
            .map(|e| e.max(t))
            .min()
    }

    /// Whether rank `r`, running at `t`, has something to do.
    fn can_work(&self, r: u32, t: u64) -> bool {
        self.ranks[r as usize].returned.is_none()
            && (self.sendable(r, t).is_some()
                || self.readable(r, t).is_some()
                || self.finished(r, t))
    }

    /// Rank `r` runs from `t` and does all it can; returns when it stops (it then yields, or
    /// it returned).
    fn work(&mut self, r: u32, mut t: u64) -> Result<u64, PredictError> {
        let ri = r as usize;
        if !self.ranks[ri].started {
            self.ranks[ri].started = true;
            t += self.shape.exec;
        }
        loop {
            if let Some((to, p, h)) = self.sendable(r, t) {
                let l = self.level(r, to);
                let u = self.pieces.units[p];
                // Separate messages from one sender are at least the channel's gap apart
                // (a post is one write, read by all).
                let start = match self.shape.transport {
                    Transport::Posted => t,
                    _ => t.max(self.ranks[ri].free),
                };
                let (sent_last, arrive) = match self.shape.transport {
                    Transport::Stream => {
                        let sent_last = (start + l.stream_ps(u)).max(h.last + l.line_ps);
                        let first = start + l.stream_ps(u.min(l.burst_lines)) + l.hop_ps;
                        (
                            sent_last,
                            Ramp {
                                first,
                                last: (sent_last + l.hop_ps).max(first),
                            },
                        )
                    }
                    Transport::Direct => {
                        let line = l.burst_line_ps;
                        let sent_last = (start + u * line).max(h.last + line);
                        if self.ranks[to as usize].hold[p].is_none() {
                            self.ranks[ri].lent_open += 1;
                            self.ranks[to as usize].lenders[p].push(r);
                        }
                        let first = start + line + l.hop_ps;
                        (
                            sent_last,
                            Ramp {
                                first,
                                last: sent_last + l.hop_ps,
                            },
                        )
                    }
                    Transport::Posted => {
                        // The first send writes the slot; every reader finds it there.
                        let posted = if self.ranks[ri].next == 0 {
                            start + self.shape.post.write
                        } else {
                            start
                        };
                        let first = posted + l.hop_ps;
                        (posted, Ramp { first, last: first })
                    }
                };
                let them = &mut self.ranks[to as usize];
                match them.avail[p] {
                    None => {
                        them.avail[p] = Some((arrive, r));
                        if them.hold[p].is_none() {
                            them.pending.push(Reverse((arrive.first, p)));
                        }
                    }
                    Some((old, _)) if arrive.first < old.first && them.hold[p].is_none() => {
                        them.avail[p] = Some((arrive, r));
                        them.pending.push(Reverse((arrive.first, p)));
                    }
                    Some(_) => {}
                }
                self.ranks[ri].next += 1;
                self.ranks[ri].free = start + l.gap_ps;
                t = sent_last;
                continue;
            }
            if let Some(p) = self.readable(r, t) {
                let (a, from) = self.ranks[ri].avail[p].expect("readable");
                let l = self.level(from, r);
                let held = match self.shape.transport {
                    // Read along as the lines arrive; a line read after it arrived costs its
                    // reader what it cost its writer (the first line's is in the handoff `S`).
                    Transport::Stream => Ramp {
                        first: t.max(a.first),
                        last: a.last.max(
                            t.max(a.first)
                                + l.stream_ps(self.pieces.units[p])
                                    .saturating_sub(l.burst_line_ps),
                        ),
                    },
                    Transport::Direct => {
                        let u = self.pieces.units[p];
                        let bytes = self.shape.bytes;
                        let whole = l.copy_ps(bytes).ok_or(PredictError::NoDirect)?;
                        let share = |ps: u64| {
                            (u128::from(ps) * u128::from(self.pieces.bytes[p])
                                / u128::from(bytes.max(1))) as u64
                        };
                        let mut copy = share(whole);
                        // The lender's buffer in this PU's cache (the lender runs here, or
                        // a rank of this PU copied the same piece from it): the one-PU copy,
                        // for payloads up to the size it was measured at (a larger payload's
                        // pieces are not known to stay in the cache, however it is cut). Past
                        // it, where the lender and this reader are the PU's only ranks (as
                        // calibrated: no other rank's copies between the lender's writes and
                        // this read), the reader copies lines its own PU wrote: the one-PU
                        // rate of large payloads.
                        let piece = self.pieces.bytes[p];
                        let one_pu = if bytes <= l.copy_large_from {
                            self.cached(r, from, p)
                                .then(|| self.costs.shared_copy_ps(piece))
                                .flatten()
                        } else if self.pair_alone(r, from) {
                            self.costs.shared_copy_large_ps(bytes).map(share)
                        } else {
                            None
                        };
                        if let Some(c) = one_pu {
                            copy = copy.min(c);
                        }
                        // A reader that forwards to another PU writes into lines that PU
                        // holds from the call before; buffers past the caches cost more, and
                        // so does a forwarder's buffer its held copy streamed to memory.
                        copy += share(self.shape.held[r as usize]);
                        let per_unit = copy.div_ceil(u.max(1));
                        let first = t.max(a.first) + l.block_ps + per_unit;
                        Ramp {
                            first,
                            last: (a.last + per_unit).max(first + u.saturating_sub(1) * per_unit),
                        }
                    }
                    Transport::Posted => {
                        let post = self.shape.post;
                        // A rank of a PU where another has read the slot reads it from that
                        // PU's cache, as a rank of the root's PU reads the root's writes.
                        let read = match self.costs.between(from, r) {
                            // On the root's PU: the read's share of the one-PU call.
                            None => post.read,
                            Some(l) => {
                                let across = l
                                    .posted_lines_ps(post.lines)
                                    .ok_or(PredictError::NoPosted)?
                                    .saturating_sub(post.write + l.hop_ps);
                                if self.cached(r, from, p) {
                                    across.min(post.read)
                                } else {
                                    across
                                }
                            }
                        };
                        let first = t.max(a.first) + read;
                        Ramp { first, last: first }
                    }
                };
                // Its lenders see the copy done a hop later.
                for q in std::mem::take(&mut self.ranks[ri].lenders[p]) {
                    let hop = self.level(q, r).hop_ps;
                    let lender = &mut self.ranks[q as usize];
                    lender.lent_open -= 1;
                    lender.lent_done = lender.lent_done.max(held.last + hop);
                }
                let me = &mut self.ranks[ri];
                me.hold[p] = Some(held);
                // `p` was the earliest; drop it, and entries of pieces now held.
                while me
                    .pending
                    .peek()
                    .is_some_and(|&Reverse((_, q))| me.hold[q].is_some())
                {
                    me.pending.pop();
                }
                me.missing -= 1;
                t = held.last;
                continue;
            }
            if self.finished(r, t) {
                self.ranks[ri].returned = Some(t);
            }
            return Ok(t);
        }
    }

    /// Whether rank `r` waits only for readers on other PUs: it has not returned, made every
    /// send and holds everything, and every reader on its own PU has copied (those on other
    /// PUs may have too, a hop ago at most).
    fn waits_across(&self, r: u32) -> bool {
        let me = &self.ranks[r as usize];
        let pu = self.costs.pu(r);
        me.returned.is_none()
            && me.missing == 0
            && me.next == self.pieces.sends[r as usize].len()
            && self.pieces.sends[r as usize].iter().all(|&(to, p)| {
                self.costs.pu(to) != pu || self.ranks[to as usize].hold[p].is_some()
            })
    }

    /// Where rank `r`, running at `t` on a PU of `threads` threads with nothing to do, spins
    /// for readers on other PUs in this turn: the spin's end (`None`: it yields). A spin
    /// starts at the first such moment of a turn and ends at its end, where the thread yields
    /// (or when the rank can work, which for such a lender is its return).
    fn spin_end(&self, r: u32, t: u64, pu: &mut Pu, threads: usize) -> Option<u64> {
        let spin = self.costs.spin_ps();
        if spin == 0 || threads < 2 || !self.shape.spins[r as usize] || !self.waits_across(r) {
            pu.spin_end = None;
            return None;
        }
        match *pu.spin_end.get_or_insert(t + spin) {
            end if t < end => Some(end),
            _ => {
                pu.spin_end = None;
                None
            }
        }
    }

    /// For a PU whose running thread polls without yielding (alone on its PU, or spinning):
    /// the earliest moment it could act (`Some(None)`: nothing it waits for is on its way).
    /// `None` for a PU that takes turns.
    fn polling(&self, pu: &Pu, threads: &[u32]) -> Option<Option<u64>> {
        match (threads, pu.spin_end) {
            ([r], _) => Some(self.next_event(*r, pu.time)),
            (_, Some(end)) => {
                let r = threads[pu.cur];
                Some(Some(
                    self.next_event(r, pu.time).map_or(end, |e| e.min(end)),
                ))
            }
            _ => None,
        }
    }

    /// Runs the broadcast with the non-root PUs' cycles as `turn` says.
    fn run(mut self, threads: &[Vec<u32>], turn: Turn) -> Result<(u64, u64), PredictError> {
        let root = self.shape.root;
        let offset = turn.offset;
        let switch = self.costs.switch_ps();
        let yield_ps = self.costs.yield_ps().max(1);
        // Per PU: its bare switch and handoff (a non-root PU's at the turn's speed).
        let turns: Vec<(u64, u64)> = threads
            .iter()
            .map(|t| {
                let scale = |x: u64| {
                    if t.contains(&root) {
                        x
                    } else {
                        x * turn.scale / 1000
                    }
                };
                (
                    scale(yield_ps).max(1),
                    scale(switch.saturating_sub(yield_ps)),
                )
            })
            .collect();
        let mut pus: Vec<Pu> = threads
            .iter()
            .map(|t| Pu {
                cur: t
                    .iter()
                    .position(|&r| r == root)
                    .unwrap_or(offset % t.len()),
                time: self.shape.call,
                fresh: false,
                yielded: false,
                spin_end: None,
            })
            .collect();
        let mut left = self.shape.n as usize;
        // Per PU: its threads that have not returned.
        let mut active: Vec<usize> = threads.iter().map(Vec::len).collect();
        while left > 0 {
            // The PU furthest behind moves: whatever it could see was sent earlier.
            let Some(p) = (0..pus.len())
                .filter(|&p| active[p] > 0)
                .min_by_key(|&p| pus[p].time)
            else {
                break;
            };
            let (r, t, fresh) = (threads[p][pus[p].cur], pus[p].time, pus[p].fresh);
            let (bare, handoff) = turns[p];

            if self.can_work(r, t) {
                // A thread that has just taken the PU starts after the runtime's handoff.
                let end = self.work(r, if fresh { t + handoff } else { t })?;
                let pu = &mut pus[p];
                pu.time = end;
                pu.fresh = false;
                pu.spin_end = None;
                if self.ranks[r as usize].returned.is_some() {
                    left -= 1;
                    active[p] -= 1;
                }
                continue;
            }
            // A lender that waits only for readers on other PUs spins for them on this turn,
            // up to a spin phase: nothing moves on this PU until its return, its spin's end or
            // another PU's next move.
            if let Some(end) = self.spin_end(r, t, &mut pus[p], threads[p].len()) {
                let others = (0..pus.len())
                    .filter(|&q| q != p && active[q] > 0)
                    .filter_map(|q| {
                        self.polling(&pus[q], &threads[q])
                            .unwrap_or(Some(pus[q].time))
                    })
                    .min();
                let until = [others, self.next_event(r, t), Some(end)]
                    .into_iter()
                    .flatten()
                    .min()
                    .unwrap_or(end);
                let pu = &mut pus[p];
                pu.time = until.max(t + 1);
                pu.fresh = false;
                continue;
            }
            // Nothing to do (or returned: waiting in what the program does next): it yields,
            // and the next thread of the cycle runs.
            let len = threads[p].len() as u64;
            let first = !pus[p].yielded && !threads[p].contains(&root);
            let step = if first {
                bare * (2 * turn.phase + 1) / (2 * turn.phases)
            } else {
                bare
            };
            // While no thread of this PU can work, its threads only yield in turn: skip the
            // turns before the earliest moment one of them can, or another PU may act. A rank
            // alone on its PU acts only on an event of its own: a PU of one rank waiting for
            // one (or for nothing yet) does not hold the others back, which would otherwise
            // step past each other a picosecond at a time.
            let lone = threads[p].len() == 1;
            let others = (0..pus.len())
                .filter(|&q| q != p && active[q] > 0)
                .filter_map(|q| match threads[q].as_slice() {
                    [r] if lone => self.next_event(*r, pus[q].time),
                    _ => Some(pus[q].time),
                })
                .min();
            let next = threads[p]
                .iter()
                .filter_map(|&r| self.next_event(r, t))
                .min();
            let until = match (others, next) {
                (None, None) => {
                    let r = (0..self.shape.n)
                        .find(|&r| self.ranks[r as usize].returned.is_none())
                        .unwrap_or(0);
                    let b = self.pieces.sends[r as usize]
                        .get(self.ranks[r as usize].next)
                        .map_or(0, |&(_, q)| self.pieces.block[q]);
                    return Err(PredictError::Stuck { rank: r, block: b });
                }
                (a, b) => a.into_iter().chain(b).min().unwrap_or(t),
            };
            if lone {
                // A rank alone on its PU polls without yielding (the runtime spins there).
                let pu = &mut pus[p];
                pu.time = until.max(t + 1);
                continue;
            }
            let skip = if first || until <= t + step {
                0
            } else {
                (until - t - step) / bare
            };
            let pu = &mut pus[p];
            pu.cur = ((pu.cur as u64 + 1 + skip) % len) as usize;
            pu.time = t + step + skip * bare;
            pu.fresh = true;
            pu.yielded = true;
        }
        let makespan = self
            .ranks
            .iter()
            .filter_map(|r| r.returned)
            .max()
            .unwrap_or(self.shape.call);
        let last_hold = self
            .ranks
            .iter()
            .flat_map(|r| r.hold.iter().flatten().map(|h| h.last))
            .max()
            .unwrap_or(self.shape.call);
        Ok((makespan.max(last_hold), last_hold))
    }
}
