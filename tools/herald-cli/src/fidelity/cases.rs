//! The cases of one (ranks, size): the planner's best distinct candidates and the MPI-style
//! baselines, each compiled and predicted.

use crate::CliError;
use herald::runtime::TimedPosting;
use herald::{
    model::{Pick, RuntimeCosts, Transport},
    plan::{plan_for_runtime, Candidate, RuntimeChoice},
    schedule::Schedule,
    sim::predict_runtime,
    Algorithm, Hierarchy, PlanRequest, Profile, Program,
};

/// The regimes a prediction can assume, in the order of [`Case::predicted`].
pub(crate) const PICKS: [(Pick, &str); 3] = [
    (Pick::Fastest, "fastest"),
    (Pick::Dominant, "dominant"),
    (Pick::Slowest, "slowest"),
];

/// The index into [`PICKS`] of the dominant regime.
pub(crate) const DOMINANT: usize = 1;
const _: () = assert!(matches!(PICKS[DOMINANT].0, Pick::Dominant));

/// One measured case: a candidate of one (ranks, size) in one transport.
#[derive(Debug)]
pub(crate) struct Case {
    /// Ranks.
    pub(crate) n: u32,
    /// Payload bytes.
    pub(crate) bytes: usize,
    /// The candidate with its block count (`binomial m=1`), as `herald plan` names it.
    pub(crate) label: String,
    /// Blocks.
    pub(crate) blocks: u32,
    /// Its position in the planner's ranking (1 = the planner's pick).
    pub(crate) planner_rank: usize,
    /// The MPI-style baseline it stands for, if any.
    pub(crate) baseline: Option<&'static str>,
    /// The transport measured (for the communicator's run-time choice, the way it starts on).
    pub(crate) transport: Transport,
    /// Whether this is a planned communicator's run-time choice between posting and its
    /// plan's other transport ([`herald::runtime::TimedPosting`]; or, with `--timed never`,
    /// the same communicator with the choice off): measured by `CommRank::broadcast` on a
    /// communicator planned with the profile, default options otherwise.
    pub(crate) timed: bool,
    /// The program, rooted at rank 0.
    pub(crate) program: Program,
    /// Predicted ns per regime, in [`PICKS`] order.
    pub(crate) predicted: [f64; 3],
    /// One entry per measurement, in slice order.
    pub(crate) measured: Vec<Measured>,
}

/// One measurement of a case: many repetitions of barrier-then-one-broadcast.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Measured {
    /// The raw hop just before it, ns (names its latency mode).
    pub(crate) raw: f64,
    /// The median of its repetitions, ns.
    pub(crate) median: f64,
    /// The mean of its repetitions, ns: the statistic the model predicts where ranks share
    /// CPUs (an average over the phases of the other ranks' turns, `herald::sim`).
    pub(crate) mean: f64,
}

/// Whether a planned candidate is of a baseline's kind.
type IsBaseline = fn(&Candidate) -> bool;

/// The MPI-style baselines: a name, and whether a planned candidate is one. The planner's
/// best-ranked candidate of each kind stands for it.
const BASELINES: [(&str, IsBaseline); 4] = [
    ("binomial", |c| {
        c.algorithm == Algorithm::Binomial && c.blocks == 1
    }),
    ("flat tree", |c| {
        c.algorithm == Algorithm::Star && c.blocks == 1
    }),
    ("scatter-allgather", |c| {
        c.algorithm == Algorithm::ScatterAllgather && c.blocks > 1
    }),
    ("pipelined chain", |c| {
        matches!(c.algorithm, Algorithm::Chain | Algorithm::Dtree { d: 1 }) && c.blocks > 1
    }),
];

/// The predicted ns of an `n`-rank, `bytes`-byte broadcast by `schedule` (rooted at rank 0)
/// moved by `transport`, for the profile's regime `pick`.
///
/// Every prediction `herald fidelity` prints comes from here: herald's runtime cost model
/// ([`RuntimeCosts`] with the profile's values for `pick`, evaluated by [`predict_runtime`]),
/// the model the planner ranks the runtime's candidates by ([`plan_for_runtime`]).
pub(crate) fn predicted_ns(
    profile: &Profile,
    hierarchy: &Hierarchy,
    schedule: &Schedule,
    bytes: usize,
    transport: Transport,
    pick: Pick,
) -> Result<f64, CliError> {
    let costs = RuntimeCosts::from_profile(profile, hierarchy, pick).map_err(CliError::usage)?;
    let p = predict_runtime(schedule, &costs, bytes as u64, transport).map_err(CliError::usage)?;
    Ok(p.makespan_ns())
}

/// The cases of an `n`-rank, `bytes`-byte broadcast: the runtime planner's `top` best-ranked
/// (candidate, transport) choices with distinct programs, then each baseline whose program is
/// not among them (the planner's best-ranked choice of its kind), then the pick's program in
/// the other transport if it is not among them (so the regret always weighs the planner's
/// choice of transport). `transports`: `None` measures each choice in its own transport (what
/// the runtime would run); otherwise every chosen program in each listed transport.
///
/// # Errors
/// A usage error if the profile cannot make the model or the planner fails.
pub(crate) fn cases(
    profile: &Profile,
    hierarchy: &Hierarchy,
    n: u32,
    bytes: usize,
    top: usize,
    transports: Option<&[Transport]>,
    timed: Option<TimedPosting>,
) -> Result<Vec<Case>, CliError> {
    let req = PlanRequest {
        n,
        root: 0,
        bytes: bytes as u64,
        blocks: None,
    };
    let ranked = plan_for_runtime(profile, hierarchy, &req)
        .map_err(CliError::usage)?
        .ranked;
    let same =
        |a: &RuntimeChoice, b: &RuntimeChoice| a.transport == b.transport || transports.is_some();
    // (planner rank, choice, baseline, program)
    let mut chosen: Vec<(usize, &RuntimeChoice, Option<&'static str>, Program)> = Vec::new();
    for (i, c) in ranked.iter().enumerate() {
        if chosen.len() >= top {
            break;
        }
        let p = Program::compile(&c.schedule).map_err(CliError::usage)?;
        if !chosen.iter().any(|k| k.3 == p && same(k.1, c)) {
            chosen.push((i + 1, c, None, p));
        }
    }
    for (name, is) in BASELINES {
        let Some((i, c)) = ranked.iter().enumerate().find(|(_, c)| is(&c.candidate)) else {
            continue; // the planner does not offer it here (e.g. blocks of an 8-byte payload)
        };
        let p = Program::compile(&c.schedule).map_err(CliError::usage)?;
        match chosen.iter_mut().find(|k| k.3 == p && same(k.1, c)) {
            Some(k) => {
                k.2.get_or_insert(name);
            }
            None => chosen.push((i + 1, c, Some(name), p)),
        }
    }
    // The pick in every other transport the planner ranked it in: without it, a 512-byte
    // broadcast's five measured candidates could all be streams, and a single copy measured
    // faster than the pick never showed in the regret (twelfth session, docs/fidelity.md runs U
    // and V); with posting ranked too (nineteenth session) there can be two others.
    if transports.is_none() {
        if let Some((_, pick, _, program)) = chosen.first() {
            let (pick, program) = (*pick, program.clone());
            for transport in [Transport::Stream, Transport::Direct, Transport::Posted] {
                if transport == pick.transport {
                    continue;
                }
                let other = ranked.iter().enumerate().find(|(_, c)| {
                    c.transport == transport
                        && c.schedule == pick.schedule
                        && c.candidate.blocks == pick.candidate.blocks
                });
                if let Some((i, c)) = other {
                    if !chosen
                        .iter()
                        .any(|k| k.3 == program && k.1.transport == c.transport)
                    {
                        chosen.push((i + 1, c, Some("other transport"), program.clone()));
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for (planner_rank, c, baseline, program) in chosen {
        let own = [c.transport];
        for &transport in transports.unwrap_or(&own) {
            let mut predicted = [0.0; 3];
            for (slot, &(pick, _)) in predicted.iter_mut().zip(&PICKS) {
                *slot = predicted_ns(profile, hierarchy, &c.schedule, bytes, transport, pick)
                    .unwrap_or(f64::NAN);
            }
            out.push(Case {
                n,
                bytes,
                label: format!("{} m={}", c.candidate.label, c.candidate.blocks),
                blocks: c.candidate.blocks,
                planner_rank,
                baseline,
                transport,
                program: program.clone(),
                predicted,
                measured: Vec::new(),
                timed: false,
            });
        }
    }
    if let (Some(timed), None) = (timed, transports) {
        if let Some(case) = timed_case(profile, hierarchy, n, bytes, &out, timed)? {
            out.push(case);
        }
    }
    Ok(out)
}

/// The options of the communicator that measures the run-time choice: planned with the
/// profile, timing by `timed`, otherwise the defaults, on the machine's CPUs.
pub(crate) fn planned_options(
    profile: &Profile,
    hierarchy: &Hierarchy,
    timed: TimedPosting,
) -> herald::CommOptions {
    herald::CommOptions {
        schedule: herald::runtime::DefaultSchedule::Planned(herald::runtime::Planned::new(
            profile.clone(),
            hierarchy.clone(),
        )),
        cpus: Some(hierarchy.pu_count()),
        timed_posting: timed,
        ..herald::CommOptions::default()
    }
}

/// Where a planned communicator times an `n`-rank, `bytes`-byte broadcast
/// ([`herald::Comm::broadcast_timed`] with [`TimedPosting::Auto`]), the case that measures it
/// with `timed` (the choice on, or off as a control): labelled with the way it starts on,
/// predicted as the planner's pick (the first of `planned`).
fn timed_case(
    profile: &Profile,
    hierarchy: &Hierarchy,
    n: u32,
    bytes: usize,
    planned: &[Case],
    timed: TimedPosting,
) -> Result<Option<Case>, CliError> {
    let auto = planned_options(profile, hierarchy, TimedPosting::Auto);
    let auto = herald::Comm::with_options(n as usize, auto).map_err(CliError::usage)?;
    let Some(pick) = planned.first() else {
        return Ok(None);
    };
    if !auto.broadcast_timed(bytes) {
        return Ok(None);
    }
    let comm = herald::Comm::with_options(n as usize, planned_options(profile, hierarchy, timed))
        .map_err(CliError::usage)?;
    let start = comm.broadcast_transport(bytes);
    let label = if timed == TimedPosting::Never {
        format!("choice off, {}", start.name())
    } else {
        format!("timed, from {}", start.name())
    };
    Ok(Some(Case {
        n,
        bytes,
        label,
        blocks: 1,
        planner_rank: 0,
        baseline: Some("run-time choice"),
        transport: start,
        program: pick.program.clone(),
        predicted: pick.predicted,
        measured: Vec::new(),
        timed: true,
    }))
}
