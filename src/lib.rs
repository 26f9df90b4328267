//! # herald — broadcast on shared-memory multicores, from the theory
//!
//! herald measures a machine, models it exactly (postal λ, LogP `L, o, g`, …), generates the
//! schedules the papers prove optimal, checks every schedule with a simulator that knows each
//! model's rules, and runs them for real on pinned threads passing 64-byte cache lines.
//!
//! ## Model → schedule → check …
//!
//! ```
//! use herald::{check, generate, Algorithm, Model, Postal, Request};
//!
//! // Bar-Noy & Kipnis, Fig. 1: 14 processors, latency λ = 5/2.
//! let model = Model::from(Postal::new("5/2".parse()?)?);
//! let schedule = generate(&Request::broadcast(Algorithm::Optimal, 14, 1, 0), &model)?;
//! let report = check(&schedule, &model)?;
//! assert!(report.legal());
//! assert_eq!(report.format(report.makespan()), "15/2");
//! assert_eq!(report.lower_bound().map(|t| report.format(t)).as_deref(), Some("15/2"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## … → run
//!
//! The same schedule moves real bytes between pinned threads: it compiles into one program per
//! rank, with a ring of 64-byte lines on each edge the schedule uses.
//!
//! ```
//! use herald::{generate, Algorithm, Model, Network, Postal, Program, Request, Team};
//!
//! let model = Model::from(Postal::new("5/2".parse()?)?);
//! let schedule = generate(&Request::broadcast(Algorithm::Optimal, 14, 1, 0), &model)?;
//! let mut team = Team::new(14)?; // more threads than cores is fine
//! let mut net = Network::new(Program::compile(&schedule)?, 16);
//! let mut buffers = vec![vec![0u8; 1000]; 14];
//! buffers[0].fill(7);
//! net.broadcast(&mut team, &mut buffers)?;
//! assert!(buffers.iter().all(|b| b.iter().all(|&x| x == 7)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Layers (lowest first; a module uses only lower ones): `time` → `model` → `schedule` → `sim`
//! → `topology` → `runtime`. See `DESIGN.md` for the architecture.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, missing_debug_implementations)]

mod calibrate;
mod model;
mod plan;
mod runtime;
mod schedule;
mod sim;
mod time;
mod topology;

pub use calibrate::{
    calibrate, capacity_from_curve, distribution, find_modes, fit_prtt, utc_now, CalibrateError,
    CalibrateOptions, FitError, LogGpFit, Progress, PrttPoint,
};
pub use model::{
    default_profile_path, host_name, load_profile, save_profile, Capacity, CostModel, Distribution,
    Hierarchy, HierarchyError, Level, LevelKind, LevelProfile, LogP, LongMessages, Mode, Model,
    ModelError, Node, OnePort, Pick, Postal, Problem, Profile, ProfileError, Timing, TopologyLevel,
    TopologySummary, UniversalTree, WholeParams, MAX_PUS, PROFILE_SCHEMA,
};
pub use model::{Assumptions, Hier, HierLevel, LevelCost, LevelSource};
pub use model::{FatTree, FatTreeCapacity, KPort};
pub use plan::{
    best_stage_tree, candidate_model, candidates, hier_candidates, oversubscribed_model, plan,
    plan_profile, plan_runtime, schedule_of, Candidate, Plan, PlanError, PlanRequest,
};
pub use runtime::*;
pub use schedule::{
    default_leaders, earliest_arrival, leaders, split_depths, stage_members, Leaders,
};
pub use schedule::{
    generate, place, Algorithm, Collective, Goal, GoalDep, GoalError, GoalOp, GoalRank, Orders,
    Request, Schedule, ScheduleBuilder, ScheduleError, ScheduleJsonError, Send, Summation,
};
pub use sim::evaluate_fat_tree;
pub use sim::{
    check, check_goal, check_with, evaluate, goal_collective, goal_message_bytes, lower_bound,
    replay, run_goal, CheckError, CheckOptions, Evaluation, GoalCheck, GoalRun, GoalRunError,
    Operands, Report, Rule, Span, ValueError, Violation,
};
pub use sim::{optimum, Optimum, OptimumError, OPTIMUM_MAX_M, OPTIMUM_MAX_N};
pub use time::{Ratio, Ticks, TimeBase, TimeError};
pub use topology::*;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
