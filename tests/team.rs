//! Tests of `runtime/team.rs`: pinned worker teams, far more threads than the 2 cores.

mod common {
    pub(crate) mod watch;
}

use common::watch::watchdog;
use herald::{
    runtime::{channel, Ctx, Line, Receiver, RecvError, RuntimeError, Sender},
    Team,
};
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

/// One rank's channel ends for a star broadcast from rank 0.
enum Star {
    Root(Vec<Sender>),
    Leaf(Receiver),
}

fn star(n: usize) -> Vec<Star> {
    let (txs, rxs): (Vec<_>, Vec<_>) = (1..n).map(|_| channel(2)).unzip();
    std::iter::once(Star::Root(txs))
        .chain(rxs.into_iter().map(Star::Leaf))
        .collect()
}

/// The line of broadcast `round`: every byte depends on the round.
fn message(round: u64) -> Line {
    let mut line = Line::new();
    for (i, byte) in line.payload_mut().iter_mut().enumerate() {
        *byte = (round as u8).wrapping_mul(31).wrapping_add(i as u8);
    }
    line.set_word(0, round);
    line
}

/// Rank 0 sends `message(round)` to every rank; each leaf checks every byte.
fn broadcast(ctx: &Ctx, ends: &mut Star, round: u64) -> Result<(), RecvError> {
    assert!(ctx.rank() < ctx.size());
    match ends {
        Star::Root(txs) => {
            assert_eq!(ctx.rank(), 0);
            txs.iter_mut()
                .for_each(|tx| tx.send(message(round)).unwrap());
        }
        Star::Leaf(rx) => assert_eq!(rx.recv()?, message(round), "rank {}", ctx.rank()),
    }
    Ok(())
}

#[test]
fn star_broadcast_on_many_threads() {
    watchdog(|| {
        for n in [1, 2, 3, 5, 8, 16, 33, 64] {
            let mut team = Team::new(n).unwrap();
            assert_eq!(team.size(), n);
            let mut ends = star(n);
            for round in 0..20 {
                let results = team.run_with(&mut ends, |ctx, ends| broadcast(ctx, ends, round));
                assert_eq!(results, vec![Ok(()); n]);
            }
            // Lines per edge: one per round on each of the n - 1 edges.
            match &ends[0] {
                Star::Root(txs) => assert!(txs.iter().all(|tx| tx.sent() == 20)),
                Star::Leaf(_) => unreachable!(),
            }
        }
    });
}

#[test]
fn ten_thousand_rounds_on_one_team() {
    watchdog(|| {
        let mut team = Team::new(8).unwrap();
        let mut ends = star(8);
        for round in 0..10_000 {
            team.run_with(&mut ends, |ctx, ends| broadcast(ctx, ends, round).unwrap());
        }
        assert_eq!(team.run(|ctx| ctx.rank()), (0..8).collect::<Vec<_>>());
    });
}

#[test]
fn run_returns_results_by_rank() {
    watchdog(|| {
        let mut team = Team::new(5).unwrap();
        let borrowed = [10, 20, 30, 40, 50];
        let sum = AtomicUsize::new(0);
        let got = team.run(|ctx| {
            sum.fetch_add(borrowed[ctx.rank()], Ordering::Relaxed);
            (ctx.rank(), ctx.size())
        });
        assert_eq!(got, (0..5).map(|r| (r, 5)).collect::<Vec<_>>());
        assert_eq!(sum.into_inner(), 150);
    });
}

#[test]
fn a_panic_mid_broadcast_reaches_the_caller() {
    watchdog(|| {
        let n = 16;
        let mut team = Team::new(n).unwrap();
        let mut ends = star(n);
        let aborted = AtomicUsize::new(0);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            team.run_with(&mut ends, |_, ends| match ends {
                Star::Root(txs) => {
                    // Half the leaves get their line, then the root dies.
                    txs[..n / 2]
                        .iter_mut()
                        .for_each(|tx| tx.send(message(1)).unwrap());
                    panic!("root died mid-broadcast");
                }
                Star::Leaf(rx) => match rx.recv() {
                    Ok(line) => assert_eq!(line, message(1)),
                    Err(e) => {
                        assert_eq!(e, RecvError::Aborted);
                        aborted.fetch_add(1, Ordering::Relaxed);
                    }
                },
            })
        }));
        let payload = outcome.expect_err("the root's panic must reach the caller");
        assert_eq!(
            payload.downcast_ref::<&str>(),
            Some(&"root died mid-broadcast")
        );
        // The leaves the root never reached were released from their waits.
        assert_eq!(aborted.load(Ordering::Relaxed), n - 1 - n / 2);

        // The team is still usable, and a leaf's panic (a secondary one after an abort is
        // not the one reported) reaches the caller too.
        assert_eq!(team.run(|ctx| ctx.rank()).len(), n);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            team.run(|ctx| {
                if ctx.rank() == 3 {
                    panic!("rank 3");
                }
            })
        }));
        assert_eq!(outcome.unwrap_err().downcast_ref::<&str>(), Some(&"rank 3"));
        drop(team); // joins every worker
    });
}

thread_local! {
    static EXIT_MARK: ExitMark = const { ExitMark(Cell::new(false)) };
}
static EXITED: AtomicUsize = AtomicUsize::new(0);

/// Counts the threads that touched it when they exit.
struct ExitMark(Cell<bool>);

impl Drop for ExitMark {
    fn drop(&mut self) {
        if self.0.get() {
            EXITED.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[test]
fn dropping_a_team_joins_every_thread() {
    watchdog(|| {
        let mut team = Team::new(33).unwrap();
        team.run(|_| EXIT_MARK.with(|m| m.0.set(true)));
        assert_eq!(EXITED.load(Ordering::SeqCst), 0);
        drop(team);
        assert_eq!(EXITED.load(Ordering::SeqCst), 33);
    });
}

#[test]
fn setup_errors_are_typed() {
    assert!(matches!(Team::new(0), Err(RuntimeError::NoRanks)));
    assert!(matches!(
        Team::with_cores(vec![]),
        Err(RuntimeError::NoRanks)
    ));
    assert!(matches!(
        Team::builder().ranks(3).cores(vec![0, 0]).build(),
        Err(RuntimeError::CoreMap { ranks: 3, cores: 2 })
    ));
    // A stack no OS can give: the thread cannot start, and the ranks already started are
    // joined (the watchdog would catch a hang).
    watchdog(|| {
        let huge = Team::builder().ranks(4).stack_size(1 << 60).build();
        assert!(
            matches!(huge, Err(RuntimeError::Spawn { rank: 0, .. })),
            "{huge:?}"
        );
    });
}

#[test]
fn explicit_cores_and_pinning_failures() {
    watchdog(|| {
        let cpus = Team::available_cpus();
        assert!(!cpus.is_empty());
        // Ranks on explicit OS CPUs, several per CPU: each worker sees only its CPU.
        let cores: Vec<usize> = (0..6).map(|r| cpus[r % cpus.len()]).collect();
        let mut team = Team::with_cores(cores.clone()).unwrap();
        let seen = team.run(|ctx| {
            let ids = core_affinity::get_core_ids().unwrap();
            (
                ctx.placement(),
                ids.iter().map(|c| c.id).collect::<Vec<_>>(),
            )
        });
        for (rank, (placement, ids)) in seen.into_iter().enumerate() {
            assert_eq!(placement, team.placements()[rank]);
            assert_eq!(placement.cpu(), Some(cores[rank]));
            assert!(placement.is_pinned());
            assert_eq!(ids, [cores[rank]]);
        }
        // The CPU list read at start is not changed by pinned workers.
        assert_eq!(Team::available_cpus(), cpus);

        // CPUs that do not exist: recorded, not fatal.
        let mut team = Team::with_cores(vec![1000, 5000, cpus[0]]).unwrap();
        let pinned: Vec<bool> = team.placements().iter().map(|p| p.is_pinned()).collect();
        assert_eq!(pinned, [false, false, true]);
        assert_eq!(team.run(|ctx| ctx.rank()), [0, 1, 2]);

        // Pinning off.
        let team = Team::builder().ranks(2).pin(false).build().unwrap();
        assert!(team
            .placements()
            .iter()
            .all(|p| p.cpu().is_none() && !p.is_pinned()));
    });
}
