//! The planner picks by simulated time: its ranking equals an independent brute-force
//! simulation of the same candidates, and it picks the known-best algorithm in constructed cases.

use herald::{
    candidates, check, generate, plan, Algorithm, Collective, LogP, Model, OnePort, PlanRequest,
    Postal, Ratio, Request,
};
use proptest::prelude::*;

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
        let p = plan(
            &model,
            &PlanRequest {
                n,
                root: 0,
                bytes: 64,
                blocks: None,
            },
        )
        .unwrap();
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
    let p = plan(
        &model,
        &PlanRequest {
            n,
            root: 0,
            bytes: 64,
            blocks: None,
        },
    )
    .unwrap();
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
    let p = plan(
        &model,
        &PlanRequest {
            n: 100,
            root: 0,
            bytes: 0,
            blocks: Some(64),
        },
    )
    .unwrap();
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
    let p = plan(
        &logp,
        &PlanRequest {
            n: 16,
            root: 0,
            bytes: 1 << 16,
            blocks: None,
        },
    )
    .unwrap();
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
        let p = plan(&model, &PlanRequest { n, root, bytes: 64, blocks: Some(m) }).unwrap();
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
    assert!(plan(
        &model,
        &PlanRequest {
            n: 0,
            root: 0,
            bytes: 1,
            blocks: None
        }
    )
    .is_err());
    assert!(plan(
        &model,
        &PlanRequest {
            n: 4,
            root: 4,
            bytes: 1,
            blocks: None
        }
    )
    .is_err());
}
