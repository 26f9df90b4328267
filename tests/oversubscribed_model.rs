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
