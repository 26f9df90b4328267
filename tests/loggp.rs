//! LogGP's long messages as published (Alexandrov, Ionescu, Schauser & Scheiman; simulated so by
//! LogGOPSim): a message of `s` bytes keeps its sender's next message `g + (s − 1)·G` away and
//! its receiver's CPU busy `o + (s − 1)·G` from the first byte's arrival; the data is there
//! `o + (s − 1)·G + L + o` after the send starts. herald's former rule (`LongMessages::MaxGap`:
//! `max(g, (s − 1)·G)` apart, receiver busy `o`) stays selectable. Every expectation below is
//! computed from these formulas.

use herald::{
    check, generate, model::LongMessages, sim::Rule, Algorithm, Collective, CostModel, LogP, Model,
    Ratio, Request, Schedule,
};

fn r(x: u64) -> Ratio {
    Ratio::integer(x)
}

fn logp(l: u64, o: u64, g: u64, big_g: u64, bytes: u64, rule: LongMessages) -> Model {
    Model::from(
        LogP::new(r(l), r(o), r(g), r(big_g))
            .unwrap()
            .with_bytes(bytes)
            .unwrap()
            .with_long_messages(rule),
    )
}

#[test]
fn issue_20_star_example() {
    // star n = 3, L = 5, o = 3, g = 2, G = 1, 8-byte messages: w = (8 − 1)·1 = 7.
    let (l, o, g, w) = (5u64, 3u64, 2u64, 7u64);
    // published: the second send starts g + w = 9 after the first; its data arrives o + w + L + o
    // after that
    let published = (g + w) + (o + w + l + o);
    assert_eq!(published, 27); // LogGOPSim's figure in the issue
                               // herald's former rule: sends max(g, w) = 7 apart
    let max_gap = g.max(w) + (o + w + l + o);
    assert_eq!(max_gap, 25);
    for (rule, expected) in [
        (LongMessages::Published, published),
        (LongMessages::MaxGap, max_gap),
    ] {
        let model = logp(l, o, g, 1, 8, rule);
        let s = generate(&Request::broadcast(Algorithm::Star, 3, 1, 0), &model).unwrap();
        let report = check(&s, &model).unwrap();
        assert!(report.legal());
        assert_eq!(report.makespan(), expected, "{rule:?}");
        assert_eq!(report.busy_until(), expected, "{rule:?}");
    }
    assert_eq!(LongMessages::default(), LongMessages::Published);
}

/// Over a grid of `L, o, g, G` and sizes: the k-th leaf (k = 1 … 5) of a 6-rank star under
/// `rule` holds the data at `(k − 1)·max(spacing, o) + o + w + L + o`, with `w = (s − 1)·G` and
/// `spacing(g, w, s)` the root's distance between sends the rule asks for.
fn star_arrivals_match(rule: LongMessages, spacing: impl Fn(u64, u64, u64) -> u64) {
    for l in [0u64, 2, 7] {
        for o in [0u64, 1, 4] {
            for g in [0u64, 1, 3] {
                for big_g in [0u64, 1, 2] {
                    for bytes in [1u64, 2, 9] {
                        if l + o == 0 {
                            continue;
                        }
                        let w = (bytes - 1) * big_g;
                        let model = logp(l, o, g, big_g, bytes, rule);
                        let n = 6;
                        let s = generate(&Request::broadcast(Algorithm::Star, n, 1, 0), &model)
                            .unwrap();
                        let report = check(&s, &model).unwrap();
                        assert!(report.legal(), "{:?}", report.violations());
                        let completion = report.completion().unwrap();
                        let step = spacing(g, w, bytes).max(o);
                        for k in 1..n as u64 {
                            let expected = (k - 1) * step + o + w + l + o;
                            assert_eq!(
                                completion[k as usize], expected,
                                "{rule} L={l} o={o} g={g} G={big_g} s={bytes} k={k}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn star_arrivals_follow_the_published_formula() {
    // the root's sends g + w apart
    star_arrivals_match(LongMessages::Published, |g, w, _| g + w);
}

/// Blocks 0 and 1 from rank 0 to rank 1 (at 0 and `second`), and rank 1's forwards to rank 2
/// (`(at, block)`).
fn two_sends(model: &Model, second: u64, forwards: &[(u64, u32)]) -> herald::Report {
    let base = model.time_base().unwrap();
    let c = Collective::Broadcast { root: 0, blocks: 2 };
    let mut b = Schedule::builder(3, c, base).unwrap();
    b.push(0, 0, 1, 0);
    b.push(second, 0, 1, 1);
    for &(at, what) in forwards {
        b.push(at, 1, 2, what);
    }
    check(&b.build().unwrap(), model).unwrap()
}

#[test]
fn the_gap_and_the_receiver_s_busy_time_include_the_bytes() {
    // L = 4, o = 2, g = 3, G = 1, 6 bytes: w = 5; next message g + w = 8 later; the receiver is
    // busy from o + L = 6 to o + w + L + o = 13 after a send's start.
    let model = logp(4, 2, 3, 1, 6, LongMessages::Published);
    let t = model.timing(model.time_base().unwrap()).unwrap();
    assert_eq!(
        (t.send_gap, t.recv_gap, t.recv_busy, t.latency),
        (8, 8, 7, 13)
    );
    assert!(two_sends(&model, 7, &[]).breaks(Rule::SendGap));
    // rank 1 forwards block 0 (held from 13) at 14 while block 1 (sent at 8) is being received
    // during [14, 21): the published rule forbids it
    let busy = two_sends(&model, 8, &[(14, 0), (22, 1)]);
    assert!(busy.breaks(Rule::CpuOverlap), "{:?}", busy.violations());
    // forwarding at 21, when the second receive ends, and block 1 a gap later is legal
    let ok = two_sends(&model, 8, &[(21, 0), (29, 1)]);
    assert!(ok.legal(), "{:?}", ok.violations());
    assert_eq!(ok.makespan(), 29 + 13);

    // herald's former rule: the gap is max(g, w) = 5, the receive overhead the last o = 2
    let old = logp(4, 2, 3, 1, 6, LongMessages::MaxGap);
    let t = old.timing(old.time_base().unwrap()).unwrap();
    assert_eq!((t.send_gap, t.recv_busy, t.latency), (5, 2, 13));
    assert!(two_sends(&old, 5, &[]).breaks(Rule::Incomplete));
    assert!(!two_sends(&old, 5, &[]).breaks(Rule::SendGap));
    // block 1 sent at 5 is received during [16, 18): forwarding block 0 at 14 is legal there
    let ok = two_sends(&old, 5, &[(14, 0), (19, 1)]);
    assert!(ok.legal(), "{:?}", ok.violations());
}

#[test]
fn long_message_rules_parse_and_agree_for_short_messages() {
    assert_eq!(
        "published".parse::<LongMessages>().unwrap(),
        LongMessages::Published
    );
    assert_eq!(
        "max-gap".parse::<LongMessages>().unwrap(),
        LongMessages::MaxGap
    );
    assert!("fast".parse::<LongMessages>().is_err());
    // one-byte messages, or G = 0: both rules are LogP's
    for (big_g, bytes) in [(3u64, 1u64), (0, 64)] {
        let a = logp(6, 2, 4, big_g, bytes, LongMessages::Published);
        let b = logp(6, 2, 4, big_g, bytes, LongMessages::MaxGap);
        let base = a.time_base().unwrap();
        assert_eq!(a.timing(base).unwrap(), b.timing(base).unwrap());
    }
}

#[test]
fn receiver_copies_star_arrivals_follow_its_formula() {
    // The receiver copies: the root's sends of more than `above` bytes only g apart (each leaf
    // busy o + w from its first byte's arrival); at most `above` bytes: the published g + w.
    for above in [0u64, 8] {
        let rule = LongMessages::ReceiverCopies { above };
        star_arrivals_match(rule, |g, w, bytes| if bytes > above { g } else { g + w });
    }
}

#[test]
fn receiver_copies_spaces_the_sender_by_g_and_the_receiver_by_g_plus_w() {
    // L = 4, o = 2, g = 3, G = 1, 6 bytes: w = 5. The sender's next message g = 3 later, the
    // receiver's next receive g + w = 8 later, busy o + w = 7 from the first byte's arrival.
    let model = logp(4, 2, 3, 1, 6, LongMessages::ReceiverCopies { above: 0 });
    let t = model.timing(model.time_base().unwrap()).unwrap();
    assert_eq!(
        (t.send_gap, t.recv_gap, t.recv_busy, t.latency),
        (3, 8, 7, 13)
    );
    // two messages to one receiver 3 apart: the sender may, the receiver may not
    let close = two_sends(&model, 3, &[(21, 0), (29, 1)]);
    assert!(!close.breaks(Rule::SendGap), "{:?}", close.violations());
    assert!(!close.legal());
    // 8 apart, as the published rule asks: legal, the same makespan as under it
    let ok = two_sends(&model, 8, &[(21, 0), (29, 1)]);
    assert!(ok.legal(), "{:?}", ok.violations());
    assert_eq!(ok.makespan(), 29 + 13);
    // 6-byte messages at or under the limit: the published timing
    let under = logp(4, 2, 3, 1, 6, LongMessages::ReceiverCopies { above: 6 });
    let published = logp(4, 2, 3, 1, 6, LongMessages::Published);
    let base = under.time_base().unwrap();
    assert_eq!(under.timing(base).unwrap(), published.timing(base).unwrap());
}

#[test]
fn receiver_copies_parses_with_its_limit() {
    assert_eq!(
        "receiver-copies".parse::<LongMessages>().unwrap(),
        LongMessages::ReceiverCopies { above: 0 }
    );
    let r = "receiver-copies:4032".parse::<LongMessages>().unwrap();
    assert_eq!(r, LongMessages::ReceiverCopies { above: 4032 });
    assert_eq!(r.to_string(), "receiver-copies:4032");
    assert!("receiver-copies:x".parse::<LongMessages>().is_err());
    assert!("receiver-copies:".parse::<LongMessages>().is_err());
}
