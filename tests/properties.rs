//! Property tests: every generated schedule is legal and complete under its model, replays
//! legally, survives JSON, and the checker rejects schedules corrupted on purpose.

mod common {
    pub(crate) mod models;
}

use common::models::classic_trees;
use herald::{
    check, generate,
    schedule::ScheduleBuilder,
    sim::{replay, Rule},
    Algorithm, Collective, CostModel, LogP, Model, Postal, Ratio, Request, Schedule,
};
use proptest::prelude::*;

/// A rational in `[lo, lo + span)` with a small denominator.
fn ratio(lo: u64, span: u64) -> impl Strategy<Value = Ratio> {
    (1u64..=4, 0u64..span * 4).prop_map(move |(den, k)| {
        Ratio::new(lo * den + k * den / 4, den).expect("small denominators")
    })
}

/// Postal or LogP models with random parameters.
fn model() -> impl Strategy<Value = Model> {
    prop_oneof![
        ratio(1, 12).prop_map(|l| Model::from(Postal::new(l).unwrap())),
        (ratio(0, 12), ratio(0, 4), ratio(0, 6), ratio(0, 2), 1u64..5).prop_filter_map(
            "L + 2o > 0",
            |(l, o, g, big_g, bytes)| {
                LogP::new(l, o, g, big_g)
                    .and_then(|m| m.with_bytes(bytes))
                    .ok()
                    .map(Model::from)
            }
        ),
    ]
}

/// Every algorithm that applies to `model` with `m` blocks.
fn algorithms(model: &Model, m: u32) -> Vec<Algorithm> {
    let mut v = classic_trees();
    if m == 1 {
        v.push(Algorithm::Optimal);
        v.push(match model {
            Model::Postal(_) => Algorithm::Bcast,
            Model::LogP(_) => Algorithm::Bp,
            _ => Algorithm::Optimal,
        });
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_generated_schedule_is_legal_and_complete(
        model in model(), n in 1u32..70, m in 1u32..5, root_seed in any::<u32>()
    ) {
        let root = root_seed % n;
        for alg in algorithms(&model, m) {
            let s = generate(&Request::broadcast(alg, n, m, root), &model).unwrap();
            prop_assert_eq!(s.collective(), Collective::Broadcast { root, blocks: m });
            let r = check(&s, &model).unwrap();
            prop_assert!(r.legal(), "{} under {:?}: {:?}", alg, model, &r.violations()[..r.violations().len().min(3)]);
            let lb = r.lower_bound().unwrap();
            prop_assert!(r.makespan() >= lb, "{} beats the lower bound", alg);
            let done = r.completion().unwrap();
            prop_assert!(done.iter().all(|&t| t <= r.makespan()));
            prop_assert_eq!(done[root as usize], 0);
            // Every processor receives every block at least once: sends ≥ (n − 1)·m.
            prop_assert!(s.len() as u64 >= u64::from(n - 1) * u64::from(m));
            if matches!(alg, Algorithm::Optimal | Algorithm::Bcast | Algorithm::Bp) {
                prop_assert_eq!(r.makespan(), lb, "the optimal tree meets the bound");
            }
            // The runtime's execution order re-timed as early as possible is legal too.
            let again = replay(&s, &model).unwrap();
            let r2 = check(&again, &model).unwrap();
            prop_assert!(r2.legal(), "replay of {} illegal: {:?}", alg, r2.violations().first());
        }
    }

    #[test]
    fn json_round_trip_preserves_the_schedule(model in model(), n in 1u32..40, m in 1u32..4) {
        for alg in algorithms(&model, m) {
            let s = generate(&Request::broadcast(alg, n, m, 0), &model).unwrap();
            let back = Schedule::from_json(&s.to_json().to_string()).unwrap();
            let base = s.base().refine(back.base().ticks_per_unit()).unwrap();
            prop_assert_eq!(s.rebased(base).unwrap(), back.rebased(base).unwrap());
        }
    }

    #[test]
    fn corrupted_schedules_are_rejected(model in model(), n in 3u32..50, victim_seed in any::<u32>()) {
        let s = generate(&Request::broadcast(Algorithm::Binomial, n, 1, 0), &model).unwrap();
        let timing = model.timing(s.base()).unwrap();
        let sends = s.sends_by_time();
        // 1. A processor never reached: drop every send to the victim.
        let victim = 1 + victim_seed % (n - 1);
        let r = check(&rebuild(&s, |b| for x in &sends { if x.to != victim { b.push(x.at, x.from, x.to, x.what) } }), &model).unwrap();
        prop_assert!(r.breaks(Rule::Incomplete));
        // 2. A forward before the block arrived: move a non-root sender's first send earlier.
        if let Some(f) = sends.iter().find(|x| x.from != 0) {
            let r = check(&rebuild(&s, |b| for x in &sends {
                let at = if x == f { x.at.saturating_sub(1) } else { x.at };
                b.push(at, x.from, x.to, x.what)
            }), &model).unwrap();
            prop_assert!(r.breaks(Rule::Causality));
        }
        // 3. Two sends overlapping the sender's busy interval (when sends take time).
        if timing.send_busy > 0 {
            let first_two: Vec<_> = sends.iter().filter(|x| x.from == 0).take(2).collect();
            if first_two.len() == 2 {
                let r = check(&rebuild(&s, |b| for x in &sends {
                    let at = if x == first_two[1] { first_two[0].at + timing.send_busy - 1 } else { x.at };
                    b.push(at, x.from, x.to, x.what)
                }), &model).unwrap();
                prop_assert!(r.breaks(Rule::SendOverlap));
            }
        }
        // 4. A send overlapping a receive overhead (LogP, o > 0): a processor sends exactly
        //    when its own receive overhead is running. (With o = 0 but w > 0 the receiver is
        //    busy, yet a send of zero length overlaps nothing.)
        if timing.shared_cpu && timing.recv_busy > 0 && timing.send_busy > 0 {
            let x = sends.iter().find(|x| x.from == 0 && x.to == 1).copied().unwrap();
            let during = x.at + timing.latency - 1; // inside 1's receive overhead
            let r = check(&rebuild(&s, |b| {
                for y in &sends { b.push(y.at, y.from, y.to, y.what) }
                b.push(during, 1, 2, 0);
            }), &model).unwrap();
            prop_assert!(r.breaks(Rule::CpuOverlap) || r.breaks(Rule::Causality));
            prop_assert!(r.breaks(Rule::CpuOverlap));
        }
    }
}

/// A new schedule with the same problem, filled by `f`.
fn rebuild(s: &Schedule, f: impl FnOnce(&mut ScheduleBuilder)) -> Schedule {
    let mut b = Schedule::builder(s.n(), s.collective(), s.base()).unwrap();
    f(&mut b);
    b.build().unwrap()
}

#[test]
fn receive_gap_and_capacity_are_enforced() {
    // LogP L = 6, o = 1, g = 4: capacity ⌈6/4⌉ = 2.
    let model = Model::from(
        LogP::new(
            Ratio::integer(6),
            Ratio::ONE,
            Ratio::integer(4),
            Ratio::ZERO,
        )
        .unwrap(),
    );
    let c = Collective::Broadcast { root: 0, blocks: 1 };
    // Two receives at processor 3 only 1 apart: recv-gap.
    let mut b = Schedule::builder(4, c, model.time_base().unwrap()).unwrap();
    b.push(0, 0, 1, 0);
    b.push(4, 0, 2, 0);
    b.push(8, 1, 3, 0);
    b.push(4 + 5, 2, 3, 0);
    let r = check(&b.build().unwrap(), &model).unwrap();
    assert!(r.breaks(Rule::RecvGap), "{:?}", r.violations());
    // L = 4, o = 0, g = 4: capacity ⌈4/4⌉ = 1. Two sends 1 apart break the gap, and both are
    // in transit during [1, 4).
    let model = Model::from(
        LogP::new(
            Ratio::integer(4),
            Ratio::ZERO,
            Ratio::integer(4),
            Ratio::ZERO,
        )
        .unwrap(),
    );
    let mut b = Schedule::builder(3, c, model.time_base().unwrap()).unwrap();
    b.push(0, 0, 1, 0);
    b.push(1, 0, 2, 0);
    let r = check(&b.build().unwrap(), &model).unwrap();
    assert!(r.breaks(Rule::SendGap));
    assert!(r.breaks(Rule::CapacityOut));
    assert!(
        !r.breaks(Rule::SendOverlap),
        "o = 0: sends take no CPU time"
    );
}

#[test]
fn bad_sends_are_violations_not_panics() {
    let model = Model::from(Postal::new(Ratio::integer(2)).unwrap());
    let c = Collective::Broadcast { root: 0, blocks: 2 };
    let mut b = Schedule::builder(3, c, model.time_base().unwrap()).unwrap();
    b.push(0, 0, 7, 0); // no such processor
    b.push(1, 0, 0, 0); // to itself
    b.push(2, 0, 1, 9); // no such block
    let r = check(&b.build().unwrap(), &model).unwrap();
    for rule in [
        Rule::BadReceiver,
        Rule::SelfSend,
        Rule::BadPayload,
        Rule::Incomplete,
    ] {
        assert!(r.breaks(rule), "{rule} not reported: {:?}", r.violations());
    }
    // Malformed JSON is a typed error.
    assert!(Schedule::from_json("{").is_err());
    assert!(Schedule::from_json(r#"{"n": 2, "collective": {"kind": "broadcast", "root": 0, "blocks": 1}, "sends": [{"at": "-1", "from": 0, "to": 1}]}"#).is_err());
    assert!(Schedule::from_json(
        r#"{"n": 2, "collective": {"kind": "broadcast", "root": 5, "blocks": 1}, "sends": []}"#
    )
    .is_err());
    assert!(Schedule::from_json(r#"{"n": 2, "collective": {"kind": "broadcast", "root": 0, "blocks": 1}, "sends": [{"at": 0, "from": 4, "to": 1}]}"#).is_err());
}

#[test]
fn combining_collectives_count_contributions() {
    let model = Model::from(Postal::new(Ratio::ONE).unwrap());
    let base = model.time_base().unwrap();
    // Reduce to 0 over a binomial tree of 4: 1→0 and 3→2 at 0, 2→0 at 1.
    let mut b = Schedule::builder(4, Collective::Reduce { root: 0 }, base).unwrap();
    b.push(0, 1, 0, 0);
    b.push(0, 3, 2, 0);
    b.push(1, 2, 0, 0);
    let r = check(&b.build().unwrap(), &model).unwrap();
    assert!(r.legal(), "{:?}", r.violations());
    assert_eq!(r.makespan(), 2);
    // Allreduce by recursive doubling on 4 is legal; doubling the first exchange double counts.
    let mut b = Schedule::builder(4, Collective::Allreduce, base).unwrap();
    for (at, pairs) in [
        (0, [(0, 1), (1, 0), (2, 3), (3, 2)]),
        (1, [(0, 2), (2, 0), (1, 3), (3, 1)]),
    ] {
        for (f, t) in pairs {
            b.push(at, f, t, 0);
        }
    }
    let good = b.clone().build().unwrap();
    assert!(check(&good, &model).unwrap().legal());
    b.push(2, 1, 0, 0);
    let r = check(&b.build().unwrap(), &model).unwrap();
    assert!(r.breaks(Rule::DoubleCount));
    // Prefix: 0→1 gives 1 {0,1}; 1→2 at 1 gives 2 {0,1,2}; 0→3 would give 3 only {0,3}.
    let mut b = Schedule::builder(4, Collective::Prefix, base).unwrap();
    b.push(0, 0, 1, 0);
    b.push(1, 1, 2, 0);
    b.push(2, 2, 3, 0);
    assert!(check(&b.clone().build().unwrap(), &model).unwrap().legal());
    b.push(3, 3, 0, 0);
    let r = check(&b.build().unwrap(), &model).unwrap();
    assert!(r.breaks(Rule::ExtraContribution));
}
