//! In-process collectives, SPMD style: a [`Comm`] is built once for a team size; each rank
//! gets a [`CommRank`] endpoint (hand them out with [`Team::run_with`](crate::Team::run_with))
//! whose methods are the collectives: broadcast, reduce, allreduce, scan, allgather, barrier.
//!
//! # Design
//!
//! * **Channels.** One SPSC ring per ordered pair of ranks, created lazily the first time the
//!   pair talks (so only the edges the collectives use exist), kept in the `Comm` and taken by
//!   the two endpoints. Every collective shares them; each directed edge is FIFO.
//! * **Messages.** A message is a byte stream `header ‖ payload` cut into 56-byte lines: the
//!   first line holds the 8-byte header and 48 payload bytes, the next lines 56 each. The header
//!   names the call (collective kind, call number mod 256, root, payload length mod 2³²), so a
//!   receiver detects a mismatched call when the first line arrives.
//! * **Mismatches that would deadlock.** Each rank publishes its current call's header. A rank
//!   that has to wait for a peer checks the peer's published call: same call number but
//!   another header means the ranks called different collectives (or roots, or sizes), which
//!   would otherwise wait forever. Either detection poisons the `Comm`, wakes every rank, and
//!   every rank then returns an error ([`CollectiveError::Mismatch`] or
//!   [`CollectiveError::Poisoned`]).
//! * **Broadcast** streams the payload down a tree compiled from a schedule (default: the
//!   binomial schedule for the root; compiled once per root and cached in the `Comm`) in
//!   blocks of `block_lines` whole lines: a rank receives a block from its parent and forwards
//!   it to its children in the schedule's send order, so large payloads are pipelined.
//! * **Combining collectives** combine in rank order, so any associative `op` works, commutative
//!   or not: the reduction tree is the binomial tree rooted at rank 0 in which the subtree of
//!   rank `v` is the contiguous range `v .. v + lowbit(v)`, and a rank combines its own value
//!   with its children's partials left to right. Reduce to another root adds one hop; allreduce
//!   is reduce to 0 plus broadcast; scan adds a down-sweep of exclusive prefixes; allgather
//!   gathers contiguous ranges up the same tree and broadcasts the result.
//! * **Waiting** uses one [`Signal`] per rank: spin, yield, park. A sender that finds the ring
//!   full notifies the receiver and waits; a receiver that finds it empty notifies the sender
//!   and waits; both notify at the end of each block.

use super::channel::{channel, Receiver, Sender, TrySendWithError};
use super::line::Line;
use super::program::{Program, ProgramError};
use super::team::RuntimeError;
use super::wait::{Aborted, Signal};
use crate::model::{Model, Postal};
use crate::schedule::{generate, Algorithm, Request};
use crate::time::Ratio;
use bytemuck::Pod;
use crossbeam_utils::CachePadded;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The largest rank count a header can name (the root field has 20 bits).
pub const MAX_COMM_RANKS: usize = 1 << 20;

/// The kind of a collective call (carried in every message header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollectiveKind {
    /// [`CommRank::broadcast`] and friends.
    Broadcast,
    /// [`CommRank::reduce`].
    Reduce,
    /// [`CommRank::allreduce`].
    Allreduce,
    /// [`CommRank::scan`].
    Scan,
    /// [`CommRank::allgather`].
    Allgather,
    /// [`CommRank::barrier`].
    Barrier,
}

impl CollectiveKind {
    const ALL: [CollectiveKind; 6] = [
        CollectiveKind::Broadcast,
        CollectiveKind::Reduce,
        CollectiveKind::Allreduce,
        CollectiveKind::Scan,
        CollectiveKind::Allgather,
        CollectiveKind::Barrier,
    ];

    fn code(self) -> u64 {
        Self::ALL
            .iter()
            .position(|&k| k == self)
            .map_or(0, |i| i as u64 + 1)
    }

    fn from_code(code: u64) -> Option<CollectiveKind> {
        (code as usize)
            .checked_sub(1)
            .and_then(|i| Self::ALL.get(i).copied())
    }
}

/// What a message header says about its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallInfo {
    /// The collective (`None`: not a header herald writes).
    pub kind: Option<CollectiveKind>,
    /// The call's number on its rank, mod 256.
    pub seq: u8,
    /// The root (0 for rootless collectives).
    pub root: u32,
    /// The call's payload length in bytes, mod 2³².
    pub bytes: u32,
}

impl CallInfo {
    fn header(kind: CollectiveKind, seq: u64, root: usize, bytes: usize) -> u64 {
        kind.code() << 60
            | (seq & 0xff) << 52
            | (root as u64 & 0xf_ffff) << 32
            | (bytes as u64 & 0xffff_ffff)
    }

    fn decode(header: u64) -> CallInfo {
        CallInfo {
            kind: CollectiveKind::from_code(header >> 60),
            seq: (header >> 52) as u8,
            root: ((header >> 32) & 0xf_ffff) as u32,
            bytes: header as u32,
        }
    }
}

/// Errors of building a [`Comm`] or of a collective call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CollectiveError {
    /// A communicator needs at least one rank.
    #[error("a communicator needs at least one rank")]
    NoRanks,
    /// More ranks than the OS allows threads (or than a header can name).
    #[error("{ranks} ranks, but at most {max} are possible here")]
    TooManyRanks {
        /// Ranks asked for.
        ranks: usize,
        /// The limit (the OS's thread limit, or [`MAX_COMM_RANKS`]).
        max: usize,
    },
    /// A root outside `0 .. size`.
    #[error("root {root} is not a rank of a {size}-rank communicator")]
    Root {
        /// The root asked for.
        root: usize,
        /// The communicator's size.
        size: usize,
    },
    /// Ranks made different calls (collective, root or size), seen by `rank` from `peer`.
    #[error("rank {rank} expected {expected:?} but rank {peer} made {got:?}")]
    Mismatch {
        /// The rank that detected it.
        rank: usize,
        /// The peer whose call differs.
        peer: usize,
        /// This rank's call.
        expected: CallInfo,
        /// The peer's call.
        got: CallInfo,
    },
    /// Another rank detected a mismatch; the communicator is unusable until
    /// [`Comm::ranks`] is called again.
    #[error("the communicator was poisoned by a mismatched call on another rank")]
    Poisoned,
    /// A program for another team size, or one this executor cannot stream.
    #[error("program not executable here: {0}")]
    Program(#[from] ProgramError),
    /// Building the default schedule failed.
    #[error("cannot build the default schedule: {0}")]
    Schedule(String),
    /// A panic on another rank aborted the team.
    #[error("the team was aborted by a panic in another worker")]
    Aborted,
    /// Setting up the team failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

impl From<Aborted> for CollectiveError {
    fn from(_: Aborted) -> CollectiveError {
        CollectiveError::Aborted
    }
}

/// Tuning of a [`Comm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommOptions {
    /// Lines per ring (at least 4).
    pub capacity: usize,
    /// Lines per pipelined broadcast block (at least 1).
    pub block_lines: usize,
}

impl Default for CommOptions {
    fn default() -> CommOptions {
        CommOptions {
            capacity: 256,
            block_lines: 64,
        }
    }
}

/// Both ends of one directed pair's ring, until the endpoints take them.
type Pair = (Option<Sender>, Option<Receiver>);

/// A communicator for a fixed number of ranks: channels, signals and cached programs.
///
/// # Examples
///
/// ```
/// use herald::{Comm, Team};
/// let mut team = Team::new(4)?;
/// let mut comm = Comm::new(4)?;
/// let mut ranks = comm.ranks();
/// let sums = team.run_with(&mut ranks, |_, c| {
///     let mut data = if c.rank() == 2 { *b"hello" } else { [0; 5] };
///     c.broadcast(2, &mut data).unwrap();
///     assert_eq!(&data, b"hello");
///     c.allreduce(c.rank() as u64, |a, b| a + b).unwrap()
/// });
/// assert_eq!(sums, [6, 6, 6, 6]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Comm {
    size: usize,
    options: CommOptions,
    /// Directed pair `(from, to)` → ends not yet taken.
    pairs: Mutex<HashMap<(u32, u32), Pair>>,
    /// One per rank.
    signals: Box<[CachePadded<Signal>]>,
    /// Each rank's current call header (for mismatch detection while waiting).
    calls: Box<[CachePadded<AtomicU64>]>,
    /// Raised by the first detected mismatch.
    poisoned: AtomicBool,
    /// Default broadcast programs by root.
    programs: Mutex<HashMap<u32, Arc<Program>>>,
}

impl Comm {
    /// A communicator for `size` ranks with default options.
    ///
    /// # Errors
    ///
    /// [`CollectiveError::NoRanks`], [`CollectiveError::TooManyRanks`].
    ///
    /// ```
    /// assert!(matches!(herald::Comm::new(0), Err(herald::CollectiveError::NoRanks)));
    /// ```
    pub fn new(size: usize) -> Result<Comm, CollectiveError> {
        Comm::with_options(size, CommOptions::default())
    }

    /// A communicator for `size` ranks.
    ///
    /// # Errors
    ///
    /// As [`Comm::new`].
    pub fn with_options(size: usize, options: CommOptions) -> Result<Comm, CollectiveError> {
        if size == 0 {
            return Err(CollectiveError::NoRanks);
        }
        let max = max_ranks();
        if size > max {
            return Err(CollectiveError::TooManyRanks { ranks: size, max });
        }
        let options = CommOptions {
            capacity: options.capacity.max(4),
            block_lines: options.block_lines.max(1),
        };
        Ok(Comm {
            size,
            options,
            pairs: Mutex::new(HashMap::new()),
            signals: (0..size).map(|_| CachePadded::new(Signal::new())).collect(),
            calls: (0..size)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
            poisoned: AtomicBool::new(false),
            programs: Mutex::new(HashMap::new()),
        })
    }

    /// The number of ranks.
    #[must_use]
    pub fn size(&self) -> usize {
        self.size
    }

    /// The options in force.
    #[must_use]
    pub fn options(&self) -> CommOptions {
        self.options
    }

    /// One endpoint per rank, in rank order (fresh channels; clears a poisoned state).
    pub fn ranks(&mut self) -> Vec<CommRank<'_>> {
        self.pairs
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        *self.poisoned.get_mut() = false;
        for c in self.calls.iter() {
            c.store(0, Ordering::Relaxed);
        }
        let comm: &Comm = self;
        (0..comm.size)
            .map(|rank| CommRank {
                comm,
                rank,
                seq: 0,
                out: (0..comm.size).map(|_| None).collect(),
                inc: (0..comm.size).map(|_| None).collect(),
                trees: (0..comm.size).map(|_| None).collect(),
            })
            .collect()
    }

    fn take_sender(&self, from: usize, to: usize) -> Sender {
        let mut pairs = self.pairs.lock().unwrap_or_else(PoisonError::into_inner);
        let pair = self.pair(&mut pairs, from, to);
        pair.0
            .take()
            .unwrap_or_else(|| channel(self.options.capacity).0)
    }

    fn take_receiver(&self, from: usize, to: usize) -> Receiver {
        let mut pairs = self.pairs.lock().unwrap_or_else(PoisonError::into_inner);
        let pair = self.pair(&mut pairs, from, to);
        pair.1
            .take()
            .unwrap_or_else(|| channel(self.options.capacity).1)
    }

    fn pair<'m>(
        &self,
        pairs: &'m mut HashMap<(u32, u32), Pair>,
        from: usize,
        to: usize,
    ) -> &'m mut Pair {
        pairs.entry((from as u32, to as u32)).or_insert_with(|| {
            let (tx, rx) = channel(self.options.capacity);
            (Some(tx), Some(rx))
        })
    }

    /// The default (binomial) broadcast program for `root`, compiled once.
    fn default_program(&self, root: usize) -> Result<Arc<Program>, CollectiveError> {
        let mut programs = self.programs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = programs.get(&(root as u32)) {
            return Ok(Arc::clone(p));
        }
        let err = |e: &dyn std::fmt::Display| CollectiveError::Schedule(e.to_string());
        let model = Model::from(Postal::new(Ratio::integer(2)).map_err(|e| err(&e))?);
        let req = Request::broadcast(Algorithm::Binomial, self.size as u32, 1, root as u32);
        let schedule = generate(&req, &model).map_err(|e| err(&e))?;
        let program = Arc::new(Program::compile(&schedule)?);
        programs.insert(root as u32, Arc::clone(&program));
        Ok(program)
    }

    fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }

    #[cold]
    fn poison(&self) {
        self.poisoned.store(true, Ordering::SeqCst);
        for s in self.signals.iter() {
            s.notify();
        }
    }

    /// A mismatch error if `peer` is at the same call as `header` with another header.
    fn check_peer(&self, me: usize, peer: usize, header: u64) -> Option<CollectiveError> {
        if self.is_poisoned() {
            return Some(CollectiveError::Poisoned);
        }
        let theirs = self.calls[peer].load(Ordering::Acquire);
        let same_call = (theirs >> 52) & 0xff == (header >> 52) & 0xff && theirs >> 60 != 0;
        (same_call && theirs != header).then(|| self.mismatch(me, peer, header, theirs))
    }

    #[cold]
    fn mismatch(&self, me: usize, peer: usize, mine: u64, theirs: u64) -> CollectiveError {
        self.poison();
        CollectiveError::Mismatch {
            rank: me,
            peer,
            expected: CallInfo::decode(mine),
            got: CallInfo::decode(theirs),
        }
    }
}

/// The most ranks this process can have: the OS thread limit, capped at [`MAX_COMM_RANKS`].
fn max_ranks() -> usize {
    std::fs::read_to_string("/proc/sys/kernel/threads-max")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .map_or(MAX_COMM_RANKS, |m| m.min(MAX_COMM_RANKS))
}

/// Lines of a message of `bytes` payload bytes (header included).
fn lines_for(bytes: usize) -> usize {
    (8 + bytes).div_ceil(Line::PAYLOAD)
}

/// Writes line `k` of the stream `header ‖ buf` into a slot's payload `p` (every byte the
/// receiver reads: the header and the line's share of `buf`).
#[inline]
fn fill_line(k: usize, header: u64, buf: &[u8], p: &mut [u8; Line::PAYLOAD]) {
    if k == 0 {
        p[..8].copy_from_slice(&header.to_le_bytes());
        let n = buf.len().min(Line::PAYLOAD - 8);
        p[8..8 + n].copy_from_slice(&buf[..n]);
    } else {
        let start = k * Line::PAYLOAD - 8;
        let end = (start + Line::PAYLOAD).min(buf.len());
        p[..end - start].copy_from_slice(&buf[start..end]);
    }
}

/// Stores line `k` of a stream into `buf`; returns line 0's header (0 for other lines).
#[inline]
fn store_line(k: usize, p: &[u8; Line::PAYLOAD], buf: &mut [u8]) -> u64 {
    if k == 0 {
        let n = buf.len().min(Line::PAYLOAD - 8);
        buf[..n].copy_from_slice(&p[8..8 + n]);
        u64::from_le_bytes(p[..8].try_into().expect("8 bytes"))
    } else {
        let start = k * Line::PAYLOAD - 8;
        let end = (start + Line::PAYLOAD).min(buf.len());
        buf[start..end].copy_from_slice(&p[..end - start]);
        0
    }
}

/// One rank's endpoint of a [`Comm`]: `Send`, not `Sync`; hand one to each rank.
///
/// Every rank must make the same sequence of calls with the same roots and sizes. Calls may be
/// made in a loop; the default programs are compiled once per root.
#[derive(Debug)]
pub struct CommRank<'c> {
    comm: &'c Comm,
    rank: usize,
    /// Calls made so far.
    seq: u64,
    /// Sending ends by receiver, taken on first use.
    out: Vec<Option<Sender>>,
    /// Receiving ends by sender, taken on first use.
    inc: Vec<Option<Receiver>>,
    /// This rank's part of the default broadcast program, by root: a private copy, so a call
    /// touches no line shared with other ranks (an `Arc` clone would bounce its count).
    trees: Vec<Option<Tree>>,
}

/// One rank's part of a single-block broadcast program.
#[derive(Debug, Clone, Default)]
struct Tree {
    /// The rank it hears from (`None` at the root).
    parent: Option<usize>,
    /// The ranks it sends to, in send order.
    children: Vec<usize>,
}

impl Tree {
    fn of(program: &Program, rank: usize) -> Tree {
        let prog = program.rank(rank as u32);
        Tree {
            parent: prog.incoming.first().map(|(from, _)| *from as usize),
            children: prog.sends.iter().map(|&(to, _)| to as usize).collect(),
        }
    }
}

impl CommRank<'_> {
    /// This rank.
    #[must_use]
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    #[must_use]
    pub fn size(&self) -> usize {
        self.comm.size
    }

    /// Starts a call: checks the root and the poison flag, numbers the call, publishes its header.
    fn begin(
        &mut self,
        kind: CollectiveKind,
        root: usize,
        bytes: usize,
    ) -> Result<u64, CollectiveError> {
        let size = self.comm.size;
        if root >= size {
            return Err(CollectiveError::Root { root, size });
        }
        if self.comm.is_poisoned() {
            return Err(CollectiveError::Poisoned);
        }
        self.seq += 1;
        let header = CallInfo::header(kind, self.seq, root, bytes);
        self.comm.calls[self.rank].store(header, Ordering::Release);
        Ok(header)
    }

    /// Sends lines `lines` of the stream `header ‖ buf` to `to`.
    fn send_stream(
        &mut self,
        to: usize,
        header: u64,
        buf: &[u8],
        lines: std::ops::Range<usize>,
    ) -> Result<(), CollectiveError> {
        let (comm, me) = (self.comm, self.rank);
        let tx = self.out[to].get_or_insert_with(|| comm.take_sender(me, to));
        for k in lines {
            let fill = |p: &mut [u8; Line::PAYLOAD]| fill_line(k, header, buf, p);
            if tx.try_send_with(fill).is_err() {
                comm.signals[to].notify();
                send_wait(comm, me, to, header, tx, &fill)?;
            }
        }
        comm.signals[to].notify();
        Ok(())
    }

    /// Receives lines `lines` of the stream `header ‖ buf` from `from`; line 0's header must
    /// equal `header`.
    fn recv_stream(
        &mut self,
        from: usize,
        header: u64,
        buf: &mut [u8],
        lines: std::ops::Range<usize>,
    ) -> Result<(), CollectiveError> {
        let (comm, me) = (self.comm, self.rank);
        let rx = self.inc[from].get_or_insert_with(|| comm.take_receiver(from, me));
        for k in lines {
            let got = match rx.try_recv_with(|p| store_line(k, p, buf)) {
                Ok(got) => got,
                Err(_) => {
                    comm.signals[from].notify();
                    recv_wait(comm, me, from, header, rx, |p| store_line(k, p, buf))?
                }
            };
            if k == 0 && got != header {
                return Err(comm.mismatch(me, from, header, got));
            }
        }
        comm.signals[from].notify();
        Ok(())
    }

    fn send_value<T: Pod>(&mut self, to: usize, header: u64, v: &T) -> Result<(), CollectiveError> {
        let bytes = bytemuck::bytes_of(v);
        self.send_stream(to, header, bytes, 0..lines_for(bytes.len()))
    }

    fn recv_value<T: Pod>(&mut self, from: usize, header: u64) -> Result<T, CollectiveError> {
        let mut v = T::zeroed();
        let bytes = bytemuck::bytes_of_mut(&mut v);
        let n = lines_for(bytes.len());
        self.recv_stream(from, header, bytes, 0..n)?;
        Ok(v)
    }

    /// Broadcasts `buf` from `root` to every rank over the default (binomial) schedule. Every
    /// rank passes a buffer of the same length; the root's contents end up in all of them.
    ///
    /// # Errors
    ///
    /// [`CollectiveError::Root`] for a root out of range (on every rank, before any message),
    /// [`CollectiveError::Mismatch`]/[`CollectiveError::Poisoned`] when ranks' calls differ,
    /// [`CollectiveError::Aborted`] after a panic elsewhere in the team.
    pub fn broadcast(&mut self, root: usize, buf: &mut [u8]) -> Result<(), CollectiveError> {
        let header = self.begin(CollectiveKind::Broadcast, root, buf.len())?;
        self.with_tree(root, |me, tree| me.stream_broadcast(tree, header, buf))
    }

    /// Broadcasts `buf` over the caller's compiled schedule `program` (one block; each block of
    /// `block_lines` lines is forwarded as soon as it arrives).
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast), and [`CollectiveError::Program`] if the program is
    /// for another size, has more than one block, or a rank hears from more than one sender.
    pub fn broadcast_with(
        &mut self,
        program: &Program,
        buf: &mut [u8],
    ) -> Result<(), CollectiveError> {
        let size = self.comm.size;
        if program.n() != size {
            let team = size;
            return Err(ProgramError::TeamSize {
                program: program.n(),
                team,
            }
            .into());
        }
        if program.blocks() != 1 || (0..size as u32).any(|p| program.rank(p).incoming.len() > 1) {
            return Err(ProgramError::Collective("multi-block or multi-sender broadcast").into());
        }
        let header = self.begin(
            CollectiveKind::Broadcast,
            program.root() as usize,
            buf.len(),
        )?;
        let tree = Tree::of(program, self.rank);
        self.stream_broadcast(&tree, header, buf)
    }

    /// Broadcasts a plain-old-data value from `root` (any size).
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    pub fn broadcast_value<T: Pod>(
        &mut self,
        root: usize,
        value: &mut T,
    ) -> Result<(), CollectiveError> {
        self.broadcast(root, bytemuck::bytes_of_mut(value))
    }

    /// Runs `f` with this rank's part of the default program for `root` (built once).
    fn with_tree<R>(
        &mut self,
        root: usize,
        f: impl FnOnce(&mut Self, &Tree) -> Result<R, CollectiveError>,
    ) -> Result<R, CollectiveError> {
        let tree = match self.trees[root].take() {
            Some(t) => t,
            None => Tree::of(&*self.comm.default_program(root)?, self.rank),
        };
        let result = f(self, &tree);
        self.trees[root] = Some(tree);
        result
    }

    /// Streams `header ‖ buf` down `tree` in blocks of `block_lines` lines.
    fn stream_broadcast(
        &mut self,
        tree: &Tree,
        header: u64,
        buf: &mut [u8],
    ) -> Result<(), CollectiveError> {
        let total = lines_for(buf.len());
        let block = self.comm.options.block_lines;
        let mut start = 0;
        while start < total {
            let lines = start..(start + block).min(total);
            if let Some(p) = tree.parent {
                self.recv_stream(p, header, buf, lines.clone())?;
            }
            for &to in &tree.children {
                self.send_stream(to, header, buf, lines.clone())?;
            }
            start = lines.end;
        }
        Ok(())
    }

    /// Combines every rank's value up the rank-ordered binomial tree rooted at 0. Returns this
    /// rank's subtree partial (the full result on rank 0) and, for scan, the partials before
    /// each child.
    fn reduce_up<T: Pod>(
        &mut self,
        header: u64,
        value: T,
        op: &impl Fn(T, T) -> T,
        mut before: Option<&mut Vec<T>>,
    ) -> Result<T, CollectiveError> {
        let (me, n) = (self.rank, self.comm.size);
        let mut acc = value;
        let mut k = 1;
        while k < n && me & k == 0 {
            if me + k < n {
                if let Some(b) = before.as_deref_mut() {
                    b.push(acc);
                }
                let child: T = self.recv_value(me + k, header)?;
                acc = op(acc, child);
            }
            k <<= 1;
        }
        if me != 0 {
            self.send_value(me - (me & me.wrapping_neg()), header, &acc)?;
        }
        Ok(acc)
    }

    /// Reduces every rank's `value` with `op` in rank order (`op` must be associative; it need
    /// not be commutative). The root gets `Some(v0 ∘ v1 ∘ … ∘ vn-1)`, the others `None`.
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    pub fn reduce<T: Pod>(
        &mut self,
        root: usize,
        value: T,
        op: impl Fn(T, T) -> T,
    ) -> Result<Option<T>, CollectiveError> {
        let size = std::mem::size_of::<T>();
        let header = self.begin(CollectiveKind::Reduce, root, size)?;
        let mut acc = self.reduce_up(header, value, &op, None)?;
        if root != 0 {
            if self.rank == 0 {
                self.send_value(root, header, &acc)?;
            } else if self.rank == root {
                acc = self.recv_value(0, header)?;
            }
        }
        Ok((self.rank == root).then_some(acc))
    }

    /// Every rank gets `v0 ∘ v1 ∘ … ∘ vn-1` (rank order; `op` associative).
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    pub fn allreduce<T: Pod>(
        &mut self,
        value: T,
        op: impl Fn(T, T) -> T,
    ) -> Result<T, CollectiveError> {
        let size = std::mem::size_of::<T>();
        let header = self.begin(CollectiveKind::Allreduce, 0, size)?;
        let mut acc = self.reduce_up(header, value, &op, None)?;
        let bytes = bytemuck::bytes_of_mut(&mut acc);
        self.with_tree(0, |me, tree| me.stream_broadcast(tree, header, bytes))?;
        Ok(acc)
    }

    /// Inclusive prefix: rank `r` gets `v0 ∘ … ∘ vr` (rank order; `op` associative).
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    pub fn scan<T: Pod>(&mut self, value: T, op: impl Fn(T, T) -> T) -> Result<T, CollectiveError> {
        let (me, n) = (self.rank, self.comm.size);
        let header = self.begin(CollectiveKind::Scan, 0, std::mem::size_of::<T>())?;
        let mut before = Vec::new();
        self.reduce_up(header, value, &op, Some(&mut before))?;
        let left: Option<T> = if me == 0 {
            None
        } else {
            Some(self.recv_value(me - (me & me.wrapping_neg()), header)?)
        };
        let mut k = 1;
        let mut i = 0;
        while k < n && me & k == 0 {
            if me + k < n {
                let part = before[i];
                let for_child = left.map_or(part, |l| op(l, part));
                self.send_value(me + k, header, &for_child)?;
                i += 1;
            }
            k <<= 1;
        }
        Ok(left.map_or(value, |l| op(l, value)))
    }

    /// Every rank gets every rank's value, in rank order.
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    pub fn allgather<T: Pod>(&mut self, value: T) -> Result<Vec<T>, CollectiveError> {
        let (me, n) = (self.rank, self.comm.size);
        let size = std::mem::size_of::<T>();
        let header = self.begin(CollectiveKind::Allgather, 0, size * n)?;
        let mut all = vec![T::zeroed(); n];
        all[me] = value;
        let mut k = 1;
        while k < n && me & k == 0 {
            if me + k < n {
                let range = me + k..(me + 2 * k).min(n);
                let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut all[range]);
                let lines = lines_for(bytes.len());
                self.recv_stream(me + k, header, bytes, 0..lines)?;
            }
            k <<= 1;
        }
        if me != 0 {
            let range = me..(me + k).min(n);
            let bytes: &[u8] = bytemuck::cast_slice(&all[range]);
            let parent = me - (me & me.wrapping_neg());
            self.send_stream(parent, header, bytes, 0..lines_for(bytes.len()))?;
        }
        let bytes = bytemuck::cast_slice_mut(&mut all);
        self.with_tree(0, |me, tree| me.stream_broadcast(tree, header, bytes))?;
        Ok(all)
    }

    /// Waits until every rank has called `barrier`.
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    pub fn barrier(&mut self) -> Result<(), CollectiveError> {
        let header = self.begin(CollectiveKind::Barrier, 0, 0)?;
        self.reduce_up(header, (), &|(), ()| (), None)?;
        self.with_tree(0, |me, tree| me.stream_broadcast(tree, header, &mut []))
    }
}

/// Waits for room in `tx` (to `to`) and sends the line `fill` writes.
#[cold]
fn send_wait(
    comm: &Comm,
    me: usize,
    to: usize,
    header: u64,
    tx: &Sender,
    fill: &impl Fn(&mut [u8; Line::PAYLOAD]),
) -> Result<(), CollectiveError> {
    comm.signals[me].wait_until(|| {
        if let Some(e) = comm.check_peer(me, to, header) {
            return Some(Err(e));
        }
        match tx.try_send_with(fill) {
            Ok(()) => Some(Ok(())),
            Err(TrySendWithError::Full) => None,
            Err(TrySendWithError::Disconnected) => Some(Err(CollectiveError::Poisoned)),
        }
    })?
}

/// Waits for a line from `from` and reads it with `read`.
#[cold]
fn recv_wait<R>(
    comm: &Comm,
    me: usize,
    from: usize,
    header: u64,
    rx: &Receiver,
    mut read: impl FnMut(&[u8; Line::PAYLOAD]) -> R,
) -> Result<R, CollectiveError> {
    comm.signals[me].wait_until(|| match rx.try_recv_with(&mut read) {
        Ok(r) => Some(Ok(r)),
        Err(_) => comm.check_peer(me, from, header).map(Err),
    })?
}
