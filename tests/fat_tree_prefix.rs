//! Issue 22, part 2: prefix on the ideal fat-tree in (at most twice) the broadcast's time —
//! Bilardi et al.'s Theorem 6 — and the checker's piece rule it needs (a processor keeps the
//! partial products it received and may send any run of ranks it can tile with them).
//! Expectations: the checker's verdict, real values of a non-commutative operation, the
//! broadcast's own time, and the Brent–Kung sweep's time computed here from its definition.

use herald::{
    check, generate,
    model::{FatTree, FatTreeCapacity},
    sim::{evaluate_fat_tree, Operands, Rule},
    time::TimeBase,
    Algorithm, Collective, Model, Request, Schedule,
};

/// `x ↦ a·x + b (mod p)`, composed left then right: associative, not commutative.
fn affine(l: &(u64, u64), r: &(u64, u64)) -> (u64, u64) {
    const P: u64 = 1_000_000_007;
    ((r.0 * l.0) % P, (r.0 * l.1 + r.1) % P)
}

fn model(w: FatTreeCapacity) -> Model {
    Model::from(FatTree::new(w))
}

fn run(alg: Algorithm, n: u32, w: FatTreeCapacity) -> Schedule {
    generate(&Request::broadcast(alg, n, 1, 0), &model(w)).unwrap()
}

/// The last arrival of a schedule's sends (`2h` after each start).
fn span(s: &Schedule) -> u64 {
    s.sends()
        .map(|x| x.at + 2 * u64::from(FatTree::height(x.from, x.to)))
        .max()
        .unwrap_or(0)
}

/// Brent–Kung up- and down-sweep in rounds, from its definition (herald's former prefix).
fn sweep_time(n: u32) -> u64 {
    let e = n.trailing_zeros();
    let mut t: u64 = (1..=e).map(|j| 2 * u64::from(j)).sum();
    let mut s = n / 4;
    while s >= 1 {
        let h = (0..)
            .map(|k: u32| (2 * s * (k + 1) - 1, 2 * s * (k + 1) + s - 1))
            .take_while(|&(_, to)| to < n)
            .map(|(a, b)| FatTree::height(a, b))
            .max()
            .unwrap_or(0);
        t += 2 * u64::from(h);
        s /= 2;
    }
    t
}

fn prefix_schedule(n: u32, sends: &[(u64, u32, u32, (u32, u32))]) -> Schedule {
    let mut b = Schedule::builder(n, Collective::Prefix, TimeBase::UNIT).unwrap();
    for &(at, from, to, (lo, hi)) in sends {
        b.push(at, from, to, FatTree::piece(n, lo, hi));
    }
    b.build().unwrap()
}

#[test]
fn pieces_are_kept_and_combined_in_rank_order() {
    let w = FatTreeCapacity::Linear;
    let tree = FatTree::new(w);
    // 1 → 0 returns a1 (arrives 2); 0 then sends a0 to 1 and a0·a1 to 2 (one per step);
    // 2 sends a0·a1·a2 to 3
    let s = prefix_schedule(
        4,
        &[
            (0, 1, 0, (1, 1)),
            (2, 0, 1, (0, 0)),
            (3, 0, 2, (0, 1)),
            (7, 2, 3, (0, 2)),
        ],
    );
    let r = check(&s, &model(w)).unwrap();
    assert!(r.legal(), "{:?}", r.violations());
    assert_eq!(r.makespan(), 9);
    let init: Vec<(u64, u64)> = (0..4).map(|i| (i + 2, 3 * i + 1)).collect();
    let v = evaluate_fat_tree(&s, &tree, init.clone(), Operands::Linear, affine).unwrap();
    let mut acc = init[0];
    for i in 0..4 {
        if i > 0 {
            acc = affine(&acc, &init[i]);
        }
        assert_eq!(v[i], acc);
    }
}

#[test]
fn a_run_the_sender_cannot_tile_is_flagged() {
    let w = FatTreeCapacity::Linear;
    // 0 sends 0..=1 before 1's value has arrived
    let s = prefix_schedule(4, &[(0, 1, 0, (1, 1)), (1, 0, 2, (0, 1))]);
    let r = check(&s, &model(w)).unwrap();
    assert!(r.breaks(Rule::Causality), "{:?}", r.violations());
    assert!(r.breaks(Rule::Incomplete));
    // a payload that names no run
    let mut b = Schedule::builder(4, Collective::Prefix, TimeBase::UNIT).unwrap();
    b.push(0, 0, 1, FatTree::piece(4, 0, 0));
    b.push(0, 2, 3, 0);
    let r = check(&b.build().unwrap(), &model(w)).unwrap();
    assert!(r.breaks(Rule::BadPayload));
    assert_eq!(FatTree::piece_run(4, 0), None);
    assert_eq!(FatTree::piece_run(4, 1 + 3 * 4 + 1), None); // lo > hi
}

#[test]
fn prefix_within_twice_the_broadcast_on_real_values() {
    for w in FatTreeCapacity::ALL {
        let tree = FatTree::new(w);
        for e in 1..=12 {
            let n = 1u32 << e;
            let s = run(Algorithm::Prefix, n, w);
            let r = check(&s, &model(w)).unwrap();
            assert!(r.legal(), "n={n} w={w}: {:?}", r.violations().first());
            let bcast = [Algorithm::FatBroadcast, Algorithm::Pipelined]
                .map(|a| check(&run(a, n, w), &model(w)).unwrap().makespan())
                .into_iter()
                .min()
                .unwrap();
            // broadcast is a sub-case of prefix (a0 = the value, the rest the identity)
            assert!(r.makespan() >= r.lower_bound().unwrap(), "n={n} w={w}");
            assert!(r.makespan() <= 2 * bcast, "n={n} w={w}");
            if e >= 5 {
                assert!(r.makespan() < sweep_time(n), "n={n} w={w}");
            }
            let init: Vec<(u64, u64)> =
                (0..u64::from(n)).map(|i| (i % 7 + 2, i * 13 + 1)).collect();
            let v = evaluate_fat_tree(&s, &tree, init.clone(), Operands::Linear, affine).unwrap();
            let mut acc = init[0];
            for i in 0..n as usize {
                if i > 0 {
                    acc = affine(&acc, &init[i]);
                }
                assert_eq!(v[i], acc, "n={n} w={w} i={i}");
            }
        }
    }
}

#[test]
fn the_ratio_holds_beyond_the_checker() {
    // generation only (the combining checker stops at 4096): at most twice the broadcast's
    // span, and Θ(log² N) below the sweep for larger w
    for w in FatTreeCapacity::ALL {
        for e in 13..=15 {
            let n = 1u32 << e;
            let p = span(&run(Algorithm::Prefix, n, w));
            let b = [Algorithm::FatBroadcast, Algorithm::Pipelined]
                .map(|a| span(&run(a, n, w)))
                .into_iter()
                .min()
                .unwrap();
            assert!(p <= 2 * b && p < sweep_time(n), "n={n} w={w}: {p} vs {b}");
        }
    }
    let big = generate(
        &Request::broadcast(Algorithm::Prefix, 1 << 16, 1, 0),
        &model(FatTreeCapacity::One),
    );
    assert!(big.is_err(), "runs are named in 32 bits up to 2^15 leaves");
}
