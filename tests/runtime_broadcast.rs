//! Schedules executed for real: every generator on the runtime, byte for byte; lines per edge;
//! thousands of repeated broadcasts with changing roots, sizes and schedules. Every test runs
//! under a watchdog.

mod common {
    pub(crate) mod watch;
}

use common::watch::{payload, watchdog};
use herald::{
    generate, model::OnePort, runtime::Blocking, Algorithm, LogP, Model, Network, Postal, Program,
    Ratio, Request, Team,
};

/// Every (model, algorithm) pair with its block count.
fn cases() -> Vec<(Model, Algorithm, u32)> {
    use Algorithm::{
        Binary, Binomial, Chain, Dtree, Fibonacci, Greedy, Knomial, Optimal, Pack, Pipeline,
        Repeat, ScatterAllgather, Star,
    };
    let postal = Model::from(Postal::new("5/2".parse().unwrap()).unwrap());
    let r = Ratio::integer;
    let logp = Model::from(LogP::new(r(6), r(2), r(4), r(0)).unwrap());
    let oneport = Model::from(OnePort);
    let trees = [
        Binomial,
        Binary,
        Knomial { radix: 3 },
        Chain,
        Star,
        ScatterAllgather,
        Dtree { d: 3 },
    ];
    let mut v = vec![];
    for (model, m) in [(&postal, 1), (&postal, 3), (&logp, 1), (&logp, 2)] {
        v.extend(trees.map(|alg| (model.clone(), alg, m)));
    }
    v.push((postal.clone(), Optimal, 1));
    v.push((logp.clone(), Optimal, 1));
    v.extend([Repeat, Pack, Pipeline, Greedy].map(|alg| (postal.clone(), alg, 4)));
    v.push((oneport.clone(), Optimal, 5));
    v.push((oneport.clone(), Fibonacci { d: Some(3) }, 2));
    v
}

#[test]
fn every_generator_moves_every_byte() {
    watchdog(|| {
        for n in [2u32, 3, 5, 8, 16, 33, 64] {
            let mut team = Team::new(n as usize).unwrap();
            for (i, (model, alg, m)) in cases().into_iter().enumerate() {
                let root = (i as u32 * 7) % n;
                let s = match generate(&Request::broadcast(alg, n, m, root), &model) {
                    Ok(s) => s,
                    // e.g. generalized Fibonacci trees need enough processors for d
                    Err(herald::schedule::ScheduleError::NotApplicable { .. }) => continue,
                    Err(e) => panic!("{alg}: {e}"),
                };
                let mut net = Network::new(Program::compile(&s).unwrap(), 8);
                let bytes = 1 + (i * 397) % 3000;
                let data = payload(bytes, (n as u64) << 32 | i as u64);
                let mut bufs: Vec<Vec<u8>> = (0..n).map(|_| vec![0u8; bytes]).collect();
                bufs[root as usize].copy_from_slice(&data);
                net.broadcast(&mut team, &mut bufs).unwrap();
                for (r, b) in bufs.iter().enumerate() {
                    assert!(
                        b == &data,
                        "{alg} n={n} m={m} root={root}: rank {r} differs"
                    );
                }
                // No shortcut through shared memory: each edge carried exactly its blocks' lines.
                let blocking = Blocking::new(bytes, m);
                let program = net.program();
                let mut expected: Vec<((u32, u32), u64)> = vec![];
                for to in 0..n {
                    for (from, blocks) in &program.rank(to).incoming {
                        let lines = blocks.iter().map(|&b| blocking.lines(b) as u64).sum();
                        expected.push(((*from, to), lines));
                    }
                }
                expected.sort_unstable();
                assert_eq!(net.lines_per_edge(), expected, "{alg} n={n}");
                // and every edge the schedule uses, and no other, has a channel
                let mut used: Vec<(u32, u32)> = s.sends().map(|x| (x.from, x.to)).collect();
                used.sort_unstable();
                used.dedup();
                let edges: Vec<(u32, u32)> = expected.iter().map(|e| e.0).collect();
                assert_eq!(edges, used);
            }
        }
    });
}

#[test]
fn thousands_of_broadcasts_with_changing_roots_sizes_and_schedules() {
    watchdog(|| {
        let n = 6u32;
        let postal = Model::from(Postal::new("2".parse().unwrap()).unwrap());
        let mut team = Team::new(n as usize).unwrap();
        let mut nets: Vec<(u32, Network)> = vec![];
        for (k, alg) in [
            Algorithm::Binomial,
            Algorithm::Chain,
            Algorithm::Star,
            Algorithm::Binary,
        ]
        .into_iter()
        .enumerate()
        {
            for root in 0..n {
                let m = 1 + (k as u32 + root) % 3;
                let s = generate(&Request::broadcast(alg, n, m, root), &postal).unwrap();
                nets.push((root, Network::new(Program::compile(&s).unwrap(), 4)));
            }
        }
        let mut checksum_sent = 0u64;
        let mut checksum_got = 0u64;
        // 4,000 calls: every one of the 24 networks about 170 times (a team run each, so on
        // a loaded 2-CPU machine this takes minutes).
        for i in 0..4_000usize {
            let (root, net) = &mut nets[(i * 13) % 24];
            let bytes = 1 + (i * 31) % 700;
            let data = payload(bytes, i as u64);
            let mut bufs: Vec<Vec<u8>> = (0..n).map(|_| vec![0u8; bytes]).collect();
            bufs[*root as usize].copy_from_slice(&data);
            net.broadcast(&mut team, &mut bufs).unwrap();
            let sum = |b: &[u8]| {
                b.iter()
                    .fold(0u64, |a, &x| a.wrapping_mul(31).wrapping_add(u64::from(x)))
            };
            checksum_sent = checksum_sent.wrapping_add(sum(&data).wrapping_mul(u64::from(n)));
            for b in &bufs {
                checksum_got = checksum_got.wrapping_add(sum(b));
            }
            assert!(bufs.iter().all(|b| b == &data), "iteration {i}");
        }
        assert_eq!(checksum_got, checksum_sent);
    });
}

#[test]
fn compile_rejects_what_cannot_run() {
    let postal = Model::from(Postal::new("2".parse().unwrap()).unwrap());
    let mut b = herald::Schedule::builder(
        3,
        herald::Collective::Broadcast { root: 0, blocks: 1 },
        herald::time::TimeBase::UNIT,
    )
    .unwrap();
    b.push(0, 0, 1, 0);
    b.push(0, 1, 2, 0); // forwards at the very time it would first be sent the block
    let err = Program::compile(&b.build().unwrap()).unwrap_err();
    assert!(
        matches!(
            err,
            herald::runtime::ProgramError::Causality { processor: 1, .. }
        ),
        "{err}"
    );
    let mut b = herald::Schedule::builder(
        3,
        herald::Collective::Broadcast { root: 0, blocks: 1 },
        herald::time::TimeBase::UNIT,
    )
    .unwrap();
    b.push(0, 0, 1, 0);
    let err = Program::compile(&b.build().unwrap()).unwrap_err();
    assert!(matches!(
        err,
        herald::runtime::ProgramError::Incomplete { processor: 2, .. }
    ));
    let s = generate(&Request::broadcast(Algorithm::Reduce, 4, 1, 0), &postal).unwrap();
    assert!(matches!(
        Program::compile(&s),
        Err(herald::runtime::ProgramError::Collective("reduce"))
    ));
}

#[test]
fn every_ring_capacity_streams_large_blocks() {
    // Receivers read in bursts (they wait for a line further ahead); with any ring capacity a
    // rank must still get every line, never wait for a line its producer cannot write.
    watchdog(|| {
        let model = Model::from(OnePort);
        let schedules = [
            (Algorithm::Chain, 1),
            (Algorithm::Optimal, 3),
            (Algorithm::Binomial, 2),
        ];
        let mut team = Team::new(5).unwrap();
        for capacity in 1..=9 {
            for &(alg, m) in &schedules {
                let s = generate(&Request::broadcast(alg, 5, m, 1), &model).unwrap();
                let mut net = Network::new(Program::compile(&s).unwrap(), capacity);
                let want = payload(20_000 + capacity, capacity as u64);
                let mut bufs = vec![vec![0u8; want.len()]; 5];
                bufs[1].copy_from_slice(&want);
                net.broadcast(&mut team, &mut bufs).unwrap();
                for (r, b) in bufs.iter().enumerate() {
                    assert!(*b == want, "{alg} m={m} capacity={capacity} rank {r}");
                }
            }
        }
    });
}
