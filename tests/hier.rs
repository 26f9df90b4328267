//! The hierarchical model: its checker reduces to the flat one when all levels are equal, catches
//! what per-level costs forbid, its lower bound never exceeds a brute-force optimum, and the
//! hierarchical schedules are legal and runnable.

use herald::{
    check, generate,
    model::LevelKind::*,
    model::{Assumptions, Hier, HierLevel, LevelCost, LevelKind, LevelSource},
    schedule::{earliest_arrival, leaders, place, Orders},
    sim::Rule,
    time::TimeBase,
    Algorithm, Collective, CostModel, Hierarchy, LogP, Model, Postal, Profile, Program, Ratio,
    Request, Schedule,
};
use proptest::prelude::*;

/// The hierarchy with the given arities below the machine (the last is the PU level).
fn hierarchy(arities: &[(LevelKind, usize)]) -> Hierarchy {
    Hierarchy::uniform(arities).unwrap()
}

/// Every level of `h` with the same costs (the PU level too, for ranks sharing a PU).
fn equal_levels(h: &Hierarchy, cost: LevelCost) -> Vec<HierLevel> {
    vec![HierLevel::new(cost); h.depth()]
}

/// Postal levels: `lambdas[d]` for depth `d` (`None`: no parameters).
fn postal_levels(lambdas: &[Option<u64>]) -> Vec<HierLevel> {
    lambdas
        .iter()
        .map(|l| match l {
            Some(l) => HierLevel::postal(Ratio::integer(*l)).unwrap(),
            None => HierLevel::default(),
        })
        .collect()
}

/// Two packages of four cores: λ = `cross` between packages, 2 inside.
fn two_packages(cross: u64, capacity: Option<u32>) -> Hier {
    let h = hierarchy(&[(Package, 2), (Core, 4), (Pu, 1)]);
    let mut levels = postal_levels(&[Some(cross), Some(2), None, None]);
    levels[1].capacity = capacity;
    Hier::compact(h, levels).unwrap()
}

fn report_key(r: &herald::Report) -> (bool, u64, u64, Vec<(Rule, u32, u64)>) {
    let v = r
        .violations()
        .iter()
        .map(|v| (v.rule, v.processor, v.at))
        .collect();
    (r.legal(), r.makespan(), r.violation_count(), v)
}

fn flat_cost() -> impl Strategy<Value = LevelCost> {
    prop_oneof![
        (2u64..12).prop_map(|l| LevelCost::Postal(Postal::new(Ratio::new(l, 2).unwrap()).unwrap())),
        (0u64..8, 0u64..4, 0u64..6).prop_map(|(l, o, g)| LevelCost::LogP(
            LogP::new(
                Ratio::integer(l),
                Ratio::integer(o + 1),
                Ratio::integer(g),
                Ratio::ZERO
            )
            .unwrap()
        )),
    ]
}

/// A broadcast of one block from rank 0 to 4 ranks with the given `(from, to, what, at)` sends.
fn sends(list: &[(u32, u32, u32, u64)]) -> Schedule {
    random_schedule(4, 1, list)
}

/// A broadcast from rank 0 with the given `(from, to, what, at)` sends (ranks and blocks taken
/// modulo `n` and `m`): mostly illegal when random.
fn random_schedule(n: u32, m: u32, sends: &[(u32, u32, u32, u64)]) -> Schedule {
    let mut b = Schedule::builder(
        n,
        Collective::Broadcast { root: 0, blocks: m },
        TimeBase::UNIT,
    )
    .unwrap();
    for &(from, to, what, at) in sends {
        b.push(at, from % n, to % n, what % m);
    }
    b.build().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// With every level equal, the hierarchical checker gives exactly the flat report.
    #[test]
    fn equal_levels_reduce_to_the_flat_checker(
        cost in flat_cost(),
        cores in 1usize..4,
        pus in 1usize..3,
        n in 2u32..12,
        m in 1u32..3,
        sends in prop::collection::vec((any::<u32>(), any::<u32>(), any::<u32>(), 0u64..40), 0..30),
        parents in prop::collection::vec(any::<u32>(), 12),
    ) {
        let h = hierarchy(&[(Package, 2), (Core, cores), (Pu, pus)]);
        let hier = Model::from(Hier::compact(h.clone(), equal_levels(&h, cost)).unwrap());
        let flat = match cost { LevelCost::Postal(p) => Model::from(p), LevelCost::LogP(l) => Model::from(l) };
        // arbitrary sends
        let s = random_schedule(n, m, &sends);
        prop_assert_eq!(report_key(&check(&s, &hier).unwrap()), report_key(&check(&s, &flat).unwrap()));
        // a random tree, placed under the flat rules (legal), then jittered
        let orders = Orders::from_fn(n, |p, out| {
            for b in 0..m {
                out.extend((1..n).filter(|&q| parents[q as usize] % q == p).map(|q| (q, b)));
            }
        }).unwrap();
        let timing = flat.timing(flat.time_base().unwrap()).unwrap();
        let placed = place(n, Collective::Broadcast { root: 0, blocks: m }, &orders, &timing).unwrap();
        let a = check(&placed, &hier).unwrap();
        prop_assert!(a.legal());
        prop_assert_eq!(report_key(&a), report_key(&check(&placed, &flat).unwrap()));
        let shifted: Vec<(u32, u32, u32, u64)> = placed.sends().enumerate()
            .map(|(i, x)| (x.from, x.to, x.what, x.at.saturating_sub((i % 3) as u64))).collect();
        let mut b = Schedule::builder(n, Collective::Broadcast { root: 0, blocks: m }, placed.base()).unwrap();
        for (from, to, what, at) in shifted { b.push(at, from, to, what); }
        let jittered = b.build().unwrap();
        prop_assert_eq!(report_key(&check(&jittered, &hier).unwrap()), report_key(&check(&jittered, &flat).unwrap()));
    }
}

#[test]
fn a_forward_before_the_slow_crossing_arrives_is_caught() {
    let model = Model::from(two_packages(10, None));
    let build = |forward_at| {
        let mut b = Schedule::builder(
            8,
            Collective::Broadcast { root: 0, blocks: 1 },
            TimeBase::UNIT,
        )
        .unwrap();
        b.push(0, 0, 4, 0); // across packages: arrives at 10
        b.push(forward_at, 4, 5, 0);
        for (i, q) in [1, 2, 3].into_iter().enumerate() {
            b.push(1 + i as u64, 0, q, 0);
        }
        b.push(forward_at + 1, 4, 6, 0);
        b.push(forward_at + 2, 4, 7, 0);
        b.build().unwrap()
    };
    // 4 holds the block only at 10 (λ = 10 between packages); a flat λ = 2 would allow 2.
    let early = check(&build(2), &model).unwrap();
    assert!(early.breaks(Rule::Causality));
    assert!(!early.legal());
    let flat = check(
        &build(2),
        &Model::from(Postal::new(Ratio::integer(2)).unwrap()),
    )
    .unwrap();
    assert!(flat.legal());
    let on_time = check(&build(10), &model).unwrap();
    assert!(on_time.legal(), "{:?}", on_time.violations());
    // 7 is informed last: 12 + 2
    assert_eq!(on_time.makespan(), 14);
}

#[test]
fn per_level_overheads_and_boundaries_are_enforced() {
    // LogGP: o = 1 inside a package, o = 5 across; a receive overhead of 5 at 4 ends at 4 + 5 + 5 = 14.
    let h = hierarchy(&[(Package, 2), (Core, 2), (Pu, 1)]);
    let logp = |l: u64, o: u64| {
        HierLevel::new(LevelCost::LogP(
            LogP::new(
                Ratio::integer(l),
                Ratio::integer(o),
                Ratio::ZERO,
                Ratio::ZERO,
            )
            .unwrap(),
        ))
    };
    let levels = vec![
        logp(4, 5),
        logp(1, 1),
        HierLevel::default(),
        HierLevel::default(),
    ];
    let model = Model::from(Hier::compact(h.clone(), levels).unwrap());
    let s = sends(&[
        (0, 2, 0, 0), // 0 → 2 across: 2 busy receiving during [9, 14)
        (0, 1, 0, 5), // 0 → 1 inside: arrives at 5 + 3 = 8
        (2, 3, 0, 14),
    ]);
    let r = check(&s, &model).unwrap();
    assert!(r.legal(), "{:?}", r.violations());
    assert_eq!(r.makespan(), 17);
    // the same sender sends to 1 while its 5-unit send overhead runs: send overlap
    let s = sends(&[(0, 2, 0, 0), (0, 1, 0, 4), (2, 3, 0, 14)]);
    assert!(check(&s, &model).unwrap().breaks(Rule::SendOverlap));
    // 0 sends across to 2 again at 6: 2 receives during [6 + 9, 6 + 14) = [15, 20), which meets
    // its own inner send overhead [15, 16) (one CPU); with the inner costs it would be [8, 9).
    let s = sends(&[(0, 2, 0, 0), (0, 1, 0, 5), (0, 2, 0, 6), (2, 3, 0, 15)]);
    let r = check(&s, &model).unwrap();
    assert!(r.breaks(Rule::CpuOverlap), "{:?}", r.violations());
    assert_eq!(r.violation_count(), 1);
    // boundary capacity 1 at the package level: two messages into package 1 at once
    let mut levels = postal_levels(&[Some(10), Some(2), None, None]);
    levels[1].capacity = Some(1);
    let model = Model::from(Hier::compact(h, levels).unwrap());
    let s = sends(&[
        (0, 1, 0, 0),
        (0, 2, 0, 1), // out of package 0 during [1, 11)
        (1, 3, 0, 2), // also out of package 0 during [2, 12): two at once
    ]);
    let r = check(&s, &model).unwrap();
    assert!(r.breaks(Rule::ChannelCapacity), "{:?}", r.violations());
    let s = sends(&[(0, 2, 0, 0), (0, 1, 0, 1), (2, 3, 0, 10)]);
    let r = check(&s, &model).unwrap();
    assert!(r.legal(), "{:?}", r.violations());
}

#[test]
fn bad_models_are_typed_errors() {
    let h = hierarchy(&[(Package, 2), (Core, 2), (Pu, 1)]);
    // too few levels
    assert!(Hier::compact(h.clone(), postal_levels(&[Some(2)])).is_err());
    // ranks meet across packages, but the machine level has no costs
    assert!(Hier::compact(h.clone(), postal_levels(&[None, Some(2), None, None])).is_err());
    // mixed families
    let mut levels = postal_levels(&[Some(3), Some(2), None, None]);
    levels[0] = HierLevel::new(LevelCost::LogP(
        LogP::new(Ratio::ONE, Ratio::ONE, Ratio::ONE, Ratio::ZERO).unwrap(),
    ));
    assert!(Hier::compact(h.clone(), levels).is_err());
    // capacity 0, capacity on the machine
    let mut levels = postal_levels(&[Some(3), Some(2), None, None]);
    levels[1].capacity = Some(0);
    assert!(Hier::compact(h.clone(), levels.clone()).is_err());
    levels[1].capacity = None;
    levels[0].capacity = Some(1);
    assert!(Hier::compact(h.clone(), levels).is_err());
    // no level with costs at all (one rank: no pair needs any)
    assert!(Hier::new(h.clone(), &[0], postal_levels(&[None, None, None, None])).is_err());
    // an unknown CPU in the rank map
    assert!(Hier::new(
        h.clone(),
        &[0, 99],
        postal_levels(&[Some(3), Some(2), None, None])
    )
    .is_err());
    // more ranks than PUs: two ranks share a PU, whose level has no costs
    let model =
        Model::from(Hier::compact(h, postal_levels(&[Some(3), Some(2), None, None])).unwrap());
    assert!(generate(&Request::broadcast(Algorithm::Binomial, 6, 1, 0), &model).is_err());
    // algorithms the hierarchical model does not define
    assert!(generate(&Request::broadcast(Algorithm::Bcast, 4, 1, 0), &model).is_err());
}

/// Brute force for one block under hierarchical postal costs: every rooted tree on `n` ranks with
/// every order of each rank's children, each send as early as possible (a rank sends its `j`-th
/// child at `informed + j`, the child informed λ(pair) later). Without capacities each rank
/// receives once, so nothing else binds and as-early-as-possible is optimal for a fixed tree and
/// order.
fn brute_force(n: u32, lambda: &dyn Fn(u32, u32) -> u64) -> u64 {
    fn go(
        informed: &mut Vec<Option<u64>>,
        next: &mut Vec<u64>,
        lambda: &dyn Fn(u32, u32) -> u64,
        best: &mut u64,
    ) {
        let n = informed.len() as u32;
        let done: Vec<u64> = informed.iter().flatten().copied().collect();
        let now = done.iter().copied().max().unwrap_or(0);
        if now >= *best {
            return;
        }
        if done.len() == informed.len() {
            *best = now;
            return;
        }
        // the next send: any informed p to any uninformed q (children in send order)
        for p in 0..n {
            let Some(t) = informed[p as usize] else {
                continue;
            };
            let start = next[p as usize].max(t);
            for q in 0..n {
                if informed[q as usize].is_some() {
                    continue;
                }
                informed[q as usize] = Some(start + lambda(p, q));
                let saved = next[p as usize];
                next[p as usize] = start + 1;
                go(informed, next, lambda, best);
                next[p as usize] = saved;
                informed[q as usize] = None;
            }
        }
    }
    let mut informed = vec![None; n as usize];
    informed[0] = Some(0);
    let mut best = u64::MAX;
    go(&mut informed, &mut vec![0; n as usize], lambda, &mut best);
    best
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// lower bound ≤ brute-force optimum ≤ every generated schedule, and every generated
    /// schedule is legal; with m = 1, the earliest-arrival tree is within the brute force's reach.
    #[test]
    fn bound_and_schedules_bracket_the_optimum(cross in 1u64..12, inner in 1u64..5, n in 2u32..7) {
        let model = two_packages_small(cross, inner);
        let h = model.hierarchy().clone();
        let lam = |p: u32, q: u32| if h.lca_level(p as usize, q as usize) == 0 { cross } else { inner };
        let opt = brute_force(n, &lam);
        let m = Model::from(model.clone());
        let mut best = u64::MAX;
        for a in [Algorithm::Binomial, Algorithm::Star, Algorithm::Chain, Algorithm::Leaders, Algorithm::Earliest] {
            let s = generate(&Request::broadcast(a, n, 1, 0), &m).unwrap();
            let r = check(&s, &m).unwrap();
            prop_assert!(r.legal(), "{a}: {:?}", r.violations());
            prop_assert!(r.lower_bound().unwrap() <= opt);
            prop_assert!(r.makespan() >= opt, "{a} beats the optimum");
            best = best.min(r.makespan());
            prop_assert!(Program::compile(&s).is_ok());
        }
        prop_assert!(best >= opt);
    }
}

/// Two packages of three cores (postal λ per level).
fn two_packages_small(cross: u64, inner: u64) -> Hier {
    let h = hierarchy(&[(Package, 2), (Core, 3), (Pu, 1)]);
    Hier::compact(h, postal_levels(&[Some(cross), Some(inner), None, None])).unwrap()
}

#[test]
fn leaders_and_earliest_handle_blocks_roots_and_logp() {
    let h = hierarchy(&[(Package, 2), (Cache(3), 2), (Core, 2), (Pu, 1)]);
    let logp = |l: u64, o: u64, g: u64| {
        HierLevel::new(LevelCost::LogP(
            LogP::new(
                Ratio::integer(l),
                Ratio::integer(o),
                Ratio::integer(g),
                Ratio::ONE,
            )
            .unwrap(),
        ))
    };
    let levels = vec![
        logp(40, 6, 10),
        logp(12, 3, 5),
        logp(4, 2, 3),
        HierLevel::default(),
        HierLevel::default(),
    ];
    let hier = Hier::compact(h, levels).unwrap().with_bytes(64).unwrap();
    let model = Model::from(hier.clone());
    for (n, m, root) in [(8, 1, 0), (8, 3, 5), (5, 2, 4), (1, 1, 0)] {
        for spec in [
            herald::schedule::Leaders {
                split: vec![1, 2],
                algorithms: vec![Algorithm::Star, Algorithm::Binomial, Algorithm::Chain],
            },
            herald::schedule::Leaders {
                split: vec![2],
                algorithms: vec![Algorithm::Knomial { radix: 3 }, Algorithm::Binary],
            },
        ] {
            let s = leaders(&hier, n, m, root, &spec).unwrap();
            let r = check(&s, &model).unwrap();
            assert!(r.legal(), "{spec} n={n} m={m}: {:?}", r.violations());
            assert!(r.makespan() >= r.lower_bound().unwrap());
            assert!(Program::compile(&s).is_ok());
        }
        let s = earliest_arrival(&hier, n, m, root).unwrap();
        let r = check(&s, &model).unwrap();
        assert!(r.legal(), "earliest n={n} m={m}: {:?}", r.violations());
        assert!(Program::compile(&s).is_ok());
    }
    // the optimal stage tree is for one block
    let spec = herald::schedule::Leaders {
        split: vec![1],
        algorithms: vec![Algorithm::Optimal, Algorithm::Optimal],
    };
    assert!(leaders(&hier, 8, 1, 0, &spec).is_ok());
    assert!(leaders(&hier, 8, 2, 0, &spec).is_err());
    // malformed specs are errors, not panics
    for (split, k) in [(vec![2, 1], 3), (vec![0], 2), (vec![9], 2), (vec![1], 1)] {
        let spec = herald::schedule::Leaders {
            split,
            algorithms: vec![Algorithm::Binomial; k],
        };
        assert!(leaders(&hier, 8, 1, 0, &spec).is_err());
    }
}

#[test]
fn profiles_fill_unmeasured_levels_by_a_stated_assumption() {
    let profile = Profile::from_json(include_str!("data/profile-2core.json")).unwrap();
    let h = herald::topology::parse_synthetic("pack:2 l3:2 core:4 pu:1").unwrap();
    let cpus = h.os_indices().to_vec();
    let depth = |k| h.find(k).unwrap();
    let (l3, package) = (depth(Cache(3)), depth(Package));
    let model = Hier::from_profile(&profile, h.clone(), &cpus, &Assumptions::default()).unwrap();
    // measured l3: L = 20, o = (30 + 25)/2, g = 40, G = 0.25 ns/byte
    let Some(LevelCost::LogP(l)) = model.levels()[l3].cost else {
        panic!()
    };
    assert_eq!(
        (l.l(), l.o(), l.g()),
        (
            Ratio::integer(20),
            Ratio::new(55, 2).unwrap(),
            Ratio::integer(40)
        )
    );
    // package: twice l3, every parameter; the level above (cross-package) four times
    let Some(LevelCost::LogP(p)) = model.levels()[package].cost else {
        panic!()
    };
    assert_eq!(
        (p.l(), p.o(), p.g(), p.big_g()),
        (
            Ratio::integer(40),
            Ratio::integer(55),
            Ratio::integer(80),
            Ratio::new(1, 2).unwrap()
        )
    );
    let top = (0..package)
        .rev()
        .find(|&d| model.levels()[d].cost.is_some())
        .unwrap();
    assert_eq!(
        model.sources()[top],
        LevelSource::Assumed {
            from: "l3".into(),
            factor: Ratio::integer(4)
        }
    );
    // the caller overrides a level and the factor
    let assume = Assumptions {
        factor: Ratio::integer(3),
        levels: vec![(
            "package".into(),
            HierLevel::new(LevelCost::LogP(
                LogP::new(
                    Ratio::integer(100),
                    Ratio::integer(10),
                    Ratio::integer(10),
                    Ratio::ZERO,
                )
                .unwrap(),
            )),
        )],
        ..Assumptions::default()
    };
    let model = Hier::from_profile(&profile, h.clone(), &cpus, &assume).unwrap();
    assert_eq!(model.sources()[package], LevelSource::Given);
    let Some(LevelCost::LogP(t)) = model.levels()[top].cost else {
        panic!()
    };
    assert_eq!(t.l(), Ratio::integer(300)); // 3 × the given package level
                                            // a profile without any level the ranks can use is a typed error
    let mut empty = profile.clone();
    empty.levels.retain(|l| l.name != "l3");
    assert!(Hier::from_profile(&empty, h, &cpus, &Assumptions::default()).is_err());
}

fn level_cost(postal: bool) -> impl Strategy<Value = LevelCost> {
    let postal_cost =
        (2u64..40).prop_map(|l| LevelCost::Postal(Postal::new(Ratio::new(l, 2).unwrap()).unwrap()));
    let logp_cost = (0u64..30, 0u64..6, 0u64..8, 0u64..3).prop_map(|(l, o, g, big)| {
        LevelCost::LogP(
            LogP::new(
                Ratio::integer(l),
                Ratio::integer(o + 1),
                Ratio::integer(g),
                Ratio::new(big, 2).unwrap(),
            )
            .unwrap()
            .with_bytes(8)
            .unwrap(),
        )
    });
    if postal {
        postal_cost.boxed()
    } else {
        logp_cost.boxed()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Every schedule generated under random per-level costs and boundary capacities is legal
    /// under the checker, never beats the lower bound, and compiles for the runtime.
    #[test]
    fn generated_schedules_are_legal_under_random_levels(
        postal in any::<bool>(),
        picks in prop::collection::vec((any::<bool>(), 1u32..3), 5),
        seed_costs in prop::collection::vec(level_cost(true), 5),
        seed_logp in prop::collection::vec(level_cost(false), 5),
        n in 2u32..17,
        m in 1u32..3,
        root_seed in any::<u32>(),
    ) {
        let h = hierarchy(&[(Package, 2), (Cache(3), 2), (Core, 2), (Pu, 2)]);
        let levels: Vec<HierLevel> = (0..h.depth()).map(|d| {
            let cost = if postal { seed_costs[d] } else { seed_logp[d] };
            let (bounded, w) = picks[d];
            HierLevel { cost: Some(cost), capacity: (d > 0 && bounded).then_some(w) }
        }).collect();
        let hier = Hier::compact(h, levels).unwrap();
        let model = Model::from(hier.clone());
        let root = root_seed % n;
        let algorithms = [Algorithm::Binomial, Algorithm::Star, Algorithm::Chain, Algorithm::Binary,
            Algorithm::ScatterAllgather, Algorithm::Knomial { radix: 3 }, Algorithm::Leaders, Algorithm::Earliest];
        for a in algorithms {
            let s = generate(&Request::broadcast(a, n, m, root), &model).unwrap();
            let r = check(&s, &model).unwrap();
            prop_assert!(r.legal(), "{a} n={n} m={m} root={root}: {:?}", r.violations().first());
            prop_assert!(r.makespan() >= r.lower_bound().unwrap(), "{a} beats the bound");
            prop_assert!(Program::compile(&s).is_ok());
        }
    }
}
