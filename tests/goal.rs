//! GOAL (LogGOPSim) interop: the parser takes LogGOPSim's grammar, herald's exports chain each
//! rank's CPU order and re-parse to themselves, running an export under the model reproduces the
//! schedule, and hand-computed GOAL programs run and check as the rules say.

use herald::{
    check, generate,
    model::OnePort,
    schedule::{Goal, GoalDep, GoalOp},
    sim::{check_goal, goal_collective, run_goal, CheckOptions, GoalRunError, Rule},
    Algorithm, Collective, CostModel, LogP, Model, Postal, Ratio, Request, Schedule,
};

fn r(x: u64) -> Ratio {
    Ratio::integer(x)
}

fn logp(l: u64, o: u64, g: u64) -> LogP {
    LogP::new(r(l), r(o), r(g), r(0)).unwrap()
}

/// The sample from LogGOPSim's repository (shipped in shared/fixtures; copied into tests/data
/// so a clone anywhere runs it).
fn fixture() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/binary_tree_32.goal"
    );
    std::fs::read_to_string(path).expect("tests/data/binary_tree_32.goal")
}

/// The highest power of two in `r` (0 for 0).
fn high(r: u32) -> u32 {
    if r == 0 {
        0
    } else {
        1 << (31 - r.leading_zeros())
    }
}

#[test]
fn the_fixture_is_a_binomial_tree_of_32() {
    let g = Goal::parse(&fixture()).unwrap();
    assert_eq!(g.ranks.len(), 32);
    for (r, rank) in g.ranks.iter().enumerate() {
        let r = r as u32;
        // rank r > 0 hears from r minus its highest set bit, then sends to r + 2^k for every 2^k
        // above its highest bit, smallest first
        let recvs: Vec<u32> = rank
            .ops
            .iter()
            .filter_map(|op| match op {
                GoalOp::Recv {
                    peer: Some(p),
                    bytes: 1,
                    tag: Some(0),
                } => Some(*p),
                _ => None,
            })
            .collect();
        let sends: Vec<u32> = rank
            .ops
            .iter()
            .filter_map(|op| match op {
                GoalOp::Send {
                    peer,
                    bytes: 1,
                    tag: 0,
                } => Some(*peer),
                _ => None,
            })
            .collect();
        let expected_recvs: Vec<u32> = if r == 0 { vec![] } else { vec![r - high(r)] };
        assert_eq!(recvs, expected_recvs, "rank {r}");
        let first = if r == 0 { 1 } else { high(r) << 1 };
        let expected_sends: Vec<u32> = std::iter::successors(Some(first), |k| Some(k << 1))
            .take_while(|&k| r + k < 32)
            .map(|k| r + k)
            .collect();
        assert_eq!(sends, expected_sends, "rank {r}");
        if r > 0 {
            // every send requires the receive (l1, operation 0)
            assert!(rank.deps.iter().all(|d| d.on == 0 && !d.start_only));
            assert_eq!(rank.deps.len(), sends.len());
        }
    }
}

#[test]
fn the_fixture_runs_as_computed_by_hand() {
    // L = 6, o = 2, g = 4: a rank's sends are all ready when it holds the block and go out
    // max(g, o) = 4 apart in file order; each arrives L + 2o = 10 after it starts.
    let model = Model::from(logp(6, 2, 4));
    let goal = Goal::parse(&fixture()).unwrap();
    let c = goal_collective(&goal).unwrap();
    assert_eq!(c, Collective::Broadcast { root: 0, blocks: 1 });
    let run = run_goal(&goal, &model, c).unwrap();
    let mut holds = [0u64; 32];
    let mut expected = vec![];
    for r in 0..32u32 {
        let first = if r == 0 { 1 } else { high(r) << 1 };
        let mut j = 0;
        let mut k = first;
        while r + k < 32 {
            let at = holds[r as usize] + 4 * j;
            expected.push((r, r + k, at));
            holds[(r + k) as usize] = at + 10;
            j += 1;
            k <<= 1;
        }
    }
    let got: Vec<(u32, u32, u64)> = run.schedule.sends().map(|s| (s.from, s.to, s.at)).collect();
    expected.sort_unstable();
    let mut got_sorted = got.clone();
    got_sorted.sort_unstable();
    assert_eq!(got_sorted, expected);
    // a rank finishes when its last receive or send ends
    for (r, &held) in holds.iter().enumerate() {
        let last_send = expected
            .iter()
            .filter(|e| e.0 as usize == r)
            .map(|e| e.2 + 2)
            .max()
            .unwrap_or(0);
        assert_eq!(run.finish[r], last_send.max(held), "rank {r}");
    }
    // herald's rules agree: legal, makespan = the last arrival
    let checked = check_goal(&goal, &model, None, CheckOptions::default()).unwrap();
    assert!(checked.report.legal());
    assert_eq!(checked.report.makespan(), *holds.iter().max().unwrap());
    assert_eq!(checked.report.busy_until(), run.busy_until());
}

#[test]
fn exports_chain_the_cpu_order_and_reparse_to_themselves() {
    let logp_model = Model::from(logp(6, 2, 4));
    let postal = Model::from(Postal::new("5/2".parse().unwrap()).unwrap());
    for (model, alg, n, m) in [
        (&postal, Algorithm::Optimal, 14, 1),
        (&logp_model, Algorithm::Optimal, 33, 1),
        (&logp_model, Algorithm::Binomial, 16, 3),
        (&logp_model, Algorithm::ScatterAllgather, 7, 5),
        (&postal, Algorithm::ScatterAllgather, 7, 5),
        (&postal, Algorithm::Dtree { d: 3 }, 20, 2),
    ] {
        let s = generate(&Request::broadcast(alg, n, m, 0), model).unwrap();
        let timing = model.timing(s.base()).unwrap();
        let g = s.to_goal(&timing, 64).unwrap();
        let back = Goal::parse(&g.to_text()).unwrap();
        assert_eq!(back, g, "{alg}: text round trip");
        for p in 0..n {
            let rank = &back.ranks[p as usize];
            // sends in the schedule's order
            let sends: Vec<(u32, u32)> = rank
                .ops
                .iter()
                .filter_map(|op| match op {
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
                .filter_map(|op| match op {
                    GoalOp::Recv {
                        peer: Some(p),
                        tag: Some(t),
                        ..
                    } => Some((*p, *t)),
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
            if timing.shared_cpu {
                // LogP: one chain through every operation, in CPU order
                let chain: Vec<GoalDep> = (1..rank.ops.len() as u32)
                    .map(|i| GoalDep {
                        after: i,
                        on: i - 1,
                        start_only: false,
                    })
                    .collect();
                assert_eq!(rank.deps, chain, "{alg}: rank {p}");
            } else {
                // ports: sends chained; each forward requires the receive of its block
                for (i, op) in rank.ops.iter().enumerate() {
                    if let GoalOp::Send { tag, .. } = op {
                        if p != 0 {
                            let needs = rank.deps.iter().any(|d| {
                                d.after == i as u32
                                    && matches!(rank.ops[d.on as usize],
                                        GoalOp::Recv { tag: Some(t), .. } if t == *tag)
                            });
                            assert!(needs, "{alg}: rank {p} forwards {tag} without its receive");
                        }
                    }
                }
            }
            // a forward comes after the receive of its block in the file (CPU) order
            for (i, op) in rank.ops.iter().enumerate() {
                if let (GoalOp::Send { tag, .. }, true) = (op, p != 0) {
                    let received = rank.ops[..i]
                        .iter()
                        .any(|o| matches!(o, GoalOp::Recv { tag: Some(t), .. } if t == tag));
                    assert!(
                        received,
                        "{alg}: rank {p} sends block {tag} before receiving it"
                    );
                }
            }
        }
    }
}

#[test]
fn running_an_export_reproduces_the_schedule() {
    // The GOAL run (LogGOPSim's semantics) of an export — every rank's operations chained in
    // CPU order, the CPU's idle waits before sends as `calc` — finds herald's send times under
    // LogP, and herald's last busy instant under the port models.
    let models = [
        Model::from(logp(6, 2, 4)),
        Model::from(logp(10, 1, 1)),
        Model::from(logp(3, 0, 1)),
        Model::from(logp(5, 3, 2)),
        Model::from(logp(0, 2, 3)),
        Model::from(
            LogP::new(r(5), r(3), r(2), r(1))
                .unwrap()
                .with_bytes(8)
                .unwrap(),
        ),
        Model::from(Postal::new("5/2".parse().unwrap()).unwrap()),
        Model::from(OnePort),
    ];
    for model in &models {
        let timing = model.timing(model.time_base().unwrap()).unwrap();
        for n in [2u32, 8, 13, 32] {
            for m in [1u32, 3] {
                let mut algorithms = vec![
                    Algorithm::Binomial,
                    Algorithm::Binary,
                    Algorithm::Star,
                    Algorithm::Knomial { radix: 3 },
                    Algorithm::ScatterAllgather,
                    Algorithm::Chain,
                    Algorithm::Greedy,
                    Algorithm::Dtree { d: 3 },
                ];
                if m == 1 {
                    algorithms.push(Algorithm::Optimal);
                }
                match model {
                    Model::Postal(_) => {
                        algorithms.extend([Algorithm::Repeat, Algorithm::Pack, Algorithm::Pipeline])
                    }
                    Model::OnePort(_) => {
                        algorithms.extend([Algorithm::Optimal, Algorithm::Fibonacci { d: None }])
                    }
                    _ => {}
                }
                algorithms.dedup();
                for alg in algorithms {
                    for root in [0, n / 3] {
                        let s = match generate(&Request::broadcast(alg, n, m, root), model) {
                            Ok(s) => s,
                            Err(herald::schedule::ScheduleError::NotApplicable { .. }) => continue,
                            Err(e) => panic!("{alg}: {e}"),
                        };
                        let report = check(&s, model).unwrap();
                        assert!(report.legal());
                        let goal = s.to_goal(&timing, 1).unwrap();
                        let run = run_goal(&goal, model, s.collective()).unwrap();
                        let what = format!("{alg} n={n} m={m} root={root} under {model:?}");
                        assert_eq!(run.busy_until(), report.busy_until(), "{what}");
                        if timing.shared_cpu {
                            assert_eq!(run.schedule, s, "{what}");
                        } else {
                            // ports: a send herald holds back for its receiver's port may go
                            // earlier and queue there; the last busy instant is the same
                            let q = CheckOptions {
                                queue_arrivals: true,
                                ..CheckOptions::default()
                            };
                            let queued = herald::sim::check_with(&run.schedule, model, q).unwrap();
                            assert!(queued.legal(), "{what}: {:?}", queued.violations());
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn combining_exports_carry_the_combine_as_calc() {
    let model = Model::from(logp(6, 2, 4).with_combine(r(3)));
    let timing = model.timing(model.time_base().unwrap()).unwrap();
    for alg in [Algorithm::Reduce, Algorithm::Allreduce] {
        for n in [1u32, 2, 5, 9] {
            let s = generate(&Request::broadcast(alg, n, 1, 0), &model).unwrap();
            let report = check(&s, &model).unwrap();
            assert!(report.legal());
            let goal = s.to_goal(&timing, 1).unwrap();
            // every receive is followed by `calc 3`, which the next operation requires
            for rank in &goal.ranks {
                for (i, op) in rank.ops.iter().enumerate() {
                    if let GoalOp::Recv { .. } = op {
                        assert_eq!(rank.ops[i + 1], GoalOp::Calc { time: 3 });
                    }
                }
            }
            let run = run_goal(&goal, &model, s.collective()).unwrap();
            assert_eq!(run.schedule, s, "{alg} n = {n}");
            assert_eq!(run.busy_until(), report.busy_until(), "{alg} n = {n}");
            let c = check_goal(&goal, &model, Some(s.collective()), CheckOptions::default());
            let c = c.unwrap();
            assert!(c.report.legal());
            assert_eq!(c.report.makespan(), report.makespan());
        }
    }
    // all-to-all: tags are origin·items + item
    let s = generate(
        &Request::new(Algorithm::AllToAll, 5, Collective::AllToAll { items: 2 }),
        &model,
    )
    .unwrap();
    let goal = s.to_goal(&timing, 1).unwrap();
    let run = run_goal(&goal, &model, s.collective()).unwrap();
    assert_eq!(run.schedule, s);
}

#[test]
fn a_hand_written_reduction_runs_and_checks_as_computed() {
    // L = 6, o = 2, g = 4, combine c = 1. Ranks 1 and 2 send to 0 at once: both messages reach
    // 0 at o + L = 8; the first is received during [8, 10) and combined during [10, 11); the
    // second waits for one receive step (max(g, o) = 4) after 8 and the CPU: [12, 14), calc
    // [14, 15). LogGOPSim queues it; herald's rules call the overlap of the receives illegal.
    let model = Model::from(logp(6, 2, 4));
    let text = "// a reduction of three
num_ranks 3
rank 0 {
a: recv 1b from 1 tag 0
b: calc 1
c: recv 1b from 2 tag 0
d: calc 1
b requires a
c requires b
d requires c
}
rank 1 {
send 1b to 0 tag 0
}
rank 2 {
send 1b to 0 tag 0
}
";
    let goal = Goal::parse(text).unwrap();
    let c = Collective::Reduce { root: 0 };
    let run = run_goal(&goal, &model, c).unwrap();
    assert_eq!(run.finish, [15, 2, 2]);
    let checked = check_goal(&goal, &model, Some(c), CheckOptions::default()).unwrap();
    let first = checked.first_violation().unwrap();
    assert_eq!(
        (first.rule, first.at, first.processor),
        (Rule::RecvOverlap, 8, 0)
    );
    // rank 2 computing 4 first sends at 4: its message arrives at 12, after the first receive
    // and combine (8 + o + c = 11) and one receive step (12): legal, done at 12 + o + c = 15
    let text = text.replace(
        "rank 2 {\nsend 1b to 0 tag 0\n}",
        "rank 2 {\nx: calc 4\ny: send 1b to 0 tag 0\ny requires x\n}",
    );
    let goal = Goal::parse(&text).unwrap();
    let checked = check_goal(&goal, &model, Some(c), CheckOptions::default()).unwrap();
    assert!(checked.report.legal(), "{:?}", checked.report.violations());
    assert_eq!(checked.report.makespan(), 15);
    assert_eq!(checked.run.busy_until(), 15);
}

#[test]
fn queued_arrivals_make_loggopsim_s_chain_legal() {
    // issue 20: `chain --L 0 --o 2 --g 3 -n 3 -m 2` — the root sends at 0 and 3, rank 1 forwards
    // at 4 while block 1 (arriving at 5) waits until 6; LogGOPSim: 12.
    let model = Model::from(logp(0, 2, 3));
    let text = "num_ranks 3
rank 0 {
l1: send 1b to 1 tag 0
l2: send 1b to 1 tag 1
l2 requires l1
}
rank 1 {
l1: recv 1b from 0 tag 0
l2: send 1b to 2 tag 0
l3: recv 1b from 0 tag 1
l4: send 1b to 2 tag 1
l2 requires l1
l3 requires l2
l4 requires l3
}
rank 2 {
l1: recv 1b from 1 tag 0
l2: recv 1b from 1 tag 1
l2 requires l1
}
";
    let goal = Goal::parse(text).unwrap();
    let sends = |c: &herald::sim::GoalCheck| -> Vec<(u32, u32, u64)> {
        c.run
            .schedule
            .sends()
            .map(|s| (s.from, s.to, s.at))
            .collect()
    };
    let strict = check_goal(&goal, &model, None, CheckOptions::default()).unwrap();
    assert_eq!(sends(&strict), [(0, 1, 0), (0, 1, 3), (1, 2, 4), (1, 2, 8)]);
    assert_eq!(strict.run.busy_until(), 12);
    assert_eq!(
        strict.first_violation().map(|v| (v.rule, v.processor)),
        Some((Rule::CpuOverlap, 1))
    );
    let queued = CheckOptions {
        queue_arrivals: true,
        ..CheckOptions::default()
    };
    let q = check_goal(&goal, &model, None, queued).unwrap();
    assert!(q.report.legal(), "{:?}", q.report.violations());
    assert_eq!((q.report.makespan(), q.report.busy_until()), (12, 12));
}

#[test]
fn the_parser_takes_loggopsim_s_grammar() {
    let text = "/* a header
   over two lines */
// and a line comment
num_ranks 3
rank 0 {
start: send 4b to 1 tag 7 cpu 0 nic 0
send 4b to 2
calc 10 cpu 0
}
rank 1 {
x_1 : recv 4b from -1 tag -1
}
rank 2 {
recv 4b from 0
}
";
    let g = Goal::parse(text).unwrap();
    assert_eq!(
        g.ranks[0].ops,
        [
            GoalOp::Send {
                bytes: 4,
                peer: 1,
                tag: 7
            },
            GoalOp::Send {
                bytes: 4,
                peer: 2,
                tag: 0
            },
            GoalOp::Calc { time: 10 },
        ]
    );
    assert_eq!(
        g.ranks[1].ops,
        [GoalOp::Recv {
            bytes: 4,
            peer: None,
            tag: None
        }]
    );
    assert_eq!(
        g.ranks[2].ops,
        [GoalOp::Recv {
            bytes: 4,
            peer: Some(0),
            tag: Some(0)
        }]
    );
    // any-source receives match: the run finishes
    let model = Model::from(logp(6, 2, 4).with_bytes(4).unwrap());
    let c = Collective::Broadcast { root: 0, blocks: 8 };
    assert!(run_goal(&g, &model, c).is_ok());
}

#[test]
fn malformed_or_stuck_goal_is_a_typed_error() {
    for bad in [
        "",
        "rank 0 {\n}",
        "num_ranks 1\nrank 3 {\n}",
        "num_ranks 1\nrank 0 {\nl1: send 1 to 0 tag 0\n}",
        "num_ranks 1\nrank 0 {\nl1: send 1b to 0 tag 0\n",
        "num_ranks x",
        "num_ranks 2\nrank 0 {\nl1: send 1b to 5 tag 0\n}",
        "num_ranks 2\nrank 0 {\nl1: send 1b to 1 tag 0 cpu 1\n}",
        "num_ranks 2\nrank 0 {\nl2 requires l1\n}",
        "num_ranks 2\nrank 0 {\nl1: send 1b to 1\nl1: send 1b to 1\n}",
        "num_ranks 2\nrank 0 {\nl1: send 1b to 1 tag -1\n}",
        "num_ranks 2\n/* open",
    ] {
        assert!(Goal::parse(bad).is_err(), "{bad:?} parsed");
    }
    let model = Model::from(logp(6, 2, 4));
    let c = Collective::Broadcast { root: 0, blocks: 1 };
    // a receive nobody sends to
    let g = Goal::parse("num_ranks 2\nrank 1 {\nl1: recv 1b from 0 tag 0\n}\n").unwrap();
    assert!(matches!(
        run_goal(&g, &model, c),
        Err(GoalRunError::Stuck { rank: 1, op: 0, .. })
    ));
    // a message nobody receives
    let g = Goal::parse("num_ranks 2\nrank 0 {\nl1: send 1b to 1 tag 0\n}\n").unwrap();
    assert!(matches!(
        run_goal(&g, &model, c),
        Err(GoalRunError::Unreceived {
            from: 0,
            to: 1,
            tag: 0
        })
    ));
    // a cycle of dependencies
    let g =
        Goal::parse("num_ranks 1\nrank 0 {\na: calc 1\nb: calc 1\na requires b\nb requires a\n}\n")
            .unwrap();
    assert!(matches!(
        run_goal(&g, &model, c),
        Err(GoalRunError::Stuck { .. })
    ));
    // two ranks receive nothing: the root is ambiguous
    let g = Goal::parse(
        "num_ranks 3\nrank 0 {\nl1: send 1b to 1 tag 0\n}\nrank 1 {\nl1: recv 1b from 0 tag 0\n}\n",
    )
    .unwrap();
    assert!(goal_collective(&g).is_err());
    // the n = 1 export runs (LogGOPSim cannot run an empty program: a `calc 0` keeps it busy)
    let s = generate(&Request::broadcast(Algorithm::Binomial, 1, 1, 0), &model).unwrap();
    let timing = model.timing(model.time_base().unwrap()).unwrap();
    let goal = s.to_goal(&timing, 1).unwrap();
    assert_eq!(goal.ranks[0].ops, [GoalOp::Calc { time: 0 }]);
    assert_eq!(run_goal(&goal, &model, c).unwrap().busy_until(), 0);
    let _: Option<Schedule> = None;
}
