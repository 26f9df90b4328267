//! True optima of small multi-block broadcasts (exhaustive search, `herald::sim::optimum`) against
//! every algorithm herald has and against the model's lower bound. Prints the Markdown tables of
//! `docs/optima.md`.
//!
//! ```text
//! cargo run --release --example optima              # every model, the sizes of docs/optima.md
//! cargo run --release --example optima -- postal    # one model: postal, oneport, kport, logp
//! ```

use herald::{
    check, generate,
    model::{KPort, OnePort},
    sim::optimum,
    time::TimeBase,
    Algorithm, LogP, Model, Postal, Ratio, Request,
};

/// Every broadcast algorithm herald has (those that do not apply are skipped).
fn algorithms(n: u32) -> Vec<Algorithm> {
    let mut v = vec![
        Algorithm::Optimal,
        Algorithm::Binomial,
        Algorithm::Binary,
        Algorithm::Knomial { radix: 3 },
        Algorithm::Chain,
        Algorithm::Star,
        Algorithm::ScatterAllgather,
        Algorithm::Repeat,
        Algorithm::Pack,
        Algorithm::Pipeline,
        Algorithm::Fibonacci { d: None },
        Algorithm::KTree,
        Algorithm::Rotation,
    ];
    v.extend((1..n.max(2)).map(|d| Algorithm::Dtree { d }));
    v
}

/// The makespan of `alg`, if it applies and is legal.
fn makespan(alg: Algorithm, n: u32, m: u32, model: &Model) -> Option<u64> {
    let s = generate(&Request::broadcast(alg, n, m, 0), model).ok()?;
    let r = check(&s, model).ok()?;
    r.legal().then_some(r.makespan())
}

/// One table: every `n ≤ n_max`, `m ≤ m_max` under `model`.
fn table(label: &str, model: &Model, n_max: u32, m_max: u32) {
    let base = herald::CostModel::time_base(model).unwrap();
    let fmt = |t: u64| base.format(t);
    println!("\n### {label}\n");
    println!("| n | m | optimum | best algorithm (which) | greedy | lower bound | nodes |");
    println!("|---|---|---|---|---|---|---|");
    let (mut rows, mut best_opt, mut greedy_opt, mut bound_opt) = (0, 0, 0, 0);
    // per algorithm (greedy included): cases it applies to, cases optimal, worst excess
    let mut each: Vec<(String, usize, usize, u64)> = Vec::new();
    let mut tally = |name: String, t: u64, opt: u64| {
        let i = match each.iter().position(|e| e.0 == name) {
            Some(i) => i,
            None => {
                each.push((name, 0, 0, 0));
                each.len() - 1
            }
        };
        let e = &mut each[i];
        e.1 += 1;
        e.2 += usize::from(t == opt);
        e.3 = e.3.max(t - opt);
    };
    for n in 2..=n_max {
        for m in 1..=m_max {
            let best = match optimum(model, n, m, 50_000_000) {
                Ok(b) => b,
                Err(e) => {
                    println!("| {n} | {m} | ({e}) | | | | |");
                    continue;
                }
            };
            let r = check(&best.schedule, model).unwrap();
            assert!(r.legal(), "{label} n={n} m={m}: {:?}", r.violations());
            let opt = r.makespan();
            assert_eq!(opt, best.makespan, "{label} n={n} m={m}");
            let lb = r.lower_bound().unwrap();
            assert!(lb <= opt);
            let mut top: Option<(u64, Algorithm)> = None;
            let mut best_d: Option<u64> = None;
            for a in algorithms(n) {
                if let Some(t) = makespan(a, n, m, model) {
                    assert!(t >= opt, "{label} n={n} m={m}: {a} beats the optimum");
                    if matches!(a, Algorithm::Dtree { .. }) {
                        best_d = Some(best_d.map_or(t, |b| b.min(t)));
                    } else {
                        tally(a.to_string(), t, opt);
                    }
                    if top.is_none_or(|x| t < x.0) {
                        top = Some((t, a));
                    }
                }
            }
            if let Some(t) = best_d {
                tally("dtree (best d)".into(), t, opt);
            }
            let greedy = makespan(Algorithm::Greedy, n, m, model);
            if let Some(t) = greedy {
                assert!(t >= opt, "{label} n={n} m={m}: greedy beats the optimum");
                tally("greedy".into(), t, opt);
            }
            let bold = |t: u64| {
                if t > opt {
                    format!("**{}**", fmt(t))
                } else {
                    fmt(t)
                }
            };
            let (bt, ba) = top.expect("some algorithm applies");
            rows += 1;
            best_opt += usize::from(bt == opt);
            greedy_opt += usize::from(greedy == Some(opt));
            bound_opt += usize::from(lb == opt);
            println!(
                "| {n} | {m} | {} | {} ({ba}) | {} | {} | {} |",
                fmt(opt),
                bold(bt),
                greedy.map_or("—".into(), bold),
                fmt(lb),
                best.nodes
            );
        }
    }
    println!(
        "\n{rows} cases: the best algorithm is optimal in {best_opt}, greedy in {greedy_opt}, \
         the lower bound is tight in {bound_opt}."
    );
    // every algorithm against the optimum (DTREE: the best d of each case)
    println!("\n| algorithm | applies | optimal | worst excess |");
    println!("|---|---|---|---|");
    for (name, applies, optimal, worst) in &each {
        println!("| {name} | {applies} | {optimal} | {} |", fmt(*worst));
    }
}

fn main() {
    let only = std::env::args().nth(1);
    let want = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let _ = TimeBase::UNIT;
    if want("postal") {
        for lam in ["1", "3/2", "2", "5/2", "3"] {
            let lambda: Ratio = lam.parse().unwrap();
            let model = Model::from(Postal::new(lambda).unwrap());
            table(&format!("postal, λ = {lam}"), &model, 6, 3);
        }
    }
    if want("oneport") {
        table("1-port", &Model::from(OnePort), 8, 3);
    }
    if want("kport") {
        for k in [2, 3] {
            let model = Model::from(KPort::new(k).unwrap());
            table(&format!("k-port, k = {k}"), &model, 6, 3);
        }
    }
    if want("logp") {
        for (l, o, g) in [
            ("1", "0", "1"),
            ("2", "1", "1"),
            ("1", "1", "2"),
            ("3", "1", "2"),
        ] {
            let p = |x: &str| x.parse::<Ratio>().unwrap();
            let model = Model::from(LogP::new(p(l), p(o), p(g), p("0")).unwrap());
            table(&format!("LogP, L = {l}, o = {o}, g = {g}"), &model, 6, 3);
        }
    }
}
