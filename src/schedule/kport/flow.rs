//! Re-planning the last batches of a rotation schedule: a maximum flow per round.

/// Re-plans the last `tail` batches of a rotation schedule whose row plan needed `d + 1`
/// spreading rounds, so that everything ends by round `B + d − 1`: the other batches already do,
/// and the re-planned ones keep only the root's first sends (block `b·k + i` in round `b`) and are
/// sent afresh from round `B − tail + 1` on, with the ports the other batches leave free (the
/// root's included). Each round is a maximum flow (`round_flow`), in passes that `attempt`
/// varies; the result is `None` unless every processor then holds every block.
pub(super) fn last_batch(
    n: u32,
    m: u32,
    k: u32,
    d: u64,
    sends: &[(u64, u32, u32, u32)],
    attempt: u32,
    tail: u64,
) -> Option<Vec<(u64, u32, u32, u32)>> {
    let batches = u64::from(m.div_ceil(k));
    if tail > batches || d == 0 {
        return None;
    }
    let first = (batches - tail) as u32 * k;
    let blocks = (m - first) as usize; // re-planned: blocks first … m − 1
    if blocks > 64 {
        return None;
    }
    // the root's first sends of the re-planned blocks stay (block b·k + i in round b)
    let root_first = |r: u64, from: u32, id: u32| from == 0 && r == u64::from(id / k);
    let (t0, t1) = (batches - tail + 1, batches + d - 1);
    let ours = |&(r, from, _, id): &(u64, u32, u32, u32)| id >= first && !root_first(r, from, id);
    let mut kept: Vec<(u64, u32, u32, u32)> = sends.iter().filter(|s| !ours(s)).copied().collect();
    let span = (t1 - t0 + 1) as usize;
    let mut out = vec![vec![0u32; n as usize]; span];
    let mut inn = vec![vec![0u32; n as usize]; span];
    let mut pairs: Vec<std::collections::HashSet<(u32, u32)>> = vec![Default::default(); span];
    let mut held = vec![0u64; n as usize];
    held[0] = if blocks == 64 {
        u64::MAX
    } else {
        (1 << blocks) - 1
    };
    // entries of the re-planned blocks, by the round after which they hold them
    let mut arriving: Vec<Vec<(u32, u32)>> = vec![Vec::new(); span];
    for &(r, from, to, id) in &kept {
        if id >= first && root_first(r, from, id) {
            if r < t0 {
                held[to as usize] |= 1 << (id - first);
            } else {
                arriving[(r - t0) as usize].push((to, id - first));
            }
        }
        if (t0..=t1).contains(&r) {
            let t = (r - t0) as usize;
            out[t][from as usize] += 1;
            inn[t][to as usize] += 1;
            pairs[t].insert((from, to));
        }
    }
    for t in 0..span {
        // before the last round, first give one block to each processor that holds none (more
        // distinct holders, more senders next round), then fill the ports left
        // Before the last round the flow's choice matters for the next: the attempts vary it —
        // first one block to each processor holding none (more distinct senders next round),
        // or the rarest blocks first in small steps, or plain; the last round takes every
        // transfer it can.
        let last = t + 1 == span;
        let order = visiting_order(n, attempt / 3);
        let mut got = vec![0u64; n as usize];
        let all = held[0];
        let mut passes: Vec<Pass> = match (last, attempt % 3) {
            (false, 0) => vec![Pass::fill(all), Pass::fresh(all)], // popped from the back
            (false, 2) => Vec::new(), // the balanced passes are made below
            _ => vec![Pass::fill(all)],
        };
        let balanced = !last && attempt % 3 == 2;
        loop {
            if balanced && passes.is_empty() {
                let count = |j: u32| {
                    held.iter()
                        .zip(&got)
                        .filter(|(h, g)| (*h | *g) >> j & 1 == 1)
                        .count() as u32
                };
                let mut js: Vec<u32> = (0..blocks as u32).collect();
                js.sort_by_key(|&j| count(j));
                passes = js
                    .into_iter()
                    .map(|j| Pass {
                        fresh: false,
                        allow: 1 << j,
                        limit: count(j),
                    })
                    .collect();
                passes.reverse(); // popped from the back: rarest first
            }
            let Some(pass) = passes.pop() else { break };
            let moves = round_flow(&order, k, &held, &got, pass, &out[t], &inn[t], &pairs[t]);
            if balanced && moves.is_empty() && passes.is_empty() {
                // a full sweep over the blocks may still be followed by another
                let again = round_flow(
                    &order,
                    k,
                    &held,
                    &got,
                    Pass::fill(all),
                    &out[t],
                    &inn[t],
                    &pairs[t],
                );
                if again.is_empty() {
                    break;
                }
            }
            for &(from, to, j) in &moves {
                kept.push((t0 + t as u64, from, to, first + j));
                out[t][from as usize] += 1;
                inn[t][to as usize] += 1;
                pairs[t].insert((from, to));
                got[to as usize] |= 1 << j;
            }
            if balanced && passes.is_empty() && moves.is_empty() {
                break;
            }
        }
        for (h, g) in held.iter_mut().zip(&got) {
            *h |= g;
        }
        for &(to, j) in &arriving[t] {
            held[to as usize] |= 1 << j;
        }
    }
    let full = held[0];
    held.iter().all(|&h| h == full).then_some(kept)
}

/// One round of the last batch (`got`: blocks already coming this round; `fresh`: only to
/// processors that hold none, one each): the most transfers `(from, to, block)` of blocks the sender
/// holds and the receiver lacks, each (receiver, block) at most once, each ordered pair at most
/// once and not already busy this round, within the `k` ports each side has left — a maximum
/// flow source → receiver → (receiver, block) → (receiver, sender) → sender → sink (Dinic).
#[allow(clippy::too_many_arguments)]
fn round_flow(
    order: &[u32],
    k: u32,
    held: &[u64],
    got: &[u64],
    pass: Pass,
    out: &[u32],
    inn: &[u32],
    busy: &std::collections::HashSet<(u32, u32)>,
) -> Vec<(u32, u32, u32)> {
    let full = held[0] & pass.allow;
    let fresh = pass.fresh;
    let n = order.len() as u32;
    let mut g = Flow::default();
    let (top, src, snk) = (g.node(), g.node(), g.node());
    g.edge(top, src, pass.limit);
    let senders: Vec<usize> = (0..n).map(|_| g.node()).collect();
    for p in 0..n as usize {
        if held[p] != 0 && out[p] < k {
            g.edge(senders[p], snk, k - out[p]);
        }
    }
    let mut labels: Vec<(usize, u32, u32, u32)> = Vec::new(); // (edge, from, to, block)
    for &q in order {
        let q = q as usize;
        let lacks = full & !held[q] & !got[q];
        if lacks == 0 || inn[q] >= k || (fresh && (held[q] | got[q]) != 0) {
            continue;
        }
        let rq = g.node();
        g.edge(src, rq, if fresh { 1 } else { k - inn[q] });
        let mut pair_of: Vec<Option<usize>> = vec![None; n as usize];
        for j in 0..64 {
            if lacks >> j & 1 == 0 {
                continue;
            }
            let need = g.node();
            g.edge(rq, need, 1);
            for &p in order {
                let p = p as usize;
                if p == q
                    || held[p] >> j & 1 == 0
                    || out[p] >= k
                    || busy.contains(&(p as u32, q as u32))
                {
                    continue;
                }
                let pair = *pair_of[p].get_or_insert_with(|| {
                    let x = g.node();
                    g.edge(x, senders[p], 1);
                    x
                });
                let e = g.edge(need, pair, 1);
                labels.push((e, p as u32, q as u32, j));
            }
        }
    }
    g.max_flow(top, snk);
    labels
        .into_iter()
        .filter(|&(e, ..)| g.used(e))
        .map(|(_, p, q, j)| (p, q, j))
        .collect()
}

/// Which transfers one flow of [`round_flow`] may make.
#[derive(Debug, Clone, Copy)]
struct Pass {
    /// Only to processors that hold none of the blocks, one each.
    fresh: bool,
    /// The blocks (bits) it may send.
    allow: u64,
    /// At most this many transfers.
    limit: u32,
}

impl Pass {
    fn fill(allow: u64) -> Pass {
        Pass {
            fresh: false,
            allow,
            limit: u32::MAX,
        }
    }

    fn fresh(allow: u64) -> Pass {
        Pass {
            fresh: true,
            allow,
            limit: u32::MAX,
        }
    }
}

/// How many processor orders [`last_batch`] tries (half of them without the first pass).
pub(super) const ATTEMPTS: u32 = 12;

/// The order in which the flow of [`last_batch`]'s attempt `a` visits processors: `0, 1, …` for
/// `a = 0`, else a fixed stride through them.
fn visiting_order(n: u32, a: u32) -> Vec<u32> {
    if a == 0 {
        return (0..n).collect();
    }
    let mut stride = (n / 2 + a * 7) % n.max(1);
    while stride == 0 || gcd(stride, n) != 1 {
        stride += 1;
    }
    (0..n).map(|i| (i * stride + a) % n).collect()
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// A small Dinic maximum flow on integer capacities.
#[derive(Default)]
struct Flow {
    /// Per node, its edge indices.
    adj: Vec<Vec<usize>>,
    /// Edge `e`: (head, residual capacity); `e ^ 1` is its reverse.
    edges: Vec<(usize, u32)>,
}

impl Flow {
    fn node(&mut self) -> usize {
        self.adj.push(Vec::new());
        self.adj.len() - 1
    }

    /// Adds `a → b` with capacity `c`; returns the edge's index.
    fn edge(&mut self, a: usize, b: usize, c: u32) -> usize {
        let e = self.edges.len();
        self.edges.push((b, c));
        self.edges.push((a, 0));
        self.adj[a].push(e);
        self.adj[b].push(e + 1);
        e
    }

    /// Whether edge `e` carries flow (its reverse has residual capacity).
    fn used(&self, e: usize) -> bool {
        self.edges[e ^ 1].1 > 0
    }

    fn max_flow(&mut self, s: usize, t: usize) -> u64 {
        let mut total = 0;
        loop {
            // breadth-first levels
            let mut level = vec![u32::MAX; self.adj.len()];
            level[s] = 0;
            let mut queue = std::collections::VecDeque::from([s]);
            while let Some(v) = queue.pop_front() {
                for &e in &self.adj[v] {
                    let (w, c) = self.edges[e];
                    if c > 0 && level[w] == u32::MAX {
                        level[w] = level[v] + 1;
                        queue.push_back(w);
                    }
                }
            }
            if level[t] == u32::MAX {
                return total;
            }
            let mut next = vec![0usize; self.adj.len()];
            loop {
                let f = self.augment(s, t, u32::MAX, &level, &mut next);
                if f == 0 {
                    break;
                }
                total += u64::from(f);
            }
        }
    }

    /// One blocking-flow path (iterative depth-first search along increasing levels).
    fn augment(
        &mut self,
        s: usize,
        t: usize,
        limit: u32,
        level: &[u32],
        next: &mut [usize],
    ) -> u32 {
        let mut path: Vec<usize> = Vec::new();
        let mut v = s;
        loop {
            if v == t {
                let f = path
                    .iter()
                    .map(|&e| self.edges[e].1)
                    .min()
                    .unwrap_or(limit)
                    .min(limit);
                for &e in &path {
                    self.edges[e].1 -= f;
                    self.edges[e ^ 1].1 += f;
                }
                return f;
            }
            let mut advanced = false;
            while next[v] < self.adj[v].len() {
                let e = self.adj[v][next[v]];
                let (w, c) = self.edges[e];
                if c > 0 && level[w] == level[v] + 1 {
                    path.push(e);
                    v = w;
                    advanced = true;
                    break;
                }
                next[v] += 1;
            }
            if !advanced {
                if v == s {
                    return 0;
                }
                // dead end: retreat and skip the edge that led here
                let e = path.pop().unwrap_or(0);
                v = self.edges[e ^ 1].0;
                next[v] += 1;
            }
        }
    }
}
