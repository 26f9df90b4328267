//! `CommRank::allreduce_slice` and `reduce_slice`: element-wise results byte for byte equal
//! to a sequential fold in rank order, on both paths (the line path below
//! `CommOptions::allreduce_direct_min_bytes`, the shared-memory reduce-scatter/allgather from
//! it on), for many team sizes (more ranks than CPUs included), lengths not divisible by the
//! team size, and a non-commutative operation; mismatched lengths are a typed error; a panic
//! in the operation poisons and nobody hangs. Every test runs under the watchdog.

mod common {
    pub(crate) mod mat;
    pub(crate) mod watch;
}

use common::mat::{mul, Mat};
use common::watch::{payload, watchdog};
use herald::runtime::{CollectiveError, PoisonCause};
use herald::{Comm, CommOptions, Team};
use std::panic::{self, AssertUnwindSafe};

/// Rank `r`'s `len` matrices for seed `seed` (pseudo-random entries).
fn mats(r: usize, len: usize, seed: u64) -> Vec<Mat> {
    let bytes = payload(len * 32, seed * 1000 + r as u64 + 1);
    bytes
        .chunks(32)
        .map(|c| {
            std::array::from_fn(|i| u64::from_le_bytes(c[8 * i..8 * i + 8].try_into().unwrap()))
        })
        .collect()
}

/// The sequential fold in rank order, element by element.
fn fold(n: usize, len: usize, seed: u64) -> Vec<Mat> {
    let all: Vec<Vec<Mat>> = (0..n).map(|r| mats(r, len, seed)).collect();
    (0..len)
        .map(|i| (1..n).fold(all[0][i], |acc, r| mul(acc, all[r][i])))
        .collect()
}

fn with_threshold(bytes: usize) -> CommOptions {
    CommOptions {
        allreduce_direct_min_bytes: bytes,
        ..CommOptions::default()
    }
}

/// Both paths, many team sizes and lengths, twice in a row per communicator: every rank holds
/// the rank-ordered fold of the matrix products.
#[test]
fn matrix_products_match_the_sequential_fold() {
    watchdog(|| {
        let default = CommOptions::default().allreduce_direct_min_bytes / 32;
        for n in (1..=9).chain([12]) {
            let mut team = Team::new(n).unwrap();
            // The default threshold, single copy for everything (chunks of 0 or 1 element
            // when the length is below n), the line path only, and the line path with nothing
            // in shared memory (the tree, and the exchange of two ranks).
            for (threshold, shared) in [
                (None, None),
                (Some(1), None),
                (Some(usize::MAX), None),
                (Some(usize::MAX), Some(0)),
            ] {
                let options = CommOptions {
                    allreduce_shared_max_bytes: shared,
                    ..threshold.map_or_else(CommOptions::default, with_threshold)
                };
                let mut comm = Comm::with_options(n, options).unwrap();
                let mut ranks = comm.ranks();
                for len in [
                    0,
                    1,
                    n.saturating_sub(1),
                    7,
                    default - 1,
                    default + 1,
                    1000 + n,
                ] {
                    let seed = (n * 31 + len) as u64;
                    let want = fold(n, len, seed);
                    let got = team.run_with(&mut ranks, |_, c| {
                        let mut data = mats(c.rank(), len, seed);
                        c.allreduce_slice(&mut data, mul).unwrap();
                        let first = data.clone();
                        // Again, on the results: every rank's input is now the same.
                        c.allreduce_slice(&mut data, mul).unwrap();
                        (first, data)
                    });
                    let twice: Vec<Mat> = want
                        .iter()
                        .map(|&w| (1..n).fold(w, |acc, _| mul(acc, w)))
                        .collect();
                    for (r, (first, second)) in got.iter().enumerate() {
                        assert!(
                            first == &want,
                            "n={n} len={len} threshold={threshold:?} shared={shared:?}: rank {r} differs"
                        );
                        assert!(second == &twice, "n={n} len={len}: rank {r}, second call");
                    }
                }
            }
        }
    });
}

/// Decimal concatenation: `a ∘ b` is `a` followed by `b`'s digits (associative, not
/// commutative).
fn cat(a: u64, b: u64) -> u64 {
    let mut p = 10;
    while p <= b {
        p *= 10;
    }
    a * p + b
}

/// Wrapping byte sums with odd lengths, and decimal concatenation in rank order.
#[test]
fn sums_and_digit_concatenation_in_rank_order() {
    watchdog(|| {
        for n in [2, 3, 5, 8] {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::with_options(n, with_threshold(64)).unwrap();
            let mut ranks = comm.ranks();
            for len in [1usize, 3, 9, 65, 4099, 100_003] {
                let got = team.run_with(&mut ranks, |_, c| {
                    let r = c.rank();
                    let mut sums: Vec<u8> = (0..len).map(|i| (i * 7 + r) as u8).collect();
                    c.allreduce_slice(&mut sums, u8::wrapping_add).unwrap();
                    // Each rank's value is its one digit r + 1: the result reads 12…n.
                    let mut digits = vec![(r + 1) as u64; len];
                    c.allreduce_slice(&mut digits, cat).unwrap();
                    (sums, digits)
                });
                let number = (1..=n as u64).fold(0, |acc, d| acc * 10 + d);
                for (r, (sums, digits)) in got.iter().enumerate() {
                    for (i, &s) in sums.iter().enumerate() {
                        let want = (0..n).fold(0u8, |acc, q| acc.wrapping_add((i * 7 + q) as u8));
                        assert_eq!(s, want, "n={n} len={len} rank {r} element {i}");
                    }
                    assert!(
                        digits.iter().all(|&d| d == number),
                        "n={n} len={len} rank {r}"
                    );
                }
            }
        }
    });
}

/// `reduce_slice` to every root: the root holds the rank-ordered fold.
#[test]
fn reduce_slice_to_every_root() {
    watchdog(|| {
        for n in [1, 2, 3, 6] {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::new(n).unwrap();
            let mut ranks = comm.ranks();
            for root in 0..n {
                for len in [1, 5, 300] {
                    let seed = (root * 7 + len) as u64;
                    let want = fold(n, len, seed);
                    let got = team.run_with(&mut ranks, |_, c| {
                        let mut data = mats(c.rank(), len, seed);
                        c.reduce_slice(root, &mut data, mul).unwrap();
                        data
                    });
                    assert!(got[root] == want, "n={n} root={root} len={len}");
                }
            }
        }
    });
}

/// Slices of different lengths: every rank gets an error — a mismatch on the ranks that see
/// it, the poison on the others — on both paths and across them; never success, never a hang.
#[test]
fn mismatched_lengths_are_a_typed_error() {
    watchdog(|| {
        for n in [2, 3, 5] {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::with_options(n, with_threshold(1 << 10)).unwrap();
            // (everyone's length, the odd rank's length): line/line, direct/direct, line/direct.
            for (len, odd_len) in [(10, 11), (4000, 4096), (10, 4000), (4000, 10), (5000, 0)] {
                for odd in [0, n - 1] {
                    let mut ranks = comm.ranks();
                    let got = team.run_with(&mut ranks, |_, c| {
                        let l = if c.rank() == odd { odd_len } else { len };
                        let mut data = vec![1u64; l];
                        c.allreduce_slice(&mut data, |a, b| a + b)
                    });
                    let mut mismatches = 0;
                    for (r, res) in got.iter().enumerate() {
                        match res {
                            Err(CollectiveError::Mismatch { .. }) => mismatches += 1,
                            Err(CollectiveError::Poisoned { cause, .. }) => {
                                assert_eq!(*cause, PoisonCause::Mismatch, "n={n} rank {r}")
                            }
                            other => panic!("n={n} {len}/{odd_len}: rank {r} got {other:?}"),
                        }
                    }
                    assert!(
                        mismatches > 0,
                        "n={n} {len}/{odd_len}: nobody saw the mismatch"
                    );
                }
            }
        }
    });
}

/// A panic in `op` on one rank, on both paths: the panic reaches the caller, every other rank
/// returns an error (never success), nobody hangs, and the rebuilt communicator works.
#[test]
fn a_panicking_op_poisons() {
    watchdog(|| {
        for n in [2, 3, 4, 7] {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::with_options(n, with_threshold(1 << 10)).unwrap();
            for (len, victim) in [(8, n - 1), (20_000, 0), (20_000, n - 1), (100, 0)] {
                let mut ranks = comm.ranks();
                let results: Vec<std::sync::Mutex<Option<Option<bool>>>> =
                    (0..n).map(|_| std::sync::Mutex::new(None)).collect();
                let hit = panic::catch_unwind(AssertUnwindSafe(|| {
                    team.run_with(&mut ranks, |_, c| {
                        let me = c.rank();
                        let mut data = vec![me as u64; len];
                        let combined = std::cell::Cell::new(0);
                        let r = c.allreduce_slice(&mut data, |a, b| {
                            combined.set(combined.get() + 1);
                            assert!(!(me == victim && combined.get() > len / 4), "op panics");
                            a + b
                        });
                        // Some(None): an error; Some(Some(right)): success, right or not.
                        let sum = (0..n as u64).sum::<u64>();
                        let outcome = r.ok().map(|()| data.iter().all(|&x| x == sum));
                        *results[me].lock().unwrap() = Some(outcome);
                    })
                }));
                // Single copy: every rank combines (n-1)/n ≥ 1/2 of the elements (> 1/4); below
                // the threshold (in shared memory) every rank combines every element n − 1
                // times. So the victim always panics.
                assert!(hit.is_err(), "n={n} len={len} victim {victim}");
                let direct = len * 8 >= 1 << 10;
                for (r, m) in results.iter().enumerate().filter(|(r, _)| *r != victim) {
                    let got = *m.lock().unwrap();
                    if direct {
                        // Every result needs the victim's part: nobody else succeeds.
                        assert_eq!(got, Some(None), "n={n} len={len}: rank {r}");
                    } else {
                        // Every rank had deposited before the victim's op ran, and each
                        // combines on its own: the others may finish (with the right sum,
                        // checked in the closure) or see the poison first.
                        assert!(
                            matches!(got, Some(None | Some(true))),
                            "n={n} len={len}: rank {r}: {got:?}"
                        );
                    }
                }
                drop(ranks);
                let mut ranks = comm.ranks();
                let fresh = team.run_with(&mut ranks, |_, c| {
                    let mut data = vec![1u64; len];
                    c.allreduce_slice(&mut data, |a, b| a + b).unwrap();
                    data.iter().all(|&x| x == n as u64)
                });
                assert_eq!(fresh, vec![true; n], "n={n} len={len}: rebuilt");
            }
        }
    });
}
