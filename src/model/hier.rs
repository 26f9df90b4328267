//! The hierarchical model: postal or LogGP parameters per level of a machine [`Hierarchy`],
//! a message paying the costs of the level where its sender and receiver meet.
//!
//! The papers give one latency for every pair of processors and leave hierarchies of λ open;
//! on a multicore the cost of a message depends on the pair (two hardware threads of one core,
//! two cores under one L3, two packages). This model is herald's answer, checked exactly like the
//! flat models.
//!
//! # Rules (as the checker applies them)
//!
//! Rank `r` runs on logical PU `pu(r)` of the hierarchy (a rank map, repeated cyclically when
//! there are more ranks than entries). Every level `d` (0 is the machine) has either no
//! parameters or the parameters of one flat model — all levels postal, or all levels LogGP —
//! and optionally a boundary capacity `w_d`. All parameters share one [`TimeBase`], the least
//! one in which every level's parameters are whole.
//!
//! A send from rank `p` to rank `q` starting at `t` has the *level* `ℓ` = the depth of the lowest
//! common ancestor of `pu(p)` and `pu(q)` ([`Hierarchy::lca_level`]; the PU level itself when two
//! ranks share a PU), and takes the [`Timing`] `T` of level `ℓ`'s flat model:
//!
//! 1. `p` is busy sending during `[t, t + T.send_busy)`, `q` busy receiving during
//!    `[t + T.latency − T.recv_busy, t + T.latency)`, and `q` holds the payload from
//!    `t + T.latency` (it may forward it in a send starting at that tick);
//! 2. two consecutive sends `s, s'` of one processor start at least `T(s).send_busy` and
//!    `T(s).send_gap` apart (the earlier send's level decides);
//! 3. two consecutive receives `r, r'` of one processor, in order of their receive starts, start
//!    at least `T(r).recv_busy` and `T(r).recv_gap` apart;
//! 4. LogGP: a processor's send intervals never meet its receive intervals (one CPU);
//! 5. LogGP in-flight capacity: a message is in transit during `[t + T.transit.0,
//!    t + T.transit.1)`; at the start of every message's transit, the messages from its sender
//!    then in transit (itself included) number at most the least capacity `⌈L/g⌉` among their
//!    levels, and likewise the messages to its receiver;
//! 6. boundary capacity: a message of level `ℓ` crosses, for every depth `e > ℓ` with a capacity
//!    `w_e`, the boundary of the depth-`e` node holding `pu(p)` outwards and that of the node
//!    holding `pu(q)` inwards, during `[t, t + T.latency)`. At the start of every message, the
//!    messages crossing one boundary in one direction (itself included) number at most `w_e` —
//!    the fat-tree view of the socket hierarchy, where a node's boundary is its channel to its
//!    parent.
//!
//! When every level has the same parameters and no capacity, rules 1–5 are exactly the flat
//! model's (`tests/hier.rs` checks this on random schedules).
//!
//! # Lower bound (broadcast of `m` blocks to `n` ranks)
//!
//! The larger of two bounds, both from the levels that occur among ranks `0 … n−1`:
//!
//! * the flat bound of the *relaxed* timing — each quantity (send and receive busy times and gaps,
//!   latency) the least over those levels: every real message costs at least as much, so the
//!   universal-tree count of informed ranks bounds the real one, and the root's last distinct
//!   block leaves after `m − 1` relaxed send steps;
//! * the cross-level bound: at the first depth where the ranks split into several nodes, some
//!   node does not hold the root and must receive a message of the level above, so the makespan
//!   is at least `(m − 1)` relaxed send steps plus that level's latency.
//!
//! # From a profile
//!
//! [`Hier::from_profile`] takes each level's LogGP parameters from the calibrated level of the
//! same name. A level that ranks need but the profile did not measure (a synthetic 2-socket
//! machine's package and machine levels, on a one-socket machine) is never invented silently: it
//! takes the parameters of the nearest finer level that has some, every parameter (`L`, `o`,
//! `g`, `G`) multiplied by [`Assumptions::factor`] (default 2), and its [`LevelSource`] says so.
//! The caller may override any level with explicit parameters ([`Assumptions::levels`]).
//! Boundary capacities come from the profile's concurrency probe of the level above (`transfers`
//! concurrent transfers between the children of a node cross their boundaries), when it was
//! measured exactly (not `at_least`); otherwise none.

use super::{
    CostModel, Hierarchy, LogP, ModelError, Pick, Postal, Problem, Profile, ProfileError, Timing,
};
use crate::time::{self, Ratio, Ticks, TimeBase, TimeError};
use std::fmt;
use std::sync::Arc;

mod levels;
use levels::mul_ratio;
pub use levels::{Assumptions, HierLevel, LevelCost, LevelSource};

mod pairs;
pub(crate) use pairs::{Crossing, PairTiming};

/// The hierarchical model (module docs): per-level postal or LogGP costs, a rank → PU map, and
/// optional boundary capacities.
///
/// # Examples
///
/// ```
/// use herald::{check, generate, Algorithm, Hierarchy, model::LevelKind::*, Model, Ratio, Request, model::{Hier, HierLevel}};
/// // Two packages of two cores; crossing packages costs λ = 10, inside a package λ = 2.
/// let h = Hierarchy::uniform(&[(Package, 2), (Core, 2), (Pu, 1)])?;
/// let levels = vec![
///     HierLevel::postal(Ratio::integer(10))?, // machine: ranks in different packages
///     HierLevel::postal(Ratio::integer(2))?,  // package: different cores of one package
///     HierLevel::default(),                   // core: one PU per core, no pair meets here
///     HierLevel::default(),                   // pu
/// ];
/// let model = Model::from(Hier::compact(h, levels)?);
/// // A chain 0 → 1 → 2 → 3 crosses packages once: 2 + 10 + 2.
/// let report = check(&generate(&Request::broadcast(Algorithm::Chain, 4, 1, 0), &model)?, &model)?;
/// assert_eq!(report.format(report.makespan()), "14");
/// assert_eq!(report.format(report.lower_bound().unwrap()), "10");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hier {
    /// The machine.
    hierarchy: Arc<Hierarchy>,
    /// Logical PU of each rank of one cycle of the map (rank `r` on `ranks[r mod len]`).
    ranks: Vec<u32>,
    /// One entry per hierarchy level, machine first.
    levels: Vec<HierLevel>,
    /// Where each level's parameters came from.
    sources: Vec<LevelSource>,
    /// Bytes per message (LogGP levels).
    bytes: u64,
}

fn bad(name: &'static str, value: impl ToString, why: &'static str) -> ModelError {
    ModelError::Parameter {
        name,
        value: value.to_string(),
        why,
    }
}

impl Hier {
    /// The model of `hierarchy` with ranks on the PUs of OS indices `cpus` (one cycle of a rank
    /// map, e.g. `RankMap::order`; rank `r` runs on `cpus[r mod len]`) and one [`HierLevel`] per
    /// hierarchy level, machine first.
    ///
    /// # Errors
    /// [`ModelError::Parameter`] if `levels` does not have one entry per level, `cpus` is empty
    /// or names an unknown PU, levels mix postal and LogGP, a capacity is 0 or set on the machine
    /// level, no level has costs, a level where two ranks of the map meet has none, or the
    /// levels need too fine a common tick.
    pub fn new(
        hierarchy: Hierarchy,
        cpus: &[usize],
        levels: Vec<HierLevel>,
    ) -> Result<Hier, ModelError> {
        let sources = vec![LevelSource::Given; levels.len()];
        Hier::build(hierarchy, cpus, levels, sources)
    }

    /// [`Hier::new`] with ranks in the hierarchy's logical order (the compact map).
    ///
    /// # Errors
    /// As [`Hier::new`].
    pub fn compact(hierarchy: Hierarchy, levels: Vec<HierLevel>) -> Result<Hier, ModelError> {
        let cpus = hierarchy.os_indices().to_vec();
        Hier::new(hierarchy, &cpus, levels)
    }

    fn build(
        hierarchy: Hierarchy,
        cpus: &[usize],
        levels: Vec<HierLevel>,
        sources: Vec<LevelSource>,
    ) -> Result<Hier, ModelError> {
        if levels.len() != hierarchy.depth() {
            return Err(bad(
                "levels",
                levels.len(),
                "give one entry per hierarchy level, machine to pu",
            ));
        }
        if cpus.is_empty() {
            return Err(bad("ranks", 0, "the rank map is empty"));
        }
        let ranks =
            cpus.iter()
                .map(|&os| {
                    hierarchy.pu_of_os(os).map(|pu| pu as u32).ok_or_else(|| {
                        bad("ranks", os, "the rank map names a PU not in the hierarchy")
                    })
                })
                .collect::<Result<Vec<u32>, ModelError>>()?;
        let mut family = None;
        for (d, level) in levels.iter().enumerate() {
            if let Some(cost) = level.cost {
                if family.is_some_and(|f| f != cost.family()) {
                    return Err(bad(
                        "levels",
                        hierarchy.level(d).name(),
                        "all levels must be postal, or all LogGP",
                    ));
                }
                family = Some(cost.family());
            }
            match level.capacity {
                Some(0) => {
                    return Err(bad(
                        "capacity",
                        hierarchy.level(d).name(),
                        "a boundary capacity is at least 1",
                    ))
                }
                Some(_) if d == 0 => {
                    return Err(bad(
                        "capacity",
                        "machine",
                        "the machine level has no boundary",
                    ))
                }
                _ => {}
            }
        }
        if family.is_none() {
            return Err(bad("levels", "none", "no level has parameters"));
        }
        let model = Hier {
            hierarchy: Arc::new(hierarchy),
            ranks,
            levels,
            sources,
            bytes: 1,
        };
        let used = model.used_levels(model.ranks.len() as u32);
        if let Some(d) = (0..used.len()).find(|&d| used[d] && model.levels[d].cost.is_none()) {
            return Err(bad(
                "levels",
                model.hierarchy.level(d).name(),
                "ranks meet at this level but it has no parameters",
            ));
        }
        model.time_base()?;
        Ok(model)
    }

    /// The model from a calibrated profile (module docs): LogGP levels in nanoseconds, measured
    /// by name, unmeasured levels assumed as `assume` says, ranks on `cpus` (OS indices).
    ///
    /// # Errors
    /// [`ProfileError::NoLevel`] if a level ranks need has no parameters and no finer level to
    /// assume them from; [`ProfileError::Model`] for invalid values or a bad rank map.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{Profile, Ratio, model::{Assumptions, Hier, LevelKind, LevelSource}, topology::parse_synthetic};
    /// # let profile = Profile::from_json(include_str!("../../tests/data/profile-2core.json"))?;
    /// // `profile` measured only `l3` (a machine of two cores under one L3).
    /// let h = parse_synthetic("pack:2 l3:2 core:4 pu:1")?;
    /// let (l3, package) = (h.find(LevelKind::Cache(3)).unwrap(), h.find(LevelKind::Package).unwrap());
    /// let cpus = h.os_indices().to_vec();
    /// let model = Hier::from_profile(&profile, h, &cpus, &Assumptions::default())?;
    /// assert_eq!(model.sources()[l3], LevelSource::Measured("l3".into()));
    /// // ranks in different L3s of one package meet at the package level: 2 × l3, stated
    /// let assumed = LevelSource::Assumed { from: "l3".into(), factor: Ratio::integer(2) };
    /// assert_eq!(model.sources()[package], assumed);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_profile(
        profile: &Profile,
        hierarchy: Hierarchy,
        cpus: &[usize],
        assume: &Assumptions,
    ) -> Result<Hier, ProfileError> {
        let depth = hierarchy.depth();
        let mut levels = vec![HierLevel::default(); depth];
        let mut sources = vec![LevelSource::Unused; depth];
        for d in 0..depth {
            let name = hierarchy.level(d).name();
            if let Some((_, given)) = assume.levels.iter().find(|(n, _)| *n == name) {
                levels[d] = *given;
                sources[d] = LevelSource::Given;
                continue;
            }
            if let Some(lp) = profile.measured_levels().find(|l| l.name == name) {
                levels[d].cost = Some(LevelCost::LogP(lp.logp(assume.pick)?));
                sources[d] = LevelSource::Measured(lp.name.clone());
            }
            // The probe between the children of a node at depth d − 1 bounds crossings of the
            // children's boundaries (depth d).
            if d >= 1 {
                let above = hierarchy.level(d - 1).name();
                let cap = profile
                    .levels
                    .iter()
                    .find(|l| l.name == above)
                    .and_then(|l| l.capacity.as_ref())
                    .filter(|c| !c.at_least && c.transfers > 0);
                if let Some(c) = cap {
                    levels[d].capacity = Some(c.transfers);
                }
            }
        }
        // Rank pairs must meet only at levels with parameters: assume the missing ones from the
        // nearest finer level, bottom up, so an assumption may build on another.
        let probe = Hier {
            hierarchy: Arc::new(hierarchy),
            ranks: Vec::new(),
            levels: levels.clone(),
            sources: sources.clone(),
            bytes: 1,
        };
        let ranks = cpus
            .iter()
            .map(|&os| probe.hierarchy.pu_of_os(os).map(|p| p as u32))
            .collect::<Option<Vec<u32>>>()
            .ok_or_else(|| {
                ProfileError::Model(bad(
                    "ranks",
                    "map",
                    "the rank map names a PU not in the hierarchy",
                ))
            })?;
        let probe = Hier { ranks, ..probe };
        let used = probe.used_levels(probe.ranks.len() as u32);
        for d in (0..depth).rev() {
            if !used[d] || levels[d].cost.is_some() {
                continue;
            }
            let finer = (d + 1..depth).find(|&e| levels[e].cost.is_some());
            let Some(e) = finer else {
                return Err(ProfileError::NoLevel(probe.hierarchy.level(d).name()));
            };
            let base = levels[e].cost.expect("found with costs");
            levels[d].cost = Some(base.scaled(assume.factor)?);
            let (from, factor) = match &sources[e] {
                LevelSource::Assumed { from, factor } => (
                    from.clone(),
                    mul_ratio(*factor, assume.factor).map_err(ModelError::from)?,
                ),
                _ => (probe.hierarchy.level(e).name(), assume.factor),
            };
            sources[d] = LevelSource::Assumed { from, factor };
        }
        let hierarchy = Arc::try_unwrap(probe.hierarchy).unwrap_or_else(|h| (*h).clone());
        Ok(Hier::build(hierarchy, cpus, levels, sources)?)
    }

    /// The same model with messages of `bytes` bytes on every LogGP level.
    ///
    /// # Errors
    /// [`ModelError::Parameter`] if `bytes == 0`.
    pub fn with_bytes(&self, bytes: u64) -> Result<Hier, ModelError> {
        let levels = self
            .levels
            .iter()
            .map(|l| {
                Ok(HierLevel {
                    cost: l.cost.map(|c| c.with_bytes(bytes)).transpose()?,
                    ..*l
                })
            })
            .collect::<Result<Vec<_>, ModelError>>()?;
        if bytes == 0 {
            return Err(bad("bytes", 0, "a message has at least one byte"));
        }
        Ok(Hier {
            levels,
            bytes,
            ..self.clone()
        })
    }

    /// The same machine with ranks `ranks[i]` of this model renumbered `0 … len−1` (the
    /// subproblem among some ranks, e.g. the leaders of one stage of a hierarchical broadcast).
    ///
    /// # Errors
    /// [`ModelError::Parameter`] if `ranks` is empty.
    pub fn restrict(&self, ranks: &[u32]) -> Result<Hier, ModelError> {
        if ranks.is_empty() {
            return Err(bad("ranks", 0, "the rank map is empty"));
        }
        Ok(Hier {
            ranks: ranks.iter().map(|&r| self.pu(r)).collect(),
            ..self.clone()
        })
    }

    /// The hierarchy.
    pub fn hierarchy(&self) -> &Hierarchy {
        &self.hierarchy
    }

    /// The levels, machine first.
    pub fn levels(&self) -> &[HierLevel] {
        &self.levels
    }

    /// Where each level's parameters came from.
    pub fn sources(&self) -> &[LevelSource] {
        &self.sources
    }

    /// Bytes per message.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// `postal` or `logp` (the family of the levels' costs).
    pub fn family(&self) -> &'static str {
        self.levels
            .iter()
            .find_map(|l| l.cost.map(|c| c.family()))
            .unwrap_or("postal")
    }

    /// The logical PU rank `r` runs on.
    pub fn pu(&self, r: u32) -> u32 {
        self.ranks[r as usize % self.ranks.len()]
    }

    /// The level (depth) at which ranks `p` and `q` meet.
    pub fn level_of(&self, p: u32, q: u32) -> usize {
        self.hierarchy
            .lca_level(self.pu(p) as usize, self.pu(q) as usize)
    }

    /// Which levels some pair of ranks among `0 … n−1` meets at.
    pub fn used_levels(&self, n: u32) -> Vec<bool> {
        let h = &self.hierarchy;
        let depth = h.depth();
        let mut used = vec![false; depth];
        if self.ranks.is_empty() {
            return used;
        }
        let mut pus: Vec<u32> = (0..n).map(|r| self.pu(r)).collect();
        pus.sort_unstable();
        used[depth - 1] = pus.windows(2).any(|w| w[0] == w[1]);
        pus.dedup();
        // Level d is used iff two distinct PUs share their depth-d node but not the depth-(d+1)
        // one: consecutive PUs in logical order suffice, since nodes are contiguous ranges.
        for w in pus.windows(2) {
            let d = h.lca_level(w[0] as usize, w[1] as usize);
            used[d] = true;
        }
        used
    }

    /// The per-pair rules for ranks `0 … n−1` in `base` (a multiple of the model's base).
    pub(crate) fn pair_timing(&self, n: u32, base: TimeBase) -> Result<PairTiming, ModelError> {
        let used = self.used_levels(n);
        let mut table = Vec::with_capacity(self.levels.len());
        for (d, level) in self.levels.iter().enumerate() {
            let t = match level.cost {
                Some(c) => Some(c.as_dyn().timing(base)?),
                None if used[d] => {
                    let why = if d + 1 == self.levels.len() {
                        "two ranks share a PU (more ranks than the rank map has PUs), and the pu \
                         level has no parameters"
                    } else {
                        "ranks meet at this level but it has no parameters"
                    };
                    return Err(bad("levels", self.hierarchy.level(d).name(), why));
                }
                None => None,
            };
            table.push(t);
        }
        Ok(PairTiming {
            table,
            pus: (0..n).map(|r| self.pu(r)).collect(),
            hierarchy: Arc::clone(&self.hierarchy),
            capacity: self.levels.iter().map(|l| l.capacity).collect(),
            used,
        })
    }

    /// The relaxed timing of ranks `0 … n−1`: each quantity the least over the levels they meet
    /// at (module docs); no capacity. A lower bound for any schedule's costs.
    ///
    /// # Errors
    /// [`ModelError`] on time errors or a used level without parameters.
    pub fn relaxed_timing(&self, n: u32, base: TimeBase) -> Result<Timing, ModelError> {
        let pairs = self.pair_timing(n, base)?;
        let mut used = pairs.used_timings();
        let Some(first) = used.next() else {
            // one rank: nothing is sent; any timing serves
            return self.any_timing(base);
        };
        Ok(used.fold(relaxed(first), |acc, t| Timing {
            send_busy: acc.send_busy.min(t.send_busy),
            recv_busy: acc.recv_busy.min(t.recv_busy),
            latency: acc.latency.min(t.latency),
            send_gap: acc.send_gap.min(t.send_gap),
            recv_gap: acc.recv_gap.min(t.recv_gap),
            combine: acc.combine.min(t.combine),
            ..acc
        }))
    }

    /// The timing of some level with parameters.
    fn any_timing(&self, base: TimeBase) -> Result<Timing, ModelError> {
        let cost = self
            .levels
            .iter()
            .find_map(|l| l.cost)
            .ok_or_else(|| bad("levels", "none", "no level has parameters"))?;
        Ok(relaxed(cost.as_dyn().timing(base)?))
    }
}

/// `t` without capacity or transit (the relaxed form).
fn relaxed(t: Timing) -> Timing {
    Timing {
        capacity: None,
        transit: (0, 0),
        ..t
    }
}

impl CostModel for Hier {
    fn name(&self) -> &'static str {
        "hier"
    }

    /// Every level's parameters, machine first (names repeat across levels).
    fn params(&self) -> Vec<(&'static str, Ratio)> {
        self.levels
            .iter()
            .filter_map(|l| l.cost)
            .flat_map(|c| c.as_dyn().params())
            .collect()
    }

    fn time_base(&self) -> Result<TimeBase, ModelError> {
        let mut base = TimeBase::UNIT;
        for cost in self.levels.iter().filter_map(|l| l.cost) {
            base = base.refine(cost.as_dyn().time_base()?.ticks_per_unit())?;
        }
        Ok(base)
    }

    /// The hierarchical model has no uniform timing: a message's costs depend on the pair of
    /// ranks (module docs). The checker and the placement use the per-pair rules.
    fn timing(&self, _base: TimeBase) -> Result<Timing, ModelError> {
        Err(bad(
            "model",
            "hier",
            "the hierarchical model's timing depends on the pair of ranks (no uniform timing)",
        ))
    }

    /// The larger of the relaxed flat bound and the cross-level bound (module docs).
    fn broadcast_lower_bound(&self, p: Problem, base: TimeBase) -> Result<Ticks, ModelError> {
        if p.n <= 1 {
            return Ok(0);
        }
        let relaxed = self.relaxed_timing(p.n, base)?;
        let pipeline = time::mul(relaxed.send_step(), u64::from(p.m.saturating_sub(1)))?;
        let flat = time::add(relaxed.universal_tree().index(u64::from(p.n))?, pipeline)?;
        let pairs = self.pair_timing(p.n, base)?;
        // The top level ranks meet at: the shallowest used one.
        let top = pairs
            .used
            .iter()
            .position(|&u| u)
            .and_then(|d| pairs.table[d])
            .map_or(0, |t| t.latency);
        Ok(flat.max(time::add(top, pipeline)?))
    }

    fn hierarchical(&self) -> Option<&Hier> {
        Some(self)
    }
}
