//! Calibration over MPI: `L, o_s, o_r, g, G` and λ at every level where ranks meet, by herald's
//! method, into herald's profile schema.
//!
//! # Pairs
//!
//! The job is one hierarchy ([`Cluster`]): hosts, then each host's hwloc levels. For every level
//! of it, the first pair of ranks (lowest client rank, then lowest server rank) whose PUs have
//! their lowest common ancestor there is measured: between hosts (`machine`), between the
//! sockets of a host (`group` or `numa`, as hwloc names the level), inside a socket (`l3`,
//! `package`, …). A level no two ranks meet at is recorded unmeasured, with a note. Start
//! enough ranks, placed so that every level has a pair (e.g. two per host on two hosts, on
//! different sockets).
//!
//! # The method
//!
//! herald's (`herald calibrate`, `src/calibrate/mod.rs`): Netgauge's parametrized round trips
//! `PRTT(1,0,s)`, `PRTT(n,0,s)`, `PRTT(n,d,s)` with `n = 10` and `d = PRTT(1,0,s)` from the
//! previous slice (at least twice its gap), the receive overhead timed at the server on a message
//! that has surely arrived, least squares over message sizes by [`herald::calibrate::fit_prtt`], λ per
//! slice, slices of 15–30 ms interleaved across levels, distributions and modes by
//! [`herald::calibrate::distribution`], a quantity settled when its modes stay put for three checks.
//! Messages are MPI messages sent and received the way herald-mpi's executors do (nonblocking
//! send and receive, completed by polling), of `s` *units* of 56 bytes — the payload of one of
//! herald's lines, so `G_ns_per_byte` means what it means in herald's profiles.
//!
//! One difference: `L, o_s, o_r, g` and λ are fitted on small messages (`s = 1, 2, 4, …, 64`
//! units, up to 3.5 KiB; 1 … 16 with `--quick`), but `G` on large ones (`s = 256, 1024, 4096,
//! 16384` units, 14 KiB to 896 KiB), by the same fit on those of them sent the same way (all
//! cut into pieces, or all whole: see "Message pieces"); where that took the cut ones and two
//! or more went whole, the whole ones give the level a second slope for messages longer than
//! the pieces' limit (`whole_sent`, [`MessagePieces::whole_big_g_ns_per_byte`]).
//! An MPI library moves small messages eagerly (copied through a buffer) and large ones by
//! rendezvous (on one host often a single copy), at different costs per byte; the planner uses
//! `G` to price blocks of large payloads, so it gets the large-message regime's. (Fitted on the
//! small sizes, `G` would make a 64 KiB broadcast look best cut into dozens of eager blocks,
//! which measure slower than one rendezvous message.) Each fit keeps herald's protocol-change
//! rule: the longest prefix of its sizes that lies on one line.
//!
//! # Message pieces
//!
//! Before those probes, each measured pair finds out whether cutting a message beats sending it
//! whole ([`MessagePieces`]). For each candidate piece size (`2^k − 64` bytes, 1 KiB … 64 KiB)
//! it sends a message of two such pieces, then messages of 2, 3, 4, 6, 8, 12 and 16 times `2^k`
//! bytes (the sizes programs send, each cut into as many pieces as it needs), whole and in
//! pieces, alternating, after a warm-up pass, each as a round trip and as a stream of 64 sent
//! back to back (then one empty acknowledgement). An MPI library copies a message up to its
//! eager limit through a buffer and sends a longer one by rendezvous (a handshake first), so
//! just above the limit one message costs a round trip more than two pieces under it: the
//! piece size kept is the largest candidate whose two pieces beat the whole message's round
//! trip by 10 %, and messages of up to two pieces are cut. Longer messages are cut only up to
//! the largest size at which every size tried beat the whole message by 10 % in both the round
//! trip and the stream: in a stream the whole messages' handshakes overlap, the pieces' copies
//! through the library's buffers do not, and from some size on (it moves with the host's
//! latency mode) the pieces lose broadcasts sent back to back several times over (docs/mpi.md,
//! the sixteenth session). The pair then keeps the pieces for the probes below (the profile's
//! `L, o, g, G` describe messages as herald-mpi sends them), and `herald-mpi run` and `bench`
//! cut every message between two ranks the way the profile's level where they meet says
//! ([`Cluster::apply_pieces`]).
//!
//! `raw_hop_ns` is, over MPI, the one-way time of a batched ping-pong of empty messages between
//! the pair (no cache-line baseline exists between processes). `switch_ns`, when two ranks share
//! one CPU, is the same empty-message ping-pong between those two: what a message costs when its
//! receiver must first be scheduled. Capacities are not measured over MPI (`null`, with a note).
//! `combine_ns` is the executors' combine (a received vector of `u64` added to the rank's own)
//! timed on rank 0 alone, on values of 32 KiB (in a core's L2 cache here) and 1 MiB (not): what
//! herald-mpi's allreduce prediction charges a message combined ([`crate::allreduce`]).
//!
//! # Who does what
//!
//! Every rank takes part: in each round every measured pair runs one slice in turn while the
//! other ranks wait in a barrier that sleeps ([`Channel::quiet_barrier`]), so they leave the CPUs
//! to the pair. The client of a pair keeps its samples; at the end each client sends its level's
//! results to rank 0, which writes the profile.

use crate::allreduce::AllreducePlans;
use crate::cluster::Cluster;
use crate::error::Error;
use crate::p2p::{Channel, Pieces};
use crate::world::World;
use herald::stats::median;
use herald::{
    calibrate::{
        clock_overhead, clock_resolution, distribution, fit_prtt, spin_for, PrttPoint, Settling,
        QUANTITIES,
    },
    model::{
        CombinePoint, Distribution, LevelProfile, MessagePieces, PieceTrial, PostedPoint,
        TopologySummary, PROFILE_SCHEMA,
    },
    Profile,
};
use mpi::collective::{CommunicatorCollectives, Root};
use mpi::topology::Communicator;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes per size unit (the payload of one of herald's lines).
pub const UNIT: usize = 56;

/// How to calibrate: herald's probe settings, the large sizes `G` is fitted on, and whether to
/// measure message [`pieces`](MessagePieces).
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrateOptions {
    /// herald's settings. Its `sizes` (for `L`, `o_s`, `o_r`, `g`) are in units of [`UNIT`]
    /// bytes, the payload of one of herald's lines.
    pub probe: herald::calibrate::CalibrateOptions,
    /// Large message sizes (units) for `G` alone (none: `G` from `probe.sizes`).
    pub large: Vec<u32>,
    /// Whether to measure, per level, whether cutting messages into pieces beats sending them
    /// whole (see the module docs); without it no level has pieces.
    pub pieces: bool,
    /// Whether to measure broadcasts posted in a shared window against the planner's trees
    /// ([`Profile::posted`]) where every rank is on one node; without it herald-mpi never
    /// posts.
    pub posted: bool,
}

impl CalibrateOptions {
    /// herald's quick settings with a longer budget (2 s to 8 s of measuring), sizes 1 … 16
    /// units; `G` from 256, 1024, 4096 and 16384 (14 to 896 KiB; those of them sent the same
    /// way: see `one_way_sent`, and `whole_sent` for the second slope).
    pub fn quick() -> CalibrateOptions {
        CalibrateOptions {
            probe: herald::calibrate::CalibrateOptions {
                budget: Duration::from_secs(8),
                sizes: vec![1, 2, 4, 8, 16],
                ..herald::calibrate::CalibrateOptions::quick()
            },
            large: vec![256, 1024, 4096, 16384],
            pieces: true,
            posted: true,
        }
    }

    /// herald's full settings (30 s to 90 s of measuring), sizes 1 … 64 units; `G` from 256,
    /// 1024, 4096 and 16384, as [`CalibrateOptions::quick`].
    pub fn full() -> CalibrateOptions {
        CalibrateOptions {
            probe: herald::calibrate::CalibrateOptions {
                sizes: vec![1, 2, 4, 8, 16, 32, 64],
                ..herald::calibrate::CalibrateOptions::full()
            },
            large: vec![256, 1024, 4096, 16384],
            pieces: true,
            posted: true,
        }
    }

    /// The small sizes, then the large ones.
    fn all_sizes(&self) -> Vec<u32> {
        self.probe
            .sizes
            .iter()
            .chain(&self.large)
            .copied()
            .collect()
    }

    fn check(&self) -> Result<(), Error> {
        if self.large.len() == 1 || self.large.contains(&0) {
            return Err(Error::Usage("give no large size or two at least".into()));
        }
        self.probe
            .validate()
            .map_err(|e| Error::Usage(e.to_string()))?;
        Ok(())
    }
}

/// Where `herald-mpi calibrate` saves its profile unless told otherwise: `HERALD_MPI_PROFILE`,
/// else beside herald's own profile, one file per MPI library (`mpi-openmpi.json`,
/// `mpi-mpich.json`).
///
/// ```
/// let p = herald_mpi::calibrate::default_profile_path("Open MPI v4.1.4");
/// if std::env::var_os("HERALD_MPI_PROFILE").is_none() {
///     if let Some(p) = p {
///         assert!(p.ends_with("mpi-openmpi.json"));
///     }
/// }
/// ```
pub fn default_profile_path(library: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HERALD_MPI_PROFILE") {
        return Some(PathBuf::from(p));
    }
    let herald = herald::model::default_profile_path()?;
    let dir = herald.parent()?.to_path_buf();
    let name = if library.contains("Open MPI") {
        "mpi-openmpi.json"
    } else if library.contains("MPICH") {
        "mpi-mpich.json"
    } else {
        "mpi-other.json"
    };
    Some(dir.join(name))
}

/// Reads an MPI profile: herald's schema (checked unless `force`); hosts are not checked here
/// (a job's ranks are on several hosts).
///
/// # Errors
/// [`Error::Usage`] if the file cannot be read or is not a profile of this schema.
pub fn load_profile(path: &Path, force: bool) -> Result<Profile, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Usage(format!("cannot read profile {}: {e}", path.display())))?;
    let p = if force {
        Profile::from_json_forced(&text)
    } else {
        Profile::from_json(&text)
    };
    p.map_err(|e| Error::Usage(format!("{}: {e}", path.display())))
}

/// Nanoseconds since `t0`.
fn since(t0: Instant) -> f64 {
    t0.elapsed().as_nanos() as f64
}

/// Repetitions of every probe per slice at least (the slice keeps their medians).
const MIN_REPS: u32 = 3;
/// Rounds measured at least (the first slice of a level only warms up).
const MIN_ROUNDS: usize = 3;
/// Slices behind a level's second `G` ([`whole_sent`]) for its distribution to count as
/// settled (as the thread switch's).
const MIN_WHOLE_G_SLICES: usize = 10;

/// One measured pair of ranks.
#[derive(Debug)]
struct Probe {
    depth: usize,
    name: String,
    client: usize,
    server: usize,
    /// Client only: per slice, the eight quantities, weighted by the slice's duration.
    samples: Settling,
    discarded: usize,
    /// Per size: the least positive PRTT(1,0,s) and gap seen so far (infinite: none yet), to
    /// plan the next slice.
    last: Option<Vec<(f64, f64)>>,
    reps: u32,
    /// Client only: the level's message pieces, if cutting measured faster.
    pieces: Option<MessagePieces>,
    /// Client only: per slice, `G` of the large sizes sent whole where `G` itself was fitted
    /// on cut ones ([`whole_sent`]), weighted by the slice's duration.
    whole_g: Vec<(f64, f64)>,
}

/// What a slice runs (sent by the client to the server as `f64`s).
#[derive(Debug, Clone)]
struct SlicePlan {
    reps: u32,
    /// Per size: the delay `d` and the server's wait before timing a receive (ns).
    delay: Vec<f64>,
    wait: Vec<f64>,
}

/// Tags of the calibration messages.
const TAG_DATA: u16 = 32_764;
const TAG_CTRL: u16 = 32_765;

/// One slice on the client: returns the points per size, the gaps per size and the raw hop.
fn client_slice(
    chan: &Channel,
    server: usize,
    opts: &CalibrateOptions,
    plan: &SlicePlan,
    clock: f64,
    buf: &mut [u8],
) -> Result<(Vec<PrttPoint>, Vec<f64>, f64), Error> {
    let mut ctrl: Vec<f64> = vec![f64::from(plan.reps)];
    ctrl.extend(&plan.delay);
    ctrl.extend(&plan.wait);
    chan.send(bytemuck::cast_slice(&ctrl), server, TAG_CTRL)?;
    let sizes = &opts.all_sizes();
    let n = opts.probe.n as usize;
    // [size][rep] of (prtt_1_0, prtt_n_0, prtt_n_d, delay_total)
    let mut prtt = vec![Vec::with_capacity(plan.reps as usize); sizes.len()];
    for _ in 0..plan.reps {
        for (i, &s) in sizes.iter().enumerate() {
            let len = s as usize * UNIT;
            let t0 = Instant::now();
            chan.send(&buf[..len], server, TAG_DATA)?;
            chan.recv(&mut buf[..len], server, TAG_DATA)?;
            let one = since(t0) - clock;
            let t0 = Instant::now();
            for _ in 0..n {
                chan.send(&buf[..len], server, TAG_DATA)?;
            }
            chan.recv(&mut buf[..len], server, TAG_DATA)?;
            let many = since(t0) - clock;
            let mut spun = 0.0;
            let t0 = Instant::now();
            for k in 0..n {
                chan.send(&buf[..len], server, TAG_DATA)?;
                if k + 1 < n {
                    spun += spin_for(plan.delay[i]);
                }
            }
            chan.recv(&mut buf[..len], server, TAG_DATA)?;
            let delayed = since(t0) - clock;
            // o_r: the server times a receive of a message sent right after its "go", then
            // says "done" (so its wait does not leak into the next probe)
            chan.recv(&mut buf[..0], server, TAG_CTRL)?;
            chan.send(&buf[..len], server, TAG_DATA)?;
            chan.recv(&mut buf[..0], server, TAG_CTRL)?;
            prtt[i].push([one, many, delayed, spun - clock * (n as f64 - 1.0)]);
        }
    }
    let t0 = Instant::now();
    for _ in 0..opts.probe.hops {
        chan.send(&buf[..0], server, TAG_DATA)?;
        chan.recv(&mut buf[..0], server, TAG_DATA)?;
    }
    let raw_hop = (since(t0) - clock) / f64::from(opts.probe.hops) / 2.0;
    let mut o_r = vec![0f64; sizes.len()];
    chan.recv(bytemuck::cast_slice_mut(&mut o_r), server, TAG_CTRL)?;
    let mut points = Vec::with_capacity(sizes.len());
    let mut gaps = Vec::with_capacity(sizes.len());
    for (i, &s) in sizes.iter().enumerate() {
        let col = |j: usize| {
            let v: Vec<f64> = prtt[i].iter().map(|x| x[j]).collect();
            median(&v)
        };
        let p = PrttPoint {
            lines: s,
            prtt_1_0: col(0),
            prtt_n_0: col(1),
            prtt_n_d: col(2),
            delay_total: col(3),
            o_r: o_r[i],
        };
        gaps.push((p.prtt_n_0 - p.prtt_1_0) / (n as f64 - 1.0));
        points.push(p);
    }
    Ok((points, gaps, raw_hop))
}

/// One slice on the server.
fn server_slice(
    chan: &Channel,
    client: usize,
    opts: &CalibrateOptions,
    clock: f64,
    buf: &mut [u8],
) -> Result<(), Error> {
    let sizes = &opts.all_sizes();
    let mut ctrl = vec![0f64; 1 + 2 * sizes.len()];
    chan.recv(bytemuck::cast_slice_mut(&mut ctrl), client, TAG_CTRL)?;
    let reps = ctrl[0] as u32;
    let wait = ctrl[1 + sizes.len()..].to_vec();
    let n = opts.probe.n as usize;
    let mut o_r = vec![Vec::with_capacity(reps as usize); sizes.len()];
    for _ in 0..reps {
        for (i, &s) in sizes.iter().enumerate() {
            let len = s as usize * UNIT;
            chan.recv(&mut buf[..len], client, TAG_DATA)?;
            chan.send(&buf[..len], client, TAG_DATA)?;
            for _ in 0..2 {
                for _ in 0..n {
                    chan.recv(&mut buf[..len], client, TAG_DATA)?;
                }
                chan.send(&buf[..len], client, TAG_DATA)?;
            }
            chan.send(&buf[..0], client, TAG_CTRL)?;
            spin_for(wait[i]);
            let t0 = Instant::now();
            chan.recv(&mut buf[..len], client, TAG_DATA)?;
            o_r[i].push(since(t0) - clock);
            chan.send(&buf[..0], client, TAG_CTRL)?;
        }
    }
    for _ in 0..opts.probe.hops {
        chan.recv(&mut buf[..0], client, TAG_DATA)?;
        chan.send(&buf[..0], client, TAG_DATA)?;
    }
    let medians: Vec<f64> = o_r.iter().map(|v| median(v)).collect();
    chan.send(bytemuck::cast_slice(&medians), client, TAG_CTRL)?;
    Ok(())
}

/// Candidate piece sizes: just under powers of two from 1 KiB to 64 KiB (an MPI library's
/// eager limit counts its own header, so a message of exactly `2^k` bytes may already go by
/// rendezvous where one of `2^k − 64` does not).
const PIECE_SIZES: [usize; 7] = [960, 1984, 4032, 8128, 16_320, 32_704, 65_472];
/// Message sizes tried per candidate piece size after the first (two pieces of exactly the
/// candidate), in units of the power of two just above it: the sizes programs send (a message
/// of 16 KiB is tried as such, cut into 3 pieces of at most 8128 bytes with the 8128-byte
/// candidate).
const PIECE_MULTIPLES: [usize; 7] = [2, 3, 4, 6, 8, 12, 16];

/// The message sizes tried with pieces of `piece` bytes, ascending: two pieces (`2 · piece`,
/// the test of the candidate), then [`PIECE_MULTIPLES`] of `piece + 64` (a power of two).
fn trial_sizes(piece: usize) -> impl Iterator<Item = usize> {
    std::iter::once(2 * piece).chain(PIECE_MULTIPLES.iter().map(move |m| m * (piece + 64)))
}

/// Round trips of each way per (piece size, message size), alternating which goes first.
const PIECE_REPS: usize = 15;
/// Cutting counts as faster when its median round trip (and, past two pieces, its stream) is
/// at most this share of the whole message's (a margin over the noise of 15 repetitions).
const PIECE_WIN: f64 = 0.9;

/// Messages per stream of [`pieces_trial`]: sent back to back, then one empty
/// acknowledgement (its latency shared by the stream).
const STREAM_MSGS: usize = 64;

/// `reps` round trips of `buf` with `peer`, and as many streams of [`STREAM_MSGS`] messages
/// from the client to `peer`, each way: whole and cut into pieces of at most `piece` bytes,
/// alternating which goes first. The client's times (ns): round trips whole, then cut; time per
/// message of the streams whole, then cut.
fn pieces_trial(
    chan: &Channel,
    client: bool,
    peer: usize,
    clock: f64,
    buf: &mut [u8],
    piece: usize,
    reps: usize,
) -> Result<[Vec<f64>; 4], Error> {
    let mut times = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let mut ack = [0u8; 0];
    for rep in 0..reps {
        for k in 0..2 {
            let cut = (k + rep) % 2 == 1;
            chan.set_pieces(
                peer,
                if cut {
                    Pieces::new(piece, buf.len())
                } else {
                    None
                },
            );
            if client {
                let t0 = Instant::now();
                chan.send(buf, peer, TAG_DATA)?;
                chan.recv(buf, peer, TAG_DATA)?;
                times[usize::from(cut)].push(since(t0) - clock);
                let t0 = Instant::now();
                for _ in 0..STREAM_MSGS {
                    chan.send(buf, peer, TAG_DATA)?;
                }
                chan.recv(&mut ack, peer, TAG_CTRL)?;
                times[2 + usize::from(cut)].push((since(t0) - clock) / STREAM_MSGS as f64);
            } else {
                chan.recv(buf, peer, TAG_DATA)?;
                chan.send(buf, peer, TAG_DATA)?;
                for _ in 0..STREAM_MSGS {
                    chan.recv(buf, peer, TAG_DATA)?;
                }
                chan.send(&ack, peer, TAG_CTRL)?;
            }
        }
    }
    Ok(times)
}

/// Measures, between this rank and `peer` (the client times, the server echoes), round trips
/// and streams of the [`trial_sizes`] of each candidate piece size, sent whole and cut into
/// pieces of that size, alternating; [`decide_pieces`] decides. Both ranks return the same
/// decision (the client sends it); `None` if no candidate's two pieces won their round trip.
fn measure_pieces(
    chan: &Channel,
    client: bool,
    peer: usize,
    clock: f64,
) -> Result<Option<MessagePieces>, Error> {
    let max = trial_sizes(PIECE_SIZES[PIECE_SIZES.len() - 1])
        .max()
        .expect("sizes");
    let mut buf = vec![0u8; max];
    let mut trials = Vec::new();
    // A first pass of two round trips each way, not kept, warms the buffers and the library's
    // paths (the first round trips of a size measured up to 10× the later ones with MPICH).
    for (pass, reps) in [(0, 2), (1, PIECE_REPS)] {
        for &piece in &PIECE_SIZES {
            for len in trial_sizes(piece) {
                let times = pieces_trial(chan, client, peer, clock, &mut buf[..len], piece, reps)?;
                if client && pass == 1 {
                    trials.push(PieceTrial {
                        piece_bytes: piece as u64,
                        bytes: len as u64,
                        whole_ns: median(&times[0]),
                        pieces_ns: median(&times[1]),
                        stream_whole_ns: Some(median(&times[2])),
                        stream_pieces_ns: Some(median(&times[3])),
                    });
                }
            }
        }
    }
    chan.set_pieces(peer, None);
    let mut decision = [0u64; 2];
    if client {
        if let Some((piece, upto)) = decide_pieces(&trials) {
            decision = [piece, upto];
        }
        chan.send(bytemuck::cast_slice(&decision), peer, TAG_CTRL)?;
    } else {
        chan.recv(bytemuck::cast_slice_mut(&mut decision), peer, TAG_CTRL)?;
    }
    Ok((decision[0] > 0).then(|| MessagePieces {
        piece_bytes: decision[0],
        upto_bytes: decision[1],
        trials,
        whole_big_g_ns_per_byte: None,
    }))
}

/// The large probe sizes that `G` is fitted on: the ones sent the same way. Where the level
/// cuts messages into `pieces` (up to their limit), the sizes it cuts go as pieces
/// (eager copies) and the larger ones whole (on one host often a single copy, cheaper per
/// byte), so a slope across the limit mixes two protocols: with `--quick`'s 14 and 56 KiB and
/// a limit of 32 KiB, a far-mode calibration fitted `G` at −0.009 ns/B (p10 −0.022, p90
/// 0.065), and the planner priced 1 MiB like 8 B (docs/mpi.md, "Seventy-fourth session"). The
/// cut sizes where there are two or more (the pieces' cost per byte, which blocks up to the
/// limit pay), else the whole ones where there are two or more, else every size.
fn one_way_sent(large: &[PrttPoint], pieces: Option<Pieces>) -> Vec<PrttPoint> {
    let Some(pieces) = pieces else {
        return large.to_vec();
    };
    let (cut, whole) = cut_and_whole(large, pieces);
    if cut.len() >= 2 {
        cut
    } else if whole.len() >= 2 {
        whole
    } else {
        large.to_vec()
    }
}

/// The large probe sizes sent whole, where `G` was fitted on the cut ones ([`one_way_sent`])
/// and two or more went whole: the points of the level's second slope
/// ([`MessagePieces::whole_big_g_ns_per_byte`]); `None` where `G` holds for every size.
fn whole_sent(large: &[PrttPoint], pieces: Option<Pieces>) -> Option<Vec<PrttPoint>> {
    let (cut, whole) = cut_and_whole(large, pieces?);
    (cut.len() >= 2 && whole.len() >= 2).then_some(whole)
}

/// The large probe sizes `pieces` cuts, and those it sends whole.
fn cut_and_whole(large: &[PrttPoint], pieces: Pieces) -> (Vec<PrttPoint>, Vec<PrttPoint>) {
    large
        .iter()
        .copied()
        .partition(|p| pieces.count(p.lines as usize * UNIT) > 1)
}

/// The pieces decision from the trials of [`measure_pieces`]: `(piece, upto)`.
///
/// `piece` is the largest candidate whose smallest message (two pieces of `piece` bytes) won
/// its round trip by [`PIECE_WIN`]: just above the library's eager limit a whole message costs
/// a rendezvous, and that is the limit. Messages of up to two pieces are cut (the rendezvous
/// they avoid is most of their time); `upto` extends past `2 · piece` to the largest size up to
/// which every size tried won both its round trip and its stream by [`PIECE_WIN`]
/// ([`PieceTrial::cut_wins`]). `None` if no candidate's smallest message won its round trip.
fn decide_pieces(trials: &[PieceTrial]) -> Option<(u64, u64)> {
    let of = |p: u64| {
        let mut sizes: Vec<&PieceTrial> = trials.iter().filter(|t| t.piece_bytes == p).collect();
        sizes.sort_by_key(|t| t.bytes);
        sizes
    };
    let piece = PIECE_SIZES
        .iter()
        .rev()
        .map(|&p| p as u64)
        .find(|&p| of(p).first().is_some_and(|t| t.round_trip_wins(PIECE_WIN)))?;
    let upto = of(piece)
        .iter()
        .skip(1)
        .take_while(|t| t.cut_wins(PIECE_WIN))
        .map(|t| t.bytes)
        .last()
        .unwrap_or(2 * piece);
    Some((piece, upto))
}

/// The first pair of ranks meeting at each level of the cluster hierarchy.
fn pairs(cluster: &Cluster) -> Vec<Option<(usize, usize)>> {
    let h = cluster.hierarchy();
    let n = cluster.rank_pus().len();
    let mut out = vec![None; h.pu_level()];
    for a in 0..n {
        for b in a + 1..n {
            let d = cluster.level_of(a, b);
            if d < out.len() && out[d].is_none() {
                out[d] = Some((a, b));
            }
        }
    }
    out
}

/// The first two ranks sharing one PU, if any.
fn shared_pair(cluster: &Cluster) -> Option<(usize, usize)> {
    let p = cluster.rank_pus();
    (0..p.len()).find_map(|a| (a + 1..p.len()).find(|&b| p[b] == p[a]).map(|b| (a, b)))
}

/// Progress after a round.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Time spent measuring.
    pub elapsed: Duration,
    /// The budget.
    pub budget: Duration,
    /// Slices measured so far (rank 0's view: rounds × measured levels).
    pub slices: usize,
}

/// Measures every level where ranks meet and returns the profile on rank 0 (`None` elsewhere).
/// Collective: every rank calls it with the same options.
///
/// # Errors
/// [`Error::Usage`] for bad options or a job where no two ranks meet; [`Error::P2p`] if a probe's
/// message fails.
pub fn calibrate(
    world: &World,
    chan: &Channel,
    cluster: &Cluster,
    opts: &CalibrateOptions,
    mut progress: impl FnMut(&Progress),
) -> Result<Option<Profile>, Error> {
    opts.check()?;
    let me = world.rank();
    let h = cluster.hierarchy();
    let clock = clock_overhead();
    let resolution = clock_resolution();
    let mut probes: Vec<Probe> = pairs(cluster)
        .into_iter()
        .enumerate()
        .filter_map(|(d, p)| p.map(|(a, b)| (d, a, b)))
        .map(|(depth, client, server)| Probe {
            depth,
            name: h.level(depth).name(),
            client,
            server,
            samples: Settling::default(),
            discarded: 0,
            last: None,
            reps: MIN_REPS,
            pieces: None,
            whole_g: Vec::new(),
        })
        .collect();
    if probes.is_empty() {
        return Err(Error::Usage(
            "no two ranks meet at any level: calibration needs at least 2 ranks on distinct CPUs"
                .into(),
        ));
    }
    let switch = shared_pair(cluster);
    let mut switch_samples: Vec<(f64, f64)> = Vec::new();
    let max_len = *opts.all_sizes().iter().max().unwrap_or(&1) as usize * UNIT;
    let mut buf = vec![0u8; max_len];
    let nap = Duration::from_micros(200);
    if opts.pieces {
        // Before the main probes, so that they measure messages the way the executors will
        // send them: with the pieces in place.
        for p in probes.iter_mut() {
            if me == p.client || me == p.server {
                let peer = if me == p.client { p.server } else { p.client };
                let found = measure_pieces(chan, me == p.client, peer, clock)?;
                chan.set_pieces(peer, found.as_ref().and_then(Pieces::of));
                p.pieces = found;
            }
            chan.quiet_barrier(nap)?;
        }
    }
    let start = Instant::now();
    let mut rounds = 0usize;
    loop {
        for p in probes.iter_mut() {
            if me == p.client {
                let plan = match &p.last {
                    Some(last) => SlicePlan {
                        reps: p.reps,
                        delay: last
                            .iter()
                            .map(|&(one, gap)| {
                                let one = if one.is_finite() { one } else { 5000.0 };
                                let gap = if gap.is_finite() { gap } else { 0.0 };
                                one.max(2.0 * gap).max(100.0)
                            })
                            .collect(),
                        wait: last
                            .iter()
                            .map(|&(one, _)| {
                                2.0 * if one.is_finite() { one } else { 10_000.0 } + 500.0
                            })
                            .collect(),
                    },
                    None => SlicePlan {
                        reps: p.reps,
                        delay: vec![5000.0; opts.all_sizes().len()],
                        wait: vec![20_000.0; opts.all_sizes().len()],
                    },
                };
                let t0 = Instant::now();
                let (points, gaps, raw_hop) =
                    client_slice(chan, p.server, opts, &plan, clock, &mut buf)?;
                let took = t0.elapsed();
                let scale = opts.probe.slice.as_secs_f64() / took.as_secs_f64().max(1e-6);
                p.reps = ((f64::from(p.reps) * scale).round() as u32).clamp(MIN_REPS, 4096);
                let warm = p.last.is_some();
                let valid = gaps
                    .iter()
                    .zip(&plan.delay)
                    .all(|(&g, &d)| g.is_finite() && g < d);
                if warm && valid {
                    let (small, large) = points.split_at(opts.probe.sizes.len());
                    // G from the large messages (the library's protocol for them), if any,
                    // all sent the same way (cut into pieces, or whole)
                    let cut = p.pieces.as_ref().and_then(Pieces::of);
                    let big_g = fit_prtt(opts.probe.n, &one_way_sent(large, cut))
                        .ok()
                        .map(|f| f.big_g_byte);
                    let whole_g = whole_sent(large, cut)
                        .and_then(|w| fit_prtt(opts.probe.n, &w).ok())
                        .map(|f| f.big_g_byte)
                        .filter(|g| g.is_finite());
                    let sample = fit_prtt(opts.probe.n, small).ok().map(|f| {
                        [
                            raw_hop,
                            f.one_way,
                            f.l,
                            f.o_s,
                            f.o_r,
                            f.g,
                            big_g.unwrap_or(f.big_g_byte),
                            f.lambda,
                        ]
                    });
                    // a slice whose fit is not finite (e.g. λ with no positive gap) is dropped
                    match sample.filter(|s| s.iter().all(|v| v.is_finite())) {
                        Some(s) => {
                            p.samples.push(s, took.as_secs_f64());
                            if let Some(g) = whole_g {
                                p.whole_g.push((g, took.as_secs_f64()));
                            }
                        }
                        None => p.discarded += 1,
                    }
                } else if warm {
                    p.discarded += 1;
                }
                // Plan the next slice from the least values seen so far, not the last slice's: a
                // slice preempted by other work (milliseconds) must not set the next one's delays.
                let best = p
                    .last
                    .take()
                    .unwrap_or_else(|| vec![(f64::INFINITY, f64::INFINITY); gaps.len()]);
                let least = |a: f64, b: f64| if b > 0.0 { a.min(b) } else { a };
                p.last = Some(
                    best.iter()
                        .zip(points.iter().zip(&gaps))
                        .map(|(&(one, gap), (x, &g))| (least(one, x.prtt_1_0), least(gap, g)))
                        .collect(),
                );
            } else if me == p.server {
                server_slice(chan, p.client, opts, clock, &mut buf)?;
            }
            chan.quiet_barrier(nap)?;
        }
        if let Some((a, b)) = switch {
            let t0 = Instant::now();
            if me == a {
                let t = Instant::now();
                for _ in 0..opts.probe.hops {
                    chan.send(&buf[..0], b, TAG_DATA)?;
                    chan.recv(&mut buf[..0], b, TAG_DATA)?;
                }
                let one_way = (since(t) - clock) / f64::from(opts.probe.hops) / 2.0;
                if one_way.is_finite() {
                    switch_samples.push((one_way, t0.elapsed().as_secs_f64()));
                }
            } else if me == b {
                for _ in 0..opts.probe.hops {
                    chan.recv(&mut buf[..0], a, TAG_DATA)?;
                    chan.send(&buf[..0], a, TAG_DATA)?;
                }
            }
            chan.quiet_barrier(nap)?;
        }
        rounds += 1;
        if rounds % 10 == 0 {
            probes
                .iter_mut()
                .filter(|p| p.client == me)
                .for_each(|p| p.samples.check());
        }
        // Rank 0 decides, from the clients' settling and sample counts and its own clock.
        let mine = probes.iter().filter(|p| p.client == me);
        let flags = [
            u8::from(mine.clone().all(|p| p.samples.all_settled())),
            u8::from(mine.clone().all(|p| p.samples.len() >= 2)),
        ];
        let mut all = [0u8; 2];
        world.bounded("MPI_Allreduce (the calibration's progress)", |c| {
            c.all_reduce_into(
                &flags[..],
                &mut all[..],
                mpi::collective::SystemOperation::min(),
            )
        });
        let (all_settled, all_sampled) = (all[0] == 1, all[1] == 1);
        let elapsed = start.elapsed();
        // At least a warm-up round, and two measured slices per level: past the budget if
        // slices keep being discarded, up to four times it.
        let mut stop = elapsed >= 4 * opts.probe.budget
            || (rounds >= MIN_ROUNDS
                && all_sampled
                && (elapsed >= opts.probe.budget
                    || (elapsed >= opts.probe.min_time && all_settled)));
        world.bounded("MPI_Bcast (whether the calibration stops)", |c| {
            c.process_at_rank(0).broadcast_into(&mut stop)
        });
        progress(&Progress {
            elapsed,
            budget: opts.probe.budget,
            slices: rounds * probes.len(),
        });
        if stop {
            break;
        }
    }
    let duration = start.elapsed();
    // Each client sends its level to rank 0 as JSON (length first).
    let mut levels: Vec<LevelProfile> = (0..h.pu_level())
        .map(|d| {
            let note = "not measured: no two ranks of this job meet at this level";
            LevelProfile::unmeasured(h.level(d).name(), d, note)
        })
        .collect();
    let mut unsettled = Vec::new();
    for p in &probes {
        // The pair's pieces were for its probes; the results go out whole.
        if me == p.client {
            chan.set_pieces(p.server, None);
        } else if me == p.server {
            chan.set_pieces(p.client, None);
        }
        let level = if me == p.client {
            let d: Vec<Option<Distribution>> = (0..QUANTITIES.len())
                .map(|k| p.samples.distribution(k))
                .collect();
            let pus = cluster.rank_pus();
            let hosts = cluster.hosts();
            let host = |r: usize| &hosts[cluster.host_of()[r]];
            let mut note = format!(
                "over MPI: ranks {} ({}) and {} ({}); raw_hop_ns is an empty-message MPI \
                 ping-pong; capacity not measured over MPI",
                p.client,
                host(p.client),
                p.server,
                host(p.server)
            );
            if p.discarded > 0 {
                note.push_str(&format!(
                    "; {} slices discarded (gap ≥ delay d)",
                    p.discarded
                ));
            }
            let mut it = d.into_iter();
            let mut next = || it.next().flatten();
            let mut pieces = p.pieces.clone();
            if let Some(pieces) = pieces.as_mut().filter(|_| !p.whole_g.is_empty()) {
                let mut d = distribution(&p.whole_g);
                d.settled = p.whole_g.len() >= MIN_WHOLE_G_SLICES;
                pieces.whole_big_g_ns_per_byte = Some(d);
            }
            let lp = LevelProfile {
                name: p.name.clone(),
                depth: p.depth,
                pair: Some([pus[p.client], pus[p.server]]),
                slices: p.samples.len(),
                raw_hop_ns: next(),
                one_way_ns: next(),
                l_ns: next(),
                o_s_ns: next(),
                o_r_ns: next(),
                g_ns: next(),
                big_g_ns_per_byte: next(),
                lambda: next(),
                capacity: None,
                note: Some(note),
                runtime: None,
                pieces,
            };
            let lu = (lp, p.samples.unsettled(&p.name));
            if me == 0 {
                Some(lu)
            } else {
                let text = serde_json::to_vec(&lu).map_err(Error::herald)?;
                let len = text.len() as u64;
                chan.send(&len.to_le_bytes(), 0, TAG_CTRL)?;
                chan.send(&text, 0, TAG_CTRL)?;
                None
            }
        } else if me == 0 {
            let mut len = [0u8; 8];
            chan.recv(&mut len, p.client, TAG_CTRL)?;
            let mut text = vec![0u8; u64::from_le_bytes(len) as usize];
            chan.recv(&mut text, p.client, TAG_CTRL)?;
            Some(
                serde_json::from_slice::<(LevelProfile, Vec<String>)>(&text)
                    .map_err(Error::herald)?,
            )
        } else {
            None
        };
        if let Some((lp, u)) = level {
            let d = lp.depth;
            levels[d] = lp;
            unsettled.extend(u);
        }
    }
    // The combine's times, on rank 0 while the others sleep in the barrier.
    let combine = if me == 0 {
        combine_times(clock)
    } else {
        Vec::new()
    };
    chan.quiet_barrier(nap)?;
    // The switch samples live on rank a: it sends their distribution to rank 0.
    let mut switch_ns = None;
    if let Some((a, _)) = switch {
        let local = (me == a && !switch_samples.is_empty()).then(|| {
            let mut d = distribution(&switch_samples);
            d.settled = switch_samples.len() >= 10;
            d
        });
        switch_ns = if a == 0 {
            local
        } else if me == a {
            let text = serde_json::to_vec(&local).map_err(Error::herald)?;
            chan.send(&(text.len() as u64).to_le_bytes(), 0, TAG_CTRL)?;
            chan.send(&text, 0, TAG_CTRL)?;
            None
        } else if me == 0 {
            let mut len = [0u8; 8];
            chan.recv(&mut len, a, TAG_CTRL)?;
            let mut text = vec![0u8; u64::from_le_bytes(len) as usize];
            chan.recv(&mut text, a, TAG_CTRL)?;
            serde_json::from_slice::<Option<Distribution>>(&text).map_err(Error::herald)?
        } else {
            None
        };
    }
    let mut made = (me == 0).then(|| {
        let parts = (levels, unsettled, switch_ns, combine);
        profile(world, cluster, opts, (duration, clock, resolution), parts)
    });
    if opts.posted && cluster.hosts().len() == 1 {
        // Every rank plans the trees with rank 0's profile. Where the profile cannot model the
        // job (on a loaded host every slice of a level can be discarded), there is no tree to
        // compare with: the profile goes out without the comparison (`posted` empty: the
        // planner's trees everywhere), and every rank, holding the same profile, skips it alike.
        let shared = share_profile(world, made.as_ref())?;
        if cluster
            .model(&shared, &herald::model::Assumptions::default())
            .is_ok()
        {
            let (bcasts, reduces) = measure_posted(world, chan, cluster, &shared, opts, clock)?;
            if let Some(p) = made.as_mut() {
                p.posted = bcasts;
                p.posted_allreduce = reduces;
            }
        }
    }
    Ok(made)
}

/// Rank 0's profile (`profile` there; the others pass `None`) on every rank: collective.
///
/// # Errors
/// [`Error::Herald`] if the text rank 0 sent is not a profile.
pub fn share_profile(world: &World, profile: Option<&Profile>) -> Result<Profile, Error> {
    let mut text = profile
        .map(|p| p.to_json().into_bytes())
        .unwrap_or_default();
    let mut len = text.len() as u64;
    world.bounded("MPI_Bcast (the profile)", |c| {
        let root = c.process_at_rank(0);
        root.broadcast_into(&mut len);
        text.resize(len as usize, 0);
        root.broadcast_into(&mut text[..]);
    });
    Profile::from_json(&String::from_utf8_lossy(&text)).map_err(Error::herald)
}

/// The sizes at which the calibration compares posted broadcasts and allreduces with
/// herald-mpi's choice over MPI ([`Profile::posted`], [`Profile::posted_allreduce`]). 32 KiB
/// since the twenty-ninth session: between 16 and 64 KiB a tree's time over MPI is not linear
/// (the library's eager limit and herald's message pieces), and interpolated it looked faster
/// than posting at 32 KiB where it measured 1.2× Open MPI's broadcast at 2 ranks. 4 MiB since
/// the sixty-sixth session: with broadcasts alone in the comparison, 1 MiB chose the tree in
/// a state of the host where 4 MiB posted took 0.79–0.94 of Open MPI's `MPI_Bcast` and the
/// tree 0.97–1.09 (beyond the largest size the times are scaled from it).
pub const POSTED_BYTES: [usize; 10] = [
    8,
    64,
    512,
    4 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    256 << 10,
    1 << 20,
    4 << 20,
];

/// Broadcasts a sample of the posted-against-tree comparison times back to back after one
/// barrier ([`Profile::posted`]): where
/// processes share CPUs a broadcast timed alone takes either the readers' copies or a turn of
/// the CPUs (8 processes on 2 CPUs: 0.1 µs or 20 µs, medians of 21 landing on either mode),
/// and a loop of a few averages the turns into each sample.
pub const POSTED_LOOP: usize = 8;

/// Broadcasts from rank 0 posted in a shared window ([`Post`](crate::Post), the default shape
/// for the number of ranks)
/// and along the planner's tree under `profile` (its pieces applied), then allreduces posted
/// and by the allreduce herald-mpi predicts fastest ([`AllreducePlans`]), at each of
/// [`POSTED_BYTES`]: alternating, each sample [`POSTED_LOOP`] collectives back to back after an
/// `MPI_Barrier`, the slowest rank's time per collective (the bench's `loop`, short), and for
/// broadcasts where the ranks have CPUs of their own one more alone after a barrier (the
/// bench's `barrier`: [`PostedPoint::posted_one_ns`](herald::model::PostedPoint)). Every
/// rank takes part; the points (broadcasts, allreduces) are the same on every rank.
fn measure_posted(
    world: &World,
    chan: &Channel,
    cluster: &Cluster,
    profile: &Profile,
    opts: &CalibrateOptions,
    clock: f64,
) -> Result<(Vec<PostedPoint>, Vec<PostedPoint>), Error> {
    let reps = if opts.probe.mode == "quick" { 21 } else { 61 };
    let post = crate::Post::new(chan, crate::post::PostShape::for_ranks(chan.size()))?;
    cluster.apply_pieces(chan, profile);
    let mut bcasts = Vec::new();
    let mut buf = vec![0u8; POSTED_BYTES[POSTED_BYTES.len() - 1]];
    for (k, &bytes) in POSTED_BYTES.iter().enumerate() {
        let (s, c, _) = cluster.plan(profile, bytes as u64, 0)?;
        let plan = crate::BroadcastPlan::new(&s)?;
        let buf = &mut buf[..bytes];
        let alone = !cluster.oversubscribed();
        let (posted_ns, tree_ns, one) = compare(world, reps, clock, alone, |step| match step {
            Step::Setup(rep) => {
                if world.rank() == 0 {
                    crate::payload(buf, (k * 1000 + rep) as u64);
                }
                Ok(())
            }
            Step::Posted => post.broadcast(chan, buf, 0).map_err(Error::from),
            Step::OverMpi => plan.run(chan, buf),
        })?;
        bcasts.push(PostedPoint {
            ranks: world.size() as u32,
            bytes: bytes as u64,
            posted_ns,
            tree_ns,
            tree: format!("{} ×{}", c.label, c.blocks),
            posted_one_ns: one.as_ref().map(|o| o.0.clone()),
            tree_one_ns: one.map(|o| o.1),
        });
    }
    let mut reduces = Vec::new();
    let mut scratch = crate::CombineScratch::default();
    for (k, &bytes) in POSTED_BYTES.iter().enumerate() {
        let plans = AllreducePlans::new(cluster, profile, bytes as u64)?;
        let best = plans.best();
        let run = plans.runner(best)?;
        let mut value = vec![0u64; bytes / 8];
        let (posted_ns, tree_ns, _) = compare(world, reps, clock, false, |step| match step {
            Step::Setup(rep) => {
                crate::contribution(&mut value, world.rank(), (k * 1000 + rep) as u64);
                Ok(())
            }
            Step::Posted => post.allreduce(chan, &mut value).map_err(Error::from),
            Step::OverMpi => run.run(chan, &mut scratch, &mut value),
        })?;
        reduces.push(PostedPoint {
            ranks: world.size() as u32,
            bytes: bytes as u64,
            posted_ns,
            tree_ns,
            tree: plans.candidate(best).label.clone(),
            posted_one_ns: None,
            tree_one_ns: None,
        });
    }
    drop(post);
    Ok((bcasts, reduces))
}

/// What [`compare`] measured: the posted side's and the other side's ns per call back to back,
/// and, where it timed them, each side's ns of one call alone after a barrier.
type Compared = (
    Distribution,
    Distribution,
    Option<(Distribution, Distribution)>,
);

/// A step of [`compare`]: set the data of a sample up (untimed), or one call of a side.
#[derive(Debug, Clone, Copy)]
enum Step {
    Setup(usize),
    Posted,
    OverMpi,
}

/// Times the posted side and the side over MPI of a collective alternately, `reps` samples
/// each after an untimed one: per sample `step(Setup(rep))`, a barrier, then [`POSTED_LOOP`]
/// calls of the side; the slowest rank's ns per call. With `alone`, each sample then times
/// one more call of its side after a barrier (the slowest rank's ns: a call's latency), the
/// third value. Collective.
fn compare(
    world: &World,
    reps: usize,
    clock: f64,
    alone: bool,
    mut step: impl FnMut(Step) -> Result<(), Error>,
) -> Result<Compared, Error> {
    // [posted, over MPI] per repetition, this rank's ns per call in the loop, then alone
    let mut times = vec![0f64; 4 * reps];
    for rep in 0..=reps {
        for side in [rep % 2, 1 - rep % 2] {
            let call = if side == 0 {
                Step::Posted
            } else {
                Step::OverMpi
            };
            step(Step::Setup(rep))?;
            world.barrier();
            let t = Instant::now();
            for _ in 0..POSTED_LOOP {
                step(call)?;
            }
            let ns = (since(t) - clock).max(0.0) / POSTED_LOOP as f64;
            let one = if alone {
                world.barrier();
                let t = Instant::now();
                step(call)?;
                (since(t) - clock).max(0.0)
            } else {
                0.0
            };
            if rep > 0 {
                times[2 * (rep - 1) + side] = ns;
                times[2 * reps + 2 * (rep - 1) + side] = one;
            }
        }
    }
    let mut slowest = vec![0f64; 4 * reps];
    world.bounded("MPI_Allreduce (the slowest rank's times)", |c| {
        c.all_reduce_into(
            &times[..],
            &mut slowest[..],
            mpi::collective::SystemOperation::max(),
        )
    });
    let side = |at: usize, s: usize| {
        let samples: Vec<(f64, f64)> = (0..reps)
            .map(|r| (slowest[at + 2 * r + s], r as f64))
            .collect();
        let mut d = distribution(&samples);
        d.settled = true;
        d
    };
    let one = alone.then(|| (side(2 * reps, 0), side(2 * reps, 1)));
    Ok((side(0, 0), side(0, 1), one))
}

/// Assembles the profile (rank 0).
fn profile(
    world: &World,
    cluster: &Cluster,
    opts: &CalibrateOptions,
    (duration, clock, resolution): (Duration, f64, f64),
    (levels, unsettled, switch_ns, combine_ns): (
        Vec<LevelProfile>,
        Vec<String>,
        Option<Distribution>,
        Vec<CombinePoint>,
    ),
) -> Profile {
    let h = cluster.hierarchy();
    Profile {
        schema: PROFILE_SCHEMA,
        host: herald::model::host_name(),
        cpu: herald::model::this_cpu(),
        date: herald::calibrate::utc_now(),
        tool: format!(
            "herald-mpi {} over {} ({} ranks on {} host(s): {})",
            env!("CARGO_PKG_VERSION"),
            world.library(),
            world.size(),
            cluster.hosts().len(),
            cluster.hosts().join(", ")
        ),
        mode: opts.probe.mode.to_owned(),
        duration_s: duration.as_secs_f64(),
        clock_overhead_ns: clock,
        clock_resolution_ns: Some(resolution),
        topology: TopologySummary::of(h),
        levels,
        unsettled,
        switch_ns,
        spin_ns: None,
        combine_ns,
        posted: Vec::new(), // measured after, with every rank (`measure_posted`)
        posted_allreduce: Vec::new(),
    }
}

/// The sizes [`combine_times`] times: a value whose three vectors fit a core's L2 cache here
/// and one that does not (the values whose combine decides between allreduces: 256 KiB and
/// more, several per rank).
const COMBINE_BYTES: [usize; 2] = [32 << 10, 1 << 20];

/// Timed combines of each size, after one untimed.
const COMBINE_REPS: usize = 21;

/// The executors' combine ([`crate::exec::fold`]: a received vector of `u64` added to this
/// rank's into a third), ns per combine, at each of [`COMBINE_BYTES`], over [`COMBINE_REPS`]
/// combines each.
fn combine_times(clock: f64) -> Vec<CombinePoint> {
    COMBINE_BYTES
        .iter()
        .map(|&bytes| {
            let len = bytes / 8;
            let acc: Vec<u64> = (0..len as u64).collect();
            let got: Vec<u64> = (0..len as u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .collect();
            let mut out = vec![0u64; len];
            let start = Instant::now();
            let mut samples = Vec::with_capacity(COMBINE_REPS);
            for rep in 0..=COMBINE_REPS {
                let t = Instant::now();
                crate::exec::fold(&mut out, &acc, bytemuck::cast_slice(&got));
                std::hint::black_box(&mut out);
                if rep > 0 {
                    samples.push(((since(t) - clock).max(0.0), start.elapsed().as_secs_f64()));
                }
            }
            let mut ns = distribution(&samples);
            ns.settled = true;
            CombinePoint {
                bytes: bytes as u64,
                ns,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `G` is fitted on the large sizes sent one way: with a level that cuts up to 32 KiB,
    /// `--quick`'s 14 KiB goes as pieces and 56, 224 and 896 KiB whole, so the whole ones; up
    /// to 64 KiB, 14 and 56 KiB as pieces (the two cut ones), and 224 and 896 KiB give the
    /// second slope; without pieces, or with one size on each side and no third, every size.
    /// The sizes come from `CalibrateOptions::quick`.
    #[test]
    fn g_is_fitted_on_sizes_sent_the_same_way() {
        let large: Vec<PrttPoint> = CalibrateOptions::quick()
            .large
            .iter()
            .map(|&lines| PrttPoint {
                lines,
                prtt_1_0: 0.0,
                prtt_n_0: 0.0,
                prtt_n_d: 0.0,
                delay_total: 0.0,
                o_r: 0.0,
            })
            .collect();
        let kib = |p: &[PrttPoint]| -> Vec<u64> {
            p.iter()
                .map(|p| u64::from(p.lines) * UNIT as u64 / 1024)
                .collect()
        };
        assert_eq!(kib(&large), [14, 56, 224, 896]);
        let upto = |bytes: usize| Pieces::new(4032, bytes);
        assert_eq!(kib(&one_way_sent(&large, upto(32 << 10))), [56, 224, 896]);
        assert_eq!(kib(&one_way_sent(&large, upto(64 << 10))), [14, 56]);
        assert_eq!(kib(&one_way_sent(&large, upto(256 << 10))), [14, 56, 224]);
        assert_eq!(kib(&one_way_sent(&large, None)), [14, 56, 224, 896]);
        assert_eq!(kib(&one_way_sent(&large[..2], upto(32 << 10))), [14, 56]);
        // The second slope: only where G took the cut sizes and two or more went whole.
        let whole = |p: Option<Pieces>| whole_sent(&large, p).map(|w| kib(&w));
        assert_eq!(whole(upto(64 << 10)), Some(vec![224, 896]));
        assert_eq!(whole(upto(32 << 10)), None); // G itself is the whole sizes'
        assert_eq!(whole(upto(256 << 10)), None); // one size whole: no slope
        assert_eq!(whole(None), None);
    }

    /// A trial with the round trips and, if given, the streams (ns).
    fn trial(piece: u64, bytes: u64, rt: (f64, f64), stream: Option<(f64, f64)>) -> PieceTrial {
        PieceTrial {
            piece_bytes: piece,
            bytes,
            whole_ns: rt.0,
            pieces_ns: rt.1,
            stream_whole_ns: stream.map(|s| s.0),
            stream_pieces_ns: stream.map(|s| s.1),
        }
    }

    /// Open MPI's trials of 2026-11-29 at 2 ranks (4032-byte pieces, ns; measured on the
    /// grid of 2, 4, 8, 16 pieces): the round trips win up to 32 256 bytes, the streams only
    /// up to 16 128.
    fn measured() -> Vec<PieceTrial> {
        vec![
            trial(4032, 8064, (7681.0, 3986.0), Some((2977.0, 1571.0))),
            trial(4032, 16128, (10115.0, 6980.0), Some((3730.0, 2705.0))),
            trial(4032, 32256, (15113.0, 12449.0), Some((5096.0, 6277.0))),
            trial(4032, 64512, (25648.0, 24967.0), Some((7894.0, 12412.0))),
            trial(8128, 16256, (9574.0, 14572.0), Some((3741.0, 5990.0))),
            trial(8128, 32512, (14301.0, 28492.0), Some((5166.0, 11527.0))),
        ]
    }

    #[test]
    fn a_cut_that_loses_the_stream_is_not_kept() {
        // 32 256 bytes: round trip 0.82 of the whole message's (a win by the 0.9 margin),
        // stream 1.23 (a loss): the cut stops at 16 128.
        assert_eq!(decide_pieces(&measured()), Some((4032, 16128)));
    }

    #[test]
    fn without_streams_the_round_trips_decide() {
        // A profile written before the streams were measured: 32 256 wins its round trip by
        // 0.82, 64 512 does not (0.97).
        let old: Vec<PieceTrial> = measured()
            .into_iter()
            .map(|t| PieceTrial {
                stream_whole_ns: None,
                stream_pieces_ns: None,
                ..t
            })
            .collect();
        assert_eq!(decide_pieces(&old), Some((4032, 32256)));
    }

    #[test]
    fn the_largest_winning_piece_is_kept_and_none_when_nothing_wins() {
        let mut t = measured();
        // 8128-byte pieces now win at their two smallest sizes: they are the larger candidate.
        t[4] = trial(8128, 16256, (10000.0, 5000.0), Some((4000.0, 2000.0)));
        t[5] = trial(8128, 32512, (14000.0, 9000.0), Some((5000.0, 4000.0)));
        assert_eq!(decide_pieces(&t), Some((8128, 32512)));
        // No candidate's smallest message wins its round trip: no eager limit found.
        let lose = vec![trial(4032, 8064, (8000.0, 7500.0), Some((3000.0, 2000.0)))];
        assert_eq!(decide_pieces(&lose), None);
    }

    #[test]
    fn two_pieces_are_cut_even_where_their_stream_loses() {
        // Two pieces win the round trip (0.5) but not the stream (1.05): messages of up to two
        // pieces are still cut (whole, each is a rendezvous). The next size loses its round
        // trip, so the cut stops at two pieces although the size after it won both.
        let t = vec![
            trial(4032, 8064, (8000.0, 4000.0), Some((3000.0, 3150.0))),
            trial(4032, 8192, (9000.0, 9500.0), Some((3500.0, 2000.0))),
            trial(4032, 12288, (9000.0, 5000.0), Some((3500.0, 2000.0))),
        ];
        assert_eq!(decide_pieces(&t), Some((4032, 8064)));
    }

    #[test]
    fn the_trial_sizes_are_two_pieces_then_powers_of_two_and_their_halves_between() {
        let sizes: Vec<usize> = trial_sizes(8128).collect();
        assert_eq!(
            sizes,
            [16256, 16384, 24576, 32768, 49152, 65536, 98304, 131072]
        );
    }
}
