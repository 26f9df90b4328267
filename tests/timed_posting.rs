//! A planned communicator's run-time choice between posting a broadcast and its plan's other
//! transport by the host's latency regime (`CommOptions::timed_posting`): which sizes are timed,
//! and that timed broadcasts deliver every byte from every root while the ranks change ways
//! (`TimedPosting::Alternate` changes every epoch; with more ranks than CPUs, with a lagging
//! reader that lets posting roots run ahead, interleaved with other collectives), that
//! mismatched calls and a panicking rank end in typed errors rather than a hang, and that a
//! communicator keeps working after new endpoints. The choice itself depends on the host's
//! state; its rules are tested on fixed figures in the library (`choice.rs`). Every test runs
//! under the watchdog.

mod common {
    pub(crate) mod watch;
}

use common::watch::{payload, watchdog};
use herald::{
    runtime::{CollectiveError, DefaultSchedule, Planned, TimedPosting},
    Comm, CommOptions, Profile, Team, TopologySource,
};

/// A full calibration of the development machine that met both of its latency modes
/// (2026-12-06 02:51 UTC: a hop between its CPUs of 76 ns most of the time, 276 ns in a
/// slow spell; runtime measurements included).
fn profile() -> Profile {
    let text = std::fs::read_to_string("tests/data/profile-2core-two-modes.json").unwrap();
    Profile::from_json_forced(&text).unwrap()
}

/// The same machine's calibration that met one mode only.
fn one_mode_profile() -> Profile {
    let text = std::fs::read_to_string("tests/data/profile-2core.json").unwrap();
    Profile::from_json_forced(&text).unwrap()
}

/// The levels that profile measured, as a synthetic machine.
fn machine() -> herald::Hierarchy {
    TopologySource::from_options(Some("package:1 numa:1 l3:1 l2:2 l1:1 core:1 pu:1"), None)
        .unwrap()
        .load()
        .unwrap()
}

/// Planned options for ranks on `cpus` CPUs, timing by `timed`.
fn planned(cpus: usize, timed: TimedPosting) -> CommOptions {
    planned_with(profile(), cpus, timed)
}

/// [`planned`] with `profile`.
fn planned_with(profile: Profile, cpus: usize, timed: TimedPosting) -> CommOptions {
    CommOptions {
        schedule: DefaultSchedule::Planned(Planned::new(profile, machine())),
        cpus: Some(cpus),
        timed_posting: timed,
        ..CommOptions::default()
    }
}

#[test]
fn which_sizes_are_timed() {
    // The default is `Auto`.
    assert_eq!(CommOptions::default().timed_posting, TimedPosting::Auto);
    // A fixed schedule never times, nor does `Never`.
    let fixed = CommOptions {
        cpus: Some(2),
        timed_posting: TimedPosting::Always,
        ..CommOptions::default()
    };
    let fixed = Comm::with_options(4, fixed).unwrap();
    assert!((1..=8192).all(|b| !fixed.broadcast_timed(b)));
    let never = Comm::with_options(4, planned(2, TimedPosting::Never)).unwrap();
    assert!((1..=1 << 16).all(|b| !never.broadcast_timed(b)));
    // `Always` and `Alternate`: every size that may be posted, and none that may not. Where
    // ranks share CPUs that is the default range of up to 8 KiB; with CPUs of their own, up
    // to 1072 bytes.
    for how in [TimedPosting::Always, TimedPosting::Alternate] {
        let shared = Comm::with_options(4, planned(2, how)).unwrap();
        assert!(shared.ranks_share_cpus());
        assert!((1..=8192).all(|b| shared.broadcast_timed(b)));
        assert!(!shared.broadcast_timed(8193));
        let own = Comm::with_options(2, planned(2, how)).unwrap();
        assert!((1..=1072).all(|b| own.broadcast_timed(b)));
        assert!(!own.broadcast_timed(1073));
    }
    // `Auto` times a subset of `Always`'s sizes, whole classes (2^(k-1), 2^k] at a time:
    // with a profile of two modes some (the modes' hops are 3.6× apart), with a profile of
    // one mode none.
    let auto = Comm::with_options(4, planned(2, TimedPosting::Auto)).unwrap();
    let mut timed = 0;
    for k in 1..=13u32 {
        let (lo, hi) = ((1usize << (k - 1)) + 1, 1usize << k);
        let t = auto.broadcast_timed(hi);
        assert!((lo..=hi).all(|b| auto.broadcast_timed(b) == t), "class {k}");
        timed += usize::from(t);
    }
    assert!(timed > 0);
    assert!(!auto.broadcast_timed(8193));
    let one = Comm::with_options(4, planned_with(one_mode_profile(), 2, TimedPosting::Auto));
    let one = one.unwrap();
    assert!((1..=1 << 16).all(|b| !one.broadcast_timed(b)));
}

/// The root's bytes of call `i`.
fn bytes(i: u64, len: usize) -> Vec<u8> {
    payload(len, 104_729 * i + len as u64 + 11)
}

/// `calls` broadcasts of the lengths `lengths` in turn, the root changing every call, an
/// allreduce every 37 calls, rank `n − 1` sleeping now and then if `lag`; returns each rank's
/// count of wrong bytes.
fn rounds(comm: &mut Comm, n: usize, lengths: &[usize], calls: u64, lag: bool) -> Vec<u64> {
    let mut team = Team::new(n).unwrap();
    let mut ranks = comm.ranks();
    team.run_with(&mut ranks, |_, c| {
        let me = c.rank();
        let mut wrong = 0u64;
        for i in 0..calls {
            let len = lengths[i as usize % lengths.len()];
            let root = (i as usize * 7 + i as usize / 5) % n;
            let want = bytes(i, len);
            let mut buf = if me == root {
                want.clone()
            } else {
                vec![0xEE; len]
            };
            c.broadcast(root, &mut buf).unwrap();
            wrong += buf.iter().zip(&want).filter(|(a, b)| a != b).count() as u64;
            if i % 37 == 36 {
                let sum = c.allreduce(me as u64 + i, |a, b| a + b).unwrap();
                let expect = (0..n as u64).map(|r| r + i).sum::<u64>();
                wrong += u64::from(sum != expect);
            }
            if lag && me == n - 1 && i % 97 == 0 {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        }
        wrong
    })
}

#[test]
fn timed_broadcasts_deliver_every_byte_with_ranks_sharing_cpus() {
    watchdog(|| {
        for n in [3usize, 4, 6] {
            let mut comm = Comm::with_options(n, planned(2, TimedPosting::Alternate)).unwrap();
            // Two classes (4 KiB and 8 KiB), several lengths each; 1600 calls: 12 epochs of
            // each class, each the other way from the last.
            let lengths = [4096, 2049, 8192, 3000, 4097, 6000];
            for lag in [false, true] {
                assert_eq!(
                    rounds(&mut comm, n, &lengths, 1600, lag),
                    vec![0; n],
                    "{n} {lag}"
                );
            }
        }
    });
}

#[test]
fn timed_broadcasts_deliver_every_byte_with_cpus_of_their_own() {
    watchdog(|| {
        // Said to have CPUs of their own (whatever this machine has): posting up to 1072 bytes.
        let mut comm = Comm::with_options(3, planned(64, TimedPosting::Alternate)).unwrap();
        assert!(!comm.ranks_share_cpus());
        let lengths = [1000, 1072, 600, 48, 49, 3000];
        for lag in [false, true] {
            assert_eq!(rounds(&mut comm, 3, &lengths, 1500, lag), vec![0; 3]);
        }
    });
}

#[test]
fn mismatched_timed_calls_are_errors() {
    watchdog(|| {
        let n = 4;
        let mut team = Team::new(n).unwrap();
        let mut comm = Comm::with_options(n, planned(2, TimedPosting::Alternate)).unwrap();
        // Rank 1 calls with another length from call 100 on: 4000 bytes (the same class) or
        // 8000 (another class, whose epochs its peers never start).
        for other in [4000usize, 8000] {
            let mut ranks = comm.ranks();
            let got = team.run_with(&mut ranks, |_, c| {
                for i in 0..400u64 {
                    let len = if c.rank() == 1 && i >= 100 {
                        other
                    } else {
                        4096
                    };
                    let mut buf = vec![c.rank() as u8; len];
                    if let Err(e) = c.broadcast((i % 4) as usize, &mut buf) {
                        return Some((i, e));
                    }
                }
                None
            });
            for (rank, r) in got.into_iter().enumerate() {
                let (i, e) = r.unwrap_or_else(|| panic!("rank {rank} saw no error ({other})"));
                // No rank fails before the mismatch but in a call still in flight when rank 1
                // raises it: a single-copy root waits for every reader's copy, and its readers
                // stop copying once the poison is up, so a rank is at most a few calls behind.
                assert!(i + 8 >= 100, "rank {rank} failed at {i}");
                assert!(
                    matches!(
                        e,
                        CollectiveError::Mismatch { .. } | CollectiveError::Poisoned { .. }
                    ),
                    "rank {rank}: {e}"
                );
            }
        }
    });
}

#[test]
fn a_panicking_rank_ends_every_rank_and_new_endpoints_work() {
    watchdog(|| {
        let n = 4;
        let mut team = Team::new(n).unwrap();
        let mut comm = Comm::with_options(n, planned(2, TimedPosting::Alternate)).unwrap();
        assert_eq!(rounds(&mut comm, n, &[4096], 700, false), vec![0; n]);
        let mut ranks = comm.ranks();
        let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            team.run_with(&mut ranks, |_, c| {
                for i in 0..700u64 {
                    assert!(!(c.rank() == 2 && i == 333), "rank 2 fails on purpose");
                    let mut buf = vec![c.rank() as u8; 4096];
                    if c.broadcast(0, &mut buf).is_err() {
                        return i;
                    }
                }
                u64::MAX
            })
        }));
        assert!(got.is_err(), "the panic reaches the caller");
        drop(ranks);
        // New endpoints start afresh from the regime rank 0 had; every byte still arrives.
        assert_eq!(rounds(&mut comm, n, &[4096, 3500], 700, true), vec![0; n]);
    });
}
