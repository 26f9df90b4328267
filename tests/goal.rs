//! GOAL (LogGOPSim) interop: the fixture parses as the binomial tree it is, and exports re-parse
//! to the same sends and dependencies.

use herald::{generate, Algorithm, Goal, GoalDep, GoalOp, LogP, Model, Postal, Ratio, Request};

/// The sample from LogGOPSim's repository (shipped in shared/fixtures; copied into tests/data
/// so a clone anywhere runs it).
fn fixture() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/binary_tree_32.goal"
    );
    std::fs::read_to_string(path).expect("tests/data/binary_tree_32.goal")
}

#[test]
fn the_fixture_is_a_binomial_tree_of_32() {
    let g = Goal::parse(&fixture()).unwrap();
    assert_eq!(g.ranks.len(), 32);
    for (r, rank) in g.ranks.iter().enumerate() {
        let r = r as u32;
        // In a binomial tree rank r > 0 hears from r minus its highest set bit and then sends
        // to r + 2^k for every 2^k above its highest bit.
        let high = if r == 0 {
            0
        } else {
            1 << (31 - r.leading_zeros())
        };
        let recvs: Vec<u32> = rank
            .ops
            .iter()
            .filter_map(|(_, op)| match op {
                GoalOp::Recv {
                    peer,
                    bytes: 1,
                    tag: 0,
                } => Some(*peer),
                _ => None,
            })
            .collect();
        let sends: Vec<u32> = rank
            .ops
            .iter()
            .filter_map(|(_, op)| match op {
                GoalOp::Send {
                    peer,
                    bytes: 1,
                    tag: 0,
                } => Some(*peer),
                _ => None,
            })
            .collect();
        let expected_recvs: Vec<u32> = if r == 0 { vec![] } else { vec![r - high] };
        assert_eq!(recvs, expected_recvs, "rank {r}");
        let first = if r == 0 { 1 } else { high << 1 };
        let expected_sends: Vec<u32> = std::iter::successors(Some(first), |k| Some(k << 1))
            .take_while(|&k| r + k < 32)
            .map(|k| r + k)
            .collect();
        assert_eq!(sends, expected_sends, "rank {r}");
        // every send requires the receive (l1) on non-roots
        if r > 0 {
            assert!(rank.deps.iter().all(|d| d.on == 1 && !d.start_only));
            assert_eq!(rank.deps.len(), sends.len());
        }
    }
}

#[test]
fn export_reparses_to_the_same_sends_and_dependencies() {
    let logp = Model::from(
        LogP::new(
            Ratio::integer(6),
            Ratio::integer(2),
            Ratio::integer(4),
            Ratio::ZERO,
        )
        .unwrap(),
    );
    let postal = Model::from(Postal::new("5/2".parse().unwrap()).unwrap());
    for (model, alg, n, m) in [
        (&postal, Algorithm::Optimal, 14, 1),
        (&logp, Algorithm::Optimal, 33, 1),
        (&logp, Algorithm::Binomial, 16, 3),
        (&postal, Algorithm::ScatterAllgather, 7, 5),
        (&postal, Algorithm::Dtree { d: 3 }, 20, 2),
    ] {
        let s = generate(&Request::broadcast(alg, n, m, 0), model).unwrap();
        let g = s.to_goal(64).unwrap();
        let back = Goal::parse(&g.to_text()).unwrap();
        assert_eq!(back, g, "{alg}: text round trip");
        for p in 0..n {
            let rank = &back.ranks[p as usize];
            let label_of =
                |want: &GoalOp| rank.ops.iter().find(|(_, op)| op == want).map(|(l, _)| *l);
            // sends in the schedule's order
            let sends: Vec<(u32, u32)> = rank
                .ops
                .iter()
                .filter_map(|(_, op)| match op {
                    GoalOp::Send {
                        peer,
                        tag,
                        bytes: 64,
                    } => Some((*peer, *tag)),
                    _ => None,
                })
                .collect();
            let expected: Vec<(u32, u32)> = s.sends_of(p).map(|x| (x.to, x.what)).collect();
            assert_eq!(sends, expected, "{alg}: sends of {p}");
            // one receive per incoming send
            let mut recvs: Vec<(u32, u32)> = rank
                .ops
                .iter()
                .filter_map(|(_, op)| match op {
                    GoalOp::Recv { peer, tag, .. } => Some((*peer, *tag)),
                    _ => None,
                })
                .collect();
            let mut incoming: Vec<(u32, u32)> = s
                .sends()
                .filter(|x| x.to == p)
                .map(|x| (x.from, x.what))
                .collect();
            recvs.sort_unstable();
            incoming.sort_unstable();
            assert_eq!(recvs, incoming, "{alg}: receives of {p}");
            // every forward requires a receive of its block; consecutive sends are chained
            let mut previous = None;
            for (to, what) in expected {
                let l = label_of(&GoalOp::Send {
                    bytes: 64,
                    peer: to,
                    tag: what,
                })
                .unwrap();
                if p != 0 {
                    let needs = rank.deps.iter().any(|d| d.after == l && matches!(
                        rank.ops.iter().find(|(x, _)| *x == d.on), Some((_, GoalOp::Recv { tag, .. })) if *tag == what));
                    assert!(
                        needs,
                        "{alg}: rank {p} forwards block {what} without requiring its receive"
                    );
                }
                if let Some(prev) = previous {
                    assert!(rank.deps.contains(&GoalDep {
                        after: l,
                        on: prev,
                        start_only: false
                    }));
                }
                previous = Some(l);
            }
        }
    }
}

#[test]
fn malformed_goal_is_a_typed_error() {
    for bad in [
        "",
        "rank 0 {\n}",
        "num_ranks 1\nrank 3 {\n}",
        "num_ranks 1\nrank 0 {\nl1: send 1 to 0 tag 0\n}",
        "num_ranks 1\nrank 0 {\nl1: send 1b to 0 tag 0\n",
        "num_ranks x",
    ] {
        assert!(Goal::parse(bad).is_err(), "{bad:?} parsed");
    }
}
