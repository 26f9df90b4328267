//! `herald fidelity`: the planner's predicted time of its candidate broadcasts against the time
//! the runtime takes, for several rank counts (oversubscribed ones included), per latency mode,
//! and the planner's regret: how much slower its pick ran than the best candidate measured.
//!
//! 1. **Cases** ([`cases`]). For each rank count `n` and payload size the runtime planner
//!    ([`herald::plan::plan_for_runtime`], what a planned `Comm` uses) ranks every candidate
//!    under each transport by herald's runtime cost model. The `--top` best-ranked
//!    (candidate, transport) choices with distinct compiled programs are measured, plus the
//!    MPI-style baselines the planner offers that are not among them: binomial tree, flat tree
//!    (star), scatter-allgather and a pipelined chain — each in the transport the planner
//!    ranked first for it (`--transport` measures every case in the transports it names).
//!    Every prediction comes from one function, [`cases::predicted_ns`].
//! 2. **Measurement** ([`measure`]): `n` ranks are a `Team` of `n` workers pinned round-robin
//!    to the machine's CPUs (more ranks than CPUs share them). One broadcast is timed OSU-style,
//!    barrier then one: every rank enters `barrier()` twice (the second so that ranks parked
//!    while the root wrote fresh data are running again), the root reads the clock just before its
//!    `broadcast_with`, every rank reads it when its call returns; the broadcast takes from the
//!    root's start to the latest return, less one clock read (measured at the start, as
//!    `herald calibrate` measures and subtracts it). A measurement repeats this about a
//!    millisecond's worth (`--measure-us`; at least 3 times) and keeps the median and the mean
//!    of its repetitions, the median spread over the clock's step
//!    ([`herald::stats::smoothed_median`], as the calibration's runtime probe summarizes its
//!    own); it checks every received byte once (and a stamp per repetition).
//! 3. **Slices**: every slice runs every case once: the rank counts in turn, each one's cases
//!    in a random order (seeded: the same in every run), so that no case always follows the
//!    same neighbour (a rotating order did that, and biased the regret against the planner's
//!    pick, the first case of its group). Each measurement is preceded by a short raw
//!    core-to-core hop on CPUs 0 and 1 that names the latency mode it ran in
//!    ([`herald::calibrate::find_modes`]).
//! 4. **Report** ([`report`]): per mode, each case's median over its measurements in that mode
//!    with p10–p90 (and the same of its means), its prediction for the profile's regime
//!    nearest the mode, and per `(n, bytes, mode)` the regret `measured(pick) / measured(best)
//!    − 1`, by medians and by means; and per mode issue 17's two targets counted over the run
//!    (2 ranks: the pick's measured/predicted within 10 %; the paired regret at most 5 %).

mod cases;
mod measure;
mod report;

use crate::CliError;
use herald::{
    model::{load_profile, Transport},
    TopologySource,
};
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `herald fidelity`.
#[derive(Debug, clap::Args)]
pub(crate) struct FidelityArgs {
    /// The calibrated profile whose model is tested.
    #[arg(long, value_name = "FILE")]
    profile: PathBuf,
    /// Accept a profile of another host or schema version.
    #[arg(long)]
    force: bool,
    /// Rank counts (more than the machine's CPUs: ranks share CPUs).
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16")]
    ranks: Vec<u32>,
    /// Payload sizes in bytes.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "8,64,512,4096,32768,262144,1048576,4194304"
    )]
    sizes: Vec<usize>,
    /// Interleaved measurement slices (each measures every case once).
    #[arg(long, default_value_t = 5)]
    slices: usize,
    /// The time one measurement of a case aims at, in µs: its repetitions (at least 3, at most
    /// 2000) are sized to about this much, barriers included. Longer measurements give the
    /// paired regret more calls per slice where a broadcast takes hundreds of µs.
    #[arg(long, value_name = "US", default_value_t = 1000)]
    measure_us: u64,
    /// Distinct planner candidates measured per (ranks, size), best-ranked first.
    #[arg(long, default_value_t = 5)]
    top: usize,
    /// The transport measured: the runtime's choice by size (`auto`), or `stream`, `direct`
    /// (single copy) or `both` for every case.
    #[arg(long, value_enum, default_value_t = TransportArg::Auto)]
    transport: TransportArg,
    /// Also measure a communicator planned with the profile that chooses, as calls run, between
    /// posting and its plan's other transport by the host's latency regime
    /// (`TimedPosting::Auto`, the default), at the sizes where it does: a row `timed` (planner
    /// rank #0) and, in the regret table, its paired regret. `--timed never` measures the same
    /// communicator with the choice off (`TimedPosting::Never`) at those sizes, as a control.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "auto")]
    timed: Option<TimedArg>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// `--timed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TimedArg {
    /// The run-time choice on (`TimedPosting::Auto`).
    Auto,
    /// The same communicator with the choice off (`TimedPosting::Never`).
    Never,
}

impl TimedArg {
    fn option(self) -> herald::runtime::TimedPosting {
        match self {
            TimedArg::Auto => herald::runtime::TimedPosting::Auto,
            TimedArg::Never => herald::runtime::TimedPosting::Never,
        }
    }
}

/// `--transport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TransportArg {
    /// Each case in the transport the runtime planner ranked it in: stream, single copy, or
    /// (a flat tree's single block of at most 1072 bytes, ranks with CPUs of their own, or
    /// of at most 64 KiB where ranks share CPUs and the profile measured posting there) posted.
    Auto,
    /// Line streams only.
    Stream,
    /// Single copy only.
    Direct,
    /// Both, for every case.
    Both,
}

impl TransportArg {
    /// The transports measured for every case; `None`: each case in the transport the
    /// runtime planner chose for it.
    fn measured(self) -> Option<&'static [Transport]> {
        match self {
            TransportArg::Auto => None,
            TransportArg::Stream => Some(&[Transport::Stream]),
            TransportArg::Direct => Some(&[Transport::Direct]),
            TransportArg::Both => Some(&[Transport::Stream, Transport::Direct]),
        }
    }
}

/// Rejects bad arguments with one line.
fn validate(a: &FidelityArgs) -> Result<(), CliError> {
    if a.ranks.is_empty() || a.ranks.iter().any(|&n| n < 2) {
        return Err(CliError::usage(
            "--ranks must list rank counts of at least 2",
        ));
    }
    if a.ranks
        .iter()
        .any(|&n| n as usize > herald::runtime::MAX_COMM_RANKS)
    {
        return Err(CliError::usage(
            "--ranks: too many ranks for one communicator",
        ));
    }
    if a.sizes.is_empty() || a.sizes.contains(&0) {
        return Err(CliError::usage("--sizes must list positive byte counts"));
    }
    if a.sizes.iter().any(|&b| b > u32::MAX as usize) {
        return Err(CliError::usage("--sizes: at most 4 GiB per broadcast"));
    }
    if a.slices == 0 {
        return Err(CliError::usage("--slices must be at least 1"));
    }
    if a.measure_us == 0 || a.measure_us > 10_000_000 {
        return Err(CliError::usage(
            "--measure-us must be between 1 and 10000000",
        ));
    }
    if a.top == 0 {
        return Err(CliError::usage("--top must be at least 1"));
    }
    Ok(())
}

/// Runs `herald fidelity`.
pub(crate) fn run(a: &FidelityArgs) -> Result<(), CliError> {
    validate(a)?;
    let started = Instant::now();
    let started_at = std::time::SystemTime::now();
    let profile = load_profile(&a.profile, a.force).map_err(CliError::usage)?;
    let h = TopologySource::Machine.load().map_err(CliError::usage)?;
    if h.pu_count() < 2 {
        return Err(CliError::usage("fidelity needs two CPUs"));
    }
    let (mut ranks, mut sizes) = (a.ranks.clone(), a.sizes.clone());
    ranks.sort_unstable();
    ranks.dedup();
    sizes.sort_unstable();
    sizes.dedup();
    let mut all = Vec::new();
    for &n in &ranks {
        for &bytes in &sizes {
            let transports = a.transport.measured();
            all.extend(cases::cases(
                &profile,
                &h,
                n,
                bytes,
                a.top,
                transports,
                a.timed.map(TimedArg::option),
            )?);
        }
    }
    // One clock read, taken off every timed interval as the calibration takes it off its own,
    // and the clock's step, over which each measurement's median is spread as the
    // calibration spreads its own.
    let clock = measure::Clock {
        overhead_ns: herald::calibrate::clock_overhead(),
        step_ns: herald::calibrate::clock_resolution(),
    };
    let planned = cases::planned_options(
        &profile,
        &h,
        a.timed
            .map_or(herald::runtime::TimedPosting::Auto, TimedArg::option),
    );
    measure::run_slices(
        &h,
        &planned,
        &mut all,
        a.slices,
        a.measure_us as f64 * 1e3,
        clock,
    )?;
    let mut out = report::build(
        &profile,
        &h,
        &all,
        a.slices,
        a.measure_us,
        clock,
        started.elapsed().as_secs_f64(),
    );
    out.profile_age_s = profile.age_at(started_at).map(|d| d.as_secs_f64());
    if a.json {
        let text = serde_json::to_string(&out).map_err(|e| CliError::Failed(e.to_string()))?;
        crate::print_out(&format!("{text}\n"))
    } else {
        crate::print_out(&report::table(&out))
    }
}
