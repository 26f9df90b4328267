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
//! ## The API
//!
//! The modules are the pipeline, lowest layer first; a module uses only the ones before it:
//!
//! | module | what it holds |
//! |---|---|
//! | [`time`] | exact time: rationals, integer ticks, the tick base |
//! | [`stats`] | one quantile rule (nearest rank) for every sample summary |
//! | [`model`] | cost models and their timing rules; hierarchy and profile data |
//! | [`schedule`] | the [`Schedule`] type and every generator ([`generate`], [`schedule::registry`]) |
//! | [`sim`] | the checker and evaluators: legality, makespan, lower bounds, values, GOAL |
//! | [`plan`](mod@plan) | the planner: the fastest candidate by simulated time |
//! | [`topology`] | hwloc, sysfs, synthetic and XML topologies; rank maps |
//! | [`runtime`] | pinned threads, channels, compiled programs, the collective API |
//! | [`calibrate`](mod@calibrate) | measuring the machine's parameters into a [`Profile`] |
//!
//! The root re-exports only the names of the tutorial above and the everyday entry points; every
//! other name lives in its module. The layers, the dependency rule between them, where `unsafe`
//! lives and how to add an algorithm, a model or a collective are in `docs/architecture.md`.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, missing_debug_implementations)]

pub mod calibrate;
pub mod model;
pub mod plan;
pub mod runtime;
pub mod schedule;
pub mod sim;
pub mod stats;
pub mod time;
pub mod topology;

pub use calibrate::calibrate;
pub use model::{CostModel, Hierarchy, LogP, Model, Postal, Profile};
pub use plan::{plan, Plan, PlanRequest};
pub use runtime::{Comm, CommOptions, CommRank, Network, Program, Signal, Team};
pub use schedule::{generate, Algorithm, Collective, Request, Schedule};
pub use sim::{check, Report};
pub use time::{Ratio, Ticks};
pub use topology::TopologySource;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
