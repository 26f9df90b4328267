//! The per-pair rules of a hierarchical model, resolved in one tick base ([`PairTiming`]).

use super::*;

/// One boundary crossing of a message: `(key, capacity)`, the key naming the depth, node and
/// direction.
pub(crate) type Crossing = (u64, u32);

/// The per-pair rules of a [`Hier`] model for ranks `0 … n−1`, resolved in one tick base: what
/// the checker and the placement use.
#[derive(Debug, Clone)]
pub(crate) struct PairTiming {
    /// Timing per level (`None` for a level without parameters, which no pair uses).
    pub(super) table: Vec<Option<Timing>>,
    /// Logical PU of each rank.
    pub(super) pus: Vec<u32>,
    /// The machine.
    pub(super) hierarchy: Arc<Hierarchy>,
    /// Boundary capacity per depth.
    pub(super) capacity: Vec<Option<u32>>,
    /// Which levels some pair of ranks meets at.
    pub(super) used: Vec<bool>,
}

impl PairTiming {
    /// The level of the pair `p, q` (both `< n`): the class index into the timing table.
    pub(crate) fn class(&self, p: u32, q: u32) -> usize {
        self.hierarchy
            .lca_level(self.pus[p as usize] as usize, self.pus[q as usize] as usize)
    }

    /// The number of classes (levels).
    pub(crate) fn classes(&self) -> usize {
        self.table.len()
    }

    /// The timing of class `c`; a class no pair uses may have none (then the first used one is
    /// returned, never applied to a message).
    pub(crate) fn timing(&self, c: usize) -> Timing {
        match self.table.get(c).copied().flatten() {
            Some(t) => t,
            None => self
                .table
                .iter()
                .flatten()
                .copied()
                .next()
                .expect("a built model has a level with parameters"),
        }
    }

    /// The timings of the levels in use.
    pub(crate) fn used_timings(&self) -> impl Iterator<Item = Timing> + '_ {
        self.table
            .iter()
            .zip(&self.used)
            .filter_map(|(t, &u)| if u { *t } else { None })
    }

    /// Whether some boundary has a capacity.
    pub(crate) fn has_boundaries(&self) -> bool {
        self.capacity.iter().any(Option::is_some)
    }

    /// A crossing key in words: `out of package 1`, `into l3 2`.
    pub(crate) fn describe(&self, key: u64) -> String {
        let depth = (key >> 40) as usize;
        let node = (key & ((1 << 40) - 1)) >> 1;
        let name = self
            .hierarchy
            .levels()
            .get(depth)
            .map_or_else(|| format!("level {depth}"), |l| l.name());
        let dir = if key & 1 == 1 { "into" } else { "out of" };
        format!("{dir} {name} {node}")
    }

    /// The bounded boundaries a message from `p` to `q` of class `c` crosses (rule 6).
    pub(crate) fn crossings(&self, p: u32, q: u32, c: usize, out: &mut Vec<Crossing>) {
        out.clear();
        let h = &self.hierarchy;
        for e in c + 1..self.capacity.len() {
            if let Some(w) = self.capacity[e] {
                let from = h.node_of(e, self.pus[p as usize] as usize) as u64;
                let to = h.node_of(e, self.pus[q as usize] as usize) as u64;
                out.push((((e as u64) << 40) | (from << 1), w));
                out.push((((e as u64) << 40) | (to << 1) | 1, w));
            }
        }
    }
}
