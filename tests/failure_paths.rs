//! The runtime's failure paths (issue 16): whatever a rank does — panics inside or outside a
//! call, returns an error, arrives late with another call, leaves early, runs far ahead — no
//! rank hangs, no call reports success for a broadcast that did not happen, no false mismatch
//! is reported, and no single-copy reader touches a freed buffer. One test per scenario of the
//! issue; every test runs under the watchdog (a hang fails it).
//!
//! Freed-buffer reads are made visible without a sanitizer: the lender's buffer is a
//! [`Scrubbed`] vector that overwrites itself with [`SCRUB`] before it is freed, and every
//! receiver checks that its buffer holds only bytes it started with or bytes the root sent.
//! (Under Miri, the freed memory itself is checked.)

mod common {
    pub(crate) mod watch;
}

use common::watch::{payload, watchdog};
use herald::runtime::fault::{self, Point};
use herald::{
    generate,
    model::OnePort,
    runtime::{CollectiveError, PoisonCause, ProgramError},
    time::TimeBase,
    Algorithm, Collective, Comm, CommOptions, Model, Network, Postal, Program, Ratio, Request,
    Schedule, Team,
};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

/// Scaled down under Miri, which runs a thousand times slower.
const BIG: usize = if cfg!(miri) { 4 << 10 } else { 1 << 20 };
const ROUNDS: usize = if cfg!(miri) { 2 } else { 40 };

/// What a freed lender buffer is overwritten with.
const SCRUB: u8 = 0xDE;
/// The root's bytes.
const SENT: u8 = 0x11;
/// A receiver's bytes before the broadcast.
const BEFORE: u8 = 0x55;

/// A buffer that overwrites itself before it is freed, so a late reader sees [`SCRUB`].
struct Scrubbed(Vec<u8>);

impl Drop for Scrubbed {
    fn drop(&mut self) {
        for b in self.0.iter_mut() {
            // Volatile: the write must happen although the memory is freed right after.
            // SAFETY: `b` is a valid, exclusive reference to a byte of the vector.
            unsafe { std::ptr::write_volatile(b, SCRUB) };
        }
    }
}

/// [`Scrubbed`] for words (8-byte aligned).
struct ScrubbedWords(Vec<u64>);

impl Drop for ScrubbedWords {
    fn drop(&mut self) {
        for w in self.0.iter_mut() {
            // SAFETY: `w` is a valid, exclusive reference to a word of the vector.
            unsafe { std::ptr::write_volatile(w, u64::from_ne_bytes([SCRUB; 8])) };
        }
    }
}

/// Options with single copy from 1 KiB in chunks of `chunk` bytes.
fn single_copy(chunk: usize) -> CommOptions {
    CommOptions {
        direct_min_bytes: 1 << 10,
        direct_chunk_bytes: chunk,
        ..CommOptions::default()
    }
}

/// Whether `buf` holds only bytes a receiver may hold after an interrupted broadcast.
fn untorn(buf: &[u8]) -> bool {
    buf.iter().all(|&b| b == SENT || b == BEFORE)
}

/// Runs `f` on `team` with `ranks`, catching the team's re-raised panic; returns the results
/// of the ranks that did not panic (`None` for the panicking ones) and whether a panic came.
fn run_catching<'c, R: Send>(
    team: &mut Team,
    ranks: &mut [herald::CommRank<'c>],
    f: impl Fn(&mut herald::CommRank<'c>) -> R + Sync,
) -> (Vec<Option<R>>, bool) {
    let out: Vec<std::sync::Mutex<Option<R>>> = (0..ranks.len())
        .map(|_| std::sync::Mutex::new(None))
        .collect();
    let hit = panic::catch_unwind(AssertUnwindSafe(|| {
        team.run_with(ranks, |ctx, c| {
            let r = f(c);
            *out[ctx.rank()].lock().unwrap() = Some(r);
        });
    }));
    let out = out.into_iter().map(|m| m.into_inner().unwrap()).collect();
    (out, hit.is_err())
}

/// Scenario 1: a single-copy lender that panics after publishing descriptors keeps its buffer
/// alive until its readers are done: no receiver ever holds a scrubbed byte.
#[test]
fn lender_panic_waits_for_its_readers() {
    watchdog(|| {
        for (n, chunk) in [(2, 4 << 10), (3, 16 << 10), (5, 1 << 10)] {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::with_options(n, single_copy(chunk)).unwrap();
            let chunks = (BIG / chunk) as u32;
            for round in 0..ROUNDS {
                let skip = (round as u32 * 7) % chunks.max(1);
                let mut ranks = comm.ranks();
                let (out, hit) = run_catching(&mut team, &mut ranks, |c| {
                    if c.rank() == 0 {
                        let mut buf = Scrubbed(vec![SENT; BIG]);
                        fault::panic_at(Point::LendDescriptor, skip);
                        let r = c.broadcast(0, &mut buf.0);
                        fault::disarm();
                        (r.is_ok(), true)
                    } else {
                        let mut buf = vec![BEFORE; BIG];
                        let r = c.broadcast(0, &mut buf);
                        (r.is_ok(), untorn(&buf))
                    }
                });
                assert!(hit, "n={n}: the lender's panic reaches the caller");
                for (rank, o) in out.iter().enumerate().skip(1) {
                    let (ok, clean) = o.expect("receivers return");
                    assert!(!ok, "n={n} round {round}: rank {rank} reports success");
                    assert!(
                        clean,
                        "n={n} round {round}: rank {rank} read a freed buffer"
                    );
                }
            }
        }
    });
}

/// Scenario 1, the receiver's side: a receiver that panics while copying lets its lender and
/// every other rank return; the lender's buffer outlives every read.
#[test]
fn reader_panic_poisons_and_nobody_hangs() {
    watchdog(|| {
        let n = 4;
        let mut team = Team::new(n).unwrap();
        let mut comm = Comm::with_options(n, single_copy(4 << 10)).unwrap();
        for round in 0..ROUNDS {
            let mut ranks = comm.ranks();
            let victim = 1 + round % (n - 1);
            let (out, hit) = run_catching(&mut team, &mut ranks, |c| {
                let mut buf = if c.rank() == 0 {
                    vec![SENT; BIG]
                } else {
                    vec![BEFORE; BIG]
                };
                if c.rank() == victim {
                    // At one of the first five chunks (there are fewer under Miri).
                    let chunks = BIG / (4 << 10);
                    fault::panic_at(Point::CopyChunk, (round % 5 % chunks) as u32);
                }
                let r = c.broadcast(0, &mut buf);
                fault::disarm();
                (r, untorn(&buf))
            });
            assert!(hit);
            for o in out.iter().flatten() {
                assert!(o.1, "round {round}: a torn buffer");
                if let Err(e) = &o.0 {
                    assert!(matches!(
                        e,
                        CollectiveError::Poisoned { .. } | CollectiveError::Aborted
                    ));
                }
            }
        }
    });
}

/// Scenario 2: after an abort the communicator is poisoned for every rank until the endpoints
/// are rebuilt: the survivors' calls fail, and running the team again with the same endpoints
/// fails on every rank instead of matching stale lines or lending freed buffers.
#[test]
fn abort_poisons_until_rebuilt() {
    watchdog(|| {
        for options in [CommOptions::default(), single_copy(64 << 10)] {
            let n = 2;
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::with_options(n, options).unwrap();
            let mut ranks = comm.ranks();
            let (out, hit) = run_catching(&mut team, &mut ranks, |c| {
                let mut oks = 0;
                for i in 0..50 {
                    if c.rank() == 1 && i == 10 {
                        panic!("rank 1 gives up after 10 broadcasts");
                    }
                    let mut buf = vec![c.rank() as u8; BIG];
                    match c.broadcast(0, &mut buf) {
                        Ok(()) => oks += 1,
                        Err(_) => break,
                    }
                }
                oks
            });
            assert!(hit);
            let root_oks = out[0].expect("the root returns");
            assert!(root_oks < 50, "the root reported {root_oks} broadcasts");
            // The same endpoints again: every call on every rank fails.
            let again = team.run_with(&mut ranks, |_, c| {
                let mut buf = vec![9u8; BIG];
                (0..5)
                    .map(|_| c.broadcast(0, &mut buf))
                    .all(|r| matches!(r, Err(CollectiveError::Poisoned { .. })))
            });
            assert_eq!(again, [true, true]);
            drop(ranks);
            // Rebuilt: fresh rings, fresh data only.
            let mut ranks = comm.ranks();
            let want = payload(1000, 7);
            let got = team.run_with(&mut ranks, |_, c| {
                let mut buf = if c.rank() == 0 {
                    want.clone()
                } else {
                    vec![0; 1000]
                };
                c.broadcast(0, &mut buf).unwrap();
                buf == want
            });
            assert_eq!(got, [true, true]);
        }
    });
}

/// Scenario 4: schedules the runtime cannot run soundly are refused at compile time, typed.
#[test]
fn compile_refuses_unsound_schedules() {
    let compile = |n: u32, root: u32, blocks: u32, sends: &[(u64, u32, u32, u32)]| {
        let broadcast = Collective::Broadcast { root, blocks };
        let mut s = Schedule::builder(n, broadcast, TimeBase::UNIT).unwrap();
        for &(at, from, to, what) in sends {
            s.push(at, from, to, what);
        }
        Program::compile(&s.build().unwrap())
    };
    assert!(compile(3, 0, 1, &[(0, 0, 1, 0), (0, 0, 2, 0)]).is_ok());
    assert_eq!(
        compile(3, 0, 1, &[(0, 0, 1, 0), (0, 0, 2, 0), (1, 0, 2, 1)]),
        Err(ProgramError::Block {
            from: 0,
            to: 2,
            block: 1,
            blocks: 1
        })
    );
    assert_eq!(
        compile(3, 0, 1, &[(0, 0, 1, 0), (1, 1, 2, 0), (1, 0, 2, 0)]),
        Err(ProgramError::Duplicate {
            processor: 2,
            block: 0
        })
    );
    assert_eq!(
        compile(
            3,
            1,
            2,
            &[
                (0, 1, 0, 0),
                (0, 1, 2, 0),
                (1, 1, 0, 1),
                (1, 1, 2, 1),
                (2, 2, 1, 1)
            ]
        ),
        Err(ProgramError::ToRoot { from: 2, block: 1 })
    );
}

/// Scenario 5: a rank parked in a collective notices a mismatch although nobody sends it a
/// line: ranks 0–2 reduce while rank 3 arrives 20 ms late with a broadcast from itself (rank 2
/// waits for rank 3's partial, which never comes).
#[test]
fn parked_ranks_notice_a_late_mismatch() {
    watchdog(|| {
        let n = 4;
        let mut team = Team::new(n).unwrap();
        let mut comm = Comm::new(n).unwrap();
        for late_kind in 0..2 {
            let mut ranks = comm.ranks();
            let res = team.run_with(&mut ranks, |_, c| {
                if c.rank() == 3 {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    if late_kind == 0 {
                        // Sends nothing to rank 2, and makes no further call: only looking
                        // at rank 3's published call can release rank 2.
                        return c.broadcast(3, &mut [0; 8]);
                    }
                    c.reduce(0, 1u64, |a, b| a + b).map(|_| ())
                } else if late_kind == 0 {
                    c.reduce(0, 1u64, |a, b| a + b).map(|_| ())
                } else {
                    c.broadcast(0, &mut [0; 8]).map(|_| ())
                }
                .and_then(|()| c.barrier())
            });
            assert!(
                res.iter()
                    .any(|r| matches!(r, Err(CollectiveError::Mismatch { .. }))),
                "{res:?}"
            );
        }
    });
}

/// Scenario 6: a panic in `Network::iterate`'s per-iteration closures ends the run.
#[test]
fn network_iterate_survives_panicking_closures() {
    watchdog(|| {
        let oneport = Model::from(OnePort);
        for n in [2, 3, 9] {
            let s = generate(&Request::broadcast(Algorithm::Optimal, n, 2, 0), &oneport).unwrap();
            let mut net = Network::new(Program::compile(&s).unwrap(), 8);
            let mut team = Team::new(n as usize).unwrap();
            for in_before in [true, false] {
                let mut bufs = vec![vec![0u8; 500]; n as usize];
                let hit = panic::catch_unwind(AssertUnwindSafe(|| {
                    net.iterate(
                        &mut team,
                        &mut bufs,
                        100,
                        |i, r, _| assert!(!(in_before && i == 7 && r == 1), "before"),
                        |i, r, _| !(!in_before && i == 7 && r == n as usize - 1) || panic!("after"),
                    )
                }));
                assert!(hit.is_err(), "n={n}");
            }
        }
    });
}

/// Scenario 7: an error on one rank before its call starts does not leave the others waiting:
/// the root's `broadcast_with` rejects a program for another size; the others run a good one.
#[test]
fn an_early_error_on_one_rank_releases_the_others() {
    watchdog(|| {
        let model = Model::from(Postal::new(Ratio::integer(2)).unwrap());
        let program = |n| {
            let s = generate(&Request::broadcast(Algorithm::Binomial, n, 1, 0), &model).unwrap();
            Program::compile(&s).unwrap()
        };
        for (n, bytes) in [(3, 100), (5, 100_000)] {
            let (good, bad) = (program(n), program(n + 1));
            let mut team = Team::new(n as usize).unwrap();
            let mut comm = Comm::new(n as usize).unwrap();
            let mut ranks = comm.ranks();
            let res = team.run_with(&mut ranks, |_, c| {
                let p = if c.rank() == 0 { &bad } else { &good };
                c.broadcast_with(p, &mut vec![1u8; bytes])
            });
            assert!(matches!(res[0], Err(CollectiveError::Program(_))));
            assert!(res[1..]
                .iter()
                .all(|r| matches!(r, Err(CollectiveError::Poisoned { .. }))));
        }
    });
}

/// Scenario 8, two teams: ranks of one communicator driven by two teams at once; a rank of
/// one team panics between calls; the other team's ranks stop waiting.
#[test]
fn a_panic_in_one_team_releases_the_other() {
    watchdog(|| {
        let n = 4;
        let mut comm = Comm::new(n).unwrap();
        let (mut a, mut b) = (Team::new(2).unwrap(), Team::new(2).unwrap());
        let mut ranks = comm.ranks();
        let (left, right) = ranks.split_at_mut(2);
        let (ra, rb) = std::thread::scope(|s| {
            let ha = s.spawn(|| {
                a.run_with(left, |_, c| {
                    (0..10_000).map(|_| c.barrier()).find(|r| r.is_err())
                })
            });
            let hb = s.spawn(|| {
                panic::catch_unwind(AssertUnwindSafe(|| {
                    b.run_with(right, |_, c| {
                        for i in 0..10_000 {
                            assert!(!(c.rank() == 3 && i == 100), "rank 3 dies");
                            c.barrier()?;
                        }
                        Ok::<(), CollectiveError>(())
                    })
                }))
            });
            (ha.join().unwrap(), hb.join().unwrap())
        });
        assert!(rb.is_err(), "team b re-raises the panic");
        for r in ra {
            assert!(matches!(
                r,
                Some(Err(CollectiveError::Poisoned {
                    cause: PoisonCause::Panic | PoisonCause::Aborted,
                    ..
                }))
            ));
        }
    });
}

/// Scenario 8, plain threads: ranks moved into `std::thread::scope` threads; one panics between
/// calls (its endpoint is dropped while unwinding), one returns early (its endpoint is dropped
/// normally): the others get errors, not a hang.
#[test]
fn scoped_threads_see_panics_and_departures() {
    watchdog(|| {
        let n = 4;
        let mut comm = Comm::new(n).unwrap();
        for panics in [true, false] {
            let ranks = comm.ranks();
            let results: Vec<_> = std::thread::scope(|s| {
                let handles: Vec<_> = ranks
                    .into_iter()
                    .map(|mut c| {
                        s.spawn(move || {
                            for i in 0..1000 {
                                if c.rank() == 2 && i == 50 {
                                    assert!(!panics, "rank 2 dies");
                                    return Ok(());
                                }
                                c.barrier()?;
                            }
                            Ok::<(), CollectiveError>(())
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join()).collect()
            });
            assert_eq!(results[2].is_err(), panics);
            for (rank, r) in results.iter().enumerate().filter(|(r, _)| *r != 2) {
                let r = r.as_ref().expect("no other rank panics");
                assert!(
                    matches!(
                        r,
                        Err(CollectiveError::Departed {
                            peer: 2,
                            calls: 50,
                            ..
                        }) | Err(CollectiveError::Poisoned { .. })
                    ),
                    "rank {rank}: {r:?}"
                );
            }
        }
    });
}

/// Scenario 9: a root may run any number of calls ahead of a slow rank without a false
/// mismatch: a barrier followed by a barrier-free loop of small broadcasts, and the "length,
/// then data" pattern (1, 2, 3, 1, 2, 3, … bytes) with a receiver that lags.
#[test]
fn no_false_mismatch_however_far_the_root_runs_ahead() {
    watchdog(|| {
        let calls = if cfg!(miri) { 600 } else { 20_000 };
        for n in [2, 3] {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::new(n).unwrap();
            let mut ranks = comm.ranks();
            let ok = team.run_with(&mut ranks, |_, c| {
                c.barrier().unwrap();
                for i in 0..calls {
                    let len = 1 + i % 3;
                    let mut buf = [0u8; 48];
                    if c.rank() == 0 {
                        buf[..len].fill(i as u8);
                    } else if i % 1000 < 3 {
                        // Lag behind now and then: the root runs hundreds of calls ahead.
                        std::thread::sleep(std::time::Duration::from_micros(200));
                    }
                    c.broadcast(0, &mut buf[..len]).unwrap();
                    assert!(buf[..len].iter().all(|&b| b == i as u8), "call {i}");
                }
                true
            });
            assert!(ok.iter().all(|&b| b));
        }
    });
}

/// Scenario 10: once a rank has panicked, no later call reports a broadcast as done, on any
/// rank, and the dead run's lines never reach a rebuilt communicator.
#[test]
fn no_success_after_an_abort() {
    watchdog(|| {
        let n = 3;
        let mut team = Team::new(n).unwrap();
        let mut comm = Comm::new(n).unwrap();
        let died_at = AtomicU64::new(u64::MAX);
        let mut ranks = comm.ranks();
        let (out, hit) = run_catching(&mut team, &mut ranks, |c| {
            let mut late_oks = 0u64;
            for i in 0..100_000u64 {
                if c.rank() == 2 && i == 500 {
                    died_at.store(i, Ordering::SeqCst);
                    panic!("rank 2 dies");
                }
                let mut buf = [i as u8; 8];
                let poisoned_before = c.is_poisoned();
                let r = c.broadcast(0, &mut buf);
                if poisoned_before && r.is_ok() {
                    // A call that started after the death and still reported success.
                    late_oks += 1;
                }
                if r.is_err() {
                    break;
                }
            }
            late_oks
        });
        assert!(hit);
        for late in out.iter().flatten() {
            assert_eq!(
                *late, 0,
                "a call reported success on a poisoned communicator"
            );
        }
        drop(ranks);
        let mut ranks = comm.ranks();
        let fresh = team.run_with(&mut ranks, |_, c| {
            let mut buf = [if c.rank() == 0 { 0xC3 } else { 0 }; 8];
            c.broadcast(0, &mut buf).unwrap();
            buf == [0xC3; 8]
        });
        assert_eq!(fresh, [true; 3]);
    });
}

/// The single-copy allreduce of slices (reduce-scatter and allgather reading every rank's
/// buffer): a panic in `op` on one rank — mid-reduction, its buffer lent to every other rank —
/// or at a copy keeps every lent buffer alive until its readers are done. Every element starts
/// at 1 and `op` adds, so any element above `n` was read from a scrubbed (freed) buffer; no
/// rank but the victim reports success.
#[test]
fn allreduce_slice_panics_never_expose_a_freed_buffer() {
    watchdog(|| {
        let len = if cfg!(miri) { 48 } else { 40 << 10 };
        let options = CommOptions {
            allreduce_direct_min_bytes: 64,
            ..CommOptions::default()
        };
        for n in [2, 3] {
            let mut team = Team::new(n).unwrap();
            let mut comm = Comm::with_options(n, options.clone()).unwrap();
            for round in 0..ROUNDS {
                let victim = round % n;
                // In `op` after `stop` combinations, or at the `skip`-th copy (reduction block
                // or gather block).
                let (stop, skip) = (round * 5 % (len / n), (round / 2 % 3) as u32);
                let mut ranks = comm.ranks();
                let (out, hit) = run_catching(&mut team, &mut ranks, |c| {
                    let me = c.rank();
                    let mut buf = ScrubbedWords(vec![1; len]);
                    let data = &mut buf.0[..];
                    if me == victim && round % 2 == 1 {
                        fault::panic_at(Point::CopyChunk, skip);
                    }
                    let combined = std::cell::Cell::new(0);
                    let r = c.allreduce_slice(data, |a, b| {
                        combined.set(combined.get() + 1);
                        assert!(
                            !(me == victim && round % 2 == 0 && combined.get() > stop),
                            "op"
                        );
                        a + b
                    });
                    fault::disarm();
                    (r.is_ok(), data.iter().all(|&x| x <= n as u64))
                });
                assert!(
                    hit || round % 2 == 1,
                    "n={n} round {round}: the op's panic comes"
                );
                for (rank, o) in out.iter().enumerate() {
                    if let Some((ok, clean)) = *o {
                        assert!(
                            clean,
                            "n={n} round {round}: rank {rank} read a freed buffer"
                        );
                        assert!(!hit || !ok, "n={n} round {round}: rank {rank} reports Ok");
                    }
                }
            }
        }
    });
}
