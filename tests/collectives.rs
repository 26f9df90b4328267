//! The in-process collectives against sequential computations: every collective for
//! n ∈ {1, 2, 3, 5, 8, 16, 33, 64}, payloads from 1 byte to 4 MiB (large ones only for small n),
//! integer sums and a non-commutative 2×2 matrix product in rank order, and the error cases.
//! Every concurrent test runs under a 120 s watchdog.

mod common {
    pub(crate) mod watch;
}

use bytemuck::{Pod, Zeroable};
use common::watch::{payload, watchdog};
use herald::{
    generate,
    model::OnePort,
    runtime::{CollectiveError, CollectiveKind, DefaultSchedule},
    Algorithm, Comm, CommOptions, Model, Postal, Program, Ratio, Request, Team,
};
use std::sync::atomic::{AtomicUsize, Ordering};

const SIZES: [usize; 8] = [1, 2, 3, 5, 8, 16, 33, 64];

/// A 2×2 matrix over wrapping u64: associative, not commutative.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
struct M([u64; 4]);

fn mul(a: M, b: M) -> M {
    let [a0, a1, a2, a3] = a.0;
    let [b0, b1, b2, b3] = b.0;
    let w = |x: u64, y: u64, z: u64, t: u64| x.wrapping_mul(y).wrapping_add(z.wrapping_mul(t));
    M([
        w(a0, b0, a1, b2),
        w(a0, b1, a1, b3),
        w(a2, b0, a3, b2),
        w(a2, b1, a3, b3),
    ])
}

fn mat(r: usize) -> M {
    let r = r as u64;
    M([r + 1, 2 * r + 3, r % 5, 1])
}

fn roots(n: usize) -> Vec<usize> {
    let mut v = vec![0, n - 1, n / 2, (n / 3).max(1) % n];
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn broadcast_every_size_and_root() {
    watchdog(|| {
        for n in SIZES {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::new(n).unwrap();
            let mut ranks = comm.ranks();
            let mut lens = vec![0, 1, 7, 48, 49, 56, 104, 105, 1000, 4099];
            if n <= 3 {
                lens.extend([64 * 1024 + 5, 1 << 20, 4 << 20]);
            }
            for &len in &lens {
                for root in roots(n) {
                    let want = payload(len, (len * 131 + root) as u64);
                    let ok = team.run_with(&mut ranks, |_, c| {
                        let mut buf = if c.rank() == root {
                            want.clone()
                        } else {
                            vec![0xAA; len]
                        };
                        c.broadcast(root, &mut buf).unwrap();
                        buf == want
                    });
                    assert!(ok.iter().all(|&b| b), "n={n} len={len} root={root}");
                }
            }
        }
    });
}

#[test]
fn broadcast_small_blocks_and_rings() {
    watchdog(|| {
        for (n, alg) in [
            (2, Algorithm::Binomial),
            (5, Algorithm::Chain),
            (16, Algorithm::Star),
            (16, Algorithm::Binomial),
        ] {
            let opts = CommOptions {
                capacity: 4,
                schedule: DefaultSchedule::Fixed(alg),
                ..CommOptions::default()
            };
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::with_options(n, opts).unwrap();
            let mut ranks = comm.ranks();
            let want = payload(10_000, n as u64);
            let ok = team.run_with(&mut ranks, |_, c| {
                (0..c.size()).all(|root| {
                    let mut buf = if c.rank() == root {
                        want.clone()
                    } else {
                        vec![0; want.len()]
                    };
                    c.broadcast(root, &mut buf).unwrap();
                    buf == want
                })
            });
            assert!(ok.iter().all(|&b| b));
        }
    });
}

#[test]
fn broadcast_value_and_custom_schedules() {
    watchdog(|| {
        let model = Model::from(Postal::new(Ratio::integer(2)).unwrap());
        for n in [1, 3, 8, 33] {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::new(n).unwrap();
            let mut ranks = comm.ranks();
            let oneport = Model::from(OnePort);
            // Single-parent trees, and multi-block schedules in which ranks hear from several
            // senders (round-optimal circulant, scatter-allgather, Fibonacci trees).
            let programs: Vec<Program> = [
                (Algorithm::Chain, 1, &model),
                (Algorithm::Star, 1, &model),
                (Algorithm::Binary, 1, &model),
                (Algorithm::Optimal, 4, &oneport),
                (Algorithm::ScatterAllgather, 8, &model),
                (Algorithm::Fibonacci { d: None }, 5, &oneport),
            ]
            .into_iter()
            .map(|(alg, m, model)| {
                let req = Request::broadcast(alg, n as u32, m, (n / 2) as u32);
                Program::compile(&generate(&req, model).unwrap()).unwrap()
            })
            .collect();
            let ok = team.run_with(&mut ranks, |_, c| {
                let mut good = true;
                for root in roots(c.size()) {
                    let mut v = if c.rank() == root {
                        mat(root)
                    } else {
                        M([0; 4])
                    };
                    c.broadcast_value(root, &mut v).unwrap();
                    good &= v == mat(root);
                    let mut big = [c.rank() as u32; 1024];
                    c.broadcast_value(root, &mut big).unwrap();
                    good &= big == [root as u32; 1024];
                }
                for p in &programs {
                    let want = payload(3000, 9);
                    let mut buf = if c.rank() == p.root() as usize {
                        want.clone()
                    } else {
                        vec![0; 3000]
                    };
                    c.broadcast_with(p, &mut buf).unwrap();
                    good &= buf == want;
                }
                good
            });
            assert!(ok.iter().all(|&b| b), "n={n}");
        }
    });
}

#[test]
fn reduce_allreduce_scan_allgather_barrier() {
    // Binomial, flat (star) and 3-nomial reduction trees: every one combines in rank order.
    let trees = [
        Algorithm::Binomial,
        Algorithm::Star,
        Algorithm::Knomial { radix: 3 },
    ];
    watchdog(move || {
        for (n, alg) in SIZES.into_iter().flat_map(|n| trees.map(|a| (n, a))) {
            let mut team = Team::new(n).unwrap();
            let options = CommOptions {
                schedule: DefaultSchedule::Fixed(alg),
                ..CommOptions::default()
            };
            let mut comm = Comm::with_options(n, options).unwrap();
            let mut ranks = comm.ranks();
            let sum: u64 = (0..n as u64).map(|r| r * r + 1).sum();
            let prod = (1..n).fold(mat(0), |a, r| mul(a, mat(r)));
            let prefix: Vec<M> = (0..n)
                .scan(None, |acc: &mut Option<M>, r| {
                    let v = acc.map_or(mat(r), |a| mul(a, mat(r)));
                    *acc = Some(v);
                    Some(v)
                })
                .collect();
            let counter = AtomicUsize::new(0);
            let results = team.run_with(&mut ranks, |_, c| {
                let r = c.rank();
                let mine = (r * r + 1) as u64;
                for round in 0..3 {
                    for root in roots(n) {
                        let s = c.reduce(root, mine, |a, b| a + b).unwrap();
                        assert_eq!(s, (r == root).then_some(sum), "reduce n={n} root={root}");
                        let p = c.reduce(root, mat(r), mul).unwrap();
                        assert_eq!(p, (r == root).then_some(prod), "reduce mat n={n}");
                    }
                    assert_eq!(c.allreduce(mine, |a, b| a + b).unwrap(), sum);
                    assert_eq!(c.allreduce(mat(r), mul).unwrap(), prod, "allreduce mat");
                    assert_eq!(c.scan(mat(r), mul).unwrap(), prefix[r], "scan n={n} r={r}");
                    let all = c.allgather([r as u16; 3]).unwrap();
                    assert!(all.iter().enumerate().all(|(i, v)| *v == [i as u16; 3]));
                    counter.fetch_add(1, Ordering::SeqCst);
                    c.barrier().unwrap();
                    assert!(counter.load(Ordering::SeqCst) >= n * (round + 1));
                    c.barrier().unwrap();
                }
                true
            });
            assert!(results.into_iter().all(|b| b));
        }
    });
}

#[test]
fn thousands_of_calls_in_a_loop() {
    watchdog(|| {
        let n = 5;
        let mut team = Team::new(n).unwrap();
        let mut comm = Comm::new(n).unwrap();
        let mut ranks = comm.ranks();
        let ok = team.run_with(&mut ranks, |_, c| {
            (0..2000u64).all(|i| {
                let root = (i as usize * 7) % n;
                let mut v = if c.rank() == root { i } else { 0 };
                c.broadcast_value(root, &mut v).unwrap();
                let s = c.allreduce(v + c.rank() as u64, |a, b| a + b).unwrap();
                v == i && s == 5 * i + 10
            })
        });
        assert!(ok.iter().all(|&b| b));
    });
}

#[test]
fn setup_errors() {
    assert!(matches!(Comm::new(0), Err(CollectiveError::NoRanks)));
    assert!(matches!(
        Comm::new(usize::MAX),
        Err(CollectiveError::TooManyRanks { .. })
    ));
    watchdog(|| {
        let mut team = Team::new(3).unwrap();
        let mut comm = Comm::new(3).unwrap();
        // A bad root is reported where it is passed, and poisons the communicator: another
        // rank may have passed a good one and would wait for this rank forever.
        let mut ranks = comm.ranks();
        let errs = team.run_with(&mut ranks, |_, c| {
            let root = c.broadcast(3, &mut [0; 4]);
            let later = c.allreduce(1u32, |a, b| a + b);
            (root, later)
        });
        for (root, later) in &errs {
            assert!(matches!(
                root,
                Err(CollectiveError::Root { root: 3, size: 3 } | CollectiveError::Poisoned { .. })
            ));
            assert!(matches!(later, Err(CollectiveError::Poisoned { .. })));
        }
        assert!(errs
            .iter()
            .any(|e| matches!(e.0, Err(CollectiveError::Root { .. }))));
        drop(ranks);
        assert!(comm.is_poisoned());
        // One rank alone passes a bad root: the others do not wait for it forever.
        let mut ranks = comm.ranks();
        assert!(!ranks[0].is_poisoned());
        let errs = team.run_with(&mut ranks, |_, c| {
            let root = if c.rank() == 1 { 7 } else { 0 };
            c.reduce(root, 1u8, |a, b| a + b)
        });
        assert!(matches!(
            errs[1],
            Err(CollectiveError::Root { root: 7, .. })
        ));
        // Rank 0 needs rank 1's partial and is released by the poison (rank 2, whose part is
        // one send, may have finished before anything failed).
        assert!(errs[0].is_err());
        drop(ranks);
        // A program for another number of ranks is rejected, not run, and nobody hangs.
        let model = Model::from(Postal::new(Ratio::integer(2)).unwrap());
        let s = generate(&Request::broadcast(Algorithm::Binomial, 4, 4, 0), &model).unwrap();
        let p = Program::compile(&s).unwrap();
        let mut ranks = comm.ranks();
        let errs = team.run_with(&mut ranks, |_, c| c.broadcast_with(&p, &mut [0; 8]));
        assert!(errs.iter().all(|e| matches!(
            e,
            Err(CollectiveError::Program(_) | CollectiveError::Poisoned { .. })
        )));
        drop(ranks);
        // Rebuilt endpoints work again.
        let mut ranks = comm.ranks();
        let s = team.run_with(&mut ranks, |_, c| c.allreduce(2u32, |a, b| a + b).unwrap());
        assert_eq!(s, [6, 6, 6]);
    });
}

#[test]
fn mismatched_sizes_are_reported() {
    watchdog(|| {
        for n in [2, 5, 8] {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::new(n).unwrap();
            let mut ranks = comm.ranks();
            let res = team.run_with(&mut ranks, |_, c| {
                let len = if c.rank() == 0 { 100_000 } else { 20 };
                c.broadcast(0, &mut vec![1; len])
            });
            assert!(res
                .iter()
                .any(|r| matches!(r, Err(CollectiveError::Mismatch { .. }))));
            // Later calls fail fast until the endpoints are rebuilt.
            let later = team.run_with(&mut ranks, |_, c| c.barrier());
            assert!(later.iter().all(|r| r.is_err()));
            drop(ranks);
            let mut ranks = comm.ranks();
            let ok = team.run_with(&mut ranks, |_, c| c.barrier());
            assert!(ok.iter().all(|r| r.is_ok()));
        }
    });
}

#[test]
fn mismatched_collectives_do_not_deadlock() {
    watchdog(|| {
        for n in [2, 3, 8] {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::new(n).unwrap();
            let mut ranks = comm.ranks();
            let res = team.run_with(&mut ranks, |_, c| {
                if c.rank() == n - 1 {
                    c.broadcast(0, &mut [0; 8]).map(|_| ())
                } else {
                    c.reduce(0, 1u64, |a, b| a + b).map(|_| ())
                }
            });
            let found = res.iter().find_map(|r| match r {
                Err(CollectiveError::Mismatch { expected, got, .. }) => Some((*expected, *got)),
                _ => None,
            });
            let (e, g) = found.expect("a mismatch is reported");
            assert_ne!(e.kind, g.kind);
            assert!([e.kind, g.kind].contains(&Some(CollectiveKind::Broadcast)));
            // Different roots.
            drop(ranks);
            let mut ranks = comm.ranks();
            let res = team.run_with(&mut ranks, |_, c| {
                let root = usize::from(c.rank() == 0);
                c.reduce(root, 1u64, |a, b| a + b).map(|_| ())
            });
            if n > 1 {
                assert!(res.iter().any(|r| r.is_err()), "n={n}: {res:?}");
            }
        }
    });
}

/// Options that send every broadcast by single copy, in chunks of 200 bytes.
fn single_copy() -> CommOptions {
    CommOptions {
        direct_min_bytes: 1,
        direct_chunk_bytes: 200,
        ..CommOptions::default()
    }
}

#[test]
fn single_copy_broadcasts_every_schedule() {
    // Each receiver copies chunk by chunk from its sender's buffer, forwarding as it goes:
    // trees, and multi-block schedules in which ranks read from several senders.
    watchdog(|| {
        let postal = Model::from(Postal::new(Ratio::integer(2)).unwrap());
        let oneport = Model::from(OnePort);
        for n in [2, 3, 5, 8, 16] {
            let mut team = Team::new(n).unwrap();
            for alg in [Algorithm::Binomial, Algorithm::Chain, Algorithm::Star] {
                let opts = CommOptions {
                    schedule: DefaultSchedule::Fixed(alg),
                    ..single_copy()
                };
                let mut comm = Comm::with_options(n, opts).unwrap();
                let mut ranks = comm.ranks();
                let ok = team.run_with(&mut ranks, |_, c| {
                    let mut good = true;
                    for (i, len) in [1usize, 200, 201, 5000, 70_000].into_iter().enumerate() {
                        for root in roots(c.size()) {
                            let want = payload(len, (i * 7 + root) as u64);
                            let mut buf = if c.rank() == root {
                                want.clone()
                            } else {
                                vec![0x55; len]
                            };
                            c.broadcast(root, &mut buf).unwrap();
                            good &= buf == want;
                        }
                    }
                    // Combining collectives broadcast their result the same way.
                    let sum = c.allreduce([c.rank() as u64; 32], |a, b| {
                        std::array::from_fn(|i| a[i] + b[i])
                    });
                    good &= sum.unwrap() == [(n * (n - 1) / 2) as u64; 32];
                    good
                });
                assert!(ok.iter().all(|&b| b), "n={n} {alg}");
            }
            let mut comm = Comm::with_options(n, single_copy()).unwrap();
            let mut ranks = comm.ranks();
            for (alg, m, model) in [
                (Algorithm::Optimal, 4, &oneport),
                (Algorithm::ScatterAllgather, 8, &postal),
                (Algorithm::Greedy, 6, &postal),
                (Algorithm::Fibonacci { d: None }, 5, &oneport),
            ] {
                let req = Request::broadcast(alg, n as u32, m, (n / 2) as u32);
                let p = Program::compile(&generate(&req, model).unwrap()).unwrap();
                let want = payload(9_999, n as u64);
                let ok = team.run_with(&mut ranks, |_, c| {
                    (0..20).all(|_| {
                        let mut buf = if c.rank() == p.root() as usize {
                            want.clone()
                        } else {
                            vec![0; want.len()]
                        };
                        c.broadcast_with(&p, &mut buf).unwrap();
                        buf == want
                    })
                });
                assert!(ok.iter().all(|&b| b), "n={n} {alg} m={m}");
            }
        }
    });
}

#[test]
fn one_descriptor_copies_among_ranks_sharing_cpus_complete() {
    // A one-chunk single copy's lender spins on its turns once only readers on other CPUs are
    // left, where no rank of its CPU forwards (stars), and yields as before where one does
    // (binomial and binary trees, chains): 3–16 ranks on the machine's CPUs, payloads of one
    // chunk (the default 64 KiB) up to it, every root in turn and two calls back to back,
    // every byte checked.
    watchdog(|| {
        for n in [3, 4, 8, 16] {
            let mut team = Team::new(n).unwrap();
            for alg in [
                Algorithm::Star,
                Algorithm::Binomial,
                Algorithm::Binary,
                Algorithm::Chain,
            ] {
                let opts = CommOptions {
                    direct_min_bytes: 1,
                    schedule: DefaultSchedule::Fixed(alg),
                    ..CommOptions::default()
                };
                let mut comm = Comm::with_options(n, opts).unwrap();
                let mut ranks = comm.ranks();
                let ok = team.run_with(&mut ranks, |_, c| {
                    let mut good = true;
                    for (i, len) in [100usize, 32 << 10, 64 << 10].into_iter().enumerate() {
                        for root in 0..c.size() {
                            for k in 0..2 {
                                let want = payload(len, (i * 31 + root * 2 + k) as u64);
                                let mut buf = if c.rank() == root {
                                    want.clone()
                                } else {
                                    vec![0x5a; len]
                                };
                                c.broadcast(root, &mut buf).unwrap();
                                good &= buf == want;
                            }
                        }
                    }
                    good
                });
                assert!(ok.iter().all(|&b| b), "n={n} {alg}");
            }
        }
    });
}

#[test]
fn single_copy_mismatches_and_panics_do_not_hang() {
    watchdog(|| {
        for n in [2, 3, 8] {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::with_options(n, single_copy()).unwrap();
            let mut ranks = comm.ranks();
            // Different sizes: reported, and the root does not wait for a reader that never
            // starts reading.
            let res = team.run_with(&mut ranks, |_, c| {
                let len = if c.rank() == 0 { 10_000 } else { 999 };
                c.broadcast(0, &mut vec![1; len])
            });
            assert!(res.iter().any(|r| r.is_err()), "n={n}: {res:?}");
            drop(ranks);
            // A rank panics instead of joining a single-copy broadcast: the panic reaches
            // the caller, no rank is left waiting, and the communicator still works after.
            let mut ranks = comm.ranks();
            let hit = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                team.run_with(&mut ranks, |_, c| {
                    if c.rank() == n - 1 {
                        panic!("rank {} gives up", c.rank());
                    }
                    let _ = c.broadcast(0, &mut vec![3u8; 50_000]);
                })
            }));
            assert!(hit.is_err());
            drop(ranks);
            let mut ranks = comm.ranks();
            let ok = team.run_with(&mut ranks, |_, c| {
                let mut buf = vec![c.rank() as u8; 30_000];
                c.broadcast(n - 1, &mut buf).unwrap();
                buf.iter().all(|&b| b == (n - 1) as u8)
            });
            assert!(ok.iter().all(|&b| b));
        }
    });
}
