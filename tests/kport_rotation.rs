//! Issue 22, part 1: the k-port rotation algorithm at `⌈m/k⌉ + ⌈log_{k+1} n⌉` rounds
//! (Bar-Noy & Ho, Theorem 10) where the row plan alone needed one round more — `n` just below
//! `(k + 1)^D`, `k ≥ 5` — now that the last batches are re-planned by maximum flows.
//! Expectations: the theorem's bound, Lemma 3's lower bound (computed here from the paper's
//! statement), and the checker's verdict. The wide sweep (every `k ≤ 9`, `n ≤ 400`,
//! `m ≤ 4k + 1`): `cargo run --release --example kport_sweep`.
//! Reading and the erratum on the paper's streaming argument: `docs/kport-reading.md`,
//! `docs/errata.md`.

use herald::{check, generate, model::KPort, Algorithm, Model, Request};

/// `⌈log_b x⌉`.
fn clog(b: u64, x: u64) -> u64 {
    let (mut l, mut p) = (0, 1u64);
    while p < x {
        p *= b;
        l += 1;
    }
    l
}

/// Theorem 10's bound `⌈m/k'⌉ + ⌈log_{k'+1} n⌉`, `k' = min(k, n − 1)`.
fn target(n: u32, m: u32, k: u32) -> u64 {
    let kq = k.min(n - 1);
    u64::from(m.div_ceil(kq)) + clog(u64::from(kq) + 1, u64::from(n))
}

/// The rotation schedule's rounds, after the checker's verdict and Lemma 3's bound.
fn rounds(n: u32, m: u32, k: u32) -> u64 {
    let model = Model::from(KPort::new(k).unwrap());
    let s = generate(&Request::broadcast(Algorithm::Rotation, n, m, 0), &model).unwrap();
    let r = check(&s, &model).unwrap();
    assert!(r.legal(), "n={n} m={m} k={k}: {:?}", r.violations().first());
    let lemma3 = KPort::new(k).unwrap().rounds_lower_bound(n, m);
    assert!(r.makespan() >= lemma3, "n={n} m={m} k={k}");
    r.makespan()
}

/// The cases the row plan missed (`docs/errata.md`): `n = (k + 1)² − 1`, every `m ≤ 4k + 1`.
#[test]
fn the_former_exceptions_meet_theorem_10() {
    for (n, k) in [(35, 5), (48, 6)] {
        for m in 1..=4 * k + 1 {
            assert!(rounds(n, m, k) <= target(n, m, k), "n={n} m={m} k={k}");
        }
    }
    // and with many batches, where the row plan's steady state governs
    for (n, k, m) in [(35, 5, 64), (48, 6, 61), (63, 7, 30), (80, 8, 33)] {
        assert!(rounds(n, m, k) <= target(n, m, k), "n={n} m={m} k={k}");
    }
}

/// Where the bound is Lemma 3's, the rotation schedule is optimal: n = 35, k = 5, β ≥ 2.
#[test]
fn optimal_where_lemma_3_is_the_bound() {
    let kp = KPort::new(5).unwrap();
    for m in [2, 5, 7, 10, 15, 24, 25] {
        assert_eq!(rounds(35, m, 5), kp.rounds_lower_bound(35, m), "m={m}");
    }
}

/// Lemma 3's lower bound, computed here from the paper's statement: `B + L − 1`, plus one when
/// the `β = m − k'(B − 1)` blocks of the last batch cannot reach everyone in `L` rounds after
/// they leave the root, `(n − 1)β > (k' + 1)^L − 1` (`B = ⌈m/k'⌉`, `L = ⌈log_{k'+1} n⌉`).
fn lemma3(n: u32, m: u32, k: u32) -> u64 {
    let kq = u64::from(k.min(n - 1));
    let (n, m) = (u64::from(n), u64::from(m));
    let l = clog(kq + 1, n);
    let batches = m.div_ceil(kq);
    let beta = m - kq * (batches - 1);
    batches + l - 1 + u64::from((n - 1) * beta > (kq + 1).pow(l as u32) - 1)
}

/// The cases the greedy re-plan left one round over until the targeted re-plan (issue 22:
/// `docs/kport-reading.md`): now at Theorem 10's bound, which Lemma 3 shows optimal for each.
#[test]
fn the_last_exceptions_meet_theorem_10_and_are_optimal() {
    let cases = [
        (215, 5, 9),
        (215, 5, 10),
        (215, 5, 15),
        (342, 6, 18),
        (99, 9, 27),
    ];
    for (n, k, m) in cases {
        assert_eq!(target(n, m, k), lemma3(n, m, k), "n={n} m={m} k={k}");
        assert_eq!(rounds(n, m, k), target(n, m, k), "n={n} m={m} k={k}");
    }
    // their neighbours in m too
    for (n, k, m) in [
        (215, 5, 8),
        (215, 5, 14),
        (215, 5, 16),
        (342, 6, 17),
        (99, 9, 28),
    ] {
        assert!(rounds(n, m, k) <= target(n, m, k), "n={n} m={m} k={k}");
    }
}

/// The largest case named in the docs: `n = 6⁴ − 1`, `k = 5` (about 20 s under the test
/// profile): `cargo test --test kport_rotation -- --ignored`.
#[test]
#[ignore = "about 20 s; run with --ignored"]
fn n_1295_meets_theorem_10() {
    for m in [15, 17] {
        assert_eq!(rounds(1295, m, 5), target(1295, m, 5), "m={m}");
        assert_eq!(target(1295, m, 5), lemma3(1295, m, 5), "m={m}");
    }
}

/// `k ≥ 13`, `n` just below `(k + 1)²`: the first `m` at which the re-plan without its repair
/// pass was one round over (`docs/kport-reading.md`), two batches each: now at Theorem 10's
/// bound, which Lemma 3 shows optimal. The other pairs fixed by the repair pass (more batches,
/// slower): `cargo test --test kport_rotation -- --ignored`.
#[test]
fn k13_to_16_two_batches_meet_theorem_10_and_are_optimal() {
    for (n, k, m) in [(189, 13, 26), (191, 13, 26), (248, 15, 30), (280, 16, 32)] {
        assert_eq!(target(n, m, k), lemma3(n, m, k), "n={n} m={m} k={k}");
        assert_eq!(rounds(n, m, k), target(n, m, k), "n={n} m={m} k={k}");
    }
}

/// The rest of those first failing cases, three and four batches (tens of seconds in the test
/// profile under load): `cargo test --test kport_rotation -- --ignored`.
#[test]
#[ignore = "tens of seconds; run with --ignored"]
fn k13_to_16_more_batches_meet_theorem_10_and_are_optimal() {
    for (n, k, m) in [
        (192, 13, 39),
        (194, 13, 52),
        (284, 16, 48),
        (285, 16, 48),
        (287, 16, 48),
        (286, 16, 64),
    ] {
        assert_eq!(target(n, m, k), lemma3(n, m, k), "n={n} m={m} k={k}");
        assert_eq!(rounds(n, m, k), target(n, m, k), "n={n} m={m} k={k}");
    }
}

/// `k = 15, n = 253, m = 60` (`n = (k + 1)² − 3`, four batches, `β = 15`): the one pair of the
/// grid `k ≤ 16`, `n ≤ 400` the re-plan and its repair pass left one round over; the local
/// search over the round before the last (issue 22, fifth session) reaches Theorem 10's bound
/// `⌈60/15⌉ + ⌈log_16 253⌉ = 4 + 2`, which is Lemma 3's too (`252 · 15 > 16² − 1`): optimal.
/// (Tens of seconds in the test profile: every earlier attempt fails first.)
#[test]
fn k15_n253_m60_meets_theorem_10_and_is_optimal() {
    let (n, k, m) = (253, 15, 60);
    assert_eq!(target(n, m, k), 6);
    assert_eq!(lemma3(n, m, k), 6);
    assert_eq!(rounds(n, m, k), 6);
}
