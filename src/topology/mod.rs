//! Machine topology: discovery, synthetic and XML topologies, rank-to-core maps.
//!
//! Every source yields a [`Hierarchy`] (plain data, defined in `model`):
//!
//! 1. `synthetic` — our own parser of hwloc synthetic descriptions (`pack:2 core:4 pu:2`),
//!    always compiled, so the planner works without hwloc.
//! 2. `xml` — our own reader of hwloc XML exports, always compiled; it also checks a file
//!    before hwloc sees it (hwloc aborts on some inconsistent files).
//! 3. `sysfs` — the real machine from Linux sysfs, always compiled on Linux.
//! 4. `hwloc` — the real machine, synthetic descriptions and XML files through the system hwloc
//!    library (feature `hwloc`, on by default).
//! 5. `maps` — rank → PU maps: compact, scatter, explicit list.
//!
//! [`TopologySource`] picks the right one: hwloc when the feature is on, our readers otherwise.

#[cfg(feature = "hwloc")]
mod hwloc;
mod maps;
mod synthetic;
#[cfg(target_os = "linux")]
mod sysfs;
mod xml;

#[cfg(feature = "hwloc")]
pub use hwloc::{hwloc_machine, hwloc_synthetic, hwloc_xml};
pub use maps::{MapError, RankMap, MAX_RANKS};
pub use synthetic::{parse_synthetic, MAX_SYNTHETIC_PUS};
#[cfg(target_os = "linux")]
pub use sysfs::{sysfs_hierarchy, sysfs_hierarchy_at};
pub use xml::{parse_xml, read_xml};

use crate::model::{Hierarchy, HierarchyError, LevelKind};
use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a topology could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// A synthetic description is malformed.
    #[error("malformed synthetic topology {description:?}: {reason}")]
    Synthetic {
        /// The description as given.
        description: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An XML file cannot be read or is not a valid hwloc topology.
    #[error("cannot load topology XML {}: {reason}", path.display())]
    Xml {
        /// The file (`-` for XML given as text).
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// A sysfs file is missing or malformed.
    #[error("cannot read {}: {reason}", path.display())]
    Sysfs {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// hwloc failed to discover the machine.
    #[error("hwloc failed: {0}")]
    Hwloc(String),
    /// Both a synthetic description and an XML file were given.
    #[error("give either a synthetic description or an XML file, not both")]
    ConflictingSources,
    /// Discovering the real machine needs hwloc or Linux sysfs.
    #[error("cannot discover this machine: build with the `hwloc` feature or run on Linux")]
    Unsupported,
    /// The discovered levels do not form a hierarchy.
    #[error(transparent)]
    Hierarchy(#[from] HierarchyError),
}

/// Where a topology comes from.
///
/// # Examples
///
/// ```
/// use herald::{TopologySource, model::LevelKind};
/// let source = TopologySource::from_options(Some("pack:2 numa:2 l3:4 core:8 pu:2"), None)?;
/// let h = source.load()?;
/// assert_eq!(h.pu_count(), 256);
/// assert_eq!(h.count(LevelKind::Numa), 4);
/// assert!(TopologySource::from_options(Some("pu:2"), Some("x.xml".as_ref())).is_err());
/// # Ok::<(), herald::topology::TopologyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopologySource {
    /// The machine this process runs on: hwloc with the `hwloc` feature, else Linux sysfs
    /// ([`sysfs_hierarchy`]). Only the PUs this process may run on are included.
    Machine,
    /// A synthetic description (see [`parse_synthetic`]); built by hwloc with the `hwloc`
    /// feature, by our parser otherwise (both give the same hierarchy).
    Synthetic(String),
    /// An hwloc XML file (as written by `lstopo file.xml`); loaded by hwloc with the `hwloc`
    /// feature, by our reader ([`read_xml`]) otherwise.
    Xml(PathBuf),
}

impl TopologySource {
    /// The source named by command-line style options: neither is the machine.
    ///
    /// # Errors
    ///
    /// [`TopologyError::ConflictingSources`] if both are given.
    pub fn from_options(
        synthetic: Option<&str>,
        xml: Option<&Path>,
    ) -> Result<TopologySource, TopologyError> {
        match (synthetic, xml) {
            (Some(_), Some(_)) => Err(TopologyError::ConflictingSources),
            (Some(s), None) => Ok(TopologySource::Synthetic(s.to_owned())),
            (None, Some(p)) => Ok(TopologySource::Xml(p.to_owned())),
            (None, None) => Ok(TopologySource::Machine),
        }
    }

    /// Reads the topology.
    ///
    /// # Errors
    ///
    /// [`TopologyError`] if the description or file is malformed, or discovery fails.
    pub fn load(&self) -> Result<Hierarchy, TopologyError> {
        match self {
            TopologySource::Machine => machine(),
            #[cfg(feature = "hwloc")]
            TopologySource::Synthetic(s) => hwloc_synthetic(s),
            #[cfg(not(feature = "hwloc"))]
            TopologySource::Synthetic(s) => parse_synthetic(s),
            #[cfg(feature = "hwloc")]
            TopologySource::Xml(p) => hwloc_xml(p),
            #[cfg(not(feature = "hwloc"))]
            TopologySource::Xml(p) => read_xml(p),
        }
    }
}

impl fmt::Display for TopologySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopologySource::Machine => f.write_str("this machine"),
            TopologySource::Synthetic(s) => write!(f, "synthetic {s:?}"),
            TopologySource::Xml(p) => write!(f, "XML {}", p.display()),
        }
    }
}

#[cfg(feature = "hwloc")]
fn machine() -> Result<Hierarchy, TopologyError> {
    hwloc_machine()
}

#[cfg(all(not(feature = "hwloc"), target_os = "linux"))]
fn machine() -> Result<Hierarchy, TopologyError> {
    sysfs_hierarchy()
}

#[cfg(all(not(feature = "hwloc"), not(target_os = "linux")))]
fn machine() -> Result<Hierarchy, TopologyError> {
    Err(TopologyError::Unsupported)
}

/// Candidate levels as a reader finds them: a kind and groups of PU OS indices.
type Levels = Vec<(LevelKind, Vec<Vec<usize>>)>;

/// Builds a hierarchy from what a reader found. Groups are restricted to `pus` (empty groups
/// vanish); a level that does not cover every PU is dropped (an asymmetric machine may have,
/// say, an L3 only on some cores); a NUMA level that does not nest with the CPU levels is
/// dropped too (the PU tree is what pinning and the models need).
fn assemble(pus: &[usize], levels: Levels) -> Result<Hierarchy, TopologyError> {
    let set: HashSet<usize> = pus.iter().copied().collect();
    let levels: Levels = levels
        .into_iter()
        .filter_map(|(kind, groups)| {
            let groups: Vec<Vec<usize>> = groups
                .into_iter()
                .map(|g| {
                    g.into_iter()
                        .filter(|p| set.contains(p))
                        .collect::<Vec<usize>>()
                })
                .filter(|g| !g.is_empty())
                .collect();
            let covered: HashSet<usize> = groups.iter().flatten().copied().collect();
            (covered.len() == set.len()).then_some((kind, groups))
        })
        .collect();
    match Hierarchy::new(pus, levels.clone()) {
        Err(HierarchyError::NotNested { .. }) if levels.iter().any(|l| l.0 == LevelKind::Numa) => {
            let cpu_only: Levels = levels
                .into_iter()
                .filter(|l| l.0 != LevelKind::Numa)
                .collect();
            Ok(Hierarchy::new(pus, cpu_only)?)
        }
        other => Ok(other?),
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn assemble_drops_partial_levels_and_stray_numa() {
        let h = assemble(
            &[0, 1, 2, 3],
            vec![
                (LevelKind::Cache(3), vec![vec![0, 1]]),
                (LevelKind::Numa, vec![vec![0, 1, 2], vec![3, 9]]),
                (LevelKind::Core, vec![vec![0, 1], vec![2, 3]]),
            ],
        )
        .unwrap();
        let kinds: Vec<LevelKind> = h.levels().iter().map(|l| l.kind()).collect();
        assert_eq!(kinds, [LevelKind::Machine, LevelKind::Core, LevelKind::Pu]);
    }
}
