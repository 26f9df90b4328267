//! Broadcasts for the hierarchical model ([`Hier`]): leaders per node of chosen levels, each
//! stage with its own algorithm; the greedy earliest-arrival tree on per-pair costs; and the
//! classic trees placed under per-pair costs.
//!
//! Every schedule here is built as per-rank send orders and timed by the placement under the
//! model's per-pair rules (`place` module docs), so it is legal by construction and causal: a
//! rank forwards a block only after a strictly earlier send brought it.
//!
//! # Leaders ([`Leaders`])
//!
//! A *split* is a list of depths `s_1 < … < s_k`. Stage 1 broadcasts from the root among one
//! leader per depth-`s_1` node (the root leads its own node; another node is led by its rank
//! nearest the root in PU order); then, inside every depth-`s_1` node at once, stage 2 broadcasts
//! from its leader among one leader per depth-`s_2` node; and so on; the last stage broadcasts
//! inside every depth-`s_k` node among all its ranks. Each stage runs a flat algorithm of its
//! own (binomial, k-nomial, binary, d-ary, chain, star, or the flat model's optimal tree — BCAST
//! or B(P) — for the level of the stage's first pair of members, one block). Members of a stage
//! are ordered by PU index relative to the stage root, so a tree's subtrees stay close in the
//! machine. A rank that takes part in several stages sends each block in stage order, the blocks
//! in order (block 0 through all its stages first).
//!
//! Choosing the split and each stage's algorithm is the planner's job (`plan`): it simulates each
//! stage's subproblem under the model, never by rules written here.
//!
//! # Earliest arrival ([`Algorithm::Earliest`])
//!
//! Starting from the root, repeatedly pick the informed rank `p` and uninformed rank `q` whose
//! message would arrive first — `p`'s next possible send start (after it holds the block and its
//! previous send's step) plus the latency of the level where `p` and `q` meet — ties by `p`, then
//! by the smallest `q`; `q` becomes `p`'s next child. The estimate ignores capacities, which the
//! placement then applies. `m` blocks flow down the same tree, block by block (the idea of
//! Smelt's adaptive trees and MPICH's topology-aware trees, on the exact model).

use super::classic;
use super::place::place_pairs;
use super::{Algorithm, Collective, Orders, Request, Schedule, ScheduleError};
use crate::model::{CostModel, Hier, LevelCost, PairTiming};
use crate::time::{self, Ticks};
use std::fmt;

/// A leader-based hierarchical broadcast: where to split and each stage's algorithm (module
/// docs).
///
/// # Examples
///
/// ```
/// use herald::{check, Algorithm, Hierarchy, model::LevelKind::*, Model, Ratio, model::{Hier, HierLevel}, schedule::{leaders, Leaders}};
/// let h = Hierarchy::uniform(&[(Package, 2), (Core, 4), (Pu, 1)])?;
/// let levels = vec![
///     HierLevel::postal(Ratio::integer(20))?,
///     HierLevel::postal(Ratio::integer(2))?,
///     HierLevel::default(),
///     HierLevel::default(),
/// ];
/// let hier = Hier::compact(h, levels)?;
/// // One message between the packages, then a binomial tree inside each.
/// let spec = Leaders { split: vec![1], algorithms: vec![Algorithm::Star, Algorithm::Binomial] };
/// assert_eq!(spec.describe(hier.hierarchy()), "leaders(package:star, rank:binomial)");
/// let s = leaders(&hier, 8, 1, 0, &spec)?;
/// let cross = s.sends().filter(|x| (x.from < 4) != (x.to < 4)).count();
/// assert_eq!(cross, 1);
/// let report = check(&s, &Model::from(hier))?;
/// assert!(report.legal());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Leaders {
    /// The depths where ranks are grouped under leaders, strictly increasing, each at least 1.
    pub split: Vec<usize>,
    /// One algorithm per stage: `split.len() + 1` of them.
    pub algorithms: Vec<Algorithm>,
}

impl Leaders {
    /// The spec in words: each stage named by what its members lead (`package`, `l3`, … and
    /// `rank` for the last stage).
    pub fn describe(&self, h: &crate::model::Hierarchy) -> String {
        let names = self
            .split
            .iter()
            .map(|&d| {
                h.levels()
                    .get(d)
                    .map_or_else(|| format!("depth {d}"), |l| l.name())
            })
            .chain(std::iter::once("rank".to_owned()));
        let stages: Vec<String> = names
            .zip(&self.algorithms)
            .map(|(n, a)| format!("{n}:{a}"))
            .collect();
        format!("leaders({})", stages.join(", "))
    }

    /// The stage algorithms a leaders broadcast accepts.
    pub fn stage_algorithm_ok(a: Algorithm) -> bool {
        matches!(
            a,
            Algorithm::Optimal
                | Algorithm::Binomial
                | Algorithm::Binary
                | Algorithm::Chain
                | Algorithm::Star
                | Algorithm::Knomial { .. }
                | Algorithm::Dtree { .. }
        )
    }
}

impl fmt::Display for Leaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let split: Vec<String> = self.split.iter().map(usize::to_string).collect();
        let algos: Vec<String> = self.algorithms.iter().map(Algorithm::to_string).collect();
        write!(f, "leaders[{}]({})", split.join(","), algos.join(", "))
    }
}

fn not(algorithm: impl ToString, why: &str) -> ScheduleError {
    ScheduleError::NotApplicable {
        algorithm: algorithm.to_string(),
        why: why.to_owned(),
    }
}

/// The broadcast of `m` blocks from `root` to `n` ranks, validated.
fn broadcast(n: u32, m: u32, root: u32) -> Result<Collective, ScheduleError> {
    let collective = Collective::Broadcast { root, blocks: m };
    drop(Schedule::builder(
        n,
        collective,
        crate::time::TimeBase::UNIT,
    )?);
    Ok(collective)
}

/// The per-pair rules of `model` for `n` ranks in the model's own base.
fn rules(model: &Hier, n: u32) -> Result<PairTiming, ScheduleError> {
    Ok(model.pair_timing(n, model.time_base()?)?)
}

/// The classic trees and scatter-allgather under the hierarchical model (the registry's
/// `classic` generator there): placed under per-pair costs, ranks rotated so the root is rank 0
/// of the tree; the chain (and DTREE(1)) in closed form where no boundary capacity applies.
/// The registry validates the radix and degree before.
pub(super) fn classic(req: &Request, model: &Hier) -> Result<Schedule, ScheduleError> {
    let (algorithm, n, m, root) = (req.algorithm, req.n, req.blocks(), req.root());
    if let Algorithm::Chain | Algorithm::Dtree { d: 1 } = algorithm {
        // the closed form under per-pair costs, where no boundary capacity applies
        let pairs = rules(model, n)?;
        broadcast(n, m, root)?;
        if !pairs.has_boundaries() {
            let abs = |v: u32| ((u64::from(v) + u64::from(root)) % u64::from(n)) as u32;
            let hop = |v: u32| pairs.timing(pairs.class(abs(v), abs(v + 1)));
            if let Some(s) = classic::chain_hops(n, m, &hop)? {
                return s.into_rooted(root);
            }
        }
    }
    let orders = classic::orders(algorithm, n, m)?.ok_or_else(|| {
        not(
            algorithm,
            "under the hierarchical model: binomial, knomial, binary, dtree, chain, star, \
             scatter-allgather, leaders, earliest",
        )
    })?;
    let rotated = Orders::from_fn(n, |p, out| {
        let rel = (u64::from(p) + u64::from(n) - u64::from(root)) % u64::from(n);
        let abs = |v: u32| ((u64::from(v) + u64::from(root)) % u64::from(n)) as u32;
        out.extend(
            orders
                .of_processor(rel as u32)
                .iter()
                .map(|&(to, what)| (abs(to), what)),
        );
    })?;
    place_pairs(
        n,
        Collective::Broadcast { root, blocks: m },
        &rotated,
        &rules(model, n)?,
    )
}

/// The default leaders spec of `generate`: split at every depth where the ranks `0 … n−1` divide
/// further (below the top), binomial trees in every stage.
///
/// # Errors
/// [`ScheduleError`] for model errors.
pub fn default_leaders(model: &Hier, n: u32) -> Result<Leaders, ScheduleError> {
    let split = split_depths(model, n);
    let algorithms = vec![Algorithm::Binomial; split.len() + 1];
    Ok(Leaders { split, algorithms })
}

/// The depths at which ranks `0 … n−1` can be split under leaders: every depth `d ≥ 1` where
/// some pair of ranks meets at depth `d − 1` and the grouping changes (the first depth of each
/// run of levels with the same grouping of the ranks), excluding the first and last levels.
pub fn split_depths(model: &Hier, n: u32) -> Vec<usize> {
    let used = model.used_levels(n);
    // a pair meeting at depth d − 1 means the depth-d nodes separate ranks
    (1..used.len())
        .filter(|&d| used[d - 1] && used[d..].iter().any(|&u| u))
        .collect()
}

/// A leaders broadcast of `m` blocks from `root` to ranks `0 … n−1` under `model` (module docs).
///
/// # Errors
/// [`ScheduleError::NotApplicable`] for an invalid spec (depths not increasing or out of range,
/// wrong number of algorithms, an algorithm that is not a tree, the optimal tree for `m > 1`);
/// [`ScheduleError`] for a bad problem or model errors.
pub fn leaders(
    model: &Hier,
    n: u32,
    m: u32,
    root: u32,
    spec: &Leaders,
) -> Result<Schedule, ScheduleError> {
    let collective = broadcast(n, m, root)?;
    let depth = model.hierarchy().depth();
    let bad = |why: &str| Err(not(spec.describe(model.hierarchy()), why));
    if spec.algorithms.len() != spec.split.len() + 1 {
        return bad("give one algorithm per stage (split depths + 1)");
    }
    if spec.split.windows(2).any(|w| w[0] >= w[1])
        || spec.split.iter().any(|&d| d == 0 || d >= depth)
    {
        return bad("split depths must increase strictly, within 1 .. the PU level");
    }
    if let Some(&a) = spec
        .algorithms
        .iter()
        .find(|&&a| !Leaders::stage_algorithm_ok(a))
    {
        return Err(not(
            a,
            "a leaders stage takes a tree: optimal, binomial, knomial, binary, dtree, chain, star",
        ));
    }
    let pairs = rules(model, n)?;
    let mut build = Build {
        model,
        pairs: &pairs,
        spec,
        m,
        stages: vec![Vec::new(); n as usize],
    };
    let members = ordered_members(model, (0..n).collect(), root);
    build.stage(members, 0)?;
    let orders = Orders::from_fn(n, |p, out| {
        let mine = &build.stages[p as usize];
        for b in 0..m {
            for stage in mine {
                out.extend(stage.iter().filter(|&&(_, w)| w == b));
            }
        }
    })?;
    place_pairs(n, collective, &orders, &pairs)
}

/// The members of stage `stage` of a leaders broadcast with depths `split` from `root` to ranks
/// `0 … n−1` in the group that holds the root, in stage order (the root first): the subproblem
/// the planner simulates to choose that stage's algorithm.
///
/// Depths outside the hierarchy are ignored; a `stage` beyond the split is the last stage.
pub fn stage_members(model: &Hier, n: u32, root: u32, split: &[usize], stage: usize) -> Vec<u32> {
    let h = model.hierarchy();
    let mut members = ordered_members(model, (0..n).collect(), root);
    let inside = |d: &&usize| **d < h.depth();
    for &d in split.iter().take(stage).filter(inside) {
        let node = h.node_of(d, model.pu(root) as usize);
        members.retain(|&r| h.node_of(d, model.pu(r) as usize) == node);
    }
    let Some(&d) = split.get(stage).filter(inside) else {
        return members;
    };
    // the first member of each depth-d node, in member order
    let mut seen = Vec::new();
    members.retain(|&r| {
        let node = h.node_of(d, model.pu(r) as usize);
        let first = !seen.contains(&node);
        if first {
            seen.push(node);
        }
        first
    });
    members
}

/// `ranks` ordered for a stage rooted at `leader`: by PU index relative to the leader's PU, then
/// by rank, the leader first.
fn ordered_members(model: &Hier, mut ranks: Vec<u32>, leader: u32) -> Vec<u32> {
    let pus = model.hierarchy().pu_count() as u64;
    let base = u64::from(model.pu(leader));
    ranks.sort_by_key(|&r| {
        let rel = (u64::from(model.pu(r)) + pus - base) % pus;
        (r != leader, rel, r)
    });
    ranks
}

/// Working state of a leaders build.
struct Build<'a> {
    model: &'a Hier,
    pairs: &'a PairTiming,
    spec: &'a Leaders,
    m: u32,
    /// Per rank, its send orders per stage it sends in (stage order).
    stages: Vec<Vec<Vec<(u32, u32)>>>,
}

impl Build<'_> {
    /// Stage `i` inside the group `members` (its leader first).
    fn stage(&mut self, members: Vec<u32>, i: usize) -> Result<(), ScheduleError> {
        let algorithm = self.spec.algorithms[i];
        let Some(&d) = self.spec.split.get(i) else {
            return self.broadcast(&members, algorithm);
        };
        let h = self.model.hierarchy();
        // parts in member order: the leader's part first; each led by its first member
        let mut parts: Vec<(usize, Vec<u32>)> = Vec::new();
        for &r in &members {
            let node = h.node_of(d, self.model.pu(r) as usize);
            match parts.iter_mut().find(|(k, _)| *k == node) {
                Some((_, v)) => v.push(r),
                None => parts.push((node, vec![r])),
            }
        }
        let heads: Vec<u32> = parts.iter().map(|(_, v)| v[0]).collect();
        self.broadcast(&heads, algorithm)?;
        for (_, part) in parts {
            let leader = part[0];
            self.stage(ordered_members(self.model, part, leader), i + 1)?;
        }
        Ok(())
    }

    /// A flat broadcast among `members` (`members[0]` the stage root), recorded as one stage of
    /// each member's orders.
    fn broadcast(&mut self, members: &[u32], algorithm: Algorithm) -> Result<(), ScheduleError> {
        let k = members.len() as u32;
        if k <= 1 {
            return Ok(());
        }
        let orders = match algorithm {
            Algorithm::Optimal => self.optimal_orders(members)?,
            Algorithm::ScatterAllgather => None,
            other => classic::orders(other, k, self.m)?,
        }
        .ok_or_else(|| not(algorithm, "not a tree for a leaders stage"))?;
        for v in 0..k {
            let sends: Vec<(u32, u32)> = orders
                .of_processor(v)
                .iter()
                .map(|&(to, what)| (members[to as usize], what))
                .collect();
            if !sends.is_empty() {
                self.stages[members[v as usize] as usize].push(sends);
            }
        }
        Ok(())
    }

    /// The flat model's optimal single-block tree for the level where the stage root meets its
    /// first member.
    fn optimal_orders(&self, members: &[u32]) -> Result<Option<Orders>, ScheduleError> {
        if self.m != 1 {
            return Err(not(
                Algorithm::Optimal,
                "the optimal trees (BCAST, B(P)) broadcast one block",
            ));
        }
        let level = self.pairs.class(members[0], members[1]);
        let k = members.len() as u32;
        let cost = self.model.levels()[level]
            .cost
            .ok_or_else(|| not(Algorithm::Optimal, "the stage's level has no parameters"))?;
        let flat = match cost {
            LevelCost::Postal(p) => super::postal::bcast(k, &p)?,
            LevelCost::LogP(l) => super::logp::bp(k, &l)?,
        };
        Ok(Some(Orders::of(&flat)))
    }
}

/// The greedy earliest-arrival broadcast of `m` blocks from `root` to ranks `0 … n−1` under
/// `model` (module docs).
///
/// # Errors
/// [`ScheduleError`] for a bad problem or model errors.
///
/// # Examples
///
/// ```
/// use herald::{check, Hierarchy, model::LevelKind::*, Model, Ratio, model::{Hier, HierLevel}, schedule::earliest_arrival};
/// let h = Hierarchy::uniform(&[(Package, 2), (Core, 2), (Pu, 1)])?;
/// let levels = vec![
///     HierLevel::postal(Ratio::integer(9))?,
///     HierLevel::postal(Ratio::integer(1))?,
///     HierLevel::default(),
///     HierLevel::default(),
/// ];
/// let hier = Hier::compact(h, levels)?;
/// let s = earliest_arrival(&hier, 4, 1, 0)?;
/// // 0 informs its package neighbour 1 at time 1, then 0 and 1 each send across: 1 + 9 = 10.
/// let report = check(&s, &Model::from(hier))?;
/// assert_eq!(report.format(report.makespan()), "10");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn earliest_arrival(
    model: &Hier,
    n: u32,
    m: u32,
    root: u32,
) -> Result<Schedule, ScheduleError> {
    let collective = broadcast(n, m, root)?;
    let pairs = rules(model, n)?;
    let h = model.hierarchy();
    let depth = h.depth();
    let pu = |r: u32| model.pu(r) as usize;
    // uninformed ranks per node, per depth
    let mut left: Vec<Vec<u32>> = (0..depth).map(|d| vec![0; h.level(d).len()]).collect();
    for r in 0..n {
        for (d, counts) in left.iter_mut().enumerate() {
            counts[h.node_of(d, pu(r))] += 1;
        }
    }
    let mut informed = vec![false; n as usize];
    let mut avail: Vec<Ticks> = vec![0; n as usize];
    let mut next_start: Vec<Ticks> = vec![0; n as usize];
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    let mut members: Vec<u32> = vec![root];
    let inform = |q: u32, left: &mut Vec<Vec<u32>>, informed: &mut Vec<bool>| {
        informed[q as usize] = true;
        for (d, counts) in left.iter_mut().enumerate() {
            counts[h.node_of(d, pu(q))] -= 1;
        }
    };
    inform(root, &mut left, &mut informed);
    for _ in 1..n {
        // the best (arrival, p, level) over informed p and the levels where p has uninformed peers
        let mut best: Option<(Ticks, u32, usize)> = None;
        for &p in &members {
            let start = next_start[p as usize].max(avail[p as usize]);
            for d in 0..depth {
                let here = left[d][h.node_of(d, pu(p))];
                let below = if d + 1 < depth {
                    left[d + 1][h.node_of(d + 1, pu(p))]
                } else {
                    0
                };
                if here > below {
                    let arrival = time::add(start, pairs.timing(d).latency)?;
                    if best.is_none_or(|b| (arrival, p, d) < b) {
                        best = Some((arrival, p, d));
                    }
                }
            }
        }
        let Some((arrival, p, d)) = best else {
            break;
        };
        let q = (0..n)
            .find(|&q| !informed[q as usize] && pairs.class(p, q) == d)
            .ok_or_else(|| not(Algorithm::Earliest, "internal: no rank at the chosen level"))?;
        let t = pairs.timing(d);
        let start = next_start[p as usize].max(avail[p as usize]);
        next_start[p as usize] = time::add(start, t.send_step())?;
        avail[q as usize] = arrival;
        children[p as usize].push(q);
        members.push(q);
        inform(q, &mut left, &mut informed);
    }
    let orders = Orders::from_fn(n, |p, out| {
        for b in 0..m {
            out.extend(children[p as usize].iter().map(|&c| (c, b)));
        }
    })?;
    place_pairs(n, collective, &orders, &pairs)
}
