//! The optimal postal multi-block broadcast for tiny `n`, `m`, λ, by exhaustive search — and how
//! far the paper's algorithms (REPEAT, PACK, PIPELINE, DTREE(d) for every d) and herald's greedy
//! schedule are from it.
//!
//! ```text
//! cargo run --release --example postal_optimum            # n ≤ 5, m ≤ 3, λ ∈ {1, 3/2, 2, 5/2, 3}
//! cargo run --release --example postal_optimum -- 6 3     # n ≤ 6, m ≤ 3
//! ```
//!
//! # The search, and why it is exhaustive
//!
//! Time runs on the grid of `1/den(λ)` units (ticks); `U` ticks are one unit, `L` ticks are λ.
//! * **Grid.** Every postal rule is a difference constraint between send starts with a constant
//!   on the grid — causality `x ≥ y + L` (the send at `y` delivered the block), one send at a time
//!   `|x₁ − x₂| ≥ U` (same sender), one receive at a time `|x₁ − x₂| ≥ U` (same receiver: receives
//!   are the send intervals shifted by `L − U`). Rounding every start down to the grid, `x ↦ ⌊x⌋`,
//!   keeps all of them (`⌊y + c⌋ = ⌊y⌋ + c` for `c` on the grid) and makes no arrival later. So
//!   some optimal schedule lives on the grid.
//! * **No useless sends.** Deleting a send of a block to a processor that already holds it, or
//!   has it in flight, changes no first-arrival time and only frees ports. So only sends of a
//!   block to a processor that neither holds it nor expects it are explored: each processor
//!   receives each block once.
//! * **Decisions.** At every tick each processor whose send port is free either sends one block
//!   it holds to one processor (whose receive port is free at the arrival's last unit), or waits.
//!   Every combination is tried (waiting included).
//! * **State.** What the future depends on is, per processor, the blocks it holds, the ticks
//!   until each block in flight to it arrives, and the ticks until its send port is free.
//!   Processors are interchangeable given that, so a state is the sorted list of these
//!   descriptors; a memo records, per state, the largest remaining budget known to be too small.
//! * **Bounds** (pruning only; each is implied by the rules): every in-flight block must land; a
//!   processor missing `k` blocks not in flight receives them at least `L` from now and a unit
//!   apart (and a unit after its last in-flight arrival); and a block held by some processors and
//!   in flight to others reaches, by time `T`, at most `Σ F_λ(T − s)` processors (Lemma 5's
//!   argument: a processor able to send it from time `s` reaches at most `F_λ(T − s)`,
//!   counting itself).
//!
//! Iterative deepening on the makespan, from the largest bound, gives the optimum; the optimal
//! schedule found is then re-checked by herald's checker (legal, makespan as found).

use herald::{check, generate, Algorithm, Collective, Model, Postal, Ratio, Request, Schedule};
use std::collections::HashMap;

/// Per-processor state: blocks held, ticks until each in-flight block lands, ticks until the
/// send port is free.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Proc {
    /// Bit `b`: holds block `b`.
    held: u8,
    /// Ticks until the send port is free (0: free now).
    busy: u8,
    /// `inc[b]`: ticks until block `b` lands here (0: not in flight).
    inc: [u8; 4],
}

impl Proc {
    fn code(&self) -> u32 {
        let mut c = u32::from(self.held) | u32::from(self.busy) << 4;
        for (b, &r) in self.inc.iter().enumerate() {
            c |= u32::from(r) << (8 + 6 * b);
        }
        c
    }
}

/// The result of one search.
#[derive(Debug, Clone)]
pub(crate) struct Optimum {
    /// The optimal makespan in ticks (`1/den(λ)` units).
    pub(crate) ticks: u32,
    /// An optimal schedule, `(tick, from, to, block)`.
    pub(crate) sends: Vec<(u32, u8, u8, u8)>,
    /// Search nodes visited.
    pub(crate) nodes: u64,
}

/// An exhaustive search for one `(n, m, λ)`.
struct Search {
    n: usize,
    m: usize,
    /// One unit in ticks.
    unit: u32,
    /// λ in ticks.
    lat: u32,
    /// `F_λ` in ticks, `fib[x]` for `x ≥ 0`.
    fib: Vec<u64>,
    /// State → largest budget known to fail.
    memo: HashMap<[u32; 8], u32>,
    nodes: u64,
    limit: u64,
    /// Sends of the solution, pushed while unwinding.
    path: Vec<(u32, u8, u8, u8)>,
}

/// Bounds of the search (beyond them it would not finish).
pub(crate) const MAX_N: usize = 8;
/// At most this many blocks.
pub(crate) const MAX_M: usize = 4;

/// The optimal makespan of broadcasting `m` blocks from processor 0 to `n` processors under the
/// postal model with latency `lambda`, with an optimal schedule; `None` if the search exceeds
/// `node_limit` nodes or the parameters are out of range (`n ≤ 8`, `m ≤ 4`, λ at most 15 ticks).
pub(crate) fn optimum(n: usize, m: usize, lambda: Ratio, node_limit: u64) -> Option<Optimum> {
    let unit = u32::try_from(lambda.denom()).ok()?;
    let lat = u32::try_from(lambda.numer()).ok()?;
    if !(1..=MAX_N).contains(&n) || !(1..=MAX_M).contains(&m) || lat > 15 || unit > 15 {
        return None;
    }
    let mut fib = vec![];
    for x in 0..4096usize {
        let v = if x < lat as usize {
            1
        } else {
            fib[x - unit as usize] + fib[x - lat as usize]
        };
        fib.push(u64::min(v, 1 << 40));
    }
    let mut s = Search {
        n,
        m,
        unit,
        lat,
        fib,
        memo: HashMap::new(),
        nodes: 0,
        limit: node_limit,
        path: vec![],
    };
    let full = ((1u16 << m) - 1) as u8;
    let mut start = vec![
        Proc {
            held: 0,
            busy: 0,
            inc: [0; 4],
        };
        n
    ];
    start[0].held = full;
    let mut budget = s.lower_bound(&start);
    loop {
        s.path.clear();
        if s.solve(&mut start.clone(), 0, budget)? {
            let mut sends = std::mem::take(&mut s.path);
            sends.sort_unstable();
            return Some(Optimum {
                ticks: budget,
                sends,
                nodes: s.nodes,
            });
        }
        budget += 1;
    }
}

impl Search {
    fn full(&self) -> u8 {
        ((1u16 << self.m) - 1) as u8
    }

    fn key(&self, ps: &[Proc]) -> [u32; 8] {
        let mut k = [u32::MAX; 8];
        for (slot, p) in k.iter_mut().zip(ps) {
            *slot = p.code();
        }
        k[..ps.len()].sort_unstable();
        k
    }

    fn f(&self, x: i64) -> u64 {
        self.fib[x.clamp(0, self.fib.len() as i64 - 1) as usize]
    }

    /// A lower bound on the ticks still needed (see the module docs).
    fn lower_bound(&self, ps: &[Proc]) -> u32 {
        let (u, l) = (self.unit, self.lat);
        let mut lb = 0u32;
        for p in ps {
            let last_inc = p.inc[..self.m].iter().copied().max().unwrap_or(0);
            lb = lb.max(u32::from(last_inc));
            let pending = (0..self.m)
                .filter(|&b| p.held & (1 << b) == 0 && p.inc[b] == 0)
                .count() as u32;
            if pending > 0 {
                let first = l.max(if last_inc > 0 {
                    u32::from(last_inc) + u
                } else {
                    0
                });
                lb = lb.max(first + (pending - 1) * u);
            }
        }
        for b in 0..self.m {
            let missing = ps
                .iter()
                .filter(|p| p.held & (1 << b) == 0 && p.inc[b] == 0)
                .count();
            if missing == 0 {
                continue;
            }
            let reach = |t: i64| -> u64 {
                ps.iter()
                    .map(|p| {
                        if p.held & (1 << b) != 0 {
                            self.f(t - i64::from(p.busy))
                        } else if p.inc[b] > 0 {
                            self.f(t - i64::from(p.inc[b]))
                        } else {
                            0
                        }
                    })
                    .sum()
            };
            let mut t = i64::from(l);
            while reach(t) < self.n as u64 && t < 4000 {
                t += 1;
            }
            lb = lb.max(t as u32);
        }
        lb
    }

    /// Whether the broadcast can finish within `budget` ticks from state `ps` at tick `now`.
    /// `None`: node limit reached.
    fn solve(&mut self, ps: &mut [Proc], now: u32, budget: u32) -> Option<bool> {
        self.nodes += 1;
        if self.nodes > self.limit {
            return None;
        }
        let full = self.full();
        if ps.iter().all(|p| p.held == full) {
            return Some(true);
        }
        if self.lower_bound(ps) > budget {
            return Some(false);
        }
        let key = self.key(ps);
        if self.memo.get(&key).is_some_and(|&b| b >= budget) {
            return Some(false);
        }
        let mut sends = Vec::new();
        let found = self.choose(ps, 0, 0, &mut sends, now, budget)?;
        if !found {
            let e = self.memo.entry(key).or_insert(0);
            *e = (*e).max(budget);
        }
        Some(found)
    }

    /// Chooses the sends of processors `i…` at this tick (`receiving`: receivers already chosen).
    fn choose(
        &mut self,
        ps: &mut [Proc],
        i: usize,
        receiving: u32,
        sends: &mut Vec<(u8, u8, u8)>,
        now: u32,
        budget: u32,
    ) -> Option<bool> {
        if i == self.n {
            return self.advance(ps, sends, now, budget);
        }
        // waiting is always an option
        if self.choose(ps, i + 1, receiving, sends, now, budget)? {
            return Some(true);
        }
        if ps[i].busy > 0 || ps[i].held == 0 {
            return Some(false);
        }
        for b in 0..self.m as u8 {
            if ps[i].held & (1 << b) == 0 {
                continue;
            }
            for q in 0..self.n {
                if q == i || receiving & (1 << q) != 0 {
                    continue;
                }
                let pq = ps[q];
                if pq.held & (1 << b) != 0 || pq.inc[b as usize] != 0 {
                    continue;
                }
                // receive port: the new arrival at `lat` is a unit away from every other
                let clash = pq.inc[..self.m]
                    .iter()
                    .any(|&r| r != 0 && self.lat.abs_diff(u32::from(r)) < self.unit);
                if clash {
                    continue;
                }
                sends.push((i as u8, q as u8, b));
                let found = self.choose(ps, i + 1, receiving | 1 << q, sends, now, budget)?;
                sends.pop();
                if found {
                    return Some(true);
                }
            }
        }
        Some(false)
    }

    /// Applies this tick's sends and moves to the next tick.
    fn advance(
        &mut self,
        ps: &[Proc],
        sends: &[(u8, u8, u8)],
        now: u32,
        budget: u32,
    ) -> Option<bool> {
        let idle = ps
            .iter()
            .all(|p| p.busy == 0 && p.inc.iter().all(|&r| r == 0));
        if sends.is_empty() && idle {
            return Some(false); // nothing happens: a later start of the same schedule
        }
        if budget == 0 {
            return Some(false);
        }
        let mut next = ps.to_vec();
        for &(from, to, b) in sends {
            next[from as usize].busy = self.unit as u8;
            next[to as usize].inc[b as usize] = self.lat as u8;
        }
        for p in next.iter_mut() {
            p.busy = p.busy.saturating_sub(1);
            for b in 0..self.m {
                if p.inc[b] > 0 {
                    p.inc[b] -= 1;
                    if p.inc[b] == 0 {
                        p.held |= 1 << b;
                    }
                }
            }
        }
        let found = self.solve(&mut next, now + 1, budget - 1)?;
        if found {
            self.path
                .extend(sends.iter().map(|&(f, t, b)| (now, f, t, b)));
        }
        Some(found)
    }
}

/// The optimum as a herald schedule (ticks of the postal base, which is `1/den(λ)`).
pub(crate) fn as_schedule(n: usize, m: usize, opt: &Optimum, lambda: Ratio) -> Schedule {
    let model = Postal::new(lambda).unwrap();
    let base = herald::CostModel::time_base(&model).unwrap();
    let c = Collective::Broadcast {
        root: 0,
        blocks: m as u32,
    };
    let mut b = Schedule::builder(n as u32, c, base).unwrap();
    for &(t, f, to, blk) in &opt.sends {
        b.push(u64::from(t), u32::from(f), u32::from(to), u32::from(blk));
    }
    b.build().unwrap()
}

/// The makespan (ticks of the postal base) of `alg`, if it applies and is legal.
pub(crate) fn makespan(alg: Algorithm, n: usize, m: usize, model: &Model) -> Option<u64> {
    let s = generate(&Request::broadcast(alg, n as u32, m as u32, 0), model).ok()?;
    let r = check(&s, model).ok()?;
    r.legal().then_some(r.makespan())
}

/// The paper's algorithms: REPEAT, PACK, PIPELINE and DTREE(d) for every `1 ≤ d ≤ n − 1`.
pub(crate) fn seeds(n: usize) -> Vec<Algorithm> {
    let mut v = vec![Algorithm::Repeat, Algorithm::Pack, Algorithm::Pipeline];
    v.extend((1..n.max(2) as u32).map(|d| Algorithm::Dtree { d }));
    v
}

#[allow(dead_code)] // a library module of the tests, too
fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n_max = args.first().copied().unwrap_or(5).min(MAX_N);
    let m_max = args.get(1).copied().unwrap_or(3).min(MAX_M);
    if let Ok(spec) = std::env::var("SHOW") {
        // SHOW="n m lambda": print one optimal schedule
        let v: Vec<&str> = spec.split_whitespace().collect();
        let (n, m, lambda): (usize, usize, Ratio) = (
            v[0].parse().unwrap(),
            v[1].parse().unwrap(),
            v[2].parse().unwrap(),
        );
        let opt = optimum(n, m, lambda, u64::MAX).unwrap();
        println!("optimum {} ticks of 1/{}", opt.ticks, lambda.denom());
        for (t, f, to, b) in &opt.sends {
            println!("  t={t} {f} -> {to} block {b}");
        }
        return;
    }
    println!(
        "| λ | n | m | optimum | best seed (which) | greedy | lower bound (Lemma 8) | nodes |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for lam in ["1", "3/2", "2", "5/2", "3"] {
        let lambda: Ratio = lam.parse().unwrap();
        let model = Model::from(Postal::new(lambda).unwrap());
        let den = lambda.denom();
        let fmt = |t: u64| herald::time::TimeBase::UNIT.refine(den).unwrap().format(t);
        for n in 2..=n_max {
            for m in 1..=m_max {
                let Some(opt) = optimum(n, m, lambda, 200_000_000) else {
                    println!("| {lam} | {n} | {m} | (search limit) | | | | |");
                    continue;
                };
                let s = as_schedule(n, m, &opt, lambda);
                let r = check(&s, &model).unwrap();
                assert!(
                    r.legal(),
                    "the optimum found is illegal: {:?}",
                    r.violations()
                );
                assert_eq!(r.makespan(), u64::from(opt.ticks));
                let lb = r.lower_bound().unwrap();
                let best = seeds(n)
                    .into_iter()
                    .filter_map(|a| makespan(a, n, m, &model).map(|t| (t, a)))
                    .min_by_key(|x| x.0)
                    .unwrap();
                let greedy = makespan(Algorithm::Greedy, n, m, &model);
                let mark = |t: u64| {
                    if t > u64::from(opt.ticks) {
                        format!("**{}**", fmt(t))
                    } else {
                        fmt(t)
                    }
                };
                println!(
                    "| {lam} | {n} | {m} | {} | {} ({}) | {} | {} | {} |",
                    fmt(opt.ticks.into()),
                    mark(best.0),
                    best.1,
                    greedy.map_or("n/a".into(), mark),
                    fmt(lb),
                    opt.nodes
                );
            }
        }
    }
}
