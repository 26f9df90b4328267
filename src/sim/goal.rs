//! Running a GOAL program under a model's rules, and checking what it does.
//!
//! A GOAL program has no times, only operations and dependencies; [`run_goal`] executes it the
//! way LogGOPSim does, with the model's [`Timing`]:
//!
//! * an operation is *ready* when everything it `requires` has ended and everything it
//!   `irequires` has started;
//! * a ready `send` starts as soon as the CPU is free (shared CPU) and the previous send is one
//!   send step back; it occupies the CPU for `send_busy` and ends then (eagerly: it does not wait
//!   for the receiver); its message reaches the receiver `latency − recv_busy` after the start;
//! * an arriving message is processed as soon as the receiver's CPU is free and the previous
//!   receive is one receive step back, occupying the CPU for `recv_busy`, whether or not its
//!   `recv` is posted yet (LogGOPSim's unexpected queue); a `recv` ends when it is posted and its
//!   message (first in arrival order with a matching source and tag) is processed;
//! * a `calc T` occupies the CPU for `T` ticks of the model's tick base;
//! * without a shared CPU (postal, 1-port) sends and receives use their own ports and only
//!   `calc` occupies the CPU: a send waits for it to be free, a receive delivers its message at
//!   its end only when it is — LogGOPSim with `o = 0`, where a message is processed the moment it
//!   has arrived;
//! * ties go to what became ready first, then to sends before receives before calcs.
//!
//! The sends with the times they got form a herald [`Schedule`]; [`check_goal`] checks it under
//! herald's rules (strict arrivals by default: a message that finds its receiver busy is a
//! violation, although the run above delayed it) and reports the first violation.

use super::{check_with, CheckError, CheckOptions, Report, Violation};
use crate::model::{CostModel, Model, ModelError, Timing};
use crate::schedule::{Collective, Goal, GoalOp, Schedule, ScheduleError};
use crate::time::{self, Ticks, TimeError};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Errors running or checking a GOAL program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GoalRunError {
    /// Operations that never run: a receive nobody sends to, or a cycle of dependencies.
    #[error("GOAL program does not finish: rank {rank}'s operation {op} ({what}) never runs")]
    Stuck {
        /// The rank.
        rank: u32,
        /// The operation's index in its rank (label `l{op+1}` in herald's exports).
        op: u32,
        /// The operation in words.
        what: String,
    },
    /// A message no receive ever matches.
    #[error("GOAL program does not finish: the message from {from} to {to} with tag {tag} is never received")]
    Unreceived {
        /// Sender.
        from: u32,
        /// Receiver.
        to: u32,
        /// Tag.
        tag: u32,
    },
    /// Something herald's models cannot express.
    #[error("GOAL program: {0}")]
    Unsupported(String),
    /// Model parameters.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Exact time.
    #[error(transparent)]
    Time(#[from] TimeError),
    /// The schedule the run produced.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// The check.
    #[error(transparent)]
    Check(#[from] CheckError),
}

/// A GOAL program's run: its sends as a schedule, and when each rank finishes.
#[derive(Debug, Clone)]
pub struct GoalRun {
    /// The sends with their start times, in the model's tick base.
    pub schedule: Schedule,
    /// When each rank's CPU (or port) is last busy — what LogGOPSim reports per host.
    pub finish: Vec<Ticks>,
}

impl GoalRun {
    /// The latest finish over all ranks.
    pub fn busy_until(&self) -> Ticks {
        self.finish.iter().copied().max().unwrap_or(0)
    }
}

/// A GOAL program's run and its check.
#[derive(Debug, Clone)]
pub struct GoalCheck {
    /// The run.
    pub run: GoalRun,
    /// The check of its sends under the model's rules.
    pub report: Report,
}

impl GoalCheck {
    /// The earliest violation listed (ties: the lowest rank), if any.
    pub fn first_violation(&self) -> Option<&Violation> {
        self.report.first_violation()
    }
}

/// The collective a GOAL program performs, as herald reads it when not told: a broadcast from
/// the only rank that receives nothing, of `max tag + 1` blocks (tags are block numbers, as in
/// herald's exports; other tools' single-message broadcasts use tag 0).
///
/// # Errors
/// [`GoalRunError::Unsupported`] if no rank, or more than one, receives nothing.
///
/// # Examples
///
/// ```
/// use herald::{Collective, schedule::Goal, sim::goal_collective};
/// let g = Goal::parse("num_ranks 2\nrank 1 {\nl1: send 1b to 0 tag 2\n}\n\
///                      rank 0 {\nl1: recv 1b from 1 tag 2\n}\n")?;
/// assert_eq!(goal_collective(&g)?, Collective::Broadcast { root: 1, blocks: 3 });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn goal_collective(goal: &Goal) -> Result<Collective, GoalRunError> {
    let silent: Vec<u32> = (0..goal.ranks.len() as u32)
        .filter(|&r| {
            !goal.ranks[r as usize]
                .ops
                .iter()
                .any(|op| matches!(op, GoalOp::Recv { .. }))
        })
        .collect();
    let root = match silent.as_slice() {
        [r] => *r,
        [] if goal.ranks.len() == 1 => 0,
        _ => {
            return Err(GoalRunError::Unsupported(format!(
                "cannot tell the broadcast's root: {} ranks receive nothing (name the collective)",
                silent.len()
            )))
        }
    };
    let max_tag = goal
        .ranks
        .iter()
        .flat_map(|r| &r.ops)
        .filter_map(|op| match op {
            GoalOp::Send { tag, .. } => Some(*tag),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    Ok(Collective::Broadcast {
        root,
        blocks: max_tag.checked_add(1).ok_or_else(|| {
            GoalRunError::Unsupported("tag 4294967295 cannot be a block number".into())
        })?,
    })
}

/// The one message size of a GOAL program (`None`: no messages).
///
/// # Errors
/// [`GoalRunError::Unsupported`] for messages of different sizes (a herald model has one).
///
/// # Examples
///
/// ```
/// use herald::{schedule::Goal, sim::goal_message_bytes};
/// let g = Goal::parse("num_ranks 2\nrank 0 {\nsend 64b to 1\n}\nrank 1 {\nrecv 64b from 0\n}\n")?;
/// assert_eq!(goal_message_bytes(&g)?, Some(64));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn goal_message_bytes(goal: &Goal) -> Result<Option<u64>, GoalRunError> {
    let mut size = None;
    for op in goal.ranks.iter().flat_map(|r| &r.ops) {
        let b = match *op {
            GoalOp::Send { bytes, .. } | GoalOp::Recv { bytes, .. } => bytes,
            GoalOp::Calc { .. } => continue,
        };
        match size {
            None => size = Some(b),
            Some(s) if s != b => {
                return Err(GoalRunError::Unsupported(format!(
                    "messages of {s} and {b} bytes: herald's models have one message size"
                )))
            }
            _ => {}
        }
    }
    Ok(size)
}

/// Runs `goal` under `model`'s rules (module docs); the sends become a schedule of `collective`
/// (payload = tag for broadcasts and all-to-all, the partial value for combining collectives).
///
/// # Errors
/// [`GoalRunError`] if the program does not finish, the model has per-pair or multi-port rules,
/// or times overflow.
///
/// # Examples
///
/// ```
/// use herald::{Collective, LogP, Ratio, schedule::Goal, sim::run_goal};
/// let logp = LogP::new(Ratio::integer(6), Ratio::integer(2), Ratio::integer(4), Ratio::ZERO)?;
/// let goal = Goal::parse("num_ranks 2\nrank 0 {\nl1: send 1b to 1 tag 0\n}\n\
///                         rank 1 {\nl1: recv 1b from 0 tag 0\n}\n")?;
/// let run = run_goal(&goal, &logp, Collective::Broadcast { root: 0, blocks: 1 })?;
/// assert_eq!(run.finish, [2, 10]); // o; L + 2o
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run_goal(
    goal: &Goal,
    model: &dyn CostModel,
    collective: Collective,
) -> Result<GoalRun, GoalRunError> {
    if model.fat_tree().is_some() || model.hierarchical().is_some() {
        return Err(GoalRunError::Unsupported(
            "GOAL runs under a model with one timing for every pair (postal, logp, oneport)".into(),
        ));
    }
    let timing = model.timing(model.time_base()?)?;
    if timing.ports > 1 {
        return Err(GoalRunError::Unsupported(
            "GOAL has one send and one receive at a time per rank; k-port does not map".into(),
        ));
    }
    let n = u32::try_from(goal.ranks.len())
        .map_err(|_| GoalRunError::Unsupported("too many ranks".into()))?;
    let mut sim = Sim::new(goal, timing)?;
    sim.run()?;
    sim.finish_checks()?;
    let mut b = Schedule::builder(n, collective, timing.base)?;
    b.reserve(sim.sends.len());
    let combining = collective.is_combining();
    for &(at, from, to, tag) in &sim.sends {
        b.push(at, from, to, if combining { 0 } else { tag });
    }
    Ok(GoalRun {
        schedule: b.build()?,
        finish: sim.procs.iter().map(|p| p.finish).collect(),
    })
}

/// Runs `goal` under `model` and checks its sends under the model's rules (module docs).
/// A LogP model takes the program's message size; the collective is [`goal_collective`]'s if
/// not given.
///
/// # Errors
/// As [`run_goal`], [`goal_message_bytes`] and [`goal_collective`]; check errors.
///
/// # Examples
///
/// ```
/// use herald::{LogP, Model, Ratio, schedule::Goal, sim::{check_goal, CheckOptions, Rule}};
/// let model = Model::from(LogP::new(Ratio::integer(0), Ratio::integer(2), Ratio::integer(3),
///     Ratio::ZERO)?);
/// // Rank 1 forwards block 0 while block 1 is arriving: LogGOPSim queues it, herald objects.
/// let goal = Goal::parse("num_ranks 3
/// rank 0 {\nl1: send 1b to 1 tag 0\nl2: send 1b to 1 tag 1\nl2 requires l1\n}
/// rank 1 {\nl1: recv 1b from 0 tag 0\nl2: send 1b to 2 tag 0\nl3: recv 1b from 0 tag 1
/// l4: send 1b to 2 tag 1\nl2 requires l1\nl3 requires l2\nl4 requires l3\n}
/// rank 2 {\nl1: recv 1b from 1 tag 0\nl2: recv 1b from 1 tag 1\nl2 requires l1\n}\n")?;
/// let c = check_goal(&goal, &model, None, CheckOptions::default())?;
/// assert_eq!(c.run.busy_until(), 12); // as LogGOPSim
/// assert_eq!(c.first_violation().map(|v| v.rule), Some(Rule::CpuOverlap));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check_goal(
    goal: &Goal,
    model: &Model,
    collective: Option<Collective>,
    options: CheckOptions,
) -> Result<GoalCheck, GoalRunError> {
    let model = match (model, goal_message_bytes(goal)?) {
        (Model::LogP(l), Some(bytes)) => Model::from(l.with_bytes(bytes)?),
        (m, _) => m.clone(),
    };
    let collective = match collective {
        Some(c) => c,
        None => goal_collective(goal)?,
    };
    let run = run_goal(goal, &model, collective)?;
    let report = check_with(&run.schedule, &model, options)?;
    Ok(GoalCheck { run, report })
}

/// Kinds of events, in tie order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// Operation `op` of rank `rank` is ready (sends sort first, then receives, then calcs).
    Op {
        /// 0 send, 1 recv, 2 calc.
        kind: u8,
        /// The rank.
        rank: u32,
        /// The operation index.
        op: u32,
    },
    /// Message `msg` (index into the sends) reaches its receiver.
    Msg {
        /// Index into `Sim::sends`.
        msg: u32,
    },
}

/// Per-rank state.
#[derive(Debug, Clone, Default)]
struct Proc {
    /// When the CPU is free (overheads with a shared CPU; calcs always).
    cpu_free: Ticks,
    /// Earliest start of the next send (gap and send-port rules).
    send_next: Ticks,
    /// Earliest start of the next receive (gap and receive-port rules).
    recv_next: Ticks,
    /// Last busy instant.
    finish: Ticks,
    /// Posted receives not yet matched: (op, source, tag).
    posted: Vec<(u32, Option<u32>, Option<u32>)>,
    /// Processed messages no receive matched yet: (source, tag, processing end).
    unexpected: VecDeque<(u32, u32, Ticks)>,
}

/// The run's working state.
struct Sim<'a> {
    goal: &'a Goal,
    timing: Timing,
    procs: Vec<Proc>,
    /// Per rank, per op: unmet dependencies, ready time, start and end (MAX: not yet).
    ops: Vec<Vec<OpState>>,
    /// Per rank, per op: the ops depending on it (`(dependent, start_only)`).
    dependents: Vec<Vec<Vec<(u32, bool)>>>,
    /// Events: (time, sequence, event).
    heap: BinaryHeap<Reverse<(Ticks, u64, Event)>>,
    /// Next sequence number.
    seq: u64,
    /// Sends so far: (start, from, to, tag).
    sends: Vec<(Ticks, u32, u32, u32)>,
}

/// One operation's progress.
#[derive(Debug, Clone, Copy)]
struct OpState {
    /// Dependencies not yet met.
    unmet: u32,
    /// The latest time a met dependency allows.
    ready: Ticks,
    /// Start (MAX: not started).
    start: Ticks,
    /// End (MAX: not ended).
    end: Ticks,
}

impl<'a> Sim<'a> {
    fn new(goal: &'a Goal, timing: Timing) -> Result<Sim<'a>, GoalRunError> {
        let mut ops = Vec::with_capacity(goal.ranks.len());
        let mut dependents = Vec::with_capacity(goal.ranks.len());
        for (r, rank) in goal.ranks.iter().enumerate() {
            let len = rank.ops.len();
            let mut state = vec![
                OpState {
                    unmet: 0,
                    ready: 0,
                    start: Ticks::MAX,
                    end: Ticks::MAX,
                };
                len
            ];
            let mut deps = vec![Vec::new(); len];
            for d in &rank.deps {
                if d.after as usize >= len || d.on as usize >= len {
                    return Err(GoalRunError::Unsupported(format!(
                        "rank {r}: a dependency names an operation that does not exist"
                    )));
                }
                state[d.after as usize].unmet += 1;
                deps[d.on as usize].push((d.after, d.start_only));
            }
            ops.push(state);
            dependents.push(deps);
        }
        let mut sim = Sim {
            goal,
            timing,
            procs: vec![Proc::default(); goal.ranks.len()],
            ops,
            dependents,
            heap: BinaryHeap::new(),
            seq: 0,
            sends: Vec::new(),
        };
        for r in 0..goal.ranks.len() as u32 {
            let free: Vec<u32> = (0..goal.ranks[r as usize].ops.len() as u32)
                .filter(|&i| sim.ops[r as usize][i as usize].unmet == 0)
                .collect();
            sim.release(r, &free);
        }
        Ok(sim)
    }

    /// Queues newly ready operations of `rank` (sends, then receives, then calcs).
    fn release(&mut self, rank: u32, ready: &[u32]) {
        let mut batch: Vec<Event> = ready
            .iter()
            .map(|&op| Event::Op {
                kind: match self.goal.ranks[rank as usize].ops[op as usize] {
                    GoalOp::Send { .. } => 0,
                    GoalOp::Recv { .. } => 1,
                    GoalOp::Calc { .. } => 2,
                },
                rank,
                op,
            })
            .collect();
        batch.sort();
        for e in batch {
            let Event::Op { op, .. } = e else { continue };
            let t = self.ops[rank as usize][op as usize].ready;
            self.heap.push(Reverse((t, self.seq, e)));
            self.seq += 1;
        }
    }

    /// Marks `op` of `rank` started at `t` (and ended at `end`, if known), releasing dependents.
    fn mark(&mut self, rank: u32, op: u32, start: Option<Ticks>, end: Option<Ticks>) {
        let r = rank as usize;
        if let Some(t) = start {
            self.ops[r][op as usize].start = t;
        }
        if let Some(t) = end {
            self.ops[r][op as usize].end = t;
        }
        let mut ready = Vec::new();
        for k in 0..self.dependents[r][op as usize].len() {
            let (after, start_only) = self.dependents[r][op as usize][k];
            let at = match (start_only, start, end) {
                (true, Some(t), _) | (false, _, Some(t)) => t,
                _ => continue,
            };
            let st = &mut self.ops[r][after as usize];
            st.unmet -= 1;
            st.ready = st.ready.max(at);
            if st.unmet == 0 {
                ready.push(after);
            }
        }
        self.release(rank, &ready);
    }

    fn run(&mut self) -> Result<(), GoalRunError> {
        let t = self.timing;
        while let Some(Reverse((now, seq, event))) = self.heap.pop() {
            match event {
                Event::Op { rank, op, .. } => {
                    let r = rank as usize;
                    match self.goal.ranks[r].ops[op as usize] {
                        GoalOp::Send { peer, tag, .. } => {
                            let p = &self.procs[r];
                            let earliest = now.max(p.cpu_free).max(p.send_next);
                            if earliest > now {
                                self.heap.push(Reverse((earliest, seq, event)));
                                continue;
                            }
                            let end = time::add(now, t.send_busy)?;
                            let p = &mut self.procs[r];
                            p.send_next = time::add(now, t.send_step())?;
                            p.finish = p.finish.max(end);
                            if t.shared_cpu {
                                p.cpu_free = end;
                            }
                            let msg = self.sends.len() as u32;
                            self.sends.push((now, rank, peer, tag));
                            let arrival = time::add(now, t.latency - t.recv_busy)?;
                            self.heap
                                .push(Reverse((arrival, self.seq, Event::Msg { msg })));
                            self.seq += 1;
                            let done = if t.shared_cpu { end } else { now };
                            self.mark(rank, op, Some(now), Some(done));
                        }
                        GoalOp::Recv { peer, tag, .. } => {
                            let p = &mut self.procs[r];
                            let found = p.unexpected.iter().position(|&(s, g, _)| {
                                peer.is_none_or(|x| x == s) && tag.is_none_or(|x| x == g)
                            });
                            match found {
                                Some(k) => {
                                    let (_, _, end) = p.unexpected.remove(k).expect("found");
                                    self.mark(rank, op, Some(now), Some(end.max(now)));
                                }
                                None => {
                                    p.posted.push((op, peer, tag));
                                    self.mark(rank, op, Some(now), None);
                                }
                            }
                        }
                        GoalOp::Calc { time } => {
                            let p = &self.procs[r];
                            if p.cpu_free > now {
                                let at = p.cpu_free;
                                self.heap.push(Reverse((at, seq, event)));
                                continue;
                            }
                            let end = time::add(now, time)?;
                            let p = &mut self.procs[r];
                            p.cpu_free = end;
                            p.finish = p.finish.max(end);
                            self.mark(rank, op, Some(now), Some(end));
                        }
                    }
                }
                Event::Msg { msg } => {
                    let (_, from, to, tag) = self.sends[msg as usize];
                    let q = self.procs.get(to as usize).ok_or_else(|| {
                        GoalRunError::Unsupported(format!("rank {from} sends to rank {to}"))
                    })?;
                    // a shared CPU receives when it is free; a receive port delivers at the
                    // receive's end, when no calc holds the CPU (LogGOPSim with o = 0)
                    let cpu = if t.shared_cpu {
                        q.cpu_free
                    } else {
                        q.cpu_free.saturating_sub(t.recv_busy)
                    };
                    let earliest = now.max(cpu).max(q.recv_next);
                    if earliest > now {
                        self.heap.push(Reverse((earliest, seq, event)));
                        continue;
                    }
                    let end = time::add(now, t.recv_busy)?;
                    let q = &mut self.procs[to as usize];
                    q.recv_next = time::add(now, t.recv_step())?;
                    q.finish = q.finish.max(end);
                    if t.shared_cpu {
                        q.cpu_free = end;
                    }
                    let found = q.posted.iter().position(|&(_, s, g)| {
                        s.is_none_or(|x| x == from) && g.is_none_or(|x| x == tag)
                    });
                    match found {
                        Some(k) => {
                            let (op, _, _) = q.posted.remove(k);
                            self.mark(to, op, None, Some(end));
                        }
                        None => q.unexpected.push_back((from, tag, end)),
                    }
                }
            }
        }
        Ok(())
    }

    /// Every operation ran and every message was received.
    fn finish_checks(&self) -> Result<(), GoalRunError> {
        for (r, rank) in self.ops.iter().enumerate() {
            if let Some(op) = rank.iter().position(|s| s.end == Ticks::MAX) {
                let what = match self.goal.ranks[r].ops[op] {
                    GoalOp::Send { peer, tag, .. } => format!("send to {peer} tag {tag}"),
                    GoalOp::Recv { peer, tag, .. } => format!(
                        "recv from {} tag {}",
                        peer.map_or("any".into(), |p| p.to_string()),
                        tag.map_or("any".into(), |t| t.to_string())
                    ),
                    GoalOp::Calc { time } => format!("calc {time}"),
                };
                return Err(GoalRunError::Stuck {
                    rank: r as u32,
                    op: op as u32,
                    what,
                });
            }
        }
        for (to, p) in self.procs.iter().enumerate() {
            if let Some(&(from, tag, _)) = p.unexpected.front() {
                return Err(GoalRunError::Unreceived {
                    from,
                    to: to as u32,
                    tag,
                });
            }
        }
        Ok(())
    }
}
