//! A calibrated machine profile as plain data: what `herald calibrate` measured, per level of
//! the machine's hierarchy, with its spread and modes.
//!
//! The type lives in `model` (not in `calibrate`) so the planner can read a profile without
//! depending on clocks or threads. Measuring is `calibrate`'s job; this module only holds,
//! checks (schema version, host, processor) and converts the data.
//!
//! # JSON
//!
//! ```text
//! { "schema": 1, "host": "…", "cpu": { "vendor": "GenuineIntel", "model": "…", … },
//!   "date": "2026-…Z", "tool": "herald 0.1.0", "mode": "full",
//!   "duration_s": 41.2, "clock_overhead_ns": 17.0,
//!   "topology": { "pus": 2, "os_indices": [0, 1], "summary": "machine 1×2 …", "levels": [ … ] },
//!   "levels": [ { "name": "l3", "depth": 4, "pair": [0, 1], "slices": 900,
//!                 "raw_hop_ns": {…}, "one_way_ns": {…}, "L_ns": {…}, "o_s_ns": {…},
//!                 "o_r_ns": {…}, "g_ns": {…}, "G_ns_per_byte": {…}, "lambda": {…},
//!                 "capacity": null, "note": null, "runtime": {…} }, … ],
//!   "unsettled": [ "l3.g_ns" ], "switch_ns": {…} }
//! ```
//!
//! A profile of MPI (`herald-mpi calibrate`) may give a level `"pieces": { "piece_bytes": 4032,
//! "upto_bytes": 64512, "trials": [ … ] }` ([`MessagePieces`]): how its transport cuts long
//! messages there, and the profile `"combine_ns": [ { "bytes": 32768, "ns": {…} }, … ]` (what
//! adding a received vector into a rank's own costs, [`Profile::combine_ns`]); herald's own
//! profiles have neither.
//!
//! Each measured quantity is a [`Distribution`]: median, p10, p90 over the measurement slices,
//! and its modes (value and share of measuring time). A level where no pair of PUs has its
//! lowest common ancestor (nothing to measure), or a capacity that needs more cores than the
//! level has, is `null`: unknown, never invented.
//!
//! # Conversion to models (exact)
//!
//! [`LevelProfile::logp`] and [`LevelProfile::postal`] pick one value per parameter (see
//! [`Pick`]) and round it to a grid: **1 ns** for `L`, `o_s`, `o_r`, `g` (so they are whole
//! nanoseconds) and **1/1000 ns per byte** for `G`. Then, exactly:
//!
//! * LogP has one overhead `o` for both ends: `o = (o_s + o_r)/2` (a multiple of 1/2 ns), so
//!   `L + 2o = L + o_s + o_r`, the measured one-way time. A negative measured `L` (possible on
//!   shared memory, where the line transfer happens inside the overheads) becomes `L = 0` and
//!   `o = (L + o_s + o_r)/2`, which keeps `L + 2o` unchanged. (Each parameter is picked from
//!   its own distribution; where the picks sum to no positive time — seen with more ranks
//!   than CPUs — `L + 2o` is the measured one-way time picked alike, and a level where that
//!   is not positive either makes no LogP model.)
//! * Postal: `λ = (L + o_s + o_r) / max(g, o_s)`, clamped to at least 1. The postal unit is
//!   the time a sender is occupied per message: it cannot start sends faster than its overhead
//!   `o_s` allows, nor faster than the gap `g`; and a message is usable by its receiver after
//!   the one-way time `L + o_s + o_r` from the start of its send.

use super::{LogP, ModelError, Postal};
use crate::time::Ratio;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The profile schema version this build reads and writes.
pub const PROFILE_SCHEMA: u32 = 1;

/// Why a profile could not be read, checked or converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// The file could not be read or written.
    #[error("cannot access profile {path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        reason: String,
    },
    /// The text is not a profile (not JSON, or fields missing or of the wrong type).
    #[error("malformed profile: {0}")]
    Malformed(String),
    /// The profile was written with another schema version.
    #[error("profile schema version {found}, this herald reads version {expected} (recalibrate, or --force)")]
    Schema {
        /// The version in the file.
        found: u32,
        /// The version this build reads.
        expected: u32,
    },
    /// The profile was measured on another host.
    #[error("profile measured on host {found:?}, this is {expected:?} (recalibrate, or --force)")]
    Host {
        /// The host in the file.
        found: String,
        /// This host.
        expected: String,
    },
    /// The profile was measured on another processor than this machine's: the host's name
    /// stayed, the hardware under it did not (a virtual machine moved to another host, say).
    #[error(
        "profile measured on CPU {found}, this machine's is {expected} (recalibrate, or --force)"
    )]
    Cpu {
        /// The processor in the file.
        found: String,
        /// This machine's.
        expected: String,
    },
    /// A level has no such measured parameter (not measurable there).
    #[error("level {level}: {parameter} was not measured")]
    NotMeasured {
        /// The level's name.
        level: String,
        /// The missing parameter.
        parameter: &'static str,
    },
    /// No level of that name.
    #[error("the profile has no level {0:?}")]
    NoLevel(String),
    /// The measured values do not make a valid model.
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// One mode of a multimodal distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mode {
    /// The median of the samples in this mode.
    pub center: f64,
    /// The 10th percentile of the samples in this mode.
    pub p10: f64,
    /// The 90th percentile of the samples in this mode.
    pub p90: f64,
    /// The share of the measuring time spent in this mode, in `0 ..= 1`.
    pub share: f64,
    /// The number of samples (slices) in this mode.
    pub samples: usize,
    /// The latency regime this mode's samples were measured in, where the calibration names it:
    /// the raw one-way hop between the pair's PUs (ns) at the center of that regime. `herald
    /// calibrate` groups a runtime quantity measured between two PUs by the hop timed just
    /// before each of its cases (forty-second session), and the PRTT probe's quantities (`L`,
    /// `o_s`, `o_r`, `g`, …) by the hops timed just before and after each of its slices
    /// (seventy-third session); `None` for modes found in the quantity's own values
    /// ([`find_modes`](crate::calibrate::find_modes)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regime_hop_ns: Option<f64>,
}

/// The distribution of one measured quantity over the measurement slices.
///
/// `median`, `p10` and `p90` are sample values (never interpolated between modes); `modes`
/// lists the modes, largest share first (one mode for unimodal data).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    /// The (lower) median.
    pub median: f64,
    /// The 10th percentile.
    pub p10: f64,
    /// The 90th percentile.
    pub p90: f64,
    /// The number of samples.
    pub samples: usize,
    /// The modes, largest share first.
    pub modes: Vec<Mode>,
    /// Whether the mode estimates were stable when measuring stopped.
    pub settled: bool,
}

impl Distribution {
    /// The value chosen by `pick`: the median, the center of the mode with the largest share,
    /// the largest mode center (the slowest regime, for conservative planning) or the smallest.
    /// Where every mode names its latency regime ([`Mode::regime_hop_ns`]), the slowest and the
    /// fastest are the centers of the modes of the slowest and the fastest regime (by the hop),
    /// so that every quantity of a profile is taken in one regime, whichever of its values is
    /// the largest.
    ///
    /// ```
    /// use herald::model::{Distribution, Mode, Pick};
    /// let mode = |center: f64, share: f64, hop: f64| Mode {
    ///     center, p10: center, p90: center, share, samples: 10, regime_hop_ns: Some(hop),
    /// };
    /// // A cost that is smaller in the host's slow regime (hop 225 ns) than in its fast one.
    /// let d = Distribution {
    ///     median: 31.0, p10: 21.0, p90: 32.0, samples: 30,
    ///     modes: vec![mode(31.0, 0.8, 50.0), mode(21.0, 0.2, 225.0)],
    ///     settled: true,
    /// };
    /// assert_eq!(d.pick(Pick::Dominant), 31.0);
    /// assert_eq!(d.pick(Pick::Slowest), 21.0);
    /// assert_eq!(d.pick(Pick::Fastest), 31.0);
    /// ```
    pub fn pick(&self, pick: Pick) -> f64 {
        let by_regime =
            !self.modes.is_empty() && self.modes.iter().all(|m| m.regime_hop_ns.is_some());
        let hop = |m: &&Mode| m.regime_hop_ns.unwrap_or(f64::NAN);
        match pick {
            Pick::Median => self.median,
            Pick::Dominant => self.modes.first().map_or(self.median, |m| m.center),
            Pick::Slowest if by_regime => self
                .modes
                .iter()
                .max_by(|a, b| hop(a).total_cmp(&hop(b)))
                .map_or(self.median, |m| m.center),
            Pick::Fastest if by_regime => self
                .modes
                .iter()
                .min_by(|a, b| hop(a).total_cmp(&hop(b)))
                .map_or(self.median, |m| m.center),
            Pick::Slowest => self
                .modes
                .iter()
                .map(|m| m.center)
                .fold(self.median, f64::max),
            Pick::Fastest => self
                .modes
                .iter()
                .map(|m| m.center)
                .fold(self.median, f64::min),
        }
    }

    /// Whether the distribution has more than one mode.
    pub fn is_multimodal(&self) -> bool {
        self.modes.len() > 1
    }
}

/// Which value of a [`Distribution`] a model conversion uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pick {
    /// The center of the mode with the largest share of time (the default). Runtime costs
    /// ([`RuntimeCosts`](crate::model::RuntimeCosts)) take every quantity in one latency
    /// regime where the calibration names them: the one-line call's largest mode's.
    #[default]
    Dominant,
    /// The largest mode center: plan for the slowest regime seen.
    Slowest,
    /// The smallest mode center: the fastest regime seen.
    Fastest,
    /// The median over all slices.
    Median,
}

/// How many simultaneous transfers cross a level before the per-transfer time grows (the `w`
/// of the fat-tree view).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    /// The largest number of simultaneous transfers whose per-transfer time stayed within
    /// the tolerance of a lone transfer's.
    pub transfers: u32,
    /// Whether the level had no room for more transfers, so the true capacity may be larger.
    pub at_least: bool,
    /// The per-transfer one-way time (ns, median) at each number of simultaneous transfers.
    pub curve: Vec<(u32, f64)>,
}

/// What calibration found at one level of the hierarchy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelProfile {
    /// The level's name (`l3`, `package`, …).
    pub name: String,
    /// The level's depth in the hierarchy (0 is the machine).
    pub depth: usize,
    /// The OS indices of the two PUs measured (their lowest common ancestor is this level).
    pub pair: Option<[usize; 2]>,
    /// The number of measurement slices behind the distributions.
    pub slices: usize,
    /// One-way time of a raw atomic ping-pong on one cache line: the honest baseline.
    pub raw_hop_ns: Option<Distribution>,
    /// One-way time of a one-line message over a channel, `PRTT(1,0,1)/2`.
    pub one_way_ns: Option<Distribution>,
    /// LogP latency `L` (one-way time minus both overheads).
    #[serde(rename = "L_ns")]
    pub l_ns: Option<Distribution>,
    /// Send overhead.
    pub o_s_ns: Option<Distribution>,
    /// Receive overhead.
    pub o_r_ns: Option<Distribution>,
    /// Gap between consecutive one-line messages.
    pub g_ns: Option<Distribution>,
    /// LogGP gap per payload byte (per line divided by the 56 payload bytes of a line).
    #[serde(rename = "G_ns_per_byte")]
    pub big_g_ns_per_byte: Option<Distribution>,
    /// Postal latency λ = (L + o_s + o_r) / max(g, o_s).
    pub lambda: Option<Distribution>,
    /// Concurrent-transfer capacity; `None` when the level has too few cores to measure it.
    pub capacity: Option<Capacity>,
    /// Why something is missing, if it is.
    pub note: Option<String>,
    /// herald's runtime measured through its own collective calls on this level's pair (the
    /// cost model of [`RuntimeCosts`](super::RuntimeCosts)); absent from profiles written before
    /// herald measured it, and from profiles of other transports (MPI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<RuntimeCalibration>,
    /// How the transport cuts long messages at this level, where cutting measured faster than
    /// sending one message (an MPI library's eager limit, measured by `herald-mpi calibrate`);
    /// absent where nothing was cut, and from herald's own profiles. The level's `L, o, g, G`
    /// were measured with the cutting in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pieces: Option<MessagePieces>,
}

/// A transport's message cutting at one level of a profile: a message of more than
/// `piece_bytes` and at most `upto_bytes` bytes goes as `⌈len / piece_bytes⌉` pieces of nearly
/// equal length. MPI libraries send a message eagerly (copied through a buffer) up to a limit
/// and by a rendezvous (a handshake first) above it; just above the limit one message then
/// costs more than two pieces under it, and `herald-mpi calibrate` measures where.
///
/// # Examples
///
/// ```
/// use herald::model::MessagePieces;
/// let p = MessagePieces {
///     piece_bytes: 2048,
///     upto_bytes: 8192,
///     trials: vec![],
///     whole_big_g_ns_per_byte: None,
/// };
/// assert_eq!(p.count(2048), 1);
/// assert_eq!(p.count(2049), 2);
/// assert_eq!(p.count(8192), 4);
/// assert_eq!(p.count(8193), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagePieces {
    /// The largest piece, bytes.
    pub piece_bytes: u64,
    /// The longest message cut, bytes.
    pub upto_bytes: u64,
    /// The evidence: every (piece size, message size) tried, with the median round trip of
    /// the message sent whole and in pieces.
    #[serde(default)]
    pub trials: Vec<PieceTrial>,
    /// `G` of the messages longer than `upto_bytes`, which go whole (on one host by the
    /// library's single copy), where the level's `G_ns_per_byte` was fitted on messages sent
    /// in pieces and two or more calibrated sizes went whole; absent otherwise (the level's
    /// `G` then holds for every size). [`LevelProfile::logp`] gives it to the model as
    /// [`LogP::with_whole_gap`] above `upto_bytes`.
    #[serde(
        rename = "G_whole_ns_per_byte",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub whole_big_g_ns_per_byte: Option<Distribution>,
}

/// One measurement behind a [`MessagePieces`]: round trips of a message of `bytes` bytes, sent
/// whole and cut into pieces of at most `piece_bytes`, alternating (medians, ns).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PieceTrial {
    /// The piece size tried, bytes.
    pub piece_bytes: u64,
    /// The message size, bytes.
    pub bytes: u64,
    /// Median round trip of the message sent whole, ns.
    pub whole_ns: f64,
    /// Median round trip of the message sent in pieces, ns.
    pub pieces_ns: f64,
    /// Median time per message of a stream of messages sent whole back to back, ns (absent
    /// in profiles written before the stream was measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_whole_ns: Option<f64>,
    /// Median time per message of the same stream sent in pieces, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_pieces_ns: Option<f64>,
}

impl PieceTrial {
    /// Whether cutting measured faster: a round trip in pieces at most `margin` times the
    /// whole message's, and, where the stream was measured, a stream in pieces also at most
    /// `margin` times the whole messages' (pieces that win a round trip can lose broadcasts
    /// sent back to back several times over).
    ///
    /// ```
    /// use herald::model::PieceTrial;
    /// let t = PieceTrial {
    ///     piece_bytes: 4032,
    ///     bytes: 32256,
    ///     whole_ns: 15113.0,
    ///     pieces_ns: 12449.0,
    ///     stream_whole_ns: Some(5096.0),
    ///     stream_pieces_ns: Some(6277.0),
    /// };
    /// assert!(!t.cut_wins(0.9)); // wins the round trip, loses the stream
    /// let round_trip_only = PieceTrial { stream_whole_ns: None, stream_pieces_ns: None, ..t };
    /// assert!(round_trip_only.cut_wins(0.9));
    /// ```
    pub fn cut_wins(&self, margin: f64) -> bool {
        let stream = match (self.stream_whole_ns, self.stream_pieces_ns) {
            (Some(w), Some(p)) => p <= margin * w,
            _ => true,
        };
        self.round_trip_wins(margin) && stream
    }

    /// Whether the round trip in pieces took at most `margin` times the whole message's (the
    /// stream not considered).
    ///
    /// ```
    /// use herald::model::PieceTrial;
    /// let t = PieceTrial {
    ///     piece_bytes: 4032,
    ///     bytes: 8064,
    ///     whole_ns: 7681.0,
    ///     pieces_ns: 3986.0,
    ///     stream_whole_ns: None,
    ///     stream_pieces_ns: None,
    /// };
    /// assert!(t.round_trip_wins(0.9)); // 0.52 of the whole message's round trip
    /// ```
    pub fn round_trip_wins(&self, margin: f64) -> bool {
        self.pieces_ns <= margin * self.whole_ns
    }
}

impl MessagePieces {
    /// How many pieces a message of `bytes` bytes goes in.
    pub fn count(&self, bytes: u64) -> u64 {
        if bytes > self.piece_bytes && bytes <= self.upto_bytes && self.piece_bytes > 0 {
            bytes.div_ceil(self.piece_bytes)
        } else {
            1
        }
    }
}

/// herald's runtime measured through its own operations on one pair of PUs: 2-rank broadcasts
/// with [`CommRank::broadcast_with`](crate::runtime::CommRank::broadcast_with), each timed from
/// the root's call to the later return after a barrier, with fresh data written on the root
/// before every repetition (the median of the repetitions per slice). Each quantity is a distribution
/// over measurement slices, with modes, like the channel's parameters; the sizes behind each
/// are recorded with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeCalibration {
    /// Time of a streamed broadcast of one line (48 payload bytes: the call's 8-byte
    /// header and the payload share one 56-byte line).
    pub one_line_ns: Distribution,
    /// Per-line cost of a short stream, from one line to `burst_lines` lines:
    /// `(T(burst) − T(one line)) / (burst_lines − 1)`. A receiver reads a short message only
    /// once its last line is written, so sending and receiving do not overlap.
    pub burst_line_ns: Distribution,
    /// The receiver's read-ahead in lines (the runtime's burst), the size of the short stream.
    pub burst_lines: u64,
    /// Sustained cost per line of a long stream:
    /// `(T(long) − T(short)) / (lines(long) − lines(short))` for the sizes `stream_bytes`
    /// (both many times the ring's capacity, so ring flow control is included).
    pub line_ns: Distribution,
    /// The two long streamed payload sizes behind `line_ns`, bytes.
    pub stream_bytes: [u64; 2],
    /// Single copy: one-way time of a broadcast of `direct_bytes[0]` bytes.
    pub direct_ns: Distribution,
    /// Single copy: ns per byte between `direct_bytes[0]` and `direct_bytes[1]`.
    pub copy_ns_per_byte: Distribution,
    /// Single copy: ns per byte between `direct_bytes[1]` and `direct_bytes[2]` (payloads
    /// larger than the caches copy slower).
    pub copy_large_ns_per_byte: Distribution,
    /// The three single-copy payload sizes, bytes.
    pub direct_bytes: [u64; 3],
    /// The single-copy chunk size the runtime used (bytes per descriptor).
    pub chunk_bytes: u64,
    /// Single copy: the extra time per block a receiver spends when a payload comes in many
    /// blocks (one chunk per block): with `D16 = T(16 blocks) − T(1 block)` at
    /// `direct_bytes[1]` bytes and `D2 = T(2 blocks) − T(1 block)` at `direct_bytes[0]`,
    /// `(D16 − D2) / 14` where the profile has [`direct_exec_ns`](Self::direct_exec_ns), else
    /// (profiles written before it) `D16 / 15`. Absent from profiles written before herald
    /// measured it (then 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direct_block_ns: Option<Distribution>,
    /// Single copy: what the executor costs a call that runs it (a payload of several blocks
    /// or chunks; one chunk in one block goes without it), beyond its blocks:
    /// `D2 − direct_block_ns` ([`direct_block_ns`](Self::direct_block_ns)).
    /// Absent from profiles written before herald measured it (then 0: before, every single
    /// copy ran the executor, so `direct_ns` held its cost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direct_exec_ns: Option<Distribution>,
    /// The one-line broadcast of `one_line_ns` with both ranks pinned to the pair's first PU:
    /// what a message costs through the runtime when its receiver shares the sender's PU (the
    /// waiting rank spins, then yields). Absent from profiles written before herald measured
    /// it (then [`Profile::switch_ns`] stands in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_one_line_ns: Option<Distribution>,
    /// Single copy: ns per byte between `direct_bytes[2]` and `huge_bytes` (payloads past the
    /// last-level cache). Absent from profiles written before herald measured it (then
    /// `copy_large_ns_per_byte` continues).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_huge_ns_per_byte: Option<Distribution>,
    /// The largest single-copy payload measured, bytes (with `copy_huge_ns_per_byte`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub huge_bytes: Option<u64>,
    /// Single copy: ns per byte between `upper_bytes` and `direct_bytes[2]`; with it,
    /// `copy_large_ns_per_byte` covers only `direct_bytes[1]` to `upper_bytes` (the copy's
    /// cost per byte falls past one core's L2: 0.047 against 0.039 ns/B on this machine in
    /// the slow latency mode). Absent from profiles written before herald measured it
    /// (thirty-first session; then `copy_large_ns_per_byte` covers the whole range).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_upper_ns_per_byte: Option<Distribution>,
    /// The payload between `direct_bytes[1]` and `direct_bytes[2]` where
    /// `copy_upper_ns_per_byte` takes over, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper_bytes: Option<u64>,
    /// Single copy: ns per byte between `direct_bytes[0]` and `mid_bytes` (`(T(mid_bytes) −
    /// T(direct_bytes[0])) / (mid_bytes − direct_bytes[0])`); with it, the model prices the
    /// copy below `direct_bytes[1]` by two straight lines through the calibrated calls at
    /// `direct_bytes[0]`, `mid_bytes` and `direct_bytes[1]` instead of one through the first
    /// and the last (a 32 KiB copy measured 1.12× that one line's price in the sixty-seventh
    /// session, docs/fidelity.md). Absent from profiles written before herald measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_mid_ns_per_byte: Option<Distribution>,
    /// The payload between `direct_bytes[0]` and `direct_bytes[1]` of the middle point, bytes
    /// (with `copy_mid_ns_per_byte`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mid_bytes: Option<u64>,
    /// A streamed call through the runtime's executor, beyond one of the same lines in one
    /// block: the `burst_lines`-line broadcast of `burst_line_ns` in 2 blocks, less the same in
    /// 1 block. A stream of one block of at most `burst_lines` lines takes a shorter path (its
    /// lines straight through the rings); one of several blocks or more lines runs the
    /// executor, whose set-up and per-poll pass over the rank's edges cost this much more.
    /// Absent from profiles written before herald measured it (then 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_ns: Option<Distribution>,
    /// The same for a two-line broadcast (104 bytes) in 2 blocks against 1: the executor's
    /// extra cost grows with the lines it handles (`exec_ns` at `burst_lines` lines). Absent
    /// from profiles written before herald measured it (then `exec_ns` at every length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_short_ns: Option<Distribution>,
    /// A streamed broadcast's second line: the two-line broadcast (104 bytes) in one block
    /// less the one-line broadcast (`one_line_ns`). It costs more than the average line of
    /// `burst_line_ns` (on the development VM 36–46 ns against 18 in the state between the
    /// host's two modes, docs/fidelity.md, "Sixty-eighth session"); with it the model prices
    /// a stream's second line at this and its lines from the third to `burst_lines` at what
    /// is left of the burst's cost. Absent from profiles written before herald measured it
    /// (then every line of a short stream costs `burst_line_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_two_ns: Option<Distribution>,
    /// A posted broadcast ([`CommRank::broadcast`](crate::CommRank::broadcast) of a
    /// communicator that posts, [`CommOptions::posted_broadcast`](crate::CommOptions::posted_broadcast))
    /// of one line (48 payload bytes): the root writes a slot, the other rank reads it. Absent
    /// from profiles written before herald measured it (then posting is not modelled, and a
    /// planned communicator posts by its rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posted_ns: Option<Distribution>,
    /// A posted broadcast's cost per further line: `(T(posted_bytes) − T(48 B)) /
    /// (lines(posted_bytes) − 1)`, 64 payload bytes per further line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posted_line_ns: Option<Distribution>,
    /// The longer posted payload behind `posted_line_ns`, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posted_bytes: Option<u64>,
    /// A posted broadcast of two lines between the pair (112 bytes: the first line's 48 and a
    /// full second line), the whole call. The second line costs more than the further ones:
    /// the reader fetches it only after it saw the first, while the further lines' fetches
    /// overlap. Absent from profiles written before herald measured it (twenty-third session;
    /// then every further line costs `posted_line_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posted_two_ns: Option<Distribution>,
    /// Posted broadcasts between the pair of further lengths short of a full slot, the whole
    /// call, at `posted_curve_bytes` (one per length from three lines to one short of a full
    /// slot). The cost is not straight in the lines: on the development VM it rose in steps
    /// (70–79 ns up to five lines, then 40–45 ns more at six; docs/fidelity.md, "Fifty-sixth
    /// session"), which the two ends of a slot do not tell. Absent from profiles written
    /// before herald measured it (fifty-seventh session; then the lengths between two lines
    /// and a full slot are interpolated between those two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posted_curve_ns: Option<Vec<Distribution>>,
    /// The payloads behind `posted_curve_ns`, bytes, ascending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posted_curve_bytes: Option<Vec<u64>>,
    /// A posted broadcast's cost per further line beyond `posted_bytes`, between the pair:
    /// `(T(posted_long_bytes) − T(posted_bytes)) / (lines difference)`, through a communicator
    /// whose ranks share CPUs (its slots are longer; the protocol is the same). Long slots
    /// stream from the writer's cache faster per line than short ones (the hardware
    /// prefetches). Absent from profiles written before herald measured it (then
    /// `posted_line_ns` at every length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posted_long_line_ns: Option<Distribution>,
    /// The payload behind `posted_long_line_ns`, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posted_long_bytes: Option<u64>,
    /// A posted broadcast of one line between two ranks pinned to one PU (a communicator
    /// whose ranks share CPUs, [`CommOptions::shared_posted_bytes`](crate::CommOptions::shared_posted_bytes)):
    /// the root posts and returns, the other rank takes the PU and reads. Absent from profiles
    /// written before herald measured it (twenty-second session; then posting where ranks
    /// share PUs is not modelled, and a planned communicator posts by its rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_posted_ns: Option<Distribution>,
    /// The same's cost per further line: `(T(shared_posted_bytes) − T(48 B)) /
    /// (lines(shared_posted_bytes) − 1)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_posted_line_ns: Option<Distribution>,
    /// The longer payload behind `shared_posted_line_ns`, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_posted_bytes: Option<u64>,
    /// What a further reader on one PU adds per further line of a post: three ranks pinned to
    /// one PU against two, `((T₃(b) − T₂(b)) − (T₃(48 B) − T₂(48 B))) / (lines(b) − 1)` with
    /// `b` = `shared_posted_read_bytes` (a third rank costs its handoff and its read; the
    /// handoff cancels). The rest of `shared_posted_line_ns` is the root's post: its writes
    /// into the slot cost more than a read of the slot from the PU's cache (at 64 KiB here
    /// about 70 % of the call beyond the handoff, docs/fidelity.md, "Fiftieth session").
    /// Absent from profiles written before herald measured it (then each further line's cost
    /// is halved between the post and a read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_posted_read_line_ns: Option<Distribution>,
    /// The longer payload behind `shared_posted_read_line_ns`, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_posted_read_bytes: Option<u64>,
    /// Single copy between two ranks pinned to one PU, ns per byte: `(T(direct_bytes[1]) −
    /// T(direct_bytes[0])) / (direct_bytes[1] − direct_bytes[0])`, the root's fresh payload
    /// copied by the other rank from the PU's own cache. Absent from profiles written before
    /// herald measured it (twenty-third session; then such copies cost what a copy between the
    /// pair costs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_copy_ns_per_byte: Option<Distribution>,
    /// Single copy between two ranks pinned to one PU beyond `direct_bytes[1]`, ns per byte:
    /// `(T(direct_bytes[2]) − T(direct_bytes[1])) / (direct_bytes[2] − direct_bytes[1])` on one
    /// PU, the root's fresh payload copied by the other rank. Such a payload outgrows the PU's
    /// private caches, but the reader still reads lines its own PU wrote, not another PU's.
    /// Absent from profiles written before herald measured it (forty-first session; then such
    /// copies cost what a copy between the pair costs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_copy_large_ns_per_byte: Option<Distribution>,
    /// Single copy between two ranks pinned to one PU beyond `direct_bytes[2]`, ns per byte:
    /// `(T(huge_bytes) − T(direct_bytes[2])) / (huge_bytes − direct_bytes[2])` on one PU, as
    /// `shared_copy_large_ns_per_byte` below it. Absent from profiles written before herald
    /// measured it (fifty-fourth session; then `shared_copy_large_ns_per_byte` continues).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_copy_huge_ns_per_byte: Option<Distribution>,
    /// What a single copy costs beyond `T(bytes)` when the reader's buffer was read by the
    /// other PU since the reader last wrote it, ns, at each of `held_bytes`: the reader's
    /// writes must first take its lines back from that PU's cache. A rank that forwards what
    /// it copied to a rank on another PU meets this in every call of a repeated broadcast (its
    /// readers hold its buffer from the call before), as do alternating roots. Measured as
    /// `T(held) − T(plain)` at each size, the held case preceded (untimed) by a single copy
    /// of the reader's buffer back to the root. The runtime streams such copies inside a
    /// window of sizes (32 KiB – 2 MiB), so points inside it price the streamed copy and
    /// points outside it the plain one. Absent from profiles written before herald measured
    /// it (thirtieth session; then such copies cost what any copy costs); three points
    /// (64 KiB, 256 KiB, 1 MiB) in profiles of that session, five since the thirty-first
    /// (4 KiB and 16 KiB before them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_extra_ns: Option<Vec<Distribution>>,
    /// The payloads behind `held_extra_ns`, bytes, ascending, one per point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_bytes: Option<Vec<u64>>,
    /// What a single copy of `huge_bytes` costs per byte beyond the calibrated one (whose two
    /// buffers, `2 · huge_bytes`, are all a repeated broadcast touches) when the reader copies
    /// into the least recently written of several buffers, ns per byte, at each of
    /// `footprint_bytes`: the bytes the broadcasts touch in all (the root's buffer and the
    /// reader's). A broadcast among `n` ranks touches `n` buffers of its payload; once they
    /// outgrow the caches, each copy reads and writes memory. Measured as `T(rotating) −
    /// T(huge)` over `huge_bytes`. Absent from profiles written before herald measured it
    /// (fifty-second session; then every copy costs what the calibrated one does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint_extra_ns_per_byte: Option<Vec<Distribution>>,
    /// The footprints behind `footprint_extra_ns_per_byte`, bytes, ascending, each above
    /// `2 · huge_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint_bytes: Option<Vec<u64>>,
    /// What a single copy costs beyond its own time when the buffer it copies from was last
    /// written by its owner's single copy into a buffer another PU holds (a forwarder's
    /// buffer in a repeated broadcast: the forwarder's readers hold it from the call before),
    /// rather than by the owner itself, ns, at each of `forwarded_bytes`. Inside the
    /// runtime's streaming window (32 KiB – 2 MiB) that copy streams, and the next reader
    /// reads its bytes from memory. Measured as `T(forwarded) − T(held)` at each size: both
    /// held copies (see `held_extra_ns`), the forwarded one with no fresh data written by the
    /// root after its untimed copy back. Absent from profiles written before herald measured
    /// it (fifty-third session; then such copies cost what any copy costs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forwarded_extra_ns: Option<Vec<Distribution>>,
    /// The payloads behind `forwarded_extra_ns`, bytes, ascending, one per point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forwarded_bytes: Option<Vec<u64>>,
    /// How the run-time choice between posting and not tells the host's latency regime
    /// ([`TimedPosting`](crate::runtime::TimedPosting)): a load of a line that the pair's other
    /// PU wrote last, timed between two clock reads (included) by the code the choice times
    /// its stamps with, ns. Timed after the raw hop before each case, so its modes are the
    /// hop's regimes; its `samples` count cases (each the median of 16 loads), not slices.
    /// Absent from profiles written before herald measured it (then the choice takes 0.6 of a
    /// regime's hop between PUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp_load_ns: Option<Distribution>,
}

/// One level of the topology summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyLevel {
    /// The level's name.
    pub name: String,
    /// Its number of nodes.
    pub count: usize,
    /// PUs per node, if uniform.
    pub pus_per_node: Option<usize>,
}

/// The topology the profile was measured on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologySummary {
    /// Number of PUs.
    pub pus: usize,
    /// OS indices of the PUs in logical order.
    pub os_indices: Vec<usize>,
    /// One line: `machine 1×2, l3 1×2, core 2×1, …`.
    pub summary: String,
    /// The levels, machine first.
    pub levels: Vec<TopologyLevel>,
}

impl TopologySummary {
    /// The summary of `h`.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::model::{Hierarchy, LevelKind::*, TopologySummary};
    /// let h = Hierarchy::uniform(&[(Package, 2), (Core, 4), (Pu, 1)])?;
    /// let s = TopologySummary::of(&h);
    /// assert_eq!(s.pus, 8);
    /// assert_eq!(s.levels.len(), h.levels().len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn of(h: &super::Hierarchy) -> TopologySummary {
        let levels: Vec<TopologyLevel> = h
            .levels()
            .iter()
            .map(|l| TopologyLevel {
                name: l.name(),
                count: l.len(),
                pus_per_node: l.pus_per_node(),
            })
            .collect();
        let summary = levels
            .iter()
            .map(|l| match l.pus_per_node {
                Some(p) => format!("{} {}×{}", l.name, l.count, p),
                None => format!("{} {}", l.name, l.count),
            })
            .collect::<Vec<_>>()
            .join(", ");
        TopologySummary {
            pus: h.pu_count(),
            os_indices: h.os_indices().to_vec(),
            summary,
            levels,
        }
    }
}

/// A calibrated machine profile (see the module docs for the JSON and the conversions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// Schema version ([`PROFILE_SCHEMA`]).
    pub schema: u32,
    /// The host it was measured on.
    pub host: String,
    /// The processor it was measured on ([`this_cpu`] when it was written); absent from
    /// profiles written before herald recorded it, and where the system does not name its
    /// processor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuIdentity>,
    /// When (UTC, RFC 3339).
    pub date: String,
    /// The program that measured it.
    pub tool: String,
    /// `quick` or `full`.
    pub mode: String,
    /// Measuring time in seconds.
    pub duration_s: f64,
    /// The cost of one clock read, subtracted from every timed interval.
    pub clock_overhead_ns: f64,
    /// The clock's resolution (the step between the values its consecutive reads differ by,
    /// [`clock_resolution`](crate::calibrate::clock_resolution)): single intervals are
    /// multiples of it, so the runtime probe takes the medians of its single broadcasts spread
    /// over it ([`smoothed_median`](crate::stats::smoothed_median)). Absent from profiles
    /// written before herald recorded it; 1 in profiles written before the fifty-sixth
    /// session, whose measure the conversion from cycles took to 1 ns on the development VM.
    #[serde(default)]
    pub clock_resolution_ns: Option<f64>,
    /// The topology.
    pub topology: TopologySummary,
    /// Per level, machine first (the PU level is left out: a PU does not send to itself).
    pub levels: Vec<LevelProfile>,
    /// The quantities (`level.key`) whose modes had not settled when the budget ended.
    pub unsettled: Vec<String>,
    /// One-way handoff between two threads pinned to one CPU that yield while they wait: what
    /// a message costs when its receiver must first be scheduled (ranks sharing a core).
    /// Its spread (`p10` … `p90`) also sets how fast the runtime model takes a PU's turns to
    /// go in a call ([`RuntimeCosts::turn_scales`](crate::model::RuntimeCosts::turn_scales)).
    /// Absent from profiles written before herald measured it.
    #[serde(default)]
    pub switch_ns: Option<Distribution>,
    /// One spin phase of a waiting thread: the runtime's polls, one spin hint apart, before it
    /// yields, timed where nothing ends the wait (the hint's latency varies by CPU; about 25 ns
    /// on the development machine, 3.2 µs a phase). The runtime model lets a single copy's
    /// lender that waits only for readers on other PUs spin this long on each of its turns
    /// ([`RuntimeCosts::spin_ps`](crate::model::RuntimeCosts::spin_ps)). Absent from profiles
    /// written before herald measured it (then such a lender is taken to yield at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spin_ns: Option<Distribution>,
    /// The time to add a received value into a rank's own, at measured sizes (ascending):
    /// herald-mpi's executors sum vectors of `u64` element-wise, reading two and writing one
    /// (`herald-mpi calibrate` times it on values that fit a core's L2 cache and on one that
    /// does not). herald's models charge combining a constant per message; herald-mpi's
    /// allreduce prediction charges [`Profile::combine_ns`] per message combined. Empty in
    /// profiles written by `herald calibrate` and before herald-mpi measured it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub combine_ns: Vec<CombinePoint>,
    /// herald-mpi's broadcasts posted in a shared window against its planner's tree over MPI
    /// point-to-point, among the calibration's ranks when they share one node, at measured
    /// sizes (ascending): what [`Profile::posted_wins`] decides by. Empty in profiles written
    /// by `herald calibrate`, by a calibration whose ranks span nodes, and before herald-mpi
    /// measured it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub posted: Vec<PostedPoint>,
    /// herald-mpi's allreduces posted in a shared window (every rank posts its value, every
    /// rank adds the others') against the allreduce its prediction picks over MPI
    /// point-to-point, as [`Profile::posted`] for broadcasts (`tree_ns` and `tree`: that
    /// allreduce): what [`Profile::posted_allreduce_wins`] decides by. Empty where
    /// [`Profile::posted`] is, and before herald-mpi measured it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub posted_allreduce: Vec<PostedPoint>,
}

/// One measured size of [`Profile::posted`]: a broadcast of `bytes` bytes among `ranks` ranks
/// of one node, posted in a shared window and sent along the planner's tree, alternating, each
/// sample a short loop of broadcasts after a barrier (the slowest rank's time per broadcast).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostedPoint {
    /// The ranks (every one of them on one node).
    pub ranks: u32,
    /// The payload, bytes.
    pub bytes: u64,
    /// Posted in the shared window, ns per broadcast.
    pub posted_ns: Distribution,
    /// Along the planner's tree over MPI point-to-point, ns per broadcast.
    pub tree_ns: Distribution,
    /// The tree, in words.
    pub tree: String,
    /// Posted, one broadcast alone after a barrier (the slowest rank's time): a broadcast's
    /// latency, where the loop of `posted_ns` lets a root's next copy overlap its readers'.
    /// Measured where the ranks have CPUs of their own (where they share CPUs a broadcast
    /// timed alone takes either its copies or a turn of the CPUs); absent otherwise, for
    /// allreduces, and before herald-mpi measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posted_one_ns: Option<Distribution>,
    /// Along the tree, one broadcast alone after a barrier, as `posted_one_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_one_ns: Option<Distribution>,
}

/// The posted and the other side's time at `bytes` among `ranks` ranks, from `points`:
/// linear between measured sizes, the smallest's below them, proportional beyond the largest.
fn interpolate_posted(points: &[PostedPoint], ranks: u32, bytes: u64) -> Option<(f64, f64)> {
    interpolate_points(points, ranks, bytes, |p| {
        Some((p.posted_ns.median, p.tree_ns.median))
    })
}

/// As [`interpolate_posted`], the times of one broadcast alone (`posted_one_ns`,
/// `tree_one_ns`); `None` unless every point at `ranks` ranks has them.
fn interpolate_posted_one(points: &[PostedPoint], ranks: u32, bytes: u64) -> Option<(f64, f64)> {
    interpolate_points(points, ranks, bytes, |p| {
        Some((
            p.posted_one_ns.as_ref()?.median,
            p.tree_one_ns.as_ref()?.median,
        ))
    })
}

/// The two times `of` takes from each of `points` at `ranks` ranks, at `bytes` (as
/// [`interpolate_posted`]); `None` if there is no such point or `of` has nothing for one.
fn interpolate_points(
    points: &[PostedPoint],
    ranks: u32,
    bytes: u64,
    of: impl Fn(&PostedPoint) -> Option<(f64, f64)>,
) -> Option<(f64, f64)> {
    let points: Vec<(f64, f64, f64)> = points
        .iter()
        .filter(|p| p.ranks == ranks)
        .map(|p| of(p).map(|(posted, tree)| (p.bytes as f64, posted, tree)))
        .collect::<Option<_>>()?;
    let b = bytes as f64;
    Some(match points.iter().position(|&(pb, _, _)| b < pb) {
        None => {
            let &(lb, lp, lt) = points.last()?;
            let scale = if lb > 0.0 { b / lb } else { 1.0 };
            (lp * scale, lt * scale)
        }
        Some(0) => (points[0].1, points[0].2),
        Some(i) => {
            let (b0, p0, t0) = points[i - 1];
            let (b1, p1, t1) = points[i];
            let f = (b - b0) / (b1 - b0);
            (p0 + (p1 - p0) * f, t0 + (t1 - t0) * f)
        }
    })
}

/// One measured size of [`Profile::combine_ns`]: combines of `bytes` bytes took `ns`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CombinePoint {
    /// The value's size, bytes.
    pub bytes: u64,
    /// The time of one combine, ns.
    pub ns: Distribution,
}

impl Profile {
    /// Parses a profile from JSON and checks its schema version.
    ///
    /// # Errors
    ///
    /// [`ProfileError::Schema`] for another version; [`ProfileError::Malformed`] if the text is
    /// not a profile.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{Profile, model::ProfileError};
    /// let e = Profile::from_json(r#"{"schema": 999}"#).unwrap_err();
    /// assert!(matches!(e, ProfileError::Schema { found: 999, .. }));
    /// assert!(matches!(Profile::from_json("[1]"), Err(ProfileError::Malformed(_))));
    /// // A field of the wrong type is named by its path.
    /// let text = include_str!("../../tests/data/profile-2core.json")
    ///     .replacen(r#""clock_overhead_ns": "#, r#""clock_overhead_ns": null, "x": "#, 1);
    /// let e = Profile::from_json(&text).unwrap_err().to_string();
    /// assert!(e.starts_with("malformed profile: clock_overhead_ns: invalid type: null"), "{e}");
    /// ```
    pub fn from_json(text: &str) -> Result<Profile, ProfileError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ProfileError::Malformed(e.to_string()))?;
        let found = value
            .get("schema")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| ProfileError::Malformed("no schema version".into()))?;
        if found != u64::from(PROFILE_SCHEMA) {
            return Err(ProfileError::Schema {
                found: u32::try_from(found).unwrap_or(u32::MAX),
                expected: PROFILE_SCHEMA,
            });
        }
        Profile::from_json_unchecked(value)
    }

    /// Parses a profile whatever its schema version (`--force`); it must still have this
    /// version's fields.
    ///
    /// # Errors
    ///
    /// [`ProfileError::Malformed`] if the text is not a profile.
    pub fn from_json_forced(text: &str) -> Result<Profile, ProfileError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ProfileError::Malformed(e.to_string()))?;
        Profile::from_json_unchecked(value)
    }

    /// How long before `now` the profile was calibrated (its [`date`](Self::date)); `None`
    /// where the date is not RFC 3339 or lies after `now`.
    ///
    /// The host's latency state can drift between a calibration and a run in ways a raw hop
    /// does not show: on the development machine a 2.7-hour-old profile predicted 2-rank
    /// broadcasts of up to 4 KiB 16–22 % too slow while a fresh one was within 3 %
    /// (docs/fidelity.md, "Sixty-third session: 2 ranks per mode").
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::Profile;
    /// use std::time::{Duration, UNIX_EPOCH};
    /// let mut p = Profile::from_json(include_str!("../../tests/data/profile-2core.json"))?;
    /// p.date = "2026-12-06T00:08:30Z".into();
    /// let later = UNIX_EPOCH + Duration::from_secs(1_796_525_310); // 02:48:30 that day
    /// assert_eq!(p.age_at(later), Some(Duration::from_secs(9600)));
    /// assert_eq!(p.age_at(UNIX_EPOCH), None);
    /// p.date = "yesterday".into();
    /// assert_eq!(p.age_at(later), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn age_at(&self, now: std::time::SystemTime) -> Option<std::time::Duration> {
        let at = humantime::parse_rfc3339(&self.date).ok()?;
        now.duration_since(at).ok()
    }

    fn from_json_unchecked(value: serde_json::Value) -> Result<Profile, ProfileError> {
        // The field that does not fit, by its path (`levels[3].runtime.direct_block_ns.median`):
        // a value's error alone carries no position.
        let profile: Profile = serde_path_to_error::deserialize(value)
            .map_err(|e| ProfileError::Malformed(format!("{}: {}", e.path(), e.inner())))?;
        for level in &profile.levels {
            let Some(r) = &level.runtime else { continue };
            let [small, large, past] = r.direct_bytes;
            // A slope that starts at a size of its own comes with that size, strictly between
            // the two calibrated sizes around it.
            let point =
                |slope: &Option<Distribution>, at: Option<u64>, (lo, hi), names: &str| match (
                    slope, at,
                ) {
                    (None, None) => Ok(()),
                    (Some(_), Some(b)) if lo < b && b < hi => Ok(()),
                    _ => Err(ProfileError::Malformed(format!(
                        "level {:?}: {names}",
                        level.name
                    ))),
                };
            point(
                &r.copy_upper_ns_per_byte,
                r.upper_bytes,
                (large, past),
                "copy_upper_ns_per_byte needs upper_bytes, strictly between direct_bytes[1] \
                 and direct_bytes[2]",
            )?;
            point(
                &r.copy_mid_ns_per_byte,
                r.mid_bytes,
                (small, large),
                "copy_mid_ns_per_byte needs mid_bytes, strictly between direct_bytes[0] and \
                 direct_bytes[1]",
            )?;
            // Points measured at sizes: one per size, sizes ascending.
            let sized =
                |points: Option<&Vec<Distribution>>, bytes: Option<&Vec<u64>>, names: &str| {
                    let ascending = bytes.is_none_or(|b| b.windows(2).all(|w| w[0] < w[1]));
                    if points.map(Vec::len) != bytes.map(Vec::len) || !ascending {
                        return Err(ProfileError::Malformed(format!(
                            "level {:?}: {names} must have one point per size, sizes ascending",
                            level.name
                        )));
                    }
                    Ok(())
                };
            sized(
                r.held_extra_ns.as_ref(),
                r.held_bytes.as_ref(),
                "held_extra_ns and held_bytes",
            )?;
            let (points, bytes) = (
                r.footprint_extra_ns_per_byte.as_ref(),
                r.footprint_bytes.as_ref(),
            );
            let base = r.huge_bytes.map(|h| 2 * h);
            let ascending = bytes.is_none_or(|b| {
                b.windows(2).all(|w| w[0] < w[1])
                    && b.first().is_none_or(|&f| base.is_some_and(|base| f > base))
            });
            if points.map(Vec::len) != bytes.map(Vec::len) || !ascending {
                return Err(ProfileError::Malformed(format!(
                    "level {:?}: footprint_extra_ns_per_byte and footprint_bytes must have one \
                     point per footprint, footprints ascending and above 2 · huge_bytes",
                    level.name
                )));
            }
            sized(
                r.forwarded_extra_ns.as_ref(),
                r.forwarded_bytes.as_ref(),
                "forwarded_extra_ns and forwarded_bytes",
            )?;
            sized(
                r.posted_curve_ns.as_ref(),
                r.posted_curve_bytes.as_ref(),
                "posted_curve_ns and posted_curve_bytes",
            )?;
            let slot = r.posted_bytes.unwrap_or(0);
            if r.posted_curve_bytes
                .as_ref()
                .is_some_and(|b| b.iter().any(|&b| b > slot))
            {
                return Err(ProfileError::Malformed(format!(
                    "level {:?}: posted_curve_bytes must lie within posted_bytes",
                    level.name
                )));
            }
        }
        Ok(profile)
    }

    /// The profile as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        // A profile holds only strings, numbers, options and vectors: serializing cannot fail,
        // except for non-finite floats, which serde_json writes as null.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": {e:?}}}"))
    }

    /// Checks that the profile was measured on `host`.
    ///
    /// # Errors
    ///
    /// [`ProfileError::Host`] otherwise.
    pub fn check_host(&self, host: &str) -> Result<(), ProfileError> {
        if self.host == host {
            Ok(())
        } else {
            Err(ProfileError::Host {
                found: self.host.clone(),
                expected: host.to_owned(),
            })
        }
    }

    /// Checks that the profile was measured on the processor `cpu` (this machine's:
    /// [`this_cpu`]). A profile or a machine that names no processor passes: there is nothing
    /// to compare.
    ///
    /// # Errors
    ///
    /// [`ProfileError::Cpu`] where both name a processor and they differ.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::model::{CpuIdentity, ProfileError};
    /// let intel = CpuIdentity::from_cpuinfo("vendor_id : GenuineIntel\ncpu family : 6\nmodel : 167\n");
    /// let amd = CpuIdentity::from_cpuinfo("vendor_id : AuthenticAMD\ncpu family : 25\nmodel : 1\n");
    /// # let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/data/profile-2026-11-30-AB.json"))?;
    /// # let mut profile = herald::model::Profile::from_json_forced(&text)?;
    /// profile.cpu = intel.clone();
    /// assert!(profile.check_cpu(intel.as_ref()).is_ok());
    /// assert!(matches!(profile.check_cpu(amd.as_ref()), Err(ProfileError::Cpu { .. })));
    /// assert!(profile.check_cpu(None).is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_cpu(&self, cpu: Option<&CpuIdentity>) -> Result<(), ProfileError> {
        match (&self.cpu, cpu) {
            (Some(found), Some(expected)) if found != expected => Err(ProfileError::Cpu {
                found: found.to_string(),
                expected: expected.to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// What combining a message of `bytes` bytes costs, ns, from [`combine_ns`](Self::combine_ns)
    /// picked by `pick`: linear between the measured sizes and from 0 to the first, at the
    /// last size's rate per byte beyond it; `None` if nothing was measured.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{Profile, model::Pick};
    /// let text = std::fs::read_to_string(concat!(
    ///     env!("CARGO_MANIFEST_DIR"), "/tests/data/profile-2core.json"))?;
    /// let mut p = Profile::from_json(&text)?;
    /// assert_eq!(p.combine_ns(4096, Pick::Dominant), None);
    /// let at = |bytes: u64, ns: f64| serde_json::from_value(serde_json::json!({ "bytes": bytes,
    ///     "ns": { "median": ns, "p10": ns, "p90": ns, "samples": 1, "modes": [
    ///         { "center": ns, "p10": ns, "p90": ns, "share": 1.0, "samples": 1 }],
    ///     "settled": true } }));
    /// p.combine_ns = vec![at(1000, 100.0)?, at(3000, 500.0)?];
    /// assert_eq!(p.combine_ns(500, Pick::Dominant), Some(50.0));
    /// assert_eq!(p.combine_ns(2000, Pick::Dominant), Some(300.0));
    /// assert_eq!(p.combine_ns(6000, Pick::Dominant), Some(1000.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn combine_ns(&self, bytes: u64, pick: Pick) -> Option<f64> {
        let points: Vec<(f64, f64)> = self
            .combine_ns
            .iter()
            .filter(|p| p.bytes > 0)
            .map(|p| (p.bytes as f64, p.ns.pick(pick)))
            .collect();
        let b = bytes as f64;
        match points.iter().position(|&(pb, _)| b < pb) {
            Some(i) => {
                let (b0, t0) = if i == 0 { (0.0, 0.0) } else { points[i - 1] };
                let (b1, t1) = points[i];
                Some(t0 + (t1 - t0) * (b - b0) / (b1 - b0))
            }
            None => points.last().map(|&(lb, lt)| lt / lb * b),
        }
    }

    /// Whether a broadcast of `bytes` bytes among `ranks` ranks of one node is faster posted in
    /// a shared window than along the planner's tree, by [`Profile::posted`]'s medians at
    /// `ranks` ranks (each interpolated linearly in the size between the measured sizes, the
    /// smallest measured size's time below it, the largest's scaled by size above it); `None`
    /// where nothing was measured at `ranks` ranks.
    ///
    /// Posting wins where it is at least as fast back to back (`posted_ns` against
    /// `tree_ns`) and, where every point at `ranks` ranks has them, alone after a barrier
    /// (`posted_one_ns` against `tree_one_ns`): a post pays two copies, the root's into the
    /// window and the reader's out of it, which a loop overlaps and one broadcast does not. In
    /// a state of the development machine whose copies ran at a third of their usual speed, a
    /// 2-process broadcast of 32 KiB posted took 0.70–0.86 of Open MPI's `MPI_Bcast` back to
    /// back and 1.60–1.77 alone after a barrier; along the tree (at 2 ranks one message, as
    /// the library's) 0.95–1.04 either way (docs/mpi.md, "Sixty-sixth session").
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::Profile;
    /// let text = std::fs::read_to_string(concat!(
    ///     env!("CARGO_MANIFEST_DIR"), "/tests/data/profile-2core.json"))?;
    /// let mut p = Profile::from_json(&text)?;
    /// assert_eq!(p.posted_wins(4, 8), None);
    /// let ns = |v: f64| serde_json::json!({ "median": v, "p10": v, "p90": v, "samples": 1,
    ///     "modes": [{ "center": v, "p10": v, "p90": v, "share": 1.0, "samples": 1 }],
    ///     "settled": true });
    /// let at = |bytes: u64, posted: f64, tree: f64| serde_json::from_value(serde_json::json!({
    ///     "ranks": 4, "bytes": bytes, "posted_ns": ns(posted), "tree_ns": ns(tree),
    ///     "tree": "binomial" }));
    /// p.posted = vec![at(8, 200.0, 900.0)?, at(4096, 2000.0, 9000.0)?, at(32768, 16000.0, 15000.0)?];
    /// assert_eq!(p.posted_wins(4, 1), Some(true));
    /// assert_eq!(p.posted_wins(4, 8192), Some(true)); // 4000 against 9857 ns
    /// assert_eq!(p.posted_wins(4, 30000), Some(false)); // 14648 against 14421 ns
    /// assert_eq!(p.posted_wins(4, 1 << 20), Some(false));
    /// assert_eq!(p.posted_wins(2, 8), None);
    /// // Timed alone after a barrier too: posting must win both ways.
    /// let both = |bytes: u64, back_to_back: (f64, f64), alone: (f64, f64)| {
    ///     serde_json::from_value(serde_json::json!({
    ///         "ranks": 2, "bytes": bytes, "tree": "binary",
    ///         "posted_ns": ns(back_to_back.0), "tree_ns": ns(back_to_back.1),
    ///         "posted_one_ns": ns(alone.0), "tree_one_ns": ns(alone.1) }))
    /// };
    /// p.posted = vec![
    ///     both(4096, (500.0, 1900.0), (1000.0, 1500.0))?,
    ///     both(32768, (2400.0, 2800.0), (4100.0, 2600.0))?,
    /// ];
    /// assert_eq!(p.posted_wins(2, 4096), Some(true));
    /// assert_eq!(p.posted_wins(2, 32768), Some(false)); // faster back to back, not alone
    /// // A point without the times alone: back to back decides at every size.
    /// p.posted.push(at(65536, 4000.0, 5000.0)?);
    /// p.posted[2].ranks = 2;
    /// assert_eq!(p.posted_wins(2, 32768), Some(true));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn posted_wins(&self, ranks: u32, bytes: u64) -> Option<bool> {
        let (posted, tree) = self.posted_ns(ranks, bytes)?;
        let alone = interpolate_posted_one(&self.posted, ranks, bytes);
        Some(posted <= tree && alone.is_none_or(|(posted, tree)| posted <= tree))
    }

    /// The times [`Profile::posted_wins`] compares, ns: `(posted, tree)` for a broadcast of
    /// `bytes` bytes among `ranks` ranks; `None` where nothing was measured at `ranks` ranks.
    #[must_use]
    pub fn posted_ns(&self, ranks: u32, bytes: u64) -> Option<(f64, f64)> {
        interpolate_posted(&self.posted, ranks, bytes)
    }

    /// Whether an allreduce of `bytes` bytes among `ranks` ranks of one node is faster posted
    /// in a shared window than along the allreduce herald-mpi predicts fastest over MPI, by
    /// [`Profile::posted_allreduce`] as [`Profile::posted_wins`] decides for broadcasts.
    ///
    /// ```
    /// # use herald::Profile;
    /// let text = std::fs::read_to_string(concat!(
    ///     env!("CARGO_MANIFEST_DIR"), "/tests/data/profile-2core.json"))?;
    /// let mut p = Profile::from_json(&text)?;
    /// let ns = |v: f64| serde_json::json!({ "median": v, "p10": v, "p90": v, "samples": 1,
    ///     "modes": [{ "center": v, "p10": v, "p90": v, "share": 1.0, "samples": 1 }],
    ///     "settled": true });
    /// let at = |bytes: u64, posted: f64, tree: f64| serde_json::from_value(serde_json::json!({
    ///     "ranks": 2, "bytes": bytes, "posted_ns": ns(posted), "tree_ns": ns(tree),
    ///     "tree": "halving" }));
    /// p.posted_allreduce = vec![at(8, 200.0, 500.0)?, at(1 << 20, 9e5, 5e5)?];
    /// assert_eq!(p.posted_allreduce_wins(2, 8), Some(true));
    /// assert_eq!(p.posted_allreduce_wins(2, 1 << 20), Some(false));
    /// assert_eq!(p.posted_allreduce_wins(4, 8), None);
    /// assert_eq!(p.posted_wins(2, 8), None); // broadcasts are measured apart
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn posted_allreduce_wins(&self, ranks: u32, bytes: u64) -> Option<bool> {
        self.posted_allreduce_ns(ranks, bytes)
            .map(|(posted, tree)| posted <= tree)
    }

    /// The times [`Profile::posted_allreduce_wins`] compares, ns: `(posted, over MPI)`.
    #[must_use]
    pub fn posted_allreduce_ns(&self, ranks: u32, bytes: u64) -> Option<(f64, f64)> {
        interpolate_posted(&self.posted_allreduce, ranks, bytes)
    }

    /// The level named `name`.
    ///
    /// # Errors
    ///
    /// [`ProfileError::NoLevel`] if there is none.
    pub fn level(&self, name: &str) -> Result<&LevelProfile, ProfileError> {
        self.levels
            .iter()
            .find(|l| l.name == name)
            .ok_or_else(|| ProfileError::NoLevel(name.to_owned()))
    }

    /// The levels that were measured.
    pub fn measured_levels(&self) -> impl Iterator<Item = &LevelProfile> {
        self.levels.iter().filter(|l| l.lambda.is_some())
    }
}

/// The integer-nanosecond parameters of a level, as the conversions use them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WholeParams {
    /// `L` in ns (may be negative as measured).
    pub l: i64,
    /// `o_s` in ns (≥ 0).
    pub o_s: u64,
    /// `o_r` in ns (≥ 0).
    pub o_r: u64,
    /// `g` in ns (≥ 0).
    pub g: u64,
    /// `G` in thousandths of a ns per payload byte (≥ 0).
    pub big_g_milli: u64,
}

impl LevelProfile {
    /// A level at `depth` named `name` with nothing measured, and `note` saying why.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::model::LevelProfile;
    /// let l = LevelProfile::unmeasured("package".into(), 1, "no two ranks meet here");
    /// assert!(l.l_ns.is_none() && l.pair.is_none() && l.slices == 0);
    /// assert_eq!(l.note.as_deref(), Some("no two ranks meet here"));
    /// ```
    pub fn unmeasured(name: String, depth: usize, note: &str) -> LevelProfile {
        LevelProfile {
            name,
            depth,
            pair: None,
            slices: 0,
            raw_hop_ns: None,
            one_way_ns: None,
            l_ns: None,
            o_s_ns: None,
            o_r_ns: None,
            g_ns: None,
            big_g_ns_per_byte: None,
            lambda: None,
            capacity: None,
            note: Some(note.to_owned()),
            runtime: None,
            pieces: None,
        }
    }

    fn need(
        &self,
        d: &Option<Distribution>,
        take: &impl Fn(&Distribution) -> f64,
        parameter: &'static str,
    ) -> Result<i64, ProfileError> {
        // Rounded to whole nanoseconds (negative values kept as `i64`).
        d.as_ref()
            .map(|d| take(d).round() as i64)
            .ok_or_else(|| ProfileError::NotMeasured {
                level: self.name.clone(),
                parameter,
            })
    }

    /// The parameters picked by `pick` and rounded to the grid of the module docs (1 ns;
    /// 1/1000 ns per byte for `G`); negative overheads and gaps become 0.
    ///
    /// # Errors
    ///
    /// [`ProfileError::NotMeasured`] if the level was not measured.
    pub fn whole(&self, pick: Pick) -> Result<WholeParams, ProfileError> {
        self.whole_by(|d| d.pick(pick))
    }

    /// [`whole`](Self::whole) with each parameter's value taken from its distribution by
    /// `take` (the runtime model takes L, o and g in one latency regime).
    pub(crate) fn whole_by(
        &self,
        take: impl Fn(&Distribution) -> f64,
    ) -> Result<WholeParams, ProfileError> {
        let l = self.need(&self.l_ns, &take, "L_ns")?;
        let nonneg = |v: i64| u64::try_from(v).unwrap_or(0);
        let o_s = nonneg(self.need(&self.o_s_ns, &take, "o_s_ns")?);
        let o_r = nonneg(self.need(&self.o_r_ns, &take, "o_r_ns")?);
        let g = nonneg(self.need(&self.g_ns, &take, "g_ns")?);
        let big_g = self
            .big_g_ns_per_byte
            .as_ref()
            .map(|d| (take(d) * 1000.0).round() as i64)
            .ok_or_else(|| ProfileError::NotMeasured {
                level: self.name.clone(),
                parameter: "G_ns_per_byte",
            })?;
        Ok(WholeParams {
            l,
            o_s,
            o_r,
            g,
            big_g_milli: nonneg(big_g),
        })
    }

    /// This level as a LogGP model in nanoseconds: `L`, `o = (o_s + o_r)/2`, `g`, `G` per
    /// payload byte (see the module docs for the grid and the rule for a negative `L`).
    ///
    /// # Errors
    ///
    /// [`ProfileError::NotMeasured`] if the level was not measured; [`ProfileError::Model`] if
    /// the values make no LogP model (e.g. everything 0).
    pub fn logp(&self, pick: Pick) -> Result<LogP, ProfileError> {
        self.logp_by(|d| d.pick(pick))
    }

    /// [`logp`](Self::logp) with each parameter's value taken from its distribution by `take`.
    pub(crate) fn logp_by(
        &self,
        take: impl Fn(&Distribution) -> f64,
    ) -> Result<LogP, ProfileError> {
        let w = self.whole_by(&take)?;
        let one_way = i128::from(w.l) + i128::from(w.o_s) + i128::from(w.o_r);
        let (l, two_o) = if w.l >= 0 {
            (w.l.unsigned_abs(), w.o_s + w.o_r)
        } else if one_way > 0 {
            (0, u64::try_from(one_way).unwrap_or(u64::MAX))
        } else {
            // Each parameter is picked from its own distribution; on a loaded host their
            // picks can sum to no positive time although every slice measured one. The
            // measured one-way time itself (picked alike) is then `L + 2o`.
            let measured = self
                .one_way_ns
                .as_ref()
                .map_or(0, |d| take(d).round() as i64);
            (0, u64::try_from(measured).unwrap_or(0))
        };
        let ratio = |num: u64, den: u64| Ratio::new(num, den).map_err(ModelError::from);
        let m = LogP::new(
            Ratio::integer(l),
            ratio(two_o, 2)?,
            Ratio::integer(w.g),
            ratio(w.big_g_milli, 1000)?,
        )?;
        // Messages the transport sends whole above its pieces' limit, at their own slope.
        let whole = self.pieces.as_ref().and_then(|p| {
            let d = p.whole_big_g_ns_per_byte.as_ref()?;
            Some((p.upto_bytes, (take(d) * 1000.0).round().max(0.0) as u64))
        });
        Ok(match whole {
            Some((above, milli)) => m.with_whole_gap(above, ratio(milli, 1000)?),
            None => m,
        })
    }

    /// This level as a postal model: `λ = (L + o_s + o_r) / max(g, o_s)` with the whole-ns
    /// parameters, exact, at least 1.
    ///
    /// # Errors
    ///
    /// [`ProfileError::NotMeasured`] if the level was not measured; [`ProfileError::Model`] if
    /// λ is out of the postal model's range.
    pub fn postal(&self, pick: Pick) -> Result<Postal, ProfileError> {
        let w = self.whole(pick)?;
        let one_way = i128::from(w.l) + i128::from(w.o_s) + i128::from(w.o_r);
        let num = u64::try_from(one_way.max(1)).unwrap_or(u64::MAX);
        let den = w.g.max(w.o_s).max(1);
        let lambda = Ratio::new(num, den).map_err(ModelError::from)?;
        Ok(Postal::new(lambda.max(Ratio::ONE))?)
    }
}

/// This host's name (`gethostname(2)`, through the `gethostname` crate; `unknown` if it is empty
/// or not valid UTF-8).
pub fn host_name() -> String {
    let name = gethostname::gethostname();
    match name.to_str().map(str::trim) {
        Some(n) if !n.is_empty() => n.to_owned(),
        _ => "unknown".into(),
    }
}

/// The processor a profile was measured on, as the operating system names it: what tells one
/// machine from another where the host's name does not (a virtual machine keeps its name when
/// it moves to other hardware; the development VM did, from an AMD EPYC to an Intel Xeon,
/// docs/runtime.md, "The machine"). Read from the first processor's entry of
/// `/proc/cpuinfo` ([`this_cpu`]); each field is absent where the system does not give it.
///
/// Two identities are the same processor when every field is equal (a field absent from both
/// is equal).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuIdentity {
    /// The vendor: `GenuineIntel`, `AuthenticAMD`; on ARM the implementer's code (`0x41`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// The model's name (`Intel(R) Xeon(R) Processor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The family (x86 `cpu family`; ARM `CPU architecture`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// The model's number (x86 `model`; ARM `CPU part`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_number: Option<String>,
    /// The stepping (x86 `stepping`; ARM `CPU revision`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stepping: Option<String>,
}

impl CpuIdentity {
    /// The identity of the first processor listed in `text`, a `/proc/cpuinfo` (`key : value`
    /// lines, one block per processor, blocks apart by a blank line; runs of white space in a
    /// value count as one space); `None` if it names none of the fields.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::model::CpuIdentity;
    /// let text = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 167\n\
    ///             model name\t: Intel(R)  Xeon(R) Processor\nstepping\t: 1\n\n\
    ///             processor\t: 1\nvendor_id\t: AuthenticAMD\n";
    /// let cpu = CpuIdentity::from_cpuinfo(text).unwrap();
    /// assert_eq!(cpu.vendor.as_deref(), Some("GenuineIntel"));
    /// assert_eq!(cpu.model.as_deref(), Some("Intel(R) Xeon(R) Processor"));
    /// assert_eq!(cpu.to_string(), "GenuineIntel Intel(R) Xeon(R) Processor (family 6, model 167, stepping 1)");
    /// assert_eq!(CpuIdentity::from_cpuinfo("flags : fpu\n"), None);
    /// ```
    pub fn from_cpuinfo(text: &str) -> Option<CpuIdentity> {
        let mut cpu = CpuIdentity::default();
        let first = text
            .lines()
            .skip_while(|l| l.trim().is_empty())
            .take_while(|l| !l.trim().is_empty());
        for line in first {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
            if value.is_empty() {
                continue;
            }
            let field = match key.trim() {
                "vendor_id" | "CPU implementer" => &mut cpu.vendor,
                "model name" => &mut cpu.model,
                "cpu family" | "CPU architecture" => &mut cpu.family,
                "model" | "CPU part" => &mut cpu.model_number,
                "stepping" | "CPU revision" => &mut cpu.stepping,
                _ => continue,
            };
            field.get_or_insert(value);
        }
        (cpu != CpuIdentity::default()).then_some(cpu)
    }
}

impl std::fmt::Display for CpuIdentity {
    /// `vendor model (family F, model M, stepping S)`, leaving out what is absent; `unknown`
    /// if everything is.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = [&self.vendor, &self.model]
            .into_iter()
            .filter_map(|v| v.as_deref())
            .collect();
        let numbers: Vec<String> = [
            ("family", &self.family),
            ("model", &self.model_number),
            ("stepping", &self.stepping),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_deref().map(|v| format!("{k} {v}")))
        .collect();
        match (names.is_empty(), numbers.is_empty()) {
            (true, true) => f.write_str("unknown"),
            (false, true) => f.write_str(&names.join(" ")),
            (true, false) => write!(f, "({})", numbers.join(", ")),
            (false, false) => write!(f, "{} ({})", names.join(" "), numbers.join(", ")),
        }
    }
}

/// This machine's processor ([`CpuIdentity::from_cpuinfo`] of `/proc/cpuinfo`); `None` where
/// that file cannot be read or names no processor (systems other than Linux). Only the first
/// processor's block is read: the kernel writes the file one processor at a time, so on a
/// machine of hundreds of CPUs the whole of it is long and slow to produce, and every
/// [`load_profile`] asks for this.
pub fn this_cpu() -> Option<CpuIdentity> {
    use std::io::BufRead;
    let file = std::fs::File::open("/proc/cpuinfo").ok()?;
    let mut first = String::new();
    for line in std::io::BufReader::new(file).lines() {
        let line = line.ok()?;
        if line.trim().is_empty() && !first.trim().is_empty() {
            break;
        }
        first.push_str(&line);
        first.push('\n');
    }
    CpuIdentity::from_cpuinfo(&first)
}

/// The default profile file: `herald/profile.json` in the user's cache directory (`dirs` crate:
/// `$XDG_CACHE_HOME`, else `~/.cache` on Linux); `None` if there is no cache directory.
pub fn default_profile_path() -> Option<PathBuf> {
    dirs::cache_dir().map(|c| c.join("herald").join("profile.json"))
}

/// Writes `profile` to `path` as JSON (creating the directory; written to a temporary file
/// and renamed, so a reader never sees half a profile).
///
/// # Errors
///
/// [`ProfileError::Io`] if the directory or file cannot be written.
pub fn save_profile(profile: &Profile, path: &Path) -> Result<(), ProfileError> {
    let io = |e: std::io::Error| ProfileError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, profile.to_json() + "\n").map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

/// Reads a profile from `path` and checks its schema version, host and processor (this host's,
/// [`host_name`] and [`this_cpu`]), unless `force`.
///
/// # Errors
///
/// [`ProfileError::Io`] if the file cannot be read, [`ProfileError::Malformed`] if it is not a
/// profile, [`ProfileError::Schema`], [`ProfileError::Host`] or [`ProfileError::Cpu`] on a
/// mismatch without `force`.
pub fn load_profile(path: &Path, force: bool) -> Result<Profile, ProfileError> {
    let text = std::fs::read_to_string(path).map_err(|e| ProfileError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    // A malformed file is named, beside the field.
    let named = |e: ProfileError| match e {
        ProfileError::Malformed(why) => {
            ProfileError::Malformed(format!("{}: {why}", path.display()))
        }
        other => other,
    };
    if force {
        return Profile::from_json_forced(&text).map_err(named);
    }
    let profile = Profile::from_json(&text).map_err(named)?;
    profile.check_host(&host_name())?;
    profile.check_cpu(this_cpu().as_ref())?;
    Ok(profile)
}
