//! The model of ranks that share PUs (`oversubscribed_model`): where the profile's level cuts
//! messages at an eager limit (an MPI library's, `herald-mpi calibrate`), messages longer than
//! the cut ones are copied by their receiver (`LongMessages::ReceiverCopies`); herald's own
//! profiles cut nothing and keep LogGP's published rule. Expectations from the rule's formulas
//! (tests/loggp.rs derives them).

use herald::{
    check, generate,
    model::{LongMessages, MessagePieces},
    plan::oversubscribed_model,
    Algorithm, CostModel, Model, Profile, Request, TopologySource,
};

fn profile(pieces: Option<(u64, u64)>) -> Profile {
    let text = std::fs::read_to_string("tests/data/profile-2core.json").unwrap();
    let mut p = Profile::from_json_forced(&text).unwrap();
    let name = p.measured_levels().next().unwrap().name.clone();
    let level = p.levels.iter_mut().find(|l| l.name == name).unwrap();
    level.pieces = pieces.map(|(piece_bytes, upto_bytes)| MessagePieces {
        piece_bytes,
        upto_bytes,
        trials: vec![],
        whole_big_g_ns_per_byte: None,
    });
    p
}

fn rule_of(m: &Model) -> LongMessages {
    match m {
        Model::LogP(l) => l.long_messages(),
        other => panic!("not LogGP: {}", other.name()),
    }
}

#[test]
fn a_transport_that_cuts_messages_copies_longer_ones_at_the_receiver() {
    let h = TopologySource::from_options(Some("core:2 pu:1"), None)
        .unwrap()
        .load()
        .unwrap();
    let plain = oversubscribed_model(&profile(None), &h, 8).unwrap();
    assert_eq!(rule_of(&plain), LongMessages::Published);
    let mpi = oversubscribed_model(&profile(Some((4032, 64_512))), &h, 8).unwrap();
    assert_eq!(
        rule_of(&mpi),
        LongMessages::ReceiverCopies { above: 64_512 }
    );

    // A star of 8 ranks: under the published rule the root's 7 sends of a long message are
    // g + w apart, under the receiver's copies max(g, o) apart; the last leaf's data arrives
    // 6 such spacings after the first's. Messages up to the limit: published either way.
    let (Model::LogP(p), Model::LogP(r)) = (&plain, &mpi) else {
        unreachable!()
    };
    for bytes in [64_512u64, 1 << 20] {
        let (p, r) = (p.with_bytes(bytes).unwrap(), r.with_bytes(bytes).unwrap());
        let base = p.time_base().unwrap();
        let tp = p.timing(base).unwrap();
        let tr = r.timing(base).unwrap();
        let req = Request::broadcast(Algorithm::Star, 8, 1, 0);
        let span = |m: Model| {
            let report = check(&generate(&req, &m).unwrap(), &m).unwrap();
            assert!(report.legal(), "{:?}", report.violations());
            let c = report.completion().unwrap();
            c[7] - c[1]
        };
        assert_eq!(span(Model::from(p)), 6 * tp.send_gap.max(tp.send_busy));
        let spacing = if bytes > 64_512 {
            tr.send_gap.max(tr.send_busy)
        } else {
            tp.send_gap.max(tp.send_busy)
        };
        assert_eq!(span(Model::from(r)), 6 * spacing);
        if bytes > 64_512 {
            assert!(
                spacing < tp.send_gap,
                "the long message's bytes no longer space the root"
            );
        }
    }
}

/// A level whose calibration fitted a second `G` on the sizes sent whole above the pieces'
/// limit (`MessagePieces::whole_big_g_ns_per_byte`) prices those messages at it and the cut
/// ones at the level's `G`, both in the level's own model and in the model of ranks sharing
/// PUs: a message's one-way time is `L + 2o + (bytes − 1)·G` with the slope of its side.
#[test]
fn a_second_slope_prices_the_messages_sent_whole() {
    let mut profile = profile(Some((4032, 64_512)));
    let whole_g = 0.05; // ns per byte, a third of the level's G or less
    let d = serde_json::json!({ "median": whole_g, "p10": whole_g, "p90": whole_g, "samples": 1,
        "modes": [{ "center": whole_g, "p10": whole_g, "p90": whole_g, "share": 1.0,
        "samples": 1 }], "settled": true });
    let name = profile.measured_levels().next().unwrap().name.clone();
    let level = profile.levels.iter_mut().find(|l| l.name == name).unwrap();
    level.pieces.as_mut().unwrap().whole_big_g_ns_per_byte =
        Some(serde_json::from_value(d).unwrap());
    let level = profile.level(&name).unwrap().clone();
    let own = level.logp(herald::model::Pick::Dominant).unwrap();
    let twentieth = herald::Ratio::new(1, 20).unwrap();
    assert_eq!(own.whole_gap(), Some((64_512, twentieth)));
    assert!(
        own.big_g() > herald::Ratio::new(3, 20).unwrap(),
        "G {}",
        own.big_g()
    );

    let h = TopologySource::from_options(Some("core:2 pu:1"), None)
        .unwrap()
        .load()
        .unwrap();
    let Model::LogP(shared) = oversubscribed_model(&profile, &h, 8).unwrap() else {
        unreachable!()
    };
    assert_eq!(shared.whole_gap(), Some((64_512, twentieth)));
    for m in [own, shared] {
        for (bytes, slope) in [
            (64_512u64, m.big_g()),
            (64_513, twentieth),
            (1 << 20, twentieth),
        ] {
            let m = m.with_bytes(bytes).unwrap();
            let base = m.time_base().unwrap();
            let t = m.timing(base).unwrap();
            let tick = |r| base.ticks(r).unwrap();
            let want = tick(m.l()) + 2 * tick(m.o()) + (bytes - 1) * tick(slope);
            assert_eq!(t.latency, want, "{bytes} bytes");
        }
    }
}
