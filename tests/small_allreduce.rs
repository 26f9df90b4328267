//! The shared-memory small allreduce (`CommRank::allreduce` of values up to 4 KiB,
//! `allreduce_slice` below `CommOptions::allreduce_direct_min_bytes`):
//! results byte for byte equal to a sequential fold in rank order with a non-commutative
//! operation, for 1–9 and 12 ranks (more ranks than CPUs included), values within a slot's
//! first line and past it, many calls in a row interleaved with other collectives (so both
//! slots of every rank are reused many times); mismatched calls are typed errors; a panic in
//! the operation and a departed rank poison, and nobody hangs. Every test runs under the
//! watchdog.

mod common {
    pub(crate) mod mat;
    pub(crate) mod watch;
}

use common::mat::{mul, Mat};
use common::watch::{payload, watchdog};
use herald::runtime::{CollectiveError, PoisonCause};
use herald::{Comm, CommOptions, Team};
use std::panic::{self, AssertUnwindSafe};

/// `K` matrices multiplied element-wise: 32·K bytes.
fn mul_k<const K: usize>(a: [Mat; K], b: [Mat; K]) -> [Mat; K] {
    std::array::from_fn(|i| mul(a[i], b[i]))
}

/// Rank `r`'s `K` matrices for seed `seed`.
fn value<const K: usize>(r: usize, seed: u64) -> [Mat; K] {
    let bytes = payload(K * 32, seed * 1000 + r as u64 + 1);
    std::array::from_fn(|m| {
        std::array::from_fn(|i| {
            let at = 32 * m + 8 * i;
            u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
        })
    })
}

/// The sequential fold in rank order.
fn fold<const K: usize>(n: usize, seed: u64) -> [Mat; K] {
    (1..n).fold(value::<K>(0, seed), |acc, r| {
        mul_k(acc, value::<K>(r, seed))
    })
}

/// One rank's calls of a round: value allreduces of 32 B (one line), 128 B (past the
/// inline words), 4 KiB (the largest in shared memory) and 8 KiB (the tree), with
/// broadcasts, barriers and slices in between; returns the results.
fn round(c: &mut herald::CommRank<'_>, seed: u64) -> Vec<Vec<Mat>> {
    let r = c.rank();
    let mut out = Vec::new();
    let one = c.allreduce(value::<1>(r, seed), mul_k).unwrap();
    out.push(one.to_vec());
    c.barrier().unwrap();
    let four = c.allreduce(value::<4>(r, seed + 1), mul_k).unwrap();
    out.push(four.to_vec());
    let mut buf = vec![r as u8; 40];
    c.broadcast(c.size() - 1, &mut buf).unwrap();
    assert!(buf.iter().all(|&b| b as usize == c.size() - 1));
    let big = c.allreduce(value::<128>(r, seed + 2), mul_k).unwrap();
    out.push(big.to_vec());
    let tree = c.allreduce(value::<256>(r, seed + 3), mul_k).unwrap();
    out.push(tree.to_vec());
    let mut slice = value::<3>(r, seed + 4).to_vec();
    c.allreduce_slice(&mut slice, mul).unwrap();
    out.push(slice);
    c.barrier().unwrap();
    out
}

/// Shared memory up to 4 KiB whatever the CPU count.
fn shared_4k() -> CommOptions {
    CommOptions {
        allreduce_shared_max_bytes: Some(4096),
        ..CommOptions::default()
    }
}

#[test]
fn matrix_products_match_the_sequential_fold() {
    watchdog(|| {
        for (n, shared) in (1..=9).chain([12]).flat_map(|n| [(n, true), (n, false)]) {
            let mut team = Team::new(n).unwrap();
            // Shared memory up to 4 KiB (the default), or the tree for everything.
            let options = CommOptions {
                allreduce_shared_max_bytes: Some(if shared { 4096 } else { 0 }),
                ..CommOptions::default()
            };
            let mut comm = Comm::with_options(n, options).unwrap();
            let mut ranks = comm.ranks();
            for rep in 0..5u64 {
                let seed = n as u64 * 100 + rep * 10;
                let want: Vec<Vec<Mat>> = vec![
                    fold::<1>(n, seed).to_vec(),
                    fold::<4>(n, seed + 1).to_vec(),
                    fold::<128>(n, seed + 2).to_vec(),
                    fold::<256>(n, seed + 3).to_vec(),
                    fold::<3>(n, seed + 4).to_vec(),
                ];
                let got = team.run_with(&mut ranks, |_, c| round(c, seed));
                for (r, g) in got.iter().enumerate() {
                    for (k, (g, w)) in g.iter().zip(&want).enumerate() {
                        assert!(
                            g == w,
                            "n={n} {shared} rep={rep} rank {r}: call {k} differs"
                        );
                    }
                }
            }
        }
    });
}

/// Each result is the next call's input, many times back to back (the ping-pong of the MPI
/// comparison): every slot is reused while peers may still be one call behind.
#[test]
fn back_to_back_calls_chain_their_results() {
    watchdog(|| {
        for n in [2, 3, 4, 8] {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::with_options(n, shared_4k()).unwrap();
            let mut ranks = comm.ranks();
            let calls = 300;
            let got = team.run_with(&mut ranks, |_, c| {
                let mut v = [c.rank() as u64 + 1; 3];
                for _ in 0..calls {
                    c.allreduce_slice(&mut v, u64::wrapping_add).unwrap();
                    let x = c.allreduce(v[0], |a, b| a.wrapping_mul(3).wrapping_add(b));
                    v[1] = x.unwrap();
                }
                v
            });
            // Sequentially: the slice sum makes every rank's value the same, so each call
            // maps the common value x to n·x (sum) and then folds x n times.
            let mut v: Vec<[u64; 3]> = (0..n).map(|r| [r as u64 + 1; 3]).collect();
            for _ in 0..calls {
                let mut s = [0u64; 3];
                for w in &v {
                    for i in 0..3 {
                        s[i] = s[i].wrapping_add(w[i]);
                    }
                }
                s[1] = (1..n).fold(s[0], |a, _| a.wrapping_mul(3).wrapping_add(s[0]));
                v = vec![s; n];
            }
            let want = v[0];
            assert_eq!(got, vec![want; n], "n={n}");
        }
    });
}

/// Calls that differ between ranks — another size, another collective, an extra call — are
/// errors on every rank (a mismatch where it is seen, the poison elsewhere), never success,
/// never a hang; the rebuilt communicator works.
#[test]
fn mismatched_calls_are_typed_errors() {
    watchdog(|| {
        for n in [2, 3, 5] {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::with_options(n, shared_4k()).unwrap();
            for case in 0..4 {
                for odd in [0, n - 1] {
                    let mut ranks = comm.ranks();
                    let got = team.run_with(&mut ranks, |_, c| {
                        let me = c.rank();
                        c.barrier()?;
                        match (case, me == odd) {
                            (0, true) => c.allreduce(7u32, |a, b| a + b).map(|_| ()),
                            (1, true) => c.barrier(),
                            (2, true) => {
                                let mut d = vec![1u64; 6];
                                c.allreduce_slice(&mut d, |a, b| a + b)
                            }
                            (3, true) => {
                                c.barrier()?;
                                c.allreduce(7u64, |a, b| a + b).map(|_| ())
                            }
                            _ => c.allreduce(7u64, |a, b| a + b).map(|_| ()),
                        }
                    });
                    let mut mismatches = 0;
                    for (r, res) in got.iter().enumerate() {
                        match res {
                            Err(CollectiveError::Mismatch { .. }) => mismatches += 1,
                            Err(CollectiveError::Poisoned { cause, .. }) => {
                                assert_eq!(*cause, PoisonCause::Mismatch, "n={n} case {case}")
                            }
                            other => panic!("n={n} case {case} odd {odd}: rank {r}: {other:?}"),
                        }
                    }
                    assert!(mismatches > 0, "n={n} case {case}: nobody saw it");
                }
                let mut ranks = comm.ranks();
                let ok = team.run_with(&mut ranks, |_, c| c.allreduce(1u64, |a, b| a + b));
                assert!(
                    ok.iter().all(|r| matches!(r, Ok(v) if *v == n as u64)),
                    "n={n}: rebuilt"
                );
            }
        }
    });
}

/// A panic in `op` on one rank in its call `call`: the panic reaches the caller; the others
/// either finish that call with the right value (every rank had deposited, and each combines
/// on its own) or fail, and their next call fails (the victim never makes it); nobody hangs;
/// the rebuilt communicator works.
#[test]
fn a_panicking_op_poisons() {
    watchdog(|| {
        for n in [2, 3, 4, 7] {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::with_options(n, shared_4k()).unwrap();
            for victim in [0, n - 1] {
                for call in [0u64, 3] {
                    let mut ranks = comm.ranks();
                    let results: Vec<std::sync::Mutex<Vec<Result<u64, CollectiveError>>>> =
                        (0..n).map(|_| std::sync::Mutex::new(Vec::new())).collect();
                    let hit = panic::catch_unwind(AssertUnwindSafe(|| {
                        team.run_with(&mut ranks, |_, c| {
                            let me = c.rank();
                            for i in 0..=call + 1 {
                                let r = c.allreduce(i + me as u64, |a, b| {
                                    assert!(!(me == victim && i == call), "op panics");
                                    a + b
                                });
                                let failed = r.is_err();
                                results[me].lock().unwrap().push(r);
                                if failed {
                                    break;
                                }
                            }
                        })
                    }));
                    assert!(
                        hit.is_err(),
                        "n={n} victim {victim}: the panic is re-raised"
                    );
                    let sum = |i: u64| (0..n as u64).map(|r| i + r).sum::<u64>();
                    for (r, m) in results.iter().enumerate().filter(|(r, _)| *r != victim) {
                        let got = m.lock().unwrap();
                        for (i, g) in got.iter().enumerate() {
                            let i = i as u64;
                            match g {
                                Ok(v) => assert!(i <= call && *v == sum(i), "n={n} rank {r}"),
                                Err(_) => assert!(i >= call, "n={n} rank {r} call {i}"),
                            }
                        }
                        assert!(got.last().unwrap().is_err(), "n={n} rank {r}: {got:?}");
                    }
                    drop(ranks);
                    let mut ranks = comm.ranks();
                    let fresh = team.run_with(&mut ranks, |_, c| c.allreduce(2u64, |a, b| a + b));
                    assert!(
                        fresh
                            .iter()
                            .all(|r| matches!(r, Ok(v) if *v == 2 * n as u64)),
                        "rebuilt"
                    );
                }
            }
        }
    });
}

/// A rank whose endpoint is dropped while the others wait in a small allreduce: they get
/// `Departed` (or the poison it causes), not a hang.
#[test]
fn a_departed_rank_releases_the_others() {
    watchdog(|| {
        let n = 5;
        let mut comm = Comm::with_options(n, shared_4k()).unwrap();
        let ranks = comm.ranks();
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = ranks
                .into_iter()
                .map(|mut c| {
                    s.spawn(move || {
                        for i in 0..200u64 {
                            if c.rank() == 3 && i == 77 {
                                return Ok(i);
                            }
                            c.allreduce(i, |a, b| a + b)?;
                        }
                        Ok::<u64, CollectiveError>(200)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(matches!(results[3], Ok(77)), "{:?}", results[3]);
        for (rank, r) in results.iter().enumerate().filter(|(r, _)| *r != 3) {
            assert!(
                matches!(
                    r,
                    Err(CollectiveError::Departed {
                        peer: 3,
                        calls: 77,
                        ..
                    }) | Err(CollectiveError::Poisoned { .. })
                ),
                "rank {rank}: {r:?}"
            );
        }
    });
}
