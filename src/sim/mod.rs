//! Checking and timing schedules under a model. Never generates, never runs threads.
//!
//! * [`check`] derives every busy interval, arrival and gap from the model's rules
//!   ([`Timing`](crate::model::Timing)) and the send start times alone, tracks what every processor
//!   holds, applies the collective's finishing rule, and returns a [`Report`]: legal or every
//!   violation, the exact makespan, the lower bound and the gap.
//! * [`replay`] re-times a schedule from each processor's send order alone, as early as the rules
//!   allow — what the runtime does when it executes the compiled per-processor programs.
//! * [`run_goal`] executes a GOAL program (LogGOPSim's format) under a model's rules, and
//!   [`check_goal`] checks the sends it makes under herald's.

mod bounds;
mod check;
mod fat_tree;
mod goal;
mod optimum;
mod runtime;
mod runtime_shared;
mod values;

pub use bounds::lower_bound;
pub use check::{check, check_with, CheckOptions};
pub use fat_tree::evaluate as evaluate_fat_tree;
pub use goal::{
    check_goal, goal_collective, goal_message_bytes, run_goal, GoalCheck, GoalRun, GoalRunError,
};
pub use optimum::{optimum, Optimum, OptimumError, OPTIMUM_MAX_M, OPTIMUM_MAX_N};
pub use runtime::{postable, predict_runtime, PredictError, RuntimePrediction, RING_LINES};
pub(crate) use runtime::{program_of, RankSends};
pub use values::{evaluate, Evaluation, Operands, Span, ValueError};

use crate::model::{CostModel, ModelError};
use crate::schedule::{place, Collective, Orders, Schedule, ScheduleError, Transfer};
use crate::time::{Ticks, TimeBase, TimeError};
use std::fmt;

/// The violations a checker has found: the first [`Report::MAX_LISTED`] listed, all counted.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Listed violations.
    pub(crate) listed: Vec<Violation>,
    /// All violations.
    pub(crate) count: u64,
}

impl Tally {
    /// Records a violation.
    pub(crate) fn flag(
        &mut self,
        rule: Rule,
        at: Ticks,
        processor: u32,
        send: Option<Transfer>,
        detail: String,
    ) {
        self.count += 1;
        if self.listed.len() < Report::MAX_LISTED {
            self.listed.push(Violation {
                rule,
                at,
                processor,
                send,
                detail,
            });
        }
    }
}

/// Errors that prevent a check (as opposed to violations, which a check reports).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// Model parameters.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Exact time (overflow, tick base).
    #[error(transparent)]
    Time(#[from] TimeError),
    /// The schedule is too large for this kind of check.
    #[error("schedule too large to check: {0}")]
    TooLarge(String),
    /// The check cannot apply the rules asked for to this model or collective.
    #[error("cannot check: {0}")]
    Unsupported(String),
}

/// A rule of a model or collective that a schedule can break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// A processor sends something before it holds it.
    Causality,
    /// Two sends of one processor overlap in time.
    SendOverlap,
    /// Two consecutive sends of one processor are closer than the gap.
    SendGap,
    /// Two receives of one processor overlap in time.
    RecvOverlap,
    /// Two consecutive receives of one processor are closer than the gap.
    RecvGap,
    /// A send overhead overlaps a receive overhead on one CPU (LogP).
    CpuOverlap,
    /// More messages in transit from one processor than the capacity.
    CapacityOut,
    /// More messages in transit to one processor than the capacity.
    CapacityIn,
    /// A receiver that is not a processor.
    BadReceiver,
    /// A processor sends to itself.
    SelfSend,
    /// A payload (block, item) that the collective does not have.
    BadPayload,
    /// A processor does not end with what the collective requires.
    Incomplete,
    /// A contribution reaches a processor that already holds it (combining collectives).
    DoubleCount,
    /// A processor ends with contributions it must not have (prefix).
    ExtraContribution,
    /// More simultaneous sends, or receives, on one processor than it has ports (k-port).
    PortLimit,
    /// Two simultaneous messages between the same two processors (k-port: distinct partners).
    SamePartner,
    /// More messages on a fat-tree channel in one step than its capacity `w(n)`.
    ChannelCapacity,
}

impl Rule {
    /// The rule's name as printed and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Causality => "causality",
            Rule::SendOverlap => "send-overlap",
            Rule::SendGap => "send-gap",
            Rule::RecvOverlap => "recv-overlap",
            Rule::RecvGap => "recv-gap",
            Rule::CpuOverlap => "cpu-overlap",
            Rule::CapacityOut => "capacity-out",
            Rule::CapacityIn => "capacity-in",
            Rule::BadReceiver => "bad-receiver",
            Rule::SelfSend => "self-send",
            Rule::BadPayload => "bad-payload",
            Rule::Incomplete => "incomplete",
            Rule::DoubleCount => "double-count",
            Rule::ExtraContribution => "extra-contribution",
            Rule::PortLimit => "port-limit",
            Rule::SamePartner => "same-partner",
            Rule::ChannelCapacity => "channel-capacity",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule.
    pub rule: Rule,
    /// When (ticks of the report's base).
    pub at: Ticks,
    /// The processor where it happens.
    pub processor: u32,
    /// The send at fault, if any (time in the report's base).
    pub send: Option<Transfer>,
    /// What it collides with or lacks, in words.
    pub detail: String,
}

/// The result of a check.
#[derive(Debug, Clone)]
pub struct Report {
    /// Tick base of every time in the report.
    pub(crate) base: TimeBase,
    /// The collective checked.
    pub(crate) collective: Collective,
    /// Processor count.
    pub(crate) n: u32,
    /// Number of sends.
    pub(crate) sends: usize,
    /// When the last processor finishes (over the processors that do).
    pub(crate) makespan: Ticks,
    /// When the last send or receive ends.
    pub(crate) busy_until: Ticks,
    /// Whether arrivals were queued ([`CheckOptions::queue_arrivals`]).
    pub(crate) queued: bool,
    /// Per-processor finishing time (`Ticks::MAX`: never), if requested.
    pub(crate) completion: Option<Vec<Ticks>>,
    /// The model's lower bound for this collective, where one is known.
    pub(crate) lower_bound: Option<Ticks>,
    /// The first violations found (at most [`Report::MAX_LISTED`]).
    pub(crate) violations: Vec<Violation>,
    /// How many violations there are in all.
    pub(crate) violation_count: u64,
}

impl Report {
    /// At most this many violations are listed; all are counted.
    pub const MAX_LISTED: usize = 1000;

    /// Whether the schedule breaks no rule and completes the collective.
    pub fn legal(&self) -> bool {
        self.violation_count == 0
    }

    /// The tick base of every time in the report.
    pub fn base(&self) -> TimeBase {
        self.base
    }

    /// The collective checked.
    pub fn collective(&self) -> Collective {
        self.collective
    }

    /// Processor count.
    pub fn n(&self) -> u32 {
        self.n
    }

    /// Number of sends.
    pub fn sends(&self) -> usize {
        self.sends
    }

    /// The makespan: when the last processor holds everything it must (ticks) — for a
    /// broadcast, the last *first* arrival of a block. A message nobody needs (a block its
    /// receiver already holds) does not count here; see [`busy_until`](Self::busy_until).
    pub fn makespan(&self) -> Ticks {
        self.makespan
    }

    /// When the last send or receive of the schedule ends, needed or not (ticks): every message
    /// charged, as LogGOPSim reports a run (the latest time a CPU is busy). At least the
    /// makespan for a legal broadcast; equal when no message is redundant, since every send
    /// ends before its receive does.
    pub fn busy_until(&self) -> Ticks {
        self.busy_until
    }

    /// Whether the check queued arrivals ([`CheckOptions::queue_arrivals`]).
    pub fn queued_arrivals(&self) -> bool {
        self.queued
    }

    /// The earliest violation listed (ties: the lowest processor), if any.
    pub fn first_violation(&self) -> Option<&Violation> {
        self.violations.iter().min_by_key(|v| (v.at, v.processor))
    }

    /// Per-processor completion times (`Ticks::MAX` for a processor that never completes), when
    /// the check was asked for them ([`CheckOptions::completion`]).
    pub fn completion(&self) -> Option<&[Ticks]> {
        self.completion.as_deref()
    }

    /// The model's lower bound for this problem, where one is known.
    pub fn lower_bound(&self) -> Option<Ticks> {
        self.lower_bound
    }

    /// `makespan − lower bound`, when both are known and the schedule is legal.
    pub fn gap(&self) -> Option<Ticks> {
        let lb = self.lower_bound?;
        self.legal().then(|| self.makespan.saturating_sub(lb))
    }

    /// The violations found (the first [`Report::MAX_LISTED`]).
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// How many violations in all.
    pub fn violation_count(&self) -> u64 {
        self.violation_count
    }

    /// Whether some violation breaks `rule`.
    pub fn breaks(&self, rule: Rule) -> bool {
        self.violations.iter().any(|v| v.rule == rule)
    }

    /// `t` as an exact fraction of model time units.
    pub fn format(&self, t: Ticks) -> String {
        self.base.format(t)
    }
}

/// Re-times `schedule` from its per-processor send orders, each send as early as the model's
/// rules allow (see [`place`]). The result is in the model's tick base.
///
/// # Errors
/// [`ScheduleError::Deadlock`] if a processor's order asks for a block it never receives;
/// model and time errors.
///
/// # Examples
///
/// ```
/// use herald::{Collective, Model, Postal, Schedule, sim::replay, time::TimeBase};
/// let model = Model::from(Postal::new("2".parse()?)?);
/// // A lazy chain: 1 forwards at time 7 although it holds the block from time 2.
/// let mut b = Schedule::builder(3, Collective::Broadcast { root: 0, blocks: 1 }, TimeBase::UNIT)?;
/// b.push(0, 0, 1, 0);
/// b.push(7, 1, 2, 0);
/// let fast = replay(&b.build()?, &model)?;
/// assert_eq!(fast.sends_of(1).next().unwrap().at, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn replay(schedule: &Schedule, model: &dyn CostModel) -> Result<Schedule, ScheduleError> {
    let timing = model.timing(model.time_base()?)?;
    place(
        schedule.n(),
        schedule.collective(),
        &Orders::of(schedule),
        &timing,
    )
}

/// Most processors a combining collective is checked for (its contribution sets are `n²` bits).
const MAX_COMBINING: usize = 4096;

/// Each processor's contribution set at the start of a combining collective: `n` bit sets of
/// `words` words (returned), processor `p` holding its own contribution `p` alone.
///
/// # Errors
/// [`CheckError::TooLarge`] above [`MAX_COMBINING`] processors.
/// The lowest rank in both contribution sets (one bit a rank, 64 ranks a word), if any.
fn first_common(set: &[u64], bits: &[u64]) -> Option<u32> {
    set.iter()
        .zip(bits)
        .enumerate()
        .find_map(|(w, (x, y))| (x & y != 0).then(|| (w * 64) as u32 + (x & y).trailing_zeros()))
}

/// Adds the contributions `bits` to `set`; returns the lowest rank that was in both (counted
/// twice), if any.
fn merge_contributions(set: &mut [u64], bits: &[u64]) -> Option<u32> {
    let dup = first_common(set, bits);
    for (x, y) in set.iter_mut().zip(bits) {
        *x |= y;
    }
    dup
}

fn own_contributions(n: usize) -> Result<(usize, Vec<u64>), CheckError> {
    if n > MAX_COMBINING {
        return Err(CheckError::TooLarge(format!(
            "combining collectives are checked for n ≤ {MAX_COMBINING}, not {n}"
        )));
    }
    let words = n.div_ceil(64);
    let mut sets = vec![0u64; n * words];
    for p in 0..n {
        sets[p * words + p / 64] |= 1 << (p % 64);
    }
    Ok((words, sets))
}
