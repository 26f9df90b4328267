//! The generators that compute send times in closed form instead of placing them:
//!
//! * the chain of `m` blocks — its makespan is the least over every timing of its send order,
//!   found here by brute force over each relay's CPU order (every interleaving of its receives
//!   and sends), each solved exactly as a system of difference constraints and judged legal by
//!   the checker; and issue 20's example, computed from the parameters;
//! * one block down a tree — the same sends, at the same times, as the general placement
//!   (`place`) of the tree's send orders, written out here independently.

mod common {
    pub(crate) mod models;
}

use common::models::{logp_models, r};
use herald::{
    check, generate,
    model::{KPort, OnePort},
    schedule::{place, Orders},
    Algorithm, Collective, CostModel, LogP, Model, Postal, Request, Schedule,
};
use proptest::prelude::*;

fn logp(l: u64, o: u64, g: u64, big_g: u64, bytes: u64) -> Model {
    Model::from(
        LogP::new(r(l), r(o), r(g), r(big_g))
            .unwrap()
            .with_bytes(bytes)
            .unwrap(),
    )
}

#[test]
fn issue_20_chain_example() {
    // L = 5, o = 3, g = 2 (g < 2o), n = 1024, m = 8. Each hop takes L + 2o = 11; a relay receives
    // and forwards every block on one CPU, so blocks follow each other 2o = 6 apart:
    // (n − 1)(L + 2o) + (m − 1)·2o.
    let (l, o, n, m) = (5u64, 3u64, 1024u64, 8u64);
    let expected = (n - 1) * (l + 2 * o) + (m - 1) * (2 * o);
    assert_eq!(expected, 11_295); // the issue's figure
    let model = logp(5, 3, 2, 0, 1);
    let s = generate(&Request::broadcast(Algorithm::Chain, 1024, 8, 0), &model).unwrap();
    let report = check(&s, &model).unwrap();
    assert!(report.legal(), "{:?}", report.violations().first());
    assert_eq!(report.makespan(), expected);
    // no redundant sends: the last CPU activity is the last reception's end
    assert_eq!(report.busy_until(), expected);
    // the general placement of the same send orders is far slower here (the root's eager
    // second block lands on the relay's CPU before the relay can forward the first)
    let t = model.timing(model.time_base().unwrap()).unwrap();
    let orders = Orders::from_fn(1024, |v, out| {
        if v < 1023 {
            out.extend((0..8).map(|b| (v + 1, b)))
        }
    })
    .unwrap();
    let c = Collective::Broadcast { root: 0, blocks: 8 };
    let placed = check(&place(1024, c, &orders, &t).unwrap(), &model).unwrap();
    assert!(placed.legal() && placed.makespan() > 2 * expected);

    // issue 20's `chain --L 0 --o 2 --g 3 -n 3 -m 2`: LogGOPSim's 12. Each hop 2o = 4; the relay
    // receives and forwards each block, 2o = 4 apart (above g = 3): 2·4 + 4.
    let model = logp(0, 2, 3, 0, 1);
    let s = generate(&Request::broadcast(Algorithm::Chain, 3, 2, 0), &model).unwrap();
    let report = check(&s, &model).unwrap();
    assert!(report.legal());
    assert_eq!((report.makespan(), report.busy_until()), (12, 12));
}

/// Every interleaving of `m` receives and `m` sends on a relay with send `b` after receive `b`:
/// `true` = receive.
fn interleavings(m: usize) -> Vec<Vec<bool>> {
    fn go(m: usize, recv: usize, sent: usize, cur: &mut Vec<bool>, out: &mut Vec<Vec<bool>>) {
        if recv == m && sent == m {
            out.push(cur.clone());
            return;
        }
        if recv < m {
            cur.push(true);
            go(m, recv + 1, sent, cur, out);
            cur.pop();
        }
        if sent < recv {
            cur.push(false);
            go(m, recv, sent + 1, cur, out);
            cur.pop();
        }
    }
    let mut out = vec![];
    go(m, 0, 0, &mut vec![], &mut out);
    out
}

/// The earliest chain schedule for the given relay CPU orders: start times `s[v][b]` (sender `v`,
/// block `b`) satisfying every rule as a difference constraint, by relaxation to the fixpoint.
fn earliest(n: usize, m: usize, model: &Model, orders: &[Vec<bool>]) -> Schedule {
    let t = model.timing(model.time_base().unwrap()).unwrap();
    let (d, sb, rb) = (t.latency, t.send_busy, t.recv_busy);
    let mut s = vec![vec![0u64; m]; n - 1];
    loop {
        let mut changed = false;
        let mut raise = |x: &mut u64, v: u64| {
            if v > *x {
                *x = v;
                changed = true;
            }
        };
        for v in 0..n - 1 {
            for b in 0..m {
                let mut need = 0;
                if v > 0 {
                    need = need.max(s[v - 1][b] + d); // holds the block
                }
                if b > 0 {
                    // the sender's gap and busy time; the receiver's gap and busy time
                    need = need.max(s[v][b - 1] + t.send_step().max(t.recv_step()));
                }
                raise(&mut s[v][b], need);
            }
        }
        if t.shared_cpu {
            // relay v's CPU order: each operation starts when the previous one ends
            for v in 1..n - 1 {
                let mut prev_end: Option<u64> = None;
                let (mut nr, mut ns) = (0, 0);
                for &is_recv in &orders[v - 1] {
                    if is_recv {
                        // receive of block nr: [s[v−1][nr] + d − rb, s[v−1][nr] + d)
                        if let Some(e) = prev_end {
                            let need = (e + rb).saturating_sub(d);
                            raise(&mut s[v - 1][nr], need);
                        }
                        prev_end = Some(s[v - 1][nr] + d);
                        nr += 1;
                    } else {
                        if let Some(e) = prev_end {
                            raise(&mut s[v][ns], e);
                        }
                        prev_end = Some(s[v][ns] + sb);
                        ns += 1;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut b = Schedule::builder(
        n as u32,
        Collective::Broadcast {
            root: 0,
            blocks: m as u32,
        },
        t.base,
    )
    .unwrap();
    for (v, row) in s.iter().enumerate() {
        for (k, &at) in row.iter().enumerate() {
            b.push(at, v as u32, v as u32 + 1, k as u32);
        }
    }
    b.build().unwrap()
}

/// The least legal makespan over every relay CPU order.
fn brute_force_chain(n: usize, m: usize, model: &Model) -> u64 {
    let t = model.timing(model.time_base().unwrap()).unwrap();
    let relays = if t.shared_cpu { n.saturating_sub(2) } else { 0 };
    let choices = interleavings(m);
    let mut best = u64::MAX;
    let mut pick = vec![0usize; relays];
    loop {
        let orders: Vec<Vec<bool>> = pick.iter().map(|&i| choices[i].clone()).collect();
        let s = earliest(n, m, model, &orders);
        let report = check(&s, model).unwrap();
        if report.legal() {
            best = best.min(report.makespan());
        }
        // next combination
        let mut k = 0;
        while k < relays && pick[k] + 1 == choices.len() {
            pick[k] = 0;
            k += 1;
        }
        if k == relays {
            break;
        }
        pick[k] += 1;
    }
    best
}

#[test]
fn the_chain_is_as_fast_as_any_timing_of_its_order() {
    let mut models = vec![
        Model::from(Postal::new(r(3)).unwrap()),
        Model::from(Postal::new("5/2".parse().unwrap()).unwrap()),
        Model::from(OnePort),
        Model::from(KPort::new(2).unwrap()),
    ];
    for l in [0, 1, 3, 6] {
        for o in [0, 1, 2, 3] {
            for g in [0, 1, 2, 4] {
                for (big_g, bytes) in [(0, 1), (1, 3)] {
                    if l + o > 0 {
                        models.push(logp(l, o, g, big_g, bytes));
                    }
                }
            }
        }
    }
    for model in &models {
        for n in 2..=4usize {
            for m in 1..=3usize {
                let s = generate(
                    &Request::broadcast(Algorithm::Chain, n as u32, m as u32, 0),
                    model,
                )
                .unwrap();
                let report = check(&s, model).unwrap();
                assert!(
                    report.legal(),
                    "{model:?} n={n} m={m}: {:?}",
                    report.violations()
                );
                let best = brute_force_chain(n, m, model);
                assert_eq!(report.makespan(), best, "{model:?} n={n} m={m}");
            }
        }
    }
}

/// Children of `v` in the binomial tree over `n` ranks, largest subtree first: `v + 2^k` for every
/// `2^k` below `v`'s lowest set bit (all `2^k < n` for the root).
fn binomial_children(v: u32, n: u32) -> Vec<u32> {
    let low = if v == 0 {
        u64::MAX
    } else {
        u64::from(v & v.wrapping_neg())
    };
    let mut out: Vec<u32> = (0..32)
        .map(|k| 1u64 << k)
        .filter(|&w| w < low && w < u64::from(n) && u64::from(v) + w < u64::from(n))
        .map(|w| v + w as u32)
        .collect();
    out.reverse();
    out
}

/// A tree's children of a rank, in send order.
type Children = Box<dyn Fn(u32) -> Vec<u32>>;

fn model() -> impl Strategy<Value = Model> {
    prop_oneof![
        (1u64..9).prop_map(|l| Model::from(Postal::new(r(l)).unwrap())),
        logp_models(6),
        Just(Model::from(OnePort)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn one_block_trees_match_the_placement(model in model(), n in 1u32..200, root in any::<u32>()) {
        let root = root % n;
        let timing = model.timing(model.time_base().unwrap()).unwrap();
        let trees: [(Algorithm, Children); 3] = [
            (Algorithm::Binomial, Box::new(move |v| binomial_children(v, n))),
            (Algorithm::Binary, Box::new(move |v| (2 * v + 1..(2 * v + 3).min(n)).collect())),
            (Algorithm::Star, Box::new(move |v| if v == 0 { (1..n).collect() } else { vec![] })),
        ];
        for (alg, children) in trees {
            let orders = Orders::from_fn(n, |v, out| out.extend(children(v).into_iter().map(|c| (c, 0)))).unwrap();
            let placed = place(n, Collective::Broadcast { root: 0, blocks: 1 }, &orders, &timing)
                .unwrap()
                .rooted_at(root)
                .unwrap();
            let made = generate(&Request::broadcast(alg, n, 1, root), &model).unwrap();
            prop_assert_eq!(made.base(), placed.base());
            let a: Vec<_> = made.sends().collect();
            let b: Vec<_> = placed.sends().collect();
            prop_assert_eq!(a, b, "{} n = {} root = {}", alg, n, root);
        }
    }
}

#[test]
fn a_million_rank_binomial_broadcast_holds_its_path_formula() {
    // 2^20 ranks, L = 10, o = g = 1: step 1, latency L + 2o = 12. Rank v = Σ 2^{k_i} is reached
    // along 0 → 2^{k_1} → 2^{k_1} + 2^{k_2} → …; a sender u sends to u + 2^j for j = top(u) down
    // to 0 (top(0) = 19, top(u) = (lowest set bit of u) − 1), so u + 2^k is its (top(u) − k)-th
    // send, leaving top(u) − k steps after u holds the block, and arrives 12 later.
    let model = logp(10, 1, 1, 0, 1);
    let n = 1u32 << 20;
    let s = generate(&Request::broadcast(Algorithm::Binomial, n, 1, 0), &model).unwrap();
    assert_eq!(s.len(), n as usize - 1);
    let report = check(&s, &model).unwrap();
    assert!(report.legal());
    let holds = |v: u32| -> u64 {
        let (mut t, mut u) = (0u64, 0u32);
        for k in (0..20).rev() {
            if v >> k & 1 == 1 {
                let top = if u == 0 { 19 } else { u.trailing_zeros() - 1 };
                t += u64::from(top - k) + 12;
                u |= 1 << k;
            }
        }
        t
    };
    let completion = report.completion().unwrap();
    for v in (1..n).step_by(997).chain([n - 1]) {
        assert_eq!(completion[v as usize], holds(v), "rank {v}");
    }
    assert_eq!(report.makespan(), (1..n).map(holds).max().unwrap());
}
