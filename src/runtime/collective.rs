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
//! * **Broadcast** runs a compiled [`Program`] with the shared executor (`runtime/exec.rs`),
//!   framing the payload as the stream `header ‖ payload` cut into lines, forwarded line by line
//!   (so large payloads stream through every level of the tree at once). The program is the
//!   caller's ([`CommRank::broadcast_with`]: any broadcast schedule, multi-block and
//!   multi-sender included) or the default ([`CommOptions::schedule`], binomial unless set),
//!   compiled once per root (and per payload size, for a planned default) and cached.
//! * **Single copy** (payloads of at least [`CommOptions::direct_min_bytes`]): the rings carry
//!   one descriptor line per chunk (the call's header, the sender's buffer address, offset and
//!   length) and the receiver copies the chunk straight from the sender's buffer into its own,
//!   then forwards a descriptor of its own copy: one memory copy per hop, as the cross-core
//!   copy that bounds any transfer. Soundness rests on four rules. (1) A rank publishes a
//!   descriptor only for bytes it holds and never writes them again in the call. (2) From the
//!   first descriptor on, a rank reaches its buffer only through a raw pointer, so readers and
//!   its own writes (to other chunks) never alias a reference. (3) A receiver copies only for a
//!   descriptor with its own call's header, after checking the poison and abort flags, which it
//!   reads after publishing its call number behind a `SeqCst` fence; on every way out of the
//!   call it marks its reads done. (4) A sender returns only when each of its receivers has
//!   marked its reads done, or the run was stopped while the receiver was in another call (it
//!   reads their call after the flags, behind a `SeqCst` fence: Dekker's argument makes the
//!   two checks exclusive). That last wait is not abortable; it ends because every receiver's
//!   own waits are.
//! * **Combining collectives** combine in rank order, so any associative `op` works, commutative
//!   or not: the reduction tree is the binomial tree rooted at rank 0 in which the subtree of
//!   rank `v` is the contiguous range `v .. v + lowbit(v)`, and a rank combines its own value
//!   with its children's partials left to right. Reduce to another root adds one hop; allreduce
//!   is reduce to 0 plus broadcast; scan adds a down-sweep of exclusive prefixes; allgather
//!   gathers contiguous ranges up the same tree and broadcasts the result.
//! * **Waiting** uses one [`Signal`] per rank: spin, yield, park. A sender that finds the ring
//!   full notifies the receiver and waits; a receiver that finds it empty notifies the sender
//!   and waits; both notify after every batch of lines they move.

use super::channel::{channel, Receiver, Sender, TrySendWithError};
use super::exec::{fill_line, store_line, stream_lines, Exec, Framing, Links, Scratch, Stop};
use super::line::Line;
use super::program::{Program, ProgramError, RankProgram};
use super::team::RuntimeError;
use super::wait::{Aborted, Signal};
use crate::model::{Hierarchy, Profile};
use crate::model::{Model, Postal};
use crate::plan::plan_runtime;
use crate::schedule::{generate, Algorithm, Request, Schedule};
use crate::time::Ratio;
use bytemuck::Pod;
use crossbeam_utils::CachePadded;
use std::collections::HashMap;
use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The largest rank count a header can name (the root field has 20 bits).
pub const MAX_COMM_RANKS: usize = 1 << 20;

/// Default programs kept per communicator (and per rank) before the cache is emptied.
const MAX_CACHED_PROGRAMS: usize = 64;

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

/// Which broadcast schedule a [`Comm`] uses when the caller names none.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DefaultSchedule {
    /// A fixed algorithm for every root and size (its tree shape; one block, forwarded line
    /// by line).
    Fixed(Algorithm),
    /// The planner's choice ([`plan_runtime`](crate::plan_runtime)) under a calibrated
    /// profile, per root and payload size class (the next power of two).
    Planned(Planned),
}

/// A calibrated profile and the machine it describes, for [`DefaultSchedule::Planned`].
///
/// # Examples
///
/// ```
/// # use herald::*;
/// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
/// let profile = Profile::from_json_forced(&text)?;
/// let machine = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
/// let options = CommOptions {
///     schedule: DefaultSchedule::Planned(Planned::new(profile, machine)),
///     ..CommOptions::default()
/// };
/// let (mut team, mut comm) = (Team::new(6)?, Comm::with_options(6, options)?);
/// let mut ranks = comm.ranks();
/// let got = team.run_with(&mut ranks, |_, c| {
///     let mut buf = vec![c.rank() as u8; 4096];
///     c.broadcast(5, &mut buf).unwrap();
///     buf.iter().all(|&b| b == 5)
/// });
/// assert_eq!(got, [true; 6]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Planned(Arc<(Profile, Hierarchy)>);

impl Planned {
    /// Plans with `profile`'s costs on `machine` (ranks in compact order).
    #[must_use]
    pub fn new(profile: Profile, machine: Hierarchy) -> Planned {
        Planned(Arc::new((profile, machine)))
    }

    /// This machine's profile, if there is one: the file named by `HERALD_PROFILE` (`off`:
    /// none), else [`default_profile_path`](crate::default_profile_path), when it is a profile
    /// of this host and schema; with this machine's topology. Read once per process.
    #[must_use]
    pub fn detect() -> Option<Planned> {
        static FOUND: OnceLock<Option<Planned>> = OnceLock::new();
        FOUND
            .get_or_init(|| {
                let path = match std::env::var_os("HERALD_PROFILE") {
                    Some(v) if v == "off" => return None,
                    Some(v) => std::path::PathBuf::from(v),
                    None => crate::model::default_profile_path()?,
                };
                let profile = crate::model::load_profile(&path, false).ok()?;
                let machine = crate::topology::TopologySource::Machine.load().ok()?;
                Some(Planned::new(profile, machine))
            })
            .clone()
    }

    /// The profile.
    #[must_use]
    pub fn profile(&self) -> &Profile {
        &self.0 .0
    }

    /// The machine.
    #[must_use]
    pub fn machine(&self) -> &Hierarchy {
        &self.0 .1
    }
}

impl PartialEq for Planned {
    fn eq(&self, other: &Planned) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Planned {}

/// Tuning of a [`Comm`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommOptions {
    /// Lines per ring (at least 4).
    pub capacity: usize,
    /// The broadcast schedule of [`CommRank::broadcast`] and of the broadcast phases of
    /// allreduce, allgather and barrier, and the shape of the reduction tree. Default: the
    /// planner's choice when this machine has a profile ([`Planned::detect`]), else binomial.
    pub schedule: DefaultSchedule,
    /// Broadcasts of at least this many bytes move by single copy: the rings carry one
    /// descriptor line per chunk and each receiver copies the chunk straight from its
    /// sender's buffer (`usize::MAX`: never). Default 64 KiB, where single copy overtook the
    /// line stream in `herald bench bcast` on the development machine.
    pub direct_min_bytes: usize,
    /// The chunk size of single-copy broadcasts (the unit a rank copies before forwarding).
    pub direct_chunk_bytes: usize,
}

impl Default for CommOptions {
    fn default() -> CommOptions {
        CommOptions {
            capacity: 256,
            schedule: Planned::detect().map_or(
                DefaultSchedule::Fixed(Algorithm::Binomial),
                DefaultSchedule::Planned,
            ),
            direct_min_bytes: 64 << 10,
            direct_chunk_bytes: 64 << 10,
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
    /// Each rank's current call number (full width, unlike the header's 8 bits).
    seqs: Box<[CachePadded<AtomicU64>]>,
    /// Per rank: the last call number whose single-copy reads it has finished.
    reads_done: Box<[CachePadded<AtomicU64>]>,
    /// Default broadcast programs by (root, size key).
    programs: Mutex<HashMap<(u32, u64), Arc<Program>>>,
    /// The radix of the combining collectives' tree, chosen on first use.
    radix: OnceLock<usize>,
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
            direct_chunk_bytes: options.direct_chunk_bytes.max(Line::PAYLOAD),
            ..options
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
            seqs: (0..size)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
            reads_done: (0..size)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
            programs: Mutex::new(HashMap::new()),
            radix: OnceLock::new(),
        })
    }

    /// The number of ranks.
    #[must_use]
    pub fn size(&self) -> usize {
        self.size
    }

    /// The options in force.
    #[must_use]
    pub fn options(&self) -> &CommOptions {
        &self.options
    }

    /// One endpoint per rank, in rank order (fresh channels; clears a poisoned state).
    pub fn ranks(&mut self) -> Vec<CommRank<'_>> {
        self.pairs
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        *self.poisoned.get_mut() = false;
        for c in self
            .calls
            .iter()
            .chain(&*self.seqs)
            .chain(&*self.reads_done)
        {
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
                programs: Vec::new(),
                last: 0,
                scratch: Scratch::default(),
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

    /// The default broadcast program for `root` and a `bytes`-byte payload, compiled once and
    /// shared by every rank.
    fn default_program(&self, root: usize, bytes: usize) -> Result<Arc<Program>, CollectiveError> {
        let key = self.program_key(root, bytes);
        let mut programs = self.programs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = programs.get(&key) {
            return Ok(Arc::clone(p));
        }
        let schedule = match &self.options.schedule {
            DefaultSchedule::Fixed(algorithm) => self.fixed_schedule(*algorithm, root)?,
            DefaultSchedule::Planned(p) => {
                let (n, class) = (self.size as u32, key.1);
                match plan_runtime(p.profile(), p.machine(), n, class, root as u32) {
                    Ok((schedule, _)) => schedule,
                    // A profile that cannot describe this team: the binomial tree.
                    Err(_) => self.fixed_schedule(Algorithm::Binomial, root)?,
                }
            }
        };
        let program = Arc::new(Program::compile(&schedule)?);
        if programs.len() >= MAX_CACHED_PROGRAMS {
            programs.clear();
        }
        programs.insert(key, Arc::clone(&program));
        Ok(program)
    }

    /// A fixed algorithm's single-block schedule for `root`.
    fn fixed_schedule(
        &self,
        algorithm: Algorithm,
        root: usize,
    ) -> Result<Schedule, CollectiveError> {
        let err = |e: &dyn std::fmt::Display| CollectiveError::Schedule(e.to_string());
        // The tree's shape does not depend on λ for the fixed algorithms the runtime uses;
        // λ = 2 is only what `generate` needs to time it.
        let model = Model::from(Postal::new(Ratio::integer(2)).map_err(|e| err(&e))?);
        let req = Request::broadcast(algorithm, self.size as u32, 1, root as u32);
        generate(&req, &model).map_err(|e| err(&e))
    }

    /// The cache key of the default program: the root, and the size class where it matters.
    fn program_key(&self, root: usize, bytes: usize) -> (u32, u64) {
        match &self.options.schedule {
            DefaultSchedule::Fixed(_) => (root as u32, 0),
            DefaultSchedule::Planned(_) => (root as u32, bytes.max(1).next_power_of_two() as u64),
        }
    }

    /// The reduction tree: the radix of the default broadcast's tree family (star: flat,
    /// k-nomial: its radix, otherwise binomial).
    fn ordered_tree(&self) -> OrderedTree {
        let radix = *self.radix.get_or_init(|| {
            let family = |a: Algorithm| match a {
                Algorithm::Star => self.size,
                Algorithm::Knomial { radix } => radix as usize,
                Algorithm::Dtree { d } if d as usize + 1 >= self.size => self.size,
                _ => 2,
            };
            match &self.options.schedule {
                DefaultSchedule::Fixed(a) => family(*a),
                // The planner's tree for a small payload from rank 0 (the reduction is its
                // time reversal).
                DefaultSchedule::Planned(p) => {
                    plan_runtime(p.profile(), p.machine(), self.size as u32, 8, 0)
                        .map_or(2, |(_, c)| family(c.algorithm))
                }
            }
        });
        OrderedTree {
            n: self.size,
            radix: radix.max(2),
        }
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

/// The rank-ordered `radix`-nomial tree rooted at rank 0 that the combining collectives use.
///
/// Rank `v`'s subtree is the contiguous range `v .. v + R^d` (cut at `n`), `d` the position of
/// `v`'s lowest non-zero digit in base `R` (the whole range for rank 0); its children are
/// `v + j·R^i` for `i < d`, `j = 1 .. R`, in increasing order, so combining a rank's value with
/// its children's partials left to right is rank order: any associative operation works. Radix
/// 2 is the binomial tree; radix `n` is the flat tree (everyone sends to rank 0), the right
/// shape when many ranks share a core and each level of a deeper tree waits for a scheduler
/// round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OrderedTree {
    n: usize,
    radix: usize,
}

impl OrderedTree {
    /// `R^d` for rank `v` (its subtree's width before the cut at `n`).
    fn width(&self, v: usize) -> usize {
        let mut w = 1;
        while w < self.n && v % (w * self.radix) == 0 {
            w *= self.radix;
        }
        w
    }

    /// The end of rank `v`'s subtree range.
    fn subtree_end(&self, v: usize) -> usize {
        if v == 0 {
            self.n
        } else {
            (v + self.width(v)).min(self.n)
        }
    }

    /// Rank `v`'s parent (`None` for rank 0).
    fn parent(&self, v: usize) -> Option<usize> {
        if v == 0 {
            return None;
        }
        let w = self.width(v);
        Some(v - (v / w % self.radix) * w)
    }

    /// Rank `v`'s children with the ends of their subtrees, in combining order.
    fn children(&self, v: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let top = if v == 0 { self.n } else { self.width(v) };
        std::iter::successors(Some(1usize), move |&w| w.checked_mul(self.radix))
            .take_while(move |&w| w < top)
            .flat_map(move |w| (1..self.radix).map(move |j| (v + j * w, w)))
            .take_while(move |&(c, _)| c < self.n) // increasing: none later is in range
            .map(move |(c, w)| (c, (c + w).min(self.n)))
    }
}

/// The most ranks this process can have: the OS thread limit, capped at [`MAX_COMM_RANKS`].
fn max_ranks() -> usize {
    std::fs::read_to_string("/proc/sys/kernel/threads-max")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .map_or(MAX_COMM_RANKS, |m| m.min(MAX_COMM_RANKS))
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
    /// The default programs this rank has used, by (root, size key): its own `Arc`s, so a
    /// call touches no reference count shared with other ranks.
    programs: Vec<((u32, u64), Arc<Program>)>,
    /// The index in `programs` of the last one used.
    last: usize,
    /// The executor's reusable state.
    scratch: Scratch,
}

/// A rank's ends, as the executor sees them (every end the program needs is taken first).
struct CommLinks<'r> {
    out: &'r [Option<Sender>],
    inc: &'r [Option<Receiver>],
}

impl Links for CommLinks<'_> {
    fn sender(&self, to: u32) -> &Sender {
        self.out[to as usize]
            .as_ref()
            .expect("taken before the run")
    }

    fn receiver(&self, _e: usize, from: u32) -> &Receiver {
        self.inc[from as usize]
            .as_ref()
            .expect("taken before the run")
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
        self.comm.seqs[self.rank].store(self.seq, Ordering::SeqCst);
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
        self.send_stream(to, header, bytes, 0..stream_lines(bytes.len()))
    }

    fn recv_value<T: Pod>(&mut self, from: usize, header: u64) -> Result<T, CollectiveError> {
        let mut v = T::zeroed();
        let bytes = bytemuck::bytes_of_mut(&mut v);
        let n = stream_lines(bytes.len());
        self.recv_stream(from, header, bytes, 0..n)?;
        Ok(v)
    }

    /// Broadcasts `buf` from `root` to every rank over the default schedule
    /// ([`CommOptions::schedule`]). Every rank passes a buffer of the same length; the root's
    /// contents end up in all of them.
    ///
    /// # Errors
    ///
    /// [`CollectiveError::Root`] for a root out of range (on every rank, before any message),
    /// [`CollectiveError::Mismatch`]/[`CollectiveError::Poisoned`] when ranks' calls differ,
    /// [`CollectiveError::Aborted`] after a panic elsewhere in the team.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut team = herald::Team::new(3)?;
    /// let mut comm = herald::Comm::new(3)?;
    /// let mut ranks = comm.ranks();
    /// let got = team.run_with(&mut ranks, |_, c| {
    ///     let mut buf = if c.rank() == 1 { vec![7u8; 1000] } else { vec![0; 1000] };
    ///     c.broadcast(1, &mut buf).unwrap();
    ///     buf.iter().all(|&b| b == 7)
    /// });
    /// assert_eq!(got, [true; 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn broadcast(&mut self, root: usize, buf: &mut [u8]) -> Result<(), CollectiveError> {
        let header = self.begin(CollectiveKind::Broadcast, root, buf.len())?;
        self.broadcast_default(root, header, buf)
    }

    /// Broadcasts `buf` over the caller's compiled schedule `program` (any broadcast schedule:
    /// several blocks, several senders per rank).
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast), and [`CollectiveError::Program`] if the program is
    /// for another number of ranks.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{generate, Algorithm, Comm, Model, OnePort, Program, Request, Team};
    /// // Träff's round-optimal schedule: 4 blocks, every rank hears from several others.
    /// let s = generate(&Request::broadcast(Algorithm::Optimal, 5, 4, 0), &Model::from(OnePort))?;
    /// let program = Program::compile(&s)?;
    /// let (mut team, mut comm) = (Team::new(5)?, Comm::new(5)?);
    /// let mut ranks = comm.ranks();
    /// let ok = team.run_with(&mut ranks, |_, c| {
    ///     let mut buf = if c.rank() == 0 { vec![3u8; 500] } else { vec![0; 500] };
    ///     c.broadcast_with(&program, &mut buf).unwrap();
    ///     buf == [3u8; 500]
    /// });
    /// assert!(ok.iter().all(|&b| b));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn broadcast_with(
        &mut self,
        program: &Program,
        buf: &mut [u8],
    ) -> Result<(), CollectiveError> {
        let size = self.comm.size;
        if program.n() != size {
            return Err(ProgramError::TeamSize {
                program: program.n(),
                team: size,
            }
            .into());
        }
        let header = self.begin(
            CollectiveKind::Broadcast,
            program.root() as usize,
            buf.len(),
        )?;
        self.execute(program, header, buf)
    }

    /// Broadcasts a plain-old-data value from `root` (any size).
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut team, mut comm) = (herald::Team::new(2)?, herald::Comm::new(2)?);
    /// let mut ranks = comm.ranks();
    /// let got = team.run_with(&mut ranks, |_, c| {
    ///     let mut v = [c.rank() as f64; 3];
    ///     c.broadcast_value(1, &mut v).unwrap();
    ///     v
    /// });
    /// assert_eq!(got, [[1.0; 3], [1.0; 3]]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn broadcast_value<T: Pod>(
        &mut self,
        root: usize,
        value: &mut T,
    ) -> Result<(), CollectiveError> {
        self.broadcast(root, bytemuck::bytes_of_mut(value))
    }

    /// Runs the default program for `root` (this rank's cached copy, else the `Comm`'s).
    fn broadcast_default(
        &mut self,
        root: usize,
        header: u64,
        buf: &mut [u8],
    ) -> Result<(), CollectiveError> {
        let key = self.comm.program_key(root, buf.len());
        let found = match self.programs.get(self.last) {
            Some((k, _)) if *k == key => Some(self.last),
            _ => self.programs.iter().position(|(k, _)| *k == key),
        };
        let at = match found {
            Some(at) => at,
            None => {
                let p = self.comm.default_program(root, buf.len())?;
                if self.programs.len() >= MAX_CACHED_PROGRAMS {
                    self.programs.clear();
                }
                self.programs.push((key, p));
                self.programs.len() - 1
            }
        };
        self.last = at;
        // No `Arc` clone per call: its count is shared by every rank's copy.
        let program = &*self.programs[at].1;
        let ends = (&mut self.out, &mut self.inc, &mut self.scratch);
        let call = (header, self.seq);
        run_program(self.comm, self.rank, ends, program, call, buf)
    }

    /// Runs this rank's part of `program` on `header ‖ buf`.
    fn execute(
        &mut self,
        program: &Program,
        header: u64,
        buf: &mut [u8],
    ) -> Result<(), CollectiveError> {
        let ends = (&mut self.out, &mut self.inc, &mut self.scratch);
        let call = (header, self.seq);
        run_program(self.comm, self.rank, ends, program, call, buf)
    }

    /// Combines every rank's value up the rank-ordered tree rooted at 0 ([`OrderedTree`]).
    /// Returns this rank's subtree partial (the full result on rank 0) and, for scan, the
    /// partials before each child.
    fn reduce_up<T: Pod>(
        &mut self,
        header: u64,
        value: T,
        op: &impl Fn(T, T) -> T,
        mut before: Option<&mut Vec<T>>,
    ) -> Result<T, CollectiveError> {
        let tree = self.comm.ordered_tree();
        let mut acc = value;
        for (child, _) in tree.children(self.rank) {
            if let Some(b) = before.as_deref_mut() {
                b.push(acc);
            }
            let partial: T = self.recv_value(child, header)?;
            acc = op(acc, partial);
        }
        if let Some(parent) = tree.parent(self.rank) {
            self.send_value(parent, header, &acc)?;
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
        self.broadcast_default(0, header, bytes)?;
        Ok(acc)
    }

    /// Inclusive prefix: rank `r` gets `v0 ∘ … ∘ vr` (rank order; `op` associative).
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    pub fn scan<T: Pod>(&mut self, value: T, op: impl Fn(T, T) -> T) -> Result<T, CollectiveError> {
        let header = self.begin(CollectiveKind::Scan, 0, std::mem::size_of::<T>())?;
        let mut before = Vec::new();
        self.reduce_up(header, value, &op, Some(&mut before))?;
        let tree = self.comm.ordered_tree();
        let left: Option<T> = match tree.parent(self.rank) {
            None => None,
            Some(parent) => Some(self.recv_value(parent, header)?),
        };
        for ((child, _), part) in tree.children(self.rank).zip(before) {
            let for_child = left.map_or(part, |l| op(l, part));
            self.send_value(child, header, &for_child)?;
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
        let tree = self.comm.ordered_tree();
        for (child, end) in tree.children(me) {
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut all[child..end]);
            let lines = stream_lines(bytes.len());
            self.recv_stream(child, header, bytes, 0..lines)?;
        }
        if let Some(parent) = tree.parent(me) {
            let bytes: &[u8] = bytemuck::cast_slice(&all[me..tree.subtree_end(me)]);
            self.send_stream(parent, header, bytes, 0..stream_lines(bytes.len()))?;
        }
        let bytes = bytemuck::cast_slice_mut(&mut all);
        self.broadcast_default(0, header, bytes)?;
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
        self.broadcast_default(0, header, &mut [])
    }
}

/// A rank's channel ends and executor state, borrowed apart from its program cache.
type Ends<'e> = (
    &'e mut Vec<Option<Sender>>,
    &'e mut Vec<Option<Receiver>>,
    &'e mut Scratch,
);

/// Runs rank `me`'s part of `program` for the call `(header, seq)` on `buf`, taking the ends
/// it needs first: as a line stream, or by single copy for large payloads.
fn run_program(
    comm: &Comm,
    me: usize,
    (out, inc, scratch): Ends<'_>,
    program: &Program,
    (header, seq): (u64, u64),
    buf: &mut [u8],
) -> Result<(), CollectiveError> {
    let prog = program.rank(me as u32);
    for &(to, _) in &prog.sends {
        let to = to as usize;
        out[to].get_or_insert_with(|| comm.take_sender(me, to));
    }
    for (from, _) in &prog.incoming {
        let from = *from as usize;
        inc[from].get_or_insert_with(|| comm.take_receiver(from, me));
    }
    let links = CommLinks { out, inc };
    let is_root = me == program.root() as usize;
    let hook = || {
        let mut peers = prog
            .incoming
            .iter()
            .map(|(f, _)| *f)
            .chain(prog.sends.iter().map(|s| s.0));
        peers.find_map(|peer| comm.check_peer(me, peer as usize, header))
    };
    let stopped = |stop| match stop {
        Stop::Hook(e) => e,
        Stop::Header(from, found) => comm.mismatch(me, from as usize, header, found),
        Stop::Stopped if comm.is_poisoned() => CollectiveError::Poisoned,
        Stop::Stopped => CollectiveError::Aborted,
    };
    // Marks this call's reads done on every way out, in both modes (a rank that streams
    // reads no buffer; marking anyway keeps a single-copy sender from waiting on it should
    // ranks disagree on the mode).
    let _done = ReadsDone {
        comm,
        me,
        seq,
        senders: prog,
    };
    if buf.len() < comm.options.direct_min_bytes {
        let framing = Framing::stream(header, buf.len(), program.blocks());
        let mut exec = Exec::new(
            prog,
            program.blocks(),
            is_root,
            framing,
            &links,
            buf,
            &comm.signals,
            me,
            scratch,
        );
        return exec.run(hook).map_err(stopped);
    }
    // Single copy. From here on this rank's buffer is reached only through `base`: its
    // receivers read it, by descriptor, while this rank fills other parts of it.
    let (base, bytes) = (buf.as_mut_ptr(), buf.len());
    let geometry = (program.blocks(), comm.options.direct_chunk_bytes);
    let framing = Framing::direct(header, base, bytes, geometry, &comm.poisoned);
    // Dekker with the senders' final wait (`wait_for_readers`): the call number published by
    // `begin` is visible before this rank reads the poison and abort flags before a copy.
    fence(Ordering::SeqCst);
    let result = {
        let _done = _done; // dropped (reads marked done) before waiting for this rank's readers
        let mut exec = Exec::new(
            prog,
            program.blocks(),
            is_root,
            framing,
            &links,
            &mut [],
            &comm.signals,
            me,
            scratch,
        );
        exec.run(hook).map_err(stopped)
    };
    wait_for_readers(comm, me, (header, seq), prog);
    result
}

/// Marks, when dropped (on every way out of a single-copy run, unwinding included), that rank
/// `me` will read no other rank's buffer in call `seq`, and wakes the ranks it reads from.
struct ReadsDone<'p> {
    comm: &'p Comm,
    me: usize,
    seq: u64,
    senders: &'p RankProgram,
}

impl Drop for ReadsDone<'_> {
    fn drop(&mut self) {
        self.comm.reads_done[self.me].store(self.seq, Ordering::Release);
        for (from, _) in &self.senders.incoming {
            self.comm.signals[*from as usize].notify();
        }
    }
}

/// Waits until no receiver of rank `me` can read its buffer in call `seq` any more: each has
/// finished its reads, or the run was stopped (poison, abort) while the receiver was not in
/// this call, or in it with another header (then it never starts a read of this call: it
/// copies only for descriptors with its own header, it checks the flags after publishing its
/// call, and this wait reads its call after the flags, both behind `SeqCst` fences).
///
/// Not abortable: returning while a receiver copies from the buffer would free it under the
/// copy. Every receiver leaves the call in bounded time once the run is stopped, because all
/// of its own waits are abortable.
fn wait_for_readers(comm: &Comm, me: usize, (header, seq): (u64, u64), prog: &RankProgram) {
    let done = |to: usize| {
        if comm.reads_done[to].load(Ordering::Acquire) >= seq {
            return true;
        }
        if comm.poisoned.load(Ordering::SeqCst) || super::wait::thread_aborted() {
            fence(Ordering::SeqCst);
            // `seqs` is stored after `calls` in `begin`: seeing the call number, this also
            // sees that call's header.
            return comm.seqs[to].load(Ordering::SeqCst) != seq
                || comm.calls[to].load(Ordering::Acquire) != header;
        }
        false
    };
    comm.signals[me].wait_until_unabortable(|| {
        prog.sends
            .iter()
            .all(|&(to, _)| done(to as usize))
            .then_some(())
    });
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

#[cfg(test)]
mod tests {
    use super::OrderedTree;

    #[test]
    fn ordered_trees_partition_rank_ranges_in_order() {
        for radix in 2..7 {
            for n in 1..60 {
                let t = OrderedTree { n, radix };
                assert_eq!(t.subtree_end(0), n);
                for v in 0..n {
                    // The children's ranges tile v+1 .. end(v), left to right.
                    let mut next = v + 1;
                    for (c, end) in t.children(v) {
                        assert_eq!((c, t.parent(c)), (next, Some(v)), "R={radix} n={n} v={v}");
                        assert_eq!(end, t.subtree_end(c));
                        next = end;
                    }
                    assert_eq!(next, t.subtree_end(v), "R={radix} n={n} v={v}");
                }
                let flat = OrderedTree { n, radix: n.max(2) };
                assert_eq!(flat.children(0).count(), n - 1);
            }
        }
    }
}
