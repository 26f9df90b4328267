//! Planning is policy outside the runtime (issue 17): a default `Comm` reads nothing, a planned
//! one plans when it is made and returns planning errors there, and the programs its calls run
//! are the planner's choice for each size class, generated for each root.

mod common {
    pub(crate) mod watch;
}

use common::watch::{payload, watchdog};
use herald::{
    runtime::{CollectiveError, DefaultSchedule, Planned},
    Algorithm, Comm, CommOptions, Profile, Team, TopologySource,
};

fn profile() -> Profile {
    let text = std::fs::read_to_string("tests/data/profile-2core.json").unwrap();
    Profile::from_json_forced(&text).unwrap()
}

fn two_cores() -> herald::Hierarchy {
    TopologySource::from_options(Some("core:2 pu:1"), None)
        .unwrap()
        .load()
        .unwrap()
}

#[test]
fn the_default_is_binomial_and_reads_nothing() {
    // A profile named by the environment (another host's): `Planned::load` reads it (and
    // refuses it), the default options do not look.
    std::env::set_var("HERALD_PROFILE", "tests/data/profile-2core.json");
    assert!(Planned::load().is_err());
    assert_eq!(
        CommOptions::default().schedule,
        DefaultSchedule::Fixed(Algorithm::Binomial)
    );
    assert_eq!(CommOptions::default(), CommOptions::default());
}

#[test]
fn a_profile_that_cannot_plan_fails_when_the_comm_is_made() {
    // The profile with its one measured level erased: the planner has no costs for 6 ranks
    // on 2 cores (oversubscribed: the model is built from a measured level).
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("tests/data/profile-2core.json").unwrap())
            .unwrap();
    for level in json["levels"].as_array_mut().unwrap() {
        for key in [
            "lambda",
            "L_ns",
            "o_s_ns",
            "o_r_ns",
            "g_ns",
            "G_ns_per_byte",
            "one_way_ns",
            "raw_hop_ns",
        ] {
            level[key] = serde_json::Value::Null;
        }
    }
    let empty = Profile::from_json_forced(&json.to_string()).unwrap();
    let options = CommOptions {
        schedule: DefaultSchedule::Planned(Planned::new(empty, two_cores())),
        ..CommOptions::default()
    };
    let err = Comm::with_options(6, options).unwrap_err();
    assert!(matches!(err, CollectiveError::Plan(_)), "{err}");
}

/// Broadcasts `bytes` of payload `seed` from `root`; whether this rank holds them after.
fn broadcast_arrives(c: &mut herald::CommRank<'_>, root: usize, bytes: usize, seed: u64) -> bool {
    let sent = payload(bytes, seed);
    let mut buf = if c.rank() == root {
        sent.clone()
    } else {
        vec![0; bytes]
    };
    c.broadcast(root, &mut buf).unwrap();
    buf == sent
}

#[test]
fn planned_broadcasts_deliver_from_every_root_in_every_class() {
    watchdog(planned_broadcasts);
}

fn planned_broadcasts() {
    let n = 6;
    let options = CommOptions {
        schedule: DefaultSchedule::Planned(Planned::new(profile(), two_cores())),
        // The test profile has no runtime measurements: the planner streams every class, so
        // the program's sends are what moves (single copy is tests/runtime_cost.rs's).
        ..CommOptions::default()
    };
    let mut comm = Comm::with_options(n, options).unwrap();
    comm.prepare(0..n).unwrap();
    assert!(matches!(
        comm.prepare([n]),
        Err(CollectiveError::Root { root: 6, size: 6 })
    ));
    let sizes = [1usize, 8, 100, 4096, 70_000];
    let mut team = Team::new(n).unwrap();
    let mut ranks = comm.ranks();
    let ok = team.run_with(&mut ranks, |_, c| {
        let mut all = true;
        for &bytes in &sizes {
            for root in 0..n {
                all &= broadcast_arrives(c, root, bytes, root as u64 + 1);
            }
        }
        all
    });
    assert_eq!(ok, vec![true; n]);
}

/// The CPU count behind the shared-CPU rules, parsed here from the kernel's list on its own.
fn online_cpus_here() -> Option<usize> {
    let list = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    list.trim().split(',').try_fold(0usize, |n, part| {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b) = (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?);
        Some(n + b - a + 1)
    })
}

#[test]
fn whether_ranks_share_cpus_is_an_option() {
    let on = |cpus| CommOptions {
        cpus,
        ..CommOptions::default()
    };
    assert!(Comm::with_options(4, on(Some(2)))
        .unwrap()
        .ranks_share_cpus());
    assert!(Comm::with_options(3, on(Some(2)))
        .unwrap()
        .ranks_share_cpus());
    assert!(!Comm::with_options(2, on(Some(2)))
        .unwrap()
        .ranks_share_cpus());
    assert!(!Comm::with_options(4, on(Some(64)))
        .unwrap()
        .ranks_share_cpus());
    assert!(matches!(
        Comm::with_options(2, on(Some(0))),
        Err(CollectiveError::NoCpus)
    ));
    // Unset: the machine's online CPUs.
    if let Some(cpus) = online_cpus_here() {
        for n in [1, cpus, cpus + 1, 2 * cpus + 3] {
            let comm = Comm::with_options(n, on(None)).unwrap();
            assert_eq!(
                comm.ranks_share_cpus(),
                n > cpus,
                "{n} ranks on {cpus} CPUs"
            );
        }
    }
}

/// Both sets of rules (ranks on CPUs of their own, ranks sharing CPUs) deliver the same bytes,
/// on any machine: broadcasts and slice allreduces on both sides of every size rule.
#[test]
fn both_cpu_rules_deliver_the_same_results() {
    watchdog(|| {
        let n = 4;
        let mut team = Team::new(n).unwrap();
        for cpus in [Some(1), Some(1024)] {
            let options = CommOptions {
                cpus,
                ..CommOptions::default()
            };
            let mut comm = Comm::with_options(n, options).unwrap();
            assert_eq!(comm.ranks_share_cpus(), cpus == Some(1));
            let mut ranks = comm.ranks();
            let ok = team.run_with(&mut ranks, |_, c| {
                for (i, len) in [8usize, 64, 100, 888, 900, 5000].into_iter().enumerate() {
                    let root = i % n;
                    assert!(
                        broadcast_arrives(c, root, len, i as u64 + 7),
                        "{len} B from {root}, cpus {cpus:?}"
                    );
                }
                for elems in [1usize, 8, 64, 600] {
                    let mine = |r: usize| -> Vec<u64> {
                        (0..elems)
                            .map(|k| (r as u64 + 1) * 1000 + k as u64)
                            .collect()
                    };
                    let mut data = mine(c.rank());
                    c.allreduce_slice(&mut data, |a, b| a.wrapping_add(b))
                        .unwrap();
                    let want: Vec<u64> = (0..elems)
                        .map(|k| (0..n).map(|r| mine(r)[k]).fold(0, u64::wrapping_add))
                        .collect();
                    assert_eq!(data, want, "{elems} elements, cpus {cpus:?}");
                }
                true
            });
            assert!(ok.iter().all(|&b| b));
        }
    });
}
