//! k-port multiple-message broadcast (Bar-Noy & Ho): the k-tree algorithm and a rotation
//! algorithm. Reading of the paper: `docs/kport-reading.md`.
//!
//! Both work with the effective port count `k' = min(k, n − 1)` (a processor has only `n − 1`
//! partners), root 0, blocks `0 … m − 1` in *batches* of `k'`: batch `b` holds blocks
//! `b·k' … b·k' + k' − 1`, and `B = ⌈m/k'⌉` batches.
//!
//! # k-tree (§3)
//!
//! `k'` spanning trees; tree `j` carries block `b·k' + j` of every batch, the root sending batch
//! `b` in round `b`, each tree forwarding one level per round (Theorem 6: `B + h − 1` rounds for
//! trees of height `h`). The trees, as read:
//!
//! * `T'(k, n)`: a new root 0 above the almost complete k-ary tree `T(k, n − 1)` (heap order).
//! * §3.3, `k | n − 2`: `T(k, n − 1)` has `g = (n − 2)/k` non-leaf nodes, all of full fan-out;
//!   tree `j`'s non-leaf nodes are processors `1 + jg … (j + 1)g` ("group j"), every other
//!   processor a leaf.
//! * §3.4, `k ∤ n − 2`: the trees for `n − α` (`α = (n − 2) mod k`) plus `α` nodes per tree,
//!   attached in tree order to the *first* leaf (top-down, left to right) or, when the current
//!   new processor `p` has room for only `k − c` more children, `k − c` to the first leaf and the
//!   rest to the *second* leaf with the next new processor; a counter `c` keeps every new
//!   processor at `k` children over all trees.
//! * §3.5 (`n ≤ k + 1`): here `k' = n − 1` and herald uses `k'` height-2 stars (tree `j`:
//!   `0 → j + 1 → everyone else`), because the paper's trees put one processor under the root in
//!   two trees, which the distinct-partner rule forbids (`docs/kport-reading.md`).
//!
//! Leaves are assigned so that no processor has the same parent in two trees (distinct
//! partners); only the positions below the new processors of §3.4 are constrained.
//!
//! # Rotation (§4, rebuilt)
//!
//! Reaches `⌈m/k'⌉ + ⌈log_{k'+1} n⌉` rounds (Theorem 10, one above Lemma 2) for every `k`, `n`
//! and `m`, by two proofs (`docs/kport-reading.md`): "Which n stream" (the row plan spreads every
//! block in `D = ⌈log_{k'+1} n⌉` rounds but at the pairs (★) just below each `(k + 1)^D`) and
//! "The final window" (at those, the last `D` rounds below); `k' = 1` is the 1-port model, handed
//! to the round-optimal circulant schedule. The construction (the
//! paper's black boxes could not be read; this generalizes its "nice number" box, whose sets
//! `S_{i,j}` rotate):
//!
//! * the `n − 1` non-roots form `k'` *rows* of `q = ⌊(n − 1)/k'⌋` processors (row `i` spreads
//!   slot `i` — block `i` of every batch) and `H = (n − 1) mod k'` *helpers*;
//! * in every round, every row member holds exactly one in-flight block of its slot and sends up
//!   to `k'` copies of it; row `i` is partitioned into sets `S_1 … S_L` of sizes `h_1 = 1 ≤ h_2 ≤ …
//!   ≤ h_L` (`h_{t+1} ≤ (k'+1)h_t`, `(k'+1)h_L ≥ q`), `S_t` holding the block that entered `t`
//!   rounds ago. `S_L` sends its block to every row member outside `S_L` (the block is then done
//!   in the row) and is *dissolved*: one member receives the new block from the root (the next
//!   `S_1`), the others receive younger blocks from `S_1 … S_{L−1}` and join them
//!   (`S_{t+1} ← S_t ∪ new`) — the roles rotate through the row;
//! * every processor outside row `i` has a fixed *lag* for slot `i`: it receives slot `i`'s block
//!   of batch `b` in round `b + lag` from the set of that age (or from a helper), so it receives
//!   exactly one slot-`i` block per round; the lags are dealt out by the spare capacity
//!   `k'h_t − (h_{t+1} − h_t)` of each age;
//! * row capacity is `k'q ≥ n − 1 − (H − 1)`: `H − 1` more copies per slot and round come from the
//!   helpers (each with `k'` ports), which hold the block from an early lag and forward it one
//!   round later.
//!
//! Every processor then receives one block of each slot per round — `k'` blocks from `k'`
//! different senders (a row member sends one slot, helpers send distinct targets) — and sends at
//! most `k'`; every block is everywhere `D = ⌈log_{k'+1} n⌉` rounds after it left the root, so the
//! last batch (round `B − 1`) is done at `B + D`. The checker proves each schedule.
//!
//! Where the row plan needs `D + 1` rounds (a few `n` just below `(k'+1)^D`, `k' ≥ 5`; for
//! `n = (k'+1)² − 1` no schedule streams in `D`: `docs/kport-reading.md`), only the last batch
//! must spread in `D`, and the last `D` rounds are an explicit *final window* (`plan_sends`;
//! proof: `docs/kport-reading.md`, "The final window"): the cohorts of the batches after the last
//! one, which do not exist, carry the last batch's block inside each row, so that in the last
//! round every row member has a receive port free; the outsiders a helper would serve at age
//! `D + 1` (all in the next row, by the plan) get the block then from a member of `S_1`. The
//! former re-plan by maximum flows (`flow.rs`: most urgent transfers first, a repair pass, a
//! local search) stays only as a safety net should the window ever leave a block missing, which
//! the proof excludes.

use super::{Collective, Schedule, ScheduleError};
use crate::model::{log_ceil, KPort};
use crate::time::TimeBase;

mod flow;
use flow::{last_batch, tries};

/// Checks the send count fits the 32-bit indices and memory.
fn budget(n: u32, m: u32) -> Result<usize, ScheduleError> {
    let sends = u64::from(n - 1) * u64::from(m);
    if sends >= u64::from(u32::MAX) {
        return Err(ScheduleError::TooLarge(format!(
            "{n} processors × {m} blocks need {sends} sends"
        )));
    }
    super::fibonacci::ensure_memory(sends.saturating_mul(20))?;
    Ok(sends as usize)
}

/// The k spanning trees of the k-tree algorithm, as parent and depth per processor per tree.
#[derive(Debug, Clone)]
pub(crate) struct KTrees {
    /// Number of trees (`k'`).
    pub(crate) k: u32,
    /// `parent[j][v]`: the parent of processor `v` in tree `j` (`u32::MAX` for the root 0).
    pub(crate) parent: Vec<Vec<u32>>,
    /// `depth[j][v]`: edges from the root 0.
    pub(crate) depth: Vec<Vec<u32>>,
}

/// The k-tree algorithm's trees for `n ≥ 2` processors and `k' = effective` ports.
pub(crate) fn ktrees(n: u32, k: u32) -> Result<KTrees, ScheduleError> {
    let k = k.min(n - 1).max(1);
    let none = u32::MAX;
    let mut parent = vec![vec![none; n as usize]; k as usize];
    if n <= k + 1 {
        // k = n − 1: stars 0 → j + 1 → everyone else.
        for (j, par) in parent.iter_mut().enumerate() {
            let hub = j as u32 + 1;
            par[hub as usize] = 0;
            for v in 1..n {
                if v != hub {
                    par[v as usize] = hub;
                }
            }
        }
        return finish(parent, k);
    }
    let alpha = (n - 2) % k;
    let n0 = n - alpha;
    let g = (n0 - 2) / k;
    let heap = n0 - 1; // positions 0 … heap − 1 of T(k, n0 − 1)
                       // New internal processors per tree: (heap position, processor, number of new children).
    let mut news: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); k as usize];
    let (mut p, mut c) = (n0, 0u32);
    for tree in news
        .iter_mut()
        .take(if alpha == 0 { 0 } else { k as usize })
    {
        if c + alpha <= k {
            tree.push((g, p, alpha));
            c += alpha;
            if c == k {
                p += 1;
                c = 0;
            }
        } else {
            tree.push((g, p, k - c));
            p += 1;
            tree.push((g + 1, p, alpha - (k - c)));
            c = alpha - (k - c);
        }
    }
    debug_assert!(alpha == 0 || (p == n && c == 0));
    // children[v]: every child v has in any tree so far (to keep parents distinct).
    let mut used: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    let mut cursor = 0usize;
    for (j, par) in parent.iter_mut().enumerate() {
        let j = j as u32;
        let group = |pos: u32| 1 + j * g + pos;
        // processor at each heap position that is internal; leaves are filled below
        let mut at = vec![none; heap as usize];
        for pos in 0..g {
            at[pos as usize] = group(pos);
        }
        for &(pos, proc_, _) in &news[j as usize] {
            at[pos as usize] = proc_;
        }
        let internal: Vec<u32> = at.iter().copied().filter(|&x| x != none).collect();
        let mut avail: Vec<u32> = (1..n).filter(|v| !internal.contains(v)).collect();
        let shift = cursor % avail.len().max(1);
        avail.rotate_left(shift);
        cursor += alpha as usize + 1;
        let mut taken = vec![false; avail.len()];
        // constrained: the new positions below new internal processors
        for &(_, proc_, count) in &news[j as usize] {
            for _ in 0..count {
                let pick = (0..avail.len())
                    .find(|&i| !taken[i] && !used[proc_ as usize].contains(&avail[i]))
                    .ok_or_else(|| ScheduleError::NotApplicable {
                        algorithm: "ktree".into(),
                        why: format!("no leaf assignment with distinct parents for n = {n}"),
                    })?;
                taken[pick] = true;
                let v = avail[pick];
                used[proc_ as usize].push(v);
                par[v as usize] = proc_;
            }
        }
        let mut free = avail
            .iter()
            .zip(&taken)
            .filter(|(_, &t)| !t)
            .map(|(&v, _)| v);
        for pos in 0..heap {
            let proc_ = if at[pos as usize] != none {
                at[pos as usize]
            } else {
                free.next().ok_or_else(|| ScheduleError::NotApplicable {
                    algorithm: "ktree".into(),
                    why: "leaf count mismatch".into(),
                })?
            };
            at[pos as usize] = proc_;
            par[proc_ as usize] = if pos == 0 {
                0
            } else {
                at[((pos - 1) / k) as usize]
            };
        }
        debug_assert!(free.next().is_none());
    }
    finish(parent, k)
}

/// Depths from parents.
fn finish(parent: Vec<Vec<u32>>, k: u32) -> Result<KTrees, ScheduleError> {
    let mut depth = Vec::with_capacity(parent.len());
    for par in &parent {
        let n = par.len();
        let mut d = vec![u32::MAX; n];
        d[0] = 0;
        for v in 1..n {
            // walk up to a known depth (trees are shallow)
            let mut path = vec![v];
            let mut u = par[v];
            while u != u32::MAX && d[u as usize] == u32::MAX {
                path.push(u as usize);
                u = par[u as usize];
                if path.len() > n {
                    return Err(ScheduleError::NotApplicable {
                        algorithm: "ktree".into(),
                        why: "cycle in a tree".into(),
                    });
                }
            }
            if u == u32::MAX {
                return Err(ScheduleError::NotApplicable {
                    algorithm: "ktree".into(),
                    why: format!("processor {v} is not in a tree"),
                });
            }
            let mut base = d[u as usize];
            for &x in path.iter().rev() {
                base += 1;
                d[x] = base;
            }
        }
        depth.push(d);
    }
    Ok(KTrees { k, parent, depth })
}

/// The k-tree algorithm: `m` blocks from root 0 in `⌈m/k'⌉ + h − 1` rounds.
pub(crate) fn ktree(n: u32, m: u32, model: &KPort) -> Result<Schedule, ScheduleError> {
    let collective = Collective::Broadcast { root: 0, blocks: m };
    let mut b = Schedule::builder(n, collective, TimeBase::UNIT)?;
    if n == 1 {
        return b.build();
    }
    b.reserve(budget(n, m)?);
    let trees = ktrees(n, model.effective(n))?;
    let k = trees.k;
    for (j, (par, dep)) in trees.parent.iter().zip(&trees.depth).enumerate() {
        for v in 1..n as usize {
            let mut block = j as u32;
            let mut batch = 0u64;
            while block < m {
                b.push(batch + u64::from(dep[v]) - 1, par[v], v as u32, block);
                block = block.saturating_add(k);
                batch += 1;
            }
        }
    }
    b.build()
}

/// A row's set sizes `h_1 … h_L` (`L ≤ lmax`): `h_1 = 1`, nondecreasing, `h_{t+1} ≤ (k+1)h_t`,
/// summing to `q`, `(k+1)h_L ≥ q`; the fewest sets that allow it.
pub(crate) fn profile(q: u64, k: u64, lmax: u32) -> Option<Vec<u64>> {
    for l in 1..=lmax as usize {
        let mut h = vec![1u64];
        for t in 1..l {
            h.push(h[t - 1].saturating_mul(k + 1));
        }
        let sum = h.iter().fold(0u64, |a, &x| a.saturating_add(x));
        if sum < q {
            continue;
        }
        let mut excess = sum - q;
        loop {
            let mut progress = false;
            for t in (1..l).rev() {
                if excess == 0 {
                    break;
                }
                let mut lo = h[t - 1];
                if t + 1 < l {
                    lo = lo.max(h[t + 1].div_ceil(k + 1));
                } else {
                    lo = lo.max(q.div_ceil(k + 1));
                }
                if h[t] > lo {
                    let dec = (h[t] - lo).min(excess);
                    h[t] -= dec;
                    excess -= dec;
                    progress = true;
                }
            }
            if excess == 0 || !progress {
                break;
            }
        }
        if excess == 0 && (k + 1).saturating_mul(h[l - 1]) >= q {
            return Some(h);
        }
    }
    None
}

/// One slot's plan for the rotation algorithm.
#[derive(Debug, Clone)]
struct Slot {
    /// The row's processors.
    row: Vec<u32>,
    /// Set sizes `h_1 … h_L`.
    h: Vec<u64>,
    /// `served[t]`: the outsiders with lag `t` served by the row's set `S_t` (index 0 unused).
    served: Vec<Vec<u32>>,
    /// Helpers: (helper, age at which it forwards, its targets).
    helpers: Vec<(u32, usize, Vec<u32>)>,
}

/// The rotation plan: one slot per port, or `None` if the deadline cannot be met this way.
/// Helpers forwarding after `spread` rounds (only if `deadline > spread`) serve the next row.
fn rotation_plan(n: u32, k: u32, spread: usize, deadline: usize) -> Option<Vec<Slot>> {
    let total = n - 1;
    let helpers = total % k;
    let q = total / k;
    let h = profile(u64::from(q), u64::from(k), deadline as u32)?;
    let l = h.len();
    // spare capacity per age (1-based) after the row's own needs
    let mut spare = vec![0u64; deadline + 2];
    for t in 1..=l {
        let need = if t < l {
            h[t] - h[t - 1]
        } else {
            u64::from(q) - h[l - 1]
        };
        spare[t] = u64::from(k) * h[t - 1] - need;
    }
    let copies = helpers.saturating_sub(1); // extra copies per slot and round
    let helper_ids: Vec<u32> = (1 + k * q..n).collect();
    let early: u64 = (1..=l.min(deadline - 1)).map(|t| spare[t]).sum();
    // which helpers send how many copies for slot i
    let mut duty: Vec<Vec<(u32, u32)>> = vec![Vec::new(); k as usize];
    if copies > 0 {
        let span_ok = (0..k).all(|i| {
            let (lo, hi) = (i * copies, (i + 1) * copies - 1);
            u64::from(hi / k - lo / k + 1) <= early
        });
        if span_ok {
            for unit in 0..k * copies {
                let (slot, helper) = (unit / copies, unit / k);
                let d = &mut duty[slot as usize];
                match d.last_mut() {
                    Some((hh, c)) if *hh == helper => *c += 1,
                    _ => d.push((helper, 1)),
                }
            }
        } else {
            let per = (k / copies).max(1);
            if early < 1 || k.div_ceil(per) > helpers {
                return None;
            }
            for slot in 0..k {
                duty[slot as usize].push((slot / per, copies));
            }
        }
    }
    let mut targets_of: Vec<Vec<u32>> = vec![Vec::new(); helpers as usize];
    let mut slots = Vec::with_capacity(k as usize);
    for i in 0..k {
        let row: Vec<u32> = (1 + i * q..1 + (i + 1) * q).collect();
        let mut cap = spare.clone();
        let mut lag_of_helper = Vec::new();
        for &(hx, c) in &duty[i as usize] {
            let t = (1..deadline).find(|&t| cap[t] > 0)?;
            cap[t] -= 1;
            cap[t + 1] += u64::from(c);
            lag_of_helper.push((hx, t, c));
        }
        let mut by_lag: Vec<Vec<u32>> = vec![Vec::new(); deadline + 2];
        for &(hx, t, _) in &lag_of_helper {
            by_lag[t].push(helper_ids[hx as usize]);
        }
        let busy: Vec<u32> = lag_of_helper.iter().map(|x| x.0).collect();
        let mut others: Vec<u32> = (1..n)
            .filter(|&v| {
                let in_row = v > i * q && v <= (i + 1) * q;
                let sending = v > k * q && busy.contains(&(v - 1 - k * q));
                !in_row && !sending
            })
            .collect();
        let len = others.len().max(1);
        others.rotate_left((i as usize * (len / k as usize).max(1)) % len);
        // helpers first pick their targets (never one they serve in another slot): those
        // outsiders get the helper's forwarding age as their lag. A *late* duty (forwarding
        // after `spread` rounds: only when the plan needs one round more) picks first, and only
        // members of the next row: so every late target is a row member and no processor is
        // late in two slots, which the final window of `rotation` relies on.
        let next = (i + 1) % k;
        let in_next = |v: &u32| *v > next * q && *v <= (next + 1) * q;
        let mut duties = lag_of_helper.clone();
        duties.sort_by_key(|&(_, lag, _)| lag < spread);
        let mut helper_plans = Vec::new();
        for &(hx, lag, c) in &duties {
            let age = lag + 1;
            let mine = &mut targets_of[hx as usize];
            let mut chosen = Vec::new();
            while chosen.len() < c as usize {
                let idx = others
                    .iter()
                    .position(|v| !mine.contains(v) && (age <= spread || in_next(v)))?;
                let v = others.remove(idx);
                mine.push(v);
                chosen.push(v);
            }
            cap[age] -= u64::from(c);
            helper_plans.push((helper_ids[hx as usize], age, chosen));
        }
        let mut t = 1;
        for v in others {
            while t <= deadline && cap[t] == 0 {
                t += 1;
            }
            if t > deadline {
                return None;
            }
            cap[t] -= 1;
            by_lag[t].push(v);
        }
        // by_lag now holds, per age, the outsiders served by the row (helpers' own lags stay)
        slots.push(Slot {
            row,
            h: h.clone(),
            served: by_lag,
            helpers: helper_plans,
        });
    }
    Some(slots)
}

/// The rotation algorithm: `m` blocks from root 0 in `⌈m/k'⌉ + ⌈log_{k'+1} n⌉` rounds (proven
/// for every `k`, `n`, `m`: the module docs).
pub(crate) fn rotation(n: u32, m: u32, model: &KPort) -> Result<Schedule, ScheduleError> {
    let collective = Collective::Broadcast { root: 0, blocks: m };
    if n == 1 {
        return Schedule::builder(n, collective, TimeBase::UNIT)?.build();
    }
    let k = model.effective(n);
    if k == 1 {
        return super::optimal_1port::generate(n, m);
    }
    let d = log_ceil(u64::from(k) + 1, u64::from(n)) as usize;
    let plan = rotation_plan(n, k, d, d)
        .or_else(|| rotation_plan(n, k, d, d + 1))
        .ok_or_else(|| ScheduleError::NotApplicable {
            algorithm: "rotation".into(),
            why: format!("no row plan for n = {n}, k = {k}"),
        })?;
    let mut b = Schedule::builder(n, collective, TimeBase::UNIT)?;
    let deadline = plan.iter().map(|s| s.served.len() - 2).max().unwrap_or(0);
    let budget = budget(n, m)?;
    let rounds = u64::from(m.div_ceil(k)) + d as u64;
    // the plan needs D + 1: the final window (every row has D sets, by the proof)
    let tried = deadline > d && plan.iter().all(|s| s.h.len() == d);
    let window = tried
        .then(|| plan_sends(&plan, m, k, d as u64, true, budget))
        .filter(|s| complete(n, m, s, rounds));
    let replan = deadline > d && window.is_none();
    let mut sends = window.unwrap_or_else(|| plan_sends(&plan, m, k, d as u64, false, budget));
    if replan {
        // never reached for the plans of this module (the proof in docs/kport-reading.md,
        // "The final window"); kept as a safety net: the former re-plan of the last batches
        debug_assert!(!tried, "the final window failed: n = {n}, k = {k}, m = {m}");
        if let Some(better) = tries(n).find_map(|t| last_batch(n, m, k, d as u64, &sends, t)) {
            sends = better;
        }
    }
    b.reserve(sends.len());
    for (r, from, to, id) in sends {
        b.push(r, from, to, id);
    }
    b.build()
}

/// Whether every processor holds every block after round `rounds − 1`.
fn complete(n: u32, m: u32, sends: &[(u64, u32, u32, u32)], rounds: u64) -> bool {
    let mut got = vec![false; n as usize * m as usize];
    for &(r, _, to, id) in sends {
        if r < rounds {
            got[to as usize * m as usize + id as usize] = true;
        }
    }
    got[m as usize..].iter().all(|&g| g)
}

/// The sends of the row plan for `m` blocks (`k'` ports, `D = spread`). With `window` (the plan
/// needs `D + 1`, every row has `D` sets), the last `D` rounds are the *final window* that
/// brings the last batch (`B − 1`) everywhere by round `B + D − 1` (`docs/kport-reading.md`,
/// "The final window"):
///
/// * in rounds `B … B + D − 2` every row's cohorts of the batches `≥ B` (which do not exist)
///   carry the row's block of batch `B − 1` inside the row instead: the root sends it to the
///   entry, each set `S_t` to the members joining `S_{t+1}` (never to outsiders);
/// * so in round `B + D − 1` the members of `S_1 … S_{D−1}` already hold it and do not receive
///   it from `S_D`, which leaves each of them a free receive port;
/// * the late outsiders (those a helper would serve at age `D + 1`, in round `B + D`, all in the
///   next row and late in this slot only) get it in round `B + D − 1` from the member of `S_1`,
///   whose sends of its own (non-existent) block are free.
fn plan_sends(
    plan: &[Slot],
    m: u32,
    k: u32,
    spread: u64,
    window: bool,
    budget: usize,
) -> Vec<(u64, u32, u32, u32)> {
    let mut sends: Vec<(u64, u32, u32, u32)> = Vec::with_capacity(budget);
    let batches = u64::from(m.div_ceil(k));
    let deadline = plan.iter().map(|s| s.served.len() - 2).max().unwrap_or(0) as u64;
    let block = |batch: i64, slot: u32| -> Option<u32> {
        let id = u64::try_from(batch).ok()? * u64::from(k) + u64::from(slot);
        (id < u64::from(m)).then_some(id as u32)
    };
    // the final window: its last round, and the rounds in which the cohorts carry
    let last_round = batches + spread - 1;
    let rounds = if window {
        last_round + 1
    } else {
        batches + deadline
    };
    for (i, slot) in plan.iter().enumerate() {
        let i = i as u32;
        let l = slot.h.len();
        debug_assert!(slot.served[l + 1..].iter().all(Vec::is_empty));
        // the last batch's block of this slot, carried by the cohorts of batches ≥ B in round r
        let tail = block(batches as i64 - 1, i).filter(|_| window);
        let carry = |batch: i64, r: u64| -> Option<u32> {
            (batch >= batches as i64 && r < last_round)
                .then_some(tail)
                .flatten()
        };
        // sets S_1 … S_L (index t − 1)
        let mut sets: Vec<Vec<u32>> = Vec::with_capacity(l);
        let mut at = 0;
        for &size in &slot.h {
            sets.push(slot.row[at..at + size as usize].to_vec());
            at += size as usize;
        }
        let mut recv: Vec<u32> = Vec::new();
        for r in 0..rounds {
            let ri = r as i64;
            let dissolving = std::mem::take(&mut sets[l - 1]);
            let entry = dissolving[0];
            if let Some(id) = block(ri, i).or(carry(ri, r)) {
                sends.push((r, 0, entry, id));
            }
            let mut rest = dissolving[1..].iter().copied();
            let mut grown: Vec<Vec<u32>> = vec![Vec::new(); l];
            for t in 1..=l {
                recv.clear();
                // receivers in the row come first: the members joining S_{t+1}, or (t = L)
                // the members of S_1 … S_{L−1}
                let inside = if t < l {
                    let g = (slot.h[t] - slot.h[t - 1]) as usize;
                    grown[t].extend(rest.by_ref().take(g));
                    recv.extend_from_slice(&grown[t]);
                    g
                } else {
                    for s in &sets[..l - 1] {
                        recv.extend_from_slice(s);
                    }
                    recv.len()
                };
                recv.extend_from_slice(&slot.served[t]);
                let senders: &[u32] = if t < l { &sets[t - 1] } else { &dissolving };
                let batch = ri - t as i64;
                // in the final window's last round S_1 … S_{L−1} already hold the last batch
                let skip = if t == l && tail.is_some() && r == last_round {
                    inside
                } else {
                    0
                };
                if let Some(id) = block(batch, i) {
                    for (x, &v) in recv.iter().enumerate().skip(skip) {
                        sends.push((r, senders[x / k as usize], v, id));
                    }
                } else if let Some(id) = carry(batch, r).filter(|_| t < l) {
                    for (x, &v) in recv[..inside].iter().enumerate() {
                        sends.push((r, senders[x / k as usize], v, id));
                    }
                }
            }
            for (helper, age, targets) in &slot.helpers {
                if let Some(id) = block(ri - *age as i64, i) {
                    for &v in targets {
                        sends.push((r, *helper, v, id));
                    }
                }
                // the late outsiders get the last batch from S_1 in the window's last round
                if let Some(id) = tail.filter(|_| *age as u64 > spread && r == last_round) {
                    for &v in targets {
                        sends.push((r, sets[0][0], v, id));
                    }
                }
            }
            // rotate: S_1 ← entry, S_{t+1} ← S_t ∪ grown_t
            let mut next: Vec<Vec<u32>> = Vec::with_capacity(l);
            next.push(vec![entry]);
            for t in 1..l {
                let mut s = std::mem::take(&mut sets[t - 1]);
                s.extend_from_slice(&grown[t]);
                next.push(s);
            }
            sets = next;
        }
    }
    sends
}
