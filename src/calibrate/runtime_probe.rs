//! Calibrating herald's runtime through its own operations (the cost model of
//! [`RuntimeCosts`](crate::model::RuntimeCosts)): on one pair of PUs, 2-rank broadcasts with
//! [`CommRank::broadcast_with`](crate::runtime::CommRank::broadcast_with), timed barrier then
//! one (from the root's call to the later return, fresh data on the root every time), streamed
//! and by single copy (in one block, and in many blocks for the per-block cost; a short stream
//! also in 2 blocks, for the executor's cost beyond the one-block path), and a one-line
//! broadcast between two ranks pinned to one PU (the handoff when ranks share a PU), and posted
//! broadcasts ([`CommRank::broadcast`](crate::runtime::CommRank::broadcast) of a communicator
//! that posts) of one line and of a full slot, between the pair and between two ranks of one
//! PU (of one line and of `SHARED_FULL` and `SHARED_READ` bytes) and among three ranks of one
//! PU (of one line and of `SHARED_READ` bytes), and single copies into a reader's buffer that
//! the other PU holds (read back to rank 0 just before, untimed). Every case of a slice comes
//! right after a raw atomic ping-pong between the two PUs (one line per direction), whose modes
//! over the run are the host's latency regimes; every quantity is a weighted distribution over
//! slices, and one measured between the PUs keeps only the slices whose cases ran in one regime
//! and has the regimes for its modes ([`Mode::regime_hop_ns`]; a slow spell of this host often
//! ends within a slice, docs/fidelity.md, "Forty-second session"). Quantities on one PU have the
//! modes of their own values, like the channel's parameters.

use super::modes::find_modes_of_share;
use super::{distribution, nearest_mode, CalibrateError};
use crate::model::{Distribution, Mode, Model, Postal, RuntimeCalibration};
use crate::runtime::{Comm, CommOptions, Program, Team};
use crate::runtime::{StampLine, POSTED_MAX_BYTES, SLIP};
use crate::schedule::{generate, Algorithm, Request};
use crate::time::Ratio;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The one-line payload: the 8-byte call header and 48 bytes fill one 56-byte line.
const ONE_LINE: usize = 48;
/// The short stream: exactly the receiver's read-ahead in full lines.
const BURST: usize = SLIP * 56 - 8;
/// The shortest stream two blocks can cut: two full lines.
const TWO_LINES: usize = 2 * 56 - 8;
/// The two long streamed sizes: both many ring capacities long (the sustained regime).
const STREAM: [usize; 2] = [16 << 10, 256 << 10];
/// The three single-copy sizes: one chunk, a chunk's worth, and a payload past the caches.
const DIRECT: [usize; 3] = [4 << 10, 64 << 10, 1 << 20];
/// The largest single-copy size: past the last-level cache (a 4 MiB copy took 1.6–1.8× the
/// 1 MiB slope's extrapolation in the sixth session's fidelity runs).
const HUGE: usize = 4 << 20;
/// Blocks of the many-block single copy (of `DIRECT[1]` bytes, one chunk per block).
const MANY_BLOCKS: u32 = 16;
/// The longer posted size: a full slot (one line, then 16 of 64 bytes).
const POSTED_FULL: usize = POSTED_MAX_BYTES;
/// A post of two lines: the first line's 48 bytes and a full second line.
const POSTED_TWO: usize = 48 + 64;
/// The further posted lengths measured between the pair: every length from three lines to one
/// short of a full slot, in full lines (the first line's 48 bytes, then 64 per line).
const POSTED_CURVE: [usize; 14] = {
    let mut sizes = [0; 14];
    let mut i = 0;
    while i < sizes.len() {
        sizes[i] = 48 + 64 * (i + 2);
        i += 1;
    }
    sizes
};
// Under loom slots are shorter (and the probe does not run).
#[cfg(not(herald_loom))]
const _: () = assert!(POSTED_CURVE[POSTED_CURVE.len() - 1] + 64 == POSTED_FULL);
/// The index in [`CASES`] of the first `POSTED_CURVE` case (they are the last ones).
const CURVE_CASE: usize = CASES.len() - POSTED_CURVE.len();
/// Repetitions of a `POSTED_CURVE` case per slice at most (fourteen cases of a fraction of a
/// microsecond each: with their two barriers per repetition they would lengthen a slice by a
/// third at the other cases' limit of 4096).
const CURVE_REPS: u64 = 1024;
/// The longer posted size between two ranks of one PU: the end of the default
/// [`shared_posted_bytes`](crate::CommOptions::shared_posted_bytes), 129 lines.
const SHARED_FULL: usize = 8 << 10;
/// The longer post among three ranks of one PU (and between two, beside it): the largest slot
/// where ranks share CPUs, where a further reader's read is long enough to time against its
/// handoff.
const SHARED_READ: usize = crate::runtime::SHARED_POSTED_LIMIT;
/// The single-copy sizes measured into a reader's buffer that the other PU holds: two below
/// the runtime's streaming window (copied plainly), a chunk, four, and `DIRECT[2]` (past one
/// core's L2 here, where the other PU keeps only part of it), all three inside it.
const HELD: [usize; 5] = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20];
/// The reader buffers a single copy of `HUGE` bytes rotates through, one per case: with the
/// root's buffer the broadcasts touch 16, 32 and 64 MiB, and the buffer copied into is always
/// the least recently written. One buffer (the `HUGE` case) touches 8 MiB. A scratch program
/// on this machine (fifty-second session) copied 4 MiB at about 40 bytes/ns into up to three
/// buffers in turn and at 10–19 into four or more (a 32 MiB L3 by hwloc, but the copies slowed
/// from about 16 MiB of buffers on).
const FOOTPRINT_READERS: [usize; 3] = [3, 7, 15];
/// How many blocks a case's payload is cut into.
#[derive(Clone, Copy)]
enum Blocks {
    One,
    /// Two: a stream then runs the executor (see `exec_ns`).
    Two,
    /// `MANY_BLOCKS`.
    Many,
}

/// One kind of timed broadcast of the probe.
#[derive(Clone, Copy)]
struct Case {
    bytes: usize,
    /// By single copy (else streamed).
    direct: bool,
    blocks: Blocks,
    /// Both ranks on the pair's first PU (else one rank on each PU of the pair).
    shared: bool,
    /// Posted in shared memory (`CommRank::broadcast` of a communicator that posts; `direct`
    /// and `blocks` do not apply).
    posted: bool,
    /// Single copy into a buffer the other PU holds: before each repetition (untimed), rank
    /// 0 copies rank 1's buffer by single copy.
    held: bool,
    /// A post on the pair's first PU among this many ranks (2 or 3) with slots of
    /// `SHARED_READ` bytes (0: not such a case).
    read_ranks: usize,
    /// Rank 1's buffers, used in turn (1 but in the footprint cases).
    rotate: usize,
    /// A held case whose root does not write fresh data: its buffer holds what it copied
    /// back from rank 1 (untimed), by streaming stores where the runtime streams, so the
    /// timed reader copies from wherever those stores left the bytes.
    stale: bool,
    /// Repetitions per slice at most.
    max_reps: u64,
}

const fn case(bytes: usize, direct: bool, blocks: Blocks, shared: bool) -> Case {
    Case {
        bytes,
        direct,
        blocks,
        shared,
        posted: false,
        held: false,
        read_ranks: 0,
        rotate: 1,
        stale: false,
        max_reps: 4096,
    }
}

const fn held(bytes: usize) -> Case {
    Case {
        held: true,
        ..case(bytes, true, Blocks::One, false)
    }
}

const fn posted(bytes: usize, shared: bool) -> Case {
    Case {
        bytes,
        direct: false,
        blocks: Blocks::One,
        shared,
        posted: true,
        held: false,
        read_ranks: 0,
        rotate: 1,
        stale: false,
        max_reps: 4096,
    }
}

/// A posted broadcast of `POSTED_CURVE[i]` bytes between the pair.
const fn curve(i: usize) -> Case {
    Case {
        max_reps: CURVE_REPS,
        ..posted(POSTED_CURVE[i], false)
    }
}

/// A held single copy (see [`held`]) whose root copied its payload back from rank 1 just
/// before, untimed, and wrote nothing after: the reader copies from a buffer its owner's own
/// single copy last wrote.
const fn from_copy(bytes: usize) -> Case {
    Case {
        stale: true,
        ..held(bytes)
    }
}

/// A single copy of `bytes` bytes into rank 1's `buffers` buffers in turn.
const fn rotating(bytes: usize, buffers: usize) -> Case {
    Case {
        rotate: buffers,
        ..case(bytes, true, Blocks::One, false)
    }
}

/// A posted broadcast among `ranks` ranks of the pair's first PU, in slots of `SHARED_READ`
/// bytes.
const fn posted_read(bytes: usize, ranks: usize) -> Case {
    Case {
        read_ranks: ranks,
        ..posted(bytes, true)
    }
}

/// Measurements per slice: one line, burst, two long streams, three single copies of one
/// block, `DIRECT[1]` bytes by single copy in `MANY_BLOCKS` blocks, one line between two
/// ranks of one PU, `HUGE` bytes by single copy, the burst in 2 blocks, two lines in 1 and in
/// 2 blocks, posted broadcasts of one line and of `POSTED_FULL` bytes, and posted broadcasts
/// between two ranks of one PU of one line and of `SHARED_FULL` bytes, posted between the
/// pair in a slot of `SHARED_FULL` bytes, single copies of `DIRECT[0]` and `DIRECT[1]` bytes
/// between two ranks of one PU, a posted broadcast of two lines, a single copy of `HELD[3]`
/// bytes, single copies of the three largest `HELD` sizes into a buffer the other PU holds,
/// a single copy of `HELD[1]` bytes, single copies of the two smallest `HELD` sizes into
/// such a buffer, `DIRECT[0]` bytes by single copy in 2 blocks, a single copy of `DIRECT[2]`
/// bytes between two ranks of one PU, posted broadcasts of one line and of `SHARED_READ`
/// bytes in slots of `SHARED_READ` bytes between two and among three ranks of one PU, and
/// single copies of `HUGE` bytes into each count of `FOOTPRINT_READERS` buffers in turn, and
/// the three largest `HELD` sizes' held copies from a buffer the root copied into last, a
/// single copy of `HUGE` bytes between two ranks of one PU, and posted broadcasts of each
/// `POSTED_CURVE` size.
const CASES: [Case; 55] = [
    case(ONE_LINE, false, Blocks::One, false),
    case(BURST, false, Blocks::One, false),
    case(STREAM[0], false, Blocks::One, false),
    case(STREAM[1], false, Blocks::One, false),
    case(DIRECT[0], true, Blocks::One, false),
    case(DIRECT[1], true, Blocks::One, false),
    case(DIRECT[2], true, Blocks::One, false),
    case(DIRECT[1], true, Blocks::Many, false),
    case(ONE_LINE, false, Blocks::One, true),
    case(HUGE, true, Blocks::One, false),
    case(BURST, false, Blocks::Two, false),
    case(TWO_LINES, false, Blocks::One, false),
    case(TWO_LINES, false, Blocks::Two, false),
    posted(ONE_LINE, false),
    posted(POSTED_FULL, false),
    posted(ONE_LINE, true),
    posted(SHARED_FULL, true),
    posted(SHARED_FULL, false),
    case(DIRECT[0], true, Blocks::One, true),
    case(DIRECT[1], true, Blocks::One, true),
    posted(POSTED_TWO, false),
    case(HELD[3], true, Blocks::One, false),
    held(HELD[2]),
    held(HELD[3]),
    held(HELD[4]),
    case(HELD[1], true, Blocks::One, false),
    held(HELD[0]),
    held(HELD[1]),
    case(DIRECT[0], true, Blocks::Two, false),
    case(DIRECT[2], true, Blocks::One, true),
    posted_read(ONE_LINE, 2),
    posted_read(SHARED_READ, 2),
    posted_read(ONE_LINE, 3),
    posted_read(SHARED_READ, 3),
    rotating(HUGE, FOOTPRINT_READERS[0]),
    rotating(HUGE, FOOTPRINT_READERS[1]),
    rotating(HUGE, FOOTPRINT_READERS[2]),
    from_copy(HELD[2]),
    from_copy(HELD[3]),
    from_copy(HELD[4]),
    case(HUGE, true, Blocks::One, true),
    curve(0),
    curve(1),
    curve(2),
    curve(3),
    curve(4),
    curve(5),
    curve(6),
    curve(7),
    curve(8),
    curve(9),
    curve(10),
    curve(11),
    curve(12),
    curve(13),
];
const _: () = assert!(HELD[0] == DIRECT[0] && HELD[2] == DIRECT[1] && HELD[4] == DIRECT[2]);
const _: () = assert!(DIRECT[1] < HELD[3] && HELD[3] < DIRECT[2]);
/// The seed of the slices' orders.
const ORDER_SEED: u64 = 0x6865_7261_6c64;
/// Aim of one measurement's duration, ns.
const AIM_NS: f64 = 1_000_000.0;
/// Raw round trips before each case.
const RAW_TRIPS: u64 = 200;
/// Untimed round trips before them.
const RAW_WARM: u64 = 20;

/// Stream lines of a `bytes`-byte broadcast (header and payload in 56-byte lines).
fn lines(bytes: usize) -> f64 {
    (8 + bytes).div_ceil(56) as f64
}

/// The quantities of the profile's runtime calibration, in the order [`quantities`] computes
/// them: one line, burst line, line, direct, copy, large copy, per-block cost, one line on a
/// shared PU, huge copy, executor on the burst and on two lines, posted line, posted further
/// line, the same two on one PU, posted further line of a long slot, copy per byte on one PU,
/// posted two lines, the five held copies' extra time, the copy per byte from `HELD[3]` to
/// `DIRECT[2]` (the large one then ends at `HELD[3]`), the single copy's executor, the copy per
/// byte on one PU from `DIRECT[1]` to `DIRECT[2]`, a further reader's cost per further posted
/// line on one PU, the extra copy time per byte of `HUGE` bytes into each count of
/// `FOOTPRINT_READERS` buffers in turn, and the extra time of the three largest held copies
/// when the root's buffer was last written by its own (held) copy rather than by the root, and
/// the copy per byte on one PU from `DIRECT[2]` to `HUGE`, the copy per byte from `DIRECT[0]`
/// to `HELD[1]` (16 KiB, a plain single copy of one block), a stream's second line (two
/// lines in one block less one line), and the posted calls of the `POSTED_CURVE` sizes.
const QUANTITIES: usize = 50;

/// The cases (indices into [`CASES`]) each quantity of [`quantities`] is computed from.
/// A slice's value of a quantity is kept only where its cases between the pair's two PUs all
/// ran in one latency mode of the raw hop (a difference of a case timed in the host's slow mode
/// and one timed in its fast mode is neither mode's); cases on one PU are not filtered (the hop
/// between the PUs does not name their mode). The test
/// `quantities_depend_on_exactly_their_cases` checks this table against [`quantities`].
const QUANTITY_CASES: [&[usize]; QUANTITIES] = [
    &[0],
    &[1, 0],
    &[3, 2],
    &[4],
    &[5, 4],
    &[21, 5],
    &[7, 5, 28, 4],
    &[8],
    &[9, 6],
    &[10, 1],
    &[12, 11],
    &[13],
    &[14, 13],
    &[15],
    &[16, 15],
    &[17, 14],
    &[19, 18],
    &[20],
    &[26, 4],
    &[27, 25],
    &[22, 5],
    &[23, 21],
    &[24, 6],
    &[6, 21],
    &[28, 4, 7, 5],
    &[29, 19],
    &[33, 31, 32, 30],
    &[34, 9],
    &[35, 9],
    &[36, 9],
    &[37, 22],
    &[38, 23],
    &[39, 24],
    &[40, 29],
    &[25, 4],
    &[11, 0],
    &[41],
    &[42],
    &[43],
    &[44],
    &[45],
    &[46],
    &[47],
    &[48],
    &[49],
    &[50],
    &[51],
    &[52],
    &[53],
    &[54],
];

/// The quantities (see [`QUANTITIES`]) from one slice's median times of [`CASES`], ns.
fn quantities(t: &[f64; CASES.len()]) -> [f64; QUANTITIES] {
    let burst = (t[1] - t[0]) / (lines(BURST) - 1.0);
    let line = (t[3] - t[2]) / (lines(STREAM[1]) - lines(STREAM[0]));
    let copy = (t[5] - t[4]) / (DIRECT[1] - DIRECT[0]) as f64;
    let large = (t[21] - t[5]) / (HELD[3] - DIRECT[1]) as f64;
    let upper = (t[6] - t[21]) / (DIRECT[2] - HELD[3]) as f64;
    // Two blocks and sixteen run the executor, one block of one chunk does not: 16 blocks
    // over 1 (at `DIRECT[1]` bytes) is the executor and 15 blocks, 2 over 1 (at
    // `DIRECT[0]` bytes, where a copy's spread is a tenth of the larger one's) the
    // executor and one block.
    let (many, two) = (t[7] - t[5], t[28] - t[4]);
    let block = (many - two) / f64::from(MANY_BLOCKS - 2);
    let direct_exec = two - block;
    let huge = (t[9] - t[6]) / (HUGE - DIRECT[2]) as f64;
    let exec = t[10] - t[1];
    let exec_short = t[12] - t[11];
    let posted_lines = crate::runtime::posted_lines(POSTED_FULL).expect("a slot's size");
    let posted_line = (t[14] - t[13]) / (posted_lines - 1) as f64;
    let shared_lines = crate::runtime::shared_posted_lines(SHARED_FULL).expect("a slot");
    let shared_line = (t[16] - t[15]) / (shared_lines - 1) as f64;
    let long_line = (t[17] - t[14]) / (shared_lines - posted_lines) as f64;
    let shared_copy = (t[19] - t[18]) / (DIRECT[1] - DIRECT[0]) as f64;
    let shared_copy_large = (t[29] - t[19]) / (DIRECT[2] - DIRECT[1]) as f64;
    // A third rank of the PU adds its handoff and its read of the slot; the handoff cancels
    // between the long and the one-line post.
    let read_lines = crate::runtime::shared_posted_lines(SHARED_READ).expect("a slot");
    let read_line = ((t[33] - t[31]) - (t[32] - t[30])) / (read_lines - 1) as f64;
    let fixed = [
        t[0],
        burst,
        line,
        t[4],
        copy,
        large,
        block,
        t[8],
        huge,
        exec,
        exec_short,
        t[13],
        posted_line,
        t[15],
        shared_line,
        long_line,
        shared_copy,
        t[20],
        t[26] - t[4],
        t[27] - t[25],
        t[22] - t[5],
        t[23] - t[21],
        t[24] - t[6],
        upper,
        direct_exec,
        shared_copy_large,
        read_line,
        (t[34] - t[9]) / HUGE as f64,
        (t[35] - t[9]) / HUGE as f64,
        (t[36] - t[9]) / HUGE as f64,
        t[37] - t[22],
        t[38] - t[23],
        t[39] - t[24],
        (t[40] - t[29]) / (HUGE - DIRECT[2]) as f64,
        (t[25] - t[4]) / (HELD[1] - DIRECT[0]) as f64,
        t[11] - t[0],
    ];
    // The posted calls of the `POSTED_CURVE` sizes, as measured.
    std::array::from_fn(|q| {
        q.checked_sub(fixed.len())
            .map_or_else(|| fixed[q], |i| t[CURVE_CASE + i])
    })
}

/// One recorded slice of the probe.
struct Slice {
    /// The raw hop just before each case, ns (in [`CASES`] order).
    raw: [f64; CASES.len()],
    /// The median stamp load timed right after each raw hop, ns ([`STAMP_LOADS`]).
    loads: [f64; CASES.len()],
    /// Its quantities ([`quantities`]).
    quantities: [f64; QUANTITIES],
    /// Its duration, s (the weight of its values).
    weight: f64,
}

/// The runtime probe of one pair of PUs.
pub(crate) struct RuntimeProbe {
    team: Team,
    /// Two workers pinned to the pair's first PU (ranks that share a PU).
    shared: Team,
    /// Three workers pinned to the pair's first PU.
    three: Team,
    stream: Comm,
    direct: Comm,
    /// Posts every size up to a slot's.
    posted: Comm,
    /// Posts every size up to `SHARED_FULL` (its ranks share a CPU by its options: on the
    /// shared team, or between the pair for the long slot).
    shared_posted: Comm,
    /// Posts every size up to `SHARED_READ` between two ranks of one PU (on the shared team).
    shared_posted_read: Comm,
    /// The same among three ranks (on the `three` team).
    shared_posted_three: Comm,
    chunk: usize,
    /// The 2-rank broadcast from rank 0, in one block.
    program: Program,
    /// The same in 2 blocks.
    two: Program,
    /// The same in `MANY_BLOCKS` blocks.
    many: Program,
    /// The 2-rank broadcast from rank 1, in one block (the held cases' untimed copy back).
    back: Program,
    /// The recorded slices.
    samples: Vec<Slice>,
    /// Repetitions per measurement (in `CASES` order), adapted per slice.
    reps: [u64; CASES.len()],
    /// Whether the warm-up slice (whose repetitions were a guess) is behind.
    warm: bool,
    /// The clock's step ([`super::clock_resolution`]): each case's single broadcasts are
    /// summarized by their median spread over it.
    clock_step: f64,
    /// The slices' orders: each slice measures the cases in a random order, as `herald
    /// fidelity` measures its cases, so that no case always runs after the same neighbour.
    /// Ten calibrations each way, each followed by `herald fidelity` at 2 ranks: its picks
    /// from 8 B to 256 KiB measured within 10 % of their prediction in 43 of 60 (run, size)
    /// entries after calibrations in one fixed order, 55 of 60 in a random order (1 and 4 MiB:
    /// 10 and 8 of 20; docs/fidelity.md, "Forty-eighth session"). Seeded: a run's orders
    /// repeat.
    order: fastrand::Rng,
}

impl RuntimeProbe {
    /// A probe on the PUs of OS indices `a` and `b`, reading a clock of step `clock_step` ns.
    pub(crate) fn new(a: usize, b: usize, clock_step: f64) -> Result<RuntimeProbe, CalibrateError> {
        let team = Team::with_cores(vec![a, b])?;
        let shared = Team::with_cores(vec![a, a])?;
        let three = Team::with_cores(vec![a, a, a])?;
        let stream = Comm::with_options(
            2,
            CommOptions {
                direct_min_bytes: usize::MAX,
                ..CommOptions::default()
            },
        )
        .map_err(probe)?;
        let direct_options = CommOptions {
            direct_min_bytes: 1,
            ..CommOptions::default()
        };
        let chunk = direct_options.direct_chunk_bytes;
        let direct = Comm::with_options(2, direct_options).map_err(probe)?;
        let posted = Comm::with_options(
            2,
            CommOptions {
                direct_min_bytes: usize::MAX,
                posted_broadcast: true,
                ..CommOptions::default()
            },
        )
        .map_err(probe)?;
        let shared_options = |limit: usize| CommOptions {
            cpus: Some(1),
            posted_broadcast: true,
            shared_posted_bytes: Some(0..=limit),
            ..CommOptions::default()
        };
        let shared_posted = Comm::with_options(2, shared_options(SHARED_FULL)).map_err(probe)?;
        let shared_posted_read =
            Comm::with_options(2, shared_options(SHARED_READ)).map_err(probe)?;
        let shared_posted_three =
            Comm::with_options(3, shared_options(SHARED_READ)).map_err(probe)?;
        let model = Model::from(Postal::new(Ratio::ONE).map_err(probe)?);
        let schedule =
            generate(&Request::broadcast(Algorithm::Binomial, 2, 1, 0), &model).map_err(probe)?;
        let program = Program::compile(&schedule).map_err(probe)?;
        let in_blocks = |blocks: u32| {
            let s = generate(
                &Request::broadcast(Algorithm::Binomial, 2, blocks, 0),
                &model,
            )
            .map_err(probe)?;
            Program::compile(&s).map_err(probe)
        };
        let (two, many) = (in_blocks(2)?, in_blocks(MANY_BLOCKS)?);
        let back =
            generate(&Request::broadcast(Algorithm::Binomial, 2, 1, 1), &model).map_err(probe)?;
        let back = Program::compile(&back).map_err(probe)?;
        Ok(RuntimeProbe {
            team,
            shared,
            three,
            stream,
            direct,
            posted,
            shared_posted,
            shared_posted_read,
            shared_posted_three,
            chunk,
            program,
            two,
            many,
            back,
            samples: Vec::new(),
            reps: [
                64, 16, 4, 2, 8, 4, 2, 4, 16, 2, 16, 32, 32, 64, 32, 16, 16, 16, 8, 4, 64, 4, 4, 4,
                2, 8, 8, 8, 8, 2, 64, 16, 32, 8, 2, 2, 2, 4, 4, 2, 2, 64, 64, 64, 64, 64, 64, 64,
                64, 64, 64, 64, 64, 64, 64,
            ],
            warm: false,
            clock_step,
            order: fastrand::Rng::with_seed(ORDER_SEED),
        })
    }

    /// One slice: each size's broadcasts, each after a raw hop that names the latency mode it
    /// ran in; the first slice only warms up.
    pub(crate) fn step(&mut self, clock: f64) -> Result<(), CalibrateError> {
        let t0 = Instant::now();
        let mut raw = [0.0; CASES.len()];
        let mut loads = [0.0; CASES.len()];
        let mut t = [0.0; CASES.len()];
        // A random order per slice (see `order`): no case keeps one neighbour.
        let mut order: [usize; CASES.len()] = std::array::from_fn(|i| i);
        self.order.shuffle(&mut order);
        for i in order {
            let c = CASES[i];
            (raw[i], loads[i]) = self.raw_hop(clock)?;
            t[i] = self.broadcasts(c, self.reps[i], clock)?;
            self.reps[i] = ((AIM_NS / t[i].max(1.0)) as u64).clamp(2, c.max_reps);
        }
        let weight = t0.elapsed().as_secs_f64();
        if self.warm {
            self.samples.push(Slice {
                raw,
                loads,
                quantities: quantities(&t),
                weight,
            });
        }
        self.warm = true;
        Ok(())
    }

    /// The regimes the calibration has not yet measured every quantity in
    /// ([`incomplete_regimes_of`] of the recorded slices).
    pub(crate) fn incomplete_regimes(&self) -> Vec<String> {
        let raw: Vec<[f64; CASES.len()]> = self.samples.iter().map(|s| s.raw).collect();
        incomplete_regimes_of(&raw)
    }

    /// The host's latency regimes as the recorded slices' hops name them (the modes of the hops
    /// timed before each case, [`regimes_of`]); empty before any recorded slice.
    pub(super) fn regimes(&self) -> Vec<Mode> {
        let raw: Vec<[f64; CASES.len()]> = self.samples.iter().map(|s| s.raw).collect();
        regimes_of(&raw).0
    }

    /// The measured quantities as a profile entry; `None` before any recorded slice.
    pub(crate) fn calibration(&self) -> Option<RuntimeCalibration> {
        if self.samples.is_empty() {
            return None;
        }
        let raw: Vec<[f64; CASES.len()]> = self.samples.iter().map(|s| s.raw).collect();
        let (hops, regimes) = regimes_of(&raw);
        // Quantity `q` (in [`quantities`]' order).
        let dist = |q: usize| {
            let between = between_cases(q);
            let mut d = if between.is_empty() {
                let v: Vec<(f64, f64)> = self
                    .samples
                    .iter()
                    .map(|s| (s.quantities[q], s.weight))
                    .collect();
                distribution(&v)
            } else {
                let v: Vec<(f64, f64, Option<usize>)> = self
                    .samples
                    .iter()
                    .zip(&regimes)
                    .map(|(s, r)| {
                        let first = r[between[0]];
                        let one = between.iter().all(|&c| r[c] == first);
                        (s.quantities[q], s.weight, first.filter(|_| one))
                    })
                    .collect();
                regime_distribution(&v, &hops)
            };
            d.settled = d.samples >= 10;
            d
        };
        Some(RuntimeCalibration {
            one_line_ns: dist(0),
            burst_line_ns: dist(1),
            burst_lines: SLIP as u64,
            line_ns: dist(2),
            stream_bytes: STREAM.map(|b| b as u64),
            direct_ns: dist(3),
            copy_ns_per_byte: dist(4),
            copy_large_ns_per_byte: dist(5),
            direct_bytes: DIRECT.map(|b| b as u64),
            chunk_bytes: self.chunk as u64,
            direct_block_ns: Some(dist(6)),
            direct_exec_ns: Some(dist(24)),
            shared_one_line_ns: Some(dist(7)),
            copy_huge_ns_per_byte: Some(dist(8)),
            huge_bytes: Some(HUGE as u64),
            exec_ns: Some(dist(9)),
            exec_short_ns: Some(dist(10)),
            posted_ns: Some(dist(11)),
            posted_line_ns: Some(dist(12)),
            posted_bytes: Some(POSTED_FULL as u64),
            posted_two_ns: Some(dist(17)),
            posted_curve_ns: Some(
                (QUANTITIES - POSTED_CURVE.len()..QUANTITIES)
                    .map(dist)
                    .collect(),
            ),
            posted_curve_bytes: Some(POSTED_CURVE.iter().map(|&b| b as u64).collect()),
            posted_long_line_ns: Some(dist(15)),
            posted_long_bytes: Some(SHARED_FULL as u64),
            shared_posted_ns: Some(dist(13)),
            shared_posted_line_ns: Some(dist(14)),
            shared_posted_bytes: Some(SHARED_FULL as u64),
            shared_copy_ns_per_byte: Some(dist(16)),
            shared_copy_large_ns_per_byte: Some(dist(25)),
            shared_copy_huge_ns_per_byte: Some(dist(33)),
            held_extra_ns: Some((18..23).map(dist).collect()),
            held_bytes: Some(HELD.iter().map(|&b| b as u64).collect()),
            copy_upper_ns_per_byte: Some(dist(23)),
            upper_bytes: Some(HELD[3] as u64),
            copy_mid_ns_per_byte: Some(dist(34)),
            mid_bytes: Some(HELD[1] as u64),
            stream_two_ns: Some(dist(35)),
            shared_posted_read_line_ns: Some(dist(26)),
            shared_posted_read_bytes: Some(SHARED_READ as u64),
            footprint_extra_ns_per_byte: Some((27..30).map(dist).collect()),
            footprint_bytes: Some(
                FOOTPRINT_READERS
                    .iter()
                    .map(|&k| ((k + 1) * HUGE) as u64)
                    .collect(),
            ),
            forwarded_extra_ns: Some((30..33).map(dist).collect()),
            forwarded_bytes: Some(HELD[2..].iter().map(|&b| b as u64).collect()),
            stamp_load_ns: Some(stamp_load(&self.samples, &hops, &regimes)),
        })
    }

    /// One-way ns of a raw atomic ping-pong between the two workers, one line per direction
    /// (each written by one side, as the channel's and `herald fidelity`'s hop; on one shared
    /// line both sides poll and write the same line, and its time varied 33–130 ns within the
    /// host's fast mode, not telling its slow mode apart), timed after `RAW_WARM` round trips
    /// that let a parked worker wake; and right after it, in the same regime, the median of
    /// [`STAMP_LOADS`] stamp loads: rank 0 stamps a line of its own and then says so on its
    /// hop line, rank 1 times its load of the stamp as the run-time choice does
    /// ([`StampLine::timed_load`]) and answers, and rank 0 stamps again only then (so that
    /// every load is a miss).
    pub(super) fn raw_hop(&mut self, clock: f64) -> Result<(f64, f64), CalibrateError> {
        let lines = [
            CachePadded::new(AtomicU64::new(0)),
            CachePadded::new(AtomicU64::new(0)),
        ];
        let stamp = StampLine::new();
        let mut states = [(), ()];
        let out = self.team.run_with(&mut states, |ctx, ()| {
            let me = ctx.rank();
            let (mine, theirs) = (&lines[me], &lines[1 - me]);
            let wait = |v: u64| {
                let mut spins = 0u32;
                while theirs.load(Ordering::Acquire) != v {
                    spins = spins.wrapping_add(1);
                    if spins % 4096 == 0 {
                        std::thread::yield_now();
                    } else {
                        std::hint::spin_loop();
                    }
                }
            };
            let mut start = Instant::now();
            for i in 0..RAW_WARM + RAW_TRIPS {
                if i == RAW_WARM {
                    start = Instant::now();
                }
                if me == 0 {
                    mine.store(i + 1, Ordering::Release);
                }
                wait(i + 1);
                if me == 1 {
                    mine.store(i + 1, Ordering::Release);
                }
            }
            let hop = start.elapsed().as_nanos() as f64;
            let mut loads = Vec::with_capacity(STAMP_LOADS as usize);
            for j in 0..STAMP_LOADS {
                let v = RAW_WARM + RAW_TRIPS + 1 + j;
                if me == 0 {
                    stamp.stamp(v);
                    mine.store(v, Ordering::Release);
                    wait(v);
                } else {
                    wait(v);
                    let (seen, ns) = stamp.timed_load();
                    // The hop line's acquire orders the stamp before it: always `v`.
                    if seen == v {
                        loads.push(ns as f64);
                    }
                    mine.store(v, Ordering::Release);
                }
            }
            (hop, loads)
        });
        let hop = ((out[0].0 - clock) / (2 * RAW_TRIPS) as f64).max(0.0);
        let mut loads = out[1].1.clone();
        loads.sort_by(f64::total_cmp);
        let load = loads.get(loads.len() / 2).copied().ok_or_else(|| {
            CalibrateError::Probe("runtime probe: no stamp load read its stamp".into())
        })?;
        Ok((hop, load))
    }

    /// The median ns (spread over the clock's step) of `reps` barrier-then-one broadcasts of
    /// `what` from rank 0: every rank leaves two barriers, rank 0 reads the clock and
    /// broadcasts, each rank reads the clock when its call returns; one broadcast takes from
    /// rank 0's start to the latest return (what `herald fidelity` measures, and what the
    /// model's makespan is). Rank 0 writes fresh data
    /// before every repetition (outside the timed span, though where rank 0 returns before its
    /// readers it writes beside their reads: docs/fidelity.md, "Fiftieth session"), so the
    /// payload crosses from its core each time. The bytes are checked.
    fn broadcasts(&mut self, what: Case, reps: u64, clock: f64) -> Result<f64, CalibrateError> {
        let Case {
            bytes,
            direct,
            blocks,
            shared,
            posted,
            held,
            read_ranks,
            rotate,
            stale,
            max_reps: _,
        } = what;
        let comm = if read_ranks == 3 {
            &mut self.shared_posted_three
        } else if read_ranks == 2 {
            &mut self.shared_posted_read
        } else if posted && (shared || bytes > POSTED_FULL) {
            &mut self.shared_posted
        } else if posted {
            &mut self.posted
        } else if direct {
            &mut self.direct
        } else {
            &mut self.stream
        };
        let mut ranks = comm.ranks();
        let program = match blocks {
            Blocks::One => &self.program,
            Blocks::Two => &self.two,
            Blocks::Many => &self.many,
        };
        let back = &self.back;
        let fill = |buf: &mut [u8], i: u64| {
            let salt = (i * 13 + 5) as u8;
            for (j, b) in buf.iter_mut().enumerate() {
                *b = (j as u8).wrapping_mul(7) ^ salt;
            }
        };
        let team = if read_ranks == 3 {
            &mut self.three
        } else if shared {
            &mut self.shared
        } else {
            &mut self.team
        };
        let out = team.run_with(&mut ranks, |_, c| {
            let me = c.rank();
            // Rank 1 copies into its buffers in turn (one but in the footprint cases).
            let mut bufs = vec![vec![0; bytes]; if me == 1 { rotate } else { 1 }];
            if stale && me == 0 {
                // The payload of every repetition: copied back and forth from here on.
                fill(&mut bufs[0], 0);
            }
            // Untimed: takes the rings and warms the caches.
            let call = |c: &mut crate::runtime::CommRank<'_>, buf: &mut [u8]| {
                if posted {
                    c.broadcast(0, buf)
                } else {
                    c.broadcast_with(program, buf)
                }
            };
            c.barrier()?;
            for j in 0..rotate {
                let k = j % bufs.len();
                call(c, &mut bufs[k])?;
            }
            let (mut starts, mut ends) = (Vec::new(), Vec::with_capacity(reps as usize));
            for i in 0..reps {
                let k = i as usize % bufs.len();
                let buf = &mut bufs[k];
                if held {
                    // Untimed: rank 0 copies rank 1's buffer, so rank 0's PU holds its lines.
                    c.barrier()?;
                    c.broadcast_with(back, buf)?;
                }
                if me == 0 && !stale {
                    fill(buf, i);
                }
                c.barrier()?;
                // A second barrier: the first wakes a rank that parked while rank 0 wrote the
                // data, so every rank is running when the timed call starts (the model's
                // condition; a wake-up is not part of a broadcast's cost, docs/fidelity.md).
                c.barrier()?;
                if me == 0 {
                    starts.push(Instant::now());
                }
                call(c, buf)?;
                ends.push(Instant::now());
            }
            // Every rank is done with the last timed call before any checks its bytes (on one
            // PU, a rank that returned first would check while another still copies).
            c.barrier()?;
            let mut want = vec![0; bytes];
            fill(&mut want, if stale { 0 } else { reps - 1 });
            let last = &bufs[(reps - 1) as usize % bufs.len()];
            Ok::<_, crate::runtime::CollectiveError>((starts, ends, *last == want))
        });
        let mut records = Vec::with_capacity(3);
        for (rank, r) in out.into_iter().enumerate() {
            let r = r.map_err(probe)?;
            if !r.2 {
                return Err(CalibrateError::Probe(format!(
                    "runtime probe: rank {rank} holds wrong bytes after a {bytes}-byte broadcast"
                )));
            }
            records.push(r);
        }
        let times: Vec<f64> = (0..reps as usize)
            .map(|i| {
                let last = records.iter().map(|r| r.1[i]).max().expect("ranks");
                let ns = last.saturating_duration_since(records[0].0[i]).as_nanos() as f64;
                (ns - clock).max(0.0)
            })
            .collect();
        // Each time is one interval of a clock that may step coarsely (10 ns on the
        // development VM, a one-line broadcast's eighth): spread over the step, the median
        // follows the true time between steps instead of jumping a step at a time.
        Ok(crate::stats::smoothed_median(&times, self.clock_step))
    }
}

/// The raw hop's modes over slices whose hops before each case are `raw` (the host's latency
/// regimes), and each slice's regime of each case.
fn regimes_of(raw: &[[f64; CASES.len()]]) -> (Vec<Mode>, Vec<[Option<usize>; CASES.len()]>) {
    let hops = find_modes_of_share(
        &raw.iter()
            .flat_map(|s| s.iter().map(|&r| (r, 1.0)))
            .collect::<Vec<_>>(),
        RARE_REGIME_SHARE,
    );
    let regimes = raw
        .iter()
        .map(|s| s.map(|r| nearest_mode(&hops, r)))
        .collect();
    (hops, regimes)
}

/// The regimes not yet measured in every quantity, one line each, from the slices' hops before
/// each case (`raw`): a regime of the hop (a mode of at least [`RARE_REGIME_SHARE`] of the
/// hops) in which the one-line call ran in fewer than [`MIN_REGIME_SAMPLES`] slices (so
/// that the profile does not name it), or in at least that many while some quantity between
/// the pair's PUs had fewer slices with all its cases in it. Such a quantity gets no mode of
/// the regime, and a prediction in that regime would take another regime's value for it
/// (docs/fidelity.md, "Fifty-seventh session": a slow mode measured 5.2× its prediction at
/// 8 B after a calibration whose slow regime lacked the posted call; "Fifty-eighth session":
/// the host's fastest state 0.41–0.86× where the profile had not named it).
fn incomplete_regimes_of(raw: &[[f64; CASES.len()]]) -> Vec<String> {
    let (hops, regimes) = regimes_of(raw);
    let slices_in = |q: usize, r: usize| {
        let between = between_cases(q);
        regimes
            .iter()
            .filter(|c| !between.is_empty() && between.iter().all(|&k| c[k] == Some(r)))
            .count()
    };
    (0..hops.len())
        .filter_map(|r| {
            let calls = slices_in(0, r);
            if calls < MIN_REGIME_SAMPLES {
                return Some(format!(
                    "runtime regime of hop {:.0} ns: the one-line call in {calls} of \
                     {MIN_REGIME_SAMPLES} slices",
                    hops[r].center
                ));
            }
            let short: Vec<(usize, usize)> = (1..QUANTITIES)
                .filter(|&q| !between_cases(q).is_empty())
                .map(|q| (q, slices_in(q, r)))
                .filter(|&(_, n)| n < MIN_REGIME_SAMPLES)
                .collect();
            let least = short.iter().min_by_key(|p| p.1)?;
            Some(format!(
                "runtime regime of hop {:.0} ns: {} quantities in fewer than \
                 {MIN_REGIME_SAMPLES} slices (quantity {} in {})",
                hops[r].center,
                short.len(),
                least.0,
                least.1
            ))
        })
        .collect()
}

/// The cases of quantity `q` (in [`quantities`]' order) timed between the pair's PUs (those
/// on one PU do not name a regime of the hop between them).
fn between_cases(q: usize) -> Vec<usize> {
    QUANTITY_CASES[q]
        .iter()
        .copied()
        .filter(|&c| !CASES[c].shared)
        .collect()
}

/// The least share of the hops before the cases that makes a latency regime (a mode of the
/// hop, [`regimes_of`]), below the 5 % of other modes: this host's fastest and slow states came
/// in 2–4 % of a calibration's hops and 6–13 % of `herald fidelity`'s measurements minutes
/// later (docs/fidelity.md, "Fifty-eighth session"); at 5 % their slices counted in the fast
/// regime, and the calibration did not go on to measure them.
const RARE_REGIME_SHARE: f64 = 0.02;

/// A regime needs this many slices to be a mode of a quantity (fewer gave medians off by 2–10×
/// in the forty-second session's calibrations: three to five slices of the slow regime for a
/// held copy's extra time).
const MIN_REGIME_SAMPLES: usize = 8;

/// The distribution of a quantity measured between the pair's PUs from its slices' `(value,
/// weight, regime)`, the regime an index into `hops` (the raw hop's modes), `None` where the
/// quantity's cases ran in different regimes: such slices are left out, and the modes are the
/// regimes with at least [`MIN_REGIME_SAMPLES`] slices (each named by its hop,
/// [`Mode::regime_hop_ns`]; shares of those slices' weight), largest share first. Without such
/// a regime, the modes are those of the values ([`find_modes`](super::find_modes)). Where
/// every slice ran its cases in different regimes (a short calibration on a host that changes
/// state often), none is left out: the distribution is of every slice's value, with the
/// values' own modes. Leaving them all out gave a distribution of no sample, whose `NaN`s a
/// profile writes as `null` and cannot read back (seventy-eighth session).
pub(super) fn regime_distribution(
    values: &[(f64, f64, Option<usize>)],
    hops: &[Mode],
) -> Distribution {
    let kept: Vec<(f64, f64, usize)> = values
        .iter()
        .filter_map(|&(v, w, r)| Some((v, w, r?)))
        .collect();
    if kept.is_empty() {
        let every: Vec<(f64, f64)> = values.iter().map(|&(v, w, _)| (v, w)).collect();
        return distribution(&every);
    }
    let plain: Vec<(f64, f64)> = kept.iter().map(|&(v, w, _)| (v, w)).collect();
    let mut d = distribution(&plain);
    let groups: Vec<(usize, Vec<(f64, f64)>)> = (0..hops.len())
        .map(|r| {
            let g = kept
                .iter()
                .filter(|p| p.2 == r)
                .map(|&(v, w, _)| (v, w))
                .collect::<Vec<_>>();
            (r, g)
        })
        .filter(|(_, g)| g.len() >= MIN_REGIME_SAMPLES)
        .collect();
    let total: f64 = groups.iter().flat_map(|(_, g)| g.iter().map(|p| p.1)).sum();
    if groups.is_empty() || total <= 0.0 {
        return d;
    }
    let mut modes: Vec<Mode> = groups
        .iter()
        .map(|(r, g)| {
            let one = distribution(g);
            Mode {
                center: one.median,
                p10: one.p10,
                p90: one.p90,
                share: g.iter().map(|p| p.1).sum::<f64>() / total,
                samples: g.len(),
                regime_hop_ns: Some(hops[*r].center),
            }
        })
        .collect();
    modes.sort_by(|a, b| b.share.total_cmp(&a.share));
    d.modes = modes;
    d
}

/// Stamp loads timed after each raw hop (see [`RuntimeProbe::raw_hop`]).
const STAMP_LOADS: u64 = 16;

/// The stamp load's distribution over `samples` (each slice's median after each case's raw
/// hop), in the hops' regimes ([`regime_distribution`]): the run-time choice tells a regime
/// by it.
fn stamp_load(
    samples: &[Slice],
    hops: &[Mode],
    regimes: &[[Option<usize>; CASES.len()]],
) -> Distribution {
    let per_case = |s: &Slice| s.weight / CASES.len() as f64;
    let values: Vec<(f64, f64, Option<usize>)> = samples
        .iter()
        .zip(regimes)
        .flat_map(|(s, r)| {
            s.loads
                .iter()
                .zip(r)
                .map(move |(&l, &regime)| (l, per_case(s), regime))
        })
        .collect();
    let mut d = regime_distribution(&values, hops);
    d.settled = d.samples >= 10;
    d
}

fn probe(e: impl std::fmt::Display) -> CalibrateError {
    CalibrateError::Probe(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each quantity changes when, and only when, one of the cases [`QUANTITY_CASES`] lists for
    /// it changes: the table the mode filter reads agrees with the formulas.
    #[test]
    fn quantities_depend_on_exactly_their_cases() {
        let base: [f64; CASES.len()] = std::array::from_fn(|i| 1000.0 + 37.0 * i as f64);
        let before = quantities(&base);
        for case in 0..CASES.len() {
            let mut t = base;
            t[case] += 500.0;
            let after = quantities(&t);
            for q in 0..QUANTITIES {
                assert_eq!(
                    after[q] != before[q],
                    QUANTITY_CASES[q].contains(&case),
                    "quantity {q} and case {case}"
                );
            }
        }
    }

    fn hop(center: f64, share: f64) -> Mode {
        crate::model::fixtures::point_mode(center, share, None)
    }

    /// The stamp load is a distribution of every case's load in the regime of the hop timed
    /// just before it, whatever the slice's other cases ran in.
    #[test]
    fn stamp_loads_fall_in_the_regime_of_their_own_hop() {
        // 12 slices in the near regime (hop 50, loads 40 ns), 8 in the far one (hop 200,
        // loads 150), and 4 that change regime at case 20 (each case's load follows its hop).
        let slice = |near_until: usize| Slice {
            raw: std::array::from_fn(|c| if c < near_until { 50.0 } else { 200.0 }),
            loads: std::array::from_fn(|c| if c < near_until { 40.0 } else { 150.0 }),
            quantities: [0.0; QUANTITIES],
            weight: 1.0,
        };
        let mut samples: Vec<Slice> = (0..12).map(|_| slice(CASES.len())).collect();
        samples.extend((0..8).map(|_| slice(0)));
        samples.extend((0..4).map(|_| slice(20)));
        let raw: Vec<[f64; CASES.len()]> = samples.iter().map(|s| s.raw).collect();
        let (hops, regimes) = regimes_of(&raw);
        assert_eq!(hops.len(), 2, "{hops:?}");
        let d = stamp_load(&samples, &hops, &regimes);
        assert_eq!(d.samples, samples.len() * CASES.len());
        let mut modes: Vec<(f64, Option<f64>)> = d
            .modes
            .iter()
            .map(|m| (m.center, m.regime_hop_ns))
            .collect();
        modes.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert_eq!(modes.len(), 2, "{modes:?}");
        assert_eq!(modes[0].0, 40.0);
        assert_eq!(modes[1].0, 150.0);
        let near_hop = modes[0].1.unwrap();
        let far_hop = modes[1].1.unwrap();
        assert!(
            (near_hop - 50.0).abs() < 5.0 && (far_hop - 200.0).abs() < 20.0,
            "{modes:?}"
        );
        // Shares by weight: 12 + 4·20/55 slices' worth near.
        let near_share = (12.0 + 4.0 * 20.0 / CASES.len() as f64) / samples.len() as f64;
        let near = d.modes.iter().find(|m| m.center == 40.0).unwrap();
        assert!((near.share - near_share).abs() < 1e-9, "{}", near.share);
        assert_eq!(d.pick(crate::model::Pick::Slowest), 150.0);
        assert_eq!(d.pick(crate::model::Pick::Fastest), 40.0);
    }

    /// Slices whose cases ran in two regimes are left out; each regime with enough slices is a
    /// mode named by its hop, its share of the kept slices' weight; the slowest regime's value
    /// is what `Pick::Slowest` takes even where it is not the largest.
    #[test]
    fn a_quantity_s_modes_are_the_hop_s_regimes() {
        let hops = [hop(50.0, 0.7), hop(225.0, 0.2), hop(27.0, 0.1)];
        let mut v: Vec<(f64, f64, Option<usize>)> = Vec::new();
        v.extend((0..30).map(|i| (10.0 + f64::from(i % 3), 1.0, Some(0))));
        v.extend((0..10).map(|_| (4.0, 1.0, Some(1))));
        v.extend((0..MIN_REGIME_SAMPLES - 1).map(|_| (7.0, 1.0, Some(2))));
        v.extend((0..20).map(|_| (1000.0, 1.0, None)));
        let d = regime_distribution(&v, &hops);
        assert_eq!(
            d.samples,
            30 + 10 + MIN_REGIME_SAMPLES - 1,
            "mixed slices left out"
        );
        assert!(d.p90 < 1000.0);
        assert_eq!(d.modes.len(), 2, "the regime of too few slices is no mode");
        assert_eq!(d.modes[0].regime_hop_ns, Some(50.0));
        assert_eq!(d.modes[0].center, 11.0);
        assert_eq!(d.modes[0].share, 0.75);
        assert_eq!(
            (d.modes[1].center, d.modes[1].regime_hop_ns),
            (4.0, Some(225.0))
        );
        assert_eq!(d.pick(crate::model::Pick::Dominant), 11.0);
        assert_eq!(d.pick(crate::model::Pick::Slowest), 4.0);
        assert_eq!(d.pick(crate::model::Pick::Fastest), 11.0);
        // Without a regime of enough slices, the values' own modes.
        let plain: Vec<(f64, f64, Option<usize>)> =
            v.iter().map(|&(x, w, _)| (x, w, Some(0))).collect();
        let d = regime_distribution(&plain, &[]);
        assert!(d.modes.iter().all(|m| m.regime_hop_ns.is_none()));
        assert_eq!(
            d.modes,
            crate::calibrate::find_modes(&plain.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>())
        );
        let d = regime_distribution(&plain, &hops[..1]);
        assert_eq!(d.samples, plain.len());
        assert_eq!(d.modes.len(), 1);
        // Every slice across two regimes: every slice counts, with the values' own modes (a
        // distribution of no sample has no median, and a profile could not hold it).
        let mixed: Vec<(f64, f64, Option<usize>)> =
            v.iter().map(|&(x, w, _)| (x, w, None)).collect();
        let d = regime_distribution(&mixed, &hops);
        assert_eq!(d.samples, mixed.len());
        assert!(d.median.is_finite() && d.p10.is_finite() && d.p90.is_finite());
        assert!(d.modes.iter().all(|m| m.regime_hop_ns.is_none()));
        assert!(!d.modes.is_empty());
    }

    /// The regime of a hop is the nearest on a log scale.
    #[test]
    fn a_hop_s_regime_is_the_nearest() {
        let hops = [hop(50.0, 0.7), hop(225.0, 0.2), hop(27.0, 0.1)];
        assert_eq!(nearest_mode(&hops, 55.0), Some(0));
        assert_eq!(nearest_mode(&hops, 100.0), Some(0));
        assert_eq!(
            nearest_mode(&hops, 110.0),
            Some(1),
            "past the geometric mean, 106 ns"
        );
        assert_eq!(nearest_mode(&hops, 150.0), Some(1));
        assert_eq!(nearest_mode(&hops, 30.0), Some(2));
        assert_eq!(nearest_mode(&hops, 0.0), Some(2));
        assert_eq!(nearest_mode(&[], 50.0), None);
    }

    /// A regime the one-line call met in enough slices is incomplete until every quantity
    /// between the PUs has as many slices with all its cases in it; a regime too rare to name
    /// asks for nothing.
    #[test]
    fn a_named_regime_is_incomplete_until_every_quantity_has_it() {
        // Hops about 50 ns (fast) and 200 ns (slow), a little spread.
        let slice = |slow: &dyn Fn(usize) -> bool, i: usize| -> [f64; CASES.len()] {
            std::array::from_fn(|c| {
                let jitter = ((i * 7 + c * 3) % 11) as f64 * 0.1;
                if slow(c) {
                    200.0 + jitter
                } else {
                    50.0 + jitter
                }
            })
        };
        let mut raw: Vec<[f64; CASES.len()]> = (0..40).map(|i| slice(&|_| false, i)).collect();
        assert!(
            incomplete_regimes_of(&raw).is_empty(),
            "one regime, complete"
        );
        // A slow spell of a few cases, under 2 % of the hops: no regime, nothing asked.
        let few = |c: usize| c < 2;
        let mut rare = raw.clone();
        rare.extend((0..MIN_REGIME_SAMPLES).map(|i| slice(&few, i)));
        let hops = rare.len() * CASES.len();
        assert!(2 * MIN_REGIME_SAMPLES < hops / 50, "under 2 %");
        assert!(incomplete_regimes_of(&rare).is_empty(), "too rare a state");
        // Slow spells that end within a slice: the cases before the 28th slow, in fewer slices
        // than the profile names a regime by. A state of the hop all the same (over 2 % of the
        // hops): asked for, by the one-line call's count.
        let early = |c: usize| c < 28;
        raw.extend((0..MIN_REGIME_SAMPLES - 1).map(|i| slice(&early, i)));
        let left = incomplete_regimes_of(&raw);
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(
            left[0].contains("hop 200 ns: the one-line call in 7 of 8 slices"),
            "{left:?}"
        );
        // Named by the one-line call (case 0), but the later cases never ran slow: incomplete.
        raw.push(slice(&early, 99));
        let left = incomplete_regimes_of(&raw);
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(left[0].contains("hop 200 ns"), "{left:?}");
        // Whole slices in the slow regime complete it.
        raw.extend((0..MIN_REGIME_SAMPLES).map(|i| slice(&|_| true, i)));
        assert!(incomplete_regimes_of(&raw).is_empty(), "complete");
        // One case of a many-case quantity in the other regime each time: that quantity's
        // slices are mixed and do not count.
        let mut mixed = raw[..40].to_vec();
        mixed.extend((0..2 * MIN_REGIME_SAMPLES).map(|i| slice(&|c| c != 7, i)));
        let left = incomplete_regimes_of(&mixed);
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(left[0].contains("(quantity 6 in 0)"), "{left:?}");
    }

    /// Every case is some quantity's, and the table names no case twice for one quantity.
    #[test]
    fn every_case_is_used() {
        for case in 0..CASES.len() {
            assert!(
                QUANTITY_CASES.iter().any(|cases| cases.contains(&case)),
                "case {case}"
            );
        }
        for cases in QUANTITY_CASES {
            let mut sorted = cases.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), cases.len());
        }
    }
}
