//! herald schedules executed over MPI point-to-point.
//!
//! # Broadcast ([`BroadcastPlan`])
//!
//! Any broadcast schedule herald's runtime accepts (`Program::compile`: causal and complete,
//! one or many blocks, one or many senders per rank). The payload is cut into the schedule's
//! `m` blocks of `⌈bytes / m⌉` bytes (the last shorter, possibly empty). Each rank
//!
//! 1. posts a nonblocking receive for every block every sender sends it (tag = block), the
//!    block's first send (earliest start in the schedule) into the buffer, any later duplicate
//!    into scratch;
//! 2. walks its sends in the schedule's order: waits for the block's first receive if it does
//!    not hold the block yet, then starts a nonblocking send of the block's bytes;
//! 3. waits for every request.
//!
//! A rank of a one-block schedule that receives the block at most once (the root: never) takes
//! a shorter path with the same order: it receives the block into the buffer, then sends it to
//! each receiver in turn (the per-call bookkeeping of the general path cost more than the
//! messages themselves for small payloads).
//!
//! No rank can wait in a cycle: a rank waits only for the earliest send of a block to it, which
//! the schedule starts strictly before the rank's own forward of that block (the compile check),
//! and each rank starts its sends in time order — so every wait is for a send that starts
//! earlier in schedule time, and by induction on time every send is eventually started. MPI
//! keeps messages of one sender with one tag in order; tags name blocks, so a block never lands
//! in another block's place.
//!
//! # Reduce and allreduce ([`CombinePlan`])
//!
//! A combining schedule's send carries the sender's value at the send's start, and the value
//! received is combined on arrival (the semantics of herald's `evaluate`: an arrival at the same
//! tick as a send start is included). Arrival times depend on the model, so a combining plan is
//! made from a schedule *and* the flat model it was generated for: each rank's operations are
//! its sends (at their start) and its receives (at start + the model's latency with the combine
//! folded in), sorted by time, receives first on ties. The rank executes them in that order:
//! receives are all posted up front into their own buffers; a receive op waits for its message
//! and combines it into a fresh accumulator (so a send of the previous accumulator may still be
//! in flight: no copies, no waiting for sends before combining); a send op starts a nonblocking
//! send of the current accumulator. The same induction on time rules out a cyclic wait.
//!
//! Values are vectors of `u64` combined element-wise with wrapping addition (commutative and
//! associative, so the order in which a rank meets the contributions does not matter; MPI's
//! `MPI_SUM` on `MPI_UINT64_T` computes the same).
//!
//! # Allreduce by a ring ([`RingAllreduce`])
//!
//! herald's schedules carry whole values; the bandwidth-optimal allreduce for long vectors
//! (Patarasuk & Yuan) cuts the value into `n` chunks instead: a reduce-scatter, `n − 1` steps in
//! which every rank sends one chunk to its right neighbour and adds the chunk its left one sends
//! (after them rank `r` holds chunk `r + 1` summed over all ranks), then an allgather, `n − 1`
//! steps passing the summed chunks on. Each rank receives and sends `2(n − 1)/n` of the value and
//! adds `(n − 1)/n` of it, against `⌈log₂ n⌉` whole values for herald's combining schedules: less
//! work, which counts where ranks share CPUs. Each step is one `sendrecv`, so under a flat LogGP
//! model it takes the latency of one chunk's message ([`RingAllreduce::predicted`]).

use crate::error::Error;
use crate::p2p::{Channel, RecvReq, SendReq};
use herald::{Collective, CostModel, Model, Program, Schedule};
use smallvec::SmallVec;

/// The largest block count a broadcast plan accepts (blocks are message tags).
pub const MAX_BLOCKS: u32 = 32_000;

/// Tag of combining messages.
const COMBINE_TAG: u16 = 32_767;

/// One rank's part of a broadcast.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RankPart {
    /// `(receiver, block)` in send order.
    pub sends: Vec<(usize, u32)>,
    /// `(sender, block, first)` for every message this rank receives: `first` marks the
    /// earliest send of that block to it, which fills the buffer.
    pub recvs: Vec<(usize, u32, bool)>,
}

/// A broadcast schedule prepared for MPI (see the module docs).
///
/// # Examples
///
/// ```
/// use herald::{generate, Algorithm, Model, Request, model::OnePort};
/// use herald_mpi::BroadcastPlan;
/// let s = generate(&Request::broadcast(Algorithm::Binomial, 4, 1, 0), &Model::from(OnePort))?;
/// let plan = BroadcastPlan::new(&s)?;
/// assert_eq!(plan.part(0).sends, [(2, 0), (1, 0)]);
/// assert_eq!(plan.part(3).recvs, [(2, 0, true)]);
/// assert_eq!(plan.blocks_of(10), [0..10]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BroadcastPlan {
    root: usize,
    blocks: u32,
    parts: Vec<RankPart>,
}

impl BroadcastPlan {
    /// Prepares a broadcast schedule.
    ///
    /// # Errors
    /// [`Error::Herald`] if herald's runtime would refuse the schedule (another collective, a
    /// forward before any receive, a rank that misses a block); [`Error::Usage`] for more than
    /// [`MAX_BLOCKS`] blocks.
    pub fn new(schedule: &Schedule) -> Result<BroadcastPlan, Error> {
        let program = Program::compile(schedule).map_err(Error::herald)?;
        let (root, blocks) = (program.root() as usize, program.blocks());
        if blocks > MAX_BLOCKS {
            return Err(Error::Usage(format!(
                "{blocks} blocks: herald-mpi uses the block as the message tag, at most {MAX_BLOCKS}"
            )));
        }
        let n = schedule.n() as usize;
        let mut parts = vec![RankPart::default(); n];
        let mut incoming: Vec<Vec<(u64, usize, u32)>> = vec![Vec::new(); n];
        for (p, part) in parts.iter_mut().enumerate() {
            for s in schedule.sends_of(p as u32) {
                part.sends.push((s.to as usize, s.what));
                incoming[s.to as usize].push((s.at, p, s.what));
            }
        }
        for (p, mut inc) in incoming.into_iter().enumerate() {
            inc.sort_unstable();
            let mut seen = vec![false; blocks as usize];
            parts[p].recvs = inc
                .into_iter()
                .map(|(_, from, b)| {
                    let first = !std::mem::replace(&mut seen[b as usize], true);
                    (from, b, first)
                })
                .collect();
        }
        Ok(BroadcastPlan {
            root,
            blocks,
            parts,
        })
    }

    /// The root.
    pub fn root(&self) -> usize {
        self.root
    }

    /// The number of ranks.
    pub fn n(&self) -> usize {
        self.parts.len()
    }

    /// The number of blocks.
    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    /// Rank `r`'s part.
    pub fn part(&self, r: usize) -> &RankPart {
        &self.parts[r]
    }

    /// Byte ranges of the blocks of a `bytes`-byte payload.
    pub fn blocks_of(&self, bytes: usize) -> Vec<std::ops::Range<usize>> {
        block_ranges(bytes, self.blocks)
    }

    /// Runs this rank's part on `chan`: the root's `buf` reaches every rank's.
    ///
    /// # Errors
    /// [`Error::Usage`] if the plan is for another number of ranks; [`Error::P2p`] if a message
    /// fails (a peer died, timed out, or sent another size).
    pub fn run(&self, chan: &Channel, buf: &mut [u8]) -> Result<(), Error> {
        let me = ranks_match(self.n(), chan)?;
        let part = &self.parts[me];
        if self.blocks == 1 && self.run_one_block(chan, me, buf)? {
            return Ok(());
        }
        let ranges: Small<std::ops::Range<usize>> =
            block_ranges_iter(buf.len(), self.blocks).collect();
        let mut slices = split_mut(buf, &ranges);
        let mut held: Small<Option<&[u8]>> = smallvec::smallvec![None; self.blocks as usize];
        let mut pending: Small<Option<RecvReq<'_>>> = (0..self.blocks).map(|_| None).collect();
        // The root holds every block: whatever it receives (some schedules send blocks back to
        // it) goes to scratch, as does every duplicate elsewhere.
        let is_root = me == self.root;
        let to_buffer = |first: bool| first && !is_root;
        let mut scratch: Vec<Vec<u8>> = part
            .recvs
            .iter()
            .filter(|r| !to_buffer(r.2))
            .map(|&(_, b, _)| vec![0u8; ranges[b as usize].len()])
            .collect();
        let mut extra: Vec<RecvReq<'_>> = Vec::with_capacity(scratch.len());
        if is_root {
            for (h, s) in held.iter_mut().zip(slices.iter_mut()) {
                *h = s.take().map(|s| &*s);
            }
        }
        let mut scratch_iter = scratch.iter_mut();
        for &(from, b, first) in &part.recvs {
            if to_buffer(first) {
                let slice = slices[b as usize]
                    .take()
                    .expect("one first receive per block");
                pending[b as usize] = Some(chan.irecv(slice, from, b as u16)?);
            } else {
                let s = scratch_iter
                    .next()
                    .expect("one scratch buffer per other receive");
                extra.push(chan.irecv(s, from, b as u16)?);
            }
        }
        let mut sends: Small<SendReq<'_>> = SmallVec::with_capacity(part.sends.len());
        for &(to, b) in &part.sends {
            let data = match held[b as usize] {
                Some(d) => d,
                None => {
                    let req = pending[b as usize]
                        .take()
                        .expect("compile: a receive precedes");
                    let d = &*req.wait()?;
                    held[b as usize] = Some(d);
                    d
                }
            };
            sends.push(chan.isend(data, to, b as u16)?);
        }
        // `drain`, not `into_iter`: a list of requests stays in place (see `CombinePlan::run`).
        for req in pending.drain(..).flatten() {
            req.wait()?;
        }
        for req in extra {
            req.wait()?;
        }
        SendReq::wait_all(sends.drain(..))?;
        Ok(())
    }
}

impl BroadcastPlan {
    /// The path of a one-block schedule for a rank that receives the block at most once (the
    /// root: never): receive it, then send it to each receiver in order — what the general path
    /// does for such a rank, without its bookkeeping (per-block lists, scratch buffers), which
    /// cost more than the messages' own overhead for small payloads. `Ok(false)` when the rank
    /// needs the general path (duplicate receives).
    fn run_one_block(&self, chan: &Channel, me: usize, buf: &mut [u8]) -> Result<bool, Error> {
        let part = &self.parts[me];
        match (me == self.root, part.recvs.as_slice()) {
            (true, []) => {}
            (false, &[(from, _, true)]) => chan.recv(buf, from, 0)?,
            _ => return Ok(false),
        }
        match part.sends.as_slice() {
            [] => {}
            &[(to, _)] => chan.send(buf, to, 0)?,
            many => chan.send_each(buf, many.iter().map(|&(to, _)| to), 0)?,
        }
        Ok(true)
    }
}

/// `bytes` cut into `blocks` blocks of `⌈bytes / blocks⌉` bytes (the last shorter or empty).
///
/// ```
/// assert_eq!(herald_mpi::block_ranges(10, 4), [0..3, 3..6, 6..9, 9..10]);
/// assert_eq!(herald_mpi::block_ranges(2, 3), [0..1, 1..2, 2..2]);
/// ```
pub fn block_ranges(bytes: usize, blocks: u32) -> Vec<std::ops::Range<usize>> {
    block_ranges_iter(bytes, blocks).collect()
}

fn block_ranges_iter(bytes: usize, blocks: u32) -> impl Iterator<Item = std::ops::Range<usize>> {
    let per = bytes.div_ceil(blocks.max(1) as usize).max(1);
    (0..blocks as usize).map(move |b| {
        let start = (b * per).min(bytes);
        start..((b + 1) * per).min(bytes)
    })
}

/// Per-call lists, on the stack for up to 8 entries (a call allocates nothing for small
/// schedules).
type Small<T> = SmallVec<[T; 8]>;

/// Disjoint mutable slices of `buf` for consecutive, non-overlapping `ranges`.
fn split_mut<'b>(
    mut buf: &'b mut [u8],
    ranges: &[std::ops::Range<usize>],
) -> Small<Option<&'b mut [u8]>> {
    let mut out = SmallVec::with_capacity(ranges.len());
    let mut at = 0;
    for r in ranges {
        let rest = std::mem::take(&mut buf);
        let (_, rest) = rest.split_at_mut(r.start - at);
        let (mine, rest) = rest.split_at_mut(r.len());
        out.push(Some(mine));
        buf = rest;
        at = r.end;
    }
    out
}

/// One operation of a rank in a combining schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CombineOp {
    /// Send the current value to this rank.
    Send(usize),
    /// Receive a partial value from this rank and combine it.
    Recv(usize),
}

/// A reduce or allreduce schedule prepared for MPI (see the module docs).
///
/// # Examples
///
/// ```
/// use herald::{generate, Algorithm, Model, Postal, Request};
/// use herald_mpi::{CombineOp, CombinePlan};
/// let model = Model::from(Postal::new("2".parse()?)?);
/// let s = generate(&Request::broadcast(Algorithm::Reduce, 2, 1, 0), &model)?;
/// let plan = CombinePlan::new(&s, &model)?;
/// assert_eq!(plan.ops(0), [CombineOp::Recv(1)]);
/// assert_eq!(plan.ops(1), [CombineOp::Send(0)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CombinePlan {
    collective: Collective,
    ops: Vec<Vec<CombineOp>>,
}

impl CombinePlan {
    /// Prepares a combining schedule generated under the flat `model`.
    ///
    /// # Errors
    /// [`Error::Usage`] for a broadcast or all-to-all schedule, or a hierarchical model;
    /// [`Error::Herald`] for model or time errors.
    pub fn new(schedule: &Schedule, model: &Model) -> Result<CombinePlan, Error> {
        let collective = schedule.collective();
        if !matches!(
            collective,
            Collective::Reduce { .. } | Collective::Allreduce
        ) {
            return Err(Error::Usage(format!(
                "a {} schedule does not combine values (reduce and allreduce do)",
                collective.name()
            )));
        }
        if matches!(model, Model::Hier(_)) {
            return Err(Error::Usage(
                "combining schedules run under a flat model (postal, logp, oneport, kport)".into(),
            ));
        }
        let base = schedule
            .base()
            .refine(model.time_base().map_err(Error::herald)?.ticks_per_unit())
            .map_err(Error::herald)?;
        let latency = model
            .timing(base)
            .map_err(Error::herald)?
            .combining()
            .latency;
        let scale = base.ticks_per_unit() / schedule.base().ticks_per_unit();
        let n = schedule.n() as usize;
        // (time, receive first, sequence, op)
        let mut events: Vec<Vec<(u64, u8, usize, CombineOp)>> = vec![Vec::new(); n];
        for (i, s) in schedule.sends().enumerate() {
            let (from, to) = (s.from as usize, s.to as usize);
            if to >= n || to == from {
                return Err(Error::Herald(format!(
                    "send from {from} to {to}: no such receiver"
                )));
            }
            let at =
                s.at.checked_mul(scale)
                    .ok_or_else(|| Error::Herald("time overflow".into()))?;
            let arrival = at
                .checked_add(latency)
                .ok_or_else(|| Error::Herald("time overflow".into()))?;
            events[from].push((at, 1, i, CombineOp::Send(to)));
            events[to].push((arrival, 0, i, CombineOp::Recv(from)));
        }
        let ops = events
            .into_iter()
            .map(|mut e| {
                e.sort_unstable_by_key(|&(t, kind, i, _)| (t, kind, i));
                e.into_iter().map(|x| x.3).collect()
            })
            .collect();
        Ok(CombinePlan { collective, ops })
    }

    /// The collective.
    pub fn collective(&self) -> Collective {
        self.collective
    }

    /// The number of ranks.
    pub fn n(&self) -> usize {
        self.ops.len()
    }

    /// Rank `r`'s operations in order.
    pub fn ops(&self, r: usize) -> &[CombineOp] {
        &self.ops[r]
    }

    /// Whether rank `r` ends with the full result (the root of a reduce; every rank of an
    /// allreduce).
    pub fn has_result(&self, r: usize) -> bool {
        match self.collective {
            Collective::Reduce { root } => r == root as usize,
            _ => true,
        }
    }

    /// Runs this rank's part: `value` is this rank's contribution; on return it holds what the
    /// schedule leaves here (the sum of every contribution where [`has_result`](Self::has_result)).
    /// `scratch` keeps the receive and accumulator buffers between calls (reusing it avoids
    /// allocating, and faulting in, fresh pages every call).
    ///
    /// # Errors
    /// As [`BroadcastPlan::run`].
    pub fn run(
        &self,
        chan: &Channel,
        scratch: &mut CombineScratch,
        value: &mut Vec<u64>,
    ) -> Result<(), Error> {
        let me = ranks_match(self.n(), chan)?;
        let ops = &self.ops[me];
        let recvs = ops
            .iter()
            .filter(|op| matches!(op, CombineOp::Recv(_)))
            .count();
        let sends = ops.len() - recvs;
        let len = value.len();
        // Every receive, and every accumulator after a receive, has its own buffer.
        for v in [&mut scratch.inbox, &mut scratch.accs] {
            v.resize_with(recvs, Vec::new);
            v.iter_mut().for_each(|b| b.resize(len, 0));
        }
        if run_one_each(chan, ops, scratch, value)? {
            return Ok(());
        }
        let last = {
            let mut posted: Small<RecvReq<'_>> = SmallVec::with_capacity(recvs);
            let froms = ops.iter().filter_map(|op| match op {
                CombineOp::Recv(f) => Some(*f),
                CombineOp::Send(_) => None,
            });
            for (buf, from) in scratch.inbox.iter_mut().zip(froms) {
                posted.push(chan.irecv(bytemuck::cast_slice_mut(buf), from, COMBINE_TAG)?);
            }
            let mut acc: &[u64] = value;
            let mut last = None;
            let mut fresh = scratch.accs.iter_mut().enumerate();
            // `drain`, not `into_iter`: the lists stay where they are on the stack (moving a
            // list of eight requests is a copy of half a KiB per call).
            let mut posted = posted.drain(..);
            let mut inflight: Small<SendReq<'_>> = SmallVec::with_capacity(sends);
            for op in ops {
                match *op {
                    CombineOp::Send(to) => {
                        inflight.push(chan.isend(bytemuck::cast_slice(acc), to, COMBINE_TAG)?);
                    }
                    CombineOp::Recv(_) => {
                        let req = posted.next().expect("posted in op order");
                        let got = req.wait()?;
                        let (i, out) = fresh.next().expect("one accumulator per receive");
                        fold(out, acc, got);
                        acc = out;
                        last = Some(i);
                    }
                }
            }
            SendReq::wait_all(inflight.drain(..))?;
            last
        };
        if let Some(i) = last {
            std::mem::swap(value, &mut scratch.accs[i]);
        }
        Ok(())
    }
}

/// Runs a rank's part with at most one receive and one send (an exchange of two ranks, a
/// chain's link, a tree's leaf or a two-rank reduce's root) without the general path's request
/// lists: the same operations in the same order, for the small values whose time is mostly the
/// per-call bookkeeping. `Ok(false)` (nothing done) for any other part. `scratch` has one
/// buffer of the value's length in `inbox` and in `accs` per receive.
fn run_one_each(
    chan: &Channel,
    ops: &[CombineOp],
    scratch: &mut CombineScratch,
    value: &mut Vec<u64>,
) -> Result<bool, Error> {
    let (inbox, accs) = (&mut scratch.inbox, &mut scratch.accs);
    match *ops {
        [] => {}
        [CombineOp::Send(to)] => chan.send(bytemuck::cast_slice(value), to, COMBINE_TAG)?,
        [CombineOp::Recv(from)] => {
            chan.recv(bytemuck::cast_slice_mut(&mut inbox[0]), from, COMBINE_TAG)?;
            fold(&mut accs[0], value, bytemuck::cast_slice(&inbox[0]));
            std::mem::swap(value, &mut accs[0]);
        }
        [CombineOp::Recv(from), CombineOp::Send(to)] => {
            chan.recv(bytemuck::cast_slice_mut(&mut inbox[0]), from, COMBINE_TAG)?;
            fold(&mut accs[0], value, bytemuck::cast_slice(&inbox[0]));
            chan.send(bytemuck::cast_slice(&accs[0]), to, COMBINE_TAG)?;
            std::mem::swap(value, &mut accs[0]);
        }
        [CombineOp::Send(to), CombineOp::Recv(from)] => {
            // The receive is posted before the send starts, as the general path posts every
            // receive first; the send completes before the combine (it is the combine's
            // input, so either order reads the same bytes).
            let got = bytemuck::cast_slice_mut(&mut inbox[0]);
            chan.sendrecv(bytemuck::cast_slice(value), to, got, from, COMBINE_TAG)?;
            fold(&mut accs[0], value, bytemuck::cast_slice(&inbox[0]));
            std::mem::swap(value, &mut accs[0]);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// `out = acc + got`, element-wise (wrapping): the combine of every combining plan.
pub(crate) fn fold(out: &mut [u64], acc: &[u64], got: &[u8]) {
    let got: &[u64] = bytemuck::cast_slice(got);
    for ((o, a), g) in out.iter_mut().zip(acc).zip(got) {
        *o = a.wrapping_add(*g);
    }
}

/// `value += got`, element-wise (wrapping): the combine of the ring and of recursive halving.
pub(crate) fn add(value: &mut [u64], got: &[u64]) {
    for (v, g) in value.iter_mut().zip(got) {
        *v = v.wrapping_add(*g);
    }
}

/// Buffers a [`CombinePlan`] reuses between calls.
#[derive(Debug, Default)]
pub struct CombineScratch {
    inbox: Vec<Vec<u64>>,
    accs: Vec<Vec<u64>>,
    /// The ring's and the halving allreduce's receive buffer.
    pub(crate) chunks: Vec<u64>,
}

/// Tag of the ring allreduce's messages.
/// (Unique among herald-mpi's tags: blocks 0 … 31 999, calibration 32 764–32 765, stop notices
/// 32 766, combining 32 767.)
const RING_TAG: u16 = 32_763;

/// Allreduce of `n` ranks by a ring: a reduce-scatter, then an allgather (module docs).
///
/// # Examples
///
/// ```
/// use herald_mpi::RingAllreduce;
/// let ring = RingAllreduce::new(4)?;
/// // 10 elements in 4 chunks of nearly equal length
/// let chunks: Vec<_> = (0..4).map(|i| ring.chunk(10, i)).collect();
/// assert_eq!(chunks, [0..2, 2..5, 5..7, 7..10]);
/// # Ok::<(), herald_mpi::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingAllreduce {
    n: usize,
}

impl RingAllreduce {
    /// The ring of `n` ranks (rank `r` sends to `r + 1` and receives from `r − 1`, mod `n`).
    ///
    /// # Errors
    /// [`Error::Usage`] if `n` is 0.
    pub fn new(n: usize) -> Result<RingAllreduce, Error> {
        if n == 0 {
            return Err(Error::Usage("a ring needs at least one rank".into()));
        }
        Ok(RingAllreduce { n })
    }

    /// The number of ranks.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The elements of chunk `i` of a value of `len` elements: `[i·len/n, (i+1)·len/n)`.
    pub fn chunk(&self, len: usize, i: usize) -> std::ops::Range<usize> {
        let at = |k: usize| (k as u128 * len as u128 / self.n as u128) as usize;
        at(i)..at(i + 1)
    }

    /// Reduce-scatter step `s` of rank `me`: the chunk it sends right (`me − s`) and the chunk
    /// it receives from the left and adds (`me − s − 1`), mod `n`.
    pub fn reduce_step(&self, me: usize, s: usize) -> (usize, usize) {
        let n = self.n;
        ((me + n - s % n) % n, (me + 2 * n - s % n - 1) % n)
    }

    /// Allgather step `s` of rank `me`: the summed chunk it sends right (`me + 1 − s`) and the
    /// one it receives from the left (`me − s`), mod `n`.
    pub fn gather_step(&self, me: usize, s: usize) -> (usize, usize) {
        let n = self.n;
        ((me + 1 + n - s % n) % n, (me + n - s % n) % n)
    }

    /// What a flat model predicts for a value of `bytes` bytes: `n − 1` steps of one chunk's
    /// message with the combine (`combine` of its bytes, ns, [`crate::allreduce::sized`]),
    /// `n − 1` without (each step a `sendrecv`, the next step's send waiting for this one's
    /// receive), in the model's time units; the longest chunk's bytes.
    ///
    /// # Errors
    /// [`Error::Herald`] on model or time errors; [`Error::Usage`] for a hierarchical model.
    pub fn predicted(
        &self,
        model: &Model,
        bytes: u64,
        combine: &dyn Fn(u64) -> f64,
    ) -> Result<f64, Error> {
        let steps = (self.n - 1) as u64;
        if steps == 0 {
            return Ok(0.0);
        }
        let chunk = bytes.div_ceil(self.n as u64).max(1);
        let step = crate::allreduce::message_ns(model, chunk, Some(combine))?
            + crate::allreduce::message_ns(model, chunk, None)?;
        Ok(step * steps as f64)
    }

    /// Runs this rank's part: `value` is this rank's contribution; on return every rank's
    /// `value` holds the element-wise (wrapping) sum of all contributions, which must have one
    /// length on every rank. `scratch` keeps the receive buffer between calls.
    ///
    /// # Errors
    /// [`Error::Usage`] if `chan` has another number of ranks; as [`BroadcastPlan::run`].
    pub fn run(
        &self,
        chan: &Channel,
        scratch: &mut CombineScratch,
        value: &mut [u64],
    ) -> Result<(), Error> {
        let me = ranks_match(self.n, chan)?;
        let n = self.n;
        if n == 1 {
            return Ok(());
        }
        let len = value.len();
        let (right, left) = ((me + 1) % n, (me + n - 1) % n);
        let inbox = &mut scratch.chunks;
        inbox.resize(len.div_ceil(n), 0);
        for s in 0..n - 1 {
            let (out, inc) = self.reduce_step(me, s);
            let (out, inc) = (self.chunk(len, out), self.chunk(len, inc));
            let got = &mut inbox[..inc.len()];
            chan.sendrecv(
                bytemuck::cast_slice(&value[out]),
                right,
                bytemuck::cast_slice_mut(got),
                left,
                RING_TAG,
            )?;
            add(&mut value[inc], got);
        }
        for s in 0..n - 1 {
            let (out, inc) = self.gather_step(me, s);
            let (out, inc) = (self.chunk(len, out), self.chunk(len, inc));
            let (send, recv) = disjoint(value, out, inc);
            chan.sendrecv(
                bytemuck::cast_slice(send),
                right,
                bytemuck::cast_slice_mut(recv),
                left,
                RING_TAG,
            )?;
        }
        Ok(())
    }
}

/// `value[a]` to read and `value[b]` to write, two disjoint ranges.
pub(crate) fn disjoint(
    value: &mut [u64],
    a: std::ops::Range<usize>,
    b: std::ops::Range<usize>,
) -> (&[u64], &mut [u64]) {
    if a.end <= b.start {
        let (lo, hi) = value.split_at_mut(b.start);
        (&lo[a], &mut hi[..b.len()])
    } else {
        debug_assert!(b.end <= a.start, "chunks are disjoint");
        let (lo, hi) = value.split_at_mut(a.start);
        (&hi[..a.len()], &mut lo[b])
    }
}

/// This rank's index in `chan`, if `chan` has the `n` ranks a schedule is for.
///
/// # Errors
/// [`Error::Usage`] if it has another number of ranks.
pub(crate) fn ranks_match(n: usize, chan: &Channel) -> Result<usize, Error> {
    if chan.size() != n {
        return Err(Error::Usage(format!(
            "the schedule is for {n} ranks, the communicator has {}",
            chan.size()
        )));
    }
    Ok(chan.rank())
}

/// `n` ranks' [`contribution`](crate::contribution)s of `len` elements and their sum, for the
/// allreduces' tests.
#[cfg(test)]
pub(crate) fn contributions_and_sum(n: usize, len: usize) -> (Vec<Vec<u64>>, Vec<u64>) {
    let seed = len as u64;
    let v = (0..n)
        .map(|r| {
            let mut x = vec![0u64; len];
            crate::contribution(&mut x, r, seed);
            x
        })
        .collect();
    (v, crate::sum_of_contributions(n, len, seed))
}

#[cfg(test)]
mod tests {
    use super::*;
    /// Every rank of rings of 1 … 9 ranks ends with the sum of every contribution, for values
    /// shorter and longer than the ring: the steps run in lockstep, each rank's sent chunk
    /// arriving at its right neighbour, as `sendrecv` pairs them.
    #[test]
    fn the_ring_s_steps_sum_every_contribution_everywhere() {
        for n in 1..=9usize {
            let ring = RingAllreduce::new(n).unwrap();
            for len in [0usize, 1, n.saturating_sub(1), n, 3 * n + 2, 100] {
                let (mut v, want) = contributions_and_sum(n, len);
                // One phase in lockstep: every rank sends chunk `step(r, s).0` right; its right
                // neighbour adds it (reduce-scatter) or stores it (allgather) at `step(r, s).1`.
                let mut phase = |step: fn(&RingAllreduce, usize, usize) -> (usize, usize),
                                 add: bool| {
                    for s in 0..n.saturating_sub(1) {
                        let sent: Vec<Vec<u64>> = (0..n)
                            .map(|r| v[r][ring.chunk(len, step(&ring, r, s).0)].to_vec())
                            .collect();
                        for (r, vr) in v.iter_mut().enumerate() {
                            let left = (r + n - 1) % n;
                            assert_eq!(step(&ring, left, s).0, step(&ring, r, s).1);
                            let inc = &mut vr[ring.chunk(len, step(&ring, r, s).1)];
                            for (x, g) in inc.iter_mut().zip(&sent[left]) {
                                *x = if add { x.wrapping_add(*g) } else { *g };
                            }
                        }
                    }
                };
                phase(RingAllreduce::reduce_step, true);
                phase(RingAllreduce::gather_step, false);
                for (r, vr) in v.iter().enumerate() {
                    assert_eq!(vr, &want, "n = {n}, len = {len}, rank {r}");
                }
            }
        }
        assert!(RingAllreduce::new(0).is_err());
    }

    #[test]
    fn disjoint_ranges_read_one_and_write_the_other() {
        let mut v: Vec<u64> = (0..10).collect();
        let (a, b) = disjoint(&mut v, 7..10, 2..5);
        assert_eq!(a, [7, 8, 9]);
        b.copy_from_slice(&[0, 0, 0]);
        let (a, b) = disjoint(&mut v, 0..2, 5..7);
        assert_eq!(a, [0, 1]);
        b[0] = 50;
        assert_eq!(v, [0, 1, 0, 0, 0, 50, 6, 7, 8, 9]);
    }

    use herald::{generate, model::OnePort, Algorithm, LogP, Postal, Ratio, Request};

    /// Runs every rank's combine ops sequentially in global time order, on values, without
    /// MPI: a message is what its sender held when its send op ran.
    fn simulate(plan: &CombinePlan, initial: &[u64]) -> Vec<u64> {
        let n = plan.n();
        let mut value = initial.to_vec();
        let mut next = vec![0usize; n];
        let mut mailbox: std::collections::HashMap<
            (usize, usize),
            std::collections::VecDeque<u64>,
        > = Default::default();
        loop {
            let mut progressed = false;
            for r in 0..n {
                while let Some(op) = plan.ops(r).get(next[r]) {
                    match *op {
                        CombineOp::Send(to) => {
                            mailbox.entry((r, to)).or_default().push_back(value[r]);
                        }
                        CombineOp::Recv(from) => {
                            match mailbox.get_mut(&(from, r)).and_then(|q| q.pop_front()) {
                                Some(v) => value[r] = value[r].wrapping_add(v),
                                None => break,
                            }
                        }
                    }
                    next[r] += 1;
                    progressed = true;
                }
            }
            if !progressed {
                break;
            }
        }
        assert!(
            (0..n).all(|r| next[r] == plan.ops(r).len()),
            "a rank waits forever"
        );
        value
    }

    /// Contributions that are distinct powers of two: a sum names exactly the ranks in it.
    fn check_against_evaluate(schedule: &Schedule, model: &Model) {
        let plan = CombinePlan::new(schedule, model).unwrap();
        let n = schedule.n() as usize;
        let initial: Vec<u64> = (0..n).map(|r| 1u64 << r).collect();
        let got = simulate(&plan, &initial);
        let eval = herald::sim::evaluate(
            schedule,
            model,
            initial.clone(),
            herald::sim::Operands::Commutative,
            |a: &u64, b: &u64| a + b,
        )
        .unwrap();
        let all = (1u64 << n) - 1;
        for (r, &v) in got.iter().enumerate() {
            assert_eq!(v, *eval.value(r as u32), "rank {r}");
            if plan.has_result(r) {
                assert_eq!(v, all, "rank {r} lacks a contribution");
            }
        }
    }

    #[test]
    fn combining_order_matches_herald_evaluate() {
        let r = Ratio::integer;
        let logp = Model::from(LogP::new(r(6), r(2), r(4), r(0)).unwrap());
        let postal = Model::from(Postal::new("5/2".parse().unwrap()).unwrap());
        for model in [&logp, &postal] {
            for n in [2u32, 3, 5, 8, 13, 16] {
                for (algo, root) in [
                    (Algorithm::Reduce, 0),
                    (Algorithm::Reduce, n - 1),
                    (Algorithm::Allreduce, 0),
                ] {
                    let s = generate(&Request::broadcast(algo, n, 1, root), model).unwrap();
                    check_against_evaluate(&s, model);
                }
            }
        }
    }

    #[test]
    fn broadcast_parts_cover_every_block_once_first() {
        for (n, m) in [(2u32, 1u32), (5, 4), (8, 3), (13, 7)] {
            let s = generate(
                &Request::broadcast(Algorithm::Optimal, n, m, 1),
                &Model::from(OnePort),
            )
            .unwrap();
            let plan = BroadcastPlan::new(&s).unwrap();
            for r in 0..n as usize {
                let firsts: Vec<u32> = {
                    let mut v: Vec<u32> = plan
                        .part(r)
                        .recvs
                        .iter()
                        .filter(|x| x.2)
                        .map(|x| x.1)
                        .collect();
                    v.sort_unstable();
                    v
                };
                let want: Vec<u32> = if r == 1 { vec![] } else { (0..m).collect() };
                assert_eq!(firsts, want, "n {n} m {m} rank {r}");
            }
            // every send has a matching receive on the other side
            let mut sent: Vec<(usize, usize, u32)> = Vec::new();
            let mut got: Vec<(usize, usize, u32)> = Vec::new();
            for r in 0..n as usize {
                sent.extend(plan.part(r).sends.iter().map(|&(to, b)| (r, to, b)));
                got.extend(plan.part(r).recvs.iter().map(|&(from, b, _)| (from, r, b)));
            }
            sent.sort_unstable();
            got.sort_unstable();
            assert_eq!(sent, got);
        }
    }

    #[test]
    fn block_ranges_partition_the_payload() {
        for bytes in [0usize, 1, 7, 8, 55, 56, 1000, 4096] {
            for m in [1u32, 2, 3, 4, 16, 64] {
                let r = block_ranges(bytes, m);
                assert_eq!(r.len(), m as usize);
                assert_eq!(r[0].start, 0);
                assert_eq!(r.last().unwrap().end, bytes);
                assert!(r.windows(2).all(|w| w[0].end == w[1].start));
            }
        }
    }
}
