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

use crate::model::{CostModel, Model};
use crate::schedule::{generate, Algorithm, Request, ScheduleError};
use crate::sim::{check_with, CheckError, CheckOptions};
use crate::time::Ratio;
use rayon::prelude::*;

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
        match (self.ranked.first(), self.ranked.get(1)) {
            (Some(a), Some(b)) => format!(
                "{} with {} block(s) finishes at {}, the runner-up {} with {} block(s) at {}; lower bound {}",
                a.algorithm, a.blocks, a.makespan, b.algorithm, b.blocks, b.makespan, a.lower_bound,
            ),
            (Some(a), None) => format!("{} is the only legal candidate", a.algorithm),
            _ => "no candidate applies".into(),
        }
    }
}

/// Errors planning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
}

/// The bounded candidate set for `model` with `m` blocks (see the module docs).
pub fn candidates(model: &Model, n: u32, m: u32) -> Result<Vec<Algorithm>, PlanError> {
    let timing = model
        .timing(model.time_base().map_err(ScheduleError::from)?)
        .map_err(ScheduleError::from)?;
    // λ in units of the send step: the degree around which wide trees pay off (DTREE's ⌈λ⌉ + 1).
    let lambda = timing
        .latency
        .div_ceil(timing.send_step().max(1))
        .min(u64::from(n.max(2))) as u32;
    let mut out = vec![
        Algorithm::Optimal,
        Algorithm::Binomial,
        Algorithm::Binary,
        Algorithm::Chain,
        Algorithm::Star,
        Algorithm::ScatterAllgather,
    ];
    for r in [lambda, lambda + 1, lambda + 2, 2 * lambda + 1] {
        if r >= 3 {
            out.push(Algorithm::Knomial { radix: r });
        }
    }
    for d in [2, lambda + 1, 2 * lambda + 1] {
        out.push(Algorithm::Dtree { d });
    }
    if m > 1 {
        out.extend([Algorithm::Pipeline, Algorithm::Repeat, Algorithm::Pack]);
        if u64::from(n) * u64::from(n) * u64::from(m) <= 1 << 22 {
            out.push(Algorithm::Greedy);
        }
    }
    out.push(Algorithm::Fibonacci { d: None });
    let mut seen = std::collections::HashSet::new();
    out.retain(|a| seen.insert(*a));
    Ok(out)
}

/// Block counts to try for a payload of `bytes` under `model`.
fn block_counts(model: &Model, req: &PlanRequest) -> Vec<u32> {
    match model {
        Model::LogP(_) => {
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
    let mut jobs = vec![];
    for m in block_counts(model, req) {
        let (mm, block_bytes) = model_for(model, req.bytes, m)?;
        for a in candidates(&mm, req.n, m)? {
            jobs.push((a, m, block_bytes, mm.clone()));
        }
    }
    let results: Vec<Result<Candidate, (String, String)>> = jobs
        .par_iter()
        .map(|(a, m, block_bytes, mm)| {
            let name = format!("{a} m={m}");
            let s = generate(&Request::broadcast(*a, req.n, *m, req.root), mm)
                .map_err(|e| (name.clone(), e.to_string()))?;
            let r = check_with(&s, mm, CheckOptions::default())
                .map_err(|e| (name.clone(), e.to_string()))?;
            if !r.legal() {
                return Err((name, format!("illegal: {:?}", r.violations().first())));
            }
            let makespan = r.base().ratio(r.makespan());
            let lower_bound = r.base().ratio(r.lower_bound().unwrap_or(0));
            Ok(Candidate {
                algorithm: *a,
                blocks: *m,
                block_bytes: *block_bytes,
                makespan,
                lower_bound,
                sends: s.len(),
            })
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
    ranked.sort_by(|a, b| {
        (a.makespan, a.algorithm.to_string(), a.blocks).cmp(&(
            b.makespan,
            b.algorithm.to_string(),
            b.blocks,
        ))
    });
    if ranked.is_empty() {
        return Err(PlanError::Empty);
    }
    Ok(Plan { ranked, rejected })
}
