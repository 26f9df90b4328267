//! herald against the MPI library's own `MPI_Bcast` and `MPI_Allreduce`: identical loops,
//! alternating rounds.
//!
//! # What is compared
//!
//! For each collective (broadcast, allreduce), payload size and loop variant, a *round* runs
//! the same loop of `K` collectives once with herald and once with the library, in alternating
//! order (herald first in even rounds, the library first in odd ones, so a drift of the machine
//! hits both alike). `K` is chosen once per (collective, size, variant) from a warm-up so a round
//! takes about `--target-ms`, is at least 4, and is the same for both sides. Each round
//! gives one sample per side; the figures are the median, p10 and p90 over rounds, and `ratio` =
//! herald's median / the library's median (below 1: herald is faster).
//!
//! Two herald sides, chosen with `--herald`:
//!
//! * `mpi` — herald's schedules over MPI point-to-point ([`BroadcastPlan`],
//!   [`CombinePlan`](crate::CombinePlan)) among the same `N` processes the library's collective
//!   runs on: herald's planner's choice under the MPI profile (per size and root), against
//!   `MPI_Bcast` / `MPI_Allreduce`; for allreduce the one predicted fastest of herald's
//!   combining allreduce, its reduce followed by the planned broadcast, the ring
//!   ([`RingAllreduce`](crate::RingAllreduce)) and recursive halving
//!   ([`HalvingAllreduce`](crate::HalvingAllreduce)), as [`crate::allreduce`] predicts them
//!   (`--allreduce` fixes one).
//!   Where every rank is on one host, a broadcast or an allreduce is posted in a shared window
//!   instead ([`Post`]) at the sizes where the profile measured posting faster than the
//!   planner's tree or the predicted allreduce ([`PostChoice`], `--post`), or, with `--post
//!   adapt`, where timing both ways as the bench runs finds it faster ([`crate::adapt`]).
//! * `inproc` — herald's in-process collectives ([`herald::Comm`]): `N` threads of rank 0's
//!   process, pinned to the CPUs of the `N` MPI processes (thread `r` on rank `r`'s CPU), using
//!   herald's default schedule (its planner's choice when `herald calibrate` has written a
//!   profile of this machine, else binomial). While they run, the other `N − 1` processes wait
//!   in a barrier that sleeps 1 ms between polls from the first (`MPI_Ibarrier`), so the
//!   threads have the CPUs;
//!   while the library runs, rank 0's threads are parked. This is the comparison a user makes
//!   between herald and MPI on one node: the same CPUs, the same loop, threads against
//!   processes.
//!
//! # The loops (identical on both sides)
//!
//! * `loop` — a barrier, then `K` collectives back to back from root 0; a rank's sample is its
//!   elapsed time / `K`, then an untimed barrier, so no rank checks its result (below) while
//!   another on its CPU still times. Broadcasts may overlap (a root starts the next while
//!   leaves still receive), as in any MPI loop benchmark.
//! * `pingpong` — the same, with the root alternating between rank 0 and rank `N − 1`: the next
//!   root must have received the previous broadcast before it can send, so every broadcast's
//!   latency is exposed (for allreduce, each result is the next input: every allreduce depends
//!   on the previous one, which any allreduce loop already does).
//! * `barrier` — `K` times: a barrier, then one collective timed alone; per iteration the
//!   slowest rank's time, and the round's sample is the median over its iterations (OSU style).
//!   Each side uses its own barrier: the library's `MPI_Barrier` for it and for herald over MPI,
//!   herald's `CommRank::barrier` in process.
//!
//! A round's sample is the slowest rank's (or thread's) time per collective. Every round is
//! checked: after it, every rank compares its buffer with what the root sent (broadcast) or the
//! sum of every rank's contribution (allreduce, u64 elements, wrapping), for both sides; a
//! mismatch fails the run.
//!
//! The payload of the in-process allreduce is the same `u64` array as the library's, on the heap,
//! reduced in place with herald's `CommRank::allreduce_slice`.

use crate::adapt::{Chooser, Kind, Way};
use crate::allreduce::{AllreduceChoice, AllreducePlans, AllreduceRun};
use crate::cluster::Cluster;
use crate::error::Error;
use crate::exec::{BroadcastPlan, CombineScratch};
use crate::p2p::Channel;
use crate::post::{Post, PostShape};
use crate::world::World;
use crate::{contribution, payload, sum_of_contributions};
use herald::{generate, runtime::Spread, Algorithm, Comm, CommRank, Profile, Request, Team};
use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::topology::Communicator;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Which collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Collective {
    /// Broadcast (`MPI_Bcast`).
    Bcast,
    /// Allreduce of u64 elements, summed (`MPI_Allreduce` with `MPI_SUM`).
    Allreduce,
}

/// Which loop (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// Back to back from root 0.
    Loop,
    /// Roots alternating between 0 and `N − 1`.
    Pingpong,
    /// A barrier before each collective, which is timed alone.
    Barrier,
}

/// Which herald is measured (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HeraldSide {
    /// herald's schedules over MPI point-to-point, `N` processes.
    Mpi,
    /// herald's in-process collectives, `N` threads of rank 0.
    Inproc,
}

impl std::str::FromStr for Collective {
    type Err = Error;
    fn from_str(s: &str) -> Result<Collective, Error> {
        match s {
            "bcast" | "broadcast" => Ok(Collective::Bcast),
            "allreduce" => Ok(Collective::Allreduce),
            _ => Err(Error::Usage(format!(
                "unknown collective {s:?} (bcast, allreduce)"
            ))),
        }
    }
}

impl std::str::FromStr for Variant {
    type Err = Error;
    fn from_str(s: &str) -> Result<Variant, Error> {
        match s {
            "loop" => Ok(Variant::Loop),
            "pingpong" | "ping-pong" => Ok(Variant::Pingpong),
            "barrier" | "barrier-then-one" => Ok(Variant::Barrier),
            _ => Err(Error::Usage(format!(
                "unknown variant {s:?} (loop, pingpong, barrier)"
            ))),
        }
    }
}

/// What to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchOptions {
    /// herald over MPI, or in process.
    pub herald: HeraldSide,
    /// Collectives.
    pub collectives: Vec<Collective>,
    /// Loop variants.
    pub variants: Vec<Variant>,
    /// Payload sizes in bytes (multiples of 8).
    pub sizes: Vec<usize>,
    /// Measured rounds per (collective, size, variant), after one warm-up round.
    pub rounds: usize,
    /// Target duration of one side's round.
    pub target: Duration,
    /// A fixed algorithm for herald over MPI instead of the planner's choice.
    pub algo: Option<Algorithm>,
    /// herald over MPI: a fixed allreduce instead of the planner's choice (`None`: the
    /// combining allreduce when `algo` is given, else the planner's pick).
    pub allreduce: Option<AllreduceChoice>,
    /// herald over MPI: when broadcasts and allreduces are posted in a shared window
    /// ([`Post`]) instead of sent along the planner's tree or the predicted allreduce.
    pub post: PostChoice,
}

/// When herald over MPI posts a broadcast or an allreduce in a shared window ([`Post`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PostChoice {
    /// Where the profile says posting is faster at this size and rank count
    /// ([`Profile::posted_wins`](herald::Profile::posted_wins),
    /// [`Profile::posted_allreduce_wins`](herald::Profile::posted_allreduce_wins), measured by
    /// `herald-mpi calibrate`): every rank on one node. With `algo` set, never; with
    /// `allreduce` set, never for allreduces.
    #[default]
    Auto,
    /// By timing both ways as the bench runs, starting on the profile's choice ([`Chooser`]),
    /// where the profile's two times are close and long enough
    /// ([`timed`](crate::adapt::timed)); elsewhere as [`PostChoice::Auto`].
    Adapt,
    /// Always, with slots of this shape (every rank must be on one node).
    Always(PostShape),
    /// Never: the planner's trees only.
    Never,
}

impl BenchOptions {
    /// 8 B, 16 B, … 4 MiB.
    pub fn default_sizes() -> Vec<usize> {
        (3..=22).map(|p| 1usize << p).collect()
    }

    fn check(&self) -> Result<(), Error> {
        if self.rounds == 0 || self.sizes.is_empty() || self.variants.is_empty() {
            return Err(Error::Usage(
                "need rounds ≥ 1, some sizes and some variants".into(),
            ));
        }
        if let Some(&s) = self
            .sizes
            .iter()
            .find(|&&s| s == 0 || s % 8 != 0 || s > 1 << 30)
        {
            return Err(Error::Usage(format!(
                "size {s}: sizes are multiples of 8 bytes from 8 B to 1 GiB"
            )));
        }
        Ok(())
    }
}

/// Median, p10 and p90 in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Micros {
    /// Median.
    pub median: f64,
    /// 10th percentile.
    pub p10: f64,
    /// 90th percentile.
    pub p90: f64,
}

impl Micros {
    fn of(samples: &[f64]) -> Micros {
        let d: Vec<Duration> = samples
            .iter()
            .map(|&s| Duration::from_secs_f64(s))
            .collect();
        let s = Spread::of(&d).unwrap_or(Spread {
            median: Duration::ZERO,
            p10: Duration::ZERO,
            p90: Duration::ZERO,
        });
        let us = |d: Duration| (d.as_secs_f64() * 1e9).round() / 1000.0;
        Micros {
            median: us(s.median),
            p10: us(s.p10),
            p90: us(s.p90),
        }
    }
}

/// One row of results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Ranks (processes; threads for herald in process).
    pub n: usize,
    /// Payload bytes.
    pub bytes: usize,
    /// The collective.
    pub collective: Collective,
    /// The loop.
    pub variant: Variant,
    /// Which herald.
    pub herald: HeraldSide,
    /// herald's schedule(s), in words.
    pub algorithm: String,
    /// herald: µs per collective, over rounds.
    pub herald_us: Micros,
    /// The library: µs per collective, over rounds.
    pub mpi_us: Micros,
    /// herald's median / the library's median.
    pub ratio: f64,
    /// The host's latency mode while the row ran: the one-way time of a raw ping-pong (one
    /// cache line per direction, [`RAW_HOPS`] round trips) between two threads of rank 0 on
    /// rank 0's and rank 1's CPUs, timed before each pair of rounds while the other ranks
    /// sleep (µs; absent with one rank, or where the two ranks share a CPU or either's CPU is
    /// unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_hop_us: Option<Micros>,
    /// Collectives per round (both sides).
    pub iters: usize,
    /// Measured rounds.
    pub rounds: usize,
}

/// A per-rank buffer state for one (collective, size).
struct Buffers {
    bytes: Vec<u8>,
    value: Vec<u64>,
    result: Vec<u64>,
    scratch: CombineScratch,
}

/// What herald runs over MPI for one (collective, size).
enum OverMpi {
    Bcast([BroadcastPlan; 2]),
    /// Posted in the shared window (the bench's [`Post`]).
    Posted,
    Allreduce(AllreduceRun),
    /// Posted or the plan over MPI, whichever the bench's [`Chooser`] finds faster, starting
    /// on the profile's choice: `(posted, over MPI)` ns by the profile.
    Adaptive(Box<OverMpi>, (f64, f64)),
}

/// One timed round: `k` collectives of `bytes` in a row, timed as `variant` says, on data made
/// from `seed`; both sides run the same rounds.
#[derive(Debug, Clone, Copy)]
struct Round {
    coll: Collective,
    variant: Variant,
    k: usize,
    bytes: usize,
    seed: u64,
}

/// The library's or herald-over-MPI's round on this rank: seconds per collective (this rank's).
fn mpi_round(
    world: &World,
    chan: &Channel,
    round: Round,
    herald: Option<&OverMpi>,
    (post, chooser): (Option<&Post>, &Chooser),
    b: &mut Buffers,
) -> Result<f64, Error> {
    let Round {
        coll, variant, k, ..
    } = round;
    let n = world.size();
    let comm = world.comm();
    let root_of = |i: usize| match variant {
        Variant::Pingpong if i % 2 == 1 => n - 1,
        _ => 0,
    };
    let one = |i: usize, b: &mut Buffers| -> Result<(), Error> {
        match (coll, herald) {
            (Collective::Bcast, None) => {
                comm.process_at_rank(root_of(i) as i32)
                    .broadcast_into(&mut b.bytes[..]);
            }
            (Collective::Allreduce, None) => {
                comm.all_reduce_into(&b.value[..], &mut b.result[..], SystemOperation::sum());
                std::mem::swap(&mut b.value, &mut b.result);
            }
            (_, Some(OverMpi::Adaptive(over, times))) => {
                let post = post.ok_or_else(|| Error::Usage("no shared window".into()))?;
                chooser.call(
                    (kind(coll), round.bytes),
                    *times,
                    (post, chan),
                    |way| match way {
                        Way::Posted => {
                            herald_call(coll, &OverMpi::Posted, Some(post), chan, b, root_of(i))
                        }
                        Way::OverMpi => herald_call(coll, over, Some(post), chan, b, root_of(i)),
                    },
                )?;
            }
            (_, Some(over)) => herald_call(coll, over, post, chan, b, root_of(i))?,
        }
        Ok(())
    };
    let barrier = |_: &mut Buffers| {
        world.barrier();
        Ok(())
    };
    match time_calls(b, variant, k, barrier, |b, i| one(i, b))? {
        Timed::Mean(t) => Ok(t),
        Timed::Each(times) => {
            // the slowest rank per iteration, then the median over iterations
            let mut all = vec![0f64; k];
            comm.all_reduce_into(&times[..], &mut all[..], SystemOperation::max());
            all.sort_by(f64::total_cmp);
            Ok(all[(k - 1) / 2])
        }
    }
}

/// The [`Chooser`]'s kind of a collective.
fn kind(coll: Collective) -> Kind {
    match coll {
        Collective::Bcast => Kind::Broadcast,
        Collective::Allreduce => Kind::Allreduce,
    }
}

/// One call of herald over MPI, `over`'s way (not [`OverMpi::Adaptive`]), from `root`.
fn herald_call(
    coll: Collective,
    over: &OverMpi,
    post: Option<&Post>,
    chan: &Channel,
    b: &mut Buffers,
    root: usize,
) -> Result<(), Error> {
    let post = || post.ok_or_else(|| Error::Usage("no shared window".into()));
    match (coll, over) {
        (Collective::Bcast, OverMpi::Bcast(plans)) => {
            plans[usize::from(root != 0)].run(chan, &mut b.bytes)?;
        }
        (Collective::Bcast, OverMpi::Posted) => post()?.broadcast(chan, &mut b.bytes, root)?,
        (Collective::Allreduce, OverMpi::Allreduce(run)) => {
            run.run(chan, &mut b.scratch, &mut b.value)?;
        }
        (Collective::Allreduce, OverMpi::Posted) => post()?.allreduce(chan, &mut b.value)?,
        _ => unreachable!("plans match their collective, and do not nest"),
    }
    Ok(())
}

/// The fewest collectives in a round (`K`), whatever the target time. At `K = 1` the `pingpong`
/// loop is no ping-pong (one broadcast from rank 0; the root never alternates) and every loop
/// is one call timed after a barrier: the round's cold start. With 8 MPICH processes on 2 CPUs
/// a ping-pong of 4 broadcasts takes 8–24 ms a broadcast (the processes poll instead of
/// yielding) where one broadcast after a barrier takes about 10 µs; the warm-up settled on
/// `K = 1` there and the rows hid it. With 4, each root of a ping-pong sends twice.
const MIN_K: usize = 4;

/// `k` timed calls of `one`, on this rank.
enum Timed {
    /// The loop variants: seconds per call over the whole loop (one barrier before it).
    Mean(f64),
    /// The barrier variant: each call's own seconds (a barrier before each), to be reduced
    /// across ranks by the caller.
    Each(Vec<f64>),
}

/// Times `k` calls of `one` on `ctx` as `variant` says, with `barrier` between the ranks.
fn time_calls<C, E>(
    ctx: &mut C,
    variant: Variant,
    k: usize,
    mut barrier: impl FnMut(&mut C) -> Result<(), E>,
    mut one: impl FnMut(&mut C, usize) -> Result<(), E>,
) -> Result<Timed, E> {
    match variant {
        Variant::Loop | Variant::Pingpong => {
            barrier(ctx)?;
            let t0 = Instant::now();
            for i in 0..k {
                one(ctx, i)?;
            }
            let t = t0.elapsed().as_secs_f64() / k as f64;
            // Untimed: every rank stops its clock before any rank checks its result. A rank
            // that returned first would otherwise build and compare its expected bytes on a
            // CPU whose other ranks are still timing their last calls (`herald fidelity` had
            // this order until its run AG; a 4 MiB check takes milliseconds).
            barrier(ctx)?;
            Ok(Timed::Mean(t))
        }
        Variant::Barrier => {
            let mut times = Vec::with_capacity(k);
            for i in 0..k {
                barrier(ctx)?;
                let t0 = Instant::now();
                one(ctx, i)?;
                times.push(t0.elapsed().as_secs_f64());
            }
            Ok(Timed::Each(times))
        }
    }
}

/// Fills the buffers for a round (`seed`): the broadcast payload on its first root, this
/// rank's allreduce contribution.
fn fill(b: &mut Buffers, coll: Collective, rank: usize, seed: u64) {
    match coll {
        Collective::Bcast => {
            if rank == 0 {
                payload(&mut b.bytes, seed);
            } else {
                b.bytes.fill(0);
            }
        }
        Collective::Allreduce => contribution(&mut b.value, rank, seed),
    }
}

/// What a rank must hold after `round` among `n` ranks (see the module docs).
fn check(b: &Buffers, round: Round, n: usize) -> Result<(), String> {
    let seed = round.seed;
    match round.coll {
        Collective::Bcast => {
            let mut want = vec![0u8; b.bytes.len()];
            payload(&mut want, seed);
            match b.bytes.iter().zip(&want).position(|(x, y)| x != y) {
                None => Ok(()),
                Some(at) => Err(format!("broadcast differs at byte {at}")),
            }
        }
        Collective::Allreduce => {
            let want = allreduce_expected(b.value.len(), round.k, n, seed);
            match b.value.iter().zip(&want).position(|(x, y)| x != y) {
                None => Ok(()),
                Some(at) => Err(format!("allreduce differs at element {at}")),
            }
        }
    }
}

/// The result of `k` allreduces in a row, each fed the previous result (every variant: the
/// loops feed results back, so all three compute the same).
fn allreduce_expected(len: usize, k: usize, n: usize, seed: u64) -> Vec<u64> {
    let sum = sum_of_contributions(n, len, seed);
    // after the first allreduce every rank holds S; each further one multiplies by n
    let factor = (1..k).fold(1u64, |f, _| f.wrapping_mul(n as u64));
    sum.iter().map(|s| s.wrapping_mul(factor)).collect()
}

/// Whether herald over MPI posts `coll` of `bytes` (see [`PostChoice`]).
fn posts(
    opts: &BenchOptions,
    cluster: &Cluster,
    profile: &Profile,
    coll: Collective,
    bytes: usize,
) -> bool {
    match (opts.post, coll) {
        (PostChoice::Always(_), _) => true,
        (PostChoice::Never, _) => false,
        (PostChoice::Auto | PostChoice::Adapt, Collective::Bcast) => {
            opts.algo.is_none() && cluster.posts(profile, bytes as u64)
        }
        (PostChoice::Auto | PostChoice::Adapt, Collective::Allreduce) => {
            opts.algo.is_none()
                && opts.allreduce.is_none()
                && cluster.posts_allreduce(profile, bytes as u64)
        }
    }
}

/// Where herald over MPI chooses `coll` of `bytes` by timing ([`PostChoice::Adapt`]): the
/// profile's `(posted, over MPI)` times, if a chooser times such a class
/// ([`timed`](crate::adapt::timed)).
fn adapts(
    opts: &BenchOptions,
    cluster: &Cluster,
    profile: &Profile,
    coll: Collective,
    bytes: usize,
) -> Option<(f64, f64)> {
    let ranks = cluster.ranks() as u32;
    let times = match coll {
        Collective::Bcast => profile.posted_ns(ranks, bytes as u64),
        Collective::Allreduce if opts.allreduce.is_none() => {
            profile.posted_allreduce_ns(ranks, bytes as u64)
        }
        Collective::Allreduce => None,
    }?;
    (opts.post == PostChoice::Adapt
        && opts.algo.is_none()
        && cluster.hosts().len() == 1
        && crate::adapt::timed(times))
    .then_some(times)
}

/// herald over MPI for one (collective, size): plans and their label (collective: each rank
/// computes them and checks that all agree).
fn over_mpi(
    world: &World,
    cluster: &Cluster,
    profile: &Profile,
    opts: &BenchOptions,
    coll: Collective,
    bytes: usize,
) -> Result<(OverMpi, String), Error> {
    if let Some(times) = adapts(opts, cluster, profile, coll, bytes) {
        let fixed = BenchOptions {
            post: PostChoice::Never,
            ..opts.clone()
        };
        let (over, label) = over_mpi(world, cluster, profile, &fixed, coll, bytes)?;
        return Ok((
            OverMpi::Adaptive(Box::new(over), times),
            format!("posted in a shared window or {label}, by timing"),
        ));
    }
    let n = world.size() as u32;
    let (what, label) = match coll {
        _ if posts(opts, cluster, profile, coll, bytes) => (
            OverMpi::Posted,
            match opts.post {
                PostChoice::Always(p) if p.bulk_slots > 0 => format!(
                    "posted in a shared window ({} slots of {} B, {} of {} B)",
                    p.slots, p.slot_bytes, p.bulk_slots, p.bulk_slot_bytes
                ),
                PostChoice::Always(p) => format!(
                    "posted in a shared window ({} slots of {} B)",
                    p.slots, p.slot_bytes
                ),
                _ => "posted in a shared window (the profile's choice)".to_owned(),
            },
        ),
        Collective::Bcast => {
            let model = cluster.model(profile, &herald::model::Assumptions::default())?;
            let mut plans = Vec::new();
            let mut labels = Vec::new();
            for root in [0, n - 1] {
                let (s, label) = match opts.algo {
                    Some(a) => {
                        let s = generate(&Request::broadcast(a, n, 1, root), &model)
                            .map_err(Error::herald)?;
                        let label = format!("{a} ({} sends)", s.len());
                        (s, label)
                    }
                    None => {
                        let (s, c, _) = cluster.plan(profile, bytes as u64, root)?;
                        (s, format!("{} ×{}", c.label, c.blocks))
                    }
                };
                labels.push(label);
                plans.push(BroadcastPlan::new(&s)?);
            }
            let [a, b]: [BroadcastPlan; 2] = plans.try_into().expect("two roots");
            labels.dedup();
            (OverMpi::Bcast([a, b]), labels.join(" / "))
        }
        Collective::Allreduce => {
            let plans = AllreducePlans::new(cluster, profile, bytes as u64)?;
            let choice = opts
                .allreduce
                .or(opts.algo.map(|_| AllreduceChoice::Combining))
                .unwrap_or_else(|| plans.best());
            (
                OverMpi::Allreduce(plans.runner(choice)?),
                plans.label(choice),
            )
        }
    };
    world.agree(&format!("bench plan {coll:?} {bytes} {label}"))?;
    Ok((what, label))
}

/// Round trips of a raw ping-pong per reading of the host's latency mode ([`Row::raw_hop_us`]):
/// 0.1–0.5 ms at the 50–200 ns hops of the development machine's modes.
pub const RAW_HOPS: u64 = 1000;

/// Untimed round trips before [`RAW_HOPS`].
const RAW_WARM: u64 = 100;

/// One cache line of its own.
#[repr(align(64))]
struct HopLine(AtomicU64);

/// Seconds one way of a ping-pong of `k` round trips between the team's two threads, one
/// cache line per direction (the raw hop of `herald bench`, docs/runtime.md).
fn raw_hop(team: &mut Team, k: u64) -> f64 {
    let lines = [HopLine(AtomicU64::new(0)), HopLine(AtomicU64::new(0))];
    let wait_for = |line: &HopLine, v: u64| {
        while line.0.load(Ordering::Acquire) != v {
            std::hint::spin_loop();
        }
    };
    let t = team.run(|ctx| {
        let me = ctx.rank();
        let trip = |i: u64| {
            if me == 0 {
                lines[0].0.store(i, Ordering::Release);
                wait_for(&lines[1], i);
            } else {
                wait_for(&lines[0], i);
                lines[1].0.store(i, Ordering::Release);
            }
        };
        // Untimed first: both threads are awake (a parked thread's wake-up is tens of µs).
        (1..=RAW_WARM).for_each(trip);
        let start = Instant::now();
        (RAW_WARM + 1..=RAW_WARM + k).for_each(trip);
        start.elapsed()
    });
    t[0].as_secs_f64() / (2 * k) as f64
}

/// The in-process side, owned by rank 0: the team, and each thread's endpoint and buffers,
/// made once and kept for every round, as the library side keeps its communicator and its
/// buffers (a round on fresh endpoints or fresh buffers would time their first use: rings'
/// and pages' first touch).
struct InProc<'c> {
    team: Team,
    ranks: Vec<InprocRank<'c>>,
    /// The rows' `algorithm`: herald's default schedule.
    label: String,
}

/// One thread's state across rounds.
struct InprocRank<'c> {
    comm: CommRank<'c>,
    /// The broadcast buffer (resized per payload size, rewritten per round).
    bytes: Vec<u8>,
    /// The allreduce value.
    value: Vec<u64>,
    /// What a broadcast must deliver (checked after the timed loop).
    want: Vec<u8>,
}

impl<'c> InProc<'c> {
    fn new(team: Team, comm: &'c mut Comm) -> Self {
        // The profile named in every row: which calibration planned herald's side is part of
        // the figure (a quick calibration in one latency mode can pick another transport).
        let label = match &comm.options().schedule {
            herald::runtime::DefaultSchedule::Fixed(a) => format!("herald in process, default {a}"),
            herald::runtime::DefaultSchedule::Planned(p) => format!(
                "herald in process, planned with herald's profile ({} calibration of {})",
                p.profile().mode,
                p.profile().date
            ),
            // `DefaultSchedule` may grow variants.
            _ => "herald in process".into(),
        };
        let ranks = comm
            .ranks()
            .into_iter()
            .map(|comm| InprocRank {
                comm,
                bytes: Vec::new(),
                value: Vec::new(),
                want: Vec::new(),
            })
            .collect();
        InProc { team, ranks, label }
    }
}

/// The in-process round: seconds per collective of the slowest thread, every thread's result
/// checked.
fn inproc_round(ip: &mut InProc<'_>, round: Round) -> Result<f64, Error> {
    let n = ip.ranks.len();
    let out: Vec<Result<f64, String>> = ip.team.run_with(&mut ip.ranks, |_, s| match round.coll {
        Collective::Bcast => inproc_bcast(s, round),
        Collective::Allreduce => inproc_allreduce(s, round),
    });
    let mut worst: f64 = 0.0;
    for (r, o) in out.into_iter().enumerate() {
        match o {
            Ok(t) => worst = worst.max(t),
            Err(e) => {
                return Err(Error::Verify(format!(
                    "herald in process, thread {r} of {n}: {e}"
                )))
            }
        }
    }
    Ok(worst)
}

/// Times per thread: a loop's (time / k), or the barrier variant's per-iteration times.
fn inproc_time(
    c: &mut CommRank<'_>,
    variant: Variant,
    k: usize,
    one: impl FnMut(&mut CommRank<'_>, usize) -> Result<(), String>,
) -> Result<f64, String> {
    let barrier = |c: &mut CommRank<'_>| c.barrier().map_err(|e| e.to_string());
    match time_calls(c, variant, k, barrier, one)? {
        Timed::Mean(t) => Ok(t),
        Timed::Each(times) => {
            // per-iteration slowest thread: gather every thread's times with herald itself
            let mut per_iter = Vec::with_capacity(k);
            for t in times {
                let worst = c.allreduce(t, f64::max).map_err(|e| e.to_string())?;
                per_iter.push(worst);
            }
            per_iter.sort_by(f64::total_cmp);
            Ok(per_iter[(k - 1) / 2])
        }
    }
}

fn inproc_bcast(s: &mut InprocRank<'_>, round: Round) -> Result<f64, String> {
    let Round {
        variant,
        k,
        bytes,
        seed,
        ..
    } = round;
    let InprocRank {
        comm: c,
        bytes: buf,
        want,
        ..
    } = s;
    let n = c.size();
    // as `fill` on the library side: the payload at the first root, zeros elsewhere
    buf.resize(bytes, 0);
    if c.rank() == 0 {
        payload(buf, seed);
    } else {
        buf.fill(0);
    }
    let t = inproc_time(c, variant, k, |c, i| {
        let root = if variant == Variant::Pingpong && i % 2 == 1 {
            n - 1
        } else {
            0
        };
        c.broadcast(root, buf).map_err(|e| e.to_string())
    })?;
    want.resize(bytes, 0);
    payload(want, seed);
    match buf.iter().zip(want.iter()).position(|(x, y)| x != y) {
        None => Ok(t),
        Some(at) => Err(format!("broadcast differs at byte {at}")),
    }
}

fn inproc_allreduce(s: &mut InprocRank<'_>, round: Round) -> Result<f64, String> {
    let Round {
        variant,
        k,
        bytes,
        seed,
        ..
    } = round;
    let InprocRank { comm: c, value, .. } = s;
    let (n, me) = (c.size(), c.rank());
    // The same u64 array on the heap as the library's `MPI_Allreduce`, reduced in place.
    value.resize(bytes / 8, 0);
    contribution(value, me, seed);
    let t = inproc_time(c, variant, k, |c, _| {
        c.allreduce_slice(value, u64::wrapping_add)
            .map_err(|e| e.to_string())
    })?;
    let want = allreduce_expected(value.len(), k, n, seed);
    match value.iter().zip(&want).position(|(x, y)| x != y) {
        None => Ok(t),
        Some(at) => Err(format!("allreduce differs at element {at}")),
    }
}

/// Runs the comparison; rank 0 returns the rows, the others an empty list. Collective: every
/// rank calls it with the same options (checked).
///
/// # Errors
/// [`Error::Usage`] for bad options; [`Error::Verify`] if a round's result is wrong; errors of
/// planning and of messages.
pub fn bench(
    world: &World,
    chan: &Channel,
    cluster: &Cluster,
    profile: Option<&Profile>,
    opts: &BenchOptions,
    mut progress: impl FnMut(&Row),
) -> Result<Vec<Row>, Error> {
    opts.check()?;
    world.agree(&format!("bench {opts:?}"))?;
    let (me, n) = (world.rank(), world.size());
    let places = world.placements();
    if opts.herald == HeraldSide::Inproc && cluster.hosts().len() > 1 {
        return Err(Error::Usage(format!(
            "--herald inproc runs herald's threads on rank 0's host; the job spans {} hosts",
            cluster.hosts().len()
        )));
    }
    let profile = match (opts.herald, profile) {
        (HeraldSide::Mpi, None) => {
            return Err(Error::Usage(
                "herald over MPI plans with an MPI profile".into(),
            ))
        }
        (_, p) => p,
    };
    if let (HeraldSide::Mpi, Some(p)) = (opts.herald, profile) {
        cluster.apply_pieces(chan, p);
    }
    // The shared window, where some collective will be posted (collective: every rank
    // decides alike from the same options and profile).
    let wanted = opts.collectives.iter().any(|&c| {
        opts.sizes.iter().any(|&b| {
            profile.is_some_and(|p| {
                posts(opts, cluster, p, c, b) || adapts(opts, cluster, p, c, b).is_some()
            }) || matches!(opts.post, PostChoice::Always(_))
        })
    });
    let post = match (opts.herald, opts.post) {
        (HeraldSide::Inproc, PostChoice::Always(_)) => {
            return Err(Error::Usage(
                "posting in a shared window applies to herald over MPI".into(),
            ))
        }
        (HeraldSide::Mpi, PostChoice::Always(_)) if cluster.hosts().len() > 1 => {
            return Err(Error::Usage(format!(
                "posting in a shared window needs every rank on one host; the job spans {}",
                cluster.hosts().len()
            )))
        }
        (HeraldSide::Mpi, PostChoice::Always(shape)) if wanted => Some(Post::new(chan, shape)?),
        (HeraldSide::Mpi, PostChoice::Auto | PostChoice::Adapt) if wanted => {
            Some(Post::new(chan, PostShape::for_ranks(chan.size()))?)
        }
        _ => None,
    };
    // the communicator outlives the endpoints `inproc` keeps
    let mut comm_store = None;
    let mut inproc = None;
    if opts.herald == HeraldSide::Inproc && me == 0 {
        // thread r on rank r's CPU
        let cpus: Vec<usize> = places.iter().map(|p| p.cpu.unwrap_or(0)).collect();
        let team = Team::builder()
            .cores(cpus)
            .stack_size(256 << 20)
            .build()
            .map_err(Error::herald)?;
        // herald's planner where this machine has a profile (`herald calibrate`), else binomial
        let schedule = match herald::runtime::Planned::load().map_err(Error::herald)? {
            Some(planned) => herald::runtime::DefaultSchedule::Planned(planned),
            None => herald::runtime::DefaultSchedule::default(),
        };
        let options = herald::CommOptions {
            schedule,
            ..herald::CommOptions::default()
        };
        let comm = comm_store.insert(Comm::with_options(n, options).map_err(Error::herald)?);
        inproc = Some(InProc::new(team, comm));
    }
    // Rank 0's two threads on rank 0's and rank 1's CPUs read the host's latency mode, where
    // those differ; every rank has every placement, so every rank knows whether rank 0 probes
    // (the others then wait in a sleeping barrier).
    let probe_cpus = match places.get(..2) {
        Some([a, b]) if a.cpu != b.cpu => a.cpu.zip(b.cpu),
        _ => None,
    };
    let mut prober = match probe_cpus {
        Some((a, b)) if me == 0 => Some(
            Team::builder()
                .cores(vec![a, b])
                .build()
                .map_err(Error::herald)?,
        ),
        _ => None,
    };
    // Chooses by timing where the options ask for it ([`PostChoice::Adapt`]).
    let chooser = profile.map_or_else(
        || Chooser::new(f64::INFINITY),
        |p| Chooser::for_profile(p, n as u32),
    );
    let nap = Duration::from_millis(1);
    let mut rows = Vec::new();
    let mut seed = 1u64;
    for &coll in &opts.collectives {
        for &bytes in &opts.sizes {
            let (plans, label) = match opts.herald {
                HeraldSide::Mpi => {
                    let p = profile.ok_or_else(|| Error::Usage("no MPI profile".into()))?;
                    let (o, l) = over_mpi(world, cluster, p, opts, coll, bytes)?;
                    (Some(o), l)
                }
                HeraldSide::Inproc => (
                    None,
                    inproc.as_ref().map_or(String::new(), |ip| ip.label.clone()),
                ),
            };
            let mut b = Buffers {
                bytes: vec![0u8; bytes],
                value: vec![0u64; bytes / 8],
                result: vec![0u64; bytes / 8],
                scratch: CombineScratch::default(),
            };
            for &variant in &opts.variants {
                // A round, the library's blocking collectives in it included, runs under the
                // watchdog (`World::bounded`): a rank that stops answering inside the library's
                // side ends the job rather than hanging it. Armed once a round, outside its
                // clock; the round's own time may add to the deadline.
                let limit = world.timeout() + crate::SLACK + 4 * opts.target;
                let what = format!("a bench round ({coll:?}, {bytes} bytes, {variant:?})");
                // One side's round, checked. `herald` selects the side.
                let mut side_round = |herald: bool, k: usize, seed: u64| -> Result<f64, Error> {
                    let round = Round {
                        coll,
                        variant,
                        k,
                        bytes,
                        seed,
                    };
                    fill(&mut b, coll, me, seed);
                    let t = if herald && opts.herald == HeraldSide::Inproc {
                        let t = match inproc.as_mut() {
                            Some(ip) => inproc_round(ip, round)?,
                            None => 0.0,
                        };
                        chan.quiet_barrier(nap)?;
                        t
                    } else {
                        let over = if herald { plans.as_ref() } else { None };
                        let t =
                            mpi_round(world, chan, round, over, (post.as_ref(), &chooser), &mut b)?;
                        if let Err(e) = check(&b, round, n) {
                            let who = if herald { "herald over MPI" } else { "MPI" };
                            return Err(Error::Verify(format!("{who}, rank {me}: {e}")));
                        }
                        t
                    };
                    let mut worst = 0f64;
                    world
                        .comm()
                        .all_reduce_into(&t, &mut worst, SystemOperation::max());
                    Ok(worst)
                };
                let mut side = |herald: bool, k: usize, seed: u64| -> Result<f64, Error> {
                    crate::bounded(me, limit, &what, || side_round(herald, k, seed))
                };
                // Warm-up: rounds of 4, 16, 64, … collectives on each side until one takes an
                // eighth of the target; then K for the target round time, the same on both.
                // The time per collective is the least of three warm-up rounds at the last
                // count: one round that lost the CPU to another process (a time slice is
                // milliseconds) would otherwise make K tiny and every sample that noisy.
                let target = opts.target.as_secs_f64();
                // (The in-process loop was once held to 255 calls per round: herald compared
                // calls by an 8-bit number then. It compares full numbers now, and
                // tests/failure_paths.rs runs a root thousands of calls ahead.)
                let max_k = 100_000;
                let mut k = MIN_K;
                let per = loop {
                    let per = side(false, k, 0)?.max(side(true, k, 0)?);
                    if per * k as f64 >= target / 8.0 || k >= max_k {
                        let mut least = per;
                        for _ in 0..2 {
                            least = least.min(side(false, k, 0)?.max(side(true, k, 0)?));
                        }
                        break least.max(1e-8);
                    }
                    k = (k * 4).min(max_k);
                };
                let mut k = ((target / per).round() as usize).clamp(MIN_K, max_k);
                world.bounded("MPI_Bcast (the bench's count)", |c| {
                    c.process_at_rank(0).broadcast_into(&mut k)
                });
                let (mut h, mut m, mut hops) = (Vec::new(), Vec::new(), Vec::new());
                for round in 0..opts.rounds {
                    seed += 1;
                    if probe_cpus.is_some() {
                        if let Some(team) = prober.as_mut() {
                            hops.push(raw_hop(team, RAW_HOPS));
                        }
                        chan.quiet_barrier(nap)?;
                    }
                    if round % 2 == 0 {
                        h.push(side(true, k, seed)?);
                        m.push(side(false, k, seed)?);
                    } else {
                        m.push(side(false, k, seed)?);
                        h.push(side(true, k, seed)?);
                    }
                }
                let (hu, mu) = (Micros::of(&h), Micros::of(&m));
                let row = Row {
                    n,
                    bytes,
                    collective: coll,
                    variant,
                    herald: opts.herald,
                    algorithm: match &plans {
                        Some(OverMpi::Adaptive(..)) => chooser
                            .describe(kind(coll), bytes)
                            .map_or(label.clone(), |d| format!("{label}: {d}")),
                        _ => label.clone(),
                    },
                    herald_us: hu,
                    mpi_us: mu,
                    ratio: if mu.median > 0.0 {
                        (hu.median / mu.median * 1000.0).round() / 1000.0
                    } else {
                        f64::NAN
                    },
                    raw_hop_us: (!hops.is_empty()).then(|| Micros::of(&hops)),
                    iters: k,
                    rounds: opts.rounds,
                };
                if me == 0 {
                    progress(&row);
                    rows.push(row);
                }
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inproc_rounds_verify() {
        let team = Team::builder()
            .ranks(2)
            .stack_size(64 << 20)
            .build()
            .unwrap();
        let mut comm = Comm::new(2).unwrap();
        let mut ip = InProc::new(team, &mut comm);
        for variant in [Variant::Loop, Variant::Pingpong, Variant::Barrier] {
            for bytes in [8usize, 4096] {
                for k in [1usize, 5, 255, 256, 257, 600] {
                    for coll in [Collective::Bcast, Collective::Allreduce] {
                        let round = Round {
                            coll,
                            variant,
                            k,
                            bytes,
                            seed: 3,
                        };
                        inproc_round(&mut ip, round)
                            .unwrap_or_else(|e| panic!("{coll:?} {variant:?} {bytes} {k}: {e}"));
                    }
                }
            }
        }
    }

    /// A planned in-process side names the calibration it planned with in every row (the
    /// same code plans another transport with another profile: docs/mpi.md, "Sixty-second
    /// session").
    #[test]
    fn a_planned_side_names_its_profile() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/profile-2core.json"
        );
        let profile = Profile::from_json_forced(&std::fs::read_to_string(path).unwrap()).unwrap();
        let (mode, date) = (profile.mode.clone(), profile.date.clone());
        let machine = herald::TopologySource::from_options(Some("l3:1 core:2 pu:1"), None)
            .unwrap()
            .load()
            .unwrap();
        let options = herald::CommOptions {
            schedule: herald::runtime::DefaultSchedule::Planned(herald::runtime::Planned::new(
                profile, machine,
            )),
            ..herald::CommOptions::default()
        };
        let mut comm = Comm::with_options(2, options).unwrap();
        let team = Team::builder().ranks(2).build().unwrap();
        let ip = InProc::new(team, &mut comm);
        assert_eq!(
            ip.label,
            format!(
                "herald in process, planned with herald's profile ({mode} calibration of {date})"
            )
        );
    }

    /// The latency probe finishes and reports a time per hop within its own clock's reach:
    /// positive, and at most the whole run's time over its hops (the run took every hop it
    /// timed).
    #[test]
    fn raw_hop_reads_a_positive_time() {
        // A watchdog: the probe spins, so a thread that never ran would hang it.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut team = Team::builder().ranks(2).build().unwrap();
            let start = Instant::now();
            let hop = raw_hop(&mut team, 200);
            let _ = tx.send((hop, start.elapsed().as_secs_f64()));
        });
        let (hop, whole) = rx
            .recv_timeout(Duration::from_secs(300))
            .expect("the probe finishes within 300 s");
        assert!(hop > 0.0 && hop.is_finite(), "{hop}");
        assert!(
            hop * 400.0 <= whole,
            "{hop} s a hop, 400 hops, {whole} s in all"
        );
    }
}
