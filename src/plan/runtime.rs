//! Planning for herald's own runtime: the papers' models generate the candidates (every tree,
//! block count and leaders split the planner knows, exactly as [`plan`](super::plan) does), and
//! the runtime's cost model ([`RuntimeCosts`], [`predict_runtime`]) ranks each candidate under
//! each transport — so the choice between streaming lines and single copy, per size, comes from
//! calibrated numbers, not from a fixed threshold.

use super::{
    jobs_for_request, rank_with_schedules, runtime_model, Candidate, PlanError, PlanRequest,
};
use crate::model::{Hierarchy, Pick, Profile, RuntimeCosts, Transport};
use crate::runtime::SHARED_POSTED_LIMIT;
use crate::schedule::Schedule;
use crate::sim::{predict_runtime, program_of, PredictError, RankSends, RuntimePrediction};
use rayon::prelude::*;

/// One candidate moved by one transport, with the runtime's predicted time.
#[derive(Debug, Clone)]
pub struct RuntimeChoice {
    /// The candidate (ranked by the papers' model in [`Candidate::makespan`]).
    pub candidate: Candidate,
    /// How the payload moves.
    pub transport: Transport,
    /// The runtime cost model's prediction.
    pub predicted: RuntimePrediction,
    /// The candidate's schedule from the requested root.
    pub schedule: Schedule,
}

/// Candidates ranked by the runtime's predicted time, fastest first.
#[derive(Debug, Clone)]
pub struct RuntimePlan {
    /// Every legal (candidate, transport), fastest first. Predictions within 1 % of the
    /// fastest are ties (the model does not resolve less), ranked by fewer messages first, then
    /// by prediction; equal predictions by the fewer hops from the root to the last receiver of
    /// a block, then by label, blocks, transport.
    pub ranked: Vec<RuntimeChoice>,
    /// Candidates that did not apply, with the reason.
    pub rejected: Vec<(String, String)>,
}

impl RuntimePlan {
    /// The winner.
    pub fn best(&self) -> Option<&RuntimeChoice> {
        self.ranked.first()
    }
}

/// Ranks every candidate broadcast `req` (its ranks, root and payload bytes) on `hierarchy`
/// (ranks in compact order, cycling over the PUs when there are more ranks than PUs) by
/// herald's runtime cost model under `profile`, each under every transport the profile
/// measured (single copy only if it did, and only for payloads of more than one line; posting
/// only if it did, for a flat tree in one block of at most
/// [`POSTED_MAX_BYTES`](crate::runtime::POSTED_MAX_BYTES) where every rank has a PU of its
/// own, and of at most [`SHARED_POSTED_LIMIT`](crate::runtime::SHARED_POSTED_LIMIT) where
/// ranks share PUs and the profile measured posting there).
///
/// # Errors
/// [`PlanError::Profile`] if the profile makes no model of `hierarchy`; [`PlanError`] for a bad
/// problem or when nothing applies.
///
/// # Examples
///
/// ```
/// # use herald::{*, plan::plan_for_runtime, model::Transport};
/// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
/// let profile = Profile::from_json_forced(&text)?;
/// let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
/// let req = PlanRequest { n: 4, root: 0, bytes: 4096, blocks: None };
/// let p = plan_for_runtime(&profile, &h, &req)?;
/// let best = p.best().unwrap();
/// assert!(p.ranked.iter().all(|c| c.predicted.makespan_ps >= best.predicted.makespan_ps));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn plan_for_runtime(
    profile: &Profile,
    hierarchy: &Hierarchy,
    req: &PlanRequest,
) -> Result<RuntimePlan, PlanError> {
    let model = runtime_model(profile, hierarchy, req.n)?;
    let costs = RuntimeCosts::from_profile(profile, hierarchy, Pick::Dominant)?;
    rank_for_runtime(&model, &costs, req)
}

/// [`plan_for_runtime`] with the candidates' model and the runtime's costs given.
///
/// # Errors
/// As [`plan_for_runtime`].
pub fn rank_for_runtime(
    model: &crate::model::Model,
    costs: &RuntimeCosts,
    req: &PlanRequest,
) -> Result<RuntimePlan, PlanError> {
    let bytes = req.bytes;
    let jobs = jobs_for_request(model, req)?;
    let (candidates, mut rejected) = rank_with_schedules(&jobs, req)?;
    let mut transports = vec![Transport::Stream];
    if costs.models_direct() && bytes > 48 {
        transports.push(Transport::Direct);
    }
    // Past a slot's size, or where posting is not modelled between ranks sharing PUs, the
    // prediction says `NotPostable` and posting is no candidate.
    if costs.models_posted() && bytes <= SHARED_POSTED_LIMIT as u64 {
        transports.push(Transport::Posted);
    }
    // Many candidates are one program (trees that coincide at this many ranks, a block count
    // that changes only the papers' timing): each distinct program is predicted once per
    // transport, the distinct ones in parallel.
    let programs: Vec<Vec<RankSends>> = candidates.iter().map(|(_, s)| program_of(s)).collect();
    let mut first_of: std::collections::HashMap<(&[RankSends], u32, Transport), usize> =
        std::collections::HashMap::new();
    let mut jobs: Vec<(usize, Transport)> = Vec::new();
    let mut job_of = Vec::with_capacity(candidates.len() * transports.len());
    for (i, (_, schedule)) in candidates.iter().enumerate() {
        let blocks = match schedule.collective() {
            crate::schedule::Collective::Broadcast { blocks, .. } => blocks,
            _ => 0,
        };
        for &transport in &transports {
            let key = (programs[i].as_slice(), blocks, transport);
            let j = *first_of.entry(key).or_insert_with(|| {
                jobs.push((i, transport));
                jobs.len() - 1
            });
            job_of.push(j);
        }
    }
    let predictions: Vec<Result<RuntimePrediction, PredictError>> = jobs
        .par_iter()
        .map(|&(i, transport)| predict_runtime(&candidates[i].1, costs, bytes, transport))
        .collect();
    let mut ranked = Vec::with_capacity(job_of.len());
    let mut job = job_of.into_iter();
    for (candidate, schedule) in candidates {
        for &transport in &transports {
            match predictions[job.next().expect("one job per pair")].clone() {
                // Not a flat tree in one block, or ranks sharing PUs: not a candidate.
                Err(PredictError::NotPostable(_)) => {}
                Ok(predicted) => ranked.push(RuntimeChoice {
                    candidate: candidate.clone(),
                    transport,
                    predicted,
                    schedule: schedule.clone(),
                }),
                Err(e) => rejected.push((
                    format!("{} m={} {transport}", candidate.label, candidate.blocks),
                    e.to_string(),
                )),
            }
        }
    }
    if ranked.is_empty() {
        return Err(PlanError::Empty);
    }
    // Equal predictions: the fewer messages first, then the shallower (fewer hops in a row,
    // each a handoff the model may not see in full). Each choice's shape is computed once.
    let mut keyed: Vec<((usize, usize), RuntimeChoice)> = ranked
        .into_iter()
        .map(|c| ((c.schedule.len(), depth(&c.schedule)), c))
        .collect();
    keyed.sort_by(|(sa, a), (sb, b)| {
        (a.predicted.makespan_ps, sa, rest(a)).cmp(&(b.predicted.makespan_ps, sb, rest(b)))
    });
    // The model does not resolve differences under 1 % (its inputs are medians whose spreads
    // are several per cent): predictions within 1 % of the best are ties, ranked by message
    // count, then by prediction; depth only among equal predictions (fifty-fourth session:
    // depth first picked star-like trees over the binary and "optimal" trees at 4 and 5
    // ranks of 4 MiB, which measured 12–20 % faster; docs/fidelity.md).
    let best = keyed[0].1.predicted.makespan_ps;
    let ties = keyed
        .iter()
        .take_while(|(_, c)| c.predicted.makespan_ps - best <= best / RESOLUTION)
        .count();
    keyed[..ties].sort_by(|((ma, da), a), ((mb, db), b)| {
        (ma, a.predicted.makespan_ps, da, rest(a)).cmp(&(mb, b.predicted.makespan_ps, db, rest(b)))
    });
    let ranked = keyed.into_iter().map(|(_, c)| c).collect();
    Ok(RuntimePlan { ranked, rejected })
}

/// Predictions within `1 / RESOLUTION` of the best count as ties ([`rank_for_runtime`]).
const RESOLUTION: u64 = 100;

/// The last keys of the ranking: label, blocks, transport (a total order for reproducibility).
fn rest(c: &RuntimeChoice) -> (&str, u32, Transport) {
    (&c.candidate.label, c.candidate.blocks, c.transport)
}

/// The most hops any block takes from the root to a receiver in `s` (a broadcast's depth).
fn depth(s: &Schedule) -> usize {
    let mut hops: std::collections::HashMap<(u32, u32), usize> = std::collections::HashMap::new();
    let mut deepest = 0;
    for t in s.sends_by_time() {
        let d = hops.get(&(t.from, t.what)).copied().unwrap_or(0) + 1;
        let e = hops.entry((t.to, t.what)).or_insert(d);
        *e = (*e).min(d);
        deepest = deepest.max(*e);
    }
    deepest
}
