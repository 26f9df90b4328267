//! Calls: their numbers and headers, the state each rank publishes for its peers, poison, and
//! the guard that makes every abnormal end of a call poison the communicator.
//!
//! # Numbers and headers
//!
//! Each rank numbers its calls 1, 2, 3, … (`u64`, never wrapping) and publishes, per call, first
//! the call's 64-bit header (kind, the number mod 256, root, payload length mod 2³²) in slot
//! `number mod HISTORY` of a small history, and then the number. A peer compares calls only at
//! the same full number ([`Core::check_peer`]), so a root that runs any number of calls ahead of
//! a slow rank is never taken for a mismatch, and a peer that has moved on is still compared
//! with the call it made at that number (while it is in the history). The header's 8-bit number
//! is a tag that validates the reads: reading the peer's number, the slot and the number again,
//! a slot whose tag is the wanted call's, read while the peer was fewer than `HISTORY` calls
//! past it, holds that call's header (a later call writing the slot has another tag, unless it
//! is 256 calls later, which the second read of the number would show).
//!
//! # Poison
//!
//! A call that ends abnormally — an error, an abort, a panic unwinding through it — poisons the
//! communicator before anything else ([`Call`]'s guard): the first cause is recorded, the flag is
//! raised and every rank's signal is notified. Every wait inside a collective looks at the flag
//! on every wake-up, every call checks it when it starts and before it reports success, and it
//! stays raised until [`Comm::ranks`](crate::Comm::ranks) rebuilds the endpoints. A panic of a
//! team worker outside any call poisons every communicator with a rank the worker drives (made
//! that rank's last call: `wait::job_panicked`), even before the rank's first call of the run; an endpoint dropped while its thread panics poisons too; an endpoint
//! dropped normally marks its rank departed, so a peer that waits for a call it will never make
//! gets [`CollectiveError::Departed`] instead of waiting forever.

use super::error::{CollectiveError, PoisonCause};
use super::posted::Posts;
use super::small::Slots;
use crate::runtime::sync::{self, AtomicBool, AtomicU64, Mutex, Ordering};
use crate::runtime::wait::{PanicWatch, Phase, Polls, Signal};
use crossbeam_utils::CachePadded;

/// The kind of a collective call (carried in every message header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollectiveKind {
    /// [`CommRank::broadcast`](crate::CommRank::broadcast) and friends.
    Broadcast,
    /// [`CommRank::reduce`](crate::CommRank::reduce).
    Reduce,
    /// [`CommRank::allreduce`](crate::CommRank::allreduce).
    Allreduce,
    /// [`CommRank::scan`](crate::CommRank::scan).
    Scan,
    /// [`CommRank::allgather`](crate::CommRank::allgather).
    Allgather,
    /// [`CommRank::barrier`](crate::CommRank::barrier).
    Barrier,
    /// [`CommRank::reduce_slice`](crate::CommRank::reduce_slice).
    ReduceSlice,
    /// [`CommRank::allreduce_slice`](crate::CommRank::allreduce_slice).
    AllreduceSlice,
}

impl CollectiveKind {
    const ALL: [CollectiveKind; 8] = [
        CollectiveKind::Broadcast,
        CollectiveKind::Reduce,
        CollectiveKind::Allreduce,
        CollectiveKind::Scan,
        CollectiveKind::Allgather,
        CollectiveKind::Barrier,
        CollectiveKind::ReduceSlice,
        CollectiveKind::AllreduceSlice,
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
    /// The call's number on its rank, mod 256 (ranks compare full numbers; this is a tag).
    pub seq: u8,
    /// The root (0 for rootless collectives).
    pub root: u32,
    /// The call's payload length in bytes, mod 2³².
    pub bytes: u32,
}

impl CallInfo {
    /// The header of call `seq` (kind, `seq` mod 256, root, length mod 2³²).
    pub(crate) fn header(kind: CollectiveKind, seq: u64, root: usize, bytes: usize) -> u64 {
        kind.code() << 60
            | (seq & 0xff) << 52
            | (root as u64 & 0xf_ffff) << 32
            | (bytes as u64 & 0xffff_ffff)
    }

    /// What `header` says.
    pub(crate) fn decode(header: u64) -> CallInfo {
        CallInfo {
            kind: CollectiveKind::from_code(header >> 60),
            seq: (header >> 52) as u8,
            root: ((header >> 32) & 0xf_ffff) as u32,
            bytes: header as u32,
        }
    }

    /// The 8-bit call-number tag of `header`.
    fn tag(header: u64) -> u64 {
        (header >> 52) & 0xff
    }
}

/// A rank's endpoint exists (the value of [`Progress::departed`] until it is dropped).
pub(crate) const PRESENT: u64 = u64::MAX;

/// Headers of a rank's recent calls kept for its peers (a divisor of 256, below it; more than
/// the posted broadcasts a root may run ahead of a reader, `posted::SHARED_SLOTS`).
pub(super) const HISTORY: usize = 128;

/// What a rank publishes for its peers; written by that rank only.
#[derive(Debug)]
pub(crate) struct RankState {
    /// The headers of its last calls: call `k`'s in slot `k mod HISTORY` (0: none yet).
    headers: [AtomicU64; HISTORY],
    /// The number of its current call (0 before its first); stored after its header.
    pub(crate) seq: AtomicU64,
    /// The token of the thread that drives it (made its last call; 0: none yet).
    pub(crate) driver: AtomicU64,
    /// The CPU its driver is pinned to ([`NO_CPU`](crate::runtime::wait::NO_CPU): not pinned
    /// by a team, or no driver yet); stored with `driver`. On a line of its own: other ranks
    /// read it as they wait (`Core::across`, `Core::mates`), and on `seq`'s line each such
    /// read took the line this rank stores its next call's number to.
    pub(crate) home: CachePadded<AtomicU64>,
    /// What a lender polls while this rank copies from it, on lines of its own. Kept on the
    /// line of `seq`, the lender's polls took that line from the reader just as the reader's
    /// next call stored its number there; that store then waited for the line to come back,
    /// and so did every store behind it, such as the next call's descriptor on its way to that
    /// same lender (the likely mechanism). A 2-rank ping-pong of 1 KiB single copies took
    /// 1.53–1.70 × a cross-core copy with the fields together and 1.35–1.66 × apart
    /// (docs/runtime.md, "Single-copy progress on its own line").
    pub(crate) progress: CachePadded<Progress>,
}

/// The part of a [`RankState`] that a lender polls (see there).
#[derive(Debug)]
pub(crate) struct Progress {
    /// The last call number whose single-copy reads the rank has finished.
    pub(crate) reads_done: AtomicU64,
    /// The calls it had made when its endpoint was dropped; [`PRESENT`] until then.
    pub(crate) departed: AtomicU64,
    /// The CPU its thread is pinned to when it last marked its reads done
    /// ([`NO_CPU`](crate::runtime::wait::NO_CPU): not pinned); stored before `reads_done`.
    pub(crate) cpu: AtomicU64,
}

impl RankState {
    /// The header this rank published for call `seq`, if it made that call no more than
    /// `HISTORY - 1` calls ago (validated: see the module notes).
    pub(crate) fn header_of(&self, seq: u64) -> Option<u64> {
        let recent = |now: u64| now >= seq && now - seq < HISTORY as u64;
        if !recent(self.seq.load(Ordering::Acquire)) {
            return None;
        }
        let header = self.headers[seq as usize % HISTORY].load(Ordering::Acquire);
        let valid = recent(self.seq.load(Ordering::Acquire))
            && CallInfo::tag(header) == seq & 0xff
            && header != 0;
        valid.then_some(header)
    }

    fn new() -> RankState {
        RankState {
            headers: std::array::from_fn(|_| AtomicU64::new(0)),
            seq: AtomicU64::new(0),
            driver: AtomicU64::new(0),
            home: CachePadded::new(AtomicU64::new(crate::runtime::wait::NO_CPU)),
            progress: CachePadded::new(Progress {
                reads_done: AtomicU64::new(0),
                departed: AtomicU64::new(PRESENT),
                cpu: AtomicU64::new(crate::runtime::wait::NO_CPU),
            }),
        }
    }
}

/// The state every rank of a communicator shares (behind an `Arc`: team workers hold weak
/// references to it to poison it if they panic).
#[derive(Debug)]
pub(crate) struct Core {
    /// One per rank: how a rank waits and is woken.
    pub(crate) signals: Box<[CachePadded<Signal>]>,
    /// One per rank.
    pub(crate) ranks: Box<[CachePadded<RankState>]>,
    /// Raised by the first abnormal end of a call.
    poisoned: CachePadded<AtomicBool>,
    /// The first poisoning rank and its cause.
    cause: Mutex<Option<(usize, PoisonCause)>>,
    /// The slots of the shared-memory small allreduce (`small.rs`).
    pub(crate) small: Slots,
    /// The slots of the posted broadcasts (`posted.rs`).
    pub(crate) posts: Posts,
    /// The ways of single copies into buffers another CPU holds (`held.rs`).
    pub(crate) held: super::held::HeldWays,
    /// The timed classes' boards (`choice.rs`).
    pub(crate) choice: super::choice::Boards,
}

impl Core {
    /// The shared state of a fresh `size`-rank communicator.
    #[cfg(all(test, herald_loom))]
    pub(crate) fn new(size: usize) -> Core {
        // Slots of two lines: a payload of 52 bytes spans both.
        Core::new_with_small(size, 4096, 112, false)
    }

    /// The shared state of a fresh `size`-rank communicator whose small allreduces hold at
    /// most `small_bytes` bytes, and which posts broadcasts of up to `posted_bytes` (0 for a
    /// communicator that never posts: only the slots' first lines are allocated); `shared`:
    /// its ranks share CPUs (more slots, `posted.rs`).
    pub(crate) fn new_with_small(
        size: usize,
        small_bytes: usize,
        posted_bytes: usize,
        shared: bool,
    ) -> Core {
        Core {
            signals: (0..size).map(|_| CachePadded::new(Signal::new())).collect(),
            ranks: (0..size)
                .map(|_| CachePadded::new(RankState::new()))
                .collect(),
            poisoned: CachePadded::new(AtomicBool::new(false)),
            cause: Mutex::new(None),
            small: Slots::new(size, small_bytes),
            posts: Posts::new(size, posted_bytes, shared),
            held: super::held::HeldWays::default(),
            choice: super::choice::Boards::default(),
        }
    }

    /// With the timed classes' `boards` (`choice.rs`).
    pub(crate) fn with_choice(self, boards: super::choice::Boards) -> Core {
        Core {
            choice: boards,
            ..self
        }
    }

    /// Back to the fresh state (no endpoint exists: the caller holds the `Comm` mutably).
    pub(crate) fn reset(&self) {
        for r in self.ranks.iter() {
            r.headers.iter().for_each(|h| h.store(0, Ordering::Relaxed));
            r.seq.store(0, Ordering::Relaxed);
            r.progress.reads_done.store(0, Ordering::Relaxed);
            r.progress.departed.store(PRESENT, Ordering::Relaxed);
            r.driver.store(0, Ordering::Relaxed);
            r.home
                .store(crate::runtime::wait::NO_CPU, Ordering::Relaxed);
        }
        self.small.reset();
        self.posts.reset();
        self.choice.reset();
        *sync::lock(&self.cause) = None;
        self.poisoned.store(false, Ordering::SeqCst);
    }

    /// Whether the communicator is poisoned (a plain load of a line nobody writes in a
    /// healthy run).
    #[inline]
    pub(crate) fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }

    /// The poison flag itself, for the single-copy protocol's `SeqCst` reads.
    pub(crate) fn poison_flag(&self) -> &AtomicBool {
        &self.poisoned
    }

    /// [`CollectiveError::Poisoned`] with the recorded cause, if poisoned.
    #[inline]
    pub(crate) fn poison_error(&self) -> Option<CollectiveError> {
        self.is_poisoned().then(|| self.poisoned_error())
    }

    #[cold]
    fn poisoned_error(&self) -> CollectiveError {
        let first = *sync::lock(&self.cause);
        let (rank, cause) = first.unwrap_or((0, PoisonCause::Error));
        CollectiveError::Poisoned { rank, cause }
    }

    /// Poisons the communicator (the first cause is kept) and wakes every rank.
    #[cold]
    pub(crate) fn poison(&self, rank: usize, cause: PoisonCause) {
        sync::lock(&self.cause).get_or_insert((rank, cause));
        self.poisoned.store(true, Ordering::SeqCst);
        for s in self.signals.iter() {
            s.notify();
        }
    }

    /// Whether ranks `me` and `peer` are driven by threads pinned to different CPUs (a wait of
    /// `me` for `peer` may then spin where `me` shares its CPU: `Signal::wait_phased_across`).
    #[inline]
    pub(crate) fn across(&self, me: usize, peer: usize) -> bool {
        use crate::runtime::wait::NO_CPU;
        let (mine, theirs) = (
            self.ranks[me].home.load(Ordering::Relaxed),
            self.ranks[peer].home.load(Ordering::Relaxed),
        );
        mine != NO_CPU && theirs != NO_CPU && mine != theirs
    }

    /// The ranks other than `me` whose drivers are pinned to `me`'s driver's CPU.
    pub(crate) fn mates(&self, me: usize) -> impl Iterator<Item = usize> + '_ {
        use crate::runtime::wait::NO_CPU;
        let mine = self.ranks[me].home.load(Ordering::Relaxed);
        (0..self.ranks.len()).filter(move |&r| {
            r != me && mine != NO_CPU && self.ranks[r].home.load(Ordering::Relaxed) == mine
        })
    }

    /// Wakes every rank but `me` (after a store some of them may wait for).
    #[inline]
    pub(crate) fn notify_others(&self, me: usize) {
        for (r, s) in self.signals.iter().enumerate() {
            if r != me {
                s.notify();
            }
        }
    }

    /// Publishes `rank`'s call `seq` with `header` (header first: see the module notes).
    #[inline]
    pub(crate) fn publish(&self, rank: usize, seq: u64, header: u64) {
        let r = &self.ranks[rank];
        r.headers[seq as usize % HISTORY].store(header, Ordering::Release);
        // Release, not SeqCst: the single-copy protocol orders this store before the flag loads
        // that precede a copy with the `SeqCst` fence in front of each look (`direct.rs`, rules
        // 3 and 5). A `SeqCst` store here (an `xchg` on x86_64) drained the store buffer at the
        // start of every call, so a call began only once its previous call's last line had
        // reached the peer's core.
        r.seq.store(seq, Ordering::Release);
    }

    /// Why rank `me`, waiting in call `seq` with `header`, must stop because of `peer`: the
    /// communicator is poisoned, `peer` made call `seq` with another header (a mismatch:
    /// poisons), or `peer` left before making this call (poisons).
    pub(crate) fn check_peer(
        &self,
        me: usize,
        peer: usize,
        (seq, header): (u64, u64),
    ) -> Option<CollectiveError> {
        if let Some(e) = self.poison_error() {
            return Some(e);
        }
        let p = &self.ranks[peer];
        if let Some(theirs) = p.header_of(seq).filter(|&h| h != header) {
            return Some(self.mismatch(me, peer, header, theirs));
        }
        let calls = p.progress.departed.load(Ordering::Acquire);
        (calls != PRESENT && calls < seq).then(|| self.departed(me, peer))
    }

    /// Why rank `me`'s wait for `peer` in call `id` must stop, asked on a poll that found
    /// nothing: the poison on every poll, and on thorough ones ([`Polls`]) also
    /// [`check_peer`](Self::check_peer).
    #[inline]
    pub(crate) fn wait_stop(
        &self,
        polls: &mut Polls,
        phase: Phase,
        me: usize,
        peer: usize,
        id: (u64, u64),
    ) -> Option<CollectiveError> {
        if polls.thorough(phase) {
            self.check_peer(me, peer, id)
        } else {
            self.poison_error()
        }
    }

    /// Poisons and builds the mismatch error of rank `me` against `peer`.
    #[cold]
    pub(crate) fn mismatch(
        &self,
        me: usize,
        peer: usize,
        mine: u64,
        theirs: u64,
    ) -> CollectiveError {
        self.poison(me, PoisonCause::Mismatch);
        CollectiveError::Mismatch {
            rank: me,
            peer,
            expected: CallInfo::decode(mine),
            got: CallInfo::decode(theirs),
        }
    }

    /// Poisons and builds the error of rank `me`, which needs `peer`, whose endpoint is gone
    /// (the poison error if the communicator was poisoned already: a rank that fails leaves).
    #[cold]
    pub(crate) fn departed(&self, me: usize, peer: usize) -> CollectiveError {
        if let Some(e) = self.poison_error() {
            return e;
        }
        self.poison(me, PoisonCause::Departed);
        CollectiveError::Departed {
            rank: me,
            peer,
            calls: self.ranks[peer].progress.departed.load(Ordering::Acquire),
        }
    }

    /// Marks `rank`'s endpoint dropped after `calls` calls and wakes every rank; poisons first
    /// if its thread is panicking.
    pub(crate) fn depart(&self, rank: usize, calls: u64) {
        if std::thread::panicking() {
            self.poison(rank, PoisonCause::Panic);
        }
        self.ranks[rank]
            .progress
            .departed
            .store(calls, Ordering::Release);
        for s in self.signals.iter() {
            s.notify();
        }
    }
}

impl PanicWatch for Core {
    fn rank_panicked(&self, rank: usize, driver: u64) {
        if self.ranks[rank].driver.load(Ordering::Acquire) == driver {
            self.poison(rank, PoisonCause::Panic);
        }
    }
}

/// One call in progress on one rank: ends with [`end`](Self::end), or, dropped open (an early
/// return or a panic unwinding through the call), poisons the communicator.
#[derive(Debug)]
pub(crate) struct Call<'c> {
    /// The communicator while the call is open; `None` once it ended. (Not a separate `bool`:
    /// a `Result` of a call then had a 1-byte niche whose 7 bytes of padding every `?` copied
    /// as two overlapping 4-byte moves, and the load of them, not forwardable from the store
    /// buffer, waited behind the header's publication to the other ranks: 65 % of a 48-byte
    /// broadcast's own time went there; docs/runtime.md.)
    core: Option<&'c Core>,
    rank: usize,
    seq: u64,
    header: u64,
}

impl<'c> Call<'c> {
    /// Call `seq` of `rank` with `header`, published already.
    pub(crate) fn new(core: &'c Core, rank: usize, seq: u64, header: u64) -> Call<'c> {
        Call {
            core: Some(core),
            rank,
            seq,
            header,
        }
    }

    /// The call's number and header.
    pub(crate) fn id(&self) -> (u64, u64) {
        (self.seq, self.header)
    }

    /// Ends the call with the body's result: an error poisons the communicator (with the
    /// error's cause) and is returned; success is reported only if the communicator is still
    /// healthy, so no call reports `Ok` once a poison is visible.
    #[inline]
    pub(crate) fn end<T>(
        mut self,
        result: Result<T, CollectiveError>,
    ) -> Result<T, CollectiveError> {
        let core = self.core.take().expect("a call ends once");
        match result {
            Ok(value) => match core.poison_error() {
                None => Ok(value),
                Some(e) => Err(e),
            },
            Err(e) => {
                core.poison(self.rank, e.cause());
                Err(e)
            }
        }
    }
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        if let Some(core) = self.core {
            let cause = if std::thread::panicking() {
                PoisonCause::Panic
            } else {
                PoisonCause::Error
            };
            core.poison(self.rank, cause);
        }
    }
}
