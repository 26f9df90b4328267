//! LogGOPSim's GOAL text format: export a schedule, and parse GOAL files.
//!
//! ```text
//! num_ranks 3
//!
//! rank 0 {
//! l1: send 1b to 1 tag 0
//! l2: send 1b to 2 tag 0
//! l2 requires l1
//! }
//! ```
//!
//! Export rules: each rank lists its receives (in arrival order) and its sends (in its send
//! order); the tag is the payload (block) number, so matching is unambiguous; a forward
//! `requires` the receive of its payload; a rank's sends are chained with `requires` to keep the
//! schedule's order (LogGOPSim would otherwise start ready sends in its own order). Sizes are
//! the block size in bytes.
//!
//! Parameter mapping (herald LogGP → LogGOPSim): `L → L`, `o → o`, `g → g`, `G → G`, and
//! LogGOPSim's per-byte CPU overhead `O = 0`. LogGOPSim reports when each host's CPU is free,
//! which includes the receive overhead: for a legal herald schedule whose sends start as early
//! as its order allows (every generator's), LogGOPSim's time for the last rank should equal
//! herald's makespan.

use super::{Collective, Schedule, ScheduleError};
use std::fmt::Write as _;

/// Errors reading GOAL text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GoalError {
    /// A line that is not GOAL.
    #[error("GOAL line {line}: {why}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        why: String,
    },
    /// The schedule cannot be exported (combining collectives have no GOAL form here).
    #[error("GOAL export: {0}")]
    Export(String),
    /// The schedule.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
}

/// One GOAL operation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum GoalOp {
    /// `send Sb to R tag T`.
    Send {
        /// Bytes.
        bytes: u64,
        /// Peer rank.
        peer: u32,
        /// Tag.
        tag: u32,
    },
    /// `recv Sb from R tag T`.
    Recv {
        /// Bytes.
        bytes: u64,
        /// Peer rank.
        peer: u32,
        /// Tag.
        tag: u32,
    },
    /// `calc T`.
    Calc {
        /// Duration.
        time: u64,
    },
}

/// A dependency between two labels of one rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GoalDep {
    /// The dependent label (`lA`).
    pub after: u32,
    /// The label it waits for (`lB`).
    pub on: u32,
    /// `irequires`: waits for `on` to start rather than to end.
    pub start_only: bool,
}

/// One rank's operations and dependencies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GoalRank {
    /// `(label number, operation)` in file order.
    pub ops: Vec<(u32, GoalOp)>,
    /// Dependencies in file order.
    pub deps: Vec<GoalDep>,
}

/// A parsed GOAL program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Goal {
    /// One entry per rank.
    pub ranks: Vec<GoalRank>,
}

impl Goal {
    /// Parses GOAL text (`num_ranks N`, then `rank R { … }` blocks).
    ///
    /// # Errors
    /// [`GoalError::Syntax`] naming the first bad line.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{Goal, GoalOp};
    /// let g = Goal::parse("num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 3\n}\nrank 1 {\nl1: recv 8b from 0 tag 3\n}\n")?;
    /// assert_eq!(g.ranks[0].ops[0].1, GoalOp::Send { bytes: 8, peer: 1, tag: 3 });
    /// # Ok::<(), herald::GoalError>(())
    /// ```
    pub fn parse(text: &str) -> Result<Goal, GoalError> {
        let mut goal: Option<Goal> = None;
        let mut current: Option<usize> = None;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split("//").next().unwrap_or("").trim();
            let bad = |why: &str| GoalError::Syntax {
                line: i + 1,
                why: why.to_owned(),
            };
            if line.is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            match (words.as_slice(), current) {
                (["num_ranks", n], None) if goal.is_none() => {
                    let n: usize = n.parse().map_err(|_| bad("num_ranks needs a number"))?;
                    goal = Some(Goal {
                        ranks: vec![GoalRank::default(); n],
                    });
                }
                (["rank", r, "{"], None) => {
                    let g = goal.as_ref().ok_or_else(|| bad("rank before num_ranks"))?;
                    let r: usize = r.parse().map_err(|_| bad("bad rank number"))?;
                    if r >= g.ranks.len() {
                        return Err(bad("rank number not below num_ranks"));
                    }
                    current = Some(r);
                }
                (["}"], Some(_)) => current = None,
                (_, Some(r)) => {
                    let rank = &mut goal.as_mut().expect("a rank block implies num_ranks").ranks[r];
                    parse_statement(&words, rank).map_err(|why| bad(&why))?;
                }
                _ => return Err(bad("expected num_ranks, `rank R {` or `}`")),
            }
        }
        if current.is_some() {
            return Err(GoalError::Syntax {
                line: text.lines().count(),
                why: "unclosed rank block".into(),
            });
        }
        goal.ok_or(GoalError::Syntax {
            line: 1,
            why: "no num_ranks".into(),
        })
    }

    /// The GOAL text of this program.
    pub fn to_text(&self) -> String {
        let mut out = format!("num_ranks {}\n", self.ranks.len());
        for (r, rank) in self.ranks.iter().enumerate() {
            let _ = write!(out, "\nrank {r} {{\n");
            for (label, op) in &rank.ops {
                let _ = match op {
                    GoalOp::Send { bytes, peer, tag } => {
                        writeln!(out, "l{label}: send {bytes}b to {peer} tag {tag}")
                    }
                    GoalOp::Recv { bytes, peer, tag } => {
                        writeln!(out, "l{label}: recv {bytes}b from {peer} tag {tag}")
                    }
                    GoalOp::Calc { time } => writeln!(out, "l{label}: calc {time}"),
                };
            }
            for d in &rank.deps {
                let kind = if d.start_only {
                    "irequires"
                } else {
                    "requires"
                };
                let _ = writeln!(out, "l{} {kind} l{}", d.after, d.on);
            }
            out.push_str("}\n");
        }
        out
    }
}

/// Parses one statement inside a rank block.
fn parse_statement(words: &[&str], rank: &mut GoalRank) -> Result<(), String> {
    let label = |w: &str| -> Result<u32, String> {
        w.trim_end_matches(':')
            .strip_prefix('l')
            .and_then(|x| x.parse().ok())
            .ok_or_else(|| format!("bad label {w:?}"))
    };
    let num =
        |w: &str| -> Result<u64, String> { w.parse().map_err(|_| format!("bad number {w:?}")) };
    let size = |w: &str| -> Result<u64, String> {
        w.strip_suffix('b')
            .ok_or_else(|| format!("size {w:?} must end in b"))
            .and_then(num)
    };
    let peer =
        |w: &str| -> Result<u32, String> { w.parse().map_err(|_| format!("bad rank {w:?}")) };
    let tag = |w: &str| -> Result<u32, String> { w.parse().map_err(|_| format!("bad tag {w:?}")) };
    match words {
        [l, "send", s, "to", p, "tag", t] if l.ends_with(':') => {
            let op = GoalOp::Send {
                bytes: size(s)?,
                peer: peer(p)?,
                tag: tag(t)?,
            };
            rank.ops.push((label(l)?, op));
        }
        [l, "recv", s, "from", p, "tag", t] if l.ends_with(':') => {
            let op = GoalOp::Recv {
                bytes: size(s)?,
                peer: peer(p)?,
                tag: tag(t)?,
            };
            rank.ops.push((label(l)?, op));
        }
        [l, "calc", t] if l.ends_with(':') => {
            rank.ops.push((label(l)?, GoalOp::Calc { time: num(t)? }))
        }
        [a, kind @ ("requires" | "irequires"), b] => rank.deps.push(GoalDep {
            after: label(a)?,
            on: label(b)?,
            start_only: *kind == "irequires",
        }),
        _ => return Err(format!("not a GOAL statement: {:?}", words.join(" "))),
    }
    Ok(())
}

impl Schedule {
    /// The schedule as a GOAL program with messages of `bytes` bytes (see the module docs).
    ///
    /// # Errors
    /// [`GoalError::Export`] for combining collectives (their messages carry partial values that
    /// GOAL cannot express) and for receivers out of range.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{generate, Algorithm, Model, Postal, Request};
    /// let model = Model::from(Postal::new("2".parse()?)?);
    /// let s = generate(&Request::broadcast(Algorithm::Binomial, 4, 1, 0), &model)?;
    /// let goal = s.to_goal(8)?;
    /// assert!(goal.to_text().contains("l1: send 8b to 2 tag 0"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_goal(&self, bytes: u64) -> Result<Goal, GoalError> {
        if self.collective.is_combining() {
            return Err(GoalError::Export(format!(
                "{} schedules have no GOAL form",
                self.collective.name()
            )));
        }
        let n = self.n;
        // receives per rank, in arrival order (= send-start order: one latency for all)
        let mut recvs: Vec<Vec<(u64, u32, u32)>> = vec![Vec::new(); n as usize];
        for s in self.sends() {
            let r = recvs
                .get_mut(s.to as usize)
                .ok_or_else(|| GoalError::Export(format!("receiver {} out of range", s.to)))?;
            r.push((s.at, s.from, s.what));
        }
        let holds = |p: u32, w: u32| match self.collective {
            Collective::Broadcast { root, .. } => p == root,
            Collective::AllToAll { items } => w / items == p,
            _ => true,
        };
        let mut ranks = Vec::with_capacity(n as usize);
        for p in 0..n {
            let mut rank = GoalRank::default();
            let mine = &mut recvs[p as usize];
            mine.sort_unstable();
            let mut recv_label = std::collections::HashMap::new();
            let mut next = 1u32;
            for &(_, from, what) in mine.iter() {
                rank.ops.push((
                    next,
                    GoalOp::Recv {
                        bytes,
                        peer: from,
                        tag: what,
                    },
                ));
                recv_label.entry(what).or_insert(next);
                next += 1;
            }
            let mut previous_send = None;
            for s in self.sends_of(p) {
                rank.ops.push((
                    next,
                    GoalOp::Send {
                        bytes,
                        peer: s.to,
                        tag: s.what,
                    },
                ));
                if !holds(p, s.what) {
                    if let Some(&on) = recv_label.get(&s.what) {
                        rank.deps.push(GoalDep {
                            after: next,
                            on,
                            start_only: false,
                        });
                    }
                }
                if let Some(prev) = previous_send {
                    rank.deps.push(GoalDep {
                        after: next,
                        on: prev,
                        start_only: false,
                    });
                }
                previous_send = Some(next);
                next += 1;
            }
            ranks.push(rank);
        }
        Ok(Goal { ranks })
    }
}
