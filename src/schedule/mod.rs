//! Schedules: which processor sends what to whom, and when — and the generators that make them.
//!
//! A [`Schedule`] knows its [`Collective`] and holds its sends grouped by sender, each sender's
//! sends in time order (the per-processor send order the runtime executes). Times are ticks of
//! the schedule's [`TimeBase`]. Generators never simulate: they construct sends from the papers'
//! rules, or place them with [`place`] from per-processor send orders.
//!
//! Generators:
//! 1. `postal` — Algorithm BCAST on the generalized Fibonacci tree (Bar-Noy & Kipnis).
//! 2. `logp` — the optimal single-item tree B(P) (Karp et al.).
//! 3. `classic` — the broadcasts MPI libraries use: binomial, binary, k-nomial, chain, star,
//!    scatter + allgather; and DTREE(d).
//! 4. `multi` — postal multi-message broadcast: REPEAT, PACK, PIPELINE (Bar-Noy & Kipnis §4)
//!    and a greedy schedule on the exact model.
//! 5. `fibonacci` — 1-port multi-message broadcast on generalized Fibonacci trees
//!    (Bruck, Cypher & Ho).
//! 6. `optimal_1port` — round-optimal `m − 1 + ⌈log2 n⌉` 1-port broadcast for every `n`.
//! 7. `logp_collectives` — reduction by time reversal, summation S(t), allreduce with
//!    combining, all-to-all broadcast (Karp et al. §4–5).
//! 8. `kport` — k-port multi-message broadcast: the k-tree and rotation algorithms (Bar-Noy & Ho).
//! 9. `fat_tree` — Broadcast, Sparse-Broadcast, pipelined broadcast, product and prefix on the
//!    ideal fat-tree (Bilardi et al.).
//! 10. `hier` — the hierarchical model: leaders per node with a tree per stage, the greedy
//!     earliest-arrival tree, and the classic trees under per-pair costs.
//!
//! [`registry`] registers each of them once (name, collective, models, the planner's parameter
//! sweep, the function that builds it); [`generate`] dispatches through it.

mod classic;
mod fat_tree;
mod fibonacci;
mod generate;
mod goal;
mod hier;
mod json;
mod kport;
mod logp;
pub mod logp_collectives;
mod multi;
mod optimal_1port;
mod place;
mod postal;
pub mod registry;

pub use generate::{generate, Algorithm, Request};
pub use goal::{Goal, GoalDep, GoalError, GoalOp, GoalRank};
pub use hier::{default_leaders, earliest_arrival, leaders, split_depths, stage_members, Leaders};
pub use json::ScheduleJsonError;
pub use logp_collectives::Summation;
pub use place::{place, Orders};

use crate::model::ModelError;
use crate::time::{Ticks, TimeBase, TimeError};

/// Which collective a schedule performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Collective {
    /// One root holds `blocks` blocks; at the end every processor holds every block.
    Broadcast {
        /// The processor that holds the data at time 0.
        root: u32,
        /// Number of blocks (`m ≥ 1`).
        blocks: u32,
    },
    /// Every processor holds `items` items of its own; at the end every processor holds all.
    #[serde(rename = "alltoall")]
    AllToAll {
        /// Items per processor (`k ≥ 1`).
        items: u32,
    },
    /// Every processor contributes a value; at the end `root` holds every contribution once.
    Reduce {
        /// The processor that ends with the result.
        root: u32,
    },
    /// Every processor ends with every contribution exactly once.
    Allreduce,
    /// Processor `i` ends with the contributions of `0 ..= i`, each exactly once.
    Prefix,
}

impl Collective {
    /// A short name (`broadcast`, `alltoall`, `reduce`, `allreduce`, `prefix`).
    pub fn name(&self) -> &'static str {
        match self {
            Collective::Broadcast { .. } => "broadcast",
            Collective::AllToAll { .. } => "alltoall",
            Collective::Reduce { .. } => "reduce",
            Collective::Allreduce => "allreduce",
            Collective::Prefix => "prefix",
        }
    }

    /// Whether sends carry partial values that are combined on receipt.
    pub fn is_combining(&self) -> bool {
        matches!(
            self,
            Collective::Reduce { .. } | Collective::Allreduce | Collective::Prefix
        )
    }

    /// How many distinct `what` values a send may carry for `n` processors (0 for combining).
    pub fn what_count(&self, n: u32) -> u64 {
        match *self {
            Collective::Broadcast { blocks, .. } => u64::from(blocks),
            Collective::AllToAll { items } => u64::from(n) * u64::from(items),
            _ => 0,
        }
    }
}

/// One send of a schedule: `from` sends `what` to `to` at `at` (named `Transfer`, not `Send`, so
/// that it never shadows `std::marker::Send`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Transfer {
    /// Start time, in ticks of the schedule's base.
    pub at: Ticks,
    /// Sender.
    pub from: u32,
    /// Receiver.
    pub to: u32,
    /// What is sent: a block (broadcast), `origin · items + item` (all-to-all), or 0 — the
    /// sender's current partial value (combining collectives).
    pub what: u32,
}

/// Errors from schedule construction and generators.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScheduleError {
    /// `n = 0`.
    #[error("a schedule needs at least one processor (n ≥ 1)")]
    NoProcessors,
    /// `m = 0` or `k = 0`.
    #[error("a broadcast needs at least one block (m ≥ 1)")]
    NoBlocks,
    /// The root is not a processor.
    #[error("root {root} is out of range for n = {n}")]
    Root {
        /// The root given.
        root: u32,
        /// The processor count.
        n: u32,
    },
    /// The algorithm does not apply to this model or problem.
    #[error("algorithm {algorithm} does not apply: {why}")]
    NotApplicable {
        /// The algorithm's name.
        algorithm: String,
        /// Why.
        why: String,
    },
    /// Per-processor send orders ask a processor to forward what it never receives.
    #[error("processor {processor} is to send {what} but never receives it")]
    Deadlock {
        /// The stuck processor.
        processor: u32,
        /// What it waits for.
        what: u32,
    },
    /// Too many sends or processors for the 32-bit indices herald uses.
    #[error("the schedule is too large ({0})")]
    TooLarge(String),
    /// Model parameters.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Exact time.
    #[error(transparent)]
    Time(#[from] TimeError),
}

/// A schedule: a collective, a processor count, and sends grouped by sender in time order.
///
/// Storage is compact — 16 bytes per send plus 4 per processor, 12 per send when every payload is
/// 0 (a one-block broadcast, a combining collective) — because schedules of millions of processors
/// are checked routinely.
///
/// # Examples
///
/// ```
/// use herald::{Collective, Schedule, time::TimeBase};
/// let mut b = Schedule::builder(3, Collective::Broadcast { root: 0, blocks: 1 }, TimeBase::UNIT)?;
/// b.push(0, 0, 1, 0);
/// b.push(1, 0, 2, 0);
/// let s = b.build()?;
/// assert_eq!(s.len(), 2);
/// assert_eq!(s.sends_of(0).map(|x| x.to).collect::<Vec<_>>(), [1, 2]);
/// # Ok::<(), herald::schedule::ScheduleError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Processor count.
    n: u32,
    /// The collective.
    collective: Collective,
    /// What a tick is worth.
    base: TimeBase,
    /// `offsets[p] .. offsets[p + 1]` index the sends of processor `p`; length `n + 1`.
    offsets: Vec<u32>,
    /// Send start times; within each sender nondecreasing.
    at: Vec<Ticks>,
    /// Receivers (may be out of range in a hand-written schedule: the checker reports it).
    to: Vec<u32>,
    /// Payload ids; empty when every payload is 0 (then implicit).
    what: Vec<u32>,
}

/// A schedule's payload column: `p[i]` is send `i`'s payload (0 for every send if none is stored).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Payloads<'a>(&'a [u32]);

impl std::ops::Index<usize> for Payloads<'_> {
    type Output = u32;

    #[inline]
    fn index(&self, i: usize) -> &u32 {
        if self.0.is_empty() {
            &0
        } else {
            &self.0[i]
        }
    }
}

impl Schedule {
    /// Starts a schedule for `n` processors.
    ///
    /// # Errors
    /// [`ScheduleError::NoProcessors`], [`ScheduleError::NoBlocks`], [`ScheduleError::Root`].
    pub fn builder(
        n: u32,
        collective: Collective,
        base: TimeBase,
    ) -> Result<ScheduleBuilder, ScheduleError> {
        validate(n, &collective)?;
        Ok(ScheduleBuilder {
            n,
            collective,
            base,
            at: vec![],
            from: vec![],
            to: vec![],
            what: vec![],
        })
    }

    /// Processor count.
    pub fn n(&self) -> u32 {
        self.n
    }

    /// The collective.
    pub fn collective(&self) -> Collective {
        self.collective
    }

    /// The tick base of the send times.
    pub fn base(&self) -> TimeBase {
        self.base
    }

    /// Number of sends.
    pub fn len(&self) -> usize {
        self.at.len()
    }

    /// Whether there are no sends.
    pub fn is_empty(&self) -> bool {
        self.at.is_empty()
    }

    /// The sends of processor `p`, in its send order (time order).
    pub fn sends_of(&self, p: u32) -> impl ExactSizeIterator<Item = Transfer> + '_ {
        let range = self.range(p);
        let what = self.payloads();
        range.map(move |i| Transfer {
            at: self.at[i],
            from: p,
            to: self.to[i],
            what: what[i],
        })
    }

    /// Index range of processor `p`'s sends in the storage order.
    pub(crate) fn range(&self, p: u32) -> std::ops::Range<usize> {
        self.offsets[p as usize] as usize..self.offsets[p as usize + 1] as usize
    }

    /// All sends, grouped by sender, each sender's in time order.
    pub fn sends(&self) -> impl Iterator<Item = Transfer> + '_ {
        (0..self.n).flat_map(move |p| self.sends_of(p))
    }

    /// All sends in global time order (ties by sender, then send order).
    pub fn sends_by_time(&self) -> Vec<Transfer> {
        let mut all: Vec<Transfer> = self.sends().collect();
        all.sort_by_key(|s| (s.at, s.from));
        all
    }

    /// Raw columns, for the checker: `(offsets, at, to, what)`.
    pub(crate) fn columns(&self) -> (&[u32], &[Ticks], &[u32], Payloads<'_>) {
        (&self.offsets, &self.at, &self.to, self.payloads())
    }

    /// The payload column.
    fn payloads(&self) -> Payloads<'_> {
        Payloads(&self.what)
    }

    /// A schedule of `n` processors with no sends yet, for generators that compute their
    /// sends in place: they fill the columns (`offsets`, length `n + 1`, grouped by sender; each
    /// sender's times nondecreasing; `what` may stay empty, every payload 0), then call
    /// [`checked`](Self::checked).
    ///
    /// # Errors
    /// [`ScheduleError`] for an invalid problem.
    pub(crate) fn empty(
        n: u32,
        collective: Collective,
        base: TimeBase,
    ) -> Result<Schedule, ScheduleError> {
        validate(n, &collective)?;
        Ok(Schedule {
            n,
            collective,
            base,
            offsets: Vec::new(),
            at: Vec::new(),
            to: Vec::new(),
            what: Vec::new(),
        })
    }

    /// The schedule, once its columns are checked to fit together; an all-zero `what` is
    /// dropped (every payload 0 is implicit).
    ///
    /// # Errors
    /// [`ScheduleError`] for an invalid problem or columns that do not fit together.
    pub(crate) fn checked(mut self) -> Result<Schedule, ScheduleError> {
        let n = self.n;
        validate(n, &self.collective)?;
        let (offsets, at) = (&self.offsets, &self.at);
        let len = at.len();
        let fits = offsets.len() == n as usize + 1
            && offsets[0] == 0
            && offsets[n as usize] as usize == len
            && self.to.len() == len
            && (self.what.is_empty() || self.what.len() == len)
            && offsets.windows(2).all(|w| w[0] <= w[1])
            && (0..n as usize)
                .all(|p| at[offsets[p] as usize..offsets[p + 1] as usize].is_sorted());
        if !fits {
            return Err(ScheduleError::TooLarge(
                "columns that do not fit together (a generator's bug)".into(),
            ));
        }
        if self.what.iter().all(|&w| w == 0) {
            self.what = Vec::new();
        }
        Ok(self)
    }

    /// The same schedule with processor `r` renamed `map(r)`; `map` must be a permutation of
    /// `0..n`. The collective's root is renamed too.
    ///
    /// # Errors
    /// [`ScheduleError`] only if the result is invalid (not for a permutation).
    pub fn relabel(&self, map: impl Fn(u32) -> u32) -> Result<Schedule, ScheduleError> {
        let collective = match self.collective {
            Collective::Broadcast { root, blocks } => Collective::Broadcast {
                root: map(root),
                blocks,
            },
            Collective::Reduce { root } => Collective::Reduce { root: map(root) },
            c => c,
        };
        let mut b = Schedule::builder(self.n, collective, self.base)?;
        b.reserve(self.len());
        for s in self.sends() {
            let to = if s.to < self.n { map(s.to) } else { s.to };
            b.push(s.at, map(s.from), to, s.what);
        }
        b.build()
    }

    /// The same schedule with root 0 moved to `root` (ranks rotate: `r ↦ (r + root) mod n`).
    ///
    /// # Errors
    /// [`ScheduleError::Root`] if `root ≥ n`.
    pub fn rooted_at(&self, root: u32) -> Result<Schedule, ScheduleError> {
        self.clone().into_rooted(root)
    }

    /// [`rooted_at`](Self::rooted_at) in place: the columns rotate by whole senders, the
    /// receivers are renamed, nothing is copied.
    ///
    /// # Errors
    /// [`ScheduleError::Root`] if `root ≥ n`.
    pub(crate) fn into_rooted(mut self, root: u32) -> Result<Schedule, ScheduleError> {
        let n = self.n;
        if root >= n {
            return Err(ScheduleError::Root { root, n });
        }
        if root == 0 {
            return Ok(self);
        }
        self.collective = match self.collective {
            Collective::Broadcast { blocks, .. } => Collective::Broadcast { root, blocks },
            Collective::Reduce { .. } => Collective::Reduce { root },
            c => c,
        };
        // New rank q is old rank (q − root) mod n: new ranks 0 … root − 1 are old n − root … n − 1.
        let split = (n - root) as usize;
        let cut = self.offsets[split] as usize;
        self.at.rotate_left(cut);
        self.to.rotate_left(cut);
        if !self.what.is_empty() {
            self.what.rotate_left(cut);
        }
        let total = self.offsets[n as usize];
        let tail = total - self.offsets[split];
        let mut offsets = Vec::with_capacity(n as usize + 1);
        offsets.extend(
            self.offsets[split..n as usize]
                .iter()
                .map(|&o| o - self.offsets[split]),
        );
        offsets.extend(self.offsets[..=split].iter().map(|&o| o + tail));
        self.offsets = offsets;
        let (n64, r64) = (u64::from(n), u64::from(root));
        for t in &mut self.to {
            if *t < n {
                *t = ((u64::from(*t) + r64) % n64) as u32;
            }
        }
        Ok(self)
    }

    /// The same schedule without receptions of what the receiver already holds: for each
    /// (receiver, payload) only the send that arrives first (ties: the earlier in storage order)
    /// is kept, and nothing is sent to a processor that holds the payload initially. `arrival`
    /// gives a send's arrival time under the model at hand (the schedule layer does not time).
    ///
    /// Dropping a later reception keeps every processor's first-holding time, so every remaining
    /// send is as causal as before, and it only removes busy intervals and channel load: a legal
    /// schedule stays legal with the same makespan. Combining collectives are returned unchanged
    /// (every partial value counts).
    ///
    /// # Errors
    /// [`ScheduleError::TooLarge`] if `n · payloads` exceeds `2^32`.
    pub(crate) fn first_receptions_only(
        &self,
        arrival: impl Fn(&Transfer) -> Ticks,
    ) -> Result<Schedule, ScheduleError> {
        let width = self.collective.what_count(self.n);
        if width == 0 {
            return Ok(self.clone());
        }
        let slots = u64::from(self.n) * width;
        if slots > 1 << 32 {
            return Err(ScheduleError::TooLarge(format!(
                "{} processors × {width} payloads",
                self.n
            )));
        }
        let slot = |s: &Transfer| (u64::from(s.to) * width + u64::from(s.what)) as usize;
        let holds = |p: u32, w: u32| match self.collective {
            Collective::Broadcast { root, .. } => p == root,
            Collective::AllToAll { items } => w / items == p,
            _ => false,
        };
        let mut first: Vec<Option<(Ticks, usize)>> = vec![None; slots as usize];
        for (i, s) in self.sends().enumerate() {
            if s.to >= self.n || u64::from(s.what) >= width || holds(s.to, s.what) {
                continue;
            }
            let a = arrival(&s);
            let f = &mut first[slot(&s)];
            if f.is_none_or(|(b, _)| a < b) {
                *f = Some((a, i));
            }
        }
        let mut b = Schedule::builder(self.n, self.collective, self.base)?;
        for (i, s) in self.sends().enumerate() {
            let keep = s.to < self.n
                && u64::from(s.what) < width
                && first[slot(&s)].is_some_and(|(_, k)| k == i);
            if keep {
                b.push(s.at, s.from, s.to, s.what);
            }
        }
        b.build()
    }

    /// The same sends with times in a finer base (a multiple of this one).
    ///
    /// # Errors
    /// [`TimeError`] if `base` is not a multiple, or a time overflows.
    pub fn rebased(&self, base: TimeBase) -> Result<Schedule, TimeError> {
        let at = self
            .at
            .iter()
            .map(|&t| base.convert(t, self.base))
            .collect::<Result<_, _>>()?;
        Ok(Schedule {
            base,
            at,
            ..self.clone()
        })
    }
}

/// Checks `n` and the collective's parameters.
fn validate(n: u32, collective: &Collective) -> Result<(), ScheduleError> {
    if n == 0 {
        return Err(ScheduleError::NoProcessors);
    }
    match *collective {
        Collective::Broadcast { blocks: 0, .. } | Collective::AllToAll { items: 0 } => {
            Err(ScheduleError::NoBlocks)
        }
        Collective::Broadcast { root, .. } | Collective::Reduce { root } if root >= n => {
            Err(ScheduleError::Root { root, n })
        }
        Collective::AllToAll { items } if u64::from(n) * u64::from(items) > u64::from(u32::MAX) => {
            Err(ScheduleError::TooLarge(format!(
                "{n} processors × {items} items"
            )))
        }
        _ => Ok(()),
    }
}

/// Collects sends in any order; [`build`](Self::build) groups them by sender in time order.
#[derive(Debug, Clone)]
pub struct ScheduleBuilder {
    /// Processor count.
    n: u32,
    /// The collective.
    collective: Collective,
    /// Tick base.
    base: TimeBase,
    /// Columns of the sends so far, in push order.
    at: Vec<Ticks>,
    /// Senders.
    from: Vec<u32>,
    /// Receivers.
    to: Vec<u32>,
    /// Payload ids.
    what: Vec<u32>,
}

impl ScheduleBuilder {
    /// Reserves room for `additional` more sends.
    pub fn reserve(&mut self, additional: usize) {
        self.at.reserve_exact(additional);
        self.from.reserve_exact(additional);
        self.to.reserve_exact(additional);
        self.what.reserve_exact(additional);
    }

    /// Adds a send. Senders out of range are rejected by [`build`](Self::build); receivers and
    /// payloads out of range are kept for the checker to report.
    pub fn push(&mut self, at: Ticks, from: u32, to: u32, what: u32) {
        self.at.push(at);
        self.from.push(from);
        self.to.push(to);
        self.what.push(what);
    }

    /// Number of sends so far.
    pub fn len(&self) -> usize {
        self.at.len()
    }

    /// Whether no send was pushed.
    pub fn is_empty(&self) -> bool {
        self.at.is_empty()
    }

    /// Groups the sends by sender (stable counting sort), each sender's by time, in place.
    ///
    /// # Errors
    /// [`ScheduleError::TooLarge`] for more than `u32::MAX` sends or a sender out of range.
    pub fn build(self) -> Result<Schedule, ScheduleError> {
        let ScheduleBuilder {
            n,
            collective,
            base,
            mut at,
            from,
            mut to,
            mut what,
        } = self;
        let len = at.len();
        if len >= u32::MAX as usize {
            return Err(ScheduleError::TooLarge(format!("{len} sends")));
        }
        if let Some(&p) = from.iter().find(|&&p| p >= n) {
            return Err(ScheduleError::TooLarge(format!(
                "sender {p} is not below n = {n}"
            )));
        }
        let mut offsets = vec![0u32; n as usize + 1];
        for &p in &from {
            offsets[p as usize + 1] += 1;
        }
        for p in 0..n as usize {
            offsets[p + 1] += offsets[p];
        }
        // perm[dest] = source index: a stable counting sort by sender.
        let mut next = offsets.clone();
        let mut perm = vec![0u32; len];
        for (i, &p) in from.iter().enumerate() {
            perm[next[p as usize] as usize] = i as u32;
            next[p as usize] += 1;
        }
        drop((from, next));
        gather_in_place(&mut perm, &mut at, &mut to, &mut what);
        drop(perm);
        for p in 0..n as usize {
            let r = offsets[p] as usize..offsets[p + 1] as usize;
            if !at[r.clone()].is_sorted() {
                let mut seg: Vec<(Ticks, u32, u32)> =
                    r.clone().map(|i| (at[i], to[i], what[i])).collect();
                seg.sort_by_key(|x| x.0); // stable: equal times keep push order
                for (i, (a, t, w)) in r.zip(seg) {
                    (at[i], to[i], what[i]) = (a, t, w);
                }
            }
        }
        Schedule {
            n,
            collective,
            base,
            offsets,
            at,
            to,
            what,
        }
        .checked()
    }
}

/// Applies the gather permutation `perm` (`new[i] = old[perm[i]]`) to three columns in place,
/// following cycles; `perm` is consumed as the visited marker.
fn gather_in_place(perm: &mut [u32], at: &mut [Ticks], to: &mut [u32], what: &mut [u32]) {
    const DONE: u32 = u32::MAX;
    for start in 0..perm.len() {
        if perm[start] == DONE || perm[start] as usize == start {
            perm[start] = DONE;
            continue;
        }
        let saved = (at[start], to[start], what[start]);
        let mut j = start;
        loop {
            let k = perm[j] as usize;
            perm[j] = DONE;
            if k == start {
                (at[j], to[j], what[j]) = saved;
                break;
            }
            (at[j], to[j], what[j]) = (at[k], to[k], what[k]);
            j = k;
        }
    }
}

#[cfg(test)]
mod tests;
