//! `herald stress`: a soak test of the runtime's collectives. Random collectives, roots, sizes
//! (0 B … 4 MiB), schedules and communicator options, late ranks, and (with `--panics`)
//! injected panics — between calls, inside reduction operators, and inside single-copy transfers
//! — with every byte verified. It counts calls verified, errors surfaced, unexpected errors
//! (an error in an epoch without an injected panic: a false error), corruptions (a call that
//! reported success with wrong bytes, or a buffer holding bytes nobody sent) and hangs (no call
//! finished anywhere for `--hang-seconds`: the watchdog prints the report and exits).
//!
//! The run is cut into epochs: each builds a communicator with random options and runs a random
//! sequence of calls that every rank draws from the same seed, so every rank knows every call
//! and can check its own result independently (a reduction is recomputed sequentially, in rank
//! order, on every rank).

use crate::output::StressJson;
use crate::CliError;
use bytemuck::{Pod, Zeroable};
use herald::runtime::fault::{self, Point};
use herald::{
    generate, model::OnePort, runtime::DefaultSchedule, Algorithm, Comm, CommOptions, CommRank,
    Model, Postal, Program, Ratio, Request, Team,
};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `herald stress`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct StressArgs {
    /// Ranks (threads): any number, also many more than CPUs.
    #[arg(long, default_value_t = 4)]
    ranks: usize,
    /// How long to run, in seconds.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Inject panics (between calls, inside reduction operators, inside single-copy
    /// transfers) in about a quarter of the epochs.
    #[arg(long)]
    panics: bool,
    /// The largest payload in bytes.
    #[arg(long, default_value_t = 4 << 20)]
    max_bytes: usize,
    /// Seconds without any finished call before the run is declared hung.
    #[arg(long, default_value_t = 120.0)]
    hang_seconds: f64,
    /// The random seed (default: from the clock; printed, to replay a run).
    #[arg(long)]
    seed: Option<u64>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// What happened, counted over the whole run.
#[derive(Debug, Default)]
struct Counts {
    epochs: AtomicU64,
    panic_epochs: AtomicU64,
    panics_fired: AtomicU64,
    calls_verified: AtomicU64,
    errors_surfaced: AtomicU64,
    unexpected_errors: AtomicU64,
    corruptions: AtomicU64,
    /// Calls finished (with any outcome) by any rank: the watchdog's heartbeat.
    progress: AtomicU64,
}

impl Counts {
    fn add(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

/// A 2×2 matrix over wrapping `u64`: associative, not commutative (rank order is checked).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
struct M([u64; 4]);

impl M {
    fn mul(self, b: M) -> M {
        let a = self.0;
        let b = b.0;
        M([
            a[0].wrapping_mul(b[0])
                .wrapping_add(a[1].wrapping_mul(b[2])),
            a[0].wrapping_mul(b[1])
                .wrapping_add(a[1].wrapping_mul(b[3])),
            a[2].wrapping_mul(b[0])
                .wrapping_add(a[3].wrapping_mul(b[2])),
            a[2].wrapping_mul(b[1])
                .wrapping_add(a[3].wrapping_mul(b[3])),
        ])
    }

    /// Rank `r`'s value in the call with seed `seed`.
    fn of(r: usize, seed: u64) -> M {
        let x = seed ^ (r as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        M([x | 1, x >> 7, x.rotate_left(13), (x >> 3) | 1])
    }
}

/// One call of an epoch, as every rank draws it.
#[derive(Debug, Clone, Copy)]
enum Op {
    Broadcast { root: usize, bytes: usize },
    BroadcastWith { program: usize, bytes: usize },
    Reduce { root: usize },
    Allreduce,
    Scan,
    Allgather,
    Barrier,
}

/// Where an epoch's panic is injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PanicKind {
    /// In user code, before call `at` of `rank`.
    BetweenCalls,
    /// Inside the reduction operator of call `at` on `rank` (rank 0: it always combines).
    InOperator,
    /// Inside a single-copy broadcast: the root, about to lend a descriptor.
    Lending,
    /// Inside a single-copy broadcast: a receiver, about to copy a chunk.
    Copying,
}

/// An epoch's injected panic.
#[derive(Debug, Clone, Copy)]
struct PanicPlan {
    rank: usize,
    at: usize,
    kind: PanicKind,
}

/// An epoch: its communicator options, its precompiled programs, its calls.
struct Epoch {
    seed: u64,
    options: CommOptions,
    programs: Vec<Program>,
    calls: usize,
    panic: Option<PanicPlan>,
}

/// A buffer that overwrites itself before it is freed: a late single-copy reader would see
/// bytes nobody sent.
struct Scrubbed(Vec<u8>);

impl Drop for Scrubbed {
    fn drop(&mut self) {
        self.0.fill(0xDE);
        // The scrub must happen although the memory is freed right after.
        std::hint::black_box(&self.0);
    }
}

/// Bytes of the broadcast with seed `seed` (xorshift, a word at a time).
fn payload(bytes: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(bytes + 8);
    while out.len() < bytes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(bytes);
    out
}

/// What a receiver's buffer holds before a broadcast.
const BEFORE: u8 = 0x55;

/// A payload size: 0 now and then, else log-uniform up to `max` (large ones rarer).
fn draw_bytes(rng: &mut StdRng, max: usize) -> usize {
    if rng.random_ratio(1, 16) || max == 0 {
        return 0;
    }
    let top = usize::BITS - max.leading_zeros();
    let bits = rng.random_range(0..top);
    let lo = 1usize << bits.saturating_sub(1);
    rng.random_range(lo..=(1usize << bits).min(max))
}

fn draw_op(rng: &mut StdRng, n: usize, programs: usize, max: usize) -> Op {
    match rng.random_range(0..12) {
        0..=4 => Op::Broadcast {
            root: rng.random_range(0..n),
            bytes: draw_bytes(rng, max),
        },
        5 if programs > 0 => Op::BroadcastWith {
            program: rng.random_range(0..programs),
            bytes: draw_bytes(rng, max),
        },
        5 | 6 => Op::Reduce {
            root: rng.random_range(0..n),
        },
        7 => Op::Allreduce,
        8 => Op::Scan,
        9 => Op::Allgather,
        _ => Op::Barrier,
    }
}

/// Draws epoch `e`'s options, programs and calls.
fn epoch(seed: u64, e: u64, n: usize, args: &StressArgs) -> Result<Epoch, CliError> {
    let seed = seed ^ e.wrapping_mul(0xD1B5_4A32_D192_ED03);
    let mut rng = StdRng::seed_from_u64(seed);
    let schedules = [
        Algorithm::Binomial,
        Algorithm::Binary,
        Algorithm::Chain,
        Algorithm::Star,
        Algorithm::Knomial { radix: 3 },
    ];
    let options = CommOptions {
        capacity: [4, 16, 256][rng.random_range(0..3)],
        schedule: DefaultSchedule::Fixed(schedules[rng.random_range(0..schedules.len())]),
        direct_min_bytes: [1 << 10, 64 << 10, usize::MAX][rng.random_range(0..3)],
        direct_chunk_bytes: [4 << 10, 64 << 10][rng.random_range(0..2)],
        allreduce_direct_min_bytes: [1, 4 << 10, usize::MAX][rng.random_range(0..3)],
        allreduce_shared_max_bytes: [None, Some(0), Some(64), Some(4 << 10)]
            [rng.random_range(0..4)],
        // Both rules for ranks that share CPUs and for ranks that do not, whatever the machine.
        cpus: [None, Some(1), Some(1024)][rng.random_range(0..3)],
        // Small broadcasts posted in shared memory, or through the rings.
        posted_broadcast: rng.random_bool(0.5),
        // Where ranks share CPUs: none, the default sizes, or every size up to a few lines.
        shared_posted_bytes: [None, Some(0..=8 << 10), Some(128..=8 << 10), Some(0..=200)]
            [rng.random_range(0..4)]
        .clone(),
        // Only planned communicators time their posts; these are fixed
        // (tests/timed_posting.rs covers the timed ones).
        timed_posting: herald::runtime::TimedPosting::Always,
    };
    let oneport = Model::from(OnePort);
    let postal = Model::from(Postal::new(Ratio::integer(2)).map_err(CliError::usage)?);
    let mut programs = Vec::new();
    for (alg, m, model) in [
        (Algorithm::Optimal, 3, &oneport),
        (Algorithm::Fibonacci { d: None }, 4, &oneport),
        (Algorithm::Greedy, 5, &postal),
        (Algorithm::Binomial, 2, &postal),
    ] {
        let root = rng.random_range(0..n) as u32;
        let req = Request::broadcast(alg, n as u32, m, root);
        // Compiled here, before the team runs; a generator that refuses a size is skipped.
        if let Ok(s) = generate(&req, model) {
            programs.push(Program::compile(&s).map_err(CliError::usage)?);
        }
    }
    // Shorter epochs for large teams, so a run ends near its time.
    let calls = rng.random_range(20..200) / (1 + n / 8);
    let mut panic = (args.panics && rng.random_ratio(1, 4)).then(|| {
        let kinds = [
            PanicKind::BetweenCalls,
            PanicKind::InOperator,
            PanicKind::Lending,
            PanicKind::Copying,
        ];
        let kind = kinds[rng.random_range(0..kinds.len())];
        PanicPlan {
            rank: if kind == PanicKind::InOperator {
                0
            } else {
                rng.random_range(0..n)
            },
            at: rng.random_range(0..calls),
            kind,
        }
    });
    let mut options = options;
    match panic.map(|p| p.kind) {
        // A single-copy transfer needs a peer, and single copy on.
        Some(PanicKind::Lending | PanicKind::Copying | PanicKind::InOperator) if n == 1 => {
            panic = None;
        }
        Some(PanicKind::Lending | PanicKind::Copying) => {
            options.direct_min_bytes = options.direct_min_bytes.min(64 << 10);
        }
        _ => {}
    }
    Ok(Epoch {
        seed,
        options,
        programs,
        calls,
        panic,
    })
}

/// The call a planned panic happens in: a combining call for a panic in the operator (rank 0
/// always combines), a single-copy broadcast of several chunks from (lending) or to (copying)
/// the victim.
fn forced(p: PanicPlan, n: usize, ep: &Epoch) -> Op {
    let bytes = (4 * ep.options.direct_chunk_bytes).max(ep.options.direct_min_bytes);
    match p.kind {
        PanicKind::BetweenCalls | PanicKind::InOperator => Op::Allreduce,
        PanicKind::Lending => Op::Broadcast {
            root: p.rank,
            bytes,
        },
        PanicKind::Copying => Op::Broadcast {
            root: (p.rank + 1) % n,
            bytes,
        },
    }
}

/// How one call ended on one rank.
enum Outcome {
    Verified,
    Error,
    Corrupt(String),
}

/// Runs one drawn call on rank `c` and checks its result.
fn call(c: &mut CommRank<'_>, op: Op, seed: u64, ep: &Epoch, in_op: bool) -> Outcome {
    let (me, n) = (c.rank(), c.size());
    let op_panics = move |x: M, y: M| {
        assert!(
            !in_op,
            "herald stress: injected panic in a reduction operator"
        );
        x.mul(y)
    };
    let rank_order = || (1..n).fold(M::of(0, seed), |acc, r| acc.mul(M::of(r, seed)));
    match op {
        Op::Broadcast { root, bytes } => {
            broadcast(c, root, bytes, seed, |c, buf| c.broadcast(root, buf))
        }
        Op::BroadcastWith { program, bytes } => {
            let p = &ep.programs[program];
            let root = p.root() as usize;
            broadcast(c, root, bytes, seed, |c, buf| c.broadcast_with(p, buf))
        }
        Op::Reduce { root } => match c.reduce(root, M::of(me, seed), op_panics) {
            Ok(got) if got == (me == root).then(rank_order) => Outcome::Verified,
            Ok(got) => Outcome::Corrupt(format!("reduce to {root}: {got:?}")),
            Err(_) => Outcome::Error,
        },
        Op::Allreduce => match c.allreduce(M::of(me, seed), op_panics) {
            Ok(got) if got == rank_order() => Outcome::Verified,
            Ok(got) => Outcome::Corrupt(format!("allreduce: {got:?}")),
            Err(_) => Outcome::Error,
        },
        Op::Scan => match c.scan(M::of(me, seed), op_panics) {
            Ok(got) if got == (1..=me).fold(M::of(0, seed), |a, r| a.mul(M::of(r, seed))) => {
                Outcome::Verified
            }
            Ok(got) => Outcome::Corrupt(format!("scan: {got:?}")),
            Err(_) => Outcome::Error,
        },
        Op::Allgather => match c.allgather([seed, me as u64]) {
            Ok(got) if got.iter().enumerate().all(|(r, v)| *v == [seed, r as u64]) => {
                Outcome::Verified
            }
            Ok(_) => Outcome::Corrupt("allgather".into()),
            Err(_) => Outcome::Error,
        },
        Op::Barrier => match c.barrier() {
            Ok(()) => Outcome::Verified,
            Err(_) => Outcome::Error,
        },
    }
}

/// A broadcast of `bytes` from `root` run by `run`: the receivers check every byte, and after an
/// error that their buffer holds only their own bytes or the root's.
fn broadcast<'c>(
    c: &mut CommRank<'c>,
    root: usize,
    bytes: usize,
    seed: u64,
    run: impl FnOnce(&mut CommRank<'c>, &mut [u8]) -> Result<(), herald::runtime::CollectiveError>,
) -> Outcome {
    let want = payload(bytes, seed);
    let mut buf = Scrubbed(if c.rank() == root {
        want.clone()
    } else {
        vec![BEFORE; bytes]
    });
    match run(c, &mut buf.0) {
        Ok(()) if buf.0 == want => Outcome::Verified,
        Ok(()) => Outcome::Corrupt(format!("broadcast of {bytes} B from {root}: wrong bytes")),
        Err(_)
            if buf
                .0
                .iter()
                .zip(&want)
                .all(|(&b, &w)| b == w || b == BEFORE) =>
        {
            Outcome::Error
        }
        Err(_) => Outcome::Corrupt(format!("broadcast of {bytes} B from {root}: torn bytes")),
    }
}

/// Runs epoch `ep` on `team`; returns whether its panic fired.
fn run_epoch(
    team: &mut Team,
    ep: &Epoch,
    counts: &Counts,
    first_corruption: &std::sync::Mutex<Option<String>>,
    max: usize,
) -> Result<bool, CliError> {
    let n = team.size();
    let mut comm = Comm::with_options(n, ep.options.clone()).map_err(CliError::usage)?;
    let fired = AtomicBool::new(false);
    let mut ranks = comm.ranks();
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        team.run_with(&mut ranks, |_, c| {
            let me = c.rank();
            let mut rng = StdRng::seed_from_u64(ep.seed);
            for i in 0..ep.calls {
                let drawn = draw_op(&mut rng, n, ep.programs.len(), max);
                let seed: u64 = rng.random();
                // The call a panic is planned in is one that reaches the panic's point.
                let op = ep
                    .panic
                    .filter(|p| p.at == i)
                    .map_or(drawn, |p| forced(p, n, ep));
                let late = rng.random_ratio(1, 8).then(|| rng.random_range(0..n));
                let delay = rng.random_range(5..2000);
                if late == Some(me) {
                    std::thread::sleep(Duration::from_micros(delay));
                }
                let mine = ep.panic.filter(|p| p.rank == me && p.at == i);
                let mut in_op = false;
                match mine.map(|p| p.kind) {
                    Some(PanicKind::BetweenCalls) => {
                        fired.store(true, Ordering::SeqCst);
                        panic!("herald stress: injected panic between calls");
                    }
                    Some(PanicKind::InOperator) => in_op = me == 0,
                    Some(PanicKind::Lending) => fault::panic_at(Point::LendDescriptor, 1),
                    Some(PanicKind::Copying) => fault::panic_at(Point::CopyChunk, 1),
                    None => {}
                }
                if mine.is_some() {
                    // Only counted as fired if it does: the call may lend or copy nothing.
                    let _guard = FiredOnUnwind(&fired);
                    let result = call(c, op, seed, ep, in_op);
                    fault::disarm();
                    std::mem::forget(_guard);
                    if record(result, counts, first_corruption) {
                        break;
                    }
                } else if record(call(c, op, seed, ep, false), counts, first_corruption) {
                    break;
                }
            }
        })
    }));
    let fired = fired.load(Ordering::SeqCst);
    match (outcome.is_err(), fired) {
        (true, true) | (false, false) => Ok(fired),
        (panicked, _) => Err(CliError::Failed(format!(
            "epoch seed {:#x}: panic reached the caller: {panicked}, injected: {fired}",
            ep.seed
        ))),
    }
}

/// Marks the epoch's panic as fired if the call it was armed for unwinds.
struct FiredOnUnwind<'a>(&'a AtomicBool);

impl Drop for FiredOnUnwind<'_> {
    fn drop(&mut self) {
        fault::disarm();
        if std::thread::panicking() {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

/// Counts a call's outcome; whether the rank should stop (after an error).
fn record(o: Outcome, counts: &Counts, first: &std::sync::Mutex<Option<String>>) -> bool {
    Counts::add(&counts.progress);
    match o {
        Outcome::Verified => {
            Counts::add(&counts.calls_verified);
            false
        }
        Outcome::Error => {
            Counts::add(&counts.errors_surfaced);
            true
        }
        Outcome::Corrupt(what) => {
            Counts::add(&counts.corruptions);
            first.lock().unwrap().get_or_insert(what);
            true
        }
    }
}

/// What the run and its watchdog share.
struct Shared {
    counts: Counts,
    first_corruption: std::sync::Mutex<Option<String>>,
}

/// Prints the report.
fn report(
    args: &StressArgs,
    seed: u64,
    start: Instant,
    shared: &Shared,
    hangs: u64,
) -> Result<(), CliError> {
    let counts = &shared.counts;
    let c = |a: &AtomicU64| Counts::get(a);
    let first = shared
        .first_corruption
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    let out = StressJson {
        ranks: args.ranks,
        seconds: start.elapsed().as_secs_f64(),
        seed,
        panics: args.panics,
        epochs: c(&counts.epochs),
        panic_epochs: c(&counts.panic_epochs),
        panics_fired: c(&counts.panics_fired),
        calls_verified: c(&counts.calls_verified),
        errors_surfaced: c(&counts.errors_surfaced),
        unexpected_errors: c(&counts.unexpected_errors),
        corruptions: c(&counts.corruptions),
        hangs,
        first_corruption: first,
    };
    if args.json {
        crate::output::print(&out)
    } else {
        crate::print_out(&out.text())
    }
}

/// Whether a panic payload is one this command injected.
fn injected(payload: &(dyn std::any::Any + Send)) -> bool {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    text.starts_with("herald stress: injected") || text.starts_with("herald fault injection")
}

/// `herald stress`.
pub(crate) fn run(args: &StressArgs) -> Result<(), CliError> {
    if args.ranks == 0 {
        return Err(CliError::Usage("--ranks must be at least 1".into()));
    }
    if !(args.seconds > 0.0 && args.seconds.is_finite()) {
        return Err(CliError::Usage(
            "--seconds must be a positive number".into(),
        ));
    }
    if !(args.hang_seconds > 0.0 && args.hang_seconds.is_finite()) {
        return Err(CliError::Usage(
            "--hang-seconds must be a positive number".into(),
        ));
    }
    let seed = args.seed.unwrap_or_else(|| {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        t.map_or(1, |d| d.as_nanos() as u64)
    });
    let mut team = Team::new(args.ranks).map_err(CliError::usage)?;
    let shared = Arc::new(Shared {
        counts: Counts::default(),
        first_corruption: std::sync::Mutex::new(None),
    });
    let start = Instant::now();
    // The watchdog: no finished call anywhere for `hang_seconds` is a hang. The hung ranks
    // cannot be joined, so it reports and ends the process itself.
    let stop = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let (shared, stop) = (Arc::clone(&shared), Arc::clone(&stop));
        let limit = Duration::from_secs_f64(args.hang_seconds);
        let args = args.clone();
        std::thread::spawn(move || {
            let progress = || Counts::get(&shared.counts.progress);
            let (mut last, mut since) = (progress(), Instant::now());
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                let now = progress();
                if now != last {
                    (last, since) = (now, Instant::now());
                } else if since.elapsed() > limit {
                    let _ = report(&args, seed, start, &shared, 1);
                    eprintln!(
                        "herald: no call finished for {:.0} s: hung (seed {seed:#x})",
                        args.hang_seconds
                    );
                    std::process::exit(1);
                }
            }
        })
    };
    // Quiet the messages of injected panics (and only of those).
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if !injected(info.payload()) {
            previous(info);
        }
    }));
    let counts = &shared.counts;
    let mut failure = None;
    let mut e = 0u64;
    while start.elapsed().as_secs_f64() < args.seconds {
        let ep = epoch(seed, e, args.ranks, args)?;
        e += 1;
        Counts::add(&counts.epochs);
        if ep.panic.is_some() {
            Counts::add(&counts.panic_epochs);
        }
        let errors_before = Counts::get(&counts.errors_surfaced);
        match run_epoch(
            &mut team,
            &ep,
            counts,
            &shared.first_corruption,
            args.max_bytes,
        ) {
            Ok(true) => Counts::add(&counts.panics_fired),
            Ok(false) => {
                let false_errors = Counts::get(&counts.errors_surfaced) - errors_before;
                counts
                    .unexpected_errors
                    .fetch_add(false_errors, Ordering::Relaxed);
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = watchdog.join();
    report(args, seed, start, &shared, 0)?;
    if let Some(e) = failure {
        return Err(e);
    }
    let (corrupt, unexpected) = (
        Counts::get(&counts.corruptions),
        Counts::get(&counts.unexpected_errors),
    );
    if corrupt + unexpected > 0 {
        return Err(CliError::Failed(format!(
            "{corrupt} corruptions, {unexpected} unexpected errors"
        )));
    }
    Ok(())
}
