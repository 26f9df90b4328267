//! Issue 5, ideal fat-tree: the checker's rules (latency 2h, channel capacities), Algorithms 1
//! and 2, the pipelined broadcast, product and prefix on real values, against recurrences (2)–(4)
//! and the lower bounds of Theorems 2 and 3. Table and reading: `docs/fat-tree.md`.

use herald::{
    check, generate,
    model::{FatTree, FatTreeCapacity, Problem},
    sim::{evaluate_fat_tree, Operands, Rule, ValueError},
    time::TimeBase,
    Algorithm, Collective, CostModel, Model, Report, Request, Schedule,
};
use proptest::prelude::*;

fn model(w: FatTreeCapacity) -> Model {
    Model::from(FatTree::new(w))
}

fn sched(n: u32, c: Collective, sends: &[(u64, u32, u32)]) -> Schedule {
    let mut b = Schedule::builder(n, c, TimeBase::UNIT).unwrap();
    for &(at, from, to) in sends {
        b.push(at, from, to, 0);
    }
    b.build().unwrap()
}

const B: Collective = Collective::Broadcast { root: 0, blocks: 1 };

fn run(algorithm: Algorithm, n: u32, w: FatTreeCapacity) -> Report {
    let model = model(w);
    let s = generate(&Request::broadcast(algorithm, n, 1, 0), &model)
        .unwrap_or_else(|e| panic!("{algorithm} n={n} w={w}: {e}"));
    check(&s, &model).unwrap()
}

fn legal(algorithm: Algorithm, n: u32, w: FatTreeCapacity) -> Report {
    let r = run(algorithm, n, w);
    assert!(
        r.legal(),
        "{algorithm} n={n} w={w}: {:?}",
        &r.violations()[..r.violations().len().min(3)]
    );
    r
}

// ---------------------------------------------------------------------------------------------
// Rules

#[test]
fn a_message_takes_twice_the_height_of_the_common_ancestor() {
    let s = sched(8, B, &[(0, 0, 4)]);
    let r = check(&s, &model(FatTreeCapacity::Linear)).unwrap();
    assert!(r.breaks(Rule::Incomplete));
    assert_eq!(r.completion().unwrap()[4], 6); // LCA is the root, height 3
                                               // forwarding before arrival is causality
    let s = sched(4, B, &[(0, 0, 2), (3, 2, 3), (0, 0, 1)]);
    let r = check(&s, &model(FatTreeCapacity::Linear)).unwrap();
    assert!(r.breaks(Rule::Causality));
    let s = sched(4, B, &[(0, 0, 2), (4, 2, 3), (1, 0, 1)]);
    let r = check(&s, &model(FatTreeCapacity::Linear)).unwrap();
    assert!(r.legal(), "{:?}", r.violations());
    assert_eq!(r.makespan(), 6);
}

#[test]
fn channel_capacity_is_per_step_and_direction() {
    // 0 → 2 and 1 → 3 at once: both use the up channel of {0, 1} in step 1 (capacity w(2))
    let s = sched(4, B, &[(0, 0, 2), (2, 0, 1), (4, 2, 3)]);
    assert!(check(&s, &model(FatTreeCapacity::One)).unwrap().legal());
    let two = sched(4, B, &[(0, 0, 1), (2, 0, 2), (2, 1, 3)]);
    let r = check(&two, &model(FatTreeCapacity::One)).unwrap();
    assert!(r.breaks(Rule::ChannelCapacity));
    assert!(r
        .violations()
        .iter()
        .any(|v| v.detail.contains("up channel of leaves 0..2")));
    // capacity w(2) = 2 with w = log or linear
    assert!(check(&two, &model(FatTreeCapacity::Log)).unwrap().legal());
    // one send per step per processor (the leaf channel has capacity 1)
    let s = sched(4, B, &[(0, 0, 1), (0, 0, 2), (2, 1, 3)]);
    let r = check(&s, &model(FatTreeCapacity::Linear)).unwrap();
    assert!(r.breaks(Rule::ChannelCapacity));
    // one arrival per step per processor
    let s = sched(4, B, &[(0, 0, 1), (2, 0, 3), (2, 1, 2)]);
    let r = check(&s, &model(FatTreeCapacity::Linear)).unwrap();
    assert!(r.legal(), "{:?}", r.violations());
    let s = sched(4, B, &[(0, 0, 2), (2, 0, 1), (4, 1, 3), (6, 2, 3)]);
    let r = check(&s, &model(FatTreeCapacity::Linear)).unwrap();
    assert!(r.breaks(Rule::ChannelCapacity));
}

#[test]
fn the_fat_tree_needs_a_power_of_two() {
    let s = sched(6, B, &[(0, 0, 1)]);
    assert!(check(&s, &model(FatTreeCapacity::Log)).is_err());
    let m = model(FatTreeCapacity::Log);
    assert!(generate(&Request::broadcast(Algorithm::FatBroadcast, 6, 1, 0), &m).is_err());
    assert!(generate(&Request::broadcast(Algorithm::FatBroadcast, 8, 2, 0), &m).is_err());
    assert!(generate(&Request::broadcast(Algorithm::Binomial, 8, 1, 0), &m).is_err());
    assert!("cubic".parse::<FatTreeCapacity>().is_err());
}

// ---------------------------------------------------------------------------------------------
// Algorithms against recurrences and bounds

fn lb(t: &FatTree, n: u32) -> u64 {
    t.broadcast_lower_bound(Problem { n, m: 1 }, TimeBase::UNIT)
        .unwrap()
}

#[test]
fn broadcast_sparse_and_pipelined_within_recurrences_and_bounds() {
    for w in FatTreeCapacity::ALL {
        let t = FatTree::new(w);
        for e in 1..=12 {
            let n = 1u32 << e;
            let big = u64::from(n);
            let b = legal(Algorithm::FatBroadcast, n, w).makespan();
            assert!(b <= t.broadcast_recurrence(big), "(3) n={n} w={w}");
            assert!(b >= lb(&t, n), "Thm 2 n={n} w={w}");
            // round model: strictly above Theorem 3
            assert!(b as f64 > t.theorem3_bound(big), "Thm 3 n={n} w={w}");
            let p = legal(Algorithm::Pipelined, n, w).makespan();
            assert!(p <= t.pipelined_recurrence(big), "(4) n={n} w={w}");
            assert!(p >= lb(&t, n), "Thm 2 pipelined n={n} w={w}");
            // Sparse-Broadcast: only the copy holders finish, by the time of recurrence (2)
            let r = run(Algorithm::Sparse, n, w);
            assert!(r.violations().iter().all(|v| v.rule == Rule::Incomplete));
            let c = t.copies(big);
            let done = r.completion().unwrap();
            let spacing = n / c as u32;
            let mut last = 0;
            for p in 0..n {
                if p % spacing == 0 {
                    assert!(done[p as usize] != u64::MAX, "copy at {p}");
                    last = last.max(done[p as usize]);
                }
            }
            assert!(last <= t.sparse_recurrence(big, c), "(2) n={n} w={w}");
        }
    }
}

#[test]
fn broadcast_at_a_million_leaves() {
    let r = legal(Algorithm::FatBroadcast, 1 << 20, FatTreeCapacity::Log);
    assert!(r.makespan() <= FatTree::new(FatTreeCapacity::Log).broadcast_recurrence(1 << 20));
}

#[test]
fn roots_by_xor_relabelling() {
    let m = model(FatTreeCapacity::Sqrt);
    for root in [1, 5, 63] {
        let s = generate(&Request::broadcast(Algorithm::Pipelined, 64, 1, root), &m).unwrap();
        assert!(check(&s, &m).unwrap().legal());
    }
}

// ---------------------------------------------------------------------------------------------
// Product and prefix on real values

/// `x ↦ a·x + b (mod p)`, composed left then right: associative, not commutative.
fn affine(l: &(u64, u64), r: &(u64, u64)) -> (u64, u64) {
    const P: u64 = 1_000_000_007;
    ((r.0 * l.0) % P, (r.0 * l.1 + r.1) % P)
}

fn values(n: u32) -> Vec<(u64, u64)> {
    (0..n)
        .map(|i| (u64::from(i) % 7 + 2, u64::from(i) * 13 + 1))
        .collect()
}

#[test]
fn product_is_the_reversed_broadcast() {
    for w in FatTreeCapacity::ALL {
        for e in 1..=12 {
            let n = 1u32 << e;
            let m = model(w);
            let tree = FatTree::new(w);
            for root in [0, n - 1] {
                let req = Request::broadcast(Algorithm::Product, n, 1, root);
                let s = generate(&req, &m).unwrap();
                let r = check(&s, &m).unwrap();
                assert!(r.legal(), "n={n} w={w}: {:?}", r.violations().first());
                let b = legal(Algorithm::FatBroadcast, n, w).makespan();
                assert_eq!(r.makespan(), b, "reversal keeps the time");
                assert!(r.makespan() >= r.lower_bound().unwrap());
                let init: Vec<u64> = (0..u64::from(n)).map(|i| i * i + 1).collect();
                let sum: u64 = init.iter().sum();
                let v = evaluate_fat_tree(&s, &tree, init, Operands::Commutative, |a, b| a + b)
                    .unwrap();
                assert_eq!(v[root as usize], sum);
            }
        }
    }
}

#[test]
fn product_needs_commutativity() {
    // the reversed broadcast tree's subtrees are not runs of ranks (Figure 2's remark)
    let m = model(FatTreeCapacity::Linear);
    let s = generate(&Request::broadcast(Algorithm::Product, 64, 1, 0), &m).unwrap();
    let tree = FatTree::new(FatTreeCapacity::Linear);
    let r = evaluate_fat_tree(&s, &tree, values(64), Operands::Linear, affine);
    assert!(matches!(r, Err(ValueError::NonAdjacent { .. })), "{r:?}");
}

#[test]
fn prefix_on_a_non_commutative_operation() {
    for w in FatTreeCapacity::ALL {
        for e in 0..=12 {
            let n = 1u32 << e;
            let m = model(w);
            let tree = FatTree::new(w);
            let s = generate(&Request::broadcast(Algorithm::Prefix, n, 1, 0), &m).unwrap();
            let r = check(&s, &m).unwrap();
            assert!(r.legal(), "n={n} w={w}: {:?}", r.violations().first());
            assert!(r.makespan() >= r.lower_bound().unwrap());
            let init = values(n);
            let v = evaluate_fat_tree(&s, &tree, init.clone(), Operands::Linear, affine).unwrap();
            let mut acc = init[0];
            for i in 0..n as usize {
                if i > 0 {
                    acc = affine(&acc, &init[i]);
                }
                assert_eq!(v[i], acc, "n={n} i={i}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn random_trees(e in 1u32..11, wi in 0usize..4, root in 0u32..1024) {
        let w = FatTreeCapacity::ALL[wi];
        let n = 1u32 << e;
        let t = FatTree::new(w);
        let m = model(w);
        for a in [Algorithm::FatBroadcast, Algorithm::Pipelined] {
            let s = generate(&Request::broadcast(a, n, 1, root % n), &m).unwrap();
            let r = check(&s, &m).unwrap();
            prop_assert!(r.legal());
            prop_assert!(r.makespan() >= lb(&t, n));
            prop_assert!(r.makespan() <= t.broadcast_recurrence(u64::from(n)).max(t.pipelined_recurrence(u64::from(n))));
        }
    }
}
