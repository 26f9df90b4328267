//! The planner: choose a broadcast schedule by simulated time, never by hand-written rules.
//!
//! Given a model, `n` ranks and a payload, the planner enumerates a bounded candidate set —
//! every broadcast algorithm that applies, with a handful of values for each parameter (tree
//! degree, radix, number of blocks) — generates each, checks it under the model, and ranks the
//! legal ones by exact makespan (ties by name). Candidates are simulated in parallel (rayon).
//! The ranking is therefore exactly the one a brute-force simulation of the same candidates
//! gives; `tests/plan.rs` checks that independently.
//!
//! Payloads and blocks: under LogP a block of `b` bytes costs `(b − 1)·G` more to inject
//! (LogGP), so the planner tries several block counts `m` (powers of two up to the number of
//! 56-byte lines, at most 64) with the model's message size set to the block size. The postal
//! and 1-port models have no notion of bytes: there `m` is what the caller asks for (default 1).
//!
//! # The hierarchical model
//!
//! Under a [`Hier`] model the candidates are the classic trees (binomial, binary, chain, star,
//! scatter-allgather, k-nomial and d-ary with radices and degrees around each used level's
//! `λ = ⌈latency / send step⌉`) placed under per-pair costs, the greedy earliest-arrival tree,
//! and one leaders broadcast per *split* (every non-empty subset of [`split_depths`], at most
//! 2^4 − 1). Each stage of a split takes the tree that finishes first on that stage's own
//! subproblem — the stage among the root's group ([`stage_members`]), simulated under the same
//! model ([`Hier::restrict`]) for every stage tree — and the composed broadcast is then simulated
//! whole like every other candidate. So both choices are made by simulation; the ranking is of
//! whole simulated schedules. [`plan_profile`] does all this for a calibrated profile and returns
//! the winner's schedule, for the runtime.

use crate::model::{Assumptions, CostModel, Hier, Hierarchy, Model, Profile, ProfileError};
use crate::schedule::registry::{self, Sweep};
use crate::schedule::{
    generate, leaders, split_depths, stage_members, Algorithm, Leaders, Request, Schedule,
    ScheduleError,
};
use crate::sim::{check_with, CheckError, CheckOptions};
use crate::time::Ratio;
use rayon::prelude::*;

mod runtime;
pub use runtime::{plan_for_runtime, rank_for_runtime, RuntimeChoice, RuntimePlan};

/// What to plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanRequest {
    /// Ranks.
    pub n: u32,
    /// The root.
    pub root: u32,
    /// Payload bytes (used by LogP/LogGP models to size blocks).
    pub bytes: u64,
    /// Blocks to use under models without bytes (postal, 1-port); `None`: 1.
    pub blocks: Option<u32>,
}

/// One simulated candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The algorithm with its parameters.
    pub algorithm: Algorithm,
    /// Blocks the payload is cut into.
    pub blocks: u32,
    /// Bytes per block (the model's message size).
    pub block_bytes: u64,
    /// Exact makespan, in model time units.
    pub makespan: Ratio,
    /// The model's lower bound for this block count.
    pub lower_bound: Ratio,
    /// Sends in the schedule.
    pub sends: usize,
    /// The leaders spec, for [`Algorithm::Leaders`] (hierarchical model).
    pub leaders: Option<Leaders>,
    /// The candidate in words (`binomial`, `leaders(package:star, rank:binomial)`).
    pub label: String,
}

/// A ranked plan.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Legal candidates, fastest first.
    pub ranked: Vec<Candidate>,
    /// Candidates that did not apply or were illegal, with the reason.
    pub rejected: Vec<(String, String)>,
}

impl Plan {
    /// The winner.
    pub fn best(&self) -> Option<&Candidate> {
        self.ranked.first()
    }

    /// Why the winner wins, in one sentence.
    pub fn why(&self) -> String {
        self.why_in("")
    }

    /// Why the winner wins, times followed by `unit` (e.g. `" ns"`).
    pub fn why_in(&self, unit: &str) -> String {
        match (self.ranked.first(), self.ranked.get(1)) {
            (Some(a), Some(b)) => format!(
                "{} with {} block(s) finishes at {}{unit}, the runner-up {} with {} block(s) at {}{unit}; lower bound {}{unit}",
                a.label,
                a.blocks,
                a.makespan.decimal(),
                b.label,
                b.blocks,
                b.makespan.decimal(),
                a.lower_bound.decimal(),
            ),
            (Some(a), None) => format!("{} is the only legal candidate", a.label),
            _ => "no candidate applies".into(),
        }
    }
}

/// Errors planning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// Bad problem (n = 0, root out of range, …).
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// The check could not run.
    #[error(transparent)]
    Check(#[from] CheckError),
    /// No candidate applied.
    #[error("no candidate schedule applies to this model and problem")]
    Empty,
    /// The profile could not be turned into a model.
    #[error(transparent)]
    Profile(#[from] ProfileError),
}

/// The bounded candidate set for `model` with `m` blocks (see the module docs): the sweep of
/// every broadcast generator in the [`registry`] that
/// applies to the model.
///
/// # Errors
/// [`PlanError`] on model errors.
pub fn candidates(model: &Model, n: u32, m: u32) -> Result<Vec<Algorithm>, PlanError> {
    let sweep = Sweep::new(model, n, m)?;
    Ok(registry::broadcast_candidates(model, &sweep))
}

/// Block counts to try for a payload of `bytes` under `model`.
fn block_counts(model: &Model, req: &PlanRequest) -> Vec<u32> {
    let bytes_matter = match model {
        Model::LogP(_) => true,
        Model::Hier(h) => h.family() == "logp",
        _ => false,
    };
    match model {
        _ if bytes_matter => {
            let lines = req.bytes.div_ceil(56).max(1);
            let mut v = vec![];
            let mut m = 1u64;
            while m <= lines.min(64) {
                v.push(m as u32);
                m *= 2;
            }
            v
        }
        _ => vec![req.blocks.unwrap_or(1).max(1)],
    }
}

/// The model for `blocks` blocks of a `bytes`-byte payload.
fn model_for(model: &Model, bytes: u64, blocks: u32) -> Result<(Model, u64), PlanError> {
    let block_bytes = bytes.div_ceil(u64::from(blocks)).max(1);
    Ok(match model {
        Model::LogP(l) => (
            Model::from(l.with_bytes(block_bytes).map_err(ScheduleError::from)?),
            block_bytes,
        ),
        Model::Hier(h) if h.family() == "logp" => (
            Model::from(h.with_bytes(block_bytes).map_err(ScheduleError::from)?),
            block_bytes,
        ),
        other => (other.clone(), block_bytes),
    })
}

/// Plans a broadcast: every candidate simulated, ranked by makespan.
///
/// # Errors
/// [`PlanError`] for a bad problem, or when nothing applies.
///
/// # Examples
///
/// ```
/// use herald::{plan, Algorithm, Model, PlanRequest, Postal, Ratio};
/// let model = Model::from(Postal::new(Ratio::ONE)?);
/// let p = plan(&model, &PlanRequest { n: 64, root: 0, bytes: 64, blocks: None })?;
/// // λ = 1: nothing beats the binomial tree's ⌈log2 64⌉ = 6 rounds.
/// assert_eq!(p.best().unwrap().makespan, Ratio::integer(6));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn plan(model: &Model, req: &PlanRequest) -> Result<Plan, PlanError> {
    rank(&jobs_for_request(model, req)?, req)
}

/// Every job [`plan`] simulates for `req`: each block count's candidates, under the model sized
/// for that block count.
fn jobs_for_request(model: &Model, req: &PlanRequest) -> Result<Vec<Job>, PlanError> {
    check_levels(model, req.n)?;
    let mut jobs: Vec<Job> = vec![];
    for m in block_counts(model, req) {
        let (mm, block_bytes) = model_for(model, req.bytes, m)?;
        jobs.extend(jobs_for(&mm, req, m, block_bytes)?);
    }
    Ok(jobs)
}

/// Plans a broadcast of exactly `blocks` blocks under `model` as it is (no block-size sweep; the
/// model's message size is left alone): the same candidates as [`plan`] for that block count,
/// ranked the same way. This is what `herald sim --algo auto` ranks.
///
/// # Errors
/// [`PlanError`] for a bad problem, or when nothing applies.
///
/// # Examples
///
/// ```
/// use herald::{plan::plan_blocks, Algorithm, Model, Postal, Ratio};
/// let model = Model::from(Postal::new("5/2".parse()?)?);
/// let p = plan_blocks(&model, 14, 1, 0)?;
/// // Bar-Noy & Kipnis, Fig. 1: BCAST informs 14 processors by λ = 5/2's optimum 15/2.
/// assert_eq!(p.best().unwrap().makespan, "15/2".parse()?);
/// assert!(p.ranked.iter().all(|c| c.blocks == 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn plan_blocks(model: &Model, n: u32, blocks: u32, root: u32) -> Result<Plan, PlanError> {
    check_levels(model, n)?;
    let req = PlanRequest {
        n,
        root,
        bytes: 0,
        blocks: Some(blocks),
    };
    let block_bytes = match model {
        Model::LogP(l) => l.bytes(),
        _ => 1,
    };
    let jobs = jobs_for(model, &req, blocks, block_bytes)?;
    rank(&jobs, &req)
}

/// Under a hierarchical model, a level the ranks need without parameters is an error of its
/// own, not "nothing applies".
fn check_levels(model: &Model, n: u32) -> Result<(), PlanError> {
    if let Model::Hier(h) = model {
        let base = h.time_base().map_err(ScheduleError::from)?;
        h.relaxed_timing(n.max(1), base)
            .map_err(ScheduleError::from)?;
    }
    Ok(())
}

/// Every candidate for `m` blocks of `block_bytes` bytes under `model` (already sized).
fn jobs_for(
    model: &Model,
    req: &PlanRequest,
    m: u32,
    block_bytes: u64,
) -> Result<Vec<Job>, PlanError> {
    let algorithms = match model {
        Model::Hier(h) => hier_candidates(h, req.n)?,
        _ => candidates(model, req.n, m)?,
    };
    let mut jobs: Vec<Job> = algorithms
        .into_iter()
        .map(|a| (a, m, block_bytes, model.clone(), None))
        .collect();
    if let Model::Hier(h) = model {
        for spec in leader_specs(h, req, m)? {
            jobs.push((
                Algorithm::Leaders,
                m,
                block_bytes,
                model.clone(),
                Some(spec),
            ));
        }
    }
    Ok(jobs)
}

/// Generates and checks every job in parallel and ranks the legal ones.
fn rank(jobs: &[Job], req: &PlanRequest) -> Result<Plan, PlanError> {
    let (ranked, rejected) = rank_with_schedules(jobs, req)?;
    Ok(Plan {
        ranked: ranked.into_iter().map(|(c, _)| c).collect(),
        rejected,
    })
}

/// Legal candidates ranked by makespan, each with its schedule, and the rejected ones.
type Ranked = (Vec<(Candidate, Schedule)>, Vec<(String, String)>);

/// [`rank`], keeping each legal candidate's schedule.
fn rank_with_schedules(jobs: &[Job], req: &PlanRequest) -> Result<Ranked, PlanError> {
    let results: Vec<Result<(Candidate, Schedule), (String, String)>> = jobs
        .par_iter()
        .map(|(a, m, block_bytes, mm, spec)| {
            let label = match (spec, mm) {
                (Some(spec), Model::Hier(h)) => spec.describe(h.hierarchy()),
                _ => a.to_string(),
            };
            let name = format!("{label} m={m}");
            let s = match (spec, mm) {
                (Some(spec), Model::Hier(h)) => leaders(h, req.n, *m, req.root, spec),
                _ => generate(&Request::broadcast(*a, req.n, *m, req.root), mm),
            }
            .map_err(|e| (name.clone(), e.to_string()))?;
            let r = check_with(&s, mm, CheckOptions::default())
                .map_err(|e| (name.clone(), e.to_string()))?;
            if !r.legal() {
                return Err((name, format!("illegal: {:?}", r.violations().first())));
            }
            let makespan = r.base().ratio(r.makespan());
            let lower_bound = r.base().ratio(r.lower_bound().unwrap_or(0));
            let sends = s.len();
            Ok((
                Candidate {
                    algorithm: *a,
                    blocks: *m,
                    block_bytes: *block_bytes,
                    makespan,
                    lower_bound,
                    sends,
                    leaders: spec.clone(),
                    label,
                },
                s,
            ))
        })
        .collect();
    // A bad problem (n = 0, root) fails every candidate the same way: report it, not "empty".
    drop(crate::schedule::Schedule::builder(
        req.n,
        crate::schedule::Collective::Broadcast {
            root: req.root,
            blocks: 1,
        },
        crate::time::TimeBase::UNIT,
    )?);
    let mut ranked = vec![];
    let mut rejected = vec![];
    for r in results {
        match r {
            Ok(c) => ranked.push(c),
            Err(e) => rejected.push(e),
        }
    }
    ranked.sort_by(|(a, _), (b, _)| {
        (a.makespan, &a.label, a.blocks).cmp(&(b.makespan, &b.label, b.blocks))
    });
    if ranked.is_empty() {
        return Err(PlanError::Empty);
    }
    Ok((ranked, rejected))
}

/// One planner job: algorithm, blocks, block bytes, the model for that block size, leaders spec.
type Job = (Algorithm, u32, u64, Model, Option<Leaders>);

/// The flat-tree candidates under a hierarchical model for `n` ranks (module docs).
///
/// # Errors
/// [`PlanError`] on model errors.
pub fn hier_candidates(h: &Hier, n: u32) -> Result<Vec<Algorithm>, PlanError> {
    let mut out: Vec<Algorithm> = vec![];
    let mut lambdas = level_lambdas(h, n)?;
    if lambdas.is_empty() {
        lambdas.push(1);
    }
    for lambda in lambdas {
        for a in registry::broadcast_candidates(h, &Sweep { n, m: 1, lambda }) {
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    Ok(out)
}

/// `⌈latency / send step⌉` of each level ranks `0 … n−1` meet at, at most `max(n, 2)`.
fn level_lambdas(h: &Hier, n: u32) -> Result<Vec<u32>, PlanError> {
    let base = h.time_base().map_err(ScheduleError::from)?;
    let used = h.used_levels(n);
    let mut out = vec![];
    for (d, level) in h.levels().iter().enumerate() {
        if let (true, Some(cost)) = (used[d], level.cost) {
            let t = cost.as_dyn().timing(base).map_err(ScheduleError::from)?;
            out.push(
                t.latency
                    .div_ceil(t.send_step().max(1))
                    .min(u64::from(n.max(2))) as u32,
            );
        }
    }
    Ok(out)
}

/// The trees a leaders stage may use for `k` members under `sub` with `m` blocks.
fn stage_trees(sub: &Hier, k: u32, m: u32) -> Result<Vec<Algorithm>, PlanError> {
    let mut out = vec![
        Algorithm::Binomial,
        Algorithm::Binary,
        Algorithm::Chain,
        Algorithm::Star,
    ];
    if m == 1 {
        out.push(Algorithm::Optimal);
    }
    for lambda in level_lambdas(sub, k)? {
        out.extend(Sweep::wide_trees(lambda));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|a| seen.insert(*a));
    Ok(out)
}

/// One leaders spec per split (module docs), each stage's tree the fastest on its own
/// subproblem, simulated.
fn leader_specs(h: &Hier, req: &PlanRequest, m: u32) -> Result<Vec<Leaders>, PlanError> {
    if req.root >= req.n {
        return Ok(vec![]);
    }
    let depths: Vec<usize> = split_depths(h, req.n).into_iter().take(4).collect();
    let mut specs = vec![];
    for mask in 1u32..(1 << depths.len()) {
        let split: Vec<usize> = (0..depths.len())
            .filter(|&i| mask >> i & 1 == 1)
            .map(|i| depths[i])
            .collect();
        let mut algorithms = Vec::with_capacity(split.len() + 1);
        for stage in 0..=split.len() {
            algorithms.push(best_stage_tree(h, req, &split, stage, m)?);
        }
        specs.push(Leaders { split, algorithms });
    }
    Ok(specs)
}

/// The tree that finishes first on stage `stage`'s subproblem (ties by name); binomial when
/// the stage has at most one member.
///
/// # Errors
/// [`PlanError`] on model or check errors.
pub fn best_stage_tree(
    h: &Hier,
    req: &PlanRequest,
    split: &[usize],
    stage: usize,
    m: u32,
) -> Result<Algorithm, PlanError> {
    let members = stage_members(h, req.n, req.root, split, stage);
    let k = members.len() as u32;
    if k <= 1 {
        return Ok(Algorithm::Binomial);
    }
    let sub = h.restrict(&members).map_err(ScheduleError::from)?;
    let model = Model::from(sub.clone());
    let trees = stage_trees(&sub, k, m)?;
    let timed: Vec<Option<(Ratio, String, Algorithm)>> = trees
        .par_iter()
        .map(|&a| {
            let spec = Leaders {
                split: vec![],
                algorithms: vec![a],
            };
            let s = leaders(&sub, k, m, 0, &spec).ok()?;
            let r = check_with(&s, &model, CheckOptions::default()).ok()?;
            r.legal()
                .then(|| (r.base().ratio(r.makespan()), a.to_string(), a))
        })
        .collect();
    Ok(timed
        .into_iter()
        .flatten()
        .min_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)))
        .map_or(Algorithm::Binomial, |(_, _, a)| a))
}

/// The model a broadcast of `bytes` in `blocks` blocks is simulated under: a LogGP model (flat,
/// or one per level) with messages of one block, `⌈bytes / blocks⌉` bytes (at least 1); any
/// other model as it is. [`plan`] ranks each of its candidates under this model of its block
/// count; a schedule generated by name for a payload runs under it too.
///
/// # Errors
/// [`ScheduleError::NoBlocks`] (as a [`PlanError`]) if `blocks` is 0.
///
/// # Examples
///
/// ```
/// use herald::{plan::block_model, LogP, Model, Ratio};
/// let logp = LogP::new(Ratio::integer(500), Ratio::integer(50), Ratio::integer(60), Ratio::new(1, 10)?)?;
/// // 1 MiB in 4 blocks: messages of 256 KiB.
/// match block_model(&Model::from(logp), 1 << 20, 4)? {
///     Model::LogP(l) => assert_eq!(l.bytes(), 1 << 18),
///     _ => unreachable!("a LogP model stays LogP"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn block_model(model: &Model, bytes: u64, blocks: u32) -> Result<Model, PlanError> {
    if blocks == 0 {
        return Err(ScheduleError::NoBlocks.into());
    }
    Ok(model_for(model, bytes, blocks)?.0)
}

/// The model a candidate was simulated under: `model` as given to [`plan`] with the candidate's
/// message (block) size — check [`schedule_of`]'s schedule under this one.
///
/// # Errors
/// [`PlanError`] for an invalid block size.
pub fn candidate_model(model: &Model, c: &Candidate) -> Result<Model, PlanError> {
    // the block size is ⌈bytes / blocks⌉, so this reproduces the planned message size
    let bytes = c.block_bytes.saturating_mul(u64::from(c.blocks));
    Ok(model_for(model, bytes, c.blocks)?.0)
}

/// The schedule of a planned candidate: `model` as given to [`plan`] (the candidate's block
/// size is applied), `n` ranks, `root`.
///
/// # Errors
/// [`PlanError`] if the candidate does not apply.
pub fn schedule_of(model: &Model, c: &Candidate, n: u32, root: u32) -> Result<Schedule, PlanError> {
    let mm = candidate_model(model, c)?;
    Ok(match (&c.leaders, &mm) {
        (Some(spec), Model::Hier(h)) => leaders(h, n, c.blocks, root, spec)?,
        _ => generate(&Request::broadcast(c.algorithm, n, c.blocks, root), &mm)?,
    })
}

/// Plans a broadcast (`req`: its ranks, root and payload bytes) on `hierarchy` (ranks in compact
/// order) with the costs of `profile` (levels it lacks assumed as [`Assumptions::default`]
/// says), and returns the winner's schedule with its candidate: the runtime's default choice.
///
/// # Errors
/// [`PlanError::Profile`] if the profile cannot make a model of `hierarchy`; [`PlanError`] for
/// a bad problem.
pub fn plan_profile(
    profile: &Profile,
    hierarchy: &Hierarchy,
    req: &PlanRequest,
) -> Result<(Schedule, Candidate), PlanError> {
    let cpus = hierarchy.os_indices().to_vec();
    let hier = Hier::from_profile(profile, hierarchy.clone(), &cpus, &Assumptions::default())?;
    let model = Model::from(hier);
    let best = plan(&model, req)?.best().cloned().ok_or(PlanError::Empty)?;
    Ok((schedule_of(&model, &best, req.n, req.root)?, best))
}

/// The runtime's default choice: the winner of [`plan_for_runtime`] (candidates generated under
/// the hierarchical model of `profile` when every rank has a PU of its own, else under
/// [`oversubscribed_model`], and ranked by herald's runtime cost model), with its schedule. Its
/// transport is in [`plan_for_runtime`]'s answer.
///
/// # Errors
/// As [`plan_profile`].
pub fn plan_runtime(
    profile: &Profile,
    hierarchy: &Hierarchy,
    req: &PlanRequest,
) -> Result<(Schedule, Candidate), PlanError> {
    let p = plan_for_runtime(profile, hierarchy, req)?;
    let best = p.ranked.into_iter().next().ok_or(PlanError::Empty)?;
    Ok((best.schedule, best.candidate))
}

/// The model [`plan_runtime`] plans under: the hierarchical model of `profile` on `hierarchy`
/// when every rank has a PU of its own, else [`oversubscribed_model`].
pub(crate) fn runtime_model(
    profile: &Profile,
    hierarchy: &Hierarchy,
    n: u32,
) -> Result<Model, PlanError> {
    if n as usize <= hierarchy.pu_count() {
        let cpus = hierarchy.os_indices().to_vec();
        let hier = Hier::from_profile(profile, hierarchy.clone(), &cpus, &Assumptions::default())?;
        return Ok(Model::from(hier));
    }
    oversubscribed_model(profile, hierarchy, n)
}

/// The flat LogGP model of `n` ranks sharing the PUs of `hierarchy` (`n` larger than the PU
/// count): the coarsest measured level's `L, o, g, G`, with `L` raised by the time a message
/// waits for its receiver to be scheduled, `(k − 1)/2` one-way handoffs between threads of
/// one CPU ([`Profile::switch_ns`]) for `k = ⌈n / PUs⌉` threads per PU (on average the receiver
/// is half a round of the other threads away). A waiting rank yields its CPU, so the sender's
/// own overhead is unchanged. Without `switch_ns` (an older profile) the latency is unchanged.
///
/// Where the level's transport cuts messages at an eager limit ([`LevelProfile::pieces`]: an
/// MPI library, measured by `herald-mpi calibrate`), a message longer than it cuts goes by a
/// single-copy rendezvous, whose receiver copies the bytes:
/// [`LongMessages::ReceiverCopies`](crate::model::LongMessages::ReceiverCopies) above
/// `upto_bytes` (ranks that share PUs share one host; docs/mpi.md measures it), at the
/// level's second `G` where the calibration measured one
/// ([`MessagePieces::whole_big_g_ns_per_byte`](crate::model::MessagePieces::whole_big_g_ns_per_byte)).
///
/// [`LevelProfile::pieces`]: crate::model::LevelProfile::pieces
///
/// # Errors
/// [`PlanError::Profile`] if the profile measured no level.
///
/// # Examples
///
/// ```
/// # use herald::{*, plan::{oversubscribed_model, schedule_of}};
/// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
/// let profile = Profile::from_json_forced(&text)?;
/// let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
/// let m = oversubscribed_model(&profile, &h, 64)?;
/// // 32 threads per core: a message waits for its receiver far longer than it takes to send,
/// // so the planner's winner is a flat tree: the root sends to all 63 others.
/// let p = plan(&m, &PlanRequest { n: 64, root: 0, bytes: 64, blocks: None })?;
/// let s = schedule_of(&m, p.best().unwrap(), 64, 0)?;
/// assert_eq!(s.sends_of(0).count(), 63);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn oversubscribed_model(
    profile: &Profile,
    hierarchy: &Hierarchy,
    n: u32,
) -> Result<Model, PlanError> {
    let level = profile
        .measured_levels()
        .next()
        .ok_or_else(|| ProfileError::NoLevel("any measured level".into()))?;
    let base = level.logp(crate::model::Pick::Dominant)?;
    let k = u64::from(n).div_ceil(hierarchy.pu_count().max(1) as u64);
    let switch = profile
        .switch_ns
        .as_ref()
        .map_or(0.0, |d| d.pick(crate::model::Pick::Dominant));
    let delay = ((k.saturating_sub(1)) as f64 / 2.0 * switch).round() as u64;
    let l = base.l().to_f64().round() as u64 + delay;
    let mut model = crate::model::LogP::new(Ratio::integer(l), base.o(), base.g(), base.big_g())
        .map_err(ProfileError::from)?;
    if let Some(p) = &level.pieces {
        let above = p.upto_bytes;
        model = model.with_long_messages(crate::model::LongMessages::ReceiverCopies { above });
    }
    if let Some((above, big_g)) = base.whole_gap() {
        model = model.with_whole_gap(above, big_g);
    }
    Ok(Model::from(model))
}
