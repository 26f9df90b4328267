//! The optimal postal multi-block broadcast for tiny `n`, `m`, λ, by exhaustive search — and how
//! far the paper's algorithms (REPEAT, PACK, PIPELINE, DTREE(d) for every d) and herald's greedy
//! schedule are from it.
//!
//! ```text
//! cargo run --release --example postal_optimum            # n ≤ 5, m ≤ 3, λ ∈ {1, 3/2, 2, 5/2, 3}
//! cargo run --release --example postal_optimum -- 6 3     # n ≤ 6, m ≤ 3
//! SHOW="5 3 2" cargo run --release --example postal_optimum   # one optimal schedule
//! ```
//!
//! The search is the library's [`herald::sim::optimum`] (its module docs say why it is
//! exhaustive: the tick grid, no useless sends, every decision, interchangeable processors, and
//! bounds that only prune); it knows nothing of herald's generators. The optimal schedule it
//! returns is re-checked here by herald's checker (legal, makespan as found). Until this example
//! called the library it carried a search of its own; the two agreed on all 75 cases of
//! `docs/optima.md` (the older search is in the history of this file).

use herald::sim::{optimum, OPTIMUM_MAX_M, OPTIMUM_MAX_N};
use herald::{check, generate, Algorithm, Model, Postal, Ratio, Request};

/// The makespan (ticks) of `alg`'s schedule if it applies and is legal.
fn makespan(alg: Algorithm, n: u32, m: u32, model: &Model) -> Option<u64> {
    let s = generate(&Request::broadcast(alg, n, m, 0), model).ok()?;
    let r = check(&s, model).ok()?;
    r.legal().then_some(r.makespan())
}

/// The paper's algorithms: REPEAT, PACK, PIPELINE and DTREE(d) for every `1 ≤ d ≤ n − 1`.
fn seeds(n: u32) -> Vec<Algorithm> {
    let mut v = vec![Algorithm::Repeat, Algorithm::Pack, Algorithm::Pipeline];
    v.extend((1..n.max(2)).map(|d| Algorithm::Dtree { d }));
    v
}

fn main() {
    let args: Vec<u32> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n_max = args.first().copied().unwrap_or(5).min(OPTIMUM_MAX_N);
    let m_max = args.get(1).copied().unwrap_or(3).min(OPTIMUM_MAX_M);
    if let Ok(spec) = std::env::var("SHOW") {
        // SHOW="n m lambda": print one optimal schedule
        let v: Vec<&str> = spec.split_whitespace().collect();
        let (n, m, lambda): (u32, u32, Ratio) = (
            v[0].parse().unwrap(),
            v[1].parse().unwrap(),
            v[2].parse().unwrap(),
        );
        let model = Model::from(Postal::new(lambda).unwrap());
        let opt = optimum(&model, n, m, u64::MAX).unwrap();
        println!("optimum {} ticks of 1/{}", opt.makespan, lambda.denom());
        let mut sends: Vec<_> = opt.schedule.sends().collect();
        sends.sort_by_key(|s| (s.at, s.from));
        for s in &sends {
            println!("  t={} {} -> {} block {}", s.at, s.from, s.to, s.what);
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
                let Ok(opt) = optimum(&model, n, m, 200_000_000) else {
                    println!("| {lam} | {n} | {m} | (search limit) | | | | |");
                    continue;
                };
                let r = check(&opt.schedule, &model).unwrap();
                assert!(
                    r.legal(),
                    "the optimum found is illegal: {:?}",
                    r.violations()
                );
                assert_eq!(r.makespan(), opt.makespan);
                let lb = r.lower_bound().unwrap();
                let best = seeds(n)
                    .into_iter()
                    .filter_map(|a| makespan(a, n, m, &model).map(|t| (t, a)))
                    .min_by_key(|x| x.0)
                    .unwrap();
                let greedy = makespan(Algorithm::Greedy, n, m, &model);
                let mark = |t: u64| {
                    if t > opt.makespan {
                        format!("**{}**", fmt(t))
                    } else {
                        fmt(t)
                    }
                };
                println!(
                    "| {lam} | {n} | {m} | {} | {} ({}) | {} | {} | {} |",
                    fmt(opt.makespan),
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
