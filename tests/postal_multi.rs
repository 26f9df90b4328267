//! Section 4 of Bar-Noy & Kipnis (broadcasting m messages in the postal model), claim by claim.

use herald::{check, generate, sim::optimum, Algorithm, Model, Postal, Ratio, Request};

/// An exact non-negative rational for expectations (independent of the library's `Ratio`).
#[derive(Debug, Clone, Copy)]
struct Q {
    num: i128,
    den: i128,
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.abs().max(1)
    } else {
        gcd(b, a % b)
    }
}

impl Q {
    fn new(num: i128, den: i128) -> Q {
        let g = gcd(num, den);
        let s = if den < 0 { -1 } else { 1 };
        Q {
            num: s * num / g,
            den: s * den / g,
        }
    }
    fn int(x: i128) -> Q {
        Q::new(x, 1)
    }
    fn of(r: Ratio) -> Q {
        Q::new(r.numer().into(), r.denom().into())
    }
    fn add(self, o: Q) -> Q {
        Q::new(self.num * o.den + o.num * self.den, self.den * o.den)
    }
    fn sub(self, o: Q) -> Q {
        Q::new(self.num * o.den - o.num * self.den, self.den * o.den)
    }
    fn mul(self, o: Q) -> Q {
        Q::new(self.num * o.num, self.den * o.den)
    }
    fn div(self, o: Q) -> Q {
        Q::new(self.num * o.den, self.den * o.num)
    }
    fn f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl PartialEq for Q {
    fn eq(&self, o: &Q) -> bool {
        self.num * o.den == o.num * self.den
    }
}
impl Eq for Q {}
impl PartialOrd for Q {
    fn partial_cmp(&self, o: &Q) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Q {
    fn cmp(&self, o: &Q) -> std::cmp::Ordering {
        (self.num * o.den).cmp(&(o.num * self.den))
    }
}
impl std::fmt::Display for Q {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

/// `F_μ` from its definition (`F(t) = 1` for `0 ≤ t < μ`, `F(t) = F(t − 1) + F(t − μ)`), on the
/// grid of `1/den(μ)` units, where every breakpoint `a + bμ` lies; and its index function.
struct Fib {
    base: i128,
    mu: usize,
    values: Vec<u128>,
}

impl Fib {
    fn new(mu: Q) -> Fib {
        assert!(mu >= Q::int(1));
        Fib {
            base: mu.den,
            mu: mu.num as usize,
            values: vec![],
        }
    }
    fn at(&mut self, ticks: usize) -> u128 {
        while self.values.len() <= ticks {
            let x = self.values.len();
            let v = if x < self.mu {
                1
            } else {
                self.values[x - self.base as usize].saturating_add(self.values[x - self.mu])
            };
            self.values.push(v);
        }
        self.values[ticks]
    }
    /// `f_μ(n)`.
    fn index(&mut self, n: u128) -> Q {
        let mut t = 0;
        while self.at(t) < n {
            t += 1;
        }
        Q::new(t as i128, self.base)
    }
}

/// The latencies of every sweep: integers and non-integers, small and large.
const LAMBDAS: &[&str] = &[
    "1", "11/10", "3/2", "2", "9/4", "5/2", "3", "7/2", "5", "33/4", "10",
];

/// Processor counts: every n ≤ 64 and a spread up to 200.
fn ns() -> impl Iterator<Item = u32> {
    (1..=64).chain([75, 89, 100, 127, 128, 129, 144, 150, 199, 200])
}

const M_MAX: u32 = 16;

fn model(lambda: &str) -> (Model, Q) {
    let r: Ratio = lambda.parse().unwrap();
    (Model::from(Postal::new(r).unwrap()), Q::of(r))
}

/// Generates, checks (legal, every block everywhere) and returns the makespan in units.
fn run(alg: Algorithm, n: u32, m: u32, model: &Model) -> Q {
    let s = generate(&Request::broadcast(alg, n, m, 0), model).unwrap();
    let r = check(&s, model).unwrap();
    assert!(
        r.legal(),
        "{alg} n={n} m={m}: {:?}",
        &r.violations()[..r.violations().len().min(3)]
    );
    Q::new(r.makespan().into(), r.base().ticks_per_unit().into())
}

const ONE: Q = Q { num: 1, den: 1 };

fn floor(q: Q) -> Q {
    Q::int(q.num.div_euclid(q.den))
}

/// Runs `body(λ, model, n, m)` over the grid and fails listing the first mismatches it returns.
fn sweep(name: &str, mut body: impl FnMut(&str, &Model, Q, u32, u32) -> Option<String>) {
    let mut bad = vec![];
    let mut count = 0;
    for lam in LAMBDAS {
        let (model, l) = model(lam);
        for n in ns() {
            for m in 1..=M_MAX {
                count += 1;
                if let Some(msg) = body(lam, &model, l, n, m) {
                    bad.push(msg);
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{name}: {} of {count} cases fail, e.g.\n{}",
        bad.len(),
        bad[..bad.len().min(10)].join("\n")
    );
}

/// Memoized `f_μ(n)` per μ.
#[derive(Default)]
struct Index {
    tables: std::collections::HashMap<(i128, i128), Fib>,
}

impl Index {
    fn f(&mut self, mu: Q, n: u32) -> Q {
        self.tables
            .entry((mu.num, mu.den))
            .or_insert_with(|| Fib::new(mu))
            .index(n.into())
    }
}

/// Lemma 10: `T_R = m·f_λ(n) − (m − 1)(λ − 1)`.
///
/// Not an equality in general. REPEAT restarts BCAST every `d₀` units, `d₀` being the number of
/// sends of the root in BCAST, and `d₀ = ⌊f_λ(n) − λ⌋ + 1` (the root sends every unit from 0
/// and its last send must arrive by `f_λ(n)`); the proof takes `d₀ = f_λ(n) − λ + 1`, which is
/// right only when `f_λ(n) − λ` is an integer. So the truth is
/// `T_R = (m − 1)(⌊f_λ(n) − λ⌋ + 1) + f_λ(n) ≤` the lemma, equal iff `m = 1` or `f_λ(n) − λ` is
/// whole (always for integer λ). Smallest counterexample: n = 4, m = 2, λ = 3/2: f = 3, the root
/// sends at 0 and 1 only (its send at 1 arrives at 5/2 < 3), REPEAT takes 5, the lemma says 11/2.
/// (n = 1: no sends, makespan 0.)
#[test]
fn lemma10_repeat() {
    let mut idx = Index::default();
    let mut strict = 0;
    sweep("Lemma 10", |lam, model, l, n, m| {
        let t = run(Algorithm::Repeat, n, m, model);
        if n == 1 {
            return (t != Q::int(0)).then(|| format!("λ={lam} n=1 m={m}: {t}"));
        }
        let f = idx.f(l, n);
        let mq = Q::int(m.into());
        let m1 = mq.sub(ONE);
        let paper = mq.mul(f).sub(m1.mul(l.sub(ONE)));
        let truth = m1.mul(floor(f.sub(l)).add(ONE)).add(f);
        let whole = f.sub(l).den == 1;
        if t < paper {
            strict += 1;
        }
        (t != truth || (t == paper) != (m == 1 || whole)).then(|| {
            format!("λ={lam} n={n} m={m}: REPEAT {t}, lemma {paper}, (m−1)(⌊f−λ⌋+1)+f = {truth}")
        })
    });
    assert!(strict > 0);
    // the smallest counterexample, by hand
    let (model, _) = model("3/2");
    assert_eq!(run(Algorithm::Repeat, 4, 2, &model), Q::int(5));
}

/// Lemma 12: `T_PK = m·f_{1+(λ−1)/m}(n)`.
#[test]
fn lemma12_pack() {
    let mut idx = Index::default();
    sweep("Lemma 12", |lam, model, l, n, m| {
        let t = run(Algorithm::Pack, n, m, model);
        let mq = Q::int(m.into());
        let mu = ONE.add(l.sub(ONE).div(mq));
        let paper = mq.mul(idx.f(mu, n));
        (t != paper).then(|| format!("λ={lam} n={n} m={m}: PACK {t}, lemma {paper}"))
    });
}

/// Lemma 14: `T_PL1 = m·f_{λ/m}(n) + (m − 1)` for `m ≤ λ` (n ≥ 2; n = 1 takes 0).
#[test]
fn lemma14_pipeline1() {
    let mut idx = Index::default();
    let mut cases = 0;
    sweep("Lemma 14", |lam, model, l, n, m| {
        let mq = Q::int(m.into());
        if mq > l {
            return None;
        }
        cases += 1;
        let t = run(Algorithm::Pipeline, n, m, model);
        if n == 1 {
            return (t != Q::int(0)).then(|| format!("λ={lam} n=1 m={m}: {t}"));
        }
        let paper = mq.mul(idx.f(l.div(mq), n)).add(mq.sub(ONE));
        (t != paper).then(|| format!("λ={lam} n={n} m={m}: PIPELINE-1 {t}, lemma {paper}"))
    });
    assert!(cases > 1000);
}

/// Lemma 16: `T_PL2 = λ·f_{m/λ}(n) + (λ − 1)` for `m ≥ λ` (n ≥ 2; n = 1 takes 0).
#[test]
fn lemma16_pipeline2() {
    let mut idx = Index::default();
    let mut cases = 0;
    sweep("Lemma 16", |lam, model, l, n, m| {
        let mq = Q::int(m.into());
        if mq < l {
            return None;
        }
        cases += 1;
        let t = run(Algorithm::Pipeline, n, m, model);
        if n == 1 {
            return (t != Q::int(0)).then(|| format!("λ={lam} n=1 m={m}: {t}"));
        }
        let paper = l.mul(idx.f(mq.div(l), n)).add(l.sub(ONE));
        (t != paper).then(|| format!("λ={lam} n={n} m={m}: PIPELINE-2 {t}, lemma {paper}"))
    });
    assert!(cases > 1000);
}

/// `⌈log_d n⌉` for `d ≥ 2`: the least `k` with `d^k ≥ n`.
fn ceil_log(d: u32, n: u32) -> i128 {
    let (mut k, mut p) = (0, 1u64);
    while p < u64::from(n) {
        p *= u64::from(d);
        k += 1;
    }
    k
}

/// The degrees tried for DTREE: line, binary, ternary, ⌈λ⌉ + 1, star.
fn degrees(l: Q, n: u32) -> Vec<u32> {
    let mut d = vec![
        1,
        2,
        3,
        ((l.num + l.den - 1) / l.den + 1) as u32,
        n.saturating_sub(1).max(1),
    ];
    d.sort_unstable();
    d.dedup();
    d
}

/// Lemma 18: `T_DT ≤ d(m − 1) + (d − 1 + λ)⌈log_d n⌉` (d ≥ 2; for the line, d = 1, the height is
/// n − 1). Holds everywhere. The exact time is `d(m − 1) + max_v c(v)` with `c(v)` the sum over
/// the edges from the root to `v` of `(index of the child among its siblings) + λ`: every node
/// receives block `i` exactly `d` units after block `i − 1` and needs `d` units to pass one block
/// to its children, so nothing ever waits. Equality with the bound needs a full tree whose
/// rightmost leaf is deepest (n = (d^{h+1} − 1)/(d − 1) gives height h < ⌈log_d n⌉ = h + 1 though:
/// the bound is then loose by d − 1 + λ). For d > n − 1 (outside the paper's range) the root
/// paces the blocks every n − 1 units instead of d.
#[test]
fn lemma18_dtree() {
    sweep("Lemma 18", |lam, model, l, n, m| {
        for d in degrees(l, n) {
            let t = run(Algorithm::Dtree { d }, n, m, model);
            let (dq, mq) = (Q::int(d.into()), Q::int(m.into()));
            let height = if d == 1 {
                i128::from(n - 1)
            } else {
                ceil_log(d, n)
            };
            let bound = dq
                .mul(mq.sub(ONE))
                .add(dq.sub(ONE).add(l).mul(Q::int(height)));
            let mut cost = vec![Q::int(0); n as usize];
            for v in 1..n as usize {
                let parent = (v - 1) / d as usize;
                let k = ((v - 1) % d as usize) as i128;
                cost[v] = cost[parent].add(Q::int(k)).add(l);
            }
            let deepest = cost.iter().copied().max().unwrap();
            // the root paces the blocks: one every min(d, n − 1) units
            let pace = Q::int(d.min(n.saturating_sub(1)).into());
            let exact = pace.mul(mq.sub(ONE)).add(deepest);
            if t > bound || t != exact {
                return Some(format!(
                    "λ={lam} n={n} m={m} d={d}: DTREE {t}, bound {bound}, exact {exact}"
                ));
            }
        }
        None
    });
}

/// `log a / log b` (any base).
fn lg(a: f64, b: f64) -> f64 {
    a.ln() / b.ln()
}

/// Corollaries 11, 13, 15 and 17: the closed-form upper bounds from Theorem 7 (2).
#[test]
fn corollaries_11_13_15_17() {
    sweep("Corollaries", |lam, model, l, n, m| {
        let (lf, mf, nf) = (l.f64(), f64::from(m), f64::from(n));
        let eps = 1e-9;
        let r = run(Algorithm::Repeat, n, m, model).f64();
        let c11 = 2.0 * mf * lf * lg(nf, lf + 1.0) + mf * lf + mf + lf - 1.0;
        let pk = run(Algorithm::Pack, n, m, model).f64();
        let c13 = 2.0 * (mf + lf - 1.0) * lg(nf, 2.0 + (lf - 1.0) / mf) + 2.0 * (mf + lf - 1.0);
        let pl = run(Algorithm::Pipeline, n, m, model).f64();
        let (name, c) = if Q::int(m.into()) <= l {
            ("15", 2.0 * lf + 2.0 * lf * lg(nf, 1.0 + lf / mf) + mf - 1.0)
        } else {
            ("17", 2.0 * mf * lg(nf, 1.0 + mf / lf) + 2.0 * mf + lf - 1.0)
        };
        for (what, t, bound) in [("11", r, c11), ("13", pk, c13), (name, pl, c)] {
            if t > bound + eps {
                return Some(format!(
                    "λ={lam} n={n} m={m}: Corollary {what}: {t} > {bound}"
                ));
            }
        }
        None
    });
}

/// Lemma 8: every schedule takes at least `(m − 1) + f_λ(n)`; the checker's lower bound is that.
///
/// For n = 1 the lemma's argument ("the last message cannot leave the root before m − 1") does
/// not apply — nothing needs to leave — and the true bound is 0 (the checker's bound, too).
#[test]
fn lemma8_lower_bound() {
    let mut idx = Index::default();
    sweep("Lemma 8", |lam, model, l, n, m| {
        let lb = if n == 1 {
            Q::int(0)
        } else {
            Q::int(i128::from(m) - 1).add(idx.f(l, n))
        };
        let mut algs = vec![Algorithm::Repeat, Algorithm::Pack, Algorithm::Pipeline];
        algs.extend(degrees(l, n).into_iter().map(|d| Algorithm::Dtree { d }));
        for alg in algs {
            let s = generate(&Request::broadcast(alg, n, m, 0), model).unwrap();
            let r = check(&s, model).unwrap();
            let t = Q::new(r.makespan().into(), r.base().ticks_per_unit().into());
            let checker_lb = Q::new(
                r.lower_bound().unwrap().into(),
                r.base().ticks_per_unit().into(),
            );
            if !r.legal() || t < lb || checker_lb != lb {
                return Some(format!(
                    "λ={lam} n={n} m={m}: {alg} {t} < {lb} ({checker_lb})"
                ));
            }
        }
        None
    });
}

/// The paper's algorithms: REPEAT, PACK, PIPELINE and DTREE(d) for every `1 ≤ d ≤ n − 1`.
fn seeds(n: u32) -> Vec<Algorithm> {
    let mut v = vec![Algorithm::Repeat, Algorithm::Pack, Algorithm::Pipeline];
    v.extend((1..n.max(2)).map(|d| Algorithm::Dtree { d }));
    v
}

/// The exhaustive search (`herald::sim::optimum`, which knows no generator) on every n ≤ 4,
/// m ≤ 3 and λ ∈ {1, 3/2, 2, 5/2, 3}: its optimal schedule is legal with the makespan it claims,
/// never below Lemma 8, never above any generator — and strictly below the best of the paper's
/// algorithms somewhere.
#[test]
fn exhaustive_optimum_bounds_every_generator() {
    let mut gaps = vec![];
    for lam in ["1", "3/2", "2", "5/2", "3"] {
        let (model, _) = model(lam);
        for n in 1..=4u32 {
            for m in 1..=3u32 {
                let opt = optimum(&model, n, m, 10_000_000).expect("search finishes");
                let r = check(&opt.schedule, &model).unwrap();
                assert!(r.legal(), "λ={lam} n={n} m={m}: {:?}", r.violations());
                assert_eq!(r.makespan(), opt.makespan);
                assert!(r.makespan() >= r.lower_bound().unwrap());
                let best = Q::new(r.makespan().into(), r.base().ticks_per_unit().into());
                let mut best_seed = None::<Q>;
                for alg in seeds(n) {
                    let t = run(alg, n, m, &model);
                    assert!(t >= best, "λ={lam} n={n} m={m}: {alg} beats the optimum");
                    best_seed = Some(best_seed.map_or(t, |b| b.min(t)));
                }
                assert!(run(Algorithm::Greedy, n, m, &model) >= best);
                if best_seed.expect("seeds") > best {
                    gaps.push((lam, n, m));
                }
            }
        }
    }
    // e.g. λ = 1, n = 4, m = 2: optimum 3 (= Lemma 8), the best of the paper's algorithms 4
    assert!(gaps.contains(&("1", 4, 2)), "{gaps:?}");
    assert!(gaps.contains(&("2", 3, 2)), "{gaps:?}");
}

/// Greedy is legal on the whole grid and never below Lemma 8 (no legal schedule is).
#[test]
fn greedy_is_legal_and_above_the_lower_bound() {
    let (mut better, mut equal, mut worse) = (0, 0, 0);
    for lam in LAMBDAS {
        let (model, _) = model(lam);
        for n in ns().filter(|&n| n <= 64 || n % 50 == 0) {
            for m in [1, 2, 3, 4, 6, 8, 12, 16] {
                let s = generate(&Request::broadcast(Algorithm::Greedy, n, m, 0), &model).unwrap();
                let r = check(&s, &model).unwrap();
                assert!(r.legal(), "λ={lam} n={n} m={m}: {:?}", r.violations());
                assert!(r.makespan() >= r.lower_bound().unwrap());
                let g = Q::new(r.makespan().into(), r.base().ticks_per_unit().into());
                let seeds = [
                    Algorithm::Repeat,
                    Algorithm::Pack,
                    Algorithm::Pipeline,
                    Algorithm::Dtree { d: 1 },
                    Algorithm::Dtree { d: 2 },
                    Algorithm::Dtree { d: 3 },
                ];
                let best = seeds.iter().map(|&a| run(a, n, m, &model)).min().unwrap();
                match g.cmp(&best) {
                    std::cmp::Ordering::Less => better += 1,
                    std::cmp::Ordering::Equal => equal += 1,
                    std::cmp::Ordering::Greater => worse += 1,
                }
            }
        }
    }
    println!("greedy vs the best seed: better {better}, equal {equal}, worse {worse}");
    assert!(better > 0);
}

/// The named case: λ = 2, n = 5, m = 3. The best of REPEAT, PACK, PIPELINE and DTREE(1…4) takes
/// 8 (PIPELINE-2); greedy takes 7, the optimum (exhaustive search), one above Lemma 8's 6.
#[test]
fn greedy_beats_the_best_seed_at_lambda2_n5_m3() {
    let (model, _) = model("2");
    let best = seeds(5)
        .into_iter()
        .map(|a| run(a, 5, 3, &model))
        .min()
        .unwrap();
    assert_eq!(best, Q::int(8));
    assert_eq!(run(Algorithm::Greedy, 5, 3, &model), Q::int(7));
    let opt = optimum(&model, 5, 3, 10_000_000).unwrap();
    assert_eq!(opt.makespan, 7); // λ = 2: one tick is one unit
}

/// Greedy on the 1-port model (postal rules with λ = 1) reaches the optimum m − 1 + ⌈log2 n⌉ in
/// small cases; on LogP it is a typed error.
#[test]
fn greedy_other_models() {
    let one = Model::from(herald::model::OnePort);
    for (n, m) in [(4, 2), (5, 3), (8, 4)] {
        let s = generate(&Request::broadcast(Algorithm::Greedy, n, m, 0), &one).unwrap();
        let r = check(&s, &one).unwrap();
        assert!(r.legal());
        assert!(r.makespan() >= r.lower_bound().unwrap());
    }
    let logp = Model::from(
        herald::LogP::new(
            Ratio::integer(6),
            Ratio::integer(2),
            Ratio::integer(4),
            Ratio::ZERO,
        )
        .unwrap(),
    );
    let e = generate(&Request::broadcast(Algorithm::Greedy, 8, 2, 0), &logp).unwrap_err();
    assert!(
        matches!(e, herald::schedule::ScheduleError::NotApplicable { .. }),
        "{e}"
    );
}

/// Every generator of this section accepts every root and rejects what it cannot do with a typed
/// error, never a panic.
#[test]
fn roots_and_errors() {
    let (model, _) = model("5/2");
    for alg in [
        Algorithm::Repeat,
        Algorithm::Pack,
        Algorithm::Pipeline,
        Algorithm::Greedy,
    ] {
        for root in [0, 3, 6] {
            let s = generate(&Request::broadcast(alg, 7, 3, root), &model).unwrap();
            let r = check(&s, &model).unwrap();
            assert!(r.legal(), "{alg} root {root}");
        }
        assert!(generate(&Request::broadcast(alg, 0, 3, 0), &model).is_err());
        assert!(generate(&Request::broadcast(alg, 5, 0, 0), &model).is_err());
        assert!(generate(&Request::broadcast(alg, u32::MAX, u32::MAX, 0), &model).is_err());
    }
}
