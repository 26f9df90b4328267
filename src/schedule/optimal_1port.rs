//! Round-optimal `m − 1 + ⌈log2 n⌉` 1-port broadcast for every `n` (beyond the papers).
//!
//! The construction is Träff's ("Round-optimal n-Block Broadcast Schedules in Logarithmic Time",
//! arXiv 2312.11236; MPICH ships it as its `circ_graph` broadcast). This is an independent
//! implementation from the paper's description; see `docs/oneport.md`.
//!
//! # The circulant graph
//!
//! Let `q = ⌈log2 n⌉` and the *skips* `s_q = n`, `s_k = ⌈s_{k+1} / 2⌉`, so `s_0 = 1` and
//! `s_k + s_k ≥ s_{k+1}`. Every `r ∈ [0, n)` is a sum of distinct skips (greedily, largest first);
//! the smallest skip index in that *canonical* sum is `r`'s *base block* `b(r)` (`q` for the root).
//!
//! In round `i` every processor `r` sends to `(r + s_{i mod q}) mod n` and receives from
//! `(r − s_{i mod q}) mod n`: one send and one receive per round, so the 1-port rules hold by
//! construction. What is sent is fixed by `q` numbers per processor, its *receive schedule*:
//! in round `k` of every *phase* of `q` rounds, `r` receives the block `recv_r[k] + (phase · q)`
//! (relative numbering). The `q` entries are `b(r)` and `e − q` for every `e ∈ [0, q) ∖ {b(r)}`:
//! one per residue class mod `q`, so over the phases `r` receives every block exactly once. A
//! processor's *send* schedule is its targets' receive schedules (`send_r[k] = recv_{r + s_k}[k]`);
//! the construction guarantees that the sender holds that block by then (received earlier in
//! the phase, or in the phase before).
//!
//! # The receive schedule in O(log n)
//!
//! Think of ranks "one lap ahead", `R = n + r`, and of block `e` of the previous phase as leaving
//! the root over skip `s_e` (and the current phase's new block as leaving over `s_q = n`). Block
//! `e` reaches `R` along a path of strictly increasing partial sums; in round `k`, `r` can take from
//! `R − s_k` a block whose path has reached at most `R − s_k`. A depth-first search over partial
//! sums, trying skip indices from the largest down and each index at most once (a doubly linked
//! list of the unused indices, so every index is removed once and the whole search is O(q)),
//! assigns the rounds `k = 0, 1, …` in order; a partial sum that can still stay at or below
//! `R − s_{k+1}` is extended before it is used, which is what makes the found paths arrive in time.
//!
//! # From the schedule to rounds
//!
//! With `x = (q − (m − 1) mod q) mod q` "virtual" rounds skipped at the start, rounds
//! `x … x + m − 2 + q` carry the relative blocks minus `x`; negative blocks do not exist (the send
//! is omitted) and blocks beyond `m − 1` are the last block (a repeat is omitted when the receiver
//! already has it). That is exactly `m − 1 + q` rounds.

use super::{Collective, Schedule, ScheduleError};
use crate::time::TimeBase;

/// `m` blocks from root 0 to `n` processors in `m − 1 + ⌈log2 n⌉` rounds.
pub(super) fn generate(n: u32, m: u32) -> Result<Schedule, ScheduleError> {
    let collective = Collective::Broadcast { root: 0, blocks: m };
    let mut builder = Schedule::builder(n, collective, TimeBase::UNIT)?;
    if n == 1 {
        return builder.build();
    }
    let sends = super::fibonacci::broadcast_sends(n, m)?;
    let graph = Circulant::new(n);
    let q = graph.q;
    // 20 bytes per send in the builder; q bytes per processor for the receive schedules
    super::fibonacci::ensure_memory(sends.saturating_mul(20))?;
    // Every receive schedule, q bytes per processor (the root's is unused).
    let mut recv = Vec::new();
    recv.try_reserve_exact(n as usize * q)
        .map_err(|_| ScheduleError::TooLarge(format!("{n} receive schedules")))?;
    recv.resize(n as usize * q, 0i8);
    let mut search = Search::new(&graph);
    for (r, row) in recv.chunks_exact_mut(q).enumerate().skip(1) {
        search.receive_schedule(r as u64, row);
    }
    let plan = Rounds::new(q, m);
    // For each receiver, the first round in which it gets a block ≥ m − 1 (later ones repeat it).
    let mut last_at = vec![u32::MAX; n as usize];
    for (t, row) in recv.chunks_exact(q).enumerate().skip(1) {
        last_at[t] = plan.first_last_block(row);
    }
    builder.reserve(sends as usize);
    for from in 0..n {
        for round in plan.first..plan.end {
            let k = round as usize % q;
            let to = graph.step(from, k);
            if to == 0 {
                continue; // the root receives nothing
            }
            let rel = recv[to as usize * q + k];
            let Some(block) = plan.block(round, rel) else {
                continue;
            };
            if block == m - 1 && round != u64::from(last_at[to as usize]) {
                continue;
            }
            builder.push(round - plan.first, from, to, block);
        }
    }
    debug_assert_eq!(builder.len() as u64, sends);
    builder.build()
}

/// The receive schedule of processor `r` (`1 ≤ r < n`): `q = ⌈log2 n⌉` relative blocks, the one
/// received in round `k` of each phase, each in `−q ..= q − 1` (for the unit tests).
#[cfg(test)]
pub(super) fn receive_schedule(n: u32, r: u32) -> Vec<i8> {
    let graph = Circulant::new(n);
    let mut row = vec![0i8; graph.q];
    if r > 0 && r < n {
        Search::new(&graph).receive_schedule(u64::from(r), &mut row);
    }
    row
}

/// The circulant graph of `n ≥ 2` processors and its skips.
#[derive(Debug)]
struct Circulant {
    /// Processor count (≥ 2).
    n: u64,
    /// `⌈log2 n⌉` (1 ..= 32).
    q: usize,
    /// `s_0 … s_q`, `s_q = n`, `s_k = ⌈s_{k+1}/2⌉`; unused entries are 0.
    skips: [u64; 34],
}

impl Circulant {
    /// The graph for `n ≥ 2`.
    fn new(n: u32) -> Circulant {
        let n = u64::from(n);
        let q = (u64::BITS - (n - 1).leading_zeros()) as usize; // ⌈log2 n⌉ for n ≥ 2
        let mut skips = [0u64; 34];
        skips[q] = n;
        for k in (0..q).rev() {
            skips[k] = skips[k + 1].div_ceil(2);
        }
        debug_assert_eq!(skips[0], 1);
        Circulant { n, q, skips }
    }

    /// The processor `r` sends to in round `k` of a phase.
    fn step(&self, r: u32, k: usize) -> u32 {
        ((u64::from(r) + self.skips[k]) % self.n) as u32
    }

    /// `b(r)`: the smallest skip index of `r`'s greedy (canonical) skip sum; `q` for `r = 0`.
    fn base_block(&self, r: u64) -> usize {
        let mut rest = r;
        let mut base = self.q;
        for k in (0..self.q).rev() {
            if self.skips[k] <= rest {
                rest -= self.skips[k];
                base = k;
                if rest == 0 {
                    break;
                }
            }
        }
        base
    }
}

/// Sentinel of the candidate list (index `q + 1` at most 33).
const END: usize = 34;

/// The depth-first search of the receive schedule, with its list of unused skip indices.
#[derive(Debug)]
struct Search<'a> {
    /// The graph.
    graph: &'a Circulant,
    /// Unused skip indices as a circular doubly linked list through `END`, largest first.
    next: [usize; END + 1],
    /// Backward links of the list.
    prev: [usize; END + 1],
    /// `n + r`: the target, one lap ahead.
    target: u64,
    /// The skip index found for each round so far.
    found: [usize; 33],
}

impl<'a> Search<'a> {
    /// A search on `graph`.
    fn new(graph: &'a Circulant) -> Search<'a> {
        Search {
            graph,
            next: [END; END + 1],
            prev: [END; END + 1],
            target: 0,
            found: [0; 33],
        }
    }

    /// Writes `r`'s receive schedule (relative blocks) into `row` (`q` entries).
    fn receive_schedule(&mut self, r: u64, row: &mut [i8]) {
        let q = self.graph.q;
        // list: END → q → q−1 → … → 0 → END
        self.next[END] = q;
        self.prev[END] = 0;
        for e in 0..=q {
            self.next[e] = if e == 0 { END } else { e - 1 };
            self.prev[e] = if e == q { END } else { e + 1 };
        }
        let base = self.graph.base_block(r);
        self.unlink(base);
        self.target = self.graph.n + r;
        let filled = self.extend(0, 2 * self.graph.n, q, 0);
        debug_assert_eq!(filled, q);
        for (k, slot) in row.iter_mut().enumerate().take(q) {
            let e = self.found[k];
            // skip index q stands for the current phase's new block, the base block
            *slot = if e == q {
                base as i8
            } else {
                e as i8 - q as i8
            };
        }
    }

    /// Removes skip index `e` from the list (its own links stay, so a scan standing on it can
    /// continue).
    fn unlink(&mut self, e: usize) {
        let (p, x) = (self.prev[e], self.next[e]);
        self.next[p] = x;
        self.prev[x] = p;
    }

    /// `s_k`, with `s_k` for `k > q` never needed (guarded by the callers).
    fn skip(&self, k: usize) -> u64 {
        self.graph.skips[k]
    }

    /// Extends the partial sum `sum` by unused skips from index `e` down, each new sum below
    /// `bound`, assigning rounds from `k` on; returns the next round to assign.
    fn extend(&mut self, sum: u64, mut bound: u64, mut e: usize, mut k: usize) -> usize {
        let q = self.graph.q;
        while e != END && k < q {
            let reach = sum + self.skip(e);
            if reach <= self.target - self.skip(k) && reach < bound {
                if reach <= self.target - self.skip(k + 1) {
                    k = self.extend(reach, bound, e, k);
                    if k == q {
                        return k;
                    }
                }
                if sum > self.target - self.skip(k + 1) {
                    return k;
                }
                bound = reach;
                self.found[k] = e;
                k += 1;
                self.unlink(e);
            }
            e = self.next[e];
        }
        k
    }
}

/// The rounds of a broadcast of `m` blocks on the circulant graph.
#[derive(Debug, Clone, Copy)]
struct Rounds {
    /// `q`.
    q: u64,
    /// Blocks.
    m: u32,
    /// `x`: the first round actually run.
    first: u64,
    /// One past the last round run: `x + m − 1 + q`.
    end: u64,
}

impl Rounds {
    /// Rounds for `q ≥ 1` and `m ≥ 1`.
    fn new(q: usize, m: u32) -> Rounds {
        let q = q as u64;
        let first = (q - (u64::from(m) - 1) % q) % q;
        Rounds {
            q,
            m,
            first,
            end: first + u64::from(m) - 1 + q,
        }
    }

    /// The uncapped block number received in `round` with relative entry `rel`.
    fn uncapped(&self, round: u64, rel: i8) -> i64 {
        i64::from(rel) + ((round / self.q) * self.q) as i64 - self.first as i64
    }

    /// The block moved in `round` for relative entry `rel`, if any (capped at `m − 1`).
    fn block(&self, round: u64, rel: i8) -> Option<u32> {
        let b = self.uncapped(round, rel);
        (b >= 0).then(|| b.min(i64::from(self.m) - 1) as u32)
    }

    /// The first round in which a processor with receive schedule `row` gets a block ≥ `m − 1`.
    fn first_last_block(&self, row: &[i8]) -> u32 {
        (self.first..self.end)
            .find(|&round| {
                self.uncapped(round, row[(round % self.q) as usize]) >= i64::from(self.m) - 1
            })
            .map_or(u32::MAX, |r| r as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The receive schedule holds one block per residue class mod q: `b(r)` and `e − q`.
    #[test]
    fn receive_schedules_cover_every_residue_once() {
        for n in 2..300u32 {
            let g = Circulant::new(n);
            let q = g.q as i8;
            for r in 1..n {
                let row = receive_schedule(n, r);
                let b = g.base_block(u64::from(r)) as i8;
                let mut want: Vec<i8> = (0..q).filter(|&e| e != b).map(|e| e - q).collect();
                want.push(b);
                want.sort_unstable();
                let mut got = row.clone();
                got.sort_unstable();
                assert_eq!(got, want, "n = {n}, r = {r}");
            }
        }
    }
}
