//! The planner picks by simulated time: its ranking equals an independent brute-force
//! simulation of the same candidates, and it picks the known-best algorithm in constructed cases.

use herald::{
    check, generate, model::OnePort, plan, plan::candidates, Algorithm, Collective, LogP, Model,
    PlanRequest, Postal, Ratio, Request,
};
use proptest::prelude::*;

/// [`plan`] of a broadcast of `bytes` (in `blocks` blocks, or the planner's choice) from `root`
/// to `n` ranks.
fn plan_for(
    model: &Model,
    n: u32,
    root: u32,
    bytes: u64,
    blocks: Option<u32>,
) -> Result<herald::Plan, herald::plan::PlanError> {
    plan(
        model,
        &PlanRequest {
            n,
            root,
            bytes,
            blocks,
        },
    )
}

/// The broadcast tree's root fan-out of the planner's winner.
fn root_fanout(model: &Model, a: Algorithm, n: u32, m: u32) -> usize {
    let s = generate(&Request::broadcast(a, n, m, 0), model).unwrap();
    let mut to: Vec<u32> = s.sends_of(0).map(|x| x.to).collect();
    to.sort_unstable();
    to.dedup();
    to.len()
}

#[test]
fn lambda_one_gives_the_binomial_time() {
    let model = Model::from(Postal::new(Ratio::ONE).unwrap());
    for n in [2u32, 7, 64, 1000] {
        let p = plan_for(&model, n, 0, 64, None).unwrap();
        let best = p.best().unwrap();
        // ⌈log2 n⌉: the binomial tree's time, optimal at λ = 1 (Lemma 5 at λ = 1).
        let log = 32 - (n - 1).leading_zeros();
        assert_eq!(best.makespan, Ratio::integer(u64::from(log)), "n={n}");
        // and the binomial tree itself is among the winners
        let binomial = p
            .ranked
            .iter()
            .find(|c| c.algorithm == Algorithm::Binomial)
            .unwrap();
        assert_eq!(binomial.makespan, best.makespan);
    }
}

#[test]
fn large_latency_gives_wide_trees() {
    // λ = 50 on 40 ranks: the best tree sends from the root to (almost) everyone, since each
    // message takes 50 sends' time to arrive.
    let model = Model::from(Postal::new(Ratio::integer(50)).unwrap());
    let n = 40;
    let p = plan_for(&model, n, 0, 64, None).unwrap();
    let best = p.best().unwrap();
    assert!(
        root_fanout(&model, best.algorithm, n, 1) >= (n as usize - 1) * 3 / 4,
        "{best:?}"
    );
    // the star is within one unit of it: 50 + 38 vs the optimum
    let star = p
        .ranked
        .iter()
        .find(|c| c.algorithm == Algorithm::Star)
        .unwrap();
    assert!(star.makespan <= Ratio::integer(50 + 39));
}

#[test]
fn many_blocks_go_pipelined_or_round_optimal() {
    // 1-port, 64 blocks to 100 ranks: the round-optimal schedule meets m − 1 + ⌈log2 n⌉.
    let model = Model::from(OnePort);
    let p = plan_for(&model, 100, 0, 0, Some(64)).unwrap();
    assert_eq!(p.best().unwrap().algorithm, Algorithm::Optimal);
    assert_eq!(p.best().unwrap().makespan, Ratio::integer(63 + 7));
    // LogGP with a large payload: cutting it into blocks beats one big message.
    let logp = Model::from(
        LogP::new(
            Ratio::integer(200),
            Ratio::integer(20),
            Ratio::integer(20),
            Ratio::ONE,
        )
        .unwrap(),
    );
    blocks_pay_off(&logp, 16);
}

/// Under `model`, cutting 64 KiB into blocks beats every single-message candidate.
fn blocks_pay_off(model: &Model, n: u32) {
    let p = plan_for(model, n, 0, 1 << 16, None).unwrap();
    let best = p.best().unwrap();
    assert!(best.blocks > 1, "{best:?}");
    let single = p
        .ranked
        .iter()
        .filter(|c| c.blocks == 1)
        .map(|c| c.makespan)
        .min()
        .unwrap();
    assert!(best.makespan < single);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The ranking equals simulating every candidate independently and sorting.
    #[test]
    fn ranking_equals_brute_force(lambda_num in 2u64..20, n in 1u32..40, m in 1u32..4, root_seed in any::<u32>()) {
        let model = Model::from(Postal::new(Ratio::new(lambda_num, 2).unwrap()).unwrap());
        let root = root_seed % n;
        let p = plan_for(&model, n, root, 64, Some(m)).unwrap();
        let mut brute = vec![];
        for a in candidates(&model, n, m).unwrap() {
            let Ok(s) = generate(&Request::broadcast(a, n, m, root), &model) else { continue };
            prop_assert_eq!(s.collective(), Collective::Broadcast { root, blocks: m });
            let r = check(&s, &model).unwrap();
            if r.legal() {
                brute.push((r.base().ratio(r.makespan()), a.to_string()));
            }
        }
        brute.sort();
        let ranked: Vec<(Ratio, String)> = p.ranked.iter().map(|c| (c.makespan, c.algorithm.to_string())).collect();
        prop_assert_eq!(ranked, brute);
    }
}

#[test]
fn bad_problems_are_typed_errors() {
    let model = Model::from(Postal::new(Ratio::ONE).unwrap());
    assert!(plan_for(&model, 0, 0, 1, None).is_err());
    assert!(plan_for(&model, 4, 4, 1, None).is_err());
}

// ------------------------------------------------------------- the hierarchical model

use herald::{
    model::{Hier, HierLevel, LevelKind},
    plan::{best_stage_tree, hier_candidates, plan_profile, schedule_of},
    schedule::stage_members,
    Hierarchy, Profile, Program,
};

/// `packages` packages of `cores` cores; λ = `cross` between packages (boundary capacity `w` per
/// package), λ = 2 inside.
fn packages(packages: usize, cores: usize, cross: u64, w: Option<u32>) -> Hier {
    let h = Hierarchy::uniform(&[
        (LevelKind::Package, packages),
        (LevelKind::Core, cores),
        (LevelKind::Pu, 1),
    ])
    .unwrap();
    let mut package = HierLevel::postal(Ratio::integer(2)).unwrap();
    package.capacity = w;
    let levels = vec![
        HierLevel::postal(Ratio::integer(cross)).unwrap(),
        package,
        HierLevel::default(),
        HierLevel::default(),
    ];
    Hier::compact(h, levels).unwrap()
}

/// Messages of `s` that enter each package from outside, by package.
fn entering(s: &herald::Schedule, cores: u32, packages: u32) -> Vec<usize> {
    (0..packages)
        .map(|k| {
            s.sends()
                .filter(|x| x.to / cores == k && x.from / cores != k)
                .count()
        })
        .collect()
}

#[test]
fn slow_packages_get_exactly_one_crossing_each() {
    // λ = 30 between packages, 2 inside, at most one message across a package's boundary at a
    // time. A second message into a package would enter at least 30 after the first (capacity),
    // so it could not inform anyone before 30 + 30 = 60; one message at time 0 and a tree inside
    // finish by 30 + f_2(4) = 34 at the latest (the root's own package needs only f_2(4) = 4 from
    // time 1). So the winner sends exactly one message into each package without the root.
    for (p, root) in [(2u32, 0u32), (2, 5), (4, 0), (4, 6)] {
        let hier = packages(p as usize, 4, 30, Some(1));
        let model = Model::from(hier.clone());
        let n = 4 * p;
        let plan = plan_for(&model, n, root, 64, None).unwrap();
        let best = plan.best().unwrap();
        let s = schedule_of(&model, best, n, root).unwrap();
        let r = check(&s, &model).unwrap();
        assert!(r.legal());
        assert_eq!(r.base().ratio(r.makespan()), best.makespan);
        let limit = if p == 2 { 34 } else { 30 * 2 + 4 };
        assert!(best.makespan <= Ratio::integer(limit), "{best:?}");
        let into = entering(&s, 4, p);
        for (k, &c) in into.iter().enumerate() {
            let expected = usize::from(k as u32 != root / 4);
            assert_eq!(
                c, expected,
                "package {k} of {p}, root {root}: {}",
                best.label
            );
        }
        assert!(Program::compile(&s).is_ok());
    }
}

/// The plan for `n` ranks, root 0, 64 bytes.
fn plan_from_root_0(model: &Model, n: u32) -> herald::Plan {
    plan_for(model, n, 0, 64, None).unwrap()
}

#[test]
fn equal_levels_plan_like_the_flat_model() {
    // every level λ = 1: nothing beats ⌈log2 n⌉ (binomial); λ = 50: wide trees
    for (lambda, n) in [(1u64, 16u32), (50, 16)] {
        let h = Hierarchy::uniform(&[
            (LevelKind::Package, 2),
            (LevelKind::Core, 8),
            (LevelKind::Pu, 1),
        ])
        .unwrap();
        let levels = vec![HierLevel::postal(Ratio::integer(lambda)).unwrap(); 4];
        let model = Model::from(Hier::compact(h, levels).unwrap());
        let p = plan_from_root_0(&model, n);
        let best = p.best().unwrap();
        if lambda == 1 {
            assert_eq!(best.makespan, Ratio::integer(4));
        } else {
            // the star: 50 + 14; a binomial tree needs 4 latencies
            assert!(best.makespan <= Ratio::integer(50 + 15), "{best:?}");
            let s = schedule_of(&model, best, n, 0).unwrap();
            assert!(s.sends_of(0).count() >= 12, "{}", best.label);
        }
    }
}

#[test]
fn many_blocks_pipeline_under_a_hierarchical_logp() {
    // LogGP levels, 64 KiB: cutting the payload into blocks beats one message
    let h = Hierarchy::uniform(&[
        (LevelKind::Package, 2),
        (LevelKind::Core, 4),
        (LevelKind::Pu, 1),
    ])
    .unwrap();
    let logp = |l: u64| {
        HierLevel::new(herald::model::LevelCost::LogP(
            LogP::new(
                Ratio::integer(l),
                Ratio::integer(20),
                Ratio::integer(20),
                Ratio::ONE,
            )
            .unwrap(),
        ))
    };
    let levels = vec![
        logp(400),
        logp(100),
        HierLevel::default(),
        HierLevel::default(),
    ];
    blocks_pay_off(&Model::from(Hier::compact(h, levels).unwrap()), 8);
}

/// A random hierarchical postal model: 2 packages × 2 l3 × 2 cores, λ per level.
fn random_hier(cross: u64, mid: u64, inner: u64, w: Option<u32>) -> Hier {
    let h = Hierarchy::uniform(&[
        (LevelKind::Package, 2),
        (LevelKind::Cache(3), 2),
        (LevelKind::Core, 2),
        (LevelKind::Pu, 1),
    ])
    .unwrap();
    let mut mid_level = HierLevel::postal(Ratio::new(mid, 2).unwrap()).unwrap();
    mid_level.capacity = w;
    let levels = vec![
        HierLevel::postal(Ratio::new(cross, 2).unwrap()).unwrap(),
        mid_level,
        HierLevel::postal(Ratio::new(inner, 2).unwrap()).unwrap(),
        HierLevel::default(),
        HierLevel::default(),
    ];
    Hier::compact(h, levels).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// The hierarchical ranking equals regenerating and simulating every ranked candidate
    /// independently; each leaders stage took the fastest tree on its own subproblem.
    #[test]
    fn hierarchical_ranking_equals_brute_force(
        cross in 2u64..60, mid in 2u64..20, inner in 2u64..8, w in prop::option::of(1u32..3),
        n in 1u32..9, m in 1u32..3, root_seed in any::<u32>(),
    ) {
        let hier = random_hier(cross, mid, inner, w);
        let model = Model::from(hier.clone());
        let root = root_seed % n;
        let req = PlanRequest { n, root, bytes: 64, blocks: Some(m) };
        let p = plan(&model, &req).unwrap();
        let mut brute = vec![];
        for a in hier_candidates(&hier, n).unwrap() {
            let Ok(s) = generate(&Request::broadcast(a, n, m, root), &model) else { continue };
            let r = check(&s, &model).unwrap();
            if r.legal() {
                brute.push((r.base().ratio(r.makespan()), a.to_string()));
            }
        }
        for c in p.ranked.iter().filter(|c| c.leaders.is_some()) {
            let spec = c.leaders.as_ref().unwrap();
            let s = herald::schedule::leaders(&hier, n, m, root, spec).unwrap();
            let r = check(&s, &model).unwrap();
            prop_assert!(r.legal());
            brute.push((r.base().ratio(r.makespan()), c.label.clone()));
            // each stage: no stage tree does better on the stage's subproblem
            for (stage, &chosen) in spec.algorithms.iter().enumerate() {
                prop_assert_eq!(best_stage_tree(&hier, &req, &spec.split, stage, m).unwrap(), chosen);
                let members = stage_members(&hier, n, root, &spec.split, stage);
                if members.len() < 2 { continue; }
                let sub = hier.restrict(&members).unwrap();
                let sm = Model::from(sub.clone());
                let time = |a: Algorithm| {
                    let one = herald::schedule::Leaders { split: vec![], algorithms: vec![a] };
                    herald::schedule::leaders(&sub, members.len() as u32, m, 0, &one).ok()
                        .and_then(|s| check(&s, &sm).ok()).filter(|r| r.legal()).map(|r| r.makespan())
                };
                let mine = time(chosen).unwrap();
                for a in [Algorithm::Binomial, Algorithm::Binary, Algorithm::Chain, Algorithm::Star] {
                    if let Some(t) = time(a) { prop_assert!(mine <= t, "stage {stage}: {chosen} vs {a}"); }
                }
            }
        }
        brute.sort();
        let ranked: Vec<(Ratio, String)> = p.ranked.iter().map(|c| (c.makespan, c.label.clone())).collect();
        prop_assert_eq!(ranked, brute);
    }
}

#[test]
fn the_runtime_gets_a_schedule_from_a_profile() {
    let profile = Profile::from_json(include_str!("data/profile-2core.json")).unwrap();
    let h = herald::topology::parse_synthetic("pack:2 l3:2 core:4 pu:1").unwrap();
    let req = PlanRequest {
        n: 16,
        root: 3,
        bytes: 4096,
        blocks: None,
    };
    let (s, c) = plan_profile(&profile, &h, &req).unwrap();
    assert_eq!(
        s.collective(),
        Collective::Broadcast {
            root: 3,
            blocks: c.blocks
        }
    );
    assert!(Program::compile(&s).is_ok());
    // the same choice as planning the model by hand
    let cpus = h.os_indices().to_vec();
    let model = Model::from(
        Hier::from_profile(&profile, h, &cpus, &herald::model::Assumptions::default()).unwrap(),
    );
    let p = plan_for(&model, 16, 3, 4096, None).unwrap();
    assert_eq!(p.best(), Some(&c));
    let sized = herald::plan::candidate_model(&model, &c).unwrap();
    let r = check(&schedule_of(&model, &c, 16, 3).unwrap(), &sized).unwrap();
    assert_eq!(r.base().ratio(r.makespan()), c.makespan);
}
