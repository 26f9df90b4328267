//! Issue 12, part 1: the 1-port lower bound m − 1 + ⌈log2 n⌉ (Bruck, Cypher & Ho, Lemma 2.1)
//! confirmed by exhaustive search over all 1-port schedules for n ≤ 8 processors and m ≤ 3
//! blocks. Nothing of the lemma's proof (doubling of holders, the root's m − 1 sends) is used.
//!
//! # The search and why its reductions are safe
//!
//! A round is any set of transfers `(sender, receiver, block)` in which every processor sends at
//! most one block and receives at most one block, the sender holding the block at the start of
//! the round; a received block is held from the next round on. The search is a breadth-first
//! search over the rounds, so the first round count at which every processor holds every block
//! is the exact optimum. Three reductions shrink it, none of which can lose a schedule:
//!
//! * **Useless transfers are dropped.** A transfer of a block the receiver already holds changes
//!   no holding; deleting it leaves every holding, hence every later round, as it was and only
//!   frees a sender and a receiver. So only transfers of a block the receiver lacks are explored.
//! * **Processors are interchangeable.** The rules never name a processor: what the future
//!   allows depends only on who holds what. Non-root processors with equal holdings are
//!   therefore interchangeable, and a state is the multiset of the holdings of the n − 1
//!   non-root processors (the root holds everything and needs nothing).
//! * **A round is the number of members of each holding class that receive each block.** Its
//!   effect on the state is exactly that; it is realizable iff the demanded blocks can be matched
//!   to distinct senders holding them, which by Hall's theorem holds iff for every set B of
//!   blocks, the demand for blocks in B is at most the number of processors (root included, and
//!   a processor may send while it receives) holding some block of B. Every realizable round
//!   is enumerated, so every schedule's sequence of states is explored.
//!
//! States already reached in an earlier round are not expanded again (BFS: the same state later
//! cannot finish sooner).

use herald::{
    check, generate,
    model::{OnePort, Problem},
    Algorithm, CostModel, Model, Request,
};
use std::collections::HashSet;

/// The least number of rounds to broadcast `m ≤ 3` blocks from a root to `n ≤ 8` processors.
fn optimum(n: usize, m: u32) -> u32 {
    let full = (1u8 << m) - 1;
    let mut frontier: HashSet<Vec<u8>> = HashSet::from([vec![0u8; n - 1]]);
    let mut seen = frontier.clone();
    for round in 0.. {
        if frontier.iter().any(|s| s.iter().all(|&h| h == full)) {
            return round;
        }
        let mut next = HashSet::new();
        for state in &frontier {
            for successor in successors(state, m) {
                if seen.insert(successor.clone()) {
                    next.insert(successor);
                }
            }
        }
        assert!(!next.is_empty(), "stuck");
        frontier = next;
    }
    unreachable!()
}

/// Every state one round after `state` (sorted holdings of the non-root processors).
fn successors(state: &[u8], m: u32) -> Vec<Vec<u8>> {
    let full = (1u8 << m) - 1;
    // holding classes: (holding, members)
    let mut classes: Vec<(u8, u32)> = vec![];
    for &h in state {
        match classes.last_mut() {
            Some((x, c)) if *x == h => *c += 1,
            _ => classes.push((h, 1)),
        }
    }
    // senders by holding: the root holds everything
    let mut senders = [0u32; 8];
    senders[usize::from(full)] += 1;
    for &(h, c) in &classes {
        senders[usize::from(h)] += c;
    }
    let mut out = vec![];
    let mut counts = vec![[0u32; 3]; classes.len()];
    enumerate(&classes, 0, &mut counts, m, &senders, &mut out);
    out
}

/// Chooses for class `i` onward how many members receive each missing block.
fn enumerate(
    classes: &[(u8, u32)],
    i: usize,
    counts: &mut Vec<[u32; 3]>,
    m: u32,
    senders: &[u32; 8],
    out: &mut Vec<Vec<u8>>,
) {
    if i == classes.len() {
        if feasible(classes, counts, m, senders) {
            out.push(apply(classes, counts));
        }
        return;
    }
    let (h, members) = classes[i];
    // all (k_0, k_1, k_2) with k_b = 0 for held blocks and Σ k_b ≤ members
    let limit = |b: u32| if b < m && h >> b & 1 == 0 { members } else { 0 };
    for k0 in 0..=limit(0) {
        for k1 in 0..=limit(1).min(members - k0) {
            for k2 in 0..=limit(2).min(members - k0 - k1) {
                counts[i] = [k0, k1, k2];
                enumerate(classes, i + 1, counts, m, senders, out);
            }
        }
    }
    counts[i] = [0; 3];
}

/// Hall's condition: every set of blocks has enough distinct senders holding one of them.
fn feasible(classes: &[(u8, u32)], counts: &[[u32; 3]], m: u32, senders: &[u32; 8]) -> bool {
    let demand: Vec<u32> = (0..3)
        .map(|b| (0..classes.len()).map(|i| counts[i][b]).sum())
        .collect();
    (1u8..1 << m).all(|set| {
        let want: u32 = (0..m)
            .filter(|&b| set >> b & 1 == 1)
            .map(|b| demand[b as usize])
            .sum();
        let have: u32 = (0..8u8)
            .filter(|&h| h & set != 0)
            .map(|h| senders[usize::from(h)])
            .sum();
        want <= have
    })
}

/// The state after the round.
fn apply(classes: &[(u8, u32)], counts: &[[u32; 3]]) -> Vec<u8> {
    let mut s = vec![];
    for (&(h, members), k) in classes.iter().zip(counts) {
        let moved: u32 = k.iter().sum();
        s.extend(std::iter::repeat_n(h, (members - moved) as usize));
        for (b, &kb) in k.iter().enumerate() {
            s.extend(std::iter::repeat_n(h | 1 << b, kb as usize));
        }
    }
    s.sort_unstable();
    s
}

/// Lemma 2.1 holds with equality for 2 ≤ n ≤ 8, 1 ≤ m ≤ 3: the exhaustive optimum is
/// m − 1 + ⌈log2 n⌉, which is the model's lower bound and herald's round-optimal makespan.
#[test]
fn lemma_2_1_is_tight_by_exhaustive_search() {
    let model = Model::from(OnePort);
    let base = OnePort.time_base().unwrap();
    for n in 2..=8u32 {
        let log = u32::BITS - (n - 1).leading_zeros();
        for m in 1..=3u32 {
            let best = optimum(n as usize, m);
            assert_eq!(best, m - 1 + log, "n = {n} m = {m}");
            let lb = OnePort
                .broadcast_lower_bound(Problem { n, m }, base)
                .unwrap();
            assert_eq!(lb, u64::from(best));
            let s = generate(&Request::broadcast(Algorithm::Optimal, n, m, 0), &model).unwrap();
            assert_eq!(check(&s, &model).unwrap().makespan(), u64::from(best));
        }
    }
}

/// Lemma 2.1 fails for n = 1: with nobody to send to, no round is needed, not m − 1
/// (smallest counterexample: n = 1, m = 2).
#[test]
fn lemma_2_1_needs_a_second_processor() {
    for m in 1..=3 {
        assert_eq!(optimum(1, m), 0);
    }
}

/// The search finds schedules, not only bounds: a hand-checked small case.
#[test]
fn search_sanity() {
    // two processors: one block per round
    assert_eq!(optimum(2, 3), 3);
    // three processors, one block: 2 rounds
    assert_eq!(optimum(3, 1), 2);
}
