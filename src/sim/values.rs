//! Running a combining schedule (reduce, allreduce, prefix) on real values.
//!
//! The checker counts contributions; [`evaluate`] computes with them. Every processor starts
//! with its own value; a send carries the sender's current value at the send's start (arrivals at
//! exactly that tick included, as in the checker); on arrival the receiver combines the received
//! value with its own. The arrival time is the checker's: send start plus the model's latency with
//! the combine folded in ([`Timing::combining`](crate::model::Timing::combining)).
//!
//! # Operand order
//!
//! For a non-commutative associative operation (string concatenation, matrix products) the
//! operands must be combined in rank order. [`Operands`] says what is accepted:
//!
//! * [`Operands::Commutative`] — any two disjoint sets of contributions combine (held value on
//!   the left); only double counting is an error.
//! * [`Operands::Linear`] — every value covers a contiguous run of ranks `a .. b`. A received run
//!   must be adjacent to the held one: if it follows, the result is `held ∘ received`; if it
//!   precedes, `received ∘ held`. Anything else is [`ValueError::NonAdjacent`]. A completed
//!   reduction is exactly `x_0 ∘ x_1 ∘ … ∘ x_{P−1}`.
//! * [`Operands::Cyclic`] — runs are cyclic (`x_{P−1}` is followed by `x_0`), as in the circulant
//!   allreduce of Karp et al. §5.2.1, where processor `i` holds `x[i − f + 1 : i]` (indices mod
//!   P). A completed value covers all P ranks starting at some rank `s` and equals the rotation
//!   `x_s ∘ … ∘ x_{P−1} ∘ x_0 ∘ … ∘ x_{s−1}`; [`Evaluation::span`] reports `s`. This is what the
//!   paper's footnote 1 ("an appropriate renumbering of the operands") allows: the result is
//!   correct for the operands renumbered cyclically from `s`. When a received run is adjacent on
//!   both sides (it completes the circle), the order that is also linear wins (so a schedule that
//!   keeps rank order yields `s = 0` here too); otherwise the held run stays on the left.
//!
//! Simultaneous arrivals at one processor (possible only when a model's receive gap and busy time
//! are 0) are combined in whichever order keeps the runs adjacent.
//!
//! The finishing rule is the checker's: the root of a reduce, every processor of an allreduce
//! holds every contribution; processor `i` of a prefix holds exactly `0 ..= i` (in the linear and
//! cyclic modes, as the run `0 .. i + 1`).

use super::CheckError;
use crate::model::CostModel;
use crate::schedule::{Collective, Schedule};
use crate::time::{Ticks, TimeError};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;

/// How the operands of a combining schedule must be ordered (see the module docs of `sim`'s
/// value evaluator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operands {
    /// Any disjoint contributions combine; the held value is the left operand.
    Commutative,
    /// Contiguous runs of ranks, combined in rank order.
    Linear,
    /// Cyclic runs of ranks (modulo the processor count); completed values are rotations.
    Cyclic,
}

/// A run of ranks `start, start + 1, …` of length `len` (modulo the processor count in the
/// cyclic mode). In the commutative mode `start` is 0 and `len` is the number of contributions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Span {
    /// First rank.
    pub start: u32,
    /// Number of ranks.
    pub len: u32,
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ranks from {}", self.len, self.start)
    }
}

/// Why a schedule cannot be evaluated, or evaluates wrongly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// The schedule does not combine values.
    #[error("{0} does not combine values; only reduce, allreduce and prefix can be evaluated")]
    NotCombining(&'static str),
    /// The number of initial values is not the processor count.
    #[error("{given} initial values for {n} processors")]
    Count {
        /// Values given.
        given: usize,
        /// Processors.
        n: u32,
    },
    /// A send to a processor that does not exist, or to its sender.
    #[error("processor {from} sends to {to} at {at}, which is not another processor")]
    BadReceiver {
        /// Send start (ticks of the evaluation's base).
        at: Ticks,
        /// Sender.
        from: u32,
        /// Receiver.
        to: u32,
    },
    /// A received value overlaps the held one.
    #[error("processor {processor} receives the contribution of {rank} again from {from} (arrival {at})")]
    DoubleCount {
        /// Arrival (ticks of the evaluation's base).
        at: Ticks,
        /// Receiver.
        processor: u32,
        /// Sender.
        from: u32,
        /// A rank counted twice.
        rank: u32,
    },
    /// A received run is disjoint from, but not adjacent to, the held run.
    #[error("processor {processor} holds {held} and receives {received} from {from} (arrival {at}): not adjacent")]
    NonAdjacent {
        /// Arrival (ticks of the evaluation's base).
        at: Ticks,
        /// Receiver.
        processor: u32,
        /// Sender.
        from: u32,
        /// The receiver's run.
        held: Span,
        /// The received run.
        received: Span,
    },
    /// A processor ends without what the collective requires.
    #[error("processor {processor} ends holding {held}")]
    Incomplete {
        /// The processor.
        processor: u32,
        /// What it holds.
        held: Span,
    },
    /// The commutative mode keeps a set per processor; beyond this many processors it refuses.
    #[error("commutative evaluation is limited to 4096 processors, not {0}")]
    TooLarge(u32),
    /// Model parameters or time arithmetic.
    #[error(transparent)]
    Check(#[from] CheckError),
}

impl From<TimeError> for ValueError {
    fn from(e: TimeError) -> ValueError {
        ValueError::Check(CheckError::Time(e))
    }
}

/// The outcome of [`evaluate`]: every processor's final value and what it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluation<T> {
    /// Final value per processor.
    values: Vec<T>,
    /// Final run per processor.
    spans: Vec<Span>,
    /// When the last processor that must finish does (ticks of `base`).
    makespan: Ticks,
    /// Ticks per unit of the evaluation.
    base: crate::time::TimeBase,
}

impl<T> Evaluation<T> {
    /// Processor `p`'s final value.
    pub fn value(&self, p: u32) -> &T {
        &self.values[p as usize]
    }

    /// All final values, by processor.
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// What processor `p`'s final value covers (its first rank is the rotation in the cyclic
    /// mode).
    pub fn span(&self, p: u32) -> Span {
        self.spans[p as usize]
    }

    /// When the last processor the collective requires to finish holds its result (the checker's
    /// makespan), in ticks of [`Evaluation::base`].
    pub fn makespan(&self) -> Ticks {
        self.makespan
    }

    /// The tick base of the evaluation (the schedule's, refined by the model's).
    pub fn base(&self) -> crate::time::TimeBase {
        self.base
    }
}

/// Runs a combining `schedule` under `model` on `initial` values (one per processor, by rank),
/// combining with `op(left, right)` in the order `operands` prescribes.
///
/// # Errors
/// [`ValueError::NotCombining`] for broadcast and all-to-all schedules; [`ValueError::Count`]
/// if `initial.len()` is not the processor count; [`ValueError::BadReceiver`],
/// [`ValueError::DoubleCount`], [`ValueError::NonAdjacent`] at the first offending arrival in
/// time order; [`ValueError::Incomplete`] if the finishing rule fails; model and time errors.
/// Legality of the timing (gaps, overheads) is the checker's business, not this function's.
///
/// # Examples
///
/// ```
/// use herald::{Collective, Model, Postal, Ratio, Schedule, sim::{evaluate, Operands}};
/// let model = Model::from(Postal::new(Ratio::ONE)?);
/// let base = herald::time::TimeBase::UNIT;
/// // 1 → 0 and 3 → 2 at 0, then 2 → 0 at 1: runs 0..2 and 2..4 meet at 0.
/// let mut b = Schedule::builder(4, Collective::Reduce { root: 0 }, base)?;
/// b.push(0, 1, 0, 0);
/// b.push(0, 3, 2, 0);
/// b.push(1, 2, 0, 0);
/// let words: Vec<String> = ["a", "b", "c", "d"].map(String::from).into();
/// let e = evaluate(&b.build()?, &model, words, Operands::Linear, |l: &String, r: &String| {
///     format!("{l}{r}")
/// })?;
/// assert_eq!(e.value(0), "abcd");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn evaluate<T: Clone>(
    schedule: &Schedule,
    model: &dyn CostModel,
    initial: Vec<T>,
    operands: Operands,
    mut op: impl FnMut(&T, &T) -> T,
) -> Result<Evaluation<T>, ValueError> {
    let collective = schedule.collective();
    if !collective.is_combining() {
        return Err(ValueError::NotCombining(collective.name()));
    }
    let n = schedule.n();
    if initial.len() != n as usize {
        return Err(ValueError::Count {
            given: initial.len(),
            n,
        });
    }
    if operands == Operands::Commutative && n > 4096 {
        return Err(ValueError::TooLarge(n));
    }
    let base = schedule.base().refine(
        model
            .time_base()
            .map_err(CheckError::from)?
            .ticks_per_unit(),
    )?;
    let timing = model.timing(base).map_err(CheckError::from)?.combining();
    let scale = base.ticks_per_unit() / schedule.base().ticks_per_unit();
    let mut state = State::new(n, initial, operands);
    let mut order: Vec<(Ticks, u32, u32, u32)> = Vec::with_capacity(schedule.len());
    for s in schedule.sends() {
        if s.to >= n || s.to == s.from {
            let at = s.at.saturating_mul(scale);
            return Err(ValueError::BadReceiver {
                at,
                from: s.from,
                to: s.to,
            });
        }
        let at = s.at.checked_mul(scale).ok_or(TimeError::Overflow)?;
        order.push((at, order.len() as u32, s.from, s.to));
    }
    order.sort_unstable();
    // In flight: (arrival, send id) → (sender, receiver, carried value, carried run or set).
    let mut pending: BinaryHeap<Reverse<(Ticks, u32)>> = BinaryHeap::new();
    let mut carried: Vec<Option<Carried<T>>> = vec![None; order.len()];
    for &(at, id, from, to) in &order {
        state.deliver(&mut pending, &mut carried, Some(at), &mut op)?;
        carried[id as usize] = Some(state.snapshot(from, to));
        let arrival = at.checked_add(timing.latency).ok_or(TimeError::Overflow)?;
        pending.push(Reverse((arrival, id)));
    }
    state.deliver(&mut pending, &mut carried, None, &mut op)?;
    state.finish(collective, base)
}

/// A value in flight.
#[derive(Debug, Clone)]
struct Carried<T> {
    /// Sender.
    from: u32,
    /// Receiver.
    to: u32,
    /// The sender's value at the send's start.
    value: T,
    /// Its run.
    span: Span,
    /// Its set (commutative mode).
    set: Vec<u64>,
}

/// Per-processor values and what they cover.
struct State<T> {
    /// Processor count.
    n: u32,
    /// The ordering rule.
    operands: Operands,
    /// Current values.
    values: Vec<T>,
    /// Current runs.
    spans: Vec<Span>,
    /// Current sets, `words` per processor (commutative mode only).
    sets: Vec<u64>,
    /// Words per set.
    words: usize,
    /// When each processor's value last changed.
    last: Vec<Ticks>,
}

impl<T: Clone> State<T> {
    /// Everyone holds its own value.
    fn new(n: u32, values: Vec<T>, operands: Operands) -> State<T> {
        let words = if operands == Operands::Commutative {
            (n as usize).div_ceil(64)
        } else {
            0
        };
        let mut sets = vec![0u64; words * n as usize];
        for p in 0..n as usize {
            if words > 0 {
                sets[p * words + p / 64] |= 1 << (p % 64);
            }
        }
        State {
            n,
            operands,
            values,
            spans: (0..n).map(|p| Span { start: p, len: 1 }).collect(),
            sets,
            words,
            last: vec![0; n as usize],
        }
    }

    /// What a send from `from` carries now.
    fn snapshot(&self, from: u32, to: u32) -> Carried<T> {
        let p = from as usize;
        Carried {
            from,
            to,
            value: self.values[p].clone(),
            span: self.spans[p],
            set: self.sets[p * self.words..(p + 1) * self.words].to_vec(),
        }
    }

    /// Applies every arrival at or before `until` (all if `None`), grouping simultaneous
    /// arrivals at one processor.
    fn deliver(
        &mut self,
        pending: &mut BinaryHeap<Reverse<(Ticks, u32)>>,
        carried: &mut [Option<Carried<T>>],
        until: Option<Ticks>,
        op: &mut impl FnMut(&T, &T) -> T,
    ) -> Result<(), ValueError> {
        let mut batch: Vec<(Ticks, u32, u32)> = Vec::new();
        while let Some(&Reverse((a, id))) = pending.peek() {
            if until.is_some_and(|u| a > u) {
                break;
            }
            pending.pop();
            let to = carried[id as usize].as_ref().map_or(0, |c| c.to);
            batch.push((a, to, id));
        }
        batch.sort_unstable();
        let mut i = 0;
        while i < batch.len() {
            let (a, to, _) = batch[i];
            let mut group: Vec<Carried<T>> = Vec::new();
            while i < batch.len() && batch[i].0 == a && batch[i].1 == to {
                if let Some(c) = carried[batch[i].2 as usize].take() {
                    group.push(c);
                }
                i += 1;
            }
            self.arrive_all(a, to, group, op)?;
        }
        Ok(())
    }

    /// Combines the simultaneous arrivals `group` at `q`, in an order that keeps runs adjacent.
    fn arrive_all(
        &mut self,
        at: Ticks,
        q: u32,
        mut group: Vec<Carried<T>>,
        op: &mut impl FnMut(&T, &T) -> T,
    ) -> Result<(), ValueError> {
        while !group.is_empty() {
            // Prefer a run that follows the held one, then one that precedes it.
            let pick = group
                .iter()
                .position(|c| self.fits(q, c) == Ok(false))
                .or_else(|| group.iter().position(|c| self.fits(q, c).is_ok()))
                .unwrap_or(0);
            let c = group.swap_remove(pick);
            self.arrive(at, q, c, op)?;
        }
        Ok(())
    }

    /// Whether `c` can be combined into `q`'s value; `Ok(true)`: received on the left.
    fn fits(&self, q: u32, c: &Carried<T>) -> Result<bool, ValueError> {
        let held = self.spans[q as usize];
        let got = c.span;
        let n = u64::from(self.n);
        let err_dup = |rank: u32| ValueError::DoubleCount {
            at: 0,
            processor: q,
            from: c.from,
            rank,
        };
        match self.operands {
            Operands::Commutative => {
                let w = self.words;
                let mine = &self.sets[q as usize * w..(q as usize + 1) * w];
                match super::first_common(mine, &c.set) {
                    Some(rank) => Err(err_dup(rank)),
                    None => Ok(false),
                }
            }
            Operands::Linear => {
                let (h0, h1) = (
                    u64::from(held.start),
                    u64::from(held.start) + u64::from(held.len),
                );
                let (g0, g1) = (
                    u64::from(got.start),
                    u64::from(got.start) + u64::from(got.len),
                );
                if h0.max(g0) < h1.min(g1) {
                    Err(err_dup(h0.max(g0) as u32))
                } else if h1 == g0 {
                    Ok(false)
                } else if g1 == h0 {
                    Ok(true)
                } else {
                    Err(self.non_adjacent(q, c))
                }
            }
            Operands::Cyclic => {
                let (hl, gl) = (u64::from(held.len), u64::from(got.len));
                // Offset of the received start from the held start, mod n.
                let d = (u64::from(got.start) + n - u64::from(held.start)) % n;
                if d < hl {
                    return Err(err_dup(got.start));
                }
                // The held start lies inside the received run?
                let e = (u64::from(held.start) + n - u64::from(got.start)) % n;
                if e < gl || hl + gl > n {
                    return Err(err_dup(held.start));
                }
                // Linear adjacency first, so a cyclic evaluation of a rank-order schedule keeps
                // rank order when the last combine closes the circle.
                let (hs, gs) = (u64::from(held.start), u64::from(got.start));
                if hs + hl == gs {
                    Ok(false)
                } else if gs + gl == hs {
                    Ok(true)
                } else if d == hl {
                    Ok(false)
                } else if e == gl {
                    Ok(true)
                } else {
                    Err(self.non_adjacent(q, c))
                }
            }
        }
    }

    /// The non-adjacency error for `c` at `q`.
    fn non_adjacent(&self, q: u32, c: &Carried<T>) -> ValueError {
        ValueError::NonAdjacent {
            at: 0,
            processor: q,
            from: c.from,
            held: self.spans[q as usize],
            received: c.span,
        }
    }

    /// Combines `c` into `q`'s value at time `at`.
    fn arrive(
        &mut self,
        at: Ticks,
        q: u32,
        c: Carried<T>,
        op: &mut impl FnMut(&T, &T) -> T,
    ) -> Result<(), ValueError> {
        let left = self.fits(q, &c).map_err(|e| match e {
            ValueError::DoubleCount {
                processor,
                from,
                rank,
                ..
            } => ValueError::DoubleCount {
                at,
                processor,
                from,
                rank,
            },
            ValueError::NonAdjacent {
                processor,
                from,
                held,
                received,
                ..
            } => ValueError::NonAdjacent {
                at,
                processor,
                from,
                held,
                received,
            },
            e => e,
        })?;
        let p = q as usize;
        let held = self.spans[p];
        self.values[p] = if left {
            op(&c.value, &self.values[p])
        } else {
            op(&self.values[p], &c.value)
        };
        let start = if left { c.span.start } else { held.start };
        self.spans[p] = Span {
            start: if self.operands == Operands::Commutative {
                0
            } else {
                start
            },
            len: held.len + c.span.len,
        };
        let w = self.words;
        for (x, y) in self.sets[p * w..(p + 1) * w].iter_mut().zip(&c.set) {
            *x |= y;
        }
        self.last[p] = at;
        Ok(())
    }

    /// Applies the collective's finishing rule.
    fn finish(
        self,
        collective: Collective,
        base: crate::time::TimeBase,
    ) -> Result<Evaluation<T>, ValueError> {
        let mut makespan = 0;
        for q in 0..self.n {
            let s = self.spans[q as usize];
            let ok = match collective {
                Collective::Reduce { root } if root != q => continue,
                Collective::Prefix => {
                    let prefix_set = self.words == 0
                        || (0..self.n as usize).all(|x| {
                            let has = self.sets[q as usize * self.words + x / 64] >> (x % 64) & 1;
                            (has == 1) == (x <= q as usize)
                        });
                    s.len == q + 1
                        && (self.operands == Operands::Commutative || s.start == 0)
                        && prefix_set
                }
                _ => s.len == self.n,
            };
            if !ok {
                return Err(ValueError::Incomplete {
                    processor: q,
                    held: s,
                });
            }
            makespan = makespan.max(self.last[q as usize]);
        }
        Ok(Evaluation {
            values: self.values,
            spans: self.spans,
            makespan,
            base,
        })
    }
}
