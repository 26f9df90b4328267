//! Broadcasts of at most 1072 bytes posted in shared memory (`CommOptions::posted_broadcast`;
//! the tests say the ranks have CPUs of their own, so posting applies at every rank count):
//! every rank gets the root's bytes, byte for byte, for every length from 0 to 130 (a slot's
//! first line holds 48 payload bytes, each further line 64), around 512 and up to the largest
//! posted and the first size past it, 1–9 and 12 ranks (more ranks than CPUs included), roots that
//! change every call and a root that runs ahead of a lagging reader (so every slot of every
//! rank is reused many times and the root waits for its slowest reader), interleaved with
//! the other collectives; the same calls with the option off give the same bytes; mismatched
//! calls are typed errors, a departed rank is reported, and nobody hangs. Ranks that share
//! CPUs post the sizes of `CommOptions::shared_posted_bytes` (up to 8 KiB by default) in
//! larger slots, 64 of them: the same checks run there on lengths around both ends and across
//! the slots' lines, and a root runs 63 posts ahead of a reader that has not started. Every test runs under the watchdog.

mod common {
    pub(crate) mod watch;
}

use common::watch::{payload, watchdog, watchdog_secs};
use herald::runtime::CollectiveError;
use herald::{Comm, CommOptions, Team};

/// Options that post small broadcasts whatever this machine's CPUs: the ranks are said to
/// have CPUs of their own (posting is off by default where ranks share CPUs).
fn posting() -> CommOptions {
    CommOptions {
        cpus: Some(1024),
        ..CommOptions::default()
    }
}

/// The root's bytes of call `i` (`len` of them).
fn bytes(i: u64, len: usize) -> Vec<u8> {
    payload(len, 7919 * i + len as u64 + 1)
}

/// The lengths broadcast in turn: every length up to 130 (the first line's 48 payload bytes,
/// the second's 64, into the third), 505–520, and 1060–1073 (1072 is the largest posted; 1073
/// moves by single copy).
fn lengths() -> Vec<usize> {
    (0..=130).chain(505..=520).chain(1060..=1073).collect()
}

/// Options for ranks that share CPUs, whatever this machine's (one CPU for them all).
fn sharing() -> CommOptions {
    CommOptions {
        cpus: Some(1),
        ..CommOptions::default()
    }
}

/// The lengths broadcast in turn where ranks share CPUs: every length up to 194 (a slot's
/// first line holds 48 payload bytes, each further line 64), around 1 KiB (where single copy
/// would take over), and 8180–8200 (8192 is the largest posted; past it single copy).
fn shared_lengths() -> Vec<usize> {
    (0..=194).chain(1020..=1030).chain(8180..=8200).collect()
}

/// A size that is never posted (it moves by single copy, its descriptor through the rings).
const UNPOSTED: usize = 3000;

/// `calls` broadcasts on every rank, the root `i mod n` (or `fixed`) and the lengths of
/// `lengths` in turn; every rank checks every byte it got. Without
/// `lag`, an allreduce, a barrier and a longer broadcast every few calls. With `lag`, nothing
/// else (nothing that synchronizes the ranks), and rank `n − 1` sleeps now and then, so the
/// roots run ahead of it until they must wait for it.
fn rounds_of(
    lengths: &[usize],
    n: usize,
    options: CommOptions,
    calls: u64,
    fixed: Option<usize>,
    lag: bool,
) {
    let mut team = Team::new(n).unwrap();
    let mut comm = Comm::with_options(n, options).unwrap();
    let mut ranks = comm.ranks();
    let wrong = team.run_with(&mut ranks, |_, c| {
        let me = c.rank();
        let mut wrong = 0u64;
        for i in 0..calls {
            let root = fixed.unwrap_or(i as usize % n);
            let len = lengths[i as usize % lengths.len()];
            let want = bytes(i, len);
            let mut buf = if me == root {
                want.clone()
            } else {
                vec![0xA5; len]
            };
            if lag && me == n - 1 && i % 97 == 0 {
                std::thread::sleep(std::time::Duration::from_micros(300));
            }
            c.broadcast(root, &mut buf).unwrap();
            wrong += u64::from(buf != want);
            if !lag && i % 13 == 0 {
                let sum = c.allreduce(me as u64 + i, |a, b| a + b).unwrap();
                let n64 = n as u64;
                wrong += u64::from(sum != n64 * (n64 - 1) / 2 + n64 * i);
            }
            if !lag && i % 31 == 0 {
                c.barrier().unwrap();
                let mut long = if me == root {
                    bytes(i, UNPOSTED)
                } else {
                    vec![0; UNPOSTED]
                };
                c.broadcast(root, &mut long).unwrap();
                wrong += u64::from(long != bytes(i, UNPOSTED));
            }
        }
        wrong
    });
    assert_eq!(wrong, vec![0; n], "wrong broadcasts per rank");
}

/// [`rounds_of`] the lengths of [`lengths`].
fn rounds(n: usize, options: CommOptions, calls: u64, fixed: Option<usize>, lag: bool) {
    rounds_of(&lengths(), n, options, calls, fixed, lag);
}

#[test]
fn ranks_sharing_cpus_post_their_range_byte_for_byte() {
    watchdog(|| {
        let lengths = shared_lengths();
        let comm = Comm::with_options(3, sharing()).unwrap();
        for (len, posted) in [
            (0, true),
            (8, true),
            (127, true),
            (8192, true),
            (8193, false),
        ] {
            let t = comm.broadcast_transport(len);
            assert_eq!(
                t == herald::model::Transport::Posted,
                posted,
                "{len} B: {t:?}"
            );
        }
        for n in [2, 3, 5, 8] {
            rounds_of(&lengths, n, sharing(), 500, None, false);
        }
        // One root running ahead of a lagging reader, then roots that change: every slot
        // reused, the root waiting for its slowest reader.
        rounds_of(&lengths, 4, sharing(), 1500, Some(0), true);
        rounds_of(&lengths, 5, sharing(), 1500, None, true);
        // Another range: every size from 0, slots of 200 bytes (four lines).
        let small = CommOptions {
            shared_posted_bytes: Some(0..=200),
            ..sharing()
        };
        rounds_of(&lengths, 3, small, 500, None, false);
        // A range past the limit is slots of the limit.
        let huge = CommOptions {
            shared_posted_bytes: Some(60 << 10..=usize::MAX),
            ..sharing()
        };
        let limit = herald::runtime::SHARED_POSTED_LIMIT;
        let comm = Comm::with_options(2, huge.clone()).unwrap();
        assert_eq!(
            comm.broadcast_transport(limit),
            herald::model::Transport::Posted
        );
        assert_ne!(
            comm.broadcast_transport(limit + 1),
            herald::model::Transport::Posted
        );
        rounds_of(
            &[limit - 1, limit, limit + 1, 61 << 10],
            3,
            huge,
            40,
            None,
            false,
        );
    });
}

/// Where ranks share CPUs a root runs 63 posted broadcasts ahead of a reader that has not
/// started (64 slots a rank; with 16 the root would wait for the reader at its 16th post, and
/// the reader waits for the root's 63rd: the watchdog would fail the test), and the reader
/// then reads all 63, byte for byte; the 64th waits for it.
#[test]
fn ranks_sharing_cpus_let_a_root_run_63_posts_ahead() {
    use std::sync::atomic::{AtomicU64, Ordering};
    watchdog_secs(60, || {
        let (mut team, mut comm) = (
            Team::new(2).unwrap(),
            Comm::with_options(2, sharing()).unwrap(),
        );
        let posted = AtomicU64::new(0);
        let mut ranks = comm.ranks();
        let wrong = team.run_with(&mut ranks, |_, c| {
            let mut wrong = 0;
            if c.rank() == 1 {
                while posted.load(Ordering::Acquire) < 63 {
                    std::thread::yield_now();
                }
            }
            for i in 0..64u64 {
                let want = bytes(i, 100);
                let mut buf = if c.rank() == 0 {
                    want.clone()
                } else {
                    vec![0; 100]
                };
                c.broadcast(0, &mut buf).unwrap();
                wrong += u64::from(buf != want);
                if c.rank() == 0 {
                    posted.store(i + 1, Ordering::Release);
                }
            }
            wrong
        });
        assert_eq!(wrong, [0, 0]);
    });
}

/// Few calls, for Miri (`scripts/test.sh` runs the tests whose names start `few_calls` under
/// it): posts that end in the first line, part-way into a further line, at a full slot, and
/// (ranks sharing CPUs) in a long slot; the root copies the further lines into the slot whole
/// and each reader copies them out whole (the `unsafe` of `posted.rs`).
#[test]
fn few_calls_of_every_kind_of_slot_arrive_byte_for_byte() {
    watchdog(|| {
        rounds_of(&[0, 48, 49, 64, 113, 1072], 2, posting(), 12, None, false);
        rounds_of(&[49, 200, 8192], 3, sharing(), 6, None, false);
    });
}

#[test]
fn every_rank_gets_every_byte() {
    watchdog(|| {
        for n in [1, 2, 3, 4, 5, 6, 7, 8, 9, 12] {
            rounds(n, posting(), 600, None, false);
        }
    });
}

#[test]
fn a_planned_communicator_posts_the_same_bytes() {
    // A planned communicator whose profile did not measure posting (the test profile's) posts
    // by the rule what it would otherwise move by its plan's choice (streams: the profile
    // measured no single copy either). tests/runtime_cost.rs covers profiles that measured it.
    watchdog(|| {
        let text = std::fs::read_to_string("tests/data/profile-2core.json").unwrap();
        let profile = herald::Profile::from_json_forced(&text).unwrap();
        let two_cores = herald::TopologySource::from_options(Some("l3:1 core:2 pu:1"), None)
            .unwrap()
            .load()
            .unwrap();
        // Two ranks on two cores under one L3 (the level the profile measured).
        let planned = CommOptions {
            schedule: herald::runtime::DefaultSchedule::Planned(herald::runtime::Planned::new(
                profile, two_cores,
            )),
            ..posting()
        };
        rounds(2, planned, 600, None, false);
    });
}

#[test]
fn a_root_that_runs_ahead_waits_for_its_slowest_reader() {
    watchdog(|| {
        for n in [2, 3, 5] {
            rounds(n, posting(), 3000, Some(0), true);
        }
        // Roots that change, one reader lagging.
        rounds(4, posting(), 3000, None, true);
    });
}

#[test]
fn the_rings_give_the_same_bytes() {
    watchdog(|| {
        let off = CommOptions {
            posted_broadcast: false,
            ..posting()
        };
        for n in [2, 5] {
            rounds(n, off.clone(), 400, None, false);
        }
        // Ranks sharing CPUs (whatever this machine has), with posting off there: their
        // broadcasts go through the rings.
        let shared = CommOptions {
            shared_posted_bytes: None,
            ..sharing()
        };
        rounds(3, shared.clone(), 400, None, true);
        rounds_of(&shared_lengths(), 3, shared, 400, None, false);
    });
}

/// Runs `body` on `n` ranks of a fresh communicator; returns each rank's result.
fn run<T: Send>(n: usize, body: impl Fn(&mut herald::CommRank<'_>) -> T + Sync) -> Vec<T> {
    run_with(n, posting(), body)
}

/// [`run`] with these options.
fn run_with<T: Send>(
    n: usize,
    options: CommOptions,
    body: impl Fn(&mut herald::CommRank<'_>) -> T + Sync,
) -> Vec<T> {
    let mut team = Team::new(n).unwrap();
    let mut comm = Comm::with_options(n, options).unwrap();
    let mut ranks = comm.ranks();
    team.run_with(&mut ranks, |_, c| body(c))
}

fn is_mismatch(r: &Result<(), CollectiveError>) -> bool {
    matches!(r, Err(CollectiveError::Mismatch { .. }))
}

#[test]
fn a_posted_broadcast_against_a_ring_broadcast_is_a_mismatch() {
    watchdog(|| {
        for n in [2, 3] {
            // The reader waits on a slot the root never fills: the root broadcast more.
            let res = run(n, |c| {
                let len = if c.rank() == 0 { UNPOSTED } else { 8 };
                c.broadcast(0, &mut vec![1; len]).and_then(|()| c.barrier())
            });
            assert!(res.iter().any(is_mismatch), "n={n}: {res:?}");
            // The root posts; the reader waits on the ring for more.
            let res = run(n, |c| {
                let len = if c.rank() == 0 { 8 } else { UNPOSTED };
                c.broadcast(0, &mut vec![1; len]).and_then(|()| c.barrier())
            });
            assert!(res.iter().any(is_mismatch), "n={n}: {res:?}");
            // A reader that arrives late for a posted broadcast whose root has made forty
            // ring broadcasts instead (1100 bytes, 20 lines each, in rings of 1024 lines: the
            // root never waits) and left: the root's history no longer holds the call, but
            // the root moved past it without posting.
            let rings = CommOptions {
                capacity: 1024,
                direct_min_bytes: 1 << 20,
                ..posting()
            };
            let res = run_with(n, rings, |c| {
                if c.rank() == 0 {
                    (0..40).try_for_each(|_| c.broadcast(0, &mut [1; 1100]))
                } else {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    c.broadcast(0, &mut [0; 8])
                }
            });
            assert!(res.iter().any(is_mismatch), "n={n}: {res:?}");
        }
    });
}

#[test]
fn ranks_sharing_cpus_find_a_posted_broadcast_against_another_call() {
    watchdog(|| {
        // (root's length, the readers'): posted on the board of 16 large slots against the
        // board of 64 small ones, and back; posted against the rings (9000 bytes move by single
        // copy), and back; both posted on one board, different sizes.
        let pairs = [
            (4096, 64),
            (64, 4096),
            (64, 9000),
            (9000, 64),
            (4096, 4000),
            (100, 64),
        ];
        for n in [2, 3, 5] {
            for (root_len, len) in pairs {
                let res = run_with(n, sharing(), |c| {
                    let len = if c.rank() == 0 { root_len } else { len };
                    c.broadcast(0, &mut vec![1; len]).and_then(|()| c.barrier())
                });
                assert!(
                    res.iter().any(is_mismatch),
                    "n={n} {root_len}/{len}: {res:?}"
                );
            }
        }
    });
}

#[test]
fn two_roots_are_found_at_the_next_posted_broadcast() {
    watchdog(|| {
        // Each rank thinks it is the root: both post and return. The next posted broadcast's
        // reader finds another history in the root's slot.
        let res = run(2, |c| {
            let first = c.broadcast(c.rank(), &mut [c.rank() as u8; 8]);
            assert!(first.is_ok());
            c.broadcast(0, &mut [0; 8]).and_then(|()| c.barrier())
        });
        assert!(res.iter().any(is_mismatch), "{res:?}");
        assert!(res.iter().all(Result::is_err), "{res:?}");
    });
}

#[test]
fn a_departed_rank_is_reported_to_readers_and_roots() {
    watchdog(|| {
        // Rank 1 leaves at once (its endpoint dropped in its own thread): rank 2 waits for its
        // post, rank 0 posts until it needs rank 1 to have read.
        let mut comm = Comm::with_options(3, posting()).unwrap();
        let ranks = comm.ranks();
        let res: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = ranks
                .into_iter()
                .map(|mut c| {
                    s.spawn(move || match c.rank() {
                        1 => Ok(()),
                        2 => c.broadcast(1, &mut [0; 8]),
                        _ => (0..100).try_for_each(|_| c.broadcast(0, &mut [0; 8])),
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(res[1].is_ok());
        for r in [0, 2] {
            assert!(
                matches!(
                    res[r],
                    Err(CollectiveError::Departed {
                        peer: 1,
                        calls: 0,
                        ..
                    }) | Err(CollectiveError::Poisoned { .. })
                ),
                "rank {r}: {:?}",
                res[r]
            );
        }
    });
}
