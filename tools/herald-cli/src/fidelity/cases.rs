//! The cases of one (ranks, size): the planner's best distinct candidates and the MPI-style
//! baselines, each compiled and predicted.

use super::Transport;
use crate::CliError;
use herald::{
    check,
    model::{Assumptions, Hier, Pick},
    plan,
    plan::{candidate_model, oversubscribed_model, schedule_of, Candidate},
    Algorithm, Hierarchy, Model, PlanRequest, Profile, Program,
};

/// The regimes a prediction can assume, in the order of [`Case::predicted`].
pub(crate) const PICKS: [(Pick, &str); 3] = [
    (Pick::Fastest, "fastest"),
    (Pick::Dominant, "dominant"),
    (Pick::Slowest, "slowest"),
];

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
    /// The transport measured.
    pub(crate) transport: Transport,
    /// The program, rooted at rank 0.
    pub(crate) program: Program,
    /// Predicted ns per regime, in [`PICKS`] order.
    pub(crate) predicted: [f64; 3],
    /// Per measurement: the raw hop just before it (ns) and the broadcast's median (ns).
    pub(crate) measured: Vec<(f64, f64)>,
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

/// The model the planner ranks `n`-rank broadcasts under for the runtime, with `profile`'s
/// parameters for the regime `pick`: the hierarchical model of the profile on `hierarchy`
/// (ranks in compact order) when every rank has a PU of its own, else the oversubscribed flat
/// model (which knows only the dominant regime). With `Pick::Dominant` this is the model of
/// `herald::plan::plan_runtime`.
pub(crate) fn planner_model(
    profile: &Profile,
    hierarchy: &Hierarchy,
    n: u32,
    pick: Pick,
) -> Result<Model, CliError> {
    if n as usize > hierarchy.pu_count() {
        return oversubscribed_model(profile, hierarchy, n).map_err(CliError::usage);
    }
    let assume = Assumptions {
        pick,
        ..Assumptions::default()
    };
    let cpus = hierarchy.os_indices().to_vec();
    let hier =
        Hier::from_profile(profile, hierarchy.clone(), &cpus, &assume).map_err(CliError::usage)?;
    Ok(Model::from(hier))
}

/// The predicted ns of an `n`-rank, `bytes`-byte broadcast of `candidate` from rank 0 in
/// `transport`, for the profile's regime `pick`.
///
/// Every prediction `herald fidelity` prints comes from here. Today: the checker's makespan of
/// the candidate's schedule (generated for that regime's model) under the model the planner
/// ranks by ([`planner_model`], the candidate's block size applied), in ns. That model
/// describes line streams; it does not yet know the single-copy transport (`transport` is
/// accepted for the runtime cost model that will replace this body).
pub(crate) fn predicted_ns(
    profile: &Profile,
    hierarchy: &Hierarchy,
    n: u32,
    candidate: &Candidate,
    bytes: usize,
    transport: Transport,
    pick: Pick,
) -> Result<f64, CliError> {
    let _ = (bytes, transport); // the block size is the candidate's
    let model = planner_model(profile, hierarchy, n, pick)?;
    let sized = candidate_model(&model, candidate).map_err(CliError::usage)?;
    let s = schedule_of(&model, candidate, n, 0).map_err(CliError::usage)?;
    let r = check(&s, &sized).map_err(CliError::usage)?;
    Ok(r.base().ratio(r.makespan()).to_f64())
}

/// The `n`-rank program of `c` from rank 0 under `model`.
fn compile(model: &Model, c: &Candidate, n: u32) -> Result<Program, CliError> {
    let s = schedule_of(model, c, n, 0).map_err(CliError::usage)?;
    Program::compile(&s).map_err(CliError::usage)
}

/// The cases of an `n`-rank, `bytes`-byte broadcast: the planner's `top` best-ranked candidates
/// with distinct programs, then each baseline whose program is not among them, each in every
/// transport of `transports`.
///
/// # Errors
/// A usage error if the profile cannot make the model or the planner fails.
pub(crate) fn cases(
    profile: &Profile,
    hierarchy: &Hierarchy,
    n: u32,
    bytes: usize,
    top: usize,
    transports: &[Transport],
) -> Result<Vec<Case>, CliError> {
    let model = planner_model(profile, hierarchy, n, Pick::Dominant)?;
    let req = PlanRequest {
        n,
        root: 0,
        bytes: bytes as u64,
        blocks: None,
    };
    let ranked = plan(&model, &req).map_err(CliError::usage)?.ranked;
    // (planner rank, candidate, baseline, program)
    let mut chosen: Vec<(usize, &Candidate, Option<&'static str>, Program)> = Vec::new();
    for (i, c) in ranked.iter().enumerate() {
        if chosen.len() >= top {
            break;
        }
        let p = compile(&model, c, n)?;
        if !chosen.iter().any(|k| k.3 == p) {
            chosen.push((i + 1, c, None, p));
        }
    }
    for (name, is) in BASELINES {
        let Some((i, c)) = ranked.iter().enumerate().find(|(_, c)| is(c)) else {
            continue; // the planner does not offer it here (e.g. blocks of an 8-byte payload)
        };
        let p = compile(&model, c, n)?;
        match chosen.iter_mut().find(|k| k.3 == p) {
            Some(k) => {
                k.2.get_or_insert(name);
            }
            None => chosen.push((i + 1, c, Some(name), p)),
        }
    }
    let mut out = Vec::new();
    for (planner_rank, c, baseline, program) in chosen {
        for &transport in transports {
            let mut predicted = [0.0; 3];
            for (slot, &(pick, _)) in predicted.iter_mut().zip(&PICKS) {
                *slot = predicted_ns(profile, hierarchy, n, c, bytes, transport, pick)?;
            }
            out.push(Case {
                n,
                bytes,
                label: format!("{} m={}", c.label, c.blocks),
                blocks: c.blocks,
                planner_rank,
                baseline,
                transport,
                program: program.clone(),
                predicted,
                measured: Vec::new(),
            });
        }
    }
    Ok(out)
}
