//! Broadcasts and allreduces posted in an MPI-3 shared window: the root writes a message once
//! into a slot of its own, in memory every process of the node maps, and every other rank
//! reads it there; in an allreduce every rank posts its value so and adds the others'. The
//! second module with `unsafe` (beside `p2p`): it wraps the window handle and the memory MPI
//! maps for it, and copies chunks into and out of that memory.
//!
//! # Why
//!
//! Between processes that share a node, MPI point-to-point pays the library's matching and
//! request machinery for every message, and a tree pays it at every hop: at 4 processes on 2
//! CPUs herald's trees over MPI lost the small broadcasts to both libraries (docs/mpi.md,
//! "Twenty-seventh session"). herald in process wins those rows by posting (a slot the root
//! writes once and every rank reads, `herald::runtime`'s posted broadcast), and MPICH's own
//! `release_gather` broadcast does the same. MPI-3 gives processes of one node such memory
//! (`MPI_Win_allocate_shared` on the communicator of `MPI_Comm_split_type(..,
//! MPI_COMM_TYPE_SHARED, ..)`); [`Post`] runs the in-process protocol there.
//!
//! # Protocol
//!
//! The window holds, for every rank, `S` slots ([`PostShape::slots`]) and a progress word, each
//! slot a tag word, a header word and the payload words ([`PostShape::slot_bytes`]: 48 bytes in
//! the slot's first line, 64 in each further line). A message longer than a slot goes in
//! consecutive *chunks* of at most a slot, one slot each (an empty message is one empty
//! chunk). Every rank counts the chunks it has taken part in (its *epoch*
//! `e`, from 1; the ranks make the same calls, so they count alike).
//!
//! There are two such *boards* in the window: the small one ([`PostShape::slots`] of
//! [`PostShape::slot_bytes`]), and a bulk one ([`PostShape::bulk_slots`] of
//! [`PostShape::bulk_slot_bytes`], 64 of 64 KiB a rank by default) for every collective longer
//! than a small slot. The ranks call with the same lengths, so they choose the same board;
//! each board counts its own epochs, and the protocol below runs on each alike.
//!
//! 1. The root of chunk `e` makes sure every other rank's progress is at least `e − S`
//!    (it keeps the least progress it saw and looks again, then waits, only when that is too
//!    little); writes the chunk into the payload words of its slot `e mod S` and the
//!    message's total length into its header word (`Relaxed`; the further lines first, then
//!    the first line whole, so a reader polling the tag takes that line away once, not
//!    between its stores); stores `e` into the tag (`Release`), then `e` into its own
//!    progress (`Release`). It does not wait for readers.
//! 2. Every other rank waits for the root's slot `e mod S` to hold tag `e` (`Acquire`),
//!    checks the header against its own length (another length is
//!    [`P2pErrorKind::Length`]), loads the payload words, then stores `e` into its progress
//!    (`Release`).
//!
//! An **allreduce** chunk is every rank a root of epoch `e` at once: each makes room as in 1,
//! writes its part of its value (one `u64` element per payload word) and stores the tag; then
//! it waits for every other rank's tag `e` in turn, adds that rank's elements into its value,
//! and stores `e` into its progress only after the last of them: progress means "I have read
//! every slot of epoch `e`", for an allreduce as for a broadcast.
//!
//! **Reuse.** The root wrote slot `e mod S` last at epoch `e − S` or earlier, and
//! writes it again only once every other rank's progress (stored after its loads of that
//! epoch, `Release`, read by the root with `Acquire`) is at least `e − S`. So no slot is
//! written while a rank still reads it for an earlier epoch, and a reader waiting for `e` sees
//! an earlier epoch's tag (not yet) or `e`, never a later one. The tags, headers, progress
//! words and a slot's first line are accessed atomically (payload words `Relaxed`, ordered by
//! the tags); the `loom_` tests model-check the protocol so, with roots that change,
//! allreduces among broadcasts and both boards.
//!
//! **Copied lines.** A slot's further lines are copied whole (`memcpy`, the one other
//! `unsafe` here; an allreduce's part stored so and summed from the slot read as plain
//! `u64`s): the writer's stores into its slot between its room check and its tag, a reader's
//! loads between the tag it acquired and the progress it releases. The protocol above
//! gives each copy the slot alone, so nothing races with it. Word-by-word atomic loads and
//! stores, which loom can model, took 1.4–1.9× as long: 2 processes of Open MPI on this
//! machine's 2 CPUs, `barrier` rows, 32 KiB in 2.96 µs against 1.75, 256 KiB 14.0 against 8.6,
//! 1 MiB 47.3 against 32.6 (docs/mpi.md, "Thirty-fourth session"). A root may also write a
//! chunk of 16 KiB or more with non-temporal stores ([`herald::runtime::copy_streaming`]),
//! which end in a store fence before the tag's `Release`; it streams where it measures plain
//! chunks dearer than streamed ones (`Stores`): its own stores, which take the slot's lines
//! back from the reader's cache, and its readers' copies out, which each reader times and
//! leaves beside its progress (the chunk's length word carries the way: its top bit). Those
//! costs are plain words that steer a choice and order nothing.
//!
//! **Never waiting forever.** Every wait polls as the channel's waits do ([`Channel`]): where
//! processes outnumber CPUs it yields the CPU between polls, after spinning first only where
//! what it waits for is likely the next step of a process that runs — a root's wait for room,
//! and a reader that posted the epoch before itself (a root waiting for the reply to its
//! post) from a root on another CPU that no rank of its own CPU holds back (`Reply`); a
//! reader's other waits and an allreduce's (`ALLREDUCE_SPINS`) yield at once. It looks for
//! stop notices from other ranks every 64 polls, and fails after the channel's timeout,
//! naming the rank it waited for (the root, the rank whose part is missing, or the slowest
//! reader), and tells the other ranks to stop.
//!
//! **Releasing the window.** `MPI_Win_free` is collective: a [`Post`] dropped on every rank
//! frees it, after a barrier polled with the channel's deadline (a rank that never comes costs
//! that deadline and a window left mapped, never a hang). After a wait that failed (a timeout,
//! a stop notice) the window is left to the end of the process at once: a rank that died or
//! stalled would never join the free.

use crate::p2p::{poll_spinning, Channel, P2pError, P2pErrorKind, SPIN_POLLS};

/// Polls a posted allreduce spins before it yields the CPU where processes outnumber CPUs:
/// none. A rank of an allreduce waits for every other rank's part, so with more processes than
/// CPUs some part it waits for is always that of a process not running, which a spin cannot
/// bring; a broadcast's reader that waits for the reply to its own post from the other CPU
/// spins [`SPIN_POLLS`], as every wait of the channel (`Reply`). 4 and 8 processes on 2
/// CPUs, allreduces of 8 B to 4 KiB against Open MPI's: 0.34–0.41 of its time at 8 B with 8
/// processes against 0.64–0.75 spinning 256 polls (docs/mpi.md, "Twenty-ninth session").
const ALLREDUCE_SPINS: u32 = 0;
use std::sync::atomic::{AtomicU64, Ordering};

/// A word of the board: std's `AtomicU64` (the window's words), or loom's in its models.
pub(crate) trait Word: Sized {
    fn load(&self, order: Ordering) -> u64;
    fn store(&self, value: u64, order: Ordering);
    /// Whether a reader times its copies of long chunks and reports their cost beside its
    /// progress ([`Board::done_reporting`]): for the window's words, not in loom's models
    /// (where a time means nothing).
    const TIMES_READS: bool = false;
    /// Stores `bytes` into a slot's further lines `words` as [`store_words`] does; a word type
    /// that can also stream them (non-temporal stores) lets `how` choose. Whether they were
    /// streamed.
    fn store_lines(words: &[Self], bytes: &[u8], how: &mut Stores) -> bool {
        let _ = how;
        store_words(words, bytes);
        false
    }
    /// Loads `out.len()` bytes from a slot's further lines `words`, as [`load_words`] does;
    /// a word type in memory no one writes meanwhile may copy them whole.
    fn load_lines(words: &[Self], out: &mut [u8]) {
        load_words(words, out);
    }
    /// Stores `elements` into a slot's further lines `words`, one a word, likewise.
    fn store_element_lines(words: &[Self], elements: &[u64], how: &mut Stores) -> bool {
        let _ = how;
        store_elements(words, elements);
        false
    }
    /// Adds (wrapping) the elements of a slot's further lines `words` into `acc`, one a word;
    /// a word type in memory no one writes meanwhile may read them as plain `u64`s.
    fn add_lines(words: &[Self], acc: &mut [u64]) {
        add_words(words, acc);
    }
}

impl Word for AtomicU64 {
    const TIMES_READS: bool = true;
    #[inline]
    fn load(&self, order: Ordering) -> u64 {
        AtomicU64::load(self, order)
    }
    #[inline]
    fn store(&self, value: u64, order: Ordering) {
        AtomicU64::store(self, value, order);
    }
    fn load_lines(words: &[Self], out: &mut [u8]) {
        assert!(out.len() <= 8 * words.len(), "a chunk longer than its slot");
        // SAFETY: the words span at least `out.len()` bytes (checked), apart from `out` (the
        // caller's buffer, not the window). They are the further lines of a slot whose tag
        // this rank loaded (`Acquire`) as the epoch it reads: the root's stores of the chunk
        // happen before, and the root writes the slot again only after this rank's progress
        // (`Release`, after this copy) says it is done. So no thread or process writes these
        // bytes during the copy (the protocol the `loom_post_*` models check), and reading
        // an `AtomicU64`'s bytes without a race is sound. A copy reads the lines whole
        // where the word-by-word atomic loads took 1.4–1.9× as long (module docs);
        // `copy_plain`, not `memcpy`, which is up to 2.4× slower when the window's lines and
        // `out` lie apart by other than a multiple of 32 bytes; whole lines and a partial last
        // line apart ([`copy_by_lines`]). `out` is a `&mut` slice: valid for its length of
        // writes and apart from every other live slice.
        unsafe {
            let lines = std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), out.len());
            copy_by_lines(lines, out.as_mut_ptr());
        }
    }
    fn store_lines(words: &[Self], bytes: &[u8], how: &mut Stores) -> bool {
        assert!(
            bytes.len() <= 8 * words.len(),
            "a chunk longer than its slot"
        );
        let plain = || {
            // SAFETY: as for the streamed copy below, with plain stores: `words` span at
            // least `bytes.len()` bytes (checked), apart from `bytes`, and no other thread or
            // process accesses them between the root's room check and its tag (`Release`,
            // after this copy). `AtomicU64` is an `UnsafeCell<u64>`: its words may be
            // written through a pointer made from a shared reference. (`copy_plain_to`: as
            // fast however `bytes` and the window lie apart, see `load_lines`; whole lines and
            // a partial last line apart, [`copy_by_lines`].)
            unsafe {
                copy_by_lines(bytes, words.as_ptr().cast::<u8>().cast_mut());
            }
        };
        let streamed = || {
            // SAFETY: the words span at least `bytes.len()` bytes (checked), apart from
            // `bytes` (the caller's buffer, not the window). They are the further lines of a
            // slot its root writes after `Board::room` said yes: every other rank has
            // recorded its progress past the slot's previous epoch, and none reads the slot
            // again before the root stores its tag (`Release`, after the copy's fence). So no
            // other thread or process accesses these bytes during the copy (the protocol the
            // `loom_post_*` models check). `AtomicU64` is an `UnsafeCell<u64>`: its words may
            // be written through a pointer made from a shared reference.
            unsafe {
                herald::runtime::copy_streaming(bytes, words.as_ptr().cast::<u8>().cast_mut());
            }
        };
        store_timed(bytes.len(), how, plain, streamed)
    }
    fn add_lines(words: &[Self], acc: &mut [u64]) {
        assert!(acc.len() <= words.len(), "a chunk longer than its slot");
        // SAFETY: `AtomicU64` has the size and alignment of `u64`, so the first `acc.len()`
        // words (checked) are that many `u64`s; `acc` is the caller's value, not the window.
        // They are the further lines of another rank's slot whose tag this rank loaded
        // (`Acquire`) as the epoch it reads, and that rank writes the slot again only after
        // this rank's progress (`Release`, after the sum) says it is done: nothing writes
        // them while the shared slice lives (the protocol the `loom_post_*` models check).
        let part = unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u64>(), acc.len()) };
        for (x, w) in acc.iter_mut().zip(part) {
            *x = x.wrapping_add(*w);
        }
    }
    fn store_element_lines(words: &[Self], elements: &[u64], how: &mut Stores) -> bool {
        // The elements' bytes, copied as a broadcast's are: each element lands in one word
        // (the slot is the rank's own here, written between its room check and its tag).
        Self::store_lines(words, bytemuck::cast_slice(elements), how)
    }
}

/// Runs `plain` or `streamed` (a store of `bytes` bytes) as `how` says, timed, and tells `how`
/// the cost; chunks shorter than [`STREAM_FROM`] always go plainly, untimed. Whether it
/// streamed.
fn store_timed(
    bytes: usize,
    how: &mut Stores,
    plain: impl FnOnce(),
    streamed: impl FnOnce(),
) -> bool {
    if bytes < STREAM_FROM {
        plain();
        return false;
    }
    let streaming = how.next();
    let start = std::time::Instant::now();
    if streaming {
        streamed();
    } else {
        plain();
    }
    how.took(streaming, per_64k(start, bytes));
    streaming
}

/// The time since `start`, in ns per 64 KiB of a copy of `bytes` bytes.
fn per_64k(start: std::time::Instant, bytes: usize) -> u64 {
    let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    ns.saturating_mul(1 << 16) / bytes.max(1) as u64
}

/// From how many bytes a root may stream a chunk into its slot: below it, plain stores.
const STREAM_FROM: usize = 16 << 10;

/// The bit of a slot's length word that says its further lines were streamed (a message's
/// length is far below 2⁶³ bytes).
const STREAMED: u64 = 1 << 63;

/// A slot's length word: the message's `total` bytes, and whether this chunk was `streamed`.
fn with_way(total: u64, streamed: bool) -> u64 {
    debug_assert!(total < STREAMED, "a message of 2⁶³ bytes");
    total | u64::from(streamed) << 63
}

/// The message's length and whether the chunk was streamed, from a slot's length word.
fn way_of(word: u64) -> (u64, bool) {
    (word & !STREAMED, word & STREAMED != 0)
}

/// What a reader's copy of a long chunk out of its slot cost, and how the root had stored it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadCost {
    /// The root streamed the chunk's further lines.
    pub(crate) streamed: bool,
    /// ns per 64 KiB.
    pub(crate) cost: u64,
}

/// How a root stores the long chunks of its posted broadcasts (and a rank its part of a posted
/// allreduce): plainly, or streamed
/// (non-temporal stores, [`herald::runtime::copy_streaming`]), chosen by timing its own
/// stores.
///
/// A plain store first takes each line of the slot back from the cache of the reader that
/// read it last; a streamed one only invalidates it, and the reader then reads the bytes from
/// memory. Where the CPUs share a cache, plain wins: 2 processes on this machine's 2 CPUs,
/// Open MPI, 256 KiB – 4 MiB, posted plainly in 0.34–0.71 of `MPI_Bcast`'s time, streamed in
/// 0.53–1.44. Where taking a line from the other CPU is slow (the host's slow mode), a plain
/// store of 64 KiB took the root 23 µs against 2.2 µs streamed, and posting plainly was 2.2–5.3×
/// `MPI_Bcast`, streamed 0.43–1.25 (docs/mpi.md, "Thirty-second session"). The mode
/// changes while a program runs, so the root keeps the cost of both (ns per 64 KiB, the less
/// of the last two of each, so one preempted store does not decide), deciding again after
/// every chunk, and tries the way it does not use after `every` chunks: 8 after a change,
/// doubling each time the choice holds, up to 1024.
///
/// The root's own stores are half of a chunk's cost: its readers then copy the chunk out,
/// from the root's cache (plain) or from memory (streamed). Each reader times its copies of
/// long chunks, per way, and leaves the last cost of each beside its progress
/// ([`Board::done_reporting`]); the root reads them where it reads that progress, when it
/// looks for room ([`Board::reader_costs`], the slowest reader's per way). Once it knows its
/// readers' cost of both ways, it streams where plain costs the root and its slowest reader
/// together more than [`STREAM_OVER`] of streamed; before, where its own plain stores cost
/// more than [`STREAM_RATIO`] times streamed ones. On the seventy-first session's AMD host
/// the root's own ratio was 1.85–2.33 in the far mode, under 3, while streamed posts took
/// the library's time there from 1.2–1.7× to 0.3–0.7× (the readers' copies the larger part);
/// on the former host a ratio of 1.73 in the fast mode went with plain posts twice as fast as
/// streamed ones (docs/mpi.md, "Seventy-first session"). The root's ratio alone cannot tell
/// those apart; the readers' costs can.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stores {
    /// The last two costs of plain stores and of streamed ones, ns per 64 KiB (0: none yet).
    plain: [u64; 2],
    streamed: [u64; 2],
    /// The slowest reader's last cost of copying a plain and a streamed chunk out, ns per
    /// 64 KiB (0: not known).
    readers: [u64; 2],
    /// Whether chunks are streamed now.
    streaming: bool,
    /// Chunks since the other way was last tried, and how many before it is tried again.
    since: u32,
    every: u32,
}

/// Before it knows its readers' costs, a root streams where its plain stores cost more than
/// this many times its streamed ones.
pub(crate) const STREAM_RATIO: u64 = 3;

/// Once it knows its readers' costs, a root streams where plain chunks cost it and its slowest
/// reader together more than this share of streamed ones (5/4, so that two ways about as dear
/// keep plain, and noise does not flip the choice).
pub(crate) const STREAM_OVER: (u64, u64) = (5, 4);

impl Default for Stores {
    /// Plain, nothing measured yet, streaming first tried after [`Stores::FIRST_TRY`] chunks.
    fn default() -> Stores {
        Stores {
            plain: [0; 2],
            streamed: [0; 2],
            readers: [0; 2],
            streaming: false,
            since: 0,
            every: Stores::FIRST_TRY,
        }
    }
}

impl Stores {
    const FIRST_TRY: u32 = 8;
    const LAST_TRY: u32 = 1024;

    /// Whether to stream the next chunk: the current way, or the other once `every` chunks
    /// have gone since it was last tried.
    pub(crate) fn next(&self) -> bool {
        self.streaming ^ (self.since >= self.every)
    }

    /// Records that a chunk stored the way [`next`](Self::next) said took `cost` ns per
    /// 64 KiB, and chooses the way of the chunks after it.
    pub(crate) fn took(&mut self, streamed: bool, cost: u64) {
        let last = if streamed {
            &mut self.streamed
        } else {
            &mut self.plain
        };
        *last = [last[1], cost.max(1)];
        let est = |l: &[u64; 2]| match *l {
            [0, b] => b,
            [a, b] => a.min(b),
        };
        let (plain, stream) = (est(&self.plain), est(&self.streamed));
        let streaming = plain > 0
            && stream > 0
            && match self.readers {
                [read_plain, read_streamed] if read_plain > 0 && read_streamed > 0 => {
                    let (over, under) = STREAM_OVER;
                    (plain + read_plain).saturating_mul(under)
                        > (stream + read_streamed).saturating_mul(over)
                }
                _ => plain > STREAM_RATIO * stream,
            };
        if streaming != self.streaming {
            (self.streaming, self.since, self.every) = (streaming, 0, Self::FIRST_TRY);
        } else if streamed != self.streaming {
            // the other way was tried, and lost again: try it less often
            self.since = 0;
            self.every = (self.every * 2).min(Self::LAST_TRY);
        } else {
            self.since += 1;
        }
    }

    /// Records the slowest reader's last costs of copying a plain and a streamed chunk out
    /// (ns per 64 KiB; 0 where no reader has reported that way yet, which keeps the last
    /// known). The next chunk's [`took`](Self::took) chooses with them.
    pub(crate) fn readers(&mut self, plain: u64, streamed: u64) {
        for (known, now) in self.readers.iter_mut().zip([plain, streamed]) {
            if now > 0 {
                *known = now;
            }
        }
    }
}

#[cfg(herald_loom)]
impl Word for loom::sync::atomic::AtomicU64 {
    fn load(&self, order: Ordering) -> u64 {
        loom::sync::atomic::AtomicU64::load(self, order)
    }
    fn store(&self, value: u64, order: Ordering) {
        loom::sync::atomic::AtomicU64::store(self, value, order);
    }
}

/// Slots per rank by default: how many chunks a root may run ahead of its slowest reader.
/// Where processes outnumber CPUs each wait for a reader is a turn of the CPUs, so the slots
/// must outlast a scheduler's turn: with 16 (the in-process posted broadcast's number) a
/// 4-rank loop of 8-byte broadcasts on 2 CPUs took 1.9× Open MPI's (docs/mpi.md,
/// "Twenty-eighth session").
pub const DEFAULT_SLOTS: usize = 64;

/// The payload bytes of a slot by default (a chunk): 4 KiB and the 48 bytes of its first line.
pub const DEFAULT_SLOT_BYTES: usize = 4096 + HEAD_BYTES;

/// Payload bytes of a bulk slot by default: messages longer than a small slot go in chunks
/// of 64 KiB.
pub const DEFAULT_BULK_SLOT_BYTES: usize = 64 << 10;

/// Bulk slots per rank by default, where the ranks are few enough ([`PostShape::for_ranks`]).
///
/// A root writes its slot again after the reader has read `slots − 1` other chunks, so the
/// number decides whether the slot's lines are still in the reader's cache. 2 processes on
/// this machine's 2 CPUs, Open MPI, broadcasts of 256 KiB – 4 MiB (docs/mpi.md,
/// "Thirty-second session"): 64 slots of 64 KiB (4 MiB a rank) take 0.47–0.63 of
/// `MPI_Bcast`'s time in both latency modes met; 16 slots (1 MiB, a core's L2 cache holds
/// it) measured the same in one mode and 3.5–5.6× `MPI_Bcast` in another.
pub const DEFAULT_BULK_SLOTS: usize = 64;

/// The window a node's bulk slots may take at most, bytes: [`PostShape::for_ranks`] gives
/// fewer than [`DEFAULT_BULK_SLOTS`] slots a rank (at least 8) to ranks beyond 16.
pub const BULK_WINDOW_BYTES: usize = 64 << 20;

/// The slots of a [`Post`]: how many per rank, and how many payload bytes each holds, on the
/// small board (every message up to a slot) and on the bulk board (longer messages, if any).
///
/// ```
/// use herald_mpi::post::{PostShape, DEFAULT_BULK_SLOTS, DEFAULT_SLOTS};
/// assert_eq!(PostShape::default().slots, DEFAULT_SLOTS);
/// assert_eq!(PostShape::for_ranks(8).bulk_slots, DEFAULT_BULK_SLOTS);
/// assert_eq!(PostShape::for_ranks(64).bulk_slots, 16); // 64 MiB for the node's bulk slots
/// assert_eq!(PostShape::for_ranks(1024).bulk_slots, 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostShape {
    /// Slots per rank: how many chunks a root may run ahead of its slowest reader.
    pub slots: usize,
    /// Payload bytes per slot, at least (rounded up to whole lines: 48 bytes in the first,
    /// 64 in each further one).
    pub slot_bytes: usize,
    /// Bulk slots per rank (0: none, every message goes through the small slots).
    pub bulk_slots: usize,
    /// Payload bytes per bulk slot, at least (whole lines as for `slot_bytes`).
    pub bulk_slot_bytes: usize,
}

impl PostShape {
    /// The default shape for `n` ranks: [`DEFAULT_SLOTS`] small slots of
    /// [`DEFAULT_SLOT_BYTES`], and bulk slots of [`DEFAULT_BULK_SLOT_BYTES`], as many as
    /// [`BULK_WINDOW_BYTES`] holds for `n` ranks but at least 8 and at most
    /// [`DEFAULT_BULK_SLOTS`].
    #[must_use]
    pub fn for_ranks(n: usize) -> PostShape {
        PostShape {
            bulk_slots: (BULK_WINDOW_BYTES / DEFAULT_BULK_SLOT_BYTES / n.max(1))
                .clamp(8, DEFAULT_BULK_SLOTS),
            ..PostShape::default()
        }
    }
}

impl Default for PostShape {
    /// The shape of [`PostShape::for_ranks`] for up to 16 ranks.
    fn default() -> PostShape {
        PostShape {
            slots: DEFAULT_SLOTS,
            slot_bytes: DEFAULT_SLOT_BYTES,
            bulk_slots: DEFAULT_BULK_SLOTS,
            bulk_slot_bytes: DEFAULT_BULK_SLOT_BYTES,
        }
    }
}

/// Payload bytes in a slot's first line (after its tag and header words).
const HEAD_BYTES: usize = 48;

/// The protocol over the window's words (see the module docs); the same code runs on an MPI
/// window and, in the loom models, on words of one process.
///
/// Layout, per rank: the first lines of its slots together (a tag word, a header word and 48
/// payload bytes each: a small broadcast touches one line, and consecutive calls consecutive
/// lines), then the slots' further lines, then a line for its progress word.
#[derive(Debug)]
pub(crate) struct Board<'w, W> {
    words: &'w [W],
    n: usize,
    slots: usize,
    /// Further lines per slot.
    more: usize,
}

impl<'w, W: Word> Board<'w, W> {
    /// The words a board of `n` ranks with `slots` slots of at least `slot_bytes` bytes needs.
    pub(crate) fn words_needed(n: usize, slots: usize, slot_bytes: usize) -> usize {
        n * Self::rank_words(slots, Self::more_lines(slot_bytes))
    }

    fn more_lines(slot_bytes: usize) -> usize {
        slot_bytes.saturating_sub(HEAD_BYTES).div_ceil(64)
    }

    fn rank_words(slots: usize, more: usize) -> usize {
        slots * 8 * (1 + more) + 8
    }

    /// The board of `n` ranks over `words` (at least [`Board::words_needed`], zero), `slots`
    /// slots each (at least 1) of at least `slot_bytes` payload bytes.
    pub(crate) fn new(words: &'w [W], n: usize, slots: usize, slot_bytes: usize) -> Board<'w, W> {
        assert!(slots >= 1 && words.len() >= Self::words_needed(n, slots, slot_bytes));
        Board {
            words,
            n,
            slots,
            more: Self::more_lines(slot_bytes),
        }
    }

    /// The payload bytes of a slot.
    pub(crate) fn capacity(&self) -> usize {
        HEAD_BYTES + 64 * self.more
    }

    fn base(&self, r: usize) -> usize {
        r * Self::rank_words(self.slots, self.more)
    }

    /// Root `root`'s slot of epoch `e`: its first line and its further lines.
    fn slot(&self, root: usize, e: u64) -> (&'w [W], &'w [W]) {
        let i = (e % self.slots as u64) as usize;
        let head = self.base(root) + 8 * i;
        let more = self.base(root) + 8 * self.slots + 8 * self.more * i;
        (
            &self.words[head..head + 8],
            &self.words[more..more + 8 * self.more],
        )
    }

    fn progress(&self, r: usize) -> &'w W {
        &self.words[self.base(r) + 8 * self.slots * (1 + self.more)]
    }

    /// Rank `r`'s last cost of copying a long chunk out, plain (`streamed` false) or streamed:
    /// a word of its progress line, after the progress itself.
    fn read_cost(&self, r: usize, streamed: bool) -> &'w W {
        &self.words[self.base(r) + 8 * self.slots * (1 + self.more) + 1 + usize::from(streamed)]
    }

    /// Whether root `me` may write its slot of epoch `e`: every other rank's progress is at
    /// least `e − slots`. `least` is the least progress of the others seen so far (a lower
    /// bound, since progress only grows); they are read again only when it is too little.
    /// `Err(r)`: not yet, rank `r` is the slowest.
    pub(crate) fn room(&self, me: usize, e: u64, least: &mut u64) -> Result<(), usize> {
        let slots = self.slots as u64;
        if e <= *least + slots {
            return Ok(());
        }
        let (mut low, mut who) = (u64::MAX, me);
        for r in (0..self.n).filter(|&r| r != me) {
            let p = self.progress(r).load(Ordering::Acquire);
            if p < low {
                (low, who) = (p, r);
            }
        }
        if low == u64::MAX {
            low = e; // a board of one rank
        }
        *least = low;
        if e <= low + slots {
            Ok(())
        } else {
            Err(who)
        }
    }

    /// Root `me` posts `chunk` (at most [`capacity`](Self::capacity) bytes) of a message of
    /// `total` bytes as epoch `e`, after [`room`](Self::room) said yes.
    pub(crate) fn write(&self, me: usize, e: u64, total: u64, chunk: &[u8], how: &mut Stores) {
        let (head, more) = self.slot(me, e);
        let first = chunk.len().min(HEAD_BYTES);
        // The further lines first, then the first line whole, its tag last: a reader polling
        // the tag takes the first line away once, not between its stores.
        let streamed = W::store_lines(more, &chunk[first..], how);
        head[1].store(with_way(total, streamed), Ordering::Relaxed);
        store_words(&head[2..], &chunk[..first]);
        head[0].store(e, Ordering::Release);
    }

    /// Rank `me` posts `chunk` (at most [`capacity`](Self::capacity)` / 8` elements) of a
    /// value of `total` bytes as epoch `e`, after [`room`](Self::room) said yes: one element
    /// per word.
    pub(crate) fn write_elements(
        &self,
        me: usize,
        e: u64,
        total: u64,
        chunk: &[u64],
        how: &mut Stores,
    ) {
        let (head, more) = self.slot(me, e);
        let first = chunk.len().min(HEAD_BYTES / 8);
        // As `write`: the further lines first, the first line whole after them.
        let streamed = W::store_element_lines(more, &chunk[first..], how);
        head[1].store(with_way(total, streamed), Ordering::Relaxed);
        store_elements(&head[2..], &chunk[..first]);
        head[0].store(e, Ordering::Release);
    }

    /// Rank `me` has finished epoch `e`: every slot of that epoch it reads, it has read
    /// (a root, at once).
    pub(crate) fn done(&self, me: usize, e: u64) {
        self.progress(me).store(e, Ordering::Release);
    }

    /// [`done`](Self::done), after leaving the cost of the chunk it copied out, if it timed
    /// one ([`read`](Self::read)), beside its progress for the roots ([`reader_costs`](Self::reader_costs)).
    pub(crate) fn done_reporting(&self, me: usize, e: u64, report: Option<ReadCost>) {
        if let Some(ReadCost { streamed, cost }) = report {
            // Relaxed: a cost only steers a root's choice of stores, and any cost it reads,
            // however old, is one this rank measured.
            self.read_cost(me, streamed)
                .store(cost.max(1), Ordering::Relaxed);
        }
        self.done(me, e);
    }

    /// The slowest reader's last costs of copying a plain and a streamed chunk out (ns per
    /// 64 KiB, 0 where none has reported that way), among the ranks other than `me`.
    pub(crate) fn reader_costs(&self, me: usize) -> (u64, u64) {
        let worst = |streamed: bool| {
            (0..self.n)
                .filter(|&r| r != me)
                .map(|r| self.read_cost(r, streamed).load(Ordering::Relaxed))
                .max()
                .unwrap_or(0)
        };
        (worst(false), worst(true))
    }

    /// Whether root `root` has posted epoch `e`.
    pub(crate) fn ready(&self, root: usize, e: u64) -> bool {
        self.slot(root, e).0[0].load(Ordering::Acquire) == e
    }

    /// Loads epoch `e` from root `root` into `out`, after [`ready`](Self::ready) said yes,
    /// and, for a chunk whose further lines are [`STREAM_FROM`] bytes or more (where the root
    /// chooses how to store them), what copying them out cost and how they were stored.
    /// `Err(total)`: the root posted a message of `total` bytes, not `want` (nothing is
    /// loaded).
    pub(crate) fn read(
        &self,
        root: usize,
        e: u64,
        want: u64,
        out: &mut [u8],
    ) -> Result<Option<ReadCost>, u64> {
        let (head, more) = self.slot(root, e);
        let (total, streamed) = way_of(head[1].load(Ordering::Relaxed));
        if total != want {
            return Err(total);
        }
        let first = out.len().min(HEAD_BYTES);
        let (a, b) = out.split_at_mut(first);
        load_words(&head[2..], a);
        let start = (W::TIMES_READS && b.len() >= STREAM_FROM).then(std::time::Instant::now);
        W::load_lines(more, b);
        Ok(start.map(|start| ReadCost {
            streamed,
            cost: per_64k(start, b.len()),
        }))
    }

    /// Adds (wrapping) the elements rank `from` posted as epoch `e` into `acc`, after
    /// [`ready`](Self::ready) said yes. `Err(total)`: it posted a value of `total` bytes, not
    /// `want` (nothing is added).
    pub(crate) fn add_elements(
        &self,
        from: usize,
        e: u64,
        want: u64,
        acc: &mut [u64],
    ) -> Result<(), u64> {
        let (head, more) = self.slot(from, e);
        let (total, _) = way_of(head[1].load(Ordering::Relaxed));
        if total != want {
            return Err(total);
        }
        let first = acc.len().min(HEAD_BYTES / 8);
        let (a, b) = acc.split_at_mut(first);
        add_words(&head[2..], a);
        W::add_lines(more, b);
        Ok(())
    }
}

/// A post's boards over one window: the small board, then the bulk board (if the shape has
/// bulk slots). A collective of more bytes than a small slot holds takes the bulk board; the
/// ranks make the same calls with the same lengths, so they pick alike and each board counts
/// its own epochs.
#[derive(Debug)]
pub(crate) struct Boards<'w, W> {
    small: Board<'w, W>,
    bulk: Option<Board<'w, W>>,
}

impl<'w, W: Word> Boards<'w, W> {
    /// The words the boards of `n` ranks of `shape` need.
    pub(crate) fn words_needed(n: usize, shape: &PostShape) -> usize {
        Board::<W>::words_needed(n, shape.slots, shape.slot_bytes)
            + if shape.bulk_slots > 0 {
                Board::<W>::words_needed(n, shape.bulk_slots, shape.bulk_slot_bytes)
            } else {
                0
            }
    }

    /// The boards of `n` ranks of `shape` over `words` (at least [`Boards::words_needed`],
    /// zero): the small board's words first (a whole number of lines), then the bulk board's.
    pub(crate) fn new(words: &'w [W], n: usize, shape: &PostShape) -> Boards<'w, W> {
        let (small, rest) =
            words.split_at(Board::<W>::words_needed(n, shape.slots, shape.slot_bytes));
        Boards {
            small: Board::new(small, n, shape.slots, shape.slot_bytes),
            bulk: (shape.bulk_slots > 0)
                .then(|| Board::new(rest, n, shape.bulk_slots, shape.bulk_slot_bytes)),
        }
    }

    /// The board a collective of `bytes` bytes takes, and its number (0 small, 1 bulk: which
    /// of a rank's two cursors).
    pub(crate) fn route(&self, bytes: usize) -> (&Board<'w, W>, usize) {
        match &self.bulk {
            Some(bulk) if bytes > self.small.capacity() => (bulk, 1),
            _ => (&self.small, 0),
        }
    }
}

/// Slots per rank of the agreements ([`Agreements`]): one line of (tag, value) pairs.
pub(crate) const AGREE_SLOTS: u64 = 4;
/// How many agreements late a rank reads the others' values: `AGREE_SLOTS / 2`, so a rank
/// overwrites a slot only once every other rank has read it (see [`agree`]).
pub(crate) const AGREE_LAG: u64 = AGREE_SLOTS / 2;

/// The agreements of a post's ranks, after the boards in the window: per rank one line of
/// [`AGREE_SLOTS`] slots, each a tag word (agreement `k` is tagged `k + 1`; 0: none yet) and a
/// value word. Agreement `k` goes in slot `k mod AGREE_SLOTS`.
#[derive(Debug)]
pub(crate) struct Agreements<'w, W> {
    words: &'w [W],
    n: usize,
}

impl<'w, W: Word> Agreements<'w, W> {
    /// The words the agreements of `n` ranks need.
    pub(crate) fn words_needed(n: usize) -> usize {
        8 * n
    }

    /// The agreements of `n` ranks of `shape` in a window's `words` (at least
    /// [`window_words`], zero): after the boards.
    pub(crate) fn in_window(words: &'w [W], n: usize, shape: &PostShape) -> Agreements<'w, W> {
        Agreements {
            words: &words[Boards::<W>::words_needed(n, shape)..],
            n,
        }
    }

    fn slot(&self, r: usize, k: u64) -> (&'w W, &'w W) {
        let at = 8 * r + 2 * (k % AGREE_SLOTS) as usize;
        (&self.words[at], &self.words[at + 1])
    }

    /// Rank `r`'s value of agreement `k`, if it has published it.
    fn published(&self, r: usize, k: u64) -> Option<u64> {
        let (tag, value) = self.slot(r, k);
        (tag.load(Ordering::Acquire) == k + 1).then(|| value.load(Ordering::Relaxed))
    }

    /// Publishes rank `me`'s value of agreement `k`.
    fn publish(&self, me: usize, k: u64, value: u64) {
        let (tag, word) = self.slot(me, k);
        word.store(value, Ordering::Relaxed);
        tag.store(k + 1, Ordering::Release);
    }
}

/// The words of a post's window of `n` ranks of `shape`: the boards', then the agreements'.
fn window_words(n: usize, shape: &PostShape) -> usize {
    Boards::<AtomicU64>::words_needed(n, shape) + Agreements::<AtomicU64>::words_needed(n)
}

/// Rank `me`'s agreement `k` on `ag` (the ranks number their agreements alike from 0): reads
/// every rank's value of agreement `k − AGREE_LAG` into `earlier` (waiting, with `wait`, for a
/// rank that has not published it yet), then publishes `mine` as its value of agreement `k`.
/// Returns whether `earlier` was filled (`k ≥ AGREE_LAG`).
///
/// No rank waits for another to reach the same agreement, only for one `AGREE_LAG`
/// agreements behind it: a rank may run that far ahead. Reuse: rank `r` overwrites slot
/// `k mod AGREE_SLOTS` (agreement `k − AGREE_SLOTS`'s) only after it read every other rank's
/// `k − AGREE_LAG` (tag `Acquire`), which each published (tag `Release`) after it read `r`'s
/// `k − 2·AGREE_LAG = k − AGREE_SLOTS`. So a value is read before it is overwritten, and a
/// reader waiting for agreement `j` sees an earlier tag (not yet) or `j`'s, never a later one.
pub(crate) fn agree<W: Word, E>(
    ag: &Agreements<'_, W>,
    (me, k): (usize, u64),
    mine: u64,
    earlier: &mut [u64],
    wait: &mut impl Wait<E>,
) -> Result<bool, E> {
    let filled = k >= AGREE_LAG;
    if filled {
        let j = k - AGREE_LAG;
        for (r, out) in earlier.iter_mut().enumerate().take(ag.n) {
            let mut got = None;
            wait(
                &mut || {
                    got = ag.published(r, j);
                    Ok(got.is_some())
                },
                &|| format!("rank {r}'s time of an earlier epoch (agreement {j})"),
                true,
            )?;
            *out = got.unwrap_or_default();
        }
    }
    ag.publish(me, k, mine);
    Ok(filled)
}

/// Stores `bytes` (at most `8 × words.len()`) into `words`, little-endian, the last word
/// zero-padded.
fn store_words<W: Word>(words: &[W], bytes: &[u8]) {
    let mut chunks = bytes.chunks_exact(8);
    for (word, c) in words.iter().zip(&mut chunks) {
        word.store(
            u64::from_le_bytes(c.try_into().expect("8 bytes")),
            Ordering::Relaxed,
        );
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut w = [0u8; 8];
        w[..tail.len()].copy_from_slice(tail);
        words[bytes.len() / 8].store(u64::from_le_bytes(w), Ordering::Relaxed);
    }
}

/// Stores `elements` (at most `words.len()`) into `words`, one a word.
fn store_elements<W: Word>(words: &[W], elements: &[u64]) {
    for (w, &v) in words.iter().zip(elements) {
        w.store(v, Ordering::Relaxed);
    }
}

/// Adds (wrapping) `words` (at least `acc.len()`), one element a word, into `acc`.
fn add_words<W: Word>(words: &[W], acc: &mut [u64]) {
    for (x, w) in acc.iter_mut().zip(words) {
        *x = x.wrapping_add(w.load(Ordering::Relaxed));
    }
}

/// Copies `src` to `dst` as [`herald::runtime::copy_plain_to`] does, the bytes that fill whole
/// lines and a partial last line as two copies (an empty part not at all): a root's plain
/// stores into its slot's further lines and a reader's loads out of them. One copy of a
/// length that ends inside a line (the C library's, or the vector loop's tail) ends in
/// overlapping stores or loads across the last lines, and cost 4–10 % more: 2 processes of
/// Open MPI on this machine's 2 CPUs, 18 alternating pairs of runs, a 576-byte broadcast
/// (8.25 further lines) over a 560-byte one (8 lines) 1.03–1.11 with one copy, 0.96–1.04 with
/// two (docs/mpi.md, "Fifty-eighth session"; in process likewise, docs/runtime.md, "Posted
/// payloads that end inside a line").
///
/// # Safety
/// As [`herald::runtime::copy_plain_to`]: `dst` is valid for `src.len()` bytes of writes and
/// does not overlap `src`, and no other thread or process accesses those bytes meanwhile.
unsafe fn copy_by_lines(src: &[u8], dst: *mut u8) {
    let whole = src.len() & !63;
    // SAFETY: the caller's contract; `whole ≤ src.len()`, so both parts lie inside the span.
    unsafe {
        if whole > 0 {
            herald::runtime::copy_plain_to(&src[..whole], dst);
        }
        if whole < src.len() {
            herald::runtime::copy_plain_to(&src[whole..], dst.add(whole));
        }
    }
}

/// Loads `out.len()` bytes from `words`: the inverse of [`store_words`].
fn load_words<W: Word>(words: &[W], out: &mut [u8]) {
    let whole = out.len() / 8;
    let mut chunks = out.chunks_exact_mut(8);
    for (c, word) in (&mut chunks).zip(words) {
        c.copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let w = words[whole].load(Ordering::Relaxed).to_le_bytes();
        tail.copy_from_slice(&w[..tail.len()]);
    }
}

/// A rank's place on a board: its rank, the last epoch it took part in, the least progress
/// of the other ranks it has seen (see [`Board::room`]), and how it stores long chunks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub(crate) me: usize,
    pub(crate) epoch: u64,
    pub(crate) least: u64,
    /// How this rank, as a root, stores long chunks on this board.
    pub(crate) stores: Stores,
}

/// How a side of a posted collective waits: `wait(ready, waiting, hot)` polls `ready` until
/// it holds, and says what it waits for with `waiting()`; `hot` says that what it waits for
/// is likely a running process's next step, so a spin before yielding may pay.
pub(crate) trait Wait<E>:
    FnMut(&mut dyn FnMut() -> Result<bool, E>, &dyn Fn() -> String, bool) -> Result<(), E>
{
}

impl<E, F> Wait<E> for F where
    F: FnMut(&mut dyn FnMut() -> Result<bool, E>, &dyn Fn() -> String, bool) -> Result<(), E>
{
}

/// What a broadcast's reader knows of where its root and its CPU's other ranks run, to tell
/// whether a spin for the root's post can pay (see [`Reply::spins`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reply<'a> {
    /// The root runs on another CPU than this rank (or either's CPU is unknown).
    pub(crate) across: bool,
    /// The other ranks pinned to this rank's CPU.
    pub(crate) mates: &'a [usize],
}

impl Reply<'_> {
    /// Whether a reader that posted epoch `e − 1` itself (a root waiting for the reply to its
    /// post) may spin for epoch `e`: the root runs on another CPU, and no rank of this one
    /// keeps it from posting (a mate whose progress is more than the board's slots behind `e`,
    /// which the root must wait for, and which needs this CPU to catch up).
    fn spins<W: Word>(&self, board: &Board<'_, W>, e: u64) -> bool {
        self.across
            && self
                .mates
                .iter()
                .all(|&m| board.progress(m).load(Ordering::Acquire) + board.slots as u64 >= e)
    }
}

/// Waits, if it must, until rank `at.me` may write its slot of epoch `e`.
fn make_room<W: Word, E>(
    board: &Board<'_, W>,
    at: &mut Cursor,
    e: u64,
    wait: &mut impl Wait<E>,
) -> Result<(), E> {
    let me = at.me;
    let seen = at.least;
    let least = &mut at.least;
    if let Err(r) = board.room(me, e, least) {
        let slowest = std::cell::Cell::new(r);
        wait(
            &mut || match board.room(me, e, least) {
                Ok(()) => Ok(true),
                Err(r) => {
                    slowest.set(r);
                    Ok(false)
                }
            },
            &|| format!("rank {} to read an earlier post", slowest.get()),
            true,
        )?;
    }
    // The readers' progress was just read again: their costs lie on the same lines.
    if W::TIMES_READS && at.least != seen {
        let (plain, streamed) = board.reader_costs(me);
        at.stores.readers(plain, streamed);
    }
    Ok(())
}

/// Rank `at.me`'s side of a broadcast of `buf` from `root` on `board`, as the epochs after
/// `at.epoch`, chunk by chunk, each step waited for by `wait`; `length(root, total)` is the
/// error of a root that posted `total` bytes where this rank expected `buf.len()`.
pub(crate) fn broadcast<W: Word, E>(
    board: &Board<'_, W>,
    at: &mut Cursor,
    (root, reply): (usize, Reply<'_>),
    buf: &mut [u8],
    mut wait: impl Wait<E>,
    length: impl Fn(usize, u64) -> E,
) -> Result<(), E> {
    let cap = board.capacity();
    let total = buf.len() as u64;
    let chunks = buf.len().div_ceil(cap).max(1);
    let me = at.me;
    for c in 0..chunks {
        let e = at.epoch + 1;
        let range = c * cap..((c + 1) * cap).min(buf.len());
        let report = if me == root {
            make_room(board, at, e, &mut wait)?;
            board.write(me, e, total, &buf[range], &mut at.stores);
            None
        } else {
            if !board.ready(root, e) {
                // A root waiting for the reply to its own post spins first where that can pay.
                let hot = e > 1 && board.ready(me, e - 1) && reply.spins(board, e);
                wait(
                    &mut || Ok(board.ready(root, e)),
                    &|| format!("a posted broadcast from rank {root}"),
                    hot,
                )?;
            }
            board
                .read(root, e, total, &mut buf[range])
                .map_err(|got| length(root, got))?
        };
        board.done_reporting(me, e, report);
        at.epoch = e;
    }
    Ok(())
}

/// Rank `at.me`'s side of an allreduce (wrapping sum) of `value` on `board`, as the epochs
/// after `at.epoch`, chunk by chunk: every rank posts its chunk in its own slot, then adds
/// every other rank's into its value (an allgather, each rank reducing for itself), and
/// records its progress only then. `length(rank, total)` is the error of a rank that posted
/// `total` bytes where this rank has `8 × value.len()`.
pub(crate) fn allreduce<W: Word, E>(
    board: &Board<'_, W>,
    at: &mut Cursor,
    value: &mut [u64],
    mut wait: impl Wait<E>,
    length: impl Fn(usize, u64) -> E,
) -> Result<(), E> {
    let cap = board.capacity() / 8;
    let total = 8 * value.len() as u64;
    let chunks = value.len().div_ceil(cap).max(1);
    let me = at.me;
    for c in 0..chunks {
        let e = at.epoch + 1;
        let range = c * cap..((c + 1) * cap).min(value.len());
        make_room(board, at, e, &mut wait)?;
        board.write_elements(me, e, total, &value[range.clone()], &mut at.stores);
        for from in (0..board.n).filter(|&r| r != me) {
            if !board.ready(from, e) {
                wait(
                    &mut || Ok(board.ready(from, e)),
                    &|| format!("rank {from}'s part of a posted allreduce"),
                    true,
                )?;
            }
            board
                .add_elements(from, e, total, &mut value[range.clone()])
                .map_err(|got| length(from, got))?;
        }
        board.done(me, e);
        at.epoch = e;
    }
    Ok(())
}

/// A shared window on which every rank of the job posts broadcasts and allreduces (see the
/// module docs). All ranks must be on one node (one host's shared memory).
///
/// ```no_run
/// use herald_mpi::{InitOptions, Post, World};
/// let world = World::init(InitOptions::default())?; // under mpirun -np 4, on one host
/// let chan = world.channel()?;
/// let post = Post::new(&chan, herald_mpi::post::PostShape::default())?;
/// let mut buf = if world.rank() == 0 { vec![7u8; 10_000] } else { vec![0; 10_000] };
/// post.broadcast(&chan, &mut buf, 0)?;
/// assert!(buf.iter().all(|&b| b == 7));
/// let mut value = vec![world.rank() as u64; 1000];
/// post.allreduce(&chan, &mut value)?; // every rank: the sum of the ranks
/// assert!(value.iter().all(|&v| v == (0..world.size() as u64).sum::<u64>()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Post {
    win: mpi::ffi::MPI_Win,
    /// The window's words (aligned to a line), valid until `win` is freed.
    words: *const AtomicU64,
    len: usize,
    n: usize,
    rank: usize,
    shape: PostShape,
    /// This rank's place on each board (small, bulk).
    at: [std::cell::Cell<Cursor>; 2],
    /// This rank's agreements so far ([`Post::agree`]).
    agreed: std::cell::Cell<u64>,
    /// A broadcast failed: every later one fails too.
    failed: std::cell::Cell<bool>,
    /// It failed waiting (a timeout or a stop notice): some rank may never come to free the
    /// window, so this one does not try.
    abandoned: std::cell::Cell<bool>,
    /// How long the free waits for the other ranks (the channel's timeout).
    timeout: std::time::Duration,
    /// The node's communicator (the window's), kept for the window's lifetime.
    node: mpi::topology::SimpleCommunicator,
    /// Each rank's CPU, where it runs on one.
    cpus: Vec<Option<usize>>,
    /// The other ranks on this rank's CPU.
    mates: Vec<usize>,
}

impl std::fmt::Debug for Post {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Post")
            .field("n", &self.n)
            .field("rank", &self.rank)
            .field("shape", &self.shape)
            .field("epochs", &self.at.each_ref().map(|a| a.get().epoch))
            .finish_non_exhaustive()
    }
}

impl Post {
    /// Allocates the shared window for `chan`'s ranks, with `shape.slots` slots per rank of at
    /// least `shape.slot_bytes` payload bytes (a slot is whole lines:
    /// [`slot_bytes`](Self::slot_bytes) says how many it holds) and `shape.bulk_slots` of at
    /// least `shape.bulk_slot_bytes` for longer messages; collective over the channel's ranks,
    /// which must pass the same shape ([`PostShape::for_ranks`] of their number by default).
    ///
    /// # Errors
    /// [`P2pErrorKind::Invalid`] if the ranks are not all on one node, or the shape has no
    /// small slots, slots of no bytes, or makes a window too large to address;
    /// [`P2pErrorKind::Mpi`] if MPI fails.
    pub fn new(chan: &Channel, shape: PostShape) -> Result<Post, P2pError> {
        // collective calls of the library: a rank that never comes ends the job (`bounded`)
        crate::bounded(
            chan.rank(),
            chan.timeout() + crate::SLACK,
            "MPI_Comm_split_type, MPI_Win_allocate_shared (a shared window's creation)",
            || Post::create(chan, shape),
        )
    }

    /// [`Post::new`] without the watchdog.
    fn create(chan: &Channel, shape: PostShape) -> Result<Post, P2pError> {
        use mpi::ffi;
        use mpi::raw::AsRaw;
        use mpi::topology::Communicator;
        use std::os::raw::{c_int, c_void};
        let (n, rank) = (chan.size(), chan.rank());
        let node = chan.comm().split_shared(0);
        if node.size() as usize != n {
            return Err(P2pErrorKind::Invalid(format!(
                "a posted broadcast needs every rank on one node: {} of the {n} ranks share this one",
                node.size()
            ))
            .into());
        }
        let PostShape {
            slots,
            slot_bytes,
            bulk_slots,
            bulk_slot_bytes,
        } = shape;
        if slot_bytes == 0 || slot_bytes > 1 << 30 || slots == 0 || slots > 1 << 16 {
            return Err(P2pErrorKind::Invalid(format!(
                "{slots} slots of {slot_bytes} bytes: 1 to 65536 slots of 1 byte to 1 GiB"
            ))
            .into());
        }
        if bulk_slots > 0 && (bulk_slot_bytes == 0 || bulk_slot_bytes > 1 << 30)
            || bulk_slots > 1 << 16
        {
            return Err(P2pErrorKind::Invalid(format!(
                "{bulk_slots} bulk slots of {bulk_slot_bytes} bytes: 0 to 65536 slots of 1 \
                 byte to 1 GiB"
            ))
            .into());
        }
        // A line of slack to align the words to a line.
        let len = slots
            .checked_mul(slot_bytes + 64)
            .and_then(|b| {
                // `bulk_slot_bytes` is checked above only where there are bulk slots
                let bulk = if bulk_slots == 0 {
                    0
                } else {
                    bulk_slots.checked_mul(bulk_slot_bytes + 64)?
                };
                b.checked_add(bulk)
            })
            .and_then(|b| b.checked_mul(n))
            .map(|_| window_words(n, &shape) + 8)
            .ok_or_else(|| P2pErrorKind::Invalid("the window is too large".into()))?;
        let bytes = len
            .checked_mul(8)
            .and_then(|b| ffi::MPI_Aint::try_from(b).ok())
            .ok_or_else(|| P2pErrorKind::Invalid("the window is too large".into()))?;
        let node_rank = node.rank();
        let mut base: *mut c_void = std::ptr::null_mut();
        // SAFETY: reading an MPI-provided constant handle.
        let mut win = unsafe { ffi::RSMPI_WIN_NULL };
        // SAFETY: `node` is a valid communicator; node rank 0 asks for the whole window, the
        // others for none (so it is one contiguous block); `base` and `win` receive the
        // rank's base address and the window handle.
        let rc = unsafe {
            ffi::MPI_Win_allocate_shared(
                if node_rank == 0 { bytes } else { 0 },
                8,
                ffi::RSMPI_INFO_NULL,
                node.as_raw(),
                (&mut base as *mut *mut c_void).cast::<c_void>(),
                &mut win,
            )
        };
        crate::p2p::check("MPI_Win_allocate_shared", rc)?;
        let mut size: ffi::MPI_Aint = 0;
        let mut unit: c_int = 0;
        // SAFETY: `win` is the window just allocated; the query writes node rank 0's size, unit
        // and base address (as mapped in this process) into the three locals.
        let rc = unsafe {
            ffi::MPI_Win_shared_query(
                win,
                0,
                &mut size,
                &mut unit,
                (&mut base as *mut *mut c_void).cast::<c_void>(),
            )
        };
        let post_fail = |call: &'static str, rc: c_int, mut win: ffi::MPI_Win| {
            // SAFETY: `win` is a valid window every rank frees here alike (the calls before
            // are collective, and fail alike).
            unsafe { ffi::MPI_Win_free(&mut win) };
            crate::p2p::check(call, rc)
        };
        if rc != 0 || size < bytes || base.is_null() {
            post_fail("MPI_Win_shared_query", rc.max(1), win)?;
        }
        let words = base
            .cast::<u8>()
            .wrapping_add(base.cast::<u8>().align_offset(64))
            .cast::<AtomicU64>();
        if node_rank == 0 {
            // SAFETY: the window's `bytes` bytes from `base` are this process's to write (no
            // other rank touches them before the barrier below); `words` lies within them
            // with `len − 8` words after it (the alignment takes at most 7 of the slack).
            unsafe { std::ptr::write_bytes(words, 0, len - 8) };
        }
        // SAFETY: `win` is valid; MPI_MODE_NOCHECK: no rank locks the window otherwise.
        let rc = unsafe { ffi::MPI_Win_lock_all(ffi::MPI_MODE_NOCHECK as c_int, win) };
        if rc != 0 {
            post_fail("MPI_Win_lock_all", rc, win)?;
        }
        // Node rank 0's zeroes are in place before any rank touches the window.
        mpi::collective::CommunicatorCollectives::barrier(&node);
        // Where each rank runs: a reader may spin for a root's reply only across CPUs.
        let mine: i64 = match core_affinity::get_core_ids().as_deref() {
            Some([one]) => i64::try_from(one.id).unwrap_or(-1),
            _ => -1,
        };
        let mut all = vec![-1i64; n];
        mpi::collective::CommunicatorCollectives::all_gather_into(chan.comm(), &mine, &mut all[..]);
        let cpus: Vec<Option<usize>> = all.iter().map(|&c| usize::try_from(c).ok()).collect();
        let mates = (0..n)
            .filter(|&r| r != rank && cpus[rank].is_some() && cpus[r] == cpus[rank])
            .collect();
        let post = Post {
            win,
            words,
            len: len - 8,
            n,
            rank,
            shape,
            at: [0, 1].map(|_| {
                std::cell::Cell::new(Cursor {
                    me: rank,
                    ..Cursor::default()
                })
            }),
            agreed: std::cell::Cell::new(0),
            failed: std::cell::Cell::new(false),
            abandoned: std::cell::Cell::new(false),
            timeout: chan.timeout(),
            node,
            cpus,
            mates,
        };
        // Every process maps every page of the window before any rank posts: a page a
        // process first meets in a collective costs that call a page fault (about 0.7 µs a
        // 4 KiB page here). A timed choice between posting and MPI (`adapt`) that tried
        // posting after a run over MPI paid them in its tries: a 2-rank `loop` of 256 KiB
        // broadcasts, 51–125 µs a call posted against 26–33 over MPI, never switched where
        // posting, warm, takes 10. An atomic add of 0 to one word per page maps it writable
        // and changes nothing.
        for word in post.words().iter().step_by(4096 / 8) {
            word.fetch_add(0, Ordering::Relaxed);
        }
        mpi::collective::CommunicatorCollectives::barrier(&post.node);
        Ok(post)
    }

    /// The window's words.
    fn words(&self) -> &[AtomicU64] {
        // SAFETY: `words` points to `len` zero-initialized, 8-byte aligned words of the shared
        // window, mapped until `self.win` is freed in `drop` (so for `self`'s lifetime); every
        // process accesses them only through atomics (`AtomicU64` has the size and alignment
        // of `u64`), as the board's protocol does.
        unsafe { std::slice::from_raw_parts(self.words, self.len) }
    }

    fn boards(&self) -> Boards<'_, AtomicU64> {
        Boards::new(self.words(), self.n, &self.shape)
    }

    fn agreements(&self) -> Agreements<'_, AtomicU64> {
        Agreements::in_window(self.words(), self.n, &self.shape)
    }

    /// An agreement among the ranks of `chan` that does not make them wait for each other:
    /// publishes `mine` as this rank's value of its next agreement and fills `earlier` (one
    /// value per rank, in rank order) with every rank's value of the agreement two before it,
    /// waiting only for a rank that has not made that one yet. Returns whether `earlier` was
    /// filled (not at the first two agreements). Every rank makes the same agreements in the
    /// same order as its other collectives on the post ([`crate::adapt`] uses it).
    ///
    /// # Errors
    /// [`P2pErrorKind::Invalid`] if `earlier` has not one value per rank, the channel is not
    /// the post's, or an earlier posted collective failed; a timeout or a stop notice while
    /// waiting.
    pub fn agree(&self, chan: &Channel, mine: u64, earlier: &mut [u64]) -> Result<bool, P2pError> {
        if earlier.len() != self.n {
            return Err(P2pErrorKind::Invalid(format!(
                "an agreement of {} ranks into {} values",
                self.n,
                earlier.len()
            ))
            .into());
        }
        self.check(chan, "agreement")?;
        let k = self.agreed.get();
        let mut wait = channel_wait(chan, SPIN_POLLS);
        let out = agree(&self.agreements(), (self.rank, k), mine, earlier, &mut wait);
        self.agreed.set(k + 1);
        self.record(out)
    }

    /// The payload bytes of a small slot: messages up to it go through the small slots (and
    /// all messages where there are no bulk slots, in chunks of it).
    pub fn slot_bytes(&self) -> usize {
        self.boards().small.capacity()
    }

    /// The payload bytes of a bulk slot (a chunk of a message longer than a small slot), if
    /// the post has bulk slots.
    pub fn bulk_slot_bytes(&self) -> Option<usize> {
        self.boards().bulk.as_ref().map(Board::capacity)
    }

    /// Broadcasts `buf` from `root` to every rank of `chan` (the channel the post was made
    /// for): the root's bytes end up in every rank's `buf`. Every rank calls it with the same
    /// root and length, in the same order as its other posted collectives.
    ///
    /// # Errors
    /// [`P2pErrorKind::Length`] where the root posted another length (on that reader);
    /// [`P2pErrorKind::Timeout`] after the channel's timeout without progress (naming the rank
    /// waited for), [`P2pErrorKind::Stopped`] if another rank gave up;
    /// [`P2pErrorKind::Invalid`] for a root outside the job or another channel. After an
    /// error the post fails every later call.
    pub fn broadcast(&self, chan: &Channel, buf: &mut [u8], root: usize) -> Result<(), P2pError> {
        if root >= self.n {
            return Err(P2pErrorKind::Invalid(format!(
                "a posted broadcast from rank {root} of {} ranks",
                self.n
            ))
            .into());
        }
        let want = buf.len();
        let reply = Reply {
            across: match (self.cpus[root], self.cpus[self.rank]) {
                (Some(a), Some(b)) => a != b,
                _ => true,
            },
            mates: &self.mates,
        };
        self.run(
            chan,
            "broadcast",
            want,
            SPIN_POLLS,
            |board, at, wait, length| broadcast(board, at, (root, reply), buf, wait, length),
        )
    }

    /// Sums `value` element-wise (wrapping) over every rank of `chan` (the channel the post was
    /// made for): every rank ends with the sum of every rank's `value`. Each rank posts its
    /// value in its own slots and adds the others' (chunk by chunk,
    /// [`slot_bytes`](Self::slot_bytes) at a time): one step where a tree takes `2 log₂ n`, at
    /// the price of reading every rank's value. Every rank calls it with the same length, in
    /// the same order as its other posted collectives.
    ///
    /// # Errors
    /// As [`broadcast`](Self::broadcast): [`P2pErrorKind::Length`] where a rank posted another
    /// length (naming it), a timeout or a stop notice; after an error the post fails every
    /// later call.
    pub fn allreduce(&self, chan: &Channel, value: &mut [u64]) -> Result<(), P2pError> {
        let want = 8 * value.len();
        self.run(
            chan,
            "allreduce",
            want,
            ALLREDUCE_SPINS,
            |board, at, wait, length| allreduce(board, at, value, wait, length),
        )
    }

    /// Runs one side of a posted collective (`what`, `want` bytes on this rank) on the board,
    /// with the channel's waits (yielding after `spins` polls where processes outnumber CPUs),
    /// and records a failure.
    fn run(
        &self,
        chan: &Channel,
        what: &str,
        want: usize,
        spins: u32,
        side: impl FnOnce(
            &Board<'_, AtomicU64>,
            &mut Cursor,
            &mut dyn Wait<P2pError>,
            &dyn Fn(usize, u64) -> P2pError,
        ) -> Result<(), P2pError>,
    ) -> Result<(), P2pError> {
        self.check(chan, what)?;
        let boards = self.boards();
        let (board, k) = boards.route(want);
        let mut at = self.at[k].get();
        let mut wait = channel_wait(chan, spins);
        let length = |peer: usize, got: u64| {
            P2pError::from(P2pErrorKind::Length {
                peer,
                got: usize::try_from(got).unwrap_or(usize::MAX),
                want,
            })
        };
        let out = side(board, &mut at, &mut wait, &length);
        self.at[k].set(at);
        self.record(out)
    }

    /// Refuses a posted `what` after a failure, or on another channel than the post's.
    fn check(&self, chan: &Channel, what: &str) -> Result<(), P2pError> {
        if self.failed.get() {
            return Err(P2pErrorKind::Invalid(format!(
                "a posted {what} after an earlier posted collective failed"
            ))
            .into());
        }
        if chan.size() != self.n || chan.rank() != self.rank {
            return Err(P2pErrorKind::Invalid(format!(
                "a posted {what} on a channel of {} ranks (the post has {})",
                chan.size(),
                self.n
            ))
            .into());
        }
        Ok(())
    }

    /// Records a failed collective (every later one fails; after a failed wait the window is
    /// abandoned, see `Drop`).
    fn record<T>(&self, out: Result<T, P2pError>) -> Result<T, P2pError> {
        if let Err(e) = &out {
            self.failed.set(true);
            self.abandoned.set(matches!(
                e.kind(),
                P2pErrorKind::Timeout { .. } | P2pErrorKind::Stopped { .. }
            ));
        }
        out
    }
}

/// A wait of a posted collective on `chan`: polls as the channel's waits do (spinning `spins`
/// polls, then yielding where processes outnumber CPUs), looks for stop notices, and fails
/// after the channel's timeout naming what it waited for.
fn channel_wait(chan: &Channel, spins: u32) -> impl Wait<P2pError> + '_ {
    move |ready: &mut dyn FnMut() -> Result<bool, P2pError>,
          waiting: &dyn Fn() -> String,
          hot: bool| {
        poll_spinning(
            chan,
            if hot { spins } else { 0 },
            || ready().map(|r| r.then_some(())),
            || chan.idle(),
            waiting,
        )
    }
}

impl Drop for Post {
    fn drop(&mut self) {
        use mpi::ffi;
        use mpi::raw::AsRaw;
        if self.abandoned.get() {
            // A rank that died or stalled would never join the collective free: the window
            // stays mapped until the process ends.
            return;
        }
        // MPI_Win_free is collective: first a barrier polled with the channel's deadline, so a
        // rank that never comes (it died, or failed and abandoned its window) costs a
        // deadline and a leaked window here, not a hang.
        // SAFETY: reading an MPI-provided constant handle.
        let mut req = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: the node communicator is valid; `req` receives the request.
        let rc = unsafe { ffi::MPI_Ibarrier(self.node.as_raw(), &mut req) };
        let start = std::time::Instant::now();
        let mut joined = rc == 0;
        let mut polls = 0u32;
        while joined {
            let mut flag = 0;
            // SAFETY: `req` is the active barrier; the status is ignored.
            let rc = unsafe { ffi::MPI_Test(&mut req, &mut flag, ffi::RSMPI_STATUS_IGNORE) };
            if rc != 0 {
                joined = false;
            } else if flag != 0 {
                break;
            } else if start.elapsed() > self.timeout {
                joined = false;
            } else {
                polls += 1;
                if polls > 256 {
                    std::thread::yield_now();
                }
            }
        }
        if !joined {
            herald_cli_common::say(&format!(
                "herald-mpi: rank {}: the posted collectives' shared window is not freed: \
                 not every rank came to free it within {} s",
                self.rank,
                self.timeout.as_secs()
            ));
            return;
        }
        // SAFETY: `win` is the window `new` allocated and locked; every rank of the node has
        // come to free it (the barrier above). No reference into the window outlives `self`
        // (boards borrow it).
        unsafe {
            ffi::MPI_Win_unlock_all(self.win);
            ffi::MPI_Win_free(&mut self.win);
        }
    }
}

/// A shape in the tests: `slots` small slots of `slot_bytes`, `bulk_slots` of `bulk_slot_bytes`.
#[cfg(test)]
const fn shape(
    slots: usize,
    slot_bytes: usize,
    bulk_slots: usize,
    bulk_slot_bytes: usize,
) -> PostShape {
    PostShape {
        slots,
        slot_bytes,
        bulk_slots,
        bulk_slot_bytes,
    }
}

/// A posted collective in the tests: a broadcast of `bytes` bytes from `root`, or an allreduce
/// of `elements` elements.
#[cfg(test)]
#[derive(Debug, Clone, Copy)]
enum Call {
    Bcast {
        root: usize,
        bytes: usize,
    },
    Allreduce {
        elements: usize,
    },
    /// An agreement ([`agree`]): rank `r`'s value of its `k`-th is [`agreed_value`]`(r, k)`.
    Agree,
}

/// What rank `r` publishes at its agreement `k` in the tests.
#[cfg(test)]
fn agreed_value(r: usize, k: u64) -> u64 {
    (r as u64 + 1) * 1_000_003 + k
}

/// Rank `me`'s side of `calls` on the window `words` of `n` ranks of `shape` (each call on the
/// board its length routes it to, as [`Post`] does; agreements after the boards): call `i`'s broadcast payload is
/// [`crate::payload`] of seed `i`, an allreduce's contributions [`crate::contribution`] of seed
/// `i`, checked on every rank (bytes, or the sum [`crate::sum_of_contributions`] computes); a
/// wait calls `pause` between polls and fails the test after 60 s (the watchdog).
#[cfg(test)]
fn check_calls<W: Word>(
    words: &[W],
    n: usize,
    shape: &PostShape,
    me: usize,
    calls: &[Call],
    pause: fn(),
) {
    let boards = Boards::new(words, n, shape);
    let agreements = Agreements::in_window(words, n, shape);
    let mut agreed = 0u64;
    let mut cursors = [0, 1].map(|_| Cursor {
        me,
        ..Cursor::default()
    });
    let wait = |ready: &mut dyn FnMut() -> Result<bool, String>,
                waiting: &dyn Fn() -> String,
                _hot: bool| {
        let start = std::time::Instant::now();
        while !ready()? {
            if start.elapsed() > std::time::Duration::from_secs(60) {
                return Err(format!("60 s waiting for {}", waiting()));
            }
            pause();
        }
        Ok(())
    };
    let length = |from: usize, got: u64| format!("rank {from} posted length {got}");
    for (i, &call) in calls.iter().enumerate() {
        match call {
            Call::Bcast { root, bytes } => {
                let mut want = vec![0u8; bytes];
                crate::payload(&mut want, i as u64);
                let mut buf = if me == root {
                    want.clone()
                } else {
                    vec![0; bytes]
                };
                let (board, k) = boards.route(bytes);
                let reply = Reply {
                    across: true,
                    mates: &[],
                };
                broadcast(
                    board,
                    &mut cursors[k],
                    (root, reply),
                    &mut buf,
                    wait,
                    length,
                )
                .unwrap_or_else(|e| panic!("rank {me}, call {i}: {e}"));
                assert!(buf == want, "rank {me}, call {i}: {call:?}");
            }
            Call::Allreduce { elements } => {
                let mut value = vec![0u64; elements];
                crate::contribution(&mut value, me, i as u64);
                let (board, k) = boards.route(8 * elements);
                allreduce(board, &mut cursors[k], &mut value, wait, length)
                    .unwrap_or_else(|e| panic!("rank {me}, call {i}: {e}"));
                let want = crate::sum_of_contributions(board.n, elements, i as u64);
                assert!(value == want, "rank {me}, call {i}: {call:?}");
            }
            Call::Agree => {
                let k = agreed;
                agreed += 1;
                let mut earlier = vec![u64::MAX; n];
                let mut wait = wait;
                let filled = agree(
                    &agreements,
                    (me, k),
                    agreed_value(me, k),
                    &mut earlier,
                    &mut wait,
                )
                .unwrap_or_else(|e| panic!("rank {me}, call {i}: {e}"));
                assert_eq!(filled, k >= AGREE_LAG, "rank {me}, agreement {k}");
                if filled {
                    let want: Vec<u64> = (0..n).map(|r| agreed_value(r, k - AGREE_LAG)).collect();
                    assert_eq!(earlier, want, "rank {me}, agreement {k}");
                }
            }
        }
    }
}

#[cfg(all(test, herald_loom))]
mod loom_tests {
    use super::*;
    use loom::sync::atomic::AtomicU64;
    use loom::thread;
    use std::sync::Arc;

    /// `n` ranks make `calls` on a board of `slots` slots of 8 bytes (a slot holds 48: 6
    /// elements) and no bulk board; every rank checks every result.
    fn model(n: usize, slots: usize, calls: &[Call]) {
        let shape = shape(slots, 8, 0, 8);
        model_shape(n, shape, calls);
    }

    /// `n` ranks make `calls` on the boards of `shape`; every rank checks every result.
    fn model_shape(n: usize, shape: PostShape, calls: &[Call]) {
        // Two ranks: waits poll (as over MPI: no wake-ups), and a model of three ranks exceeded
        // 100 000 branches after ten minutes; three and more run on std threads in `tests`.
        let calls: Arc<[Call]> = calls.into();
        loom::model(move || {
            let words: Arc<Vec<AtomicU64>> = Arc::new(
                (0..window_words(n, &shape))
                    .map(|_| AtomicU64::new(0))
                    .collect(),
            );
            let handles: Vec<_> = (0..n)
                .map(|me| {
                    let (words, calls) = (Arc::clone(&words), Arc::clone(&calls));
                    thread::spawn(move || {
                        check_calls(&words, n, &shape, me, &calls, thread::yield_now);
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
        });
    }

    const fn bcast(root: usize, bytes: usize) -> Call {
        Call::Bcast { root, bytes }
    }

    /// One root, two readers' worth of reuse: 3 one-chunk calls on 2 slots.
    #[test]
    fn loom_post_one_root_reuses_slots() {
        model(2, 2, &[bcast(0, 8), bcast(0, 8), bcast(0, 8)]);
    }

    /// The root changes every call, so each rank's slots are written after the other's.
    #[test]
    fn loom_post_alternating_roots() {
        model(2, 2, &[bcast(0, 5), bcast(1, 5), bcast(0, 5), bcast(1, 5)]);
    }

    /// A message of three chunks runs through both slots and reuses one.
    #[test]
    fn loom_post_chunks_wrap() {
        model(2, 2, &[bcast(1, 20)]);
    }

    /// Allreduces on one slot: each rank writes its slot again as soon as the other has read
    /// it, and not before (a rank that recorded its progress when it wrote, before it read,
    /// would let the other overwrite what it still reads).
    #[test]
    fn loom_post_allreduces_reuse_one_slot() {
        const A: Call = Call::Allreduce { elements: 2 };
        model(2, 1, &[A, A, A]);
    }

    /// Messages that take the bulk board (one slot of 112 bytes) between messages on the
    /// small one (one slot of 48): each board's slot is reused with its own epochs.
    #[test]
    fn loom_post_bulk_board_between_small_messages() {
        let shape = shape(1, 8, 1, 100);
        model_shape(2, shape, &[bcast(0, 8), bcast(1, 100), bcast(0, 60)]);
    }

    /// Six agreements: every slot of each rank's line written, and the first two again,
    /// each read (two agreements late) before it is overwritten.
    #[test]
    fn loom_post_agreements_reuse_their_slots() {
        model(2, 1, &[Call::Agree; 6]);
    }

    /// Agreements between broadcasts: a rank that runs ahead through its broadcasts waits
    /// only for an agreement two behind.
    #[test]
    fn loom_post_agreements_between_broadcasts() {
        model(
            2,
            2,
            &[
                Call::Agree,
                bcast(0, 8),
                Call::Agree,
                Call::Agree,
                bcast(1, 8),
            ],
        );
    }

    /// An allreduce of three chunks (13 elements) on two slots, between broadcasts from
    /// either rank.
    #[test]
    fn loom_post_allreduce_between_broadcasts() {
        model(
            2,
            2,
            &[bcast(1, 8), Call::Allreduce { elements: 13 }, bcast(0, 3)],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` threads make broadcasts, allreduces and agreements on the boards of `shape`:
    /// lengths from 0 to past three slots of each board, the root changing every call, every
    /// fifth call an agreement and most third calls an allreduce, each call's result checked
    /// on every thread. With few slots and hundreds of
    /// calls, every slot of every rank is reused many times and ranks wait for the slowest.
    fn threads(n: usize, shape: PostShape, calls: usize) {
        let words: Vec<AtomicU64> = (0..window_words(n, &shape))
            .map(|_| AtomicU64::new(0))
            .collect();
        let boards = Boards::new(&words, n, &shape);
        let cap = boards.small.capacity();
        let mut lens = vec![0usize, 1, 7, 8, 47, 48, 49, 63, cap, cap + 1, 3 * cap + 5];
        if let Some(bulk) = &boards.bulk {
            let big = bulk.capacity();
            lens.extend([big - 1, big, big + 1, 3 * big + 5]);
        }
        let lens = &lens;
        std::thread::scope(|s| {
            for me in 0..n {
                let words = &words;
                s.spawn(move || {
                    let calls: Vec<Call> = (0..calls)
                        .map(|i| {
                            let bytes = lens[i % lens.len()];
                            if i % 5 == 4 {
                                Call::Agree
                            } else if i % 3 == 2 {
                                Call::Allreduce {
                                    elements: bytes.div_ceil(8),
                                }
                            } else {
                                Call::Bcast {
                                    root: (i * 7 + i / 5) % n,
                                    bytes,
                                }
                            }
                        })
                        .collect();
                    check_calls(words, n, &shape, me, &calls, std::thread::yield_now);
                });
            }
        });
    }

    #[test]
    fn threads_three_ranks() {
        let small = shape(4, 16, 0, 0);
        threads(3, small, 600);
        let bulk = PostShape {
            bulk_slots: 2,
            bulk_slot_bytes: 200,
            ..small
        };
        threads(3, bulk, 600);
    }

    #[test]
    fn threads_five_ranks_more_than_cpus() {
        let shape = shape(16, 112, 3, 1000);
        threads(5, shape, 300);
    }

    /// Runs `chunks` chunks through `how`, each costing what `cost(streamed)` says; returns
    /// how each was stored (true: streamed).
    fn run_stores(how: &mut Stores, chunks: usize, cost: impl Fn(bool) -> u64) -> Vec<bool> {
        (0..chunks)
            .map(|_| {
                let streamed = how.next();
                how.took(streamed, cost(streamed));
                streamed
            })
            .collect()
    }

    /// A root stores plainly while plain stores cost at most `STREAM_RATIO` times streamed
    /// ones, trying streaming after 8 chunks and then ever more rarely (16, 32, … 1024); it
    /// streams from the first try that shows plain dearer, trying plain again as rarely; a
    /// single slow store does not decide; and it goes back to plain once plain is cheap again.
    #[test]
    fn a_root_streams_its_chunks_only_while_plain_stores_cost_more() {
        let fast = |streamed: bool| if streamed { 2600 } else { 4500 };
        let slow = |streamed: bool| if streamed { 2200 } else { 23_000 };
        let tries = |ways: &[bool], way: bool| -> Vec<usize> {
            (0..ways.len()).filter(|&i| ways[i] == way).collect()
        };
        let mut how = Stores::default();
        let ways = run_stores(&mut how, 3000, fast);
        // tried after 8 plain chunks, then after 16, 32, … 1024 more each time
        let mut want = Vec::new();
        let (mut at, mut every) = (8, 8);
        while at < 3000 {
            want.push(at);
            every = (every * 2).min(1024);
            at += every + 1;
        }
        assert_eq!(tries(&ways, true), want);
        // the host turns slow: at the next try of streaming the root switches, and from then
        // on tries plain after 8, 16, … chunks
        let ways = run_stores(&mut how, 2000, slow);
        let first = ways.iter().position(|&w| w).expect("streams");
        assert!(ways[first..].iter().filter(|&&w| !w).count() <= 8);
        assert_eq!(tries(&ways[first..], false)[..3], [8, 8 + 17, 8 + 17 + 33]);
        // plain stores made slow by one preempted store do not switch a plain root
        let mut how = Stores::default();
        run_stores(&mut how, 20, fast);
        let slowest = std::cell::Cell::new(true);
        let ways = run_stores(&mut how, 100, |streamed| {
            if !streamed && slowest.replace(false) {
                50_000
            } else {
                fast(streamed)
            }
        });
        assert!(
            !ways.windows(2).any(|w| w[0] && w[1]),
            "single tries of streaming only"
        );
        // and a streaming root goes back to plain at its next try once plain is cheap again
        let mut how = Stores::default();
        let ways = run_stores(&mut how, 100, slow);
        assert!(ways[90..].iter().any(|&w| w), "streams on the slow host");
        let every = how.every as usize;
        let ways = run_stores(&mut how, 100, fast);
        let back = ways.iter().position(|&w| !w).expect("tries plain");
        assert!(back <= every, "within a try's interval");
        assert!(ways[back..=back + 8].iter().all(|&w| !w), "{ways:?}");
        assert!(!ways.windows(2).skip(back).any(|w| w[0] && w[1]));
    }

    /// Once it knows its readers' costs, a root chooses by the cost of a chunk to it and its
    /// slowest reader together: it streams where its own stores alone would not have it
    /// stream (the seventy-first session's far mode: plain 9000 against 4500 ns per 64 KiB,
    /// under `STREAM_RATIO`, with readers' copies of 16000 against 5000), keeps plain where
    /// its own stores would have it stream but the readers' copies of streamed chunks cost
    /// more (the former host's fast mode: 4500 against 2600, readers 3000 against 6000), and
    /// keeps the way in use while the two totals lie within `STREAM_OVER` of each other.
    #[test]
    fn a_root_weighs_its_readers_copies_once_it_knows_them() {
        let far = |streamed: bool| if streamed { 4500 } else { 9000 };
        let mut how = Stores::default();
        // alone, the root's ratio (2) keeps it plain: only single tries
        let ways = run_stores(&mut how, 100, far);
        assert!(!ways.windows(2).any(|w| w[0] && w[1]), "{ways:?}");
        assert!(ways.iter().any(|&w| w), "it tries streaming");
        how.readers(16_000, 5000);
        let ways = run_stores(&mut how, 50, far);
        // it streams from the next chunk, trying plain only now and then
        assert!(ways[1], "{ways:?}");
        assert!(!ways[1..].windows(2).any(|w| !w[0] && !w[1]), "{ways:?}");
        // the other way round: its own ratio (1.7) under 3 but over 5/4, the readers' copies of
        // streamed chunks dear: plain
        let fast = |streamed: bool| if streamed { 2600 } else { 4500 };
        let mut how = Stores::default();
        how.readers(3000, 6000);
        let ways = run_stores(&mut how, 200, fast);
        assert!(!ways.windows(2).any(|w| w[0] && w[1]), "{ways:?}");
        // and with the readers' costs making streamed clearly cheaper, it streams
        how.readers(3000, 1000);
        let ways = run_stores(&mut how, 300, fast);
        let from = ways.iter().position(|&w| w).expect("streams");
        assert!(
            ways[from + 1..].iter().filter(|&&w| !w).count() <= 8,
            "{ways:?}"
        );
        // totals within 5/4 of each other (plain 4500 + 3000 against 2600 + 3500): plain stays
        let mut how = Stores::default();
        how.readers(3000, 3500);
        let ways = run_stores(&mut how, 200, fast);
        assert!(!ways.windows(2).any(|w| w[0] && w[1]), "{ways:?}");
        // a zero (no report of that way) keeps the cost known before
        let mut how = Stores::default();
        how.readers(16_000, 5000);
        how.readers(0, 0);
        assert_eq!(how.readers, [16_000, 5000]);
    }

    /// A reader of a long chunk learns how its root stored it and times its copy; the cost
    /// lands beside its progress, where a root reads the slowest reader's per way; short
    /// chunks are not timed, and a length mismatch names the length without the way's bit.
    #[test]
    fn readers_report_the_cost_of_long_chunks_per_way() {
        let (n, slots, bytes) = (3, 4, 20_000);
        let words: Vec<AtomicU64> = (0..Board::<AtomicU64>::words_needed(n, slots, bytes))
            .map(|_| AtomicU64::new(0))
            .collect();
        let board = Board::new(&words, n, slots, bytes);
        let chunk: Vec<u8> = (0..bytes).map(|i| (i * 7 % 251) as u8).collect();
        let mut how = Stores::default();
        let mut least = 0;
        let mut ways = [false; 2];
        for e in 1..=40u64 {
            // both readers read every epoch at once: there is always room
            assert_eq!(board.room(0, e, &mut least), Ok(()));
            let way = how.next();
            board.write(0, e, bytes as u64, &chunk, &mut how);
            board.done(0, e);
            for r in 1..n {
                let mut out = vec![0u8; bytes];
                let report = board
                    .read(0, e, bytes as u64, &mut out)
                    .expect("this length");
                assert_eq!(out, chunk);
                let report = report.expect("a long chunk is timed");
                assert_eq!(report.streamed, way, "epoch {e}");
                assert!(report.cost > 0);
                board.done_reporting(r, e, Some(report));
                ways[usize::from(way)] = true;
            }
            let (plain, streamed) = board.reader_costs(0);
            assert!(plain > 0, "a plain chunk came first");
            assert_eq!(streamed > 0, ways[1], "epoch {e}");
            assert!(
                board.reader_costs(1).0 > 0,
                "rank 2's costs count for a root 1"
            );
            let mut out = vec![0u8; bytes];
            assert_eq!(board.read(0, e, 5, &mut out), Err(bytes as u64));
        }
        assert!(ways[1], "the root tried streaming within 40 chunks");
        // a chunk whose further lines are short is not timed
        let words: Vec<AtomicU64> = (0..Board::<AtomicU64>::words_needed(2, 1, 4096))
            .map(|_| AtomicU64::new(0))
            .collect();
        let board = Board::new(&words, 2, 1, 4096);
        board.write(0, 1, 4096, &chunk[..4096], &mut Stores::default());
        let mut out = vec![0u8; 4096];
        assert_eq!(board.read(0, 1, 4096, &mut out), Ok(None));
        assert_eq!(board.reader_costs(0), (0, 0));
    }

    /// The bulk board lies after the small one, the two share no word, and a collective takes
    /// the bulk board exactly when it is longer than a small slot.
    #[test]
    fn boards_split_the_window_and_route_by_length() {
        let n = 3;
        let shape = shape(5, 100, 2, 1000);
        let words: Vec<AtomicU64> = (0..Boards::<AtomicU64>::words_needed(n, &shape))
            .map(|_| AtomicU64::new(0))
            .collect();
        // the agreements follow the boards, on a line of their own
        assert_eq!(words.len() % 8, 0);
        assert_eq!(window_words(n, &shape), words.len() + 8 * n);
        let boards = Boards::new(&words, n, &shape);
        let bulk = boards.bulk.as_ref().expect("bulk slots");
        let small_words = Board::<AtomicU64>::words_needed(n, 5, 100);
        assert_eq!(small_words % 8, 0, "the bulk board starts on a line");
        assert_eq!(
            small_words + Board::<AtomicU64>::words_needed(n, 2, 1000),
            words.len()
        );
        assert!(std::ptr::eq(boards.small.words.as_ptr(), words.as_ptr()));
        assert!(std::ptr::eq(bulk.words.as_ptr(), &words[small_words]));
        let cap = boards.small.capacity();
        assert_eq!((cap, bulk.capacity()), (112, 1008));
        for (bytes, want) in [(0, 0), (cap, 0), (cap + 1, 1), (5000, 1)] {
            assert_eq!(boards.route(bytes).1, want, "{bytes} bytes");
        }
        let none = Boards::new(
            &words,
            n,
            &PostShape {
                bulk_slots: 0,
                ..shape
            },
        );
        assert_eq!(none.route(5000).1, 0);
        assert_eq!(
            Boards::<AtomicU64>::words_needed(
                n,
                &PostShape {
                    bulk_slots: 0,
                    ..shape
                }
            ),
            small_words
        );
    }

    /// The board's arithmetic without threads: slots hold at least what was asked in whole
    /// lines, no two words of any slots or progress coincide, and a root runs exactly `slots`
    /// epochs ahead of a reader that never reads.
    #[test]
    fn board_layout_and_room() {
        for slots in [1usize, 2, 5, 16] {
            for slot_bytes in [1usize, 8, 48, 49, 112, 113, 4096, 5000] {
                let n = 3;
                let words: Vec<AtomicU64> =
                    (0..Board::<AtomicU64>::words_needed(n, slots, slot_bytes))
                        .map(|_| AtomicU64::new(0))
                        .collect();
                let board = Board::new(&words, n, slots, slot_bytes);
                let cap = board.capacity();
                assert!(cap >= slot_bytes && cap < slot_bytes.max(48) + 64);
                assert_eq!((cap + 16) % 64, 0);
                let mut least = 0;
                for e in 1..=slots as u64 {
                    assert_eq!(board.room(0, e, &mut least), Ok(()));
                    board.write(0, e, 8, &[e as u8; 8], &mut Stores::default());
                    board.done(0, e);
                }
                let next = slots as u64 + 1;
                assert_eq!(board.room(0, next, &mut least), Err(1));
                // rank 1 reads epoch 1: rank 2 is now the slowest
                let mut out = [0u8; 8];
                assert!(board.ready(0, 1));
                assert_eq!(
                    board.read(0, 1, 8, &mut out),
                    Ok(None),
                    "8 bytes: not timed"
                );
                assert_eq!(out, [1u8; 8]);
                board.done(1, 1);
                assert_eq!(board.room(0, next, &mut least), Err(2));
                assert_eq!(board.read(0, 1, 9, &mut out), Err(8));
                assert_eq!(board.room(0, next, &mut least), Err(2));
                assert_eq!(board.read(0, 1, 8, &mut out), Ok(None));
                assert_eq!(
                    board.room(0, next, &mut least),
                    Err(2),
                    "read, not yet done"
                );
                board.done(2, 1);
                assert_eq!(board.room(0, next, &mut least), Ok(()));
                // every word belongs to one slot, one progress word or one of a rank's two
                // costs of reading, and each slot has 2 + cap / 8 of them
                let mut seen: Vec<*const AtomicU64> = Vec::new();
                for r in 0..n {
                    for e in 0..slots as u64 {
                        let (head, more) = board.slot(r, e);
                        assert_eq!((head.len() + more.len()) * 8, cap + 16);
                        seen.extend(head.iter().chain(more).map(|w| w as *const _));
                    }
                    seen.push(board.progress(r) as *const _);
                    seen.push(board.read_cost(r, false) as *const _);
                    seen.push(board.read_cost(r, true) as *const _);
                    // the costs lie on the progress word's line (of the window's eight-word
                    // lines, counted from its start)
                    let line = |w: &AtomicU64| {
                        (w as *const AtomicU64 as usize - words.as_ptr() as usize) / 64
                    };
                    assert_eq!(line(board.read_cost(r, true)), line(board.progress(r)));
                    assert_eq!(line(board.read_cost(r, false)), line(board.progress(r)));
                }
                let all = seen.len();
                seen.sort();
                seen.dedup();
                assert_eq!(seen.len(), all, "words shared by two slots");
                assert!(all <= words.len());
            }
        }
    }

    /// The hint a broadcast's reader gives its wait: hot only for a rank that posted the epoch
    /// before itself (a root waiting for the reply), from a root on another CPU, while no rank
    /// of its CPU is so far behind that the root cannot post. Each assertion fails if one of
    /// the three conditions is dropped.
    #[test]
    fn a_reader_spins_only_for_the_reply_from_another_cpu() {
        // 4 ranks, 4 slots; ranks 0 and 2 on one CPU, 1 and 3 on the other (as herald-mpi pins)
        let (n, slots) = (4, 4);
        let words: Vec<AtomicU64> = (0..Board::<AtomicU64>::words_needed(n, slots, 48))
            .map(|_| AtomicU64::new(0))
            .collect();
        let board = Board::new(&words, n, slots, 48);
        // rank `me` reads epoch `e` from `root`, which has not posted it: the wait's hint
        let hint = |me: usize, e: u64, root: usize, reply: Reply<'_>| {
            let mut at = Cursor {
                me,
                epoch: e - 1,
                ..Cursor::default()
            };
            let mut got = None;
            let wait =
                |_: &mut dyn FnMut() -> Result<bool, ()>, _: &dyn Fn() -> String, hot: bool| {
                    got = Some(hot);
                    Err(())
                };
            let mut buf = [0u8; 8];
            let out = broadcast(&board, &mut at, (root, reply), &mut buf, wait, |_, _| ());
            assert_eq!(out, Err(()), "the wait ends the call");
            got.expect("the reader waited")
        };
        let across = |mates| Reply {
            across: true,
            mates,
        };
        assert!(!hint(0, 1, 3, across(&[])), "no epoch before the first");
        // epoch 1 from rank 3 to everyone; rank 0 posts epoch 2, every rank reads it
        board.write(3, 1, 8, &[1; 8], &mut Stores::default());
        board.write(0, 2, 8, &[2; 8], &mut Stores::default());
        for r in 0..n {
            board.done(r, 2);
        }
        // epoch 3 from rank 3: rank 0 posted epoch 2 and waits for the reply
        assert!(
            hint(0, 3, 3, across(&[2])),
            "a root waiting for the reply spins"
        );
        assert!(
            !hint(1, 3, 3, across(&[3])),
            "a reader that did not post yields"
        );
        assert!(!hint(2, 3, 3, across(&[0])), "nor does the root's CPU mate");
        let same = Reply {
            across: false,
            mates: &[2],
        };
        assert!(!hint(0, 3, 3, same), "a root on this CPU needs it: yield");
        // rank 0 posts epochs 3 to 6 (rank 3 replies never): rank 2 reads none of them
        for e in 3..=6 {
            board.write(0, e, 8, &[e as u8; 8], &mut Stores::default());
            for r in [0, 1, 3] {
                board.done(r, e);
            }
        }
        // epoch 7 from rank 3 needs rank 2 at epoch 3 at least; it stands at 2
        assert!(
            !hint(0, 7, 3, across(&[2])),
            "a mate holds the root back: yield"
        );
        assert!(hint(0, 7, 3, across(&[])), "no mate there: spin");
        board.done(2, 3);
        assert!(
            hint(0, 7, 3, across(&[2])),
            "the mate caught up enough: spin"
        );
    }
}
