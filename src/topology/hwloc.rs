//! Discovery through the system hwloc 2.x library (hwlocality), feature `hwloc`.
//!
//! Each normal hwloc depth between the machine and the PUs becomes a level (packages, dies,
//! groups, data and unified caches, cores; instruction caches are filtered out by hwloc's
//! defaults); NUMA nodes, which hwloc 2 attaches beside the tree as memory children, become a
//! level of their own, placed by their cpusets. Synthetic descriptions and XML files are checked
//! by our own parsers first, because hwloc aborts the process on some malformed ones.

use super::{assemble, synthetic, xml, Levels, TopologyError};
use crate::model::{Hierarchy, LevelKind};
use hwlocality::object::types::ObjectType;
use hwlocality::object::TopologyObject;
use hwlocality::Topology;
use std::path::Path;

/// The hierarchy of this machine, discovered by hwloc (only the PUs this process may use).
///
/// # Errors
///
/// [`TopologyError::Hwloc`] if hwloc fails.
///
/// # Examples
///
/// ```
/// let h = herald::topology::hwloc_machine()?;
/// assert!(h.pu_count() >= 1);
/// # Ok::<(), herald::topology::TopologyError>(())
/// ```
pub fn hwloc_machine() -> Result<Hierarchy, TopologyError> {
    let topology = Topology::new().map_err(|e| TopologyError::Hwloc(e.to_string()))?;
    convert(&topology)
}

/// The hierarchy of a synthetic description, built by hwloc. The description must also be
/// accepted by [`parse_synthetic`](super::parse_synthetic), whose documentation gives the grammar;
/// both give the same hierarchy.
///
/// # Errors
///
/// [`TopologyError::Synthetic`] if the description is malformed.
///
/// # Examples
///
/// ```
/// let h = herald::topology::hwloc_synthetic("pack:2 core:4 pu:2")?;
/// assert_eq!(h, herald::topology::parse_synthetic("pack:2 core:4 pu:2")?);
/// # Ok::<(), herald::topology::TopologyError>(())
/// ```
pub fn hwloc_synthetic(description: &str) -> Result<Hierarchy, TopologyError> {
    synthetic::parse(description)?;
    let malformed = |reason: String| TopologyError::Synthetic {
        description: description.to_owned(),
        reason,
    };
    let topology = Topology::builder()
        .from_synthetic(description)
        .map_err(|e| malformed(e.to_string()))?
        .build()
        .map_err(|e| malformed(e.to_string()))?;
    convert(&topology)
}

/// The hierarchy of an hwloc XML file, loaded by hwloc after our reader
/// ([`read_xml`](super::read_xml)) has checked it.
///
/// # Errors
///
/// [`TopologyError::Xml`] if the file cannot be read or is not a consistent hwloc topology.
///
/// # Examples
///
/// ```
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/two-socket-smt.xml");
/// let h = herald::topology::hwloc_xml(path.as_ref())?;
/// assert_eq!(h, herald::topology::read_xml(path.as_ref())?);
/// # Ok::<(), herald::topology::TopologyError>(())
/// ```
pub fn hwloc_xml(path: &Path) -> Result<Hierarchy, TopologyError> {
    let text = xml::read_file(path)?;
    xml::parse(&text).map_err(|reason| xml::xml_error(path, reason))?;
    let topology = Topology::builder()
        .from_xml(&text)
        .map_err(|e| xml::xml_error(path, e.to_string()))?
        .build()
        .map_err(|e| xml::xml_error(path, e.to_string()))?;
    convert(&topology)
}

/// Reads hwloc's levels and NUMA nodes into a hierarchy.
fn convert(topology: &Topology) -> Result<Hierarchy, TopologyError> {
    let pus: Option<Vec<usize>> = topology
        .objects_with_type(ObjectType::PU)
        .map(TopologyObject::os_index)
        .collect();
    let pus = pus.ok_or_else(|| TopologyError::Hwloc("a PU has no OS index".into()))?;
    let mut levels: Levels = Vec::new();
    let depth = usize::from(topology.depth());
    for d in 1..depth.saturating_sub(1) {
        let Some(kind) = topology.type_at_depth(d).and_then(level_kind) else {
            continue;
        };
        levels.push((kind, topology.objects_at_depth(d).map(cpus).collect()));
    }
    let numa = topology
        .objects_with_type(ObjectType::NUMANode)
        .map(cpus)
        .collect();
    levels.push((LevelKind::Numa, numa));
    assemble(&pus, levels)
}

fn cpus(object: &TopologyObject) -> Vec<usize> {
    object
        .cpuset()
        .map(|set| set.iter_set().map(usize::from).collect())
        .unwrap_or_default()
}

fn level_kind(ty: ObjectType) -> Option<LevelKind> {
    Some(match ty {
        ObjectType::Package => LevelKind::Package,
        ObjectType::Die => LevelKind::Die,
        ObjectType::Group => LevelKind::Group,
        ObjectType::L1Cache => LevelKind::Cache(1),
        ObjectType::L2Cache => LevelKind::Cache(2),
        ObjectType::L3Cache => LevelKind::Cache(3),
        ObjectType::L4Cache => LevelKind::Cache(4),
        ObjectType::L5Cache => LevelKind::Cache(5),
        ObjectType::Core => LevelKind::Core,
        _ => return None,
    })
}
