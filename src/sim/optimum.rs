//! True optima of small multi-block broadcasts, by exhaustive search under a model's rules.
//!
//! [`optimum`] returns the least makespan of any schedule broadcasting `m` blocks from processor
//! 0 to `n` processors, with one schedule that reaches it. It knows nothing of herald's
//! generators: it enumerates schedules under the model's rules (postal, LogP, 1-port, k-port),
//! and the checker is the judge of what it returns (`tests/optimum.rs` checks every schedule it
//! finds). Tables against every algorithm and the lower bounds: `docs/optima.md`
//! (`cargo run --release --example optima`).
//!
//! # Round models (1-port, k-port): breadth-first search over rounds
//!
//! A round is any set of transfers `(sender, receiver, block)` with at most `k` per sender, to
//! distinct receivers, and at most `k` per receiver, from distinct senders, each sender holding
//! its block at the round's start (a block received in a round is held from the next). The
//! search expands every such round, so the first round count at which every processor holds
//! every block is the optimum. Reductions, none of which loses a schedule:
//!
//! * **No useless transfers.** A transfer of a block the receiver holds, or receives twice in the
//!   round, changes no holding; dropping it only frees ports.
//! * **Processors are interchangeable.** The rules name no processor, so a state is the multiset
//!   of the non-root processors' holdings (a processor holding everything acts like the root).
//! * **First visits only.** A state reached again in a later round cannot finish sooner than
//!   from its first visit, so it is not expanded again.
//!
//! A schedule is read back by keeping every round's states, marking backwards those from which
//! the last round's full state is reachable, and replaying forwards through marked states.
//!
//! # Timed models (postal with any rational λ, LogP): depth-first search on the tick grid
//!
//! Time runs in ticks of the model's [`TimeBase`] (λ's denominator for postal; the LogP
//! parameters' common denominator), so every rule is a difference constraint between send
//! starts with a constant on the grid. Rounding every send start of a legal schedule down to the
//! grid keeps every such constraint and makes no arrival later, so some optimal schedule lives
//! on the grid. From the [`Timing`]: a send from `p` at `t` occupies `p`'s send port during
//! `[t, t + send_busy)`; consecutive sends of `p` start `send_step` apart; the receiver `q` is
//! busy during `[t + latency − recv_busy, t + latency)`, its receive starts `recv_step` apart
//! (and `recv_gap` after its previous, already finished, receive); with a shared CPU (LogP) a
//! send interval never overlaps a receive interval of the same processor; the block is held
//! from `t + latency`. LogP's in-flight capacity `⌈L/g⌉` is implied by the gaps.
//!
//! * **Decisions.** At every tick each processor free to send either sends one block it holds to
//!   one processor that neither holds nor expects it (no useless sends, as above), whose receive
//!   interval fits, or waits. Every combination is tried.
//! * **State.** Per processor: blocks held, ticks until each expected block arrives, ticks until
//!   it may send again, ticks since its last receive started (capped). Processors are
//!   interchangeable given that, so a state is the sorted list of these; a memo keeps, per
//!   state, the largest remaining budget known to be too small.
//! * **Bounds** (pruning only; each follows from the rules): every expected block must arrive;
//!   a processor missing `c` blocks not in flight receives them at least `latency` from now and
//!   `recv_step` apart; and a block reaches, by time `T`, at most `Σ U(T − s)` processors, where a
//!   processor able to send it from `s` informs at most `U(x)` processors within `x` (itself
//!   included): `U(x) = 1` for `x < latency`, else `U(x − send_step) + U(x − latency)`.
//!
//! Iterative deepening on the makespan, from the largest bound, gives the optimum.

use crate::model::{CostModel, Model, ModelError, Timing};
use crate::schedule::{Collective, Schedule, ScheduleError};
use crate::time::{Ticks, TimeBase};
use std::collections::{HashMap, HashSet};

/// The largest `n` the searches take.
pub const OPTIMUM_MAX_N: u32 = 8;
/// The largest `m` the searches take.
pub const OPTIMUM_MAX_M: u32 = 4;

/// An optimal broadcast found by [`optimum`].
#[derive(Debug, Clone)]
pub struct Optimum {
    /// The least makespan, in ticks of the schedule's base.
    pub makespan: Ticks,
    /// A schedule that reaches it (root 0).
    pub schedule: Schedule,
    /// Search nodes visited (states expanded).
    pub nodes: u64,
}

/// Why [`optimum`] gives no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OptimumError {
    /// The model or problem is outside what the search handles.
    #[error("exhaustive search: {0}")]
    Unsupported(String),
    /// The search visited more nodes than allowed.
    #[error("exhaustive search stopped after {0} nodes")]
    Limit(u64),
    /// Model parameters.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Building the schedule.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
}

/// The optimal broadcast of `m` blocks from processor 0 to `n` processors under `model`, by
/// exhaustive search (module docs), visiting at most `node_limit` states.
///
/// Supports the postal, LogP, 1-port and k-port models with `n ≤ 8`, `m ≤ 4`; timed models need
/// their latency and gaps within 60 ticks.
///
/// # Errors
/// [`OptimumError::Unsupported`] outside that range; [`OptimumError::Limit`] when the search
/// needs more nodes.
///
/// # Examples
///
/// ```
/// use herald::{check, Model, Postal, sim::optimum};
/// // postal, λ = 2, n = 3, m = 2: 4 units, one less than any of the paper's algorithms
/// let model = Model::from(Postal::new("2".parse()?)?);
/// let best = optimum(&model, 3, 2, 1_000_000)?;
/// assert_eq!(best.makespan, 4);
/// assert_eq!(check(&best.schedule, &model)?.makespan(), 4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn optimum(model: &Model, n: u32, m: u32, node_limit: u64) -> Result<Optimum, OptimumError> {
    if !(1..=OPTIMUM_MAX_N).contains(&n) || !(1..=OPTIMUM_MAX_M).contains(&m) {
        return Err(OptimumError::Unsupported(format!(
            "n = {n}, m = {m}: the search takes 1 ≤ n ≤ {OPTIMUM_MAX_N}, 1 ≤ m ≤ {OPTIMUM_MAX_M}"
        )));
    }
    match model {
        Model::OnePort(_) => rounds(n, m, 1, node_limit),
        Model::KPort(k) => rounds(n, m, k.k().min(n), node_limit),
        Model::Postal(_) | Model::LogP(_) => {
            let base = model.time_base()?;
            let timing = model.timing(base)?;
            timed(n, m, &timing, node_limit)
        }
        _ => Err(OptimumError::Unsupported(format!(
            "the {} model (postal, logp, oneport and kport are searched)",
            model.name()
        ))),
    }
}

// ---------------------------------------------------------------------------------------------
// Round models

/// One round's transfers `(from, to, block)`.
type Moves = Vec<(u8, u8, u8)>;

/// Every successor of the labelled holdings `held` (index 0 the root) with its transfers.
fn round_successors(held: &[u8], k: usize, out: &mut Vec<(Vec<u8>, Moves)>) {
    let n = held.len();
    let mut load = vec![0usize; n];
    let mut next = held.to_vec();
    let mut moves = Vec::new();
    receivers(held, 1, k, &mut load, &mut next, &mut moves, out);
}

/// Chooses the transfers into receiver `r`, `r + 1`, … recursively.
fn receivers(
    held: &[u8],
    r: usize,
    k: usize,
    load: &mut [usize],
    next: &mut [u8],
    moves: &mut Moves,
    out: &mut Vec<(Vec<u8>, Moves)>,
) {
    if r == held.len() {
        out.push((next.to_vec(), moves.clone()));
        return;
    }
    let mut pairs = Vec::new();
    for (s, &h) in held.iter().enumerate() {
        if s == r || load[s] >= k {
            continue;
        }
        let useful = h & !held[r];
        for b in 0..8u8 {
            if useful >> b & 1 == 1 {
                pairs.push((s, b));
            }
        }
    }
    pick(held, r, k, &pairs, 0, 0, 0, load, next, moves, out);
}

/// Picks the `count`-th transfer into `r` from `pairs[from..]` (or stops picking).
#[allow(clippy::too_many_arguments)]
fn pick(
    held: &[u8],
    r: usize,
    k: usize,
    pairs: &[(usize, u8)],
    from: usize,
    senders: u64,
    count: usize,
    load: &mut [usize],
    next: &mut [u8],
    moves: &mut Moves,
    out: &mut Vec<(Vec<u8>, Moves)>,
) {
    receivers(held, r + 1, k, load, next, moves, out);
    if count == k {
        return;
    }
    for i in from..pairs.len() {
        let (s, b) = pairs[i];
        if senders >> s & 1 == 1 || next[r] >> b & 1 == 1 || load[s] >= k {
            continue;
        }
        load[s] += 1;
        next[r] |= 1 << b;
        moves.push((s as u8, r as u8, b));
        let senders = senders | 1 << s;
        pick(
            held,
            r,
            k,
            pairs,
            i + 1,
            senders,
            count + 1,
            load,
            next,
            moves,
            out,
        );
        moves.pop();
        next[r] &= !(1 << b);
        load[s] -= 1;
    }
}

/// The canonical form: the non-root holdings, sorted.
fn canon(held: &[u8]) -> Vec<u8> {
    let mut s = held[1..].to_vec();
    s.sort_unstable();
    s
}

/// Breadth-first search over rounds (module docs).
fn rounds(n: u32, m: u32, k: u32, node_limit: u64) -> Result<Optimum, OptimumError> {
    let (n, k) = (n as usize, k.max(1) as usize);
    let full = ((1u16 << m) - 1) as u8;
    let mut start = vec![0u8; n];
    start[0] = full;
    let mut layers: Vec<HashMap<Vec<u8>, Vec<u8>>> =
        vec![HashMap::from([(canon(&start), start.clone())])];
    let mut seen: HashSet<Vec<u8>> = layers[0].keys().cloned().collect();
    let mut nodes = 0u64;
    let mut succ = Vec::new();
    while !layers[layers.len() - 1]
        .keys()
        .any(|s| s.iter().all(|&h| h == full))
    {
        let mut next = HashMap::new();
        for held in layers[layers.len() - 1].values() {
            nodes += 1;
            if nodes > node_limit {
                return Err(OptimumError::Limit(nodes));
            }
            succ.clear();
            round_successors(held, k, &mut succ);
            for (h, _) in succ.drain(..) {
                let c = canon(&h);
                if seen.insert(c.clone()) {
                    next.insert(c, h);
                }
            }
        }
        if next.is_empty() {
            return Err(OptimumError::Unsupported("no progress (n = 1?)".into()));
        }
        layers.push(next);
    }
    // backwards: the states of each layer from which the full state is reachable in time
    let last = layers.len() - 1;
    let mut good: Vec<HashSet<Vec<u8>>> = vec![HashSet::new(); last + 1];
    good[last] = layers[last]
        .keys()
        .filter(|s| s.iter().all(|&h| h == full))
        .cloned()
        .collect();
    for t in (0..last).rev() {
        let mut g = HashSet::new();
        for (c, held) in &layers[t] {
            succ.clear();
            round_successors(held, k, &mut succ);
            if succ.iter().any(|(h, _)| good[t + 1].contains(&canon(h))) {
                g.insert(c.clone());
            }
        }
        good[t] = g;
    }
    // forwards through marked states, with real labels
    let collective = Collective::Broadcast { root: 0, blocks: m };
    let mut b = Schedule::builder(n as u32, collective, TimeBase::UNIT)?;
    let mut held = start;
    for (t, g) in good.iter().enumerate().skip(1) {
        succ.clear();
        round_successors(&held, k, &mut succ);
        let (h, moves) = succ
            .drain(..)
            .find(|(h, _)| g.contains(&canon(h)))
            .ok_or_else(|| OptimumError::Unsupported("no path back (a search bug)".into()))?;
        for (from, to, blk) in moves {
            b.push(t as u64 - 1, u32::from(from), u32::from(to), u32::from(blk));
        }
        held = h;
    }
    Ok(Optimum {
        makespan: last as Ticks,
        schedule: b.build()?,
        nodes,
    })
}

// ---------------------------------------------------------------------------------------------
// Timed models

/// Per-processor state of the timed search (all times in ticks from now).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Proc {
    /// Bit `b`: holds block `b`.
    held: u8,
    /// Ticks until it may start a send (0: now).
    wait: u8,
    /// Ticks since its last receive started, capped at `recv_gap` (`u8::MAX`: none yet).
    since: u8,
    /// `inc[b]`: ticks until block `b` arrives (0: not expected).
    inc: [u8; OPTIMUM_MAX_M as usize],
}

impl Proc {
    fn code(&self) -> u64 {
        let mut c = u64::from(self.held) | u64::from(self.wait) << 8 | u64::from(self.since) << 16;
        for (b, &r) in self.inc.iter().enumerate() {
            c |= u64::from(r) << (24 + 8 * b);
        }
        c
    }
}

/// The timed search's fixed data and memo.
struct Timed {
    n: usize,
    m: usize,
    /// Rules in ticks (each ≤ 60).
    latency: u8,
    send_busy: u8,
    send_step: u8,
    recv_busy: u8,
    recv_step: u8,
    recv_gap: u8,
    shared: bool,
    /// `U(x)` (module docs) for `x ≥ 0`.
    reach: Vec<u64>,
    /// State → largest budget known to be too small.
    memo: HashMap<Vec<u64>, u32>,
    nodes: u64,
    limit: u64,
    /// Sends of the solution `(tick, from, to, block)`, pushed while unwinding.
    path: Vec<(u32, u8, u8, u8)>,
}

/// Iterative deepening over the makespan (module docs).
fn timed(n: u32, m: u32, t: &Timing, node_limit: u64) -> Result<Optimum, OptimumError> {
    let small = |x: Ticks| u8::try_from(x).ok().filter(|&v| v <= 60);
    let fields = [
        t.latency,
        t.send_busy,
        t.send_step(),
        t.recv_busy,
        t.recv_step(),
        t.recv_gap,
    ];
    let [Some(latency), Some(send_busy), Some(send_step), Some(recv_busy), Some(recv_step), Some(recv_gap)] =
        fields.map(small)
    else {
        return Err(OptimumError::Unsupported(format!(
            "timing {fields:?} ticks: the search takes at most 60 ticks each"
        )));
    };
    if t.ports != 1 || latency == 0 || send_step == 0 || recv_busy > latency {
        return Err(OptimumError::Unsupported(
            "the timed search takes one port, latency > 0 and a positive send step".into(),
        ));
    }
    let mut reach = vec![0u64; 4096];
    for x in 0..reach.len() {
        reach[x] = if x < latency as usize {
            1
        } else {
            reach[x - send_step as usize].saturating_add(reach[x - latency as usize])
        }
        .min(1 << 40);
    }
    let mut s = Timed {
        n: n as usize,
        m: m as usize,
        latency,
        send_busy,
        send_step,
        recv_busy,
        recv_step,
        recv_gap,
        shared: t.shared_cpu,
        reach,
        memo: HashMap::new(),
        nodes: 0,
        limit: node_limit,
        path: Vec::new(),
    };
    let full = ((1u16 << m) - 1) as u8;
    let idle = Proc {
        held: 0,
        wait: 0,
        since: u8::MAX,
        inc: [0; OPTIMUM_MAX_M as usize],
    };
    let mut start = vec![idle; n as usize];
    start[0].held = full;
    let mut budget = s.bound(&start);
    loop {
        s.path.clear();
        if s.solve(&start, 0, budget)? {
            let collective = Collective::Broadcast { root: 0, blocks: m };
            let mut b = Schedule::builder(n, collective, t.base)?;
            for &(at, from, to, blk) in &s.path {
                b.push(
                    u64::from(at),
                    u32::from(from),
                    u32::from(to),
                    u32::from(blk),
                );
            }
            return Ok(Optimum {
                makespan: Ticks::from(budget),
                schedule: b.build()?,
                nodes: s.nodes,
            });
        }
        budget += 1;
    }
}

impl Timed {
    fn full(&self) -> u8 {
        ((1u16 << self.m) - 1) as u8
    }

    /// The receive interval of an arrival `a` ticks from now: `[a − recv_busy, a)`.
    fn recv_start(&self, a: u8) -> i32 {
        i32::from(a) - i32::from(self.recv_busy)
    }

    /// A lower bound on the ticks still needed (module docs).
    fn bound(&self, ps: &[Proc]) -> u32 {
        let (lat, step) = (u32::from(self.latency), u32::from(self.recv_step));
        let mut lb = 0u32;
        for p in ps {
            let last = p.inc[..self.m].iter().copied().max().unwrap_or(0);
            lb = lb.max(u32::from(last));
            let pending = (0..self.m)
                .filter(|&b| p.held >> b & 1 == 0 && p.inc[b] == 0)
                .count() as u32;
            if pending > 0 {
                let first = lat.max(if last > 0 { u32::from(last) + step } else { 0 });
                lb = lb.max(first + (pending - 1) * step);
            }
        }
        for b in 0..self.m {
            let missing = ps.iter().any(|p| p.held >> b & 1 == 0 && p.inc[b] == 0);
            if !missing {
                continue;
            }
            let f = |x: i64| self.reach[x.clamp(0, self.reach.len() as i64 - 1) as usize];
            let reach = |t: i64| -> u64 {
                ps.iter()
                    .map(|p| {
                        if p.held >> b & 1 == 1 {
                            f(t - i64::from(p.wait))
                        } else if p.inc[b] > 0 {
                            f(t - i64::from(p.inc[b]))
                        } else {
                            0
                        }
                    })
                    .sum()
            };
            let mut t = i64::from(self.latency);
            while reach(t) < self.n as u64 && t < 4000 {
                t += 1;
            }
            lb = lb.max(t as u32);
        }
        lb
    }

    /// Whether the broadcast can finish within `budget` ticks from `ps` at tick `now`.
    fn solve(&mut self, ps: &[Proc], now: u32, budget: u32) -> Result<bool, OptimumError> {
        self.nodes += 1;
        if self.nodes > self.limit {
            return Err(OptimumError::Limit(self.nodes));
        }
        let full = self.full();
        if ps.iter().all(|p| p.held == full) {
            return Ok(true);
        }
        if self.bound(ps) > budget {
            return Ok(false);
        }
        let mut key: Vec<u64> = ps.iter().map(Proc::code).collect();
        key.sort_unstable();
        if self.memo.get(&key).is_some_and(|&b| b >= budget) {
            return Ok(false);
        }
        let mut sends = Vec::new();
        let mut work = ps.to_vec();
        let found = self.choose(&mut work, 0, &mut sends, now, budget)?;
        if !found {
            let e = self.memo.entry(key).or_insert(0);
            *e = (*e).max(budget);
        }
        Ok(found)
    }

    /// Whether `p` may start a send now.
    fn can_send(&self, p: &Proc) -> bool {
        if p.wait > 0 || p.held == 0 {
            return false;
        }
        // with a shared CPU, no receive interval may overlap [0, send_busy)
        !self.shared
            || p.inc[..self.m]
                .iter()
                .all(|&a| a == 0 || self.recv_start(a) >= i32::from(self.send_busy))
    }

    /// Whether `q` may receive a block arriving `latency` from now.
    fn can_receive(&self, q: &Proc) -> bool {
        let start = self.recv_start(self.latency);
        let step = i32::from(self.recv_step);
        let spaced = q.inc[..self.m]
            .iter()
            .all(|&a| a == 0 || (self.recv_start(a) - start).abs() >= step);
        // the previous, finished receive started `since` ago
        let gap = q.since == u8::MAX || start + i32::from(q.since) >= i32::from(self.recv_gap);
        // with a shared CPU the receive interval must miss the current send, if any
        let cpu = !self.shared || {
            let busy_until =
                i32::from(q.wait) - i32::from(self.send_step) + i32::from(self.send_busy);
            start >= busy_until
        };
        spaced && gap && cpu
    }

    /// Chooses the sends of processors `i…` at this tick.
    fn choose(
        &mut self,
        ps: &mut [Proc],
        i: usize,
        sends: &mut Vec<(u8, u8, u8)>,
        now: u32,
        budget: u32,
    ) -> Result<bool, OptimumError> {
        if i == self.n {
            return self.advance(ps, sends, now, budget);
        }
        if self.choose(ps, i + 1, sends, now, budget)? {
            return Ok(true);
        }
        if !self.can_send(&ps[i]) {
            return Ok(false);
        }
        for b in 0..self.m as u8 {
            if ps[i].held >> b & 1 == 0 {
                continue;
            }
            let mut tried: Vec<u64> = Vec::new();
            for q in 0..self.n {
                let pq = ps[q];
                if q == i || pq.held >> b & 1 == 1 || pq.inc[b as usize] != 0 {
                    continue;
                }
                if !self.can_receive(&pq) {
                    continue;
                }
                // receivers in the same state are interchangeable
                let code = pq.code();
                if tried.contains(&code) {
                    continue;
                }
                tried.push(code);
                let saved = (ps[i], ps[q]);
                ps[i].wait = self.send_step;
                ps[q].inc[b as usize] = self.latency;
                sends.push((i as u8, q as u8, b));
                let found = self.choose(ps, i + 1, sends, now, budget)?;
                sends.pop();
                (ps[i], ps[q]) = saved;
                if found {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Moves to the next tick after this tick's sends.
    fn advance(
        &mut self,
        ps: &[Proc],
        sends: &[(u8, u8, u8)],
        now: u32,
        budget: u32,
    ) -> Result<bool, OptimumError> {
        let quiet = ps
            .iter()
            .all(|p| p.wait == 0 && p.inc.iter().all(|&r| r == 0));
        if sends.is_empty() && quiet {
            return Ok(false); // nothing happens: a later start of the same schedule
        }
        if budget == 0 {
            return Ok(false);
        }
        let mut next = ps.to_vec();
        let cap = self.recv_gap.max(1);
        for p in next.iter_mut() {
            p.wait = p.wait.saturating_sub(1);
            let mut since = if p.since == u8::MAX {
                u8::MAX
            } else {
                p.since.saturating_add(1).min(cap)
            };
            for b in 0..self.m {
                let a = p.inc[b];
                if a == 0 {
                    continue;
                }
                if a == self.recv_busy {
                    since = since.min(1); // its receive started now
                }
                if a == self.recv_busy + 1 {
                    since = 0; // its receive starts at the next tick
                }
                p.inc[b] -= 1;
                if p.inc[b] == 0 {
                    p.held |= 1 << b;
                }
            }
            p.since = since;
        }
        let found = self.solve(&next, now + 1, budget - 1)?;
        if found {
            self.path
                .extend(sends.iter().map(|&(f, t, b)| (now, f, t, b)));
        }
        Ok(found)
    }
}
