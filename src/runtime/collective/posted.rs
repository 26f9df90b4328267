//! Broadcasts posted in shared memory: the root writes the call's header and payload into a
//! slot of its own, one line for up to 48 bytes and one more line per further 64, and every
//! other rank reads that slot. A communicator's slots hold [`MAX_BYTES`] (1072) bytes where
//! its ranks have CPUs of their own, and the end of
//! [`CommOptions::shared_posted_bytes`](crate::CommOptions::shared_posted_bytes) (8 KiB by
//! default) where they share CPUs.
//!
//! # Why
//!
//! Through the rings a broadcast of a few bytes is a line per receiver in a ring of 256 slots,
//! and each call takes the next slot. Between two ranks with CPUs of their own, a ping-pong of
//! 48-byte broadcasts that way took 1.66–1.69× a shared-flag broadcast of the same bytes (a
//! flag line and a data line), and a bare ping-pong on herald's channels alone 1.3–1.5×.
//! Posted, each root in slots of its own, it took 1.25–1.41× in the near latency mode and
//! 1.05× in the far one; with one line that both of two ranks write in turn (below),
//! 1.06–1.19× near and 0.51–0.90× far (`herald bench bcast`; docs/runtime.md, "Posted
//! broadcasts" and "Sixty-first session"). Every receiver reads the same lines, so the root
//! writes them once whatever the number of ranks.
//!
//! Past one line the rings pay their per-line cost per receiver; a slot's further lines are
//! bare payload. In a ping-pong of two ranks (near latency mode) 64 bytes took 84–86 ns posted
//! against 128–129 through the rings, 512 bytes 146–152 against 271–288 and 1000 bytes
//! 215–217 against 604–627 (a single copy of 1 KiB: 248–256). So slots reach past the
//! default single-copy size (docs/runtime.md, "Posted broadcasts of up to 1072 bytes").
//!
//! Where ranks share CPUs each wait of a root for a reader is a turn of the CPU, so there a
//! root may run [`SHARED_SLOTS`]` − 1` (63) posts of up to [`MAX_BYTES`] ahead of its slowest
//! reader, not [`SLOTS`]` − 1` (15). With 15, a back-to-back loop of 8-byte broadcasts took
//! about twice as long posted as through the rings, which hold 255 such calls (4 and 8 ranks
//! on 2 CPUs); with 63 it takes as long or less, and a ping-pong or a broadcast after a
//! barrier less (docs/runtime.md, "Sixty-four slots for small posts where ranks share CPUs").
//! From 128 bytes a loop took 0.3–0.95× the faster of the rings and single copy even with
//! 15: the rings hold fewer calls of that size and the root writes every line once per
//! reader, and a single copy makes the root wait for every reader in every call; posted, the
//! root copies the payload once and goes on. So there the communicator posts the sizes of
//! [`CommOptions::shared_posted_bytes`](crate::CommOptions::shared_posted_bytes), up to 8 KiB
//! by default: those of at most [`MAX_BYTES`] on a *board* of 64 slots of that size, the
//! larger ones on a second board of 16 slots of the range's end (docs/runtime.md, "Posted
//! broadcasts where ranks share CPUs").
//!
//! # Protocol
//!
//! Each board runs this protocol apart from the other, and both sides of a call pick its
//! board by the payload's length ([`Posts::board_of`]). On each board, each rank counts its
//! posted broadcasts there (its *epoch* `e`, from 1) and owns `SLOTS` slots ([`SLOTS`] or
//! [`SHARED_SLOTS`], a power of two), used by epochs in turn (slot `e mod SLOTS`), and a
//! progress word. A slot's first line is
//! eight atomic words: a tag (the low 32 bits of the epoch and the high 32 bits of the
//! digest of the poster's calls so far, this one included), the call's header, and six
//! payload words (48 bytes); its further lines (16, or as many as the board's largest
//! post needs) hold eight payload words each, and a payload uses as many as it needs. The
//! first line's payload words are written and read `Relaxed`; the further lines are copied
//! whole, into the slot by the root and out of it by each reader (the two `unsafe` blocks
//! here: the root has the slot's further lines alone while it writes them, the readers while
//! they read them), word by word under loom; ordered by the first line's tag (`Release`
//! store, `Acquire` load, the further lines written before the first).
//!
//! 1. Every rank, at the start of its epoch `e`, stores `e` in its progress word (`Release`):
//!    it has finished reading every earlier epoch. It notifies every other rank (a root may
//!    be waiting for that progress).
//! 2. The root makes sure every other rank's progress is at least `e − SLOTS + 1` (it keeps
//!    the least progress it saw, and looks again, then waits, only when that is too little),
//!    asks for the slot's lines for writing (a prefetch hint, for posts of several lines),
//!    writes the header and payload into slot `e mod SLOTS`, stores the tag (`Release`) and
//!    notifies every other rank. It does not wait for its readers. Between two ranks, the
//!    least progress it keeps also learns from the other's posts it read ([`took`]): a post
//!    of epoch `e'` follows its root's progress `e'` (step 1).
//! 3. Every other rank waits for the root's slot `e mod SLOTS` to hold the tag of epoch `e`
//!    (`Acquire`), checks the header (another call there is a
//!    [`CollectiveError::Mismatch`]) and the digest (another call before it, likewise), and
//!    reads the payload.
//!
//! **Between two ranks**, a post of at most 48 bytes (the first line alone) goes into a slot
//! of a ring both ranks write, not into its root's own: the reply to a post is written into
//! the line just read. Such a line moves once a hop: a line one side writes and the other
//! reads, as a slot of the root's own is, also pays the writer's invalidation of the reader's
//! copy on every hop (a scratch ping-pong: 30–32 ns one way on one line written by both in
//! turn, 46–52 on a line per direction; docs/runtime.md, "Fifty-ninth session"). Both ranks
//! count the *turn*: the epochs so far whose root also posted the epoch before ([`Cursor`]);
//! epoch `e` uses the shared slot of its turn (mod `SLOTS`). So a root that posts again moves
//! on to the next slot, and a new root writes the slot it has just read. A new root waits
//! for nothing: the shared slot of its turn was last written in the epoch before (which the
//! other rank posted and this one read) or earlier (which the other finished reading before it
//! posted); so a ping-pong reads no progress line. A root that posts again waits, as for its
//! own slots, until the other has started epoch `e − SLOTS + 1` (what it read of the other's
//! posts may say so already, [`took`]): the slot it moves on to was last written at least
//! `SLOTS` epochs ago, since every turn in between moved on a slot. Posts with further lines
//! keep the root's own slots (with the first line shared, a 64-byte ping-pong took 99–101 ns
//! against 87–88).
//! Whether the two ranks count the same turns rests on the calls they made; ranks that
//! disagreed on a root earlier count different turns and wait on different slots, so a
//! waiting reader also looks, on thorough polls, for its epoch's tag in another shared slot
//! (a mismatch). The shared lines are all atomics: ranks that disagree may write one at once,
//! and a reader that finds another digest reads no payload.
//!
//! **Reuse.** The root wrote slot `e mod SLOTS` last in epoch `e − SLOTS` (or earlier), and
//! writes it again in epoch `e` only once every reader has stored a progress of at least
//! `e − SLOTS + 1`, which each does after reading epoch `e − SLOTS`. So no slot is written
//! while a rank still reads it for an earlier epoch, and a reader waiting for `e` sees the
//! tag of an earlier epoch (not yet) or of `e`, never of a later one.
//!
//! **Never waiting forever.** A waiting reader looks at the poison on every poll and, on every
//! poll after the spin phase and every 64th while spinning, at the root's published call
//! (`check_peer`: another call at this number is a mismatch, a departed root an error) and at
//! the root's call number: a root that has moved past this call without posting this epoch
//! made another call (the root publishes its next call only after its post, so the tag is
//! visible by then). A root that waits for a slow reader looks at that reader the same way.
//! A root runs at most `SLOTS − 1` posted broadcasts of a board ahead of its slowest reader
//! (78 on both boards together), fewer than the calls whose headers a rank keeps for its peers
//! (128), so a reader stuck in an earlier call that waits for the root still finds the root's
//! header of that call.
//!
//! A rank that fails after posting does not stop its readers: the epoch's payload is there,
//! so they finish the call with the right bytes, and their next call fails on the poison.

use super::call::Core;
use super::error::CollectiveError;
use super::words::{load_words, store_words};
use crate::runtime::hint;
use crate::runtime::line::Line;
use crate::runtime::sync::{AtomicU64, Ordering};
use crate::runtime::wait::{self, Phase, Polls};
use crossbeam_utils::CachePadded;

/// Slots per rank where ranks have CPUs of their own: how many posted broadcasts a root may
/// run ahead of its slowest reader, plus one; fewer than the calls whose headers a rank keeps
/// for its peers (see the module notes). A root with several readers reads their progress
/// lines about once per `SLOTS / 2` of its posts in a ping-pong, and each such read costs a
/// line transfer on the way: with 4 slots the posts alone took 1.20–1.27× a shared flag, with
/// 16 slots 1.03–1.04× (docs/runtime.md, "Posted broadcasts"; between two ranks, since the
/// forty-seventh session, a ping-pong reads none: [`took`]). 64 slots made a 2-rank loop of
/// 512-byte posts slower (0.10–0.14 → 0.13–0.16 µs), the ping-pong no faster.
#[cfg(not(herald_loom))]
pub(crate) const SLOTS: usize = 16;
/// Two slots in loom models: a few epochs then reuse every slot.
#[cfg(herald_loom)]
pub(crate) const SLOTS: usize = 2;

/// Slots per rank of a communicator's small board where ranks share CPUs (posts of at most
/// [`MAX_BYTES`]): there each wait of a root for a reader is a turn of the CPUs, so the
/// slots must outlast one. With 16, a back-to-back loop of 8-byte broadcasts of 4 ranks on 2
/// CPUs took 0.28–0.36 µs posted against 0.14–0.16 through the rings (which hold 255 such
/// calls); with 64, 0.16–0.29 (docs/runtime.md, "Sixty-four slots for small posts where ranks
/// share CPUs"). Larger posts keep [`SLOTS`] slots: 64 of the default 8 KiB would take
/// 516 KiB a rank, and with them (one board of 64, tried first) the 4 KiB rows did not gain
/// beyond the host's spread.
#[cfg(not(herald_loom))]
pub(crate) const SHARED_SLOTS: usize = 64;
/// Two slots in loom models, as [`SLOTS`].
#[cfg(herald_loom)]
pub(crate) const SHARED_SLOTS: usize = 2;

const _: () = assert!(SLOTS < super::call::HISTORY && SHARED_SLOTS < super::call::HISTORY);
const _: () = assert!(SLOTS.is_power_of_two() && SHARED_SLOTS.is_power_of_two());

/// Lines per slot of a communicator whose ranks have CPUs of their own: the first holds the
/// tag, the call's header and [`HEAD_BYTES`] of payload, each further line 64 payload bytes.
#[cfg(not(herald_loom))]
const LINES: usize = 17;
/// Two lines in loom models: a small board of two-line slots beside a larger one.
#[cfg(herald_loom)]
const LINES: usize = 2;

/// Payload bytes in a slot's first line (after its tag and the call's header).
const HEAD_BYTES: usize = Line::PAYLOAD - 8;

/// Payload words in a slot's first line.
const HEAD_WORDS: usize = HEAD_BYTES / 8;

/// The largest payload posted where ranks have CPUs of their own: a slot of [`LINES`] lines
/// (1072 bytes, past the default
/// [`direct_min_bytes`](crate::CommOptions::direct_min_bytes) of 1 KiB).
pub(crate) const MAX_BYTES: usize = HEAD_BYTES + (LINES - 1) * 64;

/// The largest payload [`CommRank::broadcast`](crate::CommRank::broadcast) posts in shared
/// memory ([`CommOptions::posted_broadcast`](crate::CommOptions::posted_broadcast)) where
/// ranks have CPUs of their own: 1072 bytes, a slot of 17 lines. Where they share CPUs,
/// [`CommOptions::shared_posted_bytes`](crate::CommOptions::shared_posted_bytes) sizes the
/// slots, up to [`SHARED_POSTED_LIMIT`](crate::runtime::SHARED_POSTED_LIMIT).
pub const POSTED_MAX_BYTES: usize = MAX_BYTES;

/// The lines a posted broadcast of `bytes` payload bytes writes (and each reader reads): one
/// line with the call's header and up to 48 bytes, one more per further 64 bytes; `None` past
/// [`POSTED_MAX_BYTES`]. The runtime's cost model prices a post by these lines.
///
/// ```
/// use herald::runtime::posted_lines;
/// assert_eq!(posted_lines(0), Some(1));
/// assert_eq!(posted_lines(48), Some(1));
/// assert_eq!(posted_lines(49), Some(2));
/// assert_eq!(posted_lines(1072), Some(17));
/// assert_eq!(posted_lines(1073), None);
/// ```
#[must_use]
pub fn posted_lines(bytes: usize) -> Option<usize> {
    (bytes <= MAX_BYTES).then(|| lines_for(bytes))
}

/// The lines a posted broadcast of `bytes` payload bytes writes where ranks share CPUs (as
/// [`posted_lines`], in slots of up to
/// [`SHARED_POSTED_LIMIT`](crate::runtime::SHARED_POSTED_LIMIT) bytes); `None` past that.
///
/// ```
/// use herald::runtime::{shared_posted_lines, SHARED_POSTED_LIMIT};
/// assert_eq!(shared_posted_lines(8 << 10), Some(129));
/// assert_eq!(shared_posted_lines(SHARED_POSTED_LIMIT + 1), None);
/// ```
#[must_use]
pub fn shared_posted_lines(bytes: usize) -> Option<usize> {
    (bytes <= super::comm::SHARED_POSTED_LIMIT).then(|| lines_for(bytes))
}

/// The lines a post of `bytes` payload bytes writes, whatever the slot's size.
fn lines_for(bytes: usize) -> usize {
    1 + bytes.saturating_sub(HEAD_BYTES).div_ceil(64)
}

/// A slot's first line: the tag, the header and the first payload words.
#[derive(Debug)]
#[repr(align(64))]
struct Head {
    /// The low 32 bits of the epoch posted and the high 32 bits of its digest; stored last,
    /// with `Release` (0: none yet).
    tag: AtomicU64,
    /// The call's header.
    header: AtomicU64,
    /// The first payload bytes, little-endian, the last word zero-padded.
    words: [AtomicU64; HEAD_WORDS],
}

/// A slot's further line: eight payload words (`repr(C)`: a slot's further lines are
/// contiguous bytes, which a reader copies whole).
#[derive(Debug)]
#[repr(C, align(64))]
struct More {
    words: [AtomicU64; 8],
}

impl Head {
    fn new() -> Head {
        Head {
            tag: AtomicU64::new(0),
            header: AtomicU64::new(0),
            words: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl More {
    fn new() -> More {
        More {
            words: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

/// Copies `len` bytes of a slot's further payload from `src` to `dst`. A payload that ends
/// inside a line is copied in two parts, its whole lines and the rest (each part only where it is
/// not empty): one `memcpy` of a length past a multiple of 64 ends in overlapping vector moves
/// (likely the cost: on the root those loads read the caller's just-written bytes at offsets its
/// stores did not write, which the store buffer cannot forward; the two sides were not measured
/// apart). Measured on the development VM (2-rank posted broadcasts of a fixed profile, six runs of
/// each build alternating, raw hop 74–81 ns), in one copy 500 and 512 bytes (nine lines) took 4–23
/// ns more than 496 and 560 (eight and nine whole lines), 576 (ten lines) 24–37 ns more than 560;
/// in two, 500 and 512 within 5 ns of 496 and 560 (but one run's 512 B, 23 ns more), 576 within 6
/// (docs/runtime.md, "Posted payloads that end inside a line").
///
/// # Safety
/// As for [`std::ptr::copy_nonoverlapping`]: `src` valid for `len` bytes of reads, `dst` for
/// `len` bytes of writes, the two not overlapping, and nothing else accessing them meanwhile.
#[cfg(not(herald_loom))]
unsafe fn copy_by_lines(src: *const u8, dst: *mut u8, len: usize) {
    let whole = len & !63;
    // SAFETY: the caller's contract; `whole ≤ len`, so both parts lie inside the two spans.
    unsafe {
        if whole > 0 {
            std::ptr::copy_nonoverlapping(src, dst, whole);
        }
        if whole < len {
            std::ptr::copy_nonoverlapping(src.add(whole), dst.add(whole), len - whole);
        }
    }
}

/// Stores `bytes` into a slot's further lines: copied whole (`memcpy`, the last line's tail
/// left as it was: no reader looks past the payload's length), or word by word under loom
/// (whose atomics are not plain memory). The whole lines and a last partial line are two
/// copies ([`copy_by_lines`]).
#[inline(never)]
fn store_more(more: &[More], bytes: &[u8]) {
    #[cfg(not(herald_loom))]
    {
        assert!(
            bytes.len() <= std::mem::size_of_val(more),
            "a payload longer than its slot"
        );
        // SAFETY: `More` is `repr(C)`, eight `AtomicU64`s (the size and layout of `u64`s,
        // interior mutability: writable through a shared reference) and no padding, so `more`
        // spans `size_of_val(more)` contiguous bytes, at least `bytes.len()` (checked);
        // `bytes` is the caller's buffer, apart from the slot. The root writes these lines
        // only once every reader's progress shows it finished reading the slot's previous
        // epoch, and a reader copies them only after it loaded the tag that the root stores
        // (`Release`) after this copy: nothing reads or writes these bytes during the copy
        // (the protocol the `loom_` models check), and writing an atomic's bytes without a
        // race is sound.
        unsafe {
            copy_by_lines(
                bytes.as_ptr(),
                more.as_ptr().cast::<u8>().cast_mut(),
                bytes.len(),
            );
        }
    }
    #[cfg(herald_loom)]
    for (line, bytes) in more.iter().zip(bytes.chunks(64)) {
        store_words(&line.words, bytes);
    }
}

/// Loads `out.len()` bytes from a slot's further lines: copied whole (`memcpy`; the whole
/// lines and a last partial line are two copies, [`copy_by_lines`]), or word by word under loom
/// (whose atomics are not plain memory).
#[inline(never)]
fn load_more(more: &[More], out: &mut [u8]) {
    #[cfg(not(herald_loom))]
    {
        assert!(
            out.len() <= std::mem::size_of_val(more),
            "a payload longer than its slot"
        );
        // SAFETY: `More` is `repr(C)`, eight `AtomicU64`s (the size and layout of `u64`s)
        // and no padding, so `more` spans `size_of_val(more)` contiguous bytes, at least
        // `out.len()` (checked); `out` is the caller's buffer, apart from the slot. The
        // reader loaded the slot's tag (`Acquire`) as this epoch's, after the root's stores
        // of these lines (before its `Release` of the tag), and the root writes the slot again
        // only after this rank's next progress (`Release`, after this copy): nothing writes
        // these bytes during the copy (the protocol the `loom_` models check), and reading an
        // atomic's bytes without a race is sound.
        unsafe {
            copy_by_lines(more.as_ptr().cast::<u8>(), out.as_mut_ptr(), out.len());
        }
    }
    #[cfg(herald_loom)]
    for (line, out) in more.iter().zip(out.chunks_mut(64)) {
        load_words(&line.words, out);
    }
}

/// One rank's slots of a board and its progress there. The slots' first lines lie together,
/// as when a slot was one line, and their further lines elsewhere. (Slots of 16 lines each,
/// first lines 1 KiB apart, were measured only with the first version's slow code, so
/// whether that layout costs anything is not known.)
#[derive(Debug)]
struct Own {
    /// Its slots' first lines: the first [`Board::slots`] of them (inline, so a post or read
    /// reaches them without another pointer).
    heads: CachePadded<[Head; SHARED_SLOTS]>,
    /// Slot `i`'s further lines are `more[i * lines .. (i + 1) * lines]` ([`Board::lines`]).
    more: Box<[More]>,
    /// The rank's current epoch of the board: it has finished reading every earlier one.
    progress: CachePadded<AtomicU64>,
}

/// Every rank's slots of one size, and progress: the protocol of the module notes runs on
/// each board apart, with epochs of its own.
#[derive(Debug)]
pub(crate) struct Board {
    ranks: Box<[Own]>,
    /// Between two ranks, the slots' first lines, which both ranks write in turn (the first
    /// [`Board::mask`]` + 1` of them; `None` for more ranks; module notes, "Between two ranks").
    /// Padded as a whole, so that no other data shares a pair of lines with it.
    pair: Option<Box<CachePadded<[Head; SHARED_SLOTS]>>>,
    /// Further lines per slot.
    lines: usize,
    /// Slots per rank less one (the number is a power of two, [`SLOTS`] or
    /// [`SHARED_SLOTS`]): how many posts a root may run ahead of its slowest reader.
    mask: usize,
}

impl Board {
    /// `slots` slots a rank for `n` ranks, holding payloads of up to `max_bytes` each.
    fn new(n: usize, max_bytes: usize, slots: usize) -> Board {
        debug_assert!(slots.is_power_of_two() && slots <= SHARED_SLOTS);
        let lines = lines_for(max_bytes) - 1;
        Board {
            ranks: (0..n)
                .map(|_| Own {
                    heads: CachePadded::new(std::array::from_fn(|_| Head::new())),
                    more: (0..slots * lines).map(|_| More::new()).collect(),
                    progress: CachePadded::new(AtomicU64::new(0)),
                })
                .collect(),
            pair: (n == 2)
                .then(|| Box::new(CachePadded::new(std::array::from_fn(|_| Head::new())))),
            lines,
            mask: slots - 1,
        }
    }

    /// The largest payload a slot holds.
    fn max_bytes(&self) -> usize {
        HEAD_BYTES + self.lines * 64
    }

    /// The first line of `root`'s post of the epoch `at` is in: between two ranks the shared
    /// slot of `at`'s turn, otherwise `root`'s own slot of the epoch.
    #[inline]
    fn head(&self, root: usize, at: &Cursor, further: bool) -> &Head {
        // Masked twice: the second mask lets the compiler drop the bounds check.
        match &self.pair {
            Some(pair) if !further => &pair[at.turn & self.mask & (SHARED_SLOTS - 1)],
            _ => &self.ranks[root].heads[(at.epoch as usize) & self.mask & (SHARED_SLOTS - 1)],
        }
    }

    /// The further lines of `root`'s post of `epoch` (its own slot of the epoch, whatever
    /// the number of ranks).
    #[inline]
    fn more(&self, root: usize, epoch: u64) -> &[More] {
        let i = (epoch as usize) & self.mask & (SHARED_SLOTS - 1);
        &self.ranks[root].more[i * self.lines..(i + 1) * self.lines]
    }
}

/// A rank's place in one board's posts, kept by the rank between calls: the epoch, what it
/// knows of the other ranks' progress, whether it posted the epoch before, and (between two
/// ranks) which shared slot the epoch uses.
#[derive(Debug)]
pub(crate) struct Cursor {
    /// The current epoch: the board's posted broadcasts this rank has made, this one included.
    epoch: u64,
    /// The least progress of the other ranks this rank saw last ([`post`], [`took`]).
    seen: u64,
    /// The root of the current epoch (`usize::MAX` before the first).
    root: usize,
    /// Whether this rank posted the epoch before the current one.
    replying: bool,
    /// Between two ranks: the number of epochs so far whose root was also the previous
    /// epoch's (the current epoch's shared slot is this, masked).
    turn: usize,
}

impl Cursor {
    /// Before the first epoch.
    pub(crate) fn new() -> Cursor {
        Cursor {
            epoch: 0,
            seen: 0,
            root: usize::MAX,
            replying: false,
            turn: 0,
        }
    }

    /// Rank `me` begins the next epoch, a broadcast from `root`; returns the epoch. A root that
    /// posted the previous epoch too moves on to the next shared slot; a new root writes the
    /// slot it has just read.
    #[inline]
    pub(crate) fn next(&mut self, me: usize, root: usize) -> u64 {
        self.epoch += 1;
        self.replying = self.root == me;
        if self.root == root {
            self.turn = self.turn.wrapping_add(1);
        }
        self.root = root;
        self.epoch
    }
}

/// A communicator's boards: one of [`SLOTS`] slots where its ranks have CPUs of their own;
/// where they share CPUs, a small board of [`SHARED_SLOTS`] slots for posts of at most
/// [`MAX_BYTES`] and, for a larger slot size, a board of [`SLOTS`] slots of that size.
#[derive(Debug)]
pub(crate) struct Posts {
    /// The only board, or the small one.
    first: Board,
    /// The board of the larger posts, if any.
    second: Option<Board>,
}

impl Posts {
    /// Slots for `n` ranks holding payloads of up to `max_bytes` each; a communicator that
    /// never posts (the option is off) passes 0 and gets no further lines. `shared`: the ranks
    /// share CPUs.
    pub(crate) fn new(n: usize, max_bytes: usize, shared: bool) -> Posts {
        let (first, second) = if !shared {
            (Board::new(n, max_bytes, SLOTS), None)
        } else if max_bytes <= MAX_BYTES {
            (Board::new(n, max_bytes, SHARED_SLOTS), None)
        } else {
            (
                Board::new(n, MAX_BYTES, SHARED_SLOTS),
                Some(Board::new(n, max_bytes, SLOTS)),
            )
        };
        Posts { first, second }
    }

    /// The board that posts `bytes` payload bytes (at most the largest board's), and its
    /// index (0 or 1: a rank counts its epochs per board).
    #[inline]
    pub(crate) fn board_of(&self, bytes: usize) -> (usize, &Board) {
        match &self.second {
            Some(second) if bytes > self.first.max_bytes() => (1, second),
            _ => (0, &self.first),
        }
    }

    /// Back to the fresh state (no endpoint exists).
    pub(crate) fn reset(&self) {
        for own in std::iter::once(&self.first)
            .chain(&self.second)
            .flat_map(|b| b.ranks.iter())
        {
            own.heads
                .iter()
                .for_each(|h| h.tag.store(0, Ordering::Relaxed));
            own.progress.store(0, Ordering::Relaxed);
        }
        for head in std::iter::once(&self.first)
            .chain(&self.second)
            .flat_map(|b| b.pair.iter().flat_map(|p| p.iter()))
        {
            head.tag.store(0, Ordering::Relaxed);
        }
    }
}

/// The tag of `epoch` posted after calls whose digest is `calls`.
fn tag(epoch: u64, calls: u64) -> u64 {
    (calls & !0xffff_ffff) | (epoch & 0xffff_ffff)
}

/// Whether `tag` is that of `epoch` (whatever its digest).
fn is_epoch(tag: u64, epoch: u64) -> bool {
    tag & 0xffff_ffff == epoch & 0xffff_ffff
}

/// Step 1: rank `me` starts its epoch `epoch` on board `posts` (it has read every earlier
/// one there), and wakes every other rank: a root may be waiting for this progress (a load of
/// each one's signal line, which only a rank going to sleep writes).
#[inline]
pub(crate) fn start(core: &Core, posts: &Board, me: usize, epoch: u64) {
    posts.ranks[me].progress.store(epoch, Ordering::Release);
    core.notify_others(me);
}

/// Step 2: root `me` posts `payload` on board `posts` ([`Posts::board_of`] its length) for
/// the current epoch of its cursor `at` there (`(posts, at)`, [`Cursor::next`] called) in call
/// `id`, after calls whose digest is `calls`, once no other rank may still read the lines it
/// writes: every other rank has started epoch `epoch − SLOTS + 1` of the board (between two
/// ranks, a post of one line by a new root waits for nothing: module notes). `at` keeps the
/// least progress of the others this rank saw, and looks again, then waits, only when that is
/// too little.
///
/// # Errors
///
/// While it waits for a slow reader: a mismatch or departure of that reader, the poison, or
/// the team's abort.
#[inline]
pub(crate) fn post(
    core: &Core,
    me: usize,
    (posts, at): (&Board, &mut Cursor),
    id: (u64, u64),
    calls: u64,
    payload: &[u8],
) -> Result<(), CollectiveError> {
    debug_assert!(payload.len() <= posts.max_bytes());
    let epoch = at.epoch;
    let further = payload.len() > HEAD_BYTES;
    // A new root between two ranks writes the shared slot of the epoch before (or of an
    // earlier one), which the other rank posted (and this one read) or finished reading
    // before it posted that epoch: it waits for nothing. Otherwise the slot's last post was
    // at least `SLOTS` epochs ago (a root that posts again moves on a slot, one of `SLOTS`).
    let need = if posts.pair.is_some() && !further && !at.replying {
        0
    } else {
        epoch.saturating_sub(posts.mask as u64)
    };
    if at.seen < need {
        at.seen = least_progress(core, posts, me, need, id)?;
    }
    let head = posts.head(me, at, further);
    if further {
        // Every reader read these lines `SLOTS` epochs ago: ask for all of them at once, or
        // each store below waits for its line in turn (a loop of 1 KiB posts took 2.2× as
        // long; `hint`). A post of one line, and the small allreduce's deposit (where the
        // hint measured slower), do without.
        hint::for_write(std::slice::from_ref(head));
        hint::for_write(&posts.more(me, epoch)[..(payload.len() - HEAD_BYTES).div_ceil(64)]);
    }
    // Whole words are read with one 8-byte load each, not assembled from a variable-length
    // copy: the caller's buffer was often just written (a broadcast it received), and a load
    // that the store buffer cannot forward waits until those stores, and every store before
    // them, have left (docs/runtime.md, "The 48-byte broadcast taken apart").
    let first = if further {
        let (first, rest) = payload.split_at(HEAD_BYTES);
        store_more(posts.more(me, epoch), rest);
        first
    } else {
        payload
    };
    store_words(&head.words, first);
    head.header.store(id.1, Ordering::Relaxed);
    head.tag.store(tag(epoch, calls), Ordering::Release);
    core.notify_others(me);
    Ok(())
}

/// The least progress of the ranks other than `me` on `posts`, once it is at least `need`
/// (waiting for the slowest, in call `id`).
#[cold]
fn least_progress(
    core: &Core,
    posts: &Board,
    me: usize,
    need: u64,
    id: (u64, u64),
) -> Result<u64, CollectiveError> {
    let n = core.signals.len();
    let progress = |r: usize| posts.ranks[r].progress.load(Ordering::Acquire);
    let least = || {
        (0..n)
            .filter(|&r| r != me)
            .map(|r| (progress(r), r))
            .min()
            .unwrap_or((u64::MAX, me))
    };
    let mut polls = Polls::default();
    let look = |phase: Phase| -> Option<Result<u64, CollectiveError>> {
        let (low, slowest) = least();
        if low >= need {
            return Some(Ok(low));
        }
        core.wait_stop(&mut polls, phase, me, slowest, id).map(Err)
    };
    core.signals[me].wait_phased_or(look)?
}

/// Step 3: rank `me` waits for `root`'s post of the current epoch of its cursor `at` on board
/// `posts` (`(posts, at)`, [`Cursor::next`] called) in call `id`, after calls whose digest is
/// `calls`, and reads its payload into `out` (as many bytes as `out` holds,
/// [`Posts::board_of`] that length).
///
/// # Errors
///
/// A mismatch (another call in the root's slot, another digest, another call in the root's
/// published history, a root that moved past this call without posting it, or, between two
/// ranks, this epoch posted in another shared slot), a departed root, the poison, or the
/// team's abort.
#[inline]
pub(crate) fn take(
    core: &Core,
    me: usize,
    root: usize,
    (posts, at): (&Board, &Cursor),
    id: (u64, u64),
    calls: u64,
    out: &mut [u8],
) -> Result<(), CollectiveError> {
    debug_assert!(out.len() <= posts.max_bytes());
    let further = out.len() > HEAD_BYTES;
    let head = posts.head(root, at, further);
    let mut t = head.tag.load(Ordering::Acquire);
    if !is_epoch(t, at.epoch) {
        t = match first_polls(head, at.epoch) {
            Some(t) => t,
            None => wait_post(core, posts, me, root, (at, head), id)?,
        };
    }
    let header = head.header.load(Ordering::Relaxed);
    if header != id.1 {
        return Err(core.mismatch(me, root, id.1, header));
    }
    if t != tag(at.epoch, calls) {
        return Err(super::small::earlier_mismatch(core, me, root, id));
    }
    if further {
        let (first, rest) = out.split_at_mut(HEAD_BYTES);
        load_words(&head.words, first);
        load_more(posts.more(root, at.epoch), rest);
    } else {
        load_words(&head.words, out);
    }
    Ok(())
}

/// After [`take`] read a post of the current epoch of `at` on board `posts`: `at` keeps what
/// [`post`] knows of the other ranks' least progress there. A rank starts an epoch before it
/// posts in it, so the post says that its root's progress is at least the epoch; where the
/// root is the only other rank, `at` learns that. With roots taking turns between two ranks,
/// a post then never reads the other's progress line: a line the other stores to in every
/// call, so each such read took it away, and the other's next stores (its post among them)
/// waited for it to come back.
#[inline]
pub(crate) fn took(posts: &Board, at: &mut Cursor) {
    if posts.ranks.len() == 2 {
        at.seen = at.seen.max(at.epoch);
    }
}

/// How many times a reader with a CPU of its own polls a slot's tag alone, one spin hint apart,
/// before [`wait_post`] (about 1 µs on the development machines: longer than a 2-rank post's
/// reply takes in any latency mode).
const FIRST_POLLS: u32 = 32;

/// The tag of the current epoch `epoch` in `head`, if it arrives within [`FIRST_POLLS`]
/// polls, where the calling thread has its CPU to itself (else `None` at once: its wait
/// yields to the CPU's other workers, [`wait_post`]).
///
/// Between two ranks with roots taking turns the reader's wait is about a hop, and these
/// polls are the whole of it: each looks at the tag alone, inline, where [`wait_post`]'s
/// polls go through the waits' shared loop and look at the poison too. A 48-byte broadcast
/// took 15 ns less (docs/runtime.md, "Seventy-second session"). The checks that this skips
/// (poison, abort, mismatch, departure) are only deferred: a wait that lasts past these
/// polls makes them all in [`wait_post`].
#[inline]
fn first_polls(head: &Head, epoch: u64) -> Option<u64> {
    if cfg!(herald_loom) || wait::thread_shares_cpu() {
        return None;
    }
    for _ in 0..FIRST_POLLS {
        std::hint::spin_loop();
        let t = head.tag.load(Ordering::Acquire);
        if is_epoch(t, epoch) {
            return Some(t);
        }
    }
    None
}

/// Waits until `root`'s slot of `posts` for the current epoch of `at` holds that epoch's tag,
/// and returns the tag.
#[cold]
fn wait_post(
    core: &Core,
    posts: &Board,
    me: usize,
    root: usize,
    (at, head): (&Cursor, &Head),
    id: (u64, u64),
) -> Result<u64, CollectiveError> {
    let epoch = at.epoch;
    let mut polls = Polls::default();
    let look = |phase: Phase| -> Option<Result<u64, CollectiveError>> {
        let t = head.tag.load(Ordering::Acquire);
        if is_epoch(t, epoch) {
            return Some(Ok(t));
        }
        if !polls.thorough(phase) {
            return core.poison_error().map(Err);
        }
        if let Some(e) = core.check_peer(me, root, id) {
            return Some(Err(e));
        }
        // Between two ranks both count the turns from the roots of the calls so far: a root
        // that saw another root in an earlier call (which neither may have noticed: two roots
        // do not wait) posts this epoch in another shared slot.
        if posts
            .pair
            .iter()
            .flat_map(|p| &p[..=posts.mask])
            .any(|h| !std::ptr::eq(h, head) && is_epoch(h.tag.load(Ordering::Relaxed), epoch))
        {
            return Some(Err(super::small::earlier_mismatch(core, me, root, id)));
        }
        // The root publishes its next call only after posting this one: past this call and
        // still no post, it made another call here.
        if core.ranks[root].seq.load(Ordering::Acquire) > id.0 {
            let t = head.tag.load(Ordering::Acquire);
            if is_epoch(t, epoch) {
                return Some(Ok(t));
            }
            return Some(Err(super::small::earlier_mismatch(core, me, root, id)));
        }
        None
    };
    core.signals[me].wait_phased_or_across(
        || spin_for(core, posts, me, root, (epoch, at.replying)),
        look,
    )?
}

/// Whether rank `me`, waiting on board `posts` for `root`'s post of `epoch`, may spin where it
/// shares its CPU: it posted epoch `epoch − 1` itself (`replying`: it waits for the reply to
/// its own post, and its mates, which read that post, do not answer it), `root` runs on
/// another CPU, and no rank on `me`'s CPU keeps `root` from posting `epoch` (such a rank has
/// posts to read, and the wait ends only after it has read them: it needs the CPU more than
/// `me`'s spin).
fn spin_for(
    core: &Core,
    posts: &Board,
    me: usize,
    root: usize,
    (epoch, replying): (u64, bool),
) -> bool {
    let need = epoch.saturating_sub(posts.mask as u64);
    replying
        && core.across(me, root)
        && core
            .mates(me)
            .all(|r| posts.ranks[r].progress.load(Ordering::Relaxed) >= need)
}

/// A loom model of the protocol from its own parts (`start`, `post`, `take`, the
/// communicator's poison and published calls), with two slots per rank so that a few epochs
/// reuse every slot: the roots alternate or one root posts every epoch (so it waits for its
/// reader before reusing a slot), every payload read must be the root's of that epoch — a slot
/// reused too early, or read before its epoch, would show. A rank may fail after some epoch
/// (its peer must then fail, never hang), or make another call (a mismatch).
/// (`RUSTFLAGS="--cfg herald_loom" cargo test --release --lib loom_`.)
#[cfg(all(test, herald_loom))]
mod loom_tests {
    use super::*;
    use crate::runtime::collective::call::{CallInfo, CollectiveKind};
    use crate::runtime::collective::error::PoisonCause;
    use crate::runtime::collective::small::digest;
    use crate::runtime::sync::Arc;
    use loom::thread;

    /// The payload of call `e` (up to 150 bytes: the first line's six words, and a tail in
    /// the further lines).
    fn value(e: u64) -> Vec<u8> {
        (0..150)
            .map(|k| (e as u8).wrapping_mul(31).wrapping_add(k))
            .collect()
    }

    /// The root of call `e` as rank `me` sees it (the ranks may disagree: a mismatch).
    type Roots = fn(usize, u64) -> usize;

    /// Rank `me` of 2 runs `epochs` posted broadcasts (call numbers `e` in `1..`, on one board
    /// or alternating between two, each board's epochs its own; on one board, payloads of 40
    /// bytes, the first line alone, and of 52, into a further line, in turn); the root of call
    /// `e` is `root(me, e)`. `fail`: it fails after that call; `other`: its call `other` has
    /// another length (a mismatch).
    fn rank(
        core: &Core,
        me: usize,
        epochs: u64,
        root: Roots,
        fail: Option<u64>,
        other: Option<u64>,
    ) -> Result<(), CollectiveError> {
        let (mut calls, mut at) = (0u64, [Cursor::new(), Cursor::new()]);
        for e in 1..=epochs {
            if core.is_poisoned() {
                return Err(core.poison_error().expect("poisoned"));
            }
            let len = match (other == Some(e), core.posts.second.is_some()) {
                (true, _) => 12,
                // Two boards: calls alternate between them.
                (false, true) if e % 2 == 0 => 150,
                (false, true) => 52,
                (false, false) if e % 2 == 1 => 40,
                (false, false) => 52,
            };
            let (board, posts) = core.posts.board_of(len);
            let root = root(me, e);
            let header = CallInfo::header(CollectiveKind::Broadcast, e, root, len);
            calls = digest(calls, header);
            core.publish(me, e, header);
            let at = &mut at[board];
            start(core, posts, me, at.next(me, root));
            let id = (e, header);
            if me == root {
                post(core, me, (posts, at), id, calls, &value(e)[..len])?;
            } else {
                let mut out = vec![0u8; len];
                take(core, me, root, (posts, at), id, calls, &mut out)?;
                took(posts, at);
                assert_eq!(out, value(e)[..len], "rank {me} call {e}");
            }
            if fail == Some(e) {
                core.poison(me, PoisonCause::Panic);
                return Err(CollectiveError::Aborted);
            }
        }
        Ok(())
    }

    fn model(epochs: u64, root: Roots, fail: Option<u64>, other: Option<u64>) {
        model_of(false, epochs, root, fail, other);
    }

    /// [`model`], on the one board of ranks with CPUs of their own or (`shared`) the two of
    /// ranks sharing CPUs: slots of two lines, and of four (payloads of 52 and 150 bytes).
    fn model_of(shared: bool, epochs: u64, root: Roots, fail: Option<u64>, other: Option<u64>) {
        loom::model(move || {
            let core = Arc::new(if shared {
                Core::new_with_small(2, 4096, 176, true)
            } else {
                Core::new(2)
            });
            let peer = {
                let core = Arc::clone(&core);
                thread::spawn(move || rank(&core, 1, epochs, root, None, other))
            };
            let mine = rank(&core, 0, epochs, root, fail, None);
            let theirs = peer.join().unwrap();
            let roots_differ = (1..=epochs).any(|e| root(0, e) != root(1, e));
            let other = other.or(roots_differ.then_some(0));
            match (fail, other) {
                (None, None) => assert!(mine.is_ok() && theirs.is_ok(), "{mine:?} {theirs:?}"),
                // Rank 0 fails: rank 1 finishes or fails, but never hangs (loom would report
                // a deadlock) and never reads wrong bytes (asserted above).
                (Some(_), _) => assert!(mine.is_err()),
                // A mismatch: at least one of them reports it.
                (None, Some(_)) => assert!(mine.is_err() || theirs.is_err(), "{mine:?} {theirs:?}"),
            }
        });
    }

    fn alternating(_: usize, e: u64) -> usize {
        (e % 2) as usize
    }

    fn always_zero(_: usize, _: u64) -> usize {
        0
    }

    #[test]
    fn loom_posted_alternating_roots_four_epochs() {
        model(4, alternating, None, None);
    }

    #[test]
    fn loom_posted_one_root_reuses_its_slots() {
        model(4, always_zero, None, None);
    }

    /// Between two ranks: a root that posts twice moves on to the next shared slot, a new root
    /// writes the slot it has just read (roots 0, 0, 1, 1, 0: every shared slot reused, by
    /// either rank).
    #[test]
    fn loom_posted_roots_in_pairs() {
        model(5, |_, e| [0, 0, 1, 1, 0][e as usize - 1], None, None);
    }

    /// Both ranks take themselves for the root of the first call (both post, neither waits),
    /// then agree on rank 0: rank 1 counts another turn than rank 0 and waits on another
    /// shared slot; it must find the mismatch, not hang.
    #[test]
    fn loom_posted_two_roots_then_one() {
        model(2, |me, e| if e == 1 { me } else { 0 }, None, None);
    }

    #[test]
    fn loom_posted_root_fails_after_an_epoch() {
        model(3, always_zero, Some(1), None);
    }

    #[test]
    fn loom_posted_mismatched_call() {
        model(3, always_zero, None, Some(2));
    }

    #[test]
    fn loom_posted_two_boards_one_root_reuses_their_slots() {
        // Calls alternate between the boards: each board's two slots reused.
        model_of(true, 6, always_zero, None, None);
    }

    #[test]
    fn loom_posted_two_boards_alternating_roots() {
        model_of(true, 4, alternating, None, None);
    }

    /// Calls alternate between the boards and each board's roots alternate (roots 0, 1, 1, 0,
    /// 0, 1): each board's shared slots written by both ranks in turn.
    #[test]
    fn loom_posted_two_boards_roots_alternating_on_each() {
        model_of(true, 6, |_, e| ((e / 2) % 2) as usize, None, None);
    }
}

#[cfg(all(test, not(herald_loom)))]
mod tests {
    use super::{post, spin_for, start, take, took, Core, Cursor};
    use crate::runtime::sync::Ordering;
    use crate::runtime::wait::NO_CPU;

    /// Four ranks; rank `r`'s driver on `homes[r]`; every rank has started epoch 1 of the small
    /// board (64 slots where ranks share CPUs).
    fn core(homes: [u64; 4]) -> Core {
        let core = Core::new_with_small(4, 64, 64, true);
        for (r, &h) in homes.iter().enumerate() {
            core.ranks[r].home.store(h, Ordering::Relaxed);
            core.posts.first.ranks[r]
                .progress
                .store(1, Ordering::Relaxed);
        }
        core
    }

    #[test]
    fn a_root_spins_for_the_reply_from_another_cpu() {
        let c = core([0, 1, 0, 1]);
        let board = &c.posts.first;
        // rank 3 (CPU 1) posted epoch 4 and waits for root 0's (CPU 0) epoch 5: a reply
        assert!(spin_for(&c, board, 3, 0, (5, true)));
        // not a reply: rank 3 did not post the epoch before
        assert!(!spin_for(&c, board, 3, 0, (5, false)));
        // the root on the same CPU (rank 1 posts epoch 5 beside rank 3): it needs this CPU
        assert!(!spin_for(&c, board, 3, 1, (5, true)));
        // a rank whose driver is not pinned, or a root whose driver is not: never
        let c = core([0, 1, 0, NO_CPU]);
        assert!(!spin_for(&c, &c.posts.first, 3, 0, (5, true)));
        let c = core([NO_CPU, 1, 0, 1]);
        assert!(!spin_for(&c, &c.posts.first, 3, 0, (5, true)));
    }

    #[test]
    fn a_cursor_knows_whether_its_rank_posted_the_epoch_before() {
        // rank 3 of four: roots 3, 0, 0, 3, 3, 1
        let mut at = Cursor::new();
        let replying: Vec<bool> = [3, 0, 0, 3, 3, 1]
            .into_iter()
            .map(|root| {
                at.next(3, root);
                at.replying
            })
            .collect();
        assert_eq!(replying, [false, true, false, false, true, true]);
        assert_eq!(at.epoch, 6);
    }

    #[test]
    fn a_root_yields_to_a_mate_that_holds_the_reply_back() {
        let c = core([0, 1, 0, 1]);
        let board = &c.posts.first;
        let slots = board.mask as u64 + 1;
        assert_eq!(slots, 64);
        // Root 0 posts epoch e once every other rank has started epoch e − 63. Rank 1 (rank
        // 3's mate) is at epoch 1: it holds back epoch 65, which rank 3 awaits after its 64.
        assert!(!spin_for(&c, board, 3, 0, (65, true)));
        // once rank 1 has started epoch 2, epoch 65 may be posted
        board.ranks[1].progress.store(2, Ordering::Relaxed);
        assert!(spin_for(&c, board, 3, 0, (65, true)));
        // a lagging rank on another CPU (rank 2, CPU 0) is not rank 3's to yield to
        board.ranks[2].progress.store(0, Ordering::Relaxed);
        assert!(spin_for(&c, board, 3, 0, (65, true)));
    }

    /// Two ranks post `roots` in turn (one thread plays both, every payload read right after
    /// its post); returns, per epoch, the address of the line its post went to, and checks
    /// every payload.
    fn pair_lines(roots: &[usize], len: usize) -> Vec<usize> {
        let c = Core::new_with_small(2, 64, 1072, false);
        let board = &c.posts.first;
        let mut at = [Cursor::new(), Cursor::new()];
        let mut lines = Vec::new();
        for (i, &root) in roots.iter().enumerate() {
            let e = i as u64 + 1;
            for (r, at) in at.iter_mut().enumerate() {
                start(&c, board, r, at.next(r, root));
                c.publish(r, e, 7);
            }
            let reader = 1 - root;
            let id = (e, 7);
            let payload: Vec<u8> = (0..len).map(|k| (e as u8) ^ (k as u8)).collect();
            let [a0, a1] = &mut at;
            let (root_at, reader_at) = if root == 0 { (a0, a1) } else { (a1, a0) };
            post(&c, root, (board, root_at), id, 0, &payload).unwrap();
            lines.push(std::ptr::from_ref(board.head(root, root_at, len > 48)) as usize);
            let mut out = vec![0u8; len];
            take(&c, reader, root, (board, reader_at), id, 0, &mut out).unwrap();
            assert_eq!(out, payload, "epoch {e}");
            took(board, reader_at);
        }
        lines
    }

    #[test]
    fn between_two_ranks_a_reply_goes_into_the_line_just_read() {
        for len in [0, 8, 48] {
            // A ping-pong: every post in one line.
            let lines = pair_lines(&[0, 1, 0, 1, 0, 1, 0], len);
            assert!(lines.iter().all(|&l| l == lines[0]), "{len}: {lines:?}");
            // One root: a line per post, each of the 16 used in turn, then again.
            let lines = pair_lines(&[1; 40], len);
            for (e, &l) in lines.iter().enumerate() {
                assert_eq!(l == lines[0], e % 16 == 0, "{len}: epoch {}", e + 1);
                assert_eq!(l, lines[e % 16], "{len}: epoch {}", e + 1);
            }
            // Roots 0, 0, 1, 1, 0: a new line where a root posts twice, the same where the
            // root changes.
            let lines = pair_lines(&[0, 0, 1, 1, 0], len);
            let same: Vec<bool> = lines.windows(2).map(|w| w[0] == w[1]).collect();
            assert_eq!(same, [false, true, false, true], "{len}");
        }
        // Posts with further lines keep the root's own slots (docs/runtime.md, "Sixty-first
        // session"): in a ping-pong, slot e mod 16 of the root of epoch e, no two epochs in a
        // row in one line, 16 lines in all.
        for len in [49, 1072] {
            let roots: Vec<usize> = (0..32).map(|e| e % 2).collect();
            let mut lines = pair_lines(&roots, len);
            assert!(lines.windows(2).all(|w| w[0] != w[1]), "{len}");
            lines.sort_unstable();
            lines.dedup();
            assert_eq!(lines.len(), 16, "{len}");
        }
    }

    #[test]
    fn between_two_ranks_a_post_read_tells_its_root_s_progress() {
        // Two ranks take turns as root for 40 epochs (the root of epoch e is e mod 2). Each
        // rank's progress word is set far ahead right after it starts an epoch, so a root that
        // read it would keep that value as the least progress it saw.
        const AHEAD: u64 = 1 << 40;
        for len in [40, 1000] {
            let c = Core::new_with_small(2, 64, 1072, false);
            let board = &c.posts.first;
            let mut at = [Cursor::new(), Cursor::new()];
            for e in 1..=40u64 {
                let root = (e % 2) as usize;
                for (r, at) in at.iter_mut().enumerate() {
                    start(&c, board, r, at.next(r, root));
                    board.ranks[r].progress.store(AHEAD, Ordering::Relaxed);
                }
                let reader = 1 - root;
                let id = (e, 7);
                c.publish(root, e, 7);
                c.publish(reader, e, 7);
                let payload = vec![e as u8; len];
                let [a0, a1] = &mut at;
                let (root_at, reader_at) = if root == 0 { (a0, a1) } else { (a1, a0) };
                post(&c, root, (board, root_at), id, 0, &payload).unwrap();
                let mut out = vec![0u8; len];
                take(&c, reader, root, (board, reader_at), id, 0, &mut out).unwrap();
                assert_eq!(out, payload);
                took(board, reader_at);
                // the reader knows its root reached epoch e, without reading its progress line
                assert_eq!(reader_at.seen, e);
                // and the root never read the other's progress line: it never needed to
                assert!(
                    root_at.seen < AHEAD,
                    "{len} B, epoch {e}: the root read a progress line"
                );
            }
        }
        // With a third rank, one root's post says nothing of the others' progress.
        let c = Core::new_with_small(3, 64, 1072, false);
        let mut at = Cursor::new();
        for _ in 0..5 {
            at.next(0, 1);
        }
        took(&c.posts.first, &mut at);
        assert_eq!(at.seen, 0);
    }
}
