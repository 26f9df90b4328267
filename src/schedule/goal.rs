//! LogGOPSim's GOAL text format: export a schedule, and parse GOAL files.
//!
//! ```text
//! // comments
//! num_ranks 3
//!
//! rank 0 {
//! l1: send 1b to 1 tag 0
//! l2: send 1b to 2 tag 0
//! l2 requires l1
//! }
//! ```
//!
//! The parser takes what LogGOPSim's `txt2bin` takes: `//` and `/* … */` comments, labels that
//! are identifiers (`[a-zA-Z][a-zA-Z0-9_]*`), unlabelled operations, an optional `tag` (default 0),
//! `-1` for any source or tag on a receive, `cpu 0`/`nic 0` (herald models one CPU and one NIC
//! per rank, so other numbers are refused), `requires` and `irequires`. Labels become operation
//! indices; [`Goal::to_text`] writes operation `i` as label `l{i+1}`.
//!
//! # Export ([`Schedule::to_goal`])
//!
//! Each rank lists its operations in the order herald's rules put them on the rank's CPU: every
//! receive at its receive start, every send at its start (a receive first on a tie, so that a
//! forward follows the receive of its payload), a combining collective's `calc` (the combine
//! time) right after each receive. With a shared CPU (LogP) each operation `requires` the one
//! before it, so LogGOPSim cannot reorder them, and where herald's schedule keeps the CPU idle
//! before a send (a reduction's leaf waiting for its parent, a chain's root pacing its blocks), a
//! `calc` of that length holds the send back: no message arrives during such a wait (its receive
//! would be in the order), so LogGOPSim then reproduces every send time of a legal schedule.
//! With separate send and receive ports (postal, 1-port) the sends are chained in send order, each
//! send `requires` every receive that ends by its start (a PACK forwards only whole packs) and
//! the receive that first brings its payload, and an idle wait before a send becomes a `calc`
//! only where no message arrives during it (LogGOPSim, with `o = 0`, would hold that message up). The tag is the payload (block; `origin · items + item` for all-to-all), or
//! for combining collectives the number of earlier messages between the same two ranks, so matching
//! is unambiguous. A program without any operation (n = 1) gets one `calc 0` on rank 0, since
//! LogGOPSim cannot run an empty program. docs/goal.md gives the mapping to LogGOPSim's
//! parameters and the cross-check.

use super::{Collective, Schedule, ScheduleError};
use crate::model::Timing;
use crate::time::Ticks;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Errors reading or writing GOAL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GoalError {
    /// A line that is not GOAL (or GOAL herald cannot model).
    #[error("GOAL line {line}: {why}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        why: String,
    },
    /// The schedule cannot be exported.
    #[error("GOAL export: {0}")]
    Export(String),
    /// The schedule.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
}

/// One GOAL operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GoalOp {
    /// `send Sb to R tag T`.
    Send {
        /// Bytes.
        bytes: u64,
        /// Receiver.
        peer: u32,
        /// Tag.
        tag: u32,
    },
    /// `recv Sb from R tag T` (`-1`: any source, any tag).
    Recv {
        /// Bytes.
        bytes: u64,
        /// Sender (`None`: any source).
        peer: Option<u32>,
        /// Tag (`None`: any tag).
        tag: Option<u32>,
    },
    /// `calc T`: the CPU computes for `T` time units.
    Calc {
        /// Duration.
        time: u64,
    },
}

/// A dependency between two operations of one rank (indices into [`GoalRank::ops`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GoalDep {
    /// The dependent operation.
    pub after: u32,
    /// The operation it waits for.
    pub on: u32,
    /// `irequires`: waits for `on` to start rather than to end.
    pub start_only: bool,
}

/// One rank's operations and dependencies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GoalRank {
    /// Operations in file order.
    pub ops: Vec<GoalOp>,
    /// Dependencies in file order.
    pub deps: Vec<GoalDep>,
}

/// A GOAL program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Goal {
    /// Comment lines written before `num_ranks` (without the `// `); not kept by the parser.
    pub comments: Vec<String>,
    /// One entry per rank.
    pub ranks: Vec<GoalRank>,
}

impl Goal {
    /// Parses GOAL text (see the module docs for what is accepted).
    ///
    /// # Errors
    /// [`GoalError::Syntax`] naming the first bad line.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::schedule::{Goal, GoalDep, GoalOp};
    /// let g = Goal::parse(
    ///     "num_ranks 2\nrank 0 {\nfirst: send 8b to 1 tag 3\n}\n\
    ///      rank 1 {\nl1: recv 8b from 0 tag 3\ncalc 5\nl2 requires l1\n}\n",
    /// );
    /// # let g = g.unwrap_err(); // `l2` is not defined: the unlabelled calc has no name
    /// # let g = Goal::parse("num_ranks 2\nrank 0 {\nfirst: send 8b to 1 tag 3\n}\n\
    /// #     rank 1 {\nl1: recv 8b from 0 tag 3\nl2: calc 5\nl2 requires l1\n}\n")?;
    /// assert_eq!(g.ranks[0].ops[0], GoalOp::Send { bytes: 8, peer: 1, tag: 3 });
    /// assert_eq!(g.ranks[1].deps, [GoalDep { after: 1, on: 0, start_only: false }]);
    /// # Ok::<(), herald::schedule::GoalError>(())
    /// ```
    pub fn parse(text: &str) -> Result<Goal, GoalError> {
        Parser::default().run(text)
    }

    /// Number of operations in all ranks.
    pub fn op_count(&self) -> usize {
        self.ranks.iter().map(|r| r.ops.len()).sum()
    }

    /// The GOAL text of this program (operation `i` of a rank labelled `l{i+1}`).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for c in &self.comments {
            let _ = writeln!(out, "// {c}");
        }
        let _ = writeln!(out, "num_ranks {}", self.ranks.len());
        for (r, rank) in self.ranks.iter().enumerate() {
            let _ = write!(out, "\nrank {r} {{\n");
            for (i, op) in rank.ops.iter().enumerate() {
                let l = i + 1;
                let _ = match *op {
                    GoalOp::Send { bytes, peer, tag } => {
                        writeln!(out, "l{l}: send {bytes}b to {peer} tag {tag}")
                    }
                    GoalOp::Recv { bytes, peer, tag } => {
                        let any = |x: Option<u32>| x.map_or("-1".to_owned(), |v| v.to_string());
                        writeln!(
                            out,
                            "l{l}: recv {bytes}b from {} tag {}",
                            any(peer),
                            any(tag)
                        )
                    }
                    GoalOp::Calc { time } => writeln!(out, "l{l}: calc {time}"),
                };
            }
            for d in &rank.deps {
                let kind = if d.start_only {
                    "irequires"
                } else {
                    "requires"
                };
                let _ = writeln!(out, "l{} {kind} l{}", d.after + 1, d.on + 1);
            }
            out.push_str("}\n");
        }
        out
    }
}

/// The parser's state between lines.
#[derive(Debug, Default)]
struct Parser {
    /// The program so far (`None` before `num_ranks`).
    goal: Option<Goal>,
    /// The rank whose block is open, with its label table.
    current: Option<(usize, HashMap<String, u32>)>,
    /// Whether a `/* … */` comment is open.
    in_comment: bool,
}

impl Parser {
    fn run(mut self, text: &str) -> Result<Goal, GoalError> {
        let mut last = 0;
        for (i, raw) in text.lines().enumerate() {
            last = i + 1;
            let line = self.strip_comments(raw);
            let bad = |why: String| GoalError::Syntax { line: i + 1, why };
            self.statement(line.trim()).map_err(bad)?;
        }
        if self.current.is_some() || self.in_comment {
            return Err(GoalError::Syntax {
                line: last.max(1),
                why: "unclosed rank block or comment at the end of the file".into(),
            });
        }
        self.goal.ok_or(GoalError::Syntax {
            line: 1,
            why: "no num_ranks".into(),
        })
    }

    /// The line without its comments (a `/* … */` may span lines).
    fn strip_comments(&mut self, raw: &str) -> String {
        let mut out = String::new();
        let mut rest = raw;
        loop {
            if self.in_comment {
                match rest.find("*/") {
                    Some(k) => {
                        rest = &rest[k + 2..];
                        self.in_comment = false;
                    }
                    None => return out,
                }
            }
            let line = rest.find("//");
            let block = rest.find("/*");
            match (line, block) {
                (Some(l), b) if b.is_none_or(|b| l < b) => {
                    out.push_str(&rest[..l]);
                    return out;
                }
                (_, Some(b)) => {
                    out.push_str(&rest[..b]);
                    out.push(' ');
                    rest = &rest[b + 2..];
                    self.in_comment = true;
                }
                _ => {
                    out.push_str(rest);
                    return out;
                }
            }
        }
    }

    fn statement(&mut self, line: &str) -> Result<(), String> {
        if line.is_empty() {
            return Ok(());
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        match (words.as_slice(), self.current.is_some()) {
            (["num_ranks", n], false) if self.goal.is_none() => {
                let n: usize = n.parse().map_err(|_| "num_ranks needs a number")?;
                if n == 0 || n > u32::MAX as usize {
                    return Err(format!("num_ranks {n} is out of range"));
                }
                self.goal = Some(Goal {
                    comments: vec![],
                    ranks: vec![GoalRank::default(); n],
                });
                Ok(())
            }
            (["rank", r, "{"], false) => {
                let g = self.goal.as_ref().ok_or("rank before num_ranks")?;
                let r: usize = r.parse().map_err(|_| "bad rank number")?;
                if r >= g.ranks.len() {
                    return Err(format!("rank {r} is not below num_ranks {}", g.ranks.len()));
                }
                self.current = Some((r, HashMap::new()));
                Ok(())
            }
            (["}"], true) => {
                self.current = None;
                Ok(())
            }
            (_, true) => {
                let (r, labels) = self.current.as_mut().expect("checked");
                let goal = self.goal.as_mut().expect("a rank block implies num_ranks");
                let n = goal.ranks.len();
                statement(&words, &mut goal.ranks[*r], labels, n)
            }
            _ => Err("expected num_ranks, `rank R {` or `}`".into()),
        }
    }
}

/// Whether `w` is a GOAL identifier.
fn is_ident(w: &str) -> bool {
    let mut c = w.chars();
    c.next().is_some_and(|x| x.is_ascii_alphabetic())
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// Parses one statement inside a rank block.
fn statement(
    words: &[&str],
    rank: &mut GoalRank,
    labels: &mut HashMap<String, u32>,
    n: usize,
) -> Result<(), String> {
    let num =
        |w: &str| -> Result<u64, String> { w.parse().map_err(|_| format!("bad number {w:?}")) };
    let rank_of = |w: &str| -> Result<u32, String> {
        let r = num(w)?;
        if r as usize >= n {
            return Err(format!("rank {r} is not below num_ranks {n}"));
        }
        Ok(r as u32)
    };
    let lookup = |labels: &HashMap<String, u32>, w: &str| {
        labels
            .get(w)
            .copied()
            .ok_or_else(|| format!("label {w} is not defined (yet)"))
    };
    // A dependency: `A requires B`, `A irequires B`.
    if let [a, kind @ ("requires" | "irequires"), b] = words {
        let dep = GoalDep {
            after: lookup(labels, a)?,
            on: lookup(labels, b)?,
            start_only: *kind == "irequires",
        };
        rank.deps.push(dep);
        return Ok(());
    }
    // An operation, optionally labelled (`l1:` or `l1 :`).
    let (label, op) = match words {
        [l, rest @ ..] if l.ends_with(':') && is_ident(l.trim_end_matches(':')) => {
            (Some(l.trim_end_matches(':')), rest)
        }
        [l, ":", rest @ ..] if is_ident(l) => (Some(*l), rest),
        _ => (None, words),
    };
    let size = |w: &str| -> Result<u64, String> {
        w.strip_suffix('b')
            .ok_or_else(|| format!("size {w:?} must end in b"))
            .and_then(&num)
    };
    // trailing `tag T`, `cpu C`, `nic N` in this order, each optional
    let extras = |rest: &[&str], allow_tag: bool| -> Result<Option<i64>, String> {
        let mut tag = None;
        let mut i = 0;
        if allow_tag && rest.first() == Some(&"tag") {
            let t = rest.get(1).ok_or("tag needs a number")?;
            tag = Some(if *t == "-1" { -1 } else { num(t)? as i64 });
            i = 2;
        }
        for key in ["cpu", "nic"] {
            if rest.get(i) == Some(&key) {
                let v = num(rest.get(i + 1).ok_or(format!("{key} needs a number"))?)?;
                if v != 0 {
                    return Err(format!(
                        "{key} {v}: herald models one CPU and one NIC per rank"
                    ));
                }
                i += 2;
            }
        }
        if i != rest.len() {
            return Err(format!("unexpected {:?}", rest[i..].join(" ")));
        }
        Ok(tag)
    };
    let tag_of = |t: Option<i64>| -> Result<Option<u32>, String> {
        match t {
            None => Ok(Some(0)),
            Some(-1) => Ok(None),
            Some(t) => u32::try_from(t)
                .map(Some)
                .map_err(|_| format!("tag {t} is out of range")),
        }
    };
    let parsed = match op {
        ["send", s, "to", p, rest @ ..] => {
            let tag = tag_of(extras(rest, true)?)?.ok_or("a send needs a definite tag")?;
            GoalOp::Send {
                bytes: size(s)?,
                peer: rank_of(p)?,
                tag,
            }
        }
        ["recv", s, "from", p, rest @ ..] => GoalOp::Recv {
            bytes: size(s)?,
            peer: if *p == "-1" { None } else { Some(rank_of(p)?) },
            tag: tag_of(extras(rest, true)?)?,
        },
        ["calc", t, rest @ ..] => {
            extras(rest, false)?;
            GoalOp::Calc { time: num(t)? }
        }
        _ => return Err(format!("not a GOAL statement: {:?}", words.join(" "))),
    };
    let index = u32::try_from(rank.ops.len()).map_err(|_| "too many operations".to_owned())?;
    rank.ops.push(parsed);
    if let Some(l) = label {
        if labels.insert(l.to_owned(), index).is_some() {
            return Err(format!("label {l} is defined twice"));
        }
    }
    Ok(())
}

/// Which dependencies an export writes (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chaining {
    /// Every operation requires the one before it on the rank's CPU (shared CPU).
    Cpu,
    /// Sends chained in send order; each forward requires its payload's first receive.
    Ports,
}

impl Schedule {
    /// The schedule as a GOAL program with messages of `bytes` bytes, operations ordered and
    /// chained as `timing` (the model's rules, in this schedule's tick base or a multiple of it)
    /// puts them on each rank (module docs). `calc` times are in ticks of `timing.base`.
    ///
    /// # Errors
    /// [`GoalError::Export`] for receivers or payloads out of range, per-pair or multi-port
    /// timing, or a tick base `timing` cannot express this schedule's times in.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{generate, Algorithm, CostModel, LogP, Model, Ratio, Request, schedule::GoalOp};
    /// let logp = LogP::new(Ratio::integer(6), Ratio::integer(2), Ratio::integer(4), Ratio::ZERO)?;
    /// let s = generate(&Request::broadcast(Algorithm::Binomial, 4, 1, 0), &Model::from(logp))?;
    /// let goal = s.to_goal(&logp.timing(logp.time_base()?)?, 8)?;
    /// assert_eq!(goal.ranks[0].ops[0], GoalOp::Send { bytes: 8, peer: 2, tag: 0 });
    /// assert!(goal.to_text().contains("l2 requires l1"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_goal(&self, timing: &Timing, bytes: u64) -> Result<Goal, GoalError> {
        if timing.ports > 1 {
            return Err(GoalError::Export(
                "GOAL has one send and one receive at a time per rank; k-port does not map".into(),
            ));
        }
        let scale = timing.base.ticks_per_unit() / self.base.ticks_per_unit();
        if scale == 0 || timing.base.ticks_per_unit() % self.base.ticks_per_unit() != 0 {
            return Err(GoalError::Export(
                "the model's tick base is not a multiple of the schedule's".into(),
            ));
        }
        let t = if self.collective.is_combining() {
            timing.combining()
        } else {
            *timing
        };
        let n = self.n;
        let width = self.collective.what_count(n);
        let time = |at: Ticks| {
            at.checked_mul(scale)
                .ok_or_else(|| GoalError::Export("a time overflows".into()))
        };
        // incoming messages per rank: (receive start, sender, tag)
        let mut incoming: Vec<Vec<(Ticks, u32, u32)>> = vec![Vec::new(); n as usize];
        let mut pair_count: HashMap<(u32, u32), u32> = HashMap::new();
        for s in self.sends() {
            if s.to >= n || s.to == s.from || (width > 0 && u64::from(s.what) >= width) {
                return Err(GoalError::Export(format!(
                    "send {s:?} has no receiver or payload in range"
                )));
            }
            let tag = if width == 0 {
                let k = pair_count.entry((s.from, s.to)).or_insert(0);
                *k += 1;
                *k - 1
            } else {
                s.what
            };
            let start = time(s.at)? + (t.latency - t.recv_busy);
            incoming[s.to as usize].push((start, s.from, tag));
        }
        drop(pair_count);
        // CPU order on a tie of starts: what takes no time first (a receive before a send), then
        // what takes time (only one can, in a legal schedule)
        let recv_order = if t.recv_busy > 0 { 2 } else { 0 };
        let send_order = if t.send_busy > 0 { 3 } else { 1 };
        let mut ranks = Vec::with_capacity(n as usize);
        let mut out_count: HashMap<u32, u32> = HashMap::new();
        for p in 0..n {
            // (start, kind: 0 receive / 1 send, op) in CPU order
            let mut mine = std::mem::take(&mut incoming[p as usize]);
            mine.sort_unstable();
            let mut events: Vec<(Ticks, u8, GoalOp)> = mine
                .iter()
                .map(|&(start, from, tag)| {
                    let recv = GoalOp::Recv {
                        bytes,
                        peer: Some(from),
                        tag: Some(tag),
                    };
                    (start, recv_order, recv)
                })
                .collect();
            out_count.clear();
            for s in self.sends_of(p) {
                let tag = if width == 0 {
                    let k = out_count.entry(s.to).or_insert(0);
                    *k += 1;
                    *k - 1
                } else {
                    s.what
                };
                let send = GoalOp::Send {
                    bytes,
                    peer: s.to,
                    tag,
                };
                events.push((time(s.at)?, send_order, send));
            }
            events.sort_by_key(|e| (e.0, e.1)); // stable: sends keep their order
            ranks.push(rank_program(&events, timing, p, self));
        }
        if ranks.iter().all(|r: &GoalRank| r.ops.is_empty()) {
            ranks[0].ops.push(GoalOp::Calc { time: 0 }); // LogGOPSim cannot run an empty program
        }
        Ok(Goal {
            comments: vec![],
            ranks,
        })
    }
}

/// One rank's operations and dependencies from its events in CPU order (`timing` unfolded: the
/// combine of a combining collective is its own `calc`).
fn rank_program(events: &[(Ticks, u8, GoalOp)], timing: &Timing, p: u32, s: &Schedule) -> GoalRank {
    let combining = s.collective.is_combining();
    let combine = if combining { timing.combine } else { 0 };
    let chaining = if timing.shared_cpu {
        Chaining::Cpu
    } else {
        Chaining::Ports
    };
    let holds = |w: u32| match s.collective {
        Collective::Broadcast { root, .. } => p == root,
        Collective::AllToAll { items } => w / items == p,
        _ => true,
    };
    let mut rank = GoalRank::default();
    let require = |rank: &mut GoalRank, after: u32, on: u32| {
        rank.deps.push(GoalDep {
            after,
            on,
            start_only: false,
        })
    };
    // Cpu: the operation before on the CPU, and when the CPU is done with it. Ports: the last send.
    let mut previous: Option<u32> = None;
    let mut cpu_end: Ticks = 0;
    // Ports, combining: receives (or their combines) since the last send.
    let mut pending: Vec<u32> = Vec::new();
    let mut first_recv: HashMap<u32, u32> = HashMap::new();
    // Ports: when each message is processed (LogGOPSim with o = 0: when it arrives, at the end of
    // herald's receive), sorted
    let arrivals: Vec<Ticks> = if chaining == Chaining::Ports {
        events
            .iter()
            .filter(|e| matches!(e.2, GoalOp::Recv { .. }))
            .map(|e| e.0 + timing.recv_busy)
            .collect()
    } else {
        Vec::new()
    };
    let mut last_send: Ticks = 0;
    // Ports: receives ended by the next send's start that it does not yet require, (end, op)
    let mut done: Vec<(Ticks, u32)> = Vec::new();
    for &(start, _, op) in events {
        if let GoalOp::Send { .. } = op {
            // Where herald's schedule waits before a send with nothing else on the CPU, a calc
            // keeps LogGOPSim from sending earlier. With a shared CPU every receive is in the
            // order, so no message arrives during the wait; with ports (o = 0) a calc would hold
            // up the messages arriving during it, so it is used only where none does.
            let (from, idle) = match chaining {
                Chaining::Cpu => (cpu_end, start > cpu_end),
                Chaining::Ports => {
                    let k = arrivals.partition_point(|&a| a <= last_send);
                    let quiet = arrivals.get(k).is_none_or(|&a| a >= start);
                    (last_send, start > last_send && quiet)
                }
            };
            if idle {
                let wait = rank.ops.len() as u32;
                rank.ops.push(GoalOp::Calc { time: start - from });
                if let Some(on) = previous {
                    require(&mut rank, wait, on);
                }
                previous = Some(wait);
            }
            last_send = start;
        }
        let index = rank.ops.len() as u32;
        rank.ops.push(op);
        if chaining == Chaining::Cpu {
            if let Some(on) = previous {
                require(&mut rank, index, on);
            }
        }
        let mut last = index;
        match op {
            GoalOp::Recv { tag, .. } => {
                if let Some(tag) = tag {
                    first_recv.entry(tag).or_insert(index);
                }
                if chaining == Chaining::Ports && !combining {
                    done.push((start + timing.recv_busy, index));
                }
                if combining && combine > 0 {
                    rank.ops.push(GoalOp::Calc { time: combine });
                    last = index + 1;
                    require(&mut rank, last, index);
                }
                if combining {
                    pending.push(last);
                }
                cpu_end = start + timing.recv_busy + combine;
            }
            GoalOp::Send { tag, .. } => {
                cpu_end = start + timing.send_busy;
                if chaining == Chaining::Ports {
                    if let Some(on) = previous {
                        require(&mut rank, index, on);
                    }
                    if combining {
                        for on in pending.drain(..) {
                            require(&mut rank, index, on);
                        }
                    } else {
                        // every receive herald's schedule has finished by now (a pack waits
                        // for all its blocks), and the one that brings the payload
                        let mut needs_payload = !holds(tag);
                        let on_payload = first_recv.get(&tag).copied();
                        done.retain(|&(end, on)| {
                            if end > start {
                                return true;
                            }
                            needs_payload &= Some(on) != on_payload;
                            rank.deps.push(GoalDep {
                                after: index,
                                on,
                                start_only: false,
                            });
                            false
                        });
                        if let (true, Some(on)) = (needs_payload, on_payload) {
                            require(&mut rank, index, on);
                        }
                    }
                    previous = Some(index);
                }
            }
            GoalOp::Calc { .. } => {}
        }
        if chaining == Chaining::Cpu {
            previous = Some(last);
        }
    }
    rank
}
