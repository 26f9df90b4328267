//! Rank → PU maps: which CPU each rank of a team is pinned to.
//!
//! A map is an order of the PUs; rank `i` goes to the `i mod len`-th PU of the order, so more
//! ranks than PUs wrap around (the machine is oversubscribed: rank `len` shares a PU with rank 0).

use crate::model::Hierarchy;
use std::fmt;
use std::str::FromStr;

/// The most ranks a map is computed for.
pub const MAX_RANKS: usize = 1 << 20;

/// Why a rank map is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MapError {
    /// The text is not `compact`, `scatter` or `list:i,j,…`.
    #[error("unknown map {0:?}: expected compact, scatter or list:i,j,…")]
    Unknown(String),
    /// An explicit list has an entry that is not a number, or no entry.
    #[error("malformed CPU list {0:?}")]
    BadList(String),
    /// An explicit list names a CPU (OS index) that the hierarchy does not have.
    #[error("CPU {0} is not in the topology")]
    UnknownCpu(usize),
    /// More ranks than [`MAX_RANKS`].
    #[error("{0} ranks are too many (at most {MAX_RANKS})")]
    TooManyRanks(usize),
}

/// How ranks are placed on PUs.
///
/// # Examples
///
/// ```
/// use herald::{Hierarchy, model::LevelKind::*, topology::RankMap};
/// // 2 packages × 2 cores × 2 hardware threads; PU OS indices 0..8 in logical order.
/// let h = Hierarchy::uniform(&[(Package, 2), (Core, 2), (Pu, 2)])?;
/// assert_eq!(RankMap::Compact.cpus(&h, 4)?, [0, 1, 2, 3]);
/// assert_eq!(RankMap::Scatter.cpus(&h, 4)?, [0, 4, 2, 6]);
/// let list: RankMap = "list:7,0".parse()?;
/// assert_eq!(list.cpus(&h, 3)?, [7, 0, 7]); // more ranks than entries wrap around
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RankMap {
    /// Fill the nearest cache group first: ranks follow the logical (depth-first) PU order, so
    /// consecutive ranks share a core, then an L2, an L3, a NUMA node, a package.
    Compact,
    /// Spread over the machine: consecutive ranks go to different packages, then different NUMA
    /// nodes, caches and cores, as far apart as the tree allows (each node deals its PUs to its
    /// children in turn, round-robin).
    Scatter,
    /// An explicit list of OS CPU indices, rank `i` on entry `i mod len`.
    List(Vec<usize>),
}

impl RankMap {
    /// The OS CPU index of each of `ranks` ranks (rank `i` is pinned to `cpus[i]`); ranks beyond
    /// the map's length wrap around.
    ///
    /// # Errors
    ///
    /// [`MapError::UnknownCpu`] if a list names a CPU not in `h`; [`MapError::TooManyRanks`]
    /// beyond [`MAX_RANKS`].
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::topology::{parse_synthetic, RankMap};
    /// // One package, 4 L2 caches of 2 cores each.
    /// let h = parse_synthetic("pack:1 l3:1 l2:4 core:2 pu:1")?;
    /// assert_eq!(RankMap::Scatter.cpus(&h, 10)?, [0, 2, 4, 6, 1, 3, 5, 7, 0, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpus(&self, h: &Hierarchy, ranks: usize) -> Result<Vec<usize>, MapError> {
        if ranks > MAX_RANKS {
            return Err(MapError::TooManyRanks(ranks));
        }
        let order = self.order(h)?;
        Ok((0..ranks).map(|r| order[r % order.len()]).collect())
    }

    /// One cycle of the map: OS CPU indices in rank order (all PUs once for compact and
    /// scatter, the list itself for an explicit list).
    ///
    /// # Errors
    ///
    /// [`MapError::UnknownCpu`] if a list names a CPU not in `h`; [`MapError::BadList`] if a
    /// list is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::topology::{parse_synthetic, RankMap};
    /// let h = parse_synthetic("core:2 pu:2(indexes=0,2,1,3)")?; // SMT siblings 0 and 2
    /// assert_eq!(RankMap::Compact.order(&h)?, [0, 2, 1, 3]);
    /// assert_eq!(RankMap::Scatter.order(&h)?, [0, 1, 2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn order(&self, h: &Hierarchy) -> Result<Vec<usize>, MapError> {
        match self {
            RankMap::Compact => Ok(h.os_indices().to_vec()),
            RankMap::Scatter => Ok(scatter(h, 0, 0)
                .into_iter()
                .map(|pu| h.os_index(pu))
                .collect()),
            RankMap::List(list) => {
                if list.is_empty() {
                    return Err(MapError::BadList(String::new()));
                }
                if let Some(&bad) = list.iter().find(|&&os| h.pu_of_os(os).is_none()) {
                    return Err(MapError::UnknownCpu(bad));
                }
                Ok(list.clone())
            }
        }
    }
}

/// Logical PUs under node `node` of level `depth`, in scatter order: the children's scatter
/// orders dealt round-robin.
fn scatter(h: &Hierarchy, depth: usize, node: usize) -> Vec<usize> {
    let n = &h.level(depth).nodes()[node];
    if depth == h.pu_level() {
        return vec![n.pus().start];
    }
    let children: Vec<Vec<usize>> = n.children().map(|c| scatter(h, depth + 1, c)).collect();
    let longest = children.iter().map(Vec::len).max().unwrap_or(0);
    let mut order = Vec::with_capacity(n.pu_count());
    for i in 0..longest {
        order.extend(children.iter().filter_map(|c| c.get(i)));
    }
    order
}

impl FromStr for RankMap {
    type Err = MapError;

    /// `compact`, `scatter`, or `list:` followed by comma-separated OS CPU indices.
    fn from_str(s: &str) -> Result<RankMap, MapError> {
        match s {
            "compact" => Ok(RankMap::Compact),
            "scatter" => Ok(RankMap::Scatter),
            _ => {
                let list = s
                    .strip_prefix("list:")
                    .ok_or_else(|| MapError::Unknown(s.to_owned()))?;
                let cpus: Result<Vec<usize>, _> =
                    list.split(',').map(|c| c.trim().parse()).collect();
                cpus.map(RankMap::List)
                    .map_err(|_| MapError::BadList(list.to_owned()))
            }
        }
    }
}

impl fmt::Display for RankMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RankMap::Compact => f.write_str("compact"),
            RankMap::Scatter => f.write_str("scatter"),
            RankMap::List(list) => {
                let items: Vec<String> = list.iter().map(usize::to_string).collect();
                write!(f, "list:{}", items.join(","))
            }
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::model::LevelKind::*;

    #[test]
    fn scatter_is_bit_reversal_on_binary_trees() {
        let h = Hierarchy::uniform(&[(Package, 2), (Numa, 2), (Core, 2), (Pu, 2)]).unwrap();
        assert_eq!(
            RankMap::Scatter.order(&h).unwrap(),
            [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15]
        );
    }

    #[test]
    fn parse_and_print() {
        for text in ["compact", "scatter", "list:0,2,1,3"] {
            assert_eq!(text.parse::<RankMap>().unwrap().to_string(), text);
        }
        assert!(matches!(
            "list:".parse::<RankMap>(),
            Err(MapError::BadList(_))
        ));
        assert!(matches!(
            "list:1,x".parse::<RankMap>(),
            Err(MapError::BadList(_))
        ));
        assert!(matches!(
            "spread".parse::<RankMap>(),
            Err(MapError::Unknown(_))
        ));
    }
}
