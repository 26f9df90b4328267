//! Schedules compiled into per-processor programs, and their execution on a [`Team`].
//!
//! A broadcast schedule compiles into one [`RankProgram`] per processor: the blocks it sends,
//! in its send order, and for every processor it hears from, the blocks that edge carries in
//! send order (each edge is a FIFO ring). Channels exist only for the edges the schedule uses.
//!
//! Execution moves real bytes: the payload is cut into `m` blocks of whole 56-byte lines, and
//! every rank runs its program with the shared executor (`runtime/exec.rs`: line-by-line
//! forwarding, never blocking on one operation, waiting spin → yield → park).
//!
//! Compilation demands a causal schedule in a model-free sense: a rank forwards a block only if
//! some send of that block to it starts strictly earlier. Then every dependency points back in
//! time, so the execution cannot wait in a cycle.

use super::channel::{channel, Receiver, Sender};
use super::exec::{Exec, Framing, Links, Scratch, Stop};
use super::line::Line;
use super::team::Team;
use super::wait::{thread_aborted, Aborted, Signal};
use crate::schedule::{Collective, Schedule};
use crossbeam_utils::CachePadded;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Errors compiling or running a program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProgramError {
    /// The collective is not one the runtime executes.
    #[error("the runtime executes broadcast schedules, not {0}")]
    Collective(&'static str),
    /// A send names a receiver that is not a processor, or the processor itself.
    #[error("send from {from} to {to} has no such receiver")]
    Receiver {
        /// Sender.
        from: u32,
        /// Receiver.
        to: u32,
    },
    /// A send names a block the broadcast does not have.
    #[error(
        "send from {from} to {to} carries block {block}, but the broadcast has {blocks} blocks"
    )]
    Block {
        /// Sender.
        from: u32,
        /// Receiver.
        to: u32,
        /// The block named.
        block: u32,
        /// Blocks of the broadcast.
        blocks: u32,
    },
    /// A processor would receive a block twice (the second copy would overwrite bytes its
    /// children may be reading).
    #[error("processor {processor} receives block {block} twice")]
    Duplicate {
        /// The processor.
        processor: u32,
        /// The block.
        block: u32,
    },
    /// A send to the root, which holds every block from the start.
    #[error("processor {from} sends block {block} to the root")]
    ToRoot {
        /// Sender.
        from: u32,
        /// The block.
        block: u32,
    },
    /// A rank forwards a block no earlier send brings it.
    #[error(
        "processor {processor} forwards block {block} at tick {at} but no earlier send brings it"
    )]
    Causality {
        /// The processor.
        processor: u32,
        /// The block.
        block: u32,
        /// The send's start.
        at: u64,
    },
    /// A processor never receives some block.
    #[error("processor {processor} never receives block {block}")]
    Incomplete {
        /// The processor.
        processor: u32,
        /// The block.
        block: u32,
    },
    /// The team's size differs from the program's.
    #[error("the program is for {program} ranks, the team has {team}")]
    TeamSize {
        /// Ranks in the program.
        program: usize,
        /// Ranks in the team.
        team: usize,
    },
    /// A buffer of the wrong length.
    #[error("rank {rank}'s buffer has {got} bytes, the broadcast moves {want}")]
    Buffer {
        /// The rank.
        rank: usize,
        /// Its buffer's length.
        got: usize,
        /// The payload length.
        want: usize,
    },
    /// A panic elsewhere in the team aborted the run.
    #[error("the run was aborted by a panic on another rank")]
    Aborted,
}

impl From<Aborted> for ProgramError {
    fn from(_: Aborted) -> ProgramError {
        ProgramError::Aborted
    }
}

/// What one processor does in a broadcast.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RankProgram {
    /// `(receiver, block)` in send order.
    pub sends: Vec<(u32, u32)>,
    /// `(sender, blocks in the order that edge carries them)`, by sender.
    pub incoming: Vec<(u32, Vec<u32>)>,
}

/// A broadcast schedule compiled for the runtime.
///
/// # Examples
///
/// ```
/// use herald::{generate, Algorithm, Model, Postal, Program, Request};
/// let model = Model::from(Postal::new("2".parse()?)?);
/// let s = generate(&Request::broadcast(Algorithm::Binomial, 4, 1, 0), &model)?;
/// let p = Program::compile(&s)?;
/// assert_eq!(p.rank(0).sends, [(2, 0), (1, 0)]);
/// assert_eq!(p.rank(3).incoming, [(2, vec![0])]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The root.
    root: u32,
    /// Blocks.
    blocks: u32,
    /// One per processor.
    ranks: Vec<RankProgram>,
}

impl Program {
    /// Compiles a broadcast schedule (see the module docs for what is demanded).
    ///
    /// # Errors
    /// [`ProgramError`] for other collectives, bad receivers, blocks out of range, sends to the
    /// root, a block delivered twice to one processor, forwards with no earlier receive, or a
    /// processor that misses a block.
    ///
    /// ```
    /// use herald::{Collective, Program, Schedule, runtime::ProgramError, time::TimeBase};
    /// let bad = |sends: &[(u64, u32, u32, u32)]| {
    ///     let broadcast = Collective::Broadcast { root: 0, blocks: 1 };
    ///     let mut s = Schedule::builder(3, broadcast, TimeBase::UNIT).unwrap();
    ///     for &(at, from, to, what) in sends {
    ///         s.push(at, from, to, what);
    ///     }
    ///     Program::compile(&s.build().unwrap()).unwrap_err()
    /// };
    /// assert!(matches!(bad(&[(0, 0, 1, 0), (0, 0, 2, 1)]), ProgramError::Block { block: 1, .. }));
    /// assert!(matches!(bad(&[(0, 0, 1, 0), (1, 1, 2, 0), (2, 2, 0, 0)]), ProgramError::ToRoot { from: 2, .. }));
    /// assert!(matches!(bad(&[(0, 0, 1, 0), (0, 0, 2, 0), (1, 1, 2, 0)]), ProgramError::Duplicate { processor: 2, .. }));
    /// ```
    pub fn compile(schedule: &Schedule) -> Result<Program, ProgramError> {
        let Collective::Broadcast { root, blocks } = schedule.collective() else {
            return Err(ProgramError::Collective(schedule.collective().name()));
        };
        let n = schedule.n();
        let mut first: HashMap<(u32, u32), u64> = HashMap::new(); // (rank, block) → earliest send to it
        let mut incoming: Vec<Vec<(u64, u32, u32)>> = vec![Vec::new(); n as usize];
        for s in schedule.sends() {
            let (from, to, block) = (s.from, s.to, s.what);
            if to >= n || to == from {
                return Err(ProgramError::Receiver { from, to });
            }
            if block >= blocks {
                return Err(ProgramError::Block {
                    from,
                    to,
                    block,
                    blocks,
                });
            }
            if to == root {
                return Err(ProgramError::ToRoot { from, block });
            }
            if first.insert((to, block), s.at).is_some() {
                return Err(ProgramError::Duplicate {
                    processor: to,
                    block,
                });
            }
            incoming[to as usize].push((s.at, from, block));
        }
        let mut ranks = Vec::with_capacity(n as usize);
        for p in 0..n {
            let mut prog = RankProgram::default();
            for s in schedule.sends_of(p) {
                if p != root && first.get(&(p, s.what)).is_none_or(|&t| t >= s.at) {
                    return Err(ProgramError::Causality {
                        processor: p,
                        block: s.what,
                        at: s.at,
                    });
                }
                prog.sends.push((s.to, s.what));
            }
            let mut mine = std::mem::take(&mut incoming[p as usize]);
            mine.sort_unstable(); // by start time: the order each FIFO edge carries
            let mut by_sender: HashMap<u32, Vec<u32>> = HashMap::new();
            for (_, from, what) in mine {
                by_sender.entry(from).or_default().push(what);
            }
            let mut edges: Vec<(u32, Vec<u32>)> = by_sender.into_iter().collect();
            edges.sort_unstable();
            prog.incoming = edges;
            if p != root {
                if let Some(b) = (0..blocks).find(|&b| !first.contains_key(&(p, b))) {
                    return Err(ProgramError::Incomplete {
                        processor: p,
                        block: b,
                    });
                }
            }
            ranks.push(prog);
        }
        Ok(Program {
            root,
            blocks,
            ranks,
        })
    }

    /// The root.
    pub fn root(&self) -> u32 {
        self.root
    }

    /// Blocks.
    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    /// Processor count.
    pub fn n(&self) -> usize {
        self.ranks.len()
    }

    /// Processor `p`'s program.
    pub fn rank(&self, p: u32) -> &RankProgram {
        &self.ranks[p as usize]
    }

    /// Blocks carried per edge: `((from, to), count)`, sorted.
    pub fn edges(&self) -> Vec<((u32, u32), u64)> {
        let mut out: Vec<((u32, u32), u64)> = Vec::new();
        for (to, prog) in self.ranks.iter().enumerate() {
            for (from, blocks) in &prog.incoming {
                out.push(((*from, to as u32), blocks.len() as u64));
            }
        }
        out.sort_unstable();
        out
    }
}

/// How a payload of `bytes` bytes is cut into `blocks` blocks of whole lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocking {
    /// Payload length.
    pub bytes: usize,
    /// Lines per block (every block but possibly the last; at least 1).
    pub lines_per_block: usize,
    /// Number of blocks.
    pub blocks: u32,
}

impl Blocking {
    /// Cuts `bytes` into `blocks` blocks of whole lines (a block always has at least one line).
    pub fn new(bytes: usize, blocks: u32) -> Blocking {
        let per_block = bytes.div_ceil(blocks.max(1) as usize);
        Blocking {
            bytes,
            lines_per_block: per_block.div_ceil(Line::PAYLOAD).max(1),
            blocks,
        }
    }

    /// Byte range of block `b`.
    pub fn range(&self, b: u32) -> std::ops::Range<usize> {
        let start = (b as usize * self.lines_per_block * Line::PAYLOAD).min(self.bytes);
        let end = ((b as usize + 1) * self.lines_per_block * Line::PAYLOAD).min(self.bytes);
        start..end
    }

    /// Lines that carry block `b` (at least 1, even for an empty block).
    pub fn lines(&self, b: u32) -> usize {
        self.range(b).len().div_ceil(Line::PAYLOAD).max(1)
    }
}

/// Channels and signals for running one [`Program`] repeatedly on a team: rings are created
/// once per edge and reused without reset.
#[derive(Debug)]
pub struct Network {
    /// The program.
    program: Program,
    /// Per rank: its channel ends.
    ends: Vec<RankEnds>,
    /// One signal per rank.
    signals: Vec<CachePadded<Signal>>,
}

/// A rank's channel ends.
#[derive(Debug, Default)]
struct RankEnds {
    /// `(receiver, its sending end)`.
    out: Vec<(u32, Sender)>,
    /// `(sender, its receiving end)`, in the order of `RankProgram::incoming`.
    inc: Vec<(u32, Receiver)>,
    /// The executor's reusable state.
    scratch: Scratch,
}

impl Links for RankEnds {
    fn sender(&mut self, to: u32) -> &mut Sender {
        let found = self.out.iter_mut().find(|(t, _)| *t == to);
        &mut found.expect("compile guarantees an edge per send").1
    }

    fn receiver(&mut self, e: usize, _from: u32) -> &mut Receiver {
        &mut self.inc[e].1
    }
}

/// One iteration of [`Network::iterate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Iteration {
    /// Each rank's start and finish.
    pub ranks: Vec<RankTiming>,
    /// Whether every rank's `after` check passed.
    pub verified: bool,
    /// The root.
    root: usize,
}

impl Iteration {
    /// From the root's start until the last rank held every block.
    #[must_use]
    pub fn time(&self) -> Duration {
        let start = self.ranks[self.root].start;
        let done = self.ranks.iter().map(|r| r.done).max().unwrap_or(start);
        done.saturating_duration_since(start)
    }
}

/// A reusable start line for the ranks of one run. With a CPU per rank they spin until all
/// have arrived for iteration `i`, so a broadcast's clock starts on every rank within a
/// cache-line transfer; with more ranks than CPUs they wait on their signals (spin, yield,
/// park): spinning there would keep the last ranks from arriving. Either way a panic elsewhere
/// in the team ends the wait with [`Aborted`].
struct StartLine {
    n: u64,
    arrived: CachePadded<AtomicU64>,
    spin: bool,
}

impl StartLine {
    fn new(n: usize) -> StartLine {
        StartLine {
            n: n as u64,
            arrived: CachePadded::new(AtomicU64::new(0)),
            spin: n <= Team::available_cpus().len(),
        }
    }

    /// Rank `rank` arrives for iteration `i` (0, 1, … in order) and waits for every rank.
    fn wait(&self, signals: &[CachePadded<Signal>], rank: usize, i: u64) -> Result<(), Aborted> {
        let all = (i + 1) * self.n;
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == all {
            if !self.spin {
                signals.iter().for_each(|s| s.notify());
            }
            return Ok(());
        }
        let arrived = || (self.arrived.load(Ordering::Acquire) >= all).then_some(());
        if !self.spin {
            return signals[rank].wait_until(arrived);
        }
        let mut polls = 0u32;
        while arrived().is_none() {
            polls = polls.wrapping_add(1);
            if polls < 4096 {
                std::hint::spin_loop();
            } else if thread_aborted() {
                return Err(Aborted);
            } else {
                std::thread::yield_now(); // a rank descheduled: let it arrive
            }
        }
        Ok(())
    }
}

/// One rank's result of a broadcast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankTiming {
    /// When the rank started (after the start barrier).
    pub start: Instant,
    /// When the rank held every block.
    pub done: Instant,
}

impl Network {
    /// Channels for `program`: one ring of `capacity` lines per edge the program uses.
    pub fn new(program: Program, capacity: usize) -> Network {
        let n = program.n();
        let mut ends: Vec<RankEnds> = (0..n).map(|_| RankEnds::default()).collect();
        for (to, prog) in program.ranks.iter().enumerate() {
            for (from, _) in &prog.incoming {
                let (tx, rx) = channel(capacity);
                ends[*from as usize].out.push((to as u32, tx));
                ends[to].inc.push((*from, rx));
            }
        }
        let signals = (0..n).map(|_| CachePadded::new(Signal::new())).collect();
        Network {
            program,
            ends,
            signals,
        }
    }

    /// The program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Lines sent on each edge so far: `((from, to), lines)`, sorted.
    pub fn lines_per_edge(&self) -> Vec<((u32, u32), u64)> {
        let mut out: Vec<((u32, u32), u64)> = Vec::new();
        for (from, ends) in self.ends.iter().enumerate() {
            for (to, tx) in &ends.out {
                out.push(((from as u32, *to), tx.sent()));
            }
        }
        out.sort_unstable();
        out
    }

    /// Runs one broadcast on `team`: the root's `buffers[root]` reaches every other rank's
    /// buffer. All buffers must have the same length.
    ///
    /// # Errors
    /// [`ProgramError::TeamSize`], [`ProgramError::Buffer`], [`ProgramError::Aborted`].
    pub fn broadcast(
        &mut self,
        team: &mut Team,
        buffers: &mut [Vec<u8>],
    ) -> Result<Vec<RankTiming>, ProgramError> {
        let mut out = self.iterate(team, buffers, 1, |_, _, _| {}, |_, _, _| true)?;
        Ok(out.pop().map(|it| it.ranks).unwrap_or_default())
    }

    /// Runs `iters` broadcasts in one run of `team`, so its ranks stay awake between them:
    /// before iteration `i` every rank `r` calls `before(i, r, buffer)` (the root writes the
    /// payload), then all start together at a spinning start line, broadcast, and call
    /// `after(i, r, buffer)` (which may check every byte) once they are done.
    ///
    /// # Errors
    /// As [`broadcast`](Self::broadcast).
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{generate, Algorithm, Model, Network, Program, Request, Team, model::OnePort};
    /// let s = generate(&Request::broadcast(Algorithm::Optimal, 4, 2, 0), &Model::from(OnePort))?;
    /// let mut net = Network::new(Program::compile(&s)?, 16);
    /// let mut team = Team::new(4)?;
    /// let mut bufs = vec![vec![0u8; 300]; 4];
    /// let its = net.iterate(
    ///     &mut team,
    ///     &mut bufs,
    ///     10,
    ///     |i, r, buf| if r == 0 { buf.fill(i as u8) },
    ///     |i, _, buf| buf.iter().all(|&b| b == i as u8),
    /// )?;
    /// assert!(its.iter().all(|it| it.verified));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn iterate(
        &mut self,
        team: &mut Team,
        buffers: &mut [Vec<u8>],
        iters: usize,
        before: impl Fn(usize, usize, &mut [u8]) + Sync,
        after: impl Fn(usize, usize, &[u8]) -> bool + Sync,
    ) -> Result<Vec<Iteration>, ProgramError> {
        let n = self.program.n();
        if team.size() != n || buffers.len() != n {
            return Err(ProgramError::TeamSize {
                program: n,
                team: team.size(),
            });
        }
        let bytes = buffers[self.program.root as usize].len();
        if let Some((rank, b)) = buffers.iter().enumerate().find(|(_, b)| b.len() != bytes) {
            return Err(ProgramError::Buffer {
                rank,
                got: b.len(),
                want: bytes,
            });
        }
        let blocking = Blocking::new(bytes, self.program.blocks);
        let line = StartLine::new(n);
        let mut states: Vec<(&mut RankEnds, &mut Vec<u8>)> =
            self.ends.iter_mut().zip(buffers.iter_mut()).collect();
        let (program, signals) = (&self.program, &self.signals);
        let per_rank = team.run_with(&mut states, |ctx, (ends, buf)| {
            let rank = ctx.rank();
            let is_root = rank == program.root as usize;
            let prog = &program.ranks[rank];
            let mut mine = Vec::with_capacity(iters);
            for i in 0..iters {
                before(i, rank, buf);
                line.wait(signals, rank, i as u64)?;
                let start = Instant::now();
                let mut scratch = std::mem::take(&mut ends.scratch);
                let mut exec = Exec::new(
                    prog,
                    program.blocks,
                    is_root,
                    Framing::Plain(blocking),
                    &mut **ends,
                    buf,
                    signals,
                    rank,
                    &mut scratch,
                );
                let result = exec.run(|| None::<ProgramError>);
                ends.scratch = scratch;
                let done = Instant::now();
                match result {
                    Ok(()) => mine.push((RankTiming { start, done }, after(i, rank, buf))),
                    Err(Stop::Hook(e)) => return Err(e),
                    Err(Stop::Header(..) | Stop::Stopped | Stop::Gone(_)) => {
                        unreachable!("plain framing has no headers, never stops, and the network holds both ends of every ring")
                    }
                }
            }
            Ok(mine)
        });
        let per_rank: Vec<Vec<(RankTiming, bool)>> =
            per_rank.into_iter().collect::<Result<_, _>>()?;
        Ok((0..iters)
            .map(|i| Iteration {
                ranks: per_rank.iter().map(|r| r[i].0).collect(),
                verified: per_rank.iter().all(|r| r[i].1),
                root: program.root as usize,
            })
            .collect())
    }
}

/// Summary statistics of a sample of durations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spread {
    /// Median.
    pub median: Duration,
    /// 10th percentile.
    pub p10: Duration,
    /// 90th percentile.
    pub p90: Duration,
}

impl std::fmt::Display for Spread {
    /// `median …, p10 …, p90 …` (each as `Duration`'s `Debug`, e.g. `1.5µs`).
    ///
    /// ```
    /// use std::time::Duration;
    /// let s = herald::runtime::Spread::of(&[Duration::from_micros(2)]).unwrap();
    /// assert_eq!(s.to_string(), "median 2µs, p10 2µs, p90 2µs");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "median {:?}, p10 {:?}, p90 {:?}",
            self.median, self.p10, self.p90
        )
    }
}

impl Spread {
    /// Median, p10 and p90 of `samples` (nearest rank, [`crate::stats`]'s one quantile rule);
    /// `None` if empty.
    pub fn of(samples: &[Duration]) -> Option<Spread> {
        let s = crate::stats::Summary::of(samples)?;
        Some(Spread {
            median: s.median,
            p10: s.p10,
            p90: s.p90,
        })
    }
}
