//! Our own reader of hwloc XML topologies (as written by `lstopo file.xml` or hwloc's XML
//! export; the XML syntax is read by `roxmltree`), so XML files load without hwloc, and so a file is checked before hwloc reads it:
//! hwloc trusts a file's cpusets and aborts the process (an assertion in C) on some
//! inconsistent ones.
//!
//! Only what the hierarchy needs is read: the nesting of `<object>` elements, their `type`,
//! the `os_index` of PUs and NUMA nodes, and `cpuset`/`complete_cpuset`, which must agree with
//! the PUs below each object, `nodeset`/`complete_nodeset`, which must agree with the NUMA
//! nodes, and `gp_index`, which must be unique. I/O and `Misc` objects are skipped; instruction caches and memory
//! caches are transparent.

use super::{assemble, Levels, TopologyError};
use crate::model::{Hierarchy, LevelKind};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Reads an hwloc XML file with our own reader (no hwloc needed).
///
/// # Errors
///
/// [`TopologyError::Xml`] if the file cannot be read or is not a consistent hwloc topology.
///
/// # Examples
///
/// ```
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/two-socket-smt.xml");
/// let h = herald::topology::read_xml(path.as_ref())?;
/// assert_eq!(h.pu_count(), 16);
/// # Ok::<(), herald::topology::TopologyError>(())
/// ```
pub fn read_xml(path: &Path) -> Result<Hierarchy, TopologyError> {
    let text = read_file(path)?;
    parse(&text)
        .map_err(|reason| xml_error(path, reason))?
        .into_hierarchy(path)
}

/// Parses an hwloc XML topology given as text with our own reader.
///
/// # Errors
///
/// [`TopologyError::Xml`] (with path `-`) if the text is not a consistent hwloc topology.
///
/// # Examples
///
/// ```
/// let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
/// <topology version="2.0">
///   <object type="Machine" os_index="0" cpuset="0x00000003">
///     <object type="NUMANode" os_index="0" cpuset="0x00000003"/>
///     <object type="Core" os_index="0" cpuset="0x00000003">
///       <object type="PU" os_index="0" cpuset="0x00000001"/>
///       <object type="PU" os_index="1" cpuset="0x00000002"/>
///     </object>
///   </object>
/// </topology>"#;
/// let h = herald::topology::parse_xml(xml)?;
/// assert_eq!(h.count(herald::model::LevelKind::Core), 1);
/// assert!(herald::topology::parse_xml("<topology>").is_err());
/// # Ok::<(), herald::topology::TopologyError>(())
/// ```
pub fn parse_xml(text: &str) -> Result<Hierarchy, TopologyError> {
    let path = Path::new("-");
    parse(text)
        .map_err(|reason| xml_error(path, reason))?
        .into_hierarchy(path)
}

pub(super) fn read_file(path: &Path) -> Result<String, TopologyError> {
    std::fs::read_to_string(path).map_err(|e| xml_error(path, e.to_string()))
}

pub(super) fn xml_error(path: &Path, reason: impl Into<String>) -> TopologyError {
    TopologyError::Xml {
        path: PathBuf::from(path),
        reason: reason.into(),
    }
}

/// What an `<object>` is, for the hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A level of the CPU tree (machine, package, cache, core, PU, …).
    Level(LevelKind),
    /// A NUMA node: memory, attached to a CPU object.
    Numa,
    /// In the tree but no level (instruction cache, memory-side cache).
    Transparent,
    /// Skipped with everything below (I/O, Misc).
    Skipped,
}

#[derive(Debug)]
struct Object {
    role: Role,
    type_name: String,
    os_index: Option<usize>,
    cpuset: Option<String>,
    complete_cpuset: Option<String>,
    nodeset: Option<String>,
    complete_nodeset: Option<String>,
    gp_index: Option<String>,
    /// `allowed_cpuset` and `allowed_nodeset` (of the Machine).
    allowed: [Option<String>; 2],
    parent: Option<usize>,
    /// Depth among CPU-level ancestors (to tell apart nested `Group` levels).
    level_depth: usize,
    pus: BTreeSet<usize>,
}

/// A parsed, checked topology.
#[derive(Debug)]
pub(super) struct Parsed {
    objects: Vec<Object>,
}

impl Parsed {
    fn into_hierarchy(self, path: &Path) -> Result<Hierarchy, TopologyError> {
        let pus: Vec<usize> = self
            .objects
            .iter()
            .filter(|o| o.role == Role::Level(LevelKind::Pu))
            .filter_map(|o| o.os_index)
            .collect();
        // Levels by kind (groups also by depth, as nested groups are distinct levels).
        let mut levels: Levels = Vec::new();
        let mut index: HashMap<(LevelKind, usize), usize> = HashMap::new();
        for o in &self.objects {
            let (kind, key) = match o.role {
                Role::Level(LevelKind::Machine | LevelKind::Pu) => continue,
                Role::Level(LevelKind::Group) => (LevelKind::Group, o.level_depth),
                Role::Level(kind) => (kind, 0),
                Role::Numa => (LevelKind::Numa, 0),
                Role::Transparent | Role::Skipped => continue,
            };
            let i = *index.entry((kind, key)).or_insert_with(|| {
                levels.push((kind, Vec::new()));
                levels.len() - 1
            });
            levels[i].1.push(o.pus.iter().copied().collect());
        }
        assemble(&pus, levels).map_err(|e| xml_error(path, e.to_string()))
    }
}

/// Parses and checks hwloc XML (the XML itself — entities, character references, comments,
/// processing instructions — is read by `roxmltree`).
pub(super) fn parse(text: &str) -> Result<Parsed, String> {
    // hwloc's exports name their DTD (`<!DOCTYPE topology SYSTEM "hwloc2.dtd">`).
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, options)
        .map_err(|e| format!("not well-formed XML: {e}"))?;
    let root = doc.root_element();
    if root.tag_name().name() != "topology" {
        return Err(format!(
            "the root element must be one <topology>, not <{}>",
            root.tag_name().name()
        ));
    }
    let mut objects: Vec<Object> = Vec::new();
    // Depth-first, so a parent is always pushed before its children.
    let mut stack: Vec<(roxmltree::Node<'_, '_>, Option<usize>)> = vec![(root, None)];
    while let Some((node, parent)) = stack.pop() {
        let mut index = parent;
        if node.tag_name().name() == "object" {
            if parent.is_none() && !objects.is_empty() {
                return Err("the topology must have a single top object".into());
            }
            let attrs: BTreeMap<String, String> = node
                .attributes()
                .map(|a| (a.name().to_owned(), a.value().to_owned()))
                .collect();
            index = Some(objects.len());
            objects.push(object(&attrs, parent, &objects)?);
        }
        let children: Vec<_> = node.children().filter(|c| c.is_element()).collect();
        stack.extend(children.into_iter().rev().map(|c| (c, index)));
    }
    check(&mut objects)?;
    Ok(Parsed { objects })
}

/// Reads one `<object>`'s attributes.
fn object(
    attrs: &BTreeMap<String, String>,
    parent: Option<usize>,
    objects: &[Object],
) -> Result<Object, String> {
    let type_name = attrs.get("type").ok_or("an <object> has no type")?.clone();
    let parent_role = parent.map(|p| objects[p].role);
    let role = if parent_role == Some(Role::Skipped) {
        Role::Skipped
    } else {
        role(&type_name, attrs)?
    };
    if parent.is_none() && role != Role::Level(LevelKind::Machine) {
        return Err(format!("the top object must be a Machine, not {type_name}"));
    }
    if parent_role == Some(Role::Level(LevelKind::Pu)) && role != Role::Skipped {
        return Err("a PU cannot contain other objects".into());
    }
    let os_index = match attrs.get("os_index") {
        Some(v) => Some(
            v.parse::<usize>()
                .map_err(|_| format!("bad os_index {v:?} of {type_name}"))?,
        ),
        None => None,
    };
    let level_depth = match parent {
        None => 0,
        Some(p) => objects[p].level_depth + usize::from(matches!(role, Role::Level(_))),
    };
    Ok(Object {
        role,
        type_name,
        os_index,
        cpuset: attrs.get("cpuset").cloned(),
        complete_cpuset: attrs.get("complete_cpuset").cloned(),
        nodeset: attrs.get("nodeset").cloned(),
        complete_nodeset: attrs.get("complete_nodeset").cloned(),
        gp_index: attrs.get("gp_index").cloned(),
        allowed: [
            attrs.get("allowed_cpuset").cloned(),
            attrs.get("allowed_nodeset").cloned(),
        ],
        parent,
        level_depth,
        pus: BTreeSet::new(),
    })
}

fn role(type_name: &str, attrs: &BTreeMap<String, String>) -> Result<Role, String> {
    let cache = |depth: &str| -> Result<Role, String> {
        match depth.parse::<u8>() {
            Ok(d @ 1..=5) => Ok(Role::Level(LevelKind::Cache(d))),
            _ => Err(format!("bad cache depth {depth:?}")),
        }
    };
    Ok(match type_name {
        "Machine" | "System" => Role::Level(LevelKind::Machine),
        "Package" | "Socket" => Role::Level(LevelKind::Package),
        "Die" => Role::Level(LevelKind::Die),
        "Group" => Role::Level(LevelKind::Group),
        "Core" => Role::Level(LevelKind::Core),
        "PU" => Role::Level(LevelKind::Pu),
        "NUMANode" => Role::Numa,
        "MemCache" => Role::Transparent,
        "L1iCache" | "L2iCache" | "L3iCache" => Role::Transparent,
        "Bridge" | "PCIDev" | "OSDev" | "Misc" => Role::Skipped,
        // hwloc 1.x: one Cache type with depth and cache_type (2 = instruction).
        "Cache" => match attrs.get("cache_type").map(String::as_str) {
            Some("2") => Role::Transparent,
            _ => cache(attrs.get("depth").map_or("", String::as_str))?,
        },
        other => match other
            .strip_prefix('L')
            .and_then(|r| r.strip_suffix("Cache"))
        {
            Some(depth) => cache(depth)?,
            None => return Err(format!("unknown object type {other:?}")),
        },
    })
}

/// Fills each object's PU set and checks it against the cpusets in the file.
fn check(objects: &mut [Object]) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    for i in 0..objects.len() {
        if objects[i].role != Role::Level(LevelKind::Pu) {
            continue;
        }
        let os = objects[i].os_index.ok_or("a PU has no os_index")?;
        if !seen.insert(os) {
            return Err(format!("PU os_index {os} repeats"));
        }
        let mut at = Some(i);
        while let Some(o) = at {
            objects[o].pus.insert(os);
            at = objects[o].parent;
        }
    }
    if seen.is_empty() {
        return Err("the topology has no PU".into());
    }
    // NUMA nodes and memory-side caches hang off a CPU object: they cover its PUs.
    for i in 0..objects.len() {
        if matches!(objects[i].role, Role::Numa | Role::Transparent) && objects[i].pus.is_empty() {
            let mut at = objects[i].parent;
            while let Some(p) = at {
                if matches!(objects[p].role, Role::Level(_)) {
                    objects[i].pus = objects[p].pus.clone();
                    break;
                }
                at = objects[p].parent;
            }
        }
    }
    let mut gp_indexes = BTreeSet::new();
    for o in objects.iter() {
        if let Some(gp) = &o.gp_index {
            match gp.parse::<u64>() {
                Ok(g) if g > 0 && gp_indexes.insert(g) => {}
                _ => {
                    return Err(format!(
                        "gp_index {gp:?} is not a distinct positive integer"
                    ))
                }
            }
        }
    }
    // NUMA node OS index → its PUs.
    let mut numa = BTreeMap::new();
    for o in objects.iter().filter(|o| o.role == Role::Numa) {
        let os = o.os_index.ok_or("a NUMANode has no os_index")?;
        if numa.insert(os, &o.pus).is_some() {
            return Err(format!("NUMANode os_index {os} repeats"));
        }
    }
    if numa.is_empty() {
        return Err("the topology has no NUMANode".into());
    }
    let all_local = numa.values().all(|pus| !pus.is_empty());
    for o in objects.iter() {
        if o.role == Role::Skipped {
            continue;
        }
        // An object's nodeset: the NUMA nodes whose PUs meet its own (checked when every NUMA
        // node has PUs; memory-only nodes make the rule hwloc's business).
        let expected: BTreeSet<usize> = match o.role {
            Role::Numa => o.os_index.into_iter().collect(),
            _ => numa
                .iter()
                .filter(|(_, pus)| !pus.is_disjoint(&o.pus))
                .map(|(&n, _)| n)
                .collect(),
        };
        let nodeset = o.nodeset.as_deref().map(bitmap).transpose()?;
        if let Some(nodeset) = &nodeset {
            if (all_local || o.role == Role::Numa) && *nodeset != expected {
                return Err(format!(
                    "the nodeset of a {} does not match its NUMA nodes",
                    o.type_name
                ));
            }
        }
        // The file's allowed sets must be the whole machine (hwloc drops disallowed PUs on export).
        let numa_nodes: BTreeSet<usize> = numa.keys().copied().collect();
        for (allowed, whole) in o.allowed.iter().zip([&o.pus, &numa_nodes]) {
            if allowed
                .as_deref()
                .map(bitmap)
                .transpose()?
                .is_some_and(|a| a != *whole)
            {
                return Err("the allowed sets do not match the machine".into());
            }
        }
        if let Some(complete) = o.complete_nodeset.as_deref().map(bitmap).transpose()? {
            let inner = nodeset.as_ref().unwrap_or(&expected);
            if !complete.is_superset(inner) || (o.role == Role::Numa && complete != expected) {
                return Err(format!(
                    "the complete_nodeset of a {} misses NUMA nodes",
                    o.type_name
                ));
            }
        }
        let cpuset = o.cpuset.as_deref().map(bitmap).transpose()?;
        if let Some(cpuset) = &cpuset {
            if *cpuset != o.pus {
                return Err(format!(
                    "the cpuset of a {} does not match the PUs below it",
                    o.type_name
                ));
            }
        }
        if let Some(complete) = o.complete_cpuset.as_deref().map(bitmap).transpose()? {
            if !complete.is_superset(&o.pus) {
                return Err(format!(
                    "the complete_cpuset of a {} misses PUs below it",
                    o.type_name
                ));
            }
        }
    }
    nest_complete_sets(objects)?;
    Ok(())
}

/// The complete sets (which may hold offline CPUs without PU objects) must nest like the tree:
/// inside the parent's, and disjoint between sibling CPU objects.
fn nest_complete_sets(objects: &[Object]) -> Result<(), String> {
    let parse = |set: &Option<String>| set.as_deref().map(bitmap).transpose();
    let cpus: Vec<Option<BTreeSet<usize>>> = objects
        .iter()
        .map(|o| parse(&o.complete_cpuset))
        .collect::<Result<_, _>>()?;
    let nodes: Vec<Option<BTreeSet<usize>>> = objects
        .iter()
        .map(|o| parse(&o.complete_nodeset))
        .collect::<Result<_, _>>()?;
    let mut claimed: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for (i, o) in objects.iter().enumerate() {
        let Some(p) = o.parent else { continue };
        if o.role == Role::Skipped {
            continue;
        }
        for sets in [&cpus, &nodes] {
            if let (Some(mine), Some(theirs)) = (&sets[i], &sets[p]) {
                if !mine.is_subset(theirs) {
                    return Err(format!(
                        "a complete set of a {} exceeds its parent's",
                        o.type_name
                    ));
                }
            }
        }
        if let (Role::Level(_), Some(mine)) = (o.role, &cpus[i]) {
            let siblings = claimed.entry(p).or_default();
            if !siblings.is_disjoint(mine) {
                return Err(format!(
                    "the complete_cpuset of a {} overlaps a sibling's",
                    o.type_name
                ));
            }
            siblings.extend(mine);
        }
    }
    Ok(())
}

/// Parses an hwloc bitmap: comma-separated 32-bit hexadecimal words, most significant first,
/// such as `0x00000f0f` or `0x00000001,0xffffffff`.
fn bitmap(text: &str) -> Result<BTreeSet<usize>, String> {
    let bad = || format!("malformed cpuset {text:?}");
    let words: Vec<&str> = text.split(',').collect();
    if words.len() > 64 {
        return Err(bad());
    }
    let mut set = BTreeSet::new();
    for (i, word) in words.iter().rev().enumerate() {
        let hex = word.strip_prefix("0x").ok_or_else(bad)?;
        if hex.is_empty() || hex.len() > 8 {
            return Err(bad());
        }
        let bits = u32::from_str_radix(hex, 16).map_err(|_| bad())?;
        set.extend((0..32).filter(|b| bits >> b & 1 == 1).map(|b| i * 32 + b));
    }
    Ok(set)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn bitmaps() {
        assert_eq!(
            bitmap("0x00000f0f").unwrap(),
            [0, 1, 2, 3, 8, 9, 10, 11].into()
        );
        assert_eq!(bitmap("0x00000001,0x80000000").unwrap(), [31, 32].into());
        assert_eq!(bitmap("0x0").unwrap(), BTreeSet::new());
        for bad in ["", "0x", "ff", "0xzz", "0xf...f", "0x123456789"] {
            assert!(bitmap(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn malformed() {
        let good = r#"<topology><object type="Machine" cpuset="0x3"><object type="NUMANode" os_index="0" nodeset="0x1"/><object type="PU" os_index="0" cpuset="0x1"/><object type="PU" os_index="1" cpuset="0x2"/></object></topology>"#;
        assert!(parse(good).is_ok());
        for bad in [
            "",
            "not xml",
            "<topology>",
            "<topology></topo>",
            r#"<topology><object type="Machine"></object></topology>"#,
            r#"<topology><object type="Core"><object type="PU" os_index="0"/></object></topology>"#,
            r#"<topology><object type="Machine"><object type="Kore"><object type="PU" os_index="0"/></object></object></topology>"#,
            r#"<topology><object type="Machine"><object type="PU" os_index="0"/><object type="PU" os_index="0"/></object></topology>"#,
            r#"<topology><object type="Machine"><object type="PU"/></object></topology>"#,
            r#"<topology><object type="Machine" cpuset="0x1"><object type="PU" os_index="1"/></object></topology>"#,
            r#"<topology><object type="Machine"><object type="PU" os_index="0" cpuset="zz"/></object></topology>"#,
            r#"<topology><object type="Machine"><object type="PU" os_index=0/></object></topology>"#,
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    /// Character and entity references are XML, not text: `P&#85;` is the type `PU`, and
    /// attributes of elements herald skips may hold any escaped text.
    #[test]
    fn references() {
        let xml = r#"<?xml version="1.0"?>
<!-- a comment with <object type="Kore"/> inside -->
<topology><object type="Machine" cpuset="0x3">
  <info name="Vendor" value="A &amp; B &lt;labs&gt; &quot;x&quot;"/>
  <object type="NUMANode" os_index="0" nodeset="0x1"/>
  <object type="P&#85;" os_index="0" cpuset="0x1"/>
  <object type="&#x50;U" os_index="1" cpuset="0x2"/>
</object></topology>"#;
        let parsed = parse(xml).unwrap();
        let pus = parsed
            .objects
            .iter()
            .filter(|o| o.type_name == "PU")
            .count();
        assert_eq!(pus, 2);
        assert!(parse(r#"<topology><object type="Machine" a="&bogus;"/></topology>"#).is_err());
    }
}
