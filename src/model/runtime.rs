//! A cost model of herald's own runtime, beside the papers' models (which stay exact and
//! untouched): what a broadcast costs when the executor runs it, not what a LogGP machine would
//! charge. The parameters are plain data, in integer picoseconds (femtoseconds per byte for the
//! copy bandwidth), built from a calibrated [`Profile`]; the evaluation of a schedule under them
//! is [`predict_runtime`](crate::sim::predict_runtime).
//!
//! What the model knows about the runtime (docs/fidelity.md names why each term is there):
//!
//! * **A call's fixed cost** (`call`): a collective call's header, program lookup and
//!   end-of-call mark, measured as the one-way time of a one-line broadcast minus the channel's
//!   one-way time and one line. A one-line broadcast, like any stream of one block of at most
//!   `burst_lines` lines, goes straight through the rings; a stream of several blocks or more
//!   lines runs the executor, whose set-up and per-poll passes cost each rank `exec` more
//!   (twelfth session: the `burst_lines`-line broadcast in 2 blocks less the same in 1; 2 ranks
//!   ping-ponging 48–512 B took 30–60 ns more per call in 2 blocks, which the model, with
//!   consecutive blocks on one edge as one message, priced the same as 1).
//! * **Line streams** (`line`): the executor forwards line by line; a message of `k` lines
//!   occupies its sender `k · line`, its first line arrives `hop` after it left, and a forwarding
//!   rank cannot send a line before it holds it. Consecutive blocks on one edge are therefore
//!   one long message (no per-block overhead), and pipelining happens at line granularity
//!   whatever the block count. `line` is the *sustained* per-line cost of a long stream (ring
//!   flow control included), measured through the runtime — not LogGP's `G`, which is fitted on
//!   bursts of 1–16 lines.
//! * **Single copy** ([`Transport::Direct`]): one descriptor line per chunk, and the receiver
//!   copies the chunk from its sender's buffer at its own bandwidth (`copy`), then forwards a
//!   descriptor of its copy; each block costs its receiver `block` more (calibrated as the
//!   difference between one payload in 16 blocks and in one, per extra block); the lender's
//!   call returns one hop after its last reader's copy (it waits for its readers); fixed cost
//!   `direct_call`. The copies of ranks that share a PU take turns on it. A copy whose source
//!   is in the reader's PU's cache (the lender runs there, or a rank of that PU already copied
//!   the same piece from the same lender) costs the one-PU rate where the profile measured it
//!   (twenty-third session; [`RuntimeCosts::shared_copy_ps`]), for payloads up to
//!   `copy_large_from` (where it was measured), and never more than the copy between PUs.
//!   A larger payload outgrows the PU's private caches, so a PU-mate's earlier copy no longer
//!   helps; but where the lender and the reader are the only ranks of their PU, as calibrated
//!   (no other rank's copies between the lender's writes and the read), the reader copies
//!   lines its own PU wrote, at the one-PU rate measured for large payloads
//!   ([`RuntimeCosts::shared_copy_large_ps`], forty-first session). With more ranks on the PU
//!   the model keeps the rate between PUs: at 16 ranks on 2 PUs, the same rate made trees that
//!   forward within a PU predicted 1.11–1.26 ms against a star's 1.47 at 4 MiB, and they
//!   measured 4.7–5.3 ms against 3.8 (docs/fidelity.md, forty-first session).
//!   A copy in a broadcast whose buffers (one of the payload per rank, `n · bytes`) outgrow
//!   the caches costs the calibrated extra per byte at that footprint
//!   ([`RuntimeLevel::footprint_ps`], fifty-second session): 4, 8 and 16 ranks of 4 MiB had
//!   measured 1.5–3.3× their prediction without it.
//! * **Posting** ([`Transport::Posted`], nineteenth session): the root writes one slot (a line
//!   with the call's header and 48 bytes, one more line per further 64 bytes, at most
//!   [`POSTED_MAX_BYTES`](crate::runtime::POSTED_MAX_BYTES)) and every other rank reads it.
//!   No tree and no call cost of its own: a post of `bytes` costs `post + (lines − 1) · post_line`,
//!   the whole 2-rank call as measured through
//!   [`CommRank::broadcast`](crate::CommRank::broadcast) at one line and at a full slot, and the
//!   makespan is the slowest reader's (readers at the level they meet the root at; readers of
//!   one post are not charged for one another, which 2 PUs cannot measure). It applies to a
//!   flat tree in one block; a profile written before herald measured it does not model it.
//!   A slot longer than the calibrated full one (ranks sharing CPUs post up to
//!   [`SHARED_POSTED_LIMIT`](crate::runtime::SHARED_POSTED_LIMIT)) costs `post_long_line`
//!   per line beyond it (calibrated at 8 KiB between the pair). Since the twenty-third session
//!   the two-line call is calibrated too (`post_two`): the reader fetches the second line only
//!   after it saw the first, so it costs more than the further lines, whose fetches overlap;
//!   two lines then cost `post_two`, and the third to the last line of a full slot share the
//!   rest of the full slot's cost. Since the fifty-seventh session every length from three
//!   lines to one short of a full slot is calibrated as well (`post_curve`; the cost rose in
//!   steps of 40–45 ns at six, eleven and fifteen lines on the development VM): each measured
//!   length costs its call, and a length between two measured ones the straight line between
//!   them.
//! * **Posting where ranks share PUs** (twenty-second session): the call `T` of a post
//!   between two ranks pinned to one PU is calibrated at one line and at 8 KiB
//!   ([`RuntimeCosts::shared_posted_ps`]); the simulation of the PUs' turns (below) charges
//!   the root's post its share of `T − S` and a reader on the root's PU the rest after its
//!   handoff `S` ([`RuntimeCosts::shared_posted_split_ps`]: halves, but since the fiftieth
//!   session each further line's read costs what a third rank on one PU was measured to add,
//!   the post the rest), and a reader on another PU what a post between their level's PUs costs
//!   beyond the root's share and the hop; a reader whose PU-mate already read the slot reads
//!   it from their PU's cache, at the on-PU read's cost (or the across cost, if less). The
//!   root returns once it posted. A profile without the one-PU measurement does not model
//!   posting there.
//! * **Separate messages** from one sender are `gap = max(g, o)` apart (the channel's LogP gap).
//! * **Oversubscription** (tenth session; [`predict_runtime`](crate::sim::predict_runtime)
//!   simulates it): with more ranks than PUs, the ranks of a PU take turns on it in a fixed
//!   cycle. A rank that runs does all it can — its next sends while it holds their blocks, the
//!   lines or copies that reached it (a line read after it arrived costs its reader what it
//!   cost its writer, the first excepted), its return once it holds everything, made every send
//!   and (single copy) saw its readers' copies done — and then yields. A rank that gets the PU
//!   with nothing to do yields again after a bare switch `b` ([`Profile::switch_ns`]); one with
//!   something to do starts it after the runtime's handoff `S` (a one-line broadcast between
//!   two ranks pinned to one PU, less the call's fixed cost and its line; `b` where the profile
//!   lacks it). A sender's separate messages are `gap` apart, as above. A stream writes one
//!   ring's worth ahead of its reader's start on the previous one. A rank alone on its PU never
//!   yields (the runtime spins there). A single copy's lender of one descriptor (one block of
//!   one chunk), none of whose PU's other ranks forwards, spins for up to a spin phase
//!   ([`RuntimeCosts::spin_ps`]) on each of its turns once only readers on other PUs are left,
//!   and returns when the last is done if that falls in the spin (fifty-fourth session; before,
//!   it yielded at once and saw its last reader a round of its PU's other ranks later:
//!   docs/runtime.md, "A lender spins for readers on the other CPU"). Where a non-root PU's
//!   cycle stands when the call starts is unknown: the prediction is the mean over starting
//!   ranks and 16 phases of a switch (thirty-fifth session; 2 before, whose steps ranked block
//!   counts: docs/fidelity.md, run AF). Nor is how fast a PU's turns go in a given call: since the forty-third session the
//!   non-root PUs' turns (`b` and `S`) are scaled by each of four factors spread over the
//!   ratio of two PUs' speeds, each varying as the bare switch does
//!   ([`RuntimeCosts::turn_scales`]), with 4 phases each. A rank
//!   whose return waits for another PU either sees it done at its turn or yields a whole cycle
//!   more, and with the turns' speed fixed that race was decided by a few hundred ns: at 16
//!   ranks on 2 PUs a star in 4 blocks was predicted 10 % faster than in one only because its
//!   root's longer sending moved the root's turn past the other PU's last copy (it measured
//!   5–9 % slower), and in 16 blocks at 256 KiB 4 % faster (it measured 10–40 % slower;
//!   docs/fidelity.md, "Forty-third session"). Before the simulation, each message waited an
//!   average `(k − 1)/2` turns: a flat tree of 16 ranks on 2 PUs was predicted at 3× its time,
//!   and deeper trees no dearer than flat ones (docs/fidelity.md, run R).
//!
//! Where a level has no runtime measurement of its own, its runtime parameters are those of the
//! level the hierarchical model assumed its LogGP parameters from, times the same factor
//! ([`LevelSource::Assumed`]); a profile without runtime measurements at all (written before
//! herald made them) falls back to LogGP: `line = 56·G`, no fixed call cost, no single copy.

use super::{
    Assumptions, Hier, Hierarchy, LevelCost, LevelProfile, LevelSource, LogP, Pick, Profile,
    ProfileError, RuntimeCalibration,
};
use crate::time::Ratio;

/// How a broadcast's payload moves between ranks in herald's runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transport {
    /// Line by line through the rings (header and payload in 56-byte lines).
    Stream,
    /// Single copy: descriptors through the rings, each receiver copies from its sender.
    Direct,
    /// Posted in shared memory: the root writes a slot of its own (one line with the call's
    /// header and up to 48 payload bytes, one more per further 64), every other rank reads it
    /// ([`CommOptions::posted_broadcast`](crate::CommOptions::posted_broadcast)). No tree: it
    /// moves only a flat tree's single block, at most
    /// [`POSTED_MAX_BYTES`](crate::runtime::POSTED_MAX_BYTES), between ranks with PUs of
    /// their own.
    Posted,
}

impl Transport {
    /// `stream`, `direct` or `posted`.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Stream => "stream",
            Transport::Direct => "direct",
            Transport::Posted => "posted",
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a level's runtime parameters came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeSource {
    /// Measured through the runtime on this level's pair.
    Measured,
    /// The runtime parameters of level `from` times `factor` (as the LogGP ones were).
    Assumed {
        /// The measured level.
        from: String,
        /// The multiplier.
        factor: Ratio,
    },
    /// No runtime measurement: `line = 56·G` from the LogGP parameters, no single copy.
    LogGp,
}

/// The runtime's costs between two ranks that meet at one level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeLevel {
    /// One-way time of a one-line message through a channel (`L + 2o`), ps.
    pub hop_ps: u64,
    /// Sender time between the starts of two separate messages (`max(g, o)`), ps.
    pub gap_ps: u64,
    /// Sender time per line of the first `burst_lines` lines of a message, ps.
    pub burst_line_ps: u64,
    /// Lines a receiver reads ahead (a message this short is read only once complete).
    pub burst_lines: u64,
    /// Sender time of a message's second line where it was measured apart, ps: then the
    /// lines from the third to `burst_lines` share what is left of `burst_lines` lines at
    /// `burst_line_ps` ([`stream_ps`](Self::stream_ps)); `None`: every line of the burst at
    /// `burst_line_ps`.
    pub burst_two_ps: Option<u64>,
    /// Sustained sender time per line of a long stream, ps.
    pub line_ps: u64,
    /// Single-copy time per payload byte, fs, for messages up to `copy_mid_from` bytes (up to
    /// `copy_large_from` where that is never); `None`: single copy not modelled here.
    pub copy_fs_per_byte: Option<u64>,
    /// Single-copy time per byte beyond `copy_mid_from` bytes of a message, up to
    /// `copy_large_from`, fs.
    pub copy_mid_fs_per_byte: u64,
    /// Bytes of a message from which `copy_mid_fs_per_byte` applies (`u64::MAX`: never; at
    /// most `copy_large_from` otherwise).
    pub copy_mid_from: u64,
    /// Single-copy time per byte beyond `copy_large_from` bytes of a message, fs.
    pub copy_large_fs_per_byte: u64,
    /// Bytes of a message from which `copy_large_fs_per_byte` applies.
    pub copy_large_from: u64,
    /// Single-copy time per byte beyond `copy_upper_from` bytes of a message, fs.
    pub copy_upper_fs_per_byte: u64,
    /// Bytes of a message from which `copy_upper_fs_per_byte` applies (`u64::MAX`: never; at
    /// most `copy_huge_from` otherwise).
    pub copy_upper_from: u64,
    /// Single-copy time per byte beyond `copy_huge_from` bytes of a message, fs.
    pub copy_huge_fs_per_byte: u64,
    /// Bytes of a message from which `copy_huge_fs_per_byte` applies (`u64::MAX`: never).
    pub copy_huge_from: u64,
    /// Single copy: a receiver's extra time per block, ps (0 where not measured).
    pub block_ps: u64,
    /// A posted broadcast of one line between two ranks meeting here, the whole call (the
    /// root's post to the reader's return), ps; `None`: posting not modelled here.
    pub post_ps: Option<u64>,
    /// A posted broadcast's cost per further line, ps, up to `post_full_lines` lines (the
    /// mean over a full slot's further lines).
    pub post_line_ps: u64,
    /// A posted broadcast of two lines, the whole call, ps; `None`: not measured (the second
    /// line then costs `post_line_ps`).
    pub post_two_ps: Option<u64>,
    /// Posted broadcasts of further lengths short of a full slot, the whole call: `(lines,
    /// ps)`, ascending, each past two lines; empty where not measured (the lengths between
    /// the measured ones are interpolated, [`posted_lines_ps`](Self::posted_lines_ps)).
    pub post_curve_ps: Vec<(u64, u64)>,
    /// The slot length in lines behind `post_line_ps` (the calibrated full slot).
    pub post_full_lines: u64,
    /// A posted broadcast's cost per line beyond `post_full_lines`, ps (slots longer than a
    /// full one exist where ranks share CPUs; `post_line_ps` where not measured).
    pub post_long_line_ps: u64,
    /// What a single copy costs its reader beyond [`copy_ps`](Self::copy_ps) when the
    /// reader's buffer is held by another PU's cache (the reader forwards what it copies to a
    /// rank there, which read it in the call before): `(payload bytes, extra ps)` at the
    /// calibrated sizes, ascending; empty where not measured ([`held_ps`](Self::held_ps)).
    pub held_extra_ps: Vec<(u64, u64)>,
    /// What a single copy costs per byte beyond [`copy_ps`](Self::copy_ps) when a broadcast's
    /// buffers outgrow the caches: `(footprint bytes, extra fs per byte)` at the calibrated
    /// footprints, ascending, from `(footprint_base, 0)` on; empty where not measured
    /// ([`footprint_ps`](Self::footprint_ps)).
    pub footprint_extra_fs_per_byte: Vec<(u64, u64)>,
    /// The footprint of the calibrated copies (`2 · huge_bytes`: the root's buffer and the
    /// reader's), bytes; at most this, a copy costs no extra.
    pub footprint_base: u64,
    /// What a single copy costs its reader beyond [`copy_ps`](Self::copy_ps) when it copies
    /// from a forwarder's buffer that another PU holds (the forwarder's own copy into it
    /// streamed, inside the runtime's streaming window): `(payload bytes, extra ps)` at the
    /// calibrated sizes, ascending; empty where not measured
    /// ([`forwarded_ps`](Self::forwarded_ps)).
    pub forwarded_extra_ps: Vec<(u64, u64)>,
    /// A load of a line the other PU wrote last, timed between two clock reads as the run-time
    /// choice times it (the clock reads included; times the level's factor where its costs are
    /// assumed from another level's), ps; `None` where not measured. Not a cost of
    /// any operation the model prices: the choice compares its own loads with it.
    pub stamp_load_ps: Option<u64>,
    /// Where the values came from.
    pub source: RuntimeSource,
}

impl RuntimeLevel {
    /// Sender time of a message of `lines` lines, ps: the first `burst_lines` at
    /// `burst_line_ps` (with `burst_two_ps`, the first at `burst_line_ps`, the second at
    /// `burst_two_ps` and the others up to `burst_lines` sharing the rest of the burst's cost
    /// evenly, so a full burst costs the same either way), the rest at `line_ps`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use herald::{*, model::{RuntimeCosts, Pick}};
    /// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
    /// # let profile = Profile::from_json_forced(&text)?;
    /// # let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
    /// let costs = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant)?;
    /// let mut l = costs.between(0, 1).unwrap().clone();
    /// (l.burst_line_ps, l.burst_lines, l.line_ps) = (20_000, 16, 25_000);
    /// l.burst_two_ps = None;
    /// assert_eq!(l.stream_ps(2), 40_000);
    /// l.burst_two_ps = Some(48_000);
    /// assert_eq!(l.stream_ps(2), 68_000);
    /// assert_eq!(l.stream_ps(16), 16 * 20_000); // the burst's whole cost, as without it
    /// assert_eq!(l.stream_ps(17), 16 * 20_000 + 25_000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stream_ps(&self, lines: u64) -> u64 {
        let burst = lines.min(self.burst_lines);
        let short = match self.burst_two_ps {
            Some(two) if burst >= 2 && self.burst_lines > 2 => {
                let after_first = (self.burst_lines - 1) * self.burst_line_ps;
                let two = two.min(after_first);
                self.burst_line_ps
                    + two
                    + (after_first - two) * (burst - 2) / (self.burst_lines - 2)
            }
            _ => burst * self.burst_line_ps,
        };
        short + (lines - burst) * self.line_ps
    }

    /// What a single copy of a `bytes`-byte payload costs its reader beyond
    /// [`copy_ps`](Self::copy_ps) when another PU holds the reader's buffer, ps; 0 where not
    /// measured. Each communicator copies such buffers the way its own timings find cheaper,
    /// starting streamed (non-temporal stores) inside a window of sizes (32 KiB – 2 MiB) and
    /// plainly outside it: outside the window plainly in the host's fast latency mode and
    /// streamed in its slow one, inside it streamed in both and plainly where the two CPUs
    /// share a cache. So every point prices what the runtime did in the calibration's mode.
    /// The calibrated points of each kind price their own sizes:
    /// - inside the window: linear from nothing at 0 bytes through the points inside it;
    /// - below it: linear from nothing through the points below it, and beyond the last such
    ///   point on the slope of its last segment;
    /// - above it: the value at the largest calibrated size (the other PU's cache holds only
    ///   so much of the buffer; no point above the window is measured).
    ///
    /// ```
    /// # use herald::{*, model::{RuntimeCosts, Pick}};
    /// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
    /// let profile = Profile::from_json_forced(&text)?;
    /// let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
    /// let costs = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant)?;
    /// let mut level = costs.levels().iter().flatten().next().unwrap().clone();
    /// // This profile predates the measurement.
    /// assert_eq!(level.held_ps(1 << 20), 0);
    /// // Two plain points, two streamed ones.
    /// level.held_extra_ps = vec![(4096, 1000), (16384, 4000), (65536, 800), (1 << 20, 14000)];
    /// assert_eq!(level.held_ps(2048), 500);
    /// assert_eq!(level.held_ps(10240), 2500);
    /// assert_eq!(level.held_ps(20480), 5000); // past the last plain point, on its slope
    /// assert_eq!(level.held_ps(32768), 400); // inside the window: from 0 to the 64 KiB point
    /// assert_eq!(level.held_ps(4 << 20), 14000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn held_ps(&self, bytes: u64) -> u64 {
        let window = crate::runtime::STREAMING;
        let inside = |b: u64| usize::try_from(b).is_ok_and(|b| window.contains(&b));
        let above = usize::try_from(bytes).map_or(true, |b| b > *window.end());
        if above {
            return self.held_extra_ps.last().map_or(0, |&(_, e)| e);
        }
        let mut prev = (0u64, 0i128);
        let mut slope = None;
        for &(b, e) in self
            .held_extra_ps
            .iter()
            .filter(|p| inside(p.0) == inside(bytes))
        {
            let e = i128::from(e);
            let span = i128::from(b - prev.0).max(1);
            if bytes <= b {
                let into = i128::from(bytes - prev.0);
                return (prev.1 + (e - prev.1) * into / span).max(0) as u64;
            }
            slope = Some((e - prev.1, span));
            prev = (b, e);
        }
        match slope {
            // Below the window, past its last point: on that point's last segment.
            Some((rise, run)) if !inside(bytes) => {
                (prev.1 + rise * i128::from(bytes - prev.0) / run).max(0) as u64
            }
            _ => prev.1.max(0) as u64,
        }
    }

    /// What a single copy of `bytes` bytes costs beyond [`copy_ps`](Self::copy_ps) in a
    /// broadcast whose buffers take `footprint` bytes in all (`n` ranks' buffers of the
    /// payload), ps: `bytes` at the extra per byte interpolated linearly between the
    /// calibrated footprints (0 up to `footprint_base`; the last point's extra beyond it, the
    /// copy then running from and to memory).
    ///
    /// # Examples
    ///
    /// ```
    /// # use herald::{*, model::{RuntimeCosts, Pick}};
    /// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
    /// # let profile = Profile::from_json_forced(&text)?;
    /// # let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
    /// # let costs = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant)?;
    /// let mut level = costs.between(0, 1).expect("two PUs meet").clone();
    /// level.footprint_base = 8 << 20;
    /// // 16 MiB of buffers: 20 ps (0.02 ns) more per byte; 64 MiB: 60 ps.
    /// level.footprint_extra_fs_per_byte = vec![(16 << 20, 20_000), (64 << 20, 60_000)];
    /// assert_eq!(level.footprint_ps(8 << 20, 1 << 20), 0);
    /// assert_eq!(level.footprint_ps(12 << 20, 1000), 10_000); // half way to the first point
    /// assert_eq!(level.footprint_ps(40 << 20, 1000), 40_000);
    /// assert_eq!(level.footprint_ps(1 << 30, 1000), 60_000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn footprint_ps(&self, footprint: u64, bytes: u64) -> u64 {
        let mut prev = (self.footprint_base, 0i128);
        for &(at, extra) in &self.footprint_extra_fs_per_byte {
            let extra = i128::from(extra);
            if footprint <= at {
                // Linear between the point below and this one (0 at or below the base).
                let into = i128::from(footprint.saturating_sub(prev.0));
                let span = i128::from(at - prev.0).max(1);
                let fs = prev.1 + (extra - prev.1) * into / span;
                return bytes_ps(bytes, fs.max(0) as u64);
            }
            prev = (at, extra);
        }
        bytes_ps(bytes, prev.1 as u64)
    }

    /// What a single copy of a `bytes`-byte payload costs its reader beyond
    /// [`copy_ps`](Self::copy_ps) when the buffer it copies from is a forwarder's that another
    /// PU holds, ps; 0 where not measured. Such a forwarder copies into its buffer as
    /// [`held_ps`](Self::held_ps) describes: inside the runtime's streaming window (32 KiB –
    /// 2 MiB) with streaming stores from the start, so its readers read the bytes from memory;
    /// outside it plainly (in the host's fast latency mode), leaving them in its cache as a
    /// root's own writes do: no extra there. Inside the window the extra is linear from nothing
    /// at 0 bytes through the calibrated points inside it, and beyond the last one in proportion
    /// to the bytes (each byte is read from memory once).
    ///
    /// # Examples
    ///
    /// ```
    /// # use herald::{*, model::{RuntimeCosts, Pick}};
    /// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
    /// # let profile = Profile::from_json_forced(&text)?;
    /// # let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
    /// # let costs = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant)?;
    /// let mut level = costs.between(0, 1).expect("two PUs meet").clone();
    /// // This profile predates the measurement.
    /// assert_eq!(level.forwarded_ps(1 << 20), 0);
    /// level.forwarded_extra_ps = vec![(65536, 2000), (1 << 20, 40_000)];
    /// assert_eq!(level.forwarded_ps(32768), 1000); // half way from nothing to the first point
    /// assert_eq!(level.forwarded_ps(2 << 20), 80_000); // in proportion past the last
    /// assert_eq!(level.forwarded_ps(16384), 0); // below the window: plain copies
    /// assert_eq!(level.forwarded_ps(4 << 20), 0); // above it
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn forwarded_ps(&self, bytes: u64) -> u64 {
        let window = crate::runtime::STREAMING;
        let inside = |b: u64| usize::try_from(b).is_ok_and(|b| window.contains(&b));
        if !inside(bytes) {
            return 0;
        }
        let mut prev = (0u64, 0i128);
        for &(b, e) in self.forwarded_extra_ps.iter().filter(|p| inside(p.0)) {
            let e = i128::from(e);
            if bytes <= b {
                let into = i128::from(bytes - prev.0);
                let span = i128::from(b - prev.0).max(1);
                return (prev.1 + (e - prev.1) * into / span).max(0) as u64;
            }
            prev = (b, e);
        }
        (prev.1 * i128::from(bytes) / i128::from(prev.0.max(1))).max(0) as u64
    }

    /// Receiver time to copy a `bytes`-byte message by single copy, ps (`None` if single copy is
    /// not modelled): `copy_fs_per_byte` up to `copy_mid_from` bytes, `copy_mid_fs_per_byte`
    /// from there to `copy_large_from`, `copy_large_fs_per_byte` from there to
    /// `copy_upper_from`, `copy_upper_fs_per_byte` from there to `copy_huge_from`,
    /// `copy_huge_fs_per_byte` beyond (a bound of `u64::MAX` is never reached, and the rate
    /// before it continues).
    ///
    /// ```
    /// # use herald::{*, model::{RuntimeCosts, Pick}};
    /// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
    /// # let profile = Profile::from_json_forced(&text)?;
    /// # let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
    /// # let costs = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant)?;
    /// let mut l = costs.between(0, 1).expect("two PUs meet").clone();
    /// (l.copy_fs_per_byte, l.copy_mid_fs_per_byte, l.copy_large_fs_per_byte) = (Some(100_000), 50_000, 40_000);
    /// (l.copy_mid_from, l.copy_large_from) = (16 << 10, 64 << 10);
    /// (l.copy_upper_from, l.copy_huge_from) = (u64::MAX, u64::MAX);
    /// assert_eq!(l.copy_ps(4096), Some(409_600)); // 100 ps a byte
    /// assert_eq!(l.copy_ps(32 << 10), Some(16384 * 100 + 16384 * 50)); // then 50
    /// assert_eq!(l.copy_ps(128 << 10), Some(16384 * 100 + 49152 * 50 + 65536 * 40));
    /// // Without the middle point the first rate runs to `copy_large_from`.
    /// l.copy_mid_from = u64::MAX;
    /// assert_eq!(l.copy_ps(32 << 10), Some(32768 * 100));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn copy_ps(&self, bytes: u64) -> Option<u64> {
        let small = self.copy_fs_per_byte?;
        let mid_from = self.copy_mid_from.min(self.copy_large_from);
        let huge_from = self.copy_huge_from.max(self.copy_large_from);
        let upper_from = self.copy_upper_from.clamp(self.copy_large_from, huge_from);
        let segments = [
            (0, small),
            (mid_from, self.copy_mid_fs_per_byte),
            (self.copy_large_from, self.copy_large_fs_per_byte),
            (upper_from, self.copy_upper_fs_per_byte),
            (huge_from, self.copy_huge_fs_per_byte),
        ];
        let mut fs = 0;
        for (i, &(from, rate)) in segments.iter().enumerate() {
            let to = segments.get(i + 1).map_or(u64::MAX, |&(next, _)| next);
            fs += bytes.min(to).saturating_sub(from) * rate;
        }
        Some(fs.div_ceil(1000))
    }

    /// A posted broadcast of `bytes` payload bytes between two ranks meeting here, ps: its
    /// lines ([`posted_lines`](crate::runtime::posted_lines)) priced by
    /// [`posted_lines_ps`](Self::posted_lines_ps); `None` if posting is not modelled here or
    /// `bytes` is past [`POSTED_MAX_BYTES`](crate::runtime::POSTED_MAX_BYTES).
    pub fn posted_ps(&self, bytes: u64) -> Option<u64> {
        let lines = crate::runtime::posted_lines(usize::try_from(bytes).ok()?)? as u64;
        self.posted_lines_ps(lines)
    }

    /// A posted broadcast of `lines` lines between two ranks meeting here, ps; `None` if
    /// posting is not modelled here. Up to a full slot, the calibrated calls are points
    /// (lines, ps): one line (`post_ps`), two where measured (`post_two_ps`), the measured
    /// lengths of `post_curve_ps`, and the full slot (`post_ps` plus `post_line_ps` per further
    /// line); a length between two points costs the straight line between them, so each
    /// calibration point is given back. Each line beyond a full slot costs `post_long_line_ps`
    /// (where ranks share CPUs, slots are longer than the calibrated full slot).
    ///
    /// ```
    /// # use herald::{*, model::{RuntimeCosts, Pick}};
    /// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
    /// # let profile = Profile::from_json_forced(&text)?;
    /// # let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
    /// # let costs = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant)?;
    /// let mut l = costs.levels().iter().flatten().next().unwrap().clone();
    /// l.post_ps = Some(70_000);
    /// l.post_two_ps = Some(75_000);
    /// l.post_curve_ps = vec![(5, 79_000), (6, 123_000)];
    /// l.post_full_lines = 17;
    /// l.post_line_ps = 7_500; // the full slot: 70 + 16 · 7.5 = 190 ns
    /// l.post_long_line_ps = 8_000;
    /// assert_eq!(l.posted_lines_ps(2), Some(75_000));
    /// assert_eq!(l.posted_lines_ps(4), Some(77_666));
    /// assert_eq!(l.posted_lines_ps(6), Some(123_000));
    /// assert_eq!(l.posted_lines_ps(17), Some(190_000));
    /// assert_eq!(l.posted_lines_ps(19), Some(206_000));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn posted_lines_ps(&self, lines: u64) -> Option<u64> {
        let post = self.post_ps?;
        let full = self.post_full_lines.max(1);
        let slot = post + (full - 1) * self.post_line_ps;
        let short = lines.clamp(1, full);
        // Ascending; the last point at or below `short`, and the straight line from it to the
        // first above it.
        let points = std::iter::once((1, post))
            .chain(self.post_two_ps.map(|two| (2, two)))
            .chain(self.post_curve_ps.iter().copied())
            .filter(|&(l, _)| l < full)
            .chain(std::iter::once((full, slot)));
        let mut below = (1, post);
        let mut within = None;
        for (l1, t1) in points {
            if l1 > short {
                let (l0, t0) = below;
                let (dl, span) = (short - l0, l1 - l0);
                within = Some(if t1 >= t0 {
                    t0 + (t1 - t0) * dl / span
                } else {
                    t0 - (t0 - t1) * dl / span
                });
                break;
            }
            below = (l1, t1);
        }
        let within = within.unwrap_or(below.1);
        Some(within + lines.saturating_sub(full) * self.post_long_line_ps)
    }
}

/// The runtime's cost model of one machine (module docs).
#[derive(Debug, Clone)]
pub struct RuntimeCosts {
    /// The rank → PU map and the level each pair meets at; `None`: one level for all pairs.
    hier: Option<Hier>,
    /// PUs the ranks cycle over.
    pus: u32,
    /// Per hierarchy level; `None` where no two ranks meet.
    levels: Vec<Option<RuntimeLevel>>,
    /// A streamed call's fixed cost, ps.
    call_ps: u64,
    /// What a one-line message's parts (its hop and its line) exceed the calibrated one-line
    /// broadcast by, ps (0 where they do not; [`stream_overlap_ps`](Self::stream_overlap_ps)).
    stream_overlap_ps: u64,
    /// A single-copy call's fixed cost, ps; `None`: single copy not modelled.
    direct_call_ps: Option<u64>,
    /// What the parts of the calibrated single copy of `direct_bytes[0]` (the descriptor's
    /// line and hop, the copy, its block, the hop back) exceed its measured time by, ps (0
    /// where they do not): they overlap, and a single copy between ranks with PUs of their own
    /// ends that much sooner ([`direct_overlap_ps`](Self::direct_overlap_ps)).
    direct_overlap_ps: u64,
    /// What a streamed call through the executor (several blocks, or more than
    /// `burst_lines` lines) costs each rank beyond `call_ps`, ps (0: not measured): at 2 lines
    /// and at `exec_lines` lines and more.
    exec_ps: (u64, u64),
    /// The finest measured level's `burst_lines` (where `exec_ps.1` was measured).
    exec_lines: u64,
    /// What a single copy that runs the executor costs each rank more, ps.
    direct_exec_ps: u64,
    /// One-way handoff between two ranks of one PU through the runtime, ps.
    switch_ps: u64,
    /// One turn of a yielding thread on a shared PU (the bare thread switch), ps; at most
    /// `switch_ps`.
    yield_ps: u64,
    /// One spin phase of a waiting thread ([`RuntimeCosts::spin_ps`]).
    spin_ps: u64,
    /// Relative speeds of a PU's turns, per mille ([`RuntimeCosts::turn_scales`]).
    turn_scales: Vec<u64>,
    /// Payload bytes per single-copy descriptor.
    chunk_bytes: u64,
    /// A posted broadcast between two ranks of one PU: of one line, and per further line, ps;
    /// `None`: not measured.
    shared_post: Option<(u64, u64)>,
    /// What a reader on the root's PU takes of each further line's cost, ps (at most the
    /// line's cost); `None`: not measured (half of it).
    shared_post_read_line_ps: Option<u64>,
    /// Single copy between two ranks of one PU (from that PU's cache), fs per byte; `None`:
    /// not measured.
    shared_copy_fs_per_byte: Option<u64>,
    /// The same for payloads past `copy_large_from` (from the PU's own writes), fs per byte.
    shared_copy_large_fs_per_byte: Option<u64>,
    /// Past this many bytes, fs per byte ([`RuntimeCosts::shared_copy_large_ps`]).
    shared_copy_huge: Option<(u64, u64)>,
}

/// [`RuntimeCosts::turn_scales`] from a spread `p10 … p90`.
fn turn_scales(p10: f64, p90: f64) -> Vec<u64> {
    // The race is between two PUs whose speeds vary alike and independently; the root's PU
    // is held at the calibrated speed, so the other's factor stands for their ratio, whose log
    // spreads √2 times one speed's.
    let half = if p10 > 0.0 && p90 > p10 {
        (p90 / p10).ln() / 2.0 * std::f64::consts::SQRT_2
    } else {
        0.0
    };
    let scales: Vec<u64> = [-0.75, -0.25, 0.25, 0.75]
        .iter()
        .map(|u| (1000.0 * (half * u).exp()).round() as u64)
        .collect();
    if scales.iter().all(|&s| s == 1000) {
        vec![1000]
    } else {
        scales
    }
}

/// `bytes` at `fs` femtoseconds a byte, ps (rounded up).
fn bytes_ps(bytes: u64, fs: u64) -> u64 {
    (u128::from(bytes) * u128::from(fs)).div_ceil(1000) as u64
}

/// ns → ps, rounded; negative → 0.
fn ps(ns: f64) -> u64 {
    if ns.is_finite() && ns > 0.0 {
        (ns * 1000.0).round() as u64
    } else {
        0
    }
}

/// An exact ratio (ns) → ps, rounded.
fn ratio_ps(r: Ratio) -> u64 {
    ps(r.to_f64())
}

/// What a conversion takes of a runtime calibration's distributions: its [`Pick`], and for
/// [`Pick::Dominant`] one latency regime for all of them where the calibration names its
/// regimes ([`Mode::regime_hop_ns`](super::Mode::regime_hop_ns)): the regime of the one-line
/// call's largest mode, the regime `herald fidelity` predicts "the dominant regime" in.
///
/// Each distribution's own largest mode, which [`Pick::Dominant`] takes alone, can be another
/// regime's where the host spent about as long in two: a calibration of the seventy-second
/// session had its one-line call and posted broadcast 48 % and 47 % in regimes of hops 55 and
/// 200 ns, its single copy 41 % and 51 %, so the model priced the call at 55 ns and the
/// post and the copy at 200 (docs/fidelity.md, "Seventy-second session").
#[derive(Debug, Clone, Copy)]
struct Picker {
    pick: Pick,
    /// The dominant regime's hop, ns, where the calibration names regimes.
    regime: Option<f64>,
}

impl Picker {
    fn new(pick: Pick, runtime: Option<&RuntimeCalibration>) -> Picker {
        let regime = match pick {
            Pick::Dominant => runtime
                .and_then(|r| r.one_line_ns.modes.first())
                .and_then(|m| m.regime_hop_ns),
            _ => None,
        };
        Picker { pick, regime }
    }
}

/// [`Distribution::pick`](super::Distribution::pick) under a [`Picker`].
trait PickIn {
    fn pick_in(&self, pk: Picker) -> f64;
}

impl PickIn for super::Distribution {
    /// The center of this distribution's mode in `pk`'s regime (the one whose regime's hop is
    /// nearest, within a factor of 1.25), where there is one; else as [`Pick`] alone.
    fn pick_in(&self, pk: Picker) -> f64 {
        let Some(hop) = pk.regime else {
            return self.pick(pk.pick);
        };
        let off = |m: &super::Mode| m.regime_hop_ns.map(|h| (h / hop).ln().abs());
        self.modes
            .iter()
            .filter_map(|m| Some((off(m)?, m.center)))
            .filter(|&(o, _)| o.is_finite() && o <= 1.25f64.ln())
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map_or_else(|| self.pick(pk.pick), |(_, center)| center)
    }
}

/// The profile's level `name` where it was measured through the runtime.
fn measured<'p>(profile: &'p Profile, name: &str) -> Option<&'p LevelProfile> {
    profile
        .measured_levels()
        .find(|l| l.name == name && l.runtime.is_some())
}

/// A level's runtime costs: the channel's hop and gap from its LogGP parameters, and the line
/// and copy costs from `level`'s runtime measurement (times `factor`), or `56·G` without it.
///
/// Where [`Pick::Dominant`] takes one latency regime ([`Picker`]) and `level`'s L, o and g
/// have modes of that regime (calibrations since the seventy-third session time a hop before
/// and after each slice of the channel probe), the hop and gap are that regime's, times
/// `factor` as the hierarchical model scales an assumed level: the runtime's quantities and
/// the channel's then describe one state of the host. Otherwise they come from `lp`.
fn level_costs(
    lp: &LogP,
    level: Option<&LevelProfile>,
    factor: f64,
    source: RuntimeSource,
    pick: Pick,
) -> RuntimeLevel {
    let runtime = level.and_then(|l| l.runtime.as_ref());
    let pk = Picker::new(pick, runtime);
    let in_regime = level
        .filter(|_| pk.regime.is_some())
        .and_then(|l| l.logp_by(|d| d.pick_in(pk)).ok())
        .and_then(|l| {
            let scale = match &source {
                RuntimeSource::Assumed { factor, .. } => *factor,
                _ => Ratio::ONE,
            };
            match LevelCost::LogP(l).scaled(scale) {
                Ok(LevelCost::LogP(l)) => Some(l),
                _ => None,
            }
        });
    let lp = in_regime.as_ref().unwrap_or(lp);
    let hop_ps = ratio_ps(lp.l()) + 2 * ratio_ps(lp.o());
    let gap_ps = ratio_ps(lp.g().max(lp.o()));
    let fs = |ns_per_byte: f64| ps(ns_per_byte * factor * 1000.0);
    // `(bytes, extra ps)` of points measured at sizes; none unless both are there.
    let sized_ps = |d: &Option<Vec<super::Distribution>>, b: &Option<Vec<u64>>| match (d, b) {
        (Some(d), Some(b)) => b
            .iter()
            .zip(d)
            .map(|(&b, d)| (b, ps(d.pick_in(pk) * factor)))
            .collect(),
        _ => Vec::new(),
    };
    match runtime {
        Some(r) => {
            // Below `direct_bytes[1]`: one rate from the calibrated call at `direct_bytes[0]`
            // to the one at `direct_bytes[1]`, or two through the middle point where it was
            // measured (the second such that both outer points stay where they were measured;
            // never below nothing).
            let [d0, d1, _] = r.direct_bytes.map(|b| b as f64);
            let whole = r.copy_ns_per_byte.pick_in(pk);
            let (copy_below_mid, copy_mid, mid_from) = match (&r.copy_mid_ns_per_byte, r.mid_bytes)
            {
                (Some(m), Some(at)) => {
                    let first = m.pick_in(pk);
                    let m_at = at as f64;
                    let second = ((whole * (d1 - d0) - first * (m_at - d0)) / (d1 - m_at)).max(0.0);
                    (first, second, at)
                }
                _ => (whole, 0.0, u64::MAX),
            };
            RuntimeLevel {
                hop_ps,
                gap_ps,
                burst_line_ps: ps(r.burst_line_ns.pick_in(pk) * factor).max(1),
                burst_lines: r.burst_lines.max(1),
                burst_two_ps: r.stream_two_ns.as_ref().map(|d| ps(d.pick_in(pk) * factor)),
                line_ps: ps(r.line_ns.pick_in(pk) * factor).max(1),
                copy_fs_per_byte: Some(fs(copy_below_mid)),
                copy_mid_fs_per_byte: fs(copy_mid),
                copy_mid_from: mid_from,
                copy_large_fs_per_byte: fs(r.copy_large_ns_per_byte.pick_in(pk)),
                copy_large_from: r.direct_bytes[1],
                copy_upper_fs_per_byte: r
                    .copy_upper_ns_per_byte
                    .as_ref()
                    .map_or(0, |d| fs(d.pick_in(pk))),
                copy_upper_from: match (&r.copy_upper_ns_per_byte, r.upper_bytes) {
                    (Some(_), Some(b)) => b,
                    _ => u64::MAX,
                },
                copy_huge_fs_per_byte: r
                    .copy_huge_ns_per_byte
                    .as_ref()
                    .map_or(0, |d| fs(d.pick_in(pk))),
                copy_huge_from: match r.copy_huge_ns_per_byte {
                    Some(_) => r.direct_bytes[2],
                    None => u64::MAX,
                },
                block_ps: r
                    .direct_block_ns
                    .as_ref()
                    .map_or(0, |d| ps(d.pick_in(pk) * factor)),
                post_ps: r.posted_ns.as_ref().map(|d| ps(d.pick_in(pk) * factor)),
                post_line_ps: r
                    .posted_line_ns
                    .as_ref()
                    .map_or(0, |d| ps(d.pick_in(pk) * factor)),
                post_two_ps: r.posted_two_ns.as_ref().map(|d| ps(d.pick_in(pk) * factor)),
                post_curve_ps: sized_ps(&r.posted_curve_ns, &r.posted_curve_bytes)
                    .into_iter()
                    .filter_map(|(b, t)| {
                        let lines = crate::runtime::posted_lines(usize::try_from(b).ok()?)?;
                        Some((lines as u64, t))
                    })
                    .filter(|&(l, _)| l > 2)
                    .collect(),
                post_full_lines: r
                    .posted_bytes
                    .and_then(|b| crate::runtime::shared_posted_lines(b as usize))
                    .unwrap_or(1) as u64,
                post_long_line_ps: r
                    .posted_long_line_ns
                    .as_ref()
                    .or(r.posted_line_ns.as_ref())
                    .map_or(0, |d| ps(d.pick_in(pk) * factor)),
                held_extra_ps: sized_ps(&r.held_extra_ns, &r.held_bytes),
                footprint_extra_fs_per_byte: match (
                    &r.footprint_extra_ns_per_byte,
                    &r.footprint_bytes,
                ) {
                    (Some(d), Some(b)) if r.huge_bytes.is_some() => b
                        .iter()
                        .zip(d)
                        .map(|(&b, d)| (b, fs(d.pick_in(pk).max(0.0))))
                        .collect(),
                    _ => Vec::new(),
                },
                footprint_base: r.huge_bytes.map_or(u64::MAX, |h| 2 * h),
                forwarded_extra_ps: sized_ps(&r.forwarded_extra_ns, &r.forwarded_bytes),
                stamp_load_ps: r.stamp_load_ns.as_ref().map(|d| ps(d.pick_in(pk) * factor)),
                source,
            }
        }
        None => {
            let line_ps = ps(lp.big_g().to_f64() * 56.0).max(1);
            RuntimeLevel {
                hop_ps,
                gap_ps,
                burst_line_ps: line_ps,
                burst_lines: 1,
                burst_two_ps: None,
                line_ps,
                copy_fs_per_byte: None,
                copy_mid_fs_per_byte: 0,
                copy_mid_from: u64::MAX,
                copy_large_fs_per_byte: 0,
                copy_large_from: u64::MAX,
                copy_upper_fs_per_byte: 0,
                copy_upper_from: u64::MAX,
                copy_huge_fs_per_byte: 0,
                copy_huge_from: u64::MAX,
                block_ps: 0,
                post_ps: None,
                post_line_ps: 0,
                post_two_ps: None,
                post_curve_ps: Vec::new(),
                post_full_lines: 1,
                post_long_line_ps: 0,
                held_extra_ps: Vec::new(),
                footprint_extra_fs_per_byte: Vec::new(),
                footprint_base: u64::MAX,
                forwarded_extra_ps: Vec::new(),
                stamp_load_ps: None,
                source: RuntimeSource::LogGp,
            }
        }
    }
}

impl RuntimeCosts {
    /// The runtime's costs on `hierarchy` (ranks in compact order, cycling when there are more
    /// ranks than PUs) from `profile`, each quantity picked by `pick`.
    ///
    /// # Errors
    /// [`ProfileError`] if the profile makes no hierarchical LogGP model of `hierarchy`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use herald::{*, model::{RuntimeCosts, Pick}};
    /// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
    /// let profile = Profile::from_json_forced(&text)?;
    /// let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
    /// let costs = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant)?;
    /// assert!(costs.between(0, 1).unwrap().hop_ps > 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_profile(
        profile: &Profile,
        hierarchy: &Hierarchy,
        pick: Pick,
    ) -> Result<RuntimeCosts, ProfileError> {
        let cpus = hierarchy.os_indices().to_vec();
        let assume = Assumptions {
            pick,
            ..Assumptions::default()
        };
        match Hier::from_profile(profile, hierarchy.clone(), &cpus, &assume) {
            Ok(hier) => Ok(RuntimeCosts::hierarchical(profile, hier, pick)),
            Err(e) => RuntimeCosts::flat(profile, hierarchy, pick).ok_or(e),
        }
    }

    /// Per level of `hier`, from the profile's runtime measurements where it has them.
    fn hierarchical(profile: &Profile, hier: Hier, pick: Pick) -> RuntimeCosts {
        let mut levels = Vec::with_capacity(hier.levels().len());
        for (d, level) in hier.levels().iter().enumerate() {
            let Some(LevelCost::LogP(lp)) = level.cost else {
                levels.push(None);
                continue;
            };
            let (from, factor, source) = match &hier.sources()[d] {
                LevelSource::Measured(name) => (name.as_str(), 1.0, RuntimeSource::Measured),
                LevelSource::Assumed { from, factor } => (
                    from.as_str(),
                    factor.to_f64(),
                    RuntimeSource::Assumed {
                        from: from.clone(),
                        factor: *factor,
                    },
                ),
                _ => ("", 1.0, RuntimeSource::LogGp),
            };
            levels.push(Some(level_costs(
                &lp,
                measured(profile, from),
                factor,
                source,
                pick,
            )));
        }
        // The fixed costs: from the finest level measured through the runtime.
        let finest = (0..hier.levels().len())
            .rev()
            .find_map(|d| match &hier.sources()[d] {
                LevelSource::Measured(name) => measured(profile, name)
                    .and_then(|l| l.runtime.as_ref())
                    .map(|r| (d, r)),
                _ => None,
            })
            .map(|(d, r)| (levels[d].clone().expect("a measured level has costs"), r));
        let pus = hier.hierarchy().pu_count() as u32;
        RuntimeCosts::assemble(profile, Some(hier), pus, levels, finest, pick)
    }

    /// One level for every pair: the coarsest measured level, as
    /// [`oversubscribed_model`](crate::plan::oversubscribed_model) does when the hierarchy has
    /// levels the profile cannot describe. `None` if the profile measured no level.
    fn flat(profile: &Profile, hierarchy: &Hierarchy, pick: Pick) -> Option<RuntimeCosts> {
        let lp = profile.measured_levels().next()?;
        let logp = lp.logp(pick).ok()?;
        let level = level_costs(&logp, Some(lp), 1.0, RuntimeSource::Measured, pick);
        let finest = lp.runtime.as_ref().map(|r| (level.clone(), r));
        let pus = hierarchy.pu_count().max(1) as u32;
        Some(RuntimeCosts::assemble(
            profile,
            None,
            pus,
            vec![Some(level)],
            finest,
            pick,
        ))
    }

    fn assemble(
        profile: &Profile,
        hier: Option<Hier>,
        pus: u32,
        levels: Vec<Option<RuntimeLevel>>,
        finest: Option<(RuntimeLevel, &RuntimeCalibration)>,
        pick: Pick,
    ) -> RuntimeCosts {
        let pk = Picker::new(pick, finest.as_ref().map(|f| f.1));
        let (call_ps, stream_overlap_ps, direct_call_ps, direct_overlap_ps, chunk_bytes) =
            match &finest {
                Some((l, r)) => {
                    // What a one-line message and a one-block `direct_bytes[0]`-byte copy (its
                    // block cost, and the hop back that ends the lender's wait) cost beyond the
                    // call; where the calibrated call is shorter, how much the parts overlap.
                    let first = l.hop_ps + l.burst_line_ps;
                    let copy = l.copy_ps(r.direct_bytes[0]).unwrap_or(0) + l.block_ps + l.hop_ps;
                    let (one_line, direct) =
                        (ps(r.one_line_ns.pick_in(pk)), ps(r.direct_ns.pick_in(pk)));
                    (
                        one_line.saturating_sub(first),
                        first.saturating_sub(one_line),
                        Some(direct.saturating_sub(first + copy)),
                        (first + copy).saturating_sub(direct),
                        r.chunk_bytes.max(1),
                    )
                }
                None => (0, 0, None, 0, 64 << 10),
            };
        // The handoff between two ranks of one PU: the runtime's measured one-line broadcast
        // on one PU beyond the call and its line, or the bare thread switch.
        let shared = finest.as_ref().and_then(|(l, r)| {
            let d = r.shared_one_line_ns.as_ref()?;
            Some(ps(d.pick_in(pk)).saturating_sub(call_ps + l.burst_line_ps))
        });
        // The executor's extra cost at `burst_lines` lines, and at 2 (else the same).
        let (exec_ps, exec_lines) = finest.as_ref().map_or(((0, 0), 2), |(_, r)| {
            let at = |d: &Option<super::Distribution>| d.as_ref().map(|d| ps(d.pick_in(pk)));
            let long = at(&r.exec_ns).unwrap_or(0);
            (
                (at(&r.exec_short_ns).unwrap_or(long), long),
                r.burst_lines.max(2),
            )
        });
        // A single copy's executor (0 where not measured).
        let direct_exec_ps = finest.as_ref().map_or(0, |(_, r)| {
            r.direct_exec_ns.as_ref().map_or(0, |d| ps(d.pick_in(pk)))
        });
        let shared_post = finest.as_ref().and_then(|(_, r)| {
            let one = r.shared_posted_ns.as_ref()?;
            let line = r.shared_posted_line_ns.as_ref()?;
            Some((ps(one.pick_in(pk)), ps(line.pick_in(pk))))
        });
        let shared_post_read_line_ps = finest.as_ref().and_then(|(_, r)| {
            let read = r.shared_posted_read_line_ns.as_ref()?;
            Some(ps(read.pick_in(pk).max(0.0)))
        });
        // A one-PU copy rate, ns → fs per byte.
        let fs_per_byte =
            |d: &Option<super::Distribution>| Some(ps(d.as_ref()?.pick_in(pk) * 1000.0));
        let shared_copy_fs_per_byte = finest
            .as_ref()
            .and_then(|(_, r)| fs_per_byte(&r.shared_copy_ns_per_byte));
        let shared_copy_large_fs_per_byte = finest
            .as_ref()
            .and_then(|(_, r)| fs_per_byte(&r.shared_copy_large_ns_per_byte));
        let shared_copy_huge = finest.as_ref().and_then(|(_, r)| {
            Some((
                r.direct_bytes[2],
                fs_per_byte(&r.shared_copy_huge_ns_per_byte)?,
            ))
        });
        let switch = profile.switch_ns.as_ref().map_or(0, |d| ps(d.pick_in(pk)));
        let switch_ps = shared.unwrap_or(switch);
        // A yield turn: the bare switch where both were measured, else the handoff itself.
        let yield_ps = match shared {
            Some(s) if switch > 0 => switch.min(s),
            _ => switch_ps,
        };
        let turn_scales = profile
            .switch_ns
            .as_ref()
            .map_or_else(|| vec![1000], |d| turn_scales(d.p10, d.p90));
        RuntimeCosts {
            hier,
            pus,
            levels,
            call_ps,
            stream_overlap_ps,
            direct_call_ps,
            direct_overlap_ps,
            exec_ps,
            exec_lines,
            direct_exec_ps,
            switch_ps,
            yield_ps,
            spin_ps: profile
                .spin_ns
                .as_ref()
                .map_or(0, |d| ps(d.pick_in(pk).max(0.0))),
            turn_scales,
            chunk_bytes,
            shared_post,
            shared_post_read_line_ps,
            shared_copy_fs_per_byte,
            shared_copy_large_fs_per_byte,
            shared_copy_huge,
        }
    }

    /// The costs between ranks `p` and `q` (`None` if they share a PU, or the level has no
    /// parameters).
    pub fn between(&self, p: u32, q: u32) -> Option<&RuntimeLevel> {
        if self.pu(p) == self.pu(q) {
            return None;
        }
        let level = self.hier.as_ref().map_or(0, |h| h.level_of(p, q));
        self.levels.get(level).and_then(Option::as_ref)
    }

    /// The logical PU rank `r` runs on (ranks in compact order, cycling over the PUs).
    pub fn pu(&self, r: u32) -> u32 {
        match &self.hier {
            Some(h) => h.pu(r),
            None => r % self.pus,
        }
    }

    /// The PUs the ranks cycle over.
    pub fn pus(&self) -> u32 {
        self.pus
    }

    /// The levels, machine first (`None` where no parameters are needed).
    pub fn levels(&self) -> &[Option<RuntimeLevel>] {
        &self.levels
    }

    /// A streamed call's fixed cost, ps.
    pub fn call_ps(&self) -> u64 {
        self.call_ps
    }

    /// How much sooner a streamed broadcast between ranks with PUs of their own ends than the
    /// sum of its parts, ps: where the calibrated one-line broadcast took less than its line's
    /// hop and its cost ([`RuntimeLevel::burst_line_ps`]), they overlap by the difference and
    /// the call's fixed cost ([`call_ps`](Self::call_ps)) is 0 (as
    /// [`direct_overlap_ps`](Self::direct_overlap_ps) for a single copy). Here the one-line
    /// call measures 86–94 ns against parts of about 111 (hop 78, line 33), and 2-rank streams
    /// of 8 B – 4 KiB measured 0.83–0.92 of their prediction without it (docs/fidelity.md,
    /// "Fifty-first session").
    pub fn stream_overlap_ps(&self) -> u64 {
        self.stream_overlap_ps
    }

    /// A single-copy call's fixed cost, ps (`None`: not calibrated, single copy not modelled).
    pub fn direct_call_ps(&self) -> Option<u64> {
        self.direct_call_ps
    }

    /// How much sooner a single copy between ranks with PUs of their own ends than the sum of
    /// its parts, ps: where the calibrated single copy of `direct_bytes[0]` took less than its
    /// parts (the descriptor's line and hop, the copy at the per-byte rate, its block cost, the
    /// hop back that ends the lender's wait), they overlap by the difference, and the call's
    /// fixed cost ([`direct_call_ps`](Self::direct_call_ps)) is 0. `predict_runtime` ends such
    /// a broadcast that much sooner, so that 2 ranks give the calibration point back (a fixed
    /// cost cannot be negative). Since the fifty-first session's copy (docs/runtime.md, "Chunks
    /// copied by a vector loop") the 4 KiB copy measures 256–266 ns here against parts of about
    /// 302. Not applied where ranks share PUs (their turns are simulated from the call on).
    pub fn direct_overlap_ps(&self) -> u64 {
        self.direct_overlap_ps
    }

    /// What a streamed call of `lines` lines costs each rank beyond
    /// [`call_ps`](Self::call_ps) when it runs the executor (a stream of several blocks, or of
    /// more than the finest level's `burst_lines` lines; a stream of one block of at most that
    /// many lines goes straight through the rings), ps: linear in `lines` between the two
    /// calibrated lengths, 2 lines
    /// ([`exec_short_ns`](crate::model::RuntimeCalibration::exec_short_ns)) and `burst_lines`
    /// ([`exec_ns`](crate::model::RuntimeCalibration::exec_ns)), the latter's beyond; 0 where
    /// the profile did not measure it.
    ///
    /// # Examples
    ///
    /// ```
    /// # use herald::{*, model::{RuntimeCosts, Pick}};
    /// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
    /// let profile = Profile::from_json_forced(&text)?;
    /// let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
    /// let costs = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant)?;
    /// // This profile predates the measurement: no extra cost at any length.
    /// assert_eq!((costs.exec_ps(2), costs.exec_ps(100)), (0, 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn exec_ps(&self, lines: u64) -> u64 {
        let (short, long) = self.exec_ps;
        let span = self.exec_lines.saturating_sub(2);
        if span == 0 || lines >= self.exec_lines {
            return long;
        }
        let k = i128::from(lines.max(2) - 2);
        let (s, l) = (i128::from(short), i128::from(long));
        (s + (l - s) * k / i128::from(span)).max(0) as u64
    }

    /// What a single-copy call costs each rank beyond
    /// [`direct_call_ps`](Self::direct_call_ps) when it runs the executor (a payload of
    /// several blocks, or of more than one chunk; one chunk in one block moves one descriptor
    /// per edge without it), ps; 0 where the profile did not measure it
    /// ([`direct_exec_ns`](crate::model::RuntimeCalibration::direct_exec_ns)).
    ///
    /// ```
    /// # use herald::{*, model::{RuntimeCosts, Pick}};
    /// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
    /// let profile = Profile::from_json_forced(&text)?;
    /// let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
    /// let costs = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant)?;
    /// // This profile predates the measurement.
    /// assert_eq!(costs.direct_exec_ps(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn direct_exec_ps(&self) -> u64 {
        self.direct_exec_ps
    }

    /// One-way handoff between two ranks of one PU, ps (measured through the runtime where the
    /// profile has it, else the bare thread switch).
    pub fn switch_ps(&self) -> u64 {
        self.switch_ps
    }

    /// One turn of a yielding thread on a shared PU, ps: the profile's bare thread switch
    /// (`switch_ns`) where the profile also measured the handoff through the runtime, else
    /// [`switch_ps`](Self::switch_ps).
    pub fn yield_ps(&self) -> u64 {
        self.yield_ps
    }

    /// One spin phase of a waiting thread, ps ([`Profile::spin_ns`]; 0 where the profile did
    /// not measure it): on a shared PU, a single copy's lender of one descriptor, none of whose
    /// PU's other ranks forwards, spins this long on each of its turns once only readers on
    /// other PUs are left, and returns as soon as the last is done if that falls in the spin.
    pub fn spin_ps(&self) -> u64 {
        self.spin_ps
    }

    /// How fast a non-root PU's turns go relative to the root's PU's, per mille: the
    /// shared-PU simulation scales that PU's bare switch and handoff by each and averages.
    /// Each PU's speed is taken to vary as the bare switch ([`Profile::switch_ns`]) does,
    /// between `√(p10/p90)` and `√(p90/p10)` of its median in log, the two PUs independently,
    /// so their ratio spreads √2 times as wide: four factors evenly spaced in log over
    /// `(p10/p90)^(√2/2)` to `(p90/p10)^(√2/2)`, at the midpoints of four equal parts. `[1000]`
    /// where the profile has no switch, or no spread. (A factor holds for a whole PU and call:
    /// the host's speed states last seconds.)
    ///
    /// ```
    /// # use herald::{*, model::{Distribution, RuntimeCosts, Pick}};
    /// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
    /// let mut profile = Profile::from_json_forced(&text)?;
    /// profile.switch_ns = Some(Distribution {
    ///     median: 3000.0, p10: 2000.0, p90: 4500.0, samples: 100, modes: vec![], settled: true,
    /// });
    /// let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
    /// let scales = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant)?.turn_scales().to_vec();
    /// assert_eq!(scales.len(), 4);
    /// // Symmetric in log about the calibrated speed: s(i)·s(3 − i) = 1.
    /// for i in 0..4 {
    ///     let product = scales[i] * scales[3 - i];
    ///     assert!(product.abs_diff(1_000_000) < 3_000, "{product}");
    /// }
    /// // The outer two lie 3/4 of the way out, in log: (4500/2000)^(3√2/8) ≈ 1.537.
    /// assert_eq!(scales[3], 1537);
    /// assert_eq!(scales[0], 650);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn turn_scales(&self) -> &[u64] {
        &self.turn_scales
    }

    /// Payload bytes per single-copy descriptor.
    pub fn chunk_bytes(&self) -> u64 {
        self.chunk_bytes
    }

    /// Whether posting is modelled (the profile measured it on every level that has costs).
    pub fn models_posted(&self) -> bool {
        let mut levels = self.levels.iter().flatten().peekable();
        levels.peek().is_some() && levels.all(|l| l.post_ps.is_some())
    }

    /// A posted broadcast of `bytes` payload bytes between two ranks of one PU, the whole call
    /// (the root's post, the switch to the reader and its read), ps: the calibrated one-line
    /// call plus its per-line cost per further line
    /// ([`shared_posted_lines`](crate::runtime::shared_posted_lines)); `None` where the
    /// profile did not measure it, or past
    /// [`SHARED_POSTED_LIMIT`](crate::runtime::SHARED_POSTED_LIMIT).
    pub fn shared_posted_ps(&self, bytes: u64) -> Option<u64> {
        let (one, line) = self.shared_post?;
        let lines = crate::runtime::shared_posted_lines(usize::try_from(bytes).ok()?)? as u64;
        Some(one + (lines - 1) * line)
    }

    /// How a posted broadcast of `bytes` payload bytes between two ranks of one PU divides
    /// beyond the handoff: `(post, read)`, ps — the root's post, and a read of the slot by a
    /// rank of the root's PU (every further reader of that PU pays it again after its own
    /// handoff). The one-line call beyond the handoff is halved between them; of each further
    /// line the read takes what the calibration measured a third rank on the PU to add
    /// ([`shared_posted_read_line_ns`](crate::model::RuntimeCalibration::shared_posted_read_line_ns),
    /// at most the line's cost), the post the rest; a profile without that measurement halves
    /// the lines too. `None` where [`shared_posted_ps`](Self::shared_posted_ps) is.
    ///
    /// # Examples
    ///
    /// ```
    /// # use herald::{*, model::{RuntimeCosts, Pick}};
    /// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
    /// let profile = Profile::from_json_forced(&text)?;
    /// let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
    /// let costs = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant)?;
    /// // This profile predates the measurement of posts on one PU.
    /// assert_eq!(costs.shared_posted_split_ps(4096), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shared_posted_split_ps(&self, bytes: u64) -> Option<(u64, u64)> {
        let whole = self.shared_posted_ps(bytes)?;
        let (one, line) = self.shared_post?;
        let lines = crate::runtime::shared_posted_lines(usize::try_from(bytes).ok()?)? as u64;
        let work = whole.saturating_sub(self.switch_ps);
        let read = match self.shared_post_read_line_ps {
            Some(r) => {
                let first = one.saturating_sub(self.switch_ps);
                (first - first / 2) + (lines - 1) * r.min(line)
            }
            None => work - work / 2,
        }
        .min(work);
        Some((work - read, read))
    }

    /// A single copy of `bytes` bytes between two ranks of one PU, from that PU's cache, ps
    /// (`None` where the profile did not measure it). Measured from 4 to 64 KiB
    /// ([`shared_copy_ns_per_byte`](crate::model::RuntimeCalibration::shared_copy_ns_per_byte)).
    ///
    /// # Examples
    ///
    /// ```
    /// # use herald::{*, model::{RuntimeCosts, Pick}};
    /// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
    /// let profile = Profile::from_json_forced(&text)?;
    /// let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
    /// let costs = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant)?;
    /// // This profile predates the measurement.
    /// assert_eq!(costs.shared_copy_ps(4096), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shared_copy_ps(&self, bytes: u64) -> Option<u64> {
        Some(bytes_ps(bytes, self.shared_copy_fs_per_byte?))
    }

    /// A single copy of a payload of `bytes` bytes past the one-PU rate's measured size
    /// (`copy_large_from`) between two ranks of one PU, from lines that PU wrote, ps (`None`
    /// where the profile did not measure it): the rate measured from 64 KiB to 1 MiB
    /// ([`shared_copy_large_ns_per_byte`](crate::model::RuntimeCalibration::shared_copy_large_ns_per_byte))
    /// for the bytes up to `direct_bytes[2]`, and the one measured from there to 4 MiB
    /// ([`shared_copy_huge_ns_per_byte`](crate::model::RuntimeCalibration::shared_copy_huge_ns_per_byte))
    /// for the rest, where the profile has it (else the first throughout).
    ///
    /// # Examples
    ///
    /// ```
    /// # use herald::{*, model::{RuntimeCosts, Pick}};
    /// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
    /// let profile = Profile::from_json_forced(&text)?;
    /// let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
    /// let costs = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant)?;
    /// // This profile predates the measurement.
    /// assert_eq!(costs.shared_copy_large_ps(1 << 20), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shared_copy_large_ps(&self, bytes: u64) -> Option<u64> {
        let large = self.shared_copy_large_fs_per_byte?;
        Some(match self.shared_copy_huge {
            Some((from, huge)) if bytes > from => {
                bytes_ps(from, large) + bytes_ps(bytes - from, huge)
            }
            _ => bytes_ps(bytes, large),
        })
    }

    /// Whether posting where ranks share PUs is modelled: posting is
    /// ([`models_posted`](Self::models_posted)), and the profile measured it on one PU.
    pub fn models_shared_posted(&self) -> bool {
        self.shared_post.is_some() && self.models_posted()
    }

    /// Whether single copy is modelled (the profile measured it).
    pub fn models_direct(&self) -> bool {
        self.direct_call_ps.is_some()
            && self
                .levels
                .iter()
                .flatten()
                .all(|l| l.copy_fs_per_byte.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::{PickIn, Picker, RuntimeCosts};
    use crate::model::fixtures::{on_two_cores, point_mode};
    use crate::model::{Distribution, Mode, Pick, Profile};

    fn dist(modes: Vec<Mode>) -> Distribution {
        Distribution {
            median: modes[0].center,
            p10: modes[0].center,
            p90: modes[0].center,
            samples: 20,
            modes,
            settled: true,
        }
    }

    #[test]
    fn a_regime_picks_its_own_mode_whatever_the_order() {
        let d = dist(vec![
            point_mode(446.0, 0.48, Some(200.0)),
            point_mode(120.0, 0.45, Some(55.0)),
            point_mode(65.0, 0.07, Some(31.0)),
        ]);
        let at = |regime| Picker {
            pick: Pick::Dominant,
            regime,
        };
        assert_eq!(d.pick_in(at(Some(55.0))), 120.0);
        // The same regime named by a hop a little off (another quantity's grouping).
        assert_eq!(d.pick_in(at(Some(60.0))), 120.0);
        assert_eq!(d.pick_in(at(Some(31.0))), 65.0);
        // No mode of that regime within a factor of 1.25: the distribution's own largest.
        assert_eq!(d.pick_in(at(Some(100.0))), 446.0);
        assert_eq!(d.pick_in(at(None)), 446.0);
        // Modes without regimes: as `Pick` alone.
        let plain = dist(vec![
            point_mode(10.0, 0.6, None),
            point_mode(30.0, 0.4, None),
        ]);
        assert_eq!(plain.pick_in(at(Some(55.0))), 10.0);
        // Other picks ignore the regime.
        let slowest = Picker {
            pick: Pick::Slowest,
            regime: None,
        };
        assert_eq!(d.pick_in(slowest), 446.0);
    }

    /// The seventy-second session's calibration on the AMD EPYC and a machine like its host.
    fn amd_three_regimes() -> (Profile, crate::Hierarchy) {
        on_two_cores("profile-amd-three-regimes.json")
    }

    /// A calibration of the seventy-second session on the AMD EPYC: the host spent about as
    /// long in regimes of hops 55 and 200 ns, so quantities' largest modes fall in either. The
    /// dominant pick prices every runtime quantity in the one-line call's regime.
    #[test]
    fn the_dominant_pick_takes_one_regime_for_every_quantity() {
        let (profile, machine) = amd_three_regimes();
        let r = profile
            .levels
            .iter()
            .find_map(|l| l.runtime.as_ref())
            .unwrap();
        let regime = r.one_line_ns.modes[0].regime_hop_ns.unwrap();
        let at = |d: &Distribution| {
            let m = d
                .modes
                .iter()
                .find(|m| m.regime_hop_ns == Some(regime))
                .unwrap();
            (m.center * 1000.0).round() as u64
        };
        let posted = r.posted_ns.as_ref().unwrap();
        // Not vacuous: these quantities' own largest modes are another regime's.
        assert_ne!(posted.modes[0].regime_hop_ns, Some(regime));
        assert_ne!(r.line_ns.modes[0].regime_hop_ns, Some(regime));
        let costs = RuntimeCosts::from_profile(&profile, &machine, Pick::Dominant).unwrap();
        let level = costs.between(0, 1).unwrap();
        assert_eq!(level.post_ps, Some(at(posted)));
        assert_eq!(level.line_ps, at(&r.line_ns));
        // The slowest pick is untouched: the slowest regime's.
        let slow = RuntimeCosts::from_profile(&profile, &machine, Pick::Slowest).unwrap();
        assert_eq!(
            slow.between(0, 1).unwrap().post_ps,
            Some((posted.pick(Pick::Slowest) * 1000.0).round() as u64)
        );
    }

    /// Where the channel's L, o and g name their regimes too (calibrations since the
    /// seventy-third session), the dominant pick's hop `L + 2o` and gap `max(g, o)` are the
    /// one-line call's regime's, though each parameter's largest mode is another regime's; the
    /// slowest pick takes the slowest regime's; without regimes, each parameter's own largest
    /// mode as before.
    #[test]
    fn the_channels_hop_and_gap_come_from_the_runtimes_regime() {
        let (mut profile, machine) = amd_three_regimes();
        let level = profile
            .levels
            .iter_mut()
            .find(|l| l.runtime.is_some())
            .unwrap();
        let r = level.runtime.as_ref().unwrap();
        let near = r.one_line_ns.modes[0].regime_hop_ns.unwrap();
        let far = r.posted_ns.as_ref().unwrap().modes[0]
            .regime_hop_ns
            .unwrap();
        assert!(far > 1.25 * near, "two distinct regimes: {near} {far}");
        // (near, far) values of L, o_s, o_r, g: the far regime holds the larger share.
        let two = |n: f64, f: f64| {
            dist(vec![
                point_mode(f, 0.55, Some(far)),
                point_mode(n, 0.45, Some(near)),
            ])
        };
        let plain =
            |n: f64, f: f64| dist(vec![point_mode(f, 0.55, None), point_mode(n, 0.45, None)]);
        let params = [(30.0, 150.0), (12.0, 40.0), (10.0, 36.0), (9.0, 61.0)];
        let set = |level: &mut crate::model::LevelProfile, d: &dyn Fn(f64, f64) -> Distribution| {
            let [l, os, or, g] = params.map(|(n, f)| Some(d(n, f)));
            (level.l_ns, level.o_s_ns, level.o_r_ns, level.g_ns) = (l, os, or, g);
        };
        set(level, &two);
        let hop_gap = |profile: &Profile, pick| {
            let costs = RuntimeCosts::from_profile(profile, &machine, pick).unwrap();
            let l = costs.between(0, 1).unwrap();
            (l.hop_ps, l.gap_ps)
        };
        // near: L 30 + o_s 12 + o_r 10; gap max(g 9, o 11); far: 150 + 40 + 36, max(61, 38).
        assert_eq!(hop_gap(&profile, Pick::Dominant), (52_000, 11_000));
        assert_eq!(hop_gap(&profile, Pick::Slowest), (226_000, 61_000));
        let level = profile
            .levels
            .iter_mut()
            .find(|l| l.runtime.is_some())
            .unwrap();
        set(level, &plain);
        assert_eq!(hop_gap(&profile, Pick::Dominant), (226_000, 61_000));
    }
}
