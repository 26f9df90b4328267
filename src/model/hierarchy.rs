//! The machine hierarchy as plain data (filled from hwloc or sysfs by `topology`).
//!
//! A [`Hierarchy`] is a tree of levels, from the whole machine at level 0 down to the processing
//! units (PUs, hardware threads) at the last level, with packages, dies, NUMA nodes, groups,
//! caches and cores in between. Every level partitions the PUs, and every node of a level lies
//! inside exactly one node of the level above. PUs are numbered *logically* (`0..pu_count()`)
//! in depth-first order, so the PUs of any node are a contiguous range; each PU also keeps its
//! *OS index*, the number the operating system (and pinning) uses.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;

mod partition;
use partition::{drop_redundant, partition, sort_and_nest};

mod kind;
pub use kind::LevelKind;

/// Why a [`Hierarchy`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HierarchyError {
    /// There are no PUs.
    #[error("a hierarchy needs at least one PU")]
    NoPus,
    /// More PUs than [`MAX_PUS`].
    #[error("too many PUs (at most {MAX_PUS})")]
    TooManyPus,
    /// One OS index is given to two PUs.
    #[error("PU OS index {0} appears twice")]
    DuplicatePu(usize),
    /// A level name is not known.
    #[error("unknown level kind {0:?}")]
    UnknownKind(String),
    /// The machine and PU levels are implicit, or a cache level is outside 1 ..= 5.
    #[error("level {0} cannot be given explicitly")]
    BadLevel(LevelKind),
    /// Two levels of the same kind (other than `group`).
    #[error("level {0} appears twice")]
    DuplicateLevel(LevelKind),
    /// A level names a PU that is not in the hierarchy.
    #[error("level {level} names PU {os}, which is not in the hierarchy")]
    UnknownPu {
        /// The level.
        level: LevelKind,
        /// The unknown OS index.
        os: usize,
    },
    /// A level does not split the PUs into disjoint, non-empty, covering groups.
    #[error("level {level} does not partition the PUs: {why}")]
    NotPartition {
        /// The level.
        level: LevelKind,
        /// What is wrong.
        why: &'static str,
    },
    /// A node of one level spans two nodes of the level above.
    #[error("level {level} does not nest inside level {above}")]
    NotNested {
        /// The finer level.
        level: LevelKind,
        /// The coarser level it should nest in.
        above: LevelKind,
    },
    /// Serialized hierarchy data are inconsistent.
    #[error("invalid hierarchy data: {0}")]
    Invalid(&'static str),
}

/// The largest number of PUs a [`Hierarchy`] may have.
pub const MAX_PUS: usize = 1 << 16;

/// One node of a level: a machine, a package, a cache, a core, a PU, …
///
/// # Examples
///
/// ```
/// use herald::{Hierarchy, model::LevelKind::*};
/// let h = Hierarchy::uniform(&[(Package, 2), (Core, 2), (Pu, 2)])?;
/// let package1 = &h.level(1).nodes()[1];
/// assert_eq!((package1.pus(), package1.parent(), package1.children()), (4..8, Some(0), 2..4));
/// # Ok::<(), herald::model::HierarchyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Logical PUs under this node (contiguous).
    pus: Range<usize>,
    /// Index of the parent in the level above (`None` for the machine).
    parent: Option<usize>,
    /// Indices of the children in the level below (contiguous; empty for a PU).
    children: Range<usize>,
}

impl Node {
    /// The logical indices of the PUs under this node.
    pub fn pus(&self) -> Range<usize> {
        self.pus.clone()
    }

    /// The number of PUs under this node.
    pub fn pu_count(&self) -> usize {
        self.pus.len()
    }

    /// The index of this node's parent in the level above (`None` for the machine).
    pub fn parent(&self) -> Option<usize> {
        self.parent
    }

    /// The indices of this node's children in the level below (empty for a PU).
    pub fn children(&self) -> Range<usize> {
        self.children.clone()
    }
}

/// One level of a [`Hierarchy`]: its kind and its nodes, in logical order.
///
/// # Examples
///
/// ```
/// use herald::{Hierarchy, model::LevelKind::*};
/// let h = Hierarchy::uniform(&[(Package, 2), (Cache(3), 2), (Core, 4), (Pu, 2)])?;
/// let l3 = h.level(2);
/// assert_eq!((l3.name(), l3.len(), l3.pus_per_node(), l3.arity()), ("l3".into(), 4, Some(8), Some(4)));
/// # Ok::<(), herald::model::HierarchyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Level {
    kind: LevelKind,
    nodes: Vec<Node>,
}

impl Level {
    /// What the nodes are.
    pub fn kind(&self) -> LevelKind {
        self.kind
    }

    /// The level's name (`package`, `l3`, …).
    pub fn name(&self) -> String {
        self.kind.to_string()
    }

    /// The nodes, in logical order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the level has no nodes (never true for a built hierarchy).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The number of PUs under each node, if it is the same for all nodes: the subtree size of
    /// the fat-tree view.
    pub fn pus_per_node(&self) -> Option<usize> {
        uniform(self.nodes.iter().map(Node::pu_count))
    }

    /// The number of children of each node, if it is the same for all nodes (0 for PUs).
    pub fn arity(&self) -> Option<usize> {
        uniform(self.nodes.iter().map(|n| n.children.len()))
    }
}

fn uniform(mut values: impl Iterator<Item = usize>) -> Option<usize> {
    let first = values.next()?;
    values.all(|v| v == first).then_some(first)
}

/// A machine hierarchy: levels from the machine down to the PUs, each PU with its OS index.
///
/// Built from sets of OS indices per level by [`Hierarchy::new`] (what hwloc and sysfs give), or
/// from arities by [`Hierarchy::uniform`]. Queries are cheap: [`Hierarchy::lca_level`] is
/// O(depth), [`Hierarchy::node_of`] is O(1).
///
/// Serializes (serde) as `{"levels": [{"kind": "machine", "sizes": [..]}, …], "os_indices":
/// [..]}`, where `sizes` are the PU counts of the level's nodes in logical order.
///
/// # Examples
///
/// ```
/// use herald::{Hierarchy, model::LevelKind::*};
/// // 2 packages × 2 cores × 2 hardware threads.
/// let h = Hierarchy::uniform(&[(Package, 2), (Core, 2), (Pu, 2)])?;
/// assert_eq!(h.pu_count(), 8);
/// assert_eq!(h.count(Core), 4);
/// assert_eq!(h.level(h.lca_level(0, 1)).kind(), Core); // SMT siblings
/// assert_eq!(h.level(h.lca_level(0, 2)).kind(), Package);
/// assert_eq!(h.level(h.lca_level(0, 7)).kind(), Machine);
/// # Ok::<(), herald::model::HierarchyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "HierarchyData", try_from = "HierarchyData")]
pub struct Hierarchy {
    /// Level 0 is the machine, the last level the PUs.
    levels: Vec<Level>,
    /// OS index of each logical PU.
    os: Vec<usize>,
    /// `node_of[level][pu]`: the node of `level` holding logical PU `pu`.
    node_of: Vec<Vec<u32>>,
    /// OS index → logical PU.
    by_os: HashMap<usize, usize>,
}

/// The serialized form of a [`Hierarchy`].
#[derive(Debug, Clone, Serialize, Deserialize)]
struct HierarchyData {
    levels: Vec<LevelData>,
    os_indices: Vec<usize>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct LevelData {
    kind: LevelKind,
    sizes: Vec<usize>,
}

impl From<Hierarchy> for HierarchyData {
    fn from(h: Hierarchy) -> HierarchyData {
        let levels = h
            .levels
            .iter()
            .map(|l| LevelData {
                kind: l.kind,
                sizes: l.nodes.iter().map(Node::pu_count).collect(),
            })
            .collect();
        HierarchyData {
            levels,
            os_indices: h.os,
        }
    }
}

impl TryFrom<HierarchyData> for Hierarchy {
    type Error = HierarchyError;
    fn try_from(data: HierarchyData) -> Result<Hierarchy, HierarchyError> {
        let levels = data.levels.into_iter().map(|l| (l.kind, l.sizes)).collect();
        Hierarchy::from_sizes(data.os_indices, levels)
    }
}

/// A level while building: its kind and the group of each PU (by position in the PU list).
struct Partition {
    kind: LevelKind,
    label: Vec<usize>,
    groups: usize,
}

impl Partition {
    /// Group labels renumbered by first appearance, to compare partitions.
    fn canonical(&self) -> Vec<usize> {
        let mut map = vec![usize::MAX; self.groups];
        let mut next = 0;
        self.label
            .iter()
            .map(|&g| {
                if map[g] == usize::MAX {
                    map[g] = next;
                    next += 1;
                }
                map[g]
            })
            .collect()
    }
}

impl Hierarchy {
    /// Builds a hierarchy from the OS indices of the PUs and, for each intermediate level (not
    /// the machine, not the PUs), the groups of PUs (by OS index) that share one node.
    ///
    /// Levels may be given in any order: they are sorted coarse to fine (by node count; levels
    /// with identical groups in the order package, die, numa, group, l5 … l1, core). `group` and
    /// `die` levels identical to another level are dropped, as they add no structure. PUs are
    /// numbered in depth-first order, siblings ordered by their smallest OS index.
    ///
    /// # Errors
    ///
    /// [`HierarchyError`] if there are no or too many PUs, an OS index repeats, a level is the
    /// machine or PU level or repeats, a level is not a partition of the PUs, or levels do not
    /// nest.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{Hierarchy, model::LevelKind};
    /// // Two cores with two hardware threads each, numbered the Linux way (siblings i and i+2).
    /// let h = Hierarchy::new(&[0, 1, 2, 3], vec![(LevelKind::Core, vec![vec![0, 2], vec![1, 3]])])?;
    /// assert_eq!(h.os_indices(), &[0, 2, 1, 3]);
    /// assert_eq!(h.level(1).nodes()[1].pus(), 2..4);
    /// # Ok::<(), herald::model::HierarchyError>(())
    /// ```
    pub fn new(
        pus: &[usize],
        levels: Vec<(LevelKind, Vec<Vec<usize>>)>,
    ) -> Result<Hierarchy, HierarchyError> {
        if pus.is_empty() {
            return Err(HierarchyError::NoPus);
        }
        if pus.len() > MAX_PUS {
            return Err(HierarchyError::TooManyPus);
        }
        let mut position = HashMap::with_capacity(pus.len());
        for (i, &os) in pus.iter().enumerate() {
            if position.insert(os, i).is_some() {
                return Err(HierarchyError::DuplicatePu(os));
            }
        }
        let mut parts = Vec::with_capacity(levels.len());
        for (kind, groups) in levels {
            parts.push(partition(kind, &groups, &position)?);
        }
        let parts = drop_redundant(parts)?;
        let parts = sort_and_nest(parts)?;
        // Depth-first order: sort PUs by the smallest OS index of their group at each level.
        let mins: Vec<Vec<usize>> = parts
            .iter()
            .map(|p| {
                let mut min = vec![usize::MAX; p.groups];
                for (i, &g) in p.label.iter().enumerate() {
                    min[g] = min[g].min(pus[i]);
                }
                min
            })
            .collect();
        let mut order: Vec<usize> = (0..pus.len()).collect();
        order.sort_by_key(|&i| {
            let key: Vec<usize> = parts
                .iter()
                .zip(&mins)
                .map(|(p, m)| m[p.label[i]])
                .collect();
            (key, pus[i])
        });
        let mut sized = Vec::with_capacity(parts.len() + 2);
        sized.push((LevelKind::Machine, vec![pus.len()]));
        for p in &parts {
            let mut sizes: Vec<usize> = Vec::new();
            let mut last = usize::MAX;
            for &i in &order {
                if p.label[i] == last {
                    *sizes.last_mut().expect("a group has started") += 1;
                } else {
                    sizes.push(1);
                    last = p.label[i];
                }
            }
            sized.push((p.kind, sizes));
        }
        sized.push((LevelKind::Pu, vec![1; pus.len()]));
        Hierarchy::from_sizes(order.iter().map(|&i| pus[i]).collect(), sized)
    }

    /// Builds a symmetric hierarchy from the arity of each level below the machine, top to
    /// bottom, ending with the PUs; PU OS indices are the logical indices. This is what a
    /// synthetic description such as `pack:2 core:4 pu:2` means.
    ///
    /// # Errors
    ///
    /// [`HierarchyError`] if the list does not end with [`LevelKind::Pu`], names the machine, a
    /// kind twice or an arity of 0, or there are more than [`MAX_PUS`] PUs.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{Hierarchy, model::LevelKind::*};
    /// let h = Hierarchy::uniform(&[(Package, 1), (Cache(3), 1), (Core, 8), (Pu, 1)])?;
    /// assert_eq!(h.depth(), 5);
    /// assert_eq!(h.subtree_sizes(), vec![Some(8), Some(8), Some(8), Some(1), Some(1)]);
    /// # Ok::<(), herald::model::HierarchyError>(())
    /// ```
    pub fn uniform(arities: &[(LevelKind, usize)]) -> Result<Hierarchy, HierarchyError> {
        let Some(((LevelKind::Pu, _), inner)) = arities.split_last() else {
            return Err(HierarchyError::Invalid("the last level must be pu"));
        };
        let mut total = 1usize;
        for &(_, a) in arities {
            if a == 0 {
                return Err(HierarchyError::Invalid("an arity is 0"));
            }
            total = total
                .checked_mul(a)
                .filter(|&t| t <= MAX_PUS)
                .ok_or(HierarchyError::TooManyPus)?;
        }
        let mut levels = Vec::with_capacity(inner.len());
        let mut nodes = 1usize;
        for &(kind, a) in inner {
            nodes *= a;
            let size = total / nodes;
            levels.push((
                kind,
                (0..nodes)
                    .map(|g| (g * size..(g + 1) * size).collect())
                    .collect(),
            ));
        }
        let pus: Vec<usize> = (0..total).collect();
        Hierarchy::new(&pus, levels)
    }

    /// Builds from per-level node sizes (the serialized form), validating everything.
    fn from_sizes(
        os: Vec<usize>,
        levels: Vec<(LevelKind, Vec<usize>)>,
    ) -> Result<Hierarchy, HierarchyError> {
        let n = os.len();
        if n == 0 {
            return Err(HierarchyError::NoPus);
        }
        if n > MAX_PUS {
            return Err(HierarchyError::TooManyPus);
        }
        let mut by_os = HashMap::with_capacity(n);
        for (i, &o) in os.iter().enumerate() {
            if by_os.insert(o, i).is_some() {
                return Err(HierarchyError::DuplicatePu(o));
            }
        }
        match (levels.first(), levels.last()) {
            (Some((LevelKind::Machine, m)), Some((LevelKind::Pu, p)))
                if levels.len() >= 2 && m.len() == 1 && p.len() == n => {}
            _ => {
                return Err(HierarchyError::Invalid(
                    "levels must run from machine to pu",
                ))
            }
        }
        let count = levels.len();
        let mut built: Vec<Level> = Vec::with_capacity(count);
        let mut node_of: Vec<Vec<u32>> = Vec::with_capacity(count);
        for (depth, (kind, sizes)) in levels.into_iter().enumerate() {
            let last = depth + 1 == count;
            if (depth > 0 && kind == LevelKind::Machine) || (!last && kind == LevelKind::Pu) {
                return Err(HierarchyError::Invalid(
                    "machine and pu must be the outer levels",
                ));
            }
            if matches!(kind, LevelKind::Cache(d) if !(1..=5).contains(&d)) {
                return Err(HierarchyError::BadLevel(kind));
            }
            let mut nodes = Vec::with_capacity(sizes.len());
            let mut owner = Vec::with_capacity(n);
            let mut start = 0usize;
            for (index, &size) in sizes.iter().enumerate() {
                let end = start.checked_add(size).filter(|&e| size > 0 && e <= n);
                let end = end.ok_or(HierarchyError::Invalid(
                    "node sizes must be positive and sum to the PU count",
                ))?;
                let parent = match node_of.last() {
                    None => None,
                    Some(above) => {
                        let p = above[start] as usize;
                        if above[end - 1] as usize != p {
                            let above = built.last().map_or(LevelKind::Machine, |l: &Level| l.kind);
                            return Err(HierarchyError::NotNested { level: kind, above });
                        }
                        Some(p)
                    }
                };
                owner.resize(owner.len() + size, index as u32);
                nodes.push(Node {
                    pus: start..end,
                    parent,
                    children: 0..0,
                });
                start = end;
            }
            if start != n {
                return Err(HierarchyError::Invalid(
                    "node sizes must sum to the PU count",
                ));
            }
            if let Some(above) = built.last_mut() {
                for (index, node) in nodes.iter().enumerate() {
                    let p = &mut above.nodes[node.parent.expect("below the machine")];
                    if p.children.is_empty() {
                        p.children = index..index + 1;
                    } else {
                        p.children.end = index + 1;
                    }
                }
            }
            built.push(Level { kind, nodes });
            node_of.push(owner);
        }
        if built
            .last()
            .is_some_and(|l| l.nodes.iter().any(|n| n.pus.len() != 1))
        {
            return Err(HierarchyError::Invalid(
                "the pu level must have one PU per node",
            ));
        }
        Ok(Hierarchy {
            levels: built,
            os,
            node_of,
            by_os,
        })
    }

    /// The number of levels, machine and PU levels included.
    pub fn depth(&self) -> usize {
        self.levels.len()
    }

    /// All levels, machine first, PUs last.
    pub fn levels(&self) -> &[Level] {
        &self.levels
    }

    /// The level at `depth` (0 is the machine).
    ///
    /// # Panics
    ///
    /// If `depth >= self.depth()`.
    pub fn level(&self, depth: usize) -> &Level {
        &self.levels[depth]
    }

    /// The depth of the PU level (`depth() - 1`).
    pub fn pu_level(&self) -> usize {
        self.levels.len() - 1
    }

    /// The depth of the first level of `kind`, if there is one.
    pub fn find(&self, kind: LevelKind) -> Option<usize> {
        self.levels.iter().position(|l| l.kind == kind)
    }

    /// The number of nodes of the first level of `kind` (0 if there is none).
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{Hierarchy, model::LevelKind::*};
    /// let h = Hierarchy::uniform(&[(Package, 2), (Core, 4), (Pu, 2)])?;
    /// assert_eq!((h.count(Package), h.count(Core), h.count(Pu), h.count(Numa)), (2, 8, 16, 0));
    /// # Ok::<(), herald::model::HierarchyError>(())
    /// ```
    pub fn count(&self, kind: LevelKind) -> usize {
        self.find(kind).map_or(0, |d| self.levels[d].len())
    }

    /// The number of PUs.
    pub fn pu_count(&self) -> usize {
        self.os.len()
    }

    /// The OS index of each logical PU.
    pub fn os_indices(&self) -> &[usize] {
        &self.os
    }

    /// The OS index of logical PU `pu` (what pinning uses).
    ///
    /// # Panics
    ///
    /// If `pu >= self.pu_count()`.
    pub fn os_index(&self, pu: usize) -> usize {
        self.os[pu]
    }

    /// The logical PU with OS index `os`, if there is one.
    pub fn pu_of_os(&self, os: usize) -> Option<usize> {
        self.by_os.get(&os).copied()
    }

    /// The index of the node of level `depth` that holds logical PU `pu`, in O(1).
    ///
    /// # Panics
    ///
    /// If `depth` or `pu` is out of range.
    pub fn node_of(&self, depth: usize, pu: usize) -> usize {
        self.node_of[depth][pu] as usize
    }

    /// The depth of the lowest common ancestor of logical PUs `a` and `b`: the deepest level
    /// where one node holds both (the PU level if `a == b`, 0 if only the machine holds both).
    /// O(depth).
    ///
    /// # Panics
    ///
    /// If `a` or `b` is out of range.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{Hierarchy, model::LevelKind::*};
    /// let h = Hierarchy::uniform(&[(Package, 2), (Cache(3), 2), (Core, 2), (Pu, 1)])?;
    /// assert_eq!(h.level(h.lca_level(0, 1)).kind(), Cache(3));
    /// assert_eq!(h.lca_level(3, 3), h.pu_level());
    /// # Ok::<(), herald::model::HierarchyError>(())
    /// ```
    pub fn lca_level(&self, a: usize, b: usize) -> usize {
        assert!(a < self.os.len() && b < self.os.len(), "PU out of range");
        (1..self.levels.len())
            .find(|&d| self.node_of[d][a] != self.node_of[d][b])
            .map_or(self.levels.len() - 1, |d| d - 1)
    }

    /// PUs per node at each level, where uniform (the subtree sizes of the fat-tree view); `None`
    /// for a level whose nodes differ in size.
    pub fn subtree_sizes(&self) -> Vec<Option<usize>> {
        self.levels.iter().map(Level::pus_per_node).collect()
    }

    /// Whether every level's nodes all have the same number of PUs.
    pub fn is_symmetric(&self) -> bool {
        self.subtree_sizes().iter().all(Option::is_some)
    }
}

#[cfg(test)]
mod test;
