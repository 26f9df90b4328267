//! Our own parser of hwloc synthetic descriptions, so the planner works without hwloc.
//!
//! The grammar is the part of hwloc's (see "Synthetic topologies" in the hwloc manual) that
//! describes a CPU hierarchy; with the `hwloc` feature every description goes through this
//! parser first, so hwloc only ever sees descriptions we accept (hwloc aborts the process on
//! some it should reject, such as `memcache:2 pu:1`).

use super::{assemble, TopologyError};
use crate::model::{Hierarchy, LevelKind};

/// The largest number of PUs a synthetic description may have (hwloc's synthetic backend needs
/// seconds beyond this).
pub const MAX_SYNTHETIC_PUS: usize = 8192;

/// A parsed synthetic description: arities top to bottom (ending with the PUs) and the PUs'
/// OS indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Synthetic {
    pub(super) arities: Vec<(LevelKind, usize)>,
    pub(super) pu_os: Vec<usize>,
}

/// Builds the hierarchy of a synthetic description without hwloc.
///
/// A description is a whitespace-separated list of `type:count` tokens from the top down, each
/// count being the number of children of every node of the level above, ending with `pu:N`.
/// Types are case-insensitive: `package` (also `socket`), `die`, `numa` (also `numanode`,
/// `node`), `group`, `l1` … `l5` (optionally with `d`, `u` and/or `cache`: `l2u`, `l3cache`),
/// `core`, `pu`; as in hwloc, any prefix of at least two letters names a type (`pack`, `co`).
/// Each type appears at most once. The `pu` level may carry `(indexes=i,j,…)`, the OS index of
/// every PU in logical order; otherwise PU OS indices are the logical ones. Without a `numa`
/// level there is one NUMA node for the whole machine, as in hwloc.
///
/// # Errors
///
/// [`TopologyError::Synthetic`] if the description is malformed, and if it has more than
/// [`MAX_SYNTHETIC_PUS`] PUs.
///
/// # Examples
///
/// ```
/// use herald::{model::LevelKind, topology::parse_synthetic};
/// let h = parse_synthetic("pack:2 numa:2 l3:4 core:8 pu:2")?;
/// let names: Vec<String> = h.levels().iter().map(|l| l.name()).collect();
/// assert_eq!(names, ["machine", "package", "numa", "l3", "core", "pu"]);
/// assert_eq!((h.count(LevelKind::Core), h.pu_count()), (128, 256));
/// assert!(parse_synthetic("pack:2 core:0 pu:1").is_err());
/// # Ok::<(), herald::topology::TopologyError>(())
/// ```
pub fn parse_synthetic(description: &str) -> Result<Hierarchy, TopologyError> {
    let spec = parse(description)?;
    build(&spec).map_err(|e| malformed(description, e.to_string()))
}

/// The hierarchy a parsed description stands for.
fn build(spec: &Synthetic) -> Result<Hierarchy, TopologyError> {
    let total = spec.pu_os.len();
    let mut levels = Vec::new();
    let mut nodes = 1usize;
    for &(kind, arity) in &spec.arities[..spec.arities.len() - 1] {
        nodes *= arity;
        let size = total / nodes;
        let groups = (0..nodes)
            .map(|g| spec.pu_os[g * size..(g + 1) * size].to_vec())
            .collect();
        levels.push((kind, groups));
    }
    if !spec.arities.iter().any(|a| a.0 == LevelKind::Numa) {
        levels.push((LevelKind::Numa, vec![spec.pu_os.clone()]));
    }
    assemble(&spec.pu_os, levels)
}

fn malformed(description: &str, reason: impl Into<String>) -> TopologyError {
    TopologyError::Synthetic {
        description: description.to_owned(),
        reason: reason.into(),
    }
}

/// Parses and checks a description.
pub(super) fn parse(description: &str) -> Result<Synthetic, TopologyError> {
    let err = |reason: String| malformed(description, reason);
    let tokens: Vec<&str> = description.split_whitespace().collect();
    if tokens.is_empty() {
        return Err(err("the description is empty".into()));
    }
    let mut arities: Vec<(LevelKind, usize)> = Vec::with_capacity(tokens.len());
    let mut indexes = None;
    let mut total = 1usize;
    for (i, token) in tokens.iter().enumerate() {
        let (name, rest) = token
            .split_once(':')
            .ok_or_else(|| err(format!("{token:?} is not of the form type:count")))?;
        let kind = kind(name).map_err(err)?;
        let (count, attributes) = match rest.split_once('(') {
            None => (rest, None),
            Some((count, attrs)) => {
                let attrs = attrs
                    .strip_suffix(')')
                    .ok_or_else(|| err(format!("unclosed or spaced attributes in {token:?}")))?;
                (count, Some(attrs))
            }
        };
        let count: usize = match count.parse() {
            Ok(c) if c > 0 && count.bytes().all(|b| b.is_ascii_digit()) => c,
            _ => {
                return Err(err(format!(
                    "count {count:?} of {name} must be a positive integer"
                )))
            }
        };
        if arities.iter().any(|a| a.0 == kind) {
            return Err(err(format!("{kind} appears twice")));
        }
        let last = i + 1 == tokens.len();
        if (kind == LevelKind::Pu) != last {
            return Err(err("the last level, and only the last, must be pu".into()));
        }
        total = total
            .checked_mul(count)
            .filter(|&t| t <= MAX_SYNTHETIC_PUS)
            .ok_or_else(|| err(format!("more than {MAX_SYNTHETIC_PUS} PUs")))?;
        if let Some(attrs) = attributes {
            if kind != LevelKind::Pu {
                return Err(err(format!(
                    "attributes are supported only on pu, not {name}"
                )));
            }
            indexes = Some(attrs);
        }
        arities.push((kind, count));
    }
    let pu_os = match indexes {
        None => (0..total).collect(),
        Some(attrs) => parse_indexes(attrs, total).map_err(err)?,
    };
    Ok(Synthetic { arities, pu_os })
}

/// `indexes=i,j,…`: `total` distinct OS indices.
fn parse_indexes(attrs: &str, total: usize) -> Result<Vec<usize>, String> {
    let list = attrs
        .strip_prefix("indexes=")
        .ok_or_else(|| format!("unsupported attributes ({attrs}): only pu:N(indexes=i,j,…) is"))?;
    let mut seen = std::collections::HashSet::new();
    let mut os = Vec::with_capacity(total);
    for item in list.split(',') {
        let index: usize = item
            .parse()
            .map_err(|_| format!("PU index {item:?} is not a number"))?;
        if index > u32::MAX as usize || !seen.insert(index) {
            return Err(format!("PU index {index} repeats or is too large"));
        }
        os.push(index);
    }
    if os.len() != total {
        return Err(format!("{} PU indexes given for {total} PUs", os.len()));
    }
    Ok(os)
}

/// A level type name, hwloc style.
fn kind(name: &str) -> Result<LevelKind, String> {
    let lower = name.to_ascii_lowercase();
    let abbreviates = |full: &str| lower.len() >= 2 && full.starts_with(&lower);
    if let Some(rest) = lower
        .strip_prefix('l')
        .filter(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let depth: u8 = rest[..digits].parse().unwrap_or(0);
        let suffix = &rest[digits..];
        if !(1..=5).contains(&depth) {
            return Err(format!("cache level {name:?} is not l1 … l5"));
        }
        let suffix = suffix.strip_suffix("cache").unwrap_or(suffix);
        return match suffix {
            "" | "d" | "u" => Ok(LevelKind::Cache(depth)),
            "i" => Err(format!(
                "instruction cache {name:?} is not part of the hierarchy"
            )),
            _ => Err(format!("unknown type {name:?}")),
        };
    }
    let kind = if abbreviates("package") || abbreviates("socket") {
        LevelKind::Package
    } else if abbreviates("die") {
        LevelKind::Die
    } else if abbreviates("numanode") || abbreviates("node") {
        LevelKind::Numa
    } else if abbreviates("group") {
        LevelKind::Group
    } else if abbreviates("core") {
        LevelKind::Core
    } else if lower == "pu" {
        LevelKind::Pu
    } else if abbreviates("machine") {
        return Err("machine is the implicit root and cannot be a level".into());
    } else {
        return Err(format!("unknown type {name:?}"));
    };
    Ok(kind)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn smoke() {
        let s = parse("Pack:2 l2u:2 core:1 pu:2(indexes=0,4,1,5,2,6,3,7)").unwrap();
        assert_eq!(
            s.arities,
            [
                (LevelKind::Package, 2),
                (LevelKind::Cache(2), 2),
                (LevelKind::Core, 1),
                (LevelKind::Pu, 2)
            ]
        );
        assert_eq!(s.pu_os, [0, 4, 1, 5, 2, 6, 3, 7]);
    }

    #[test]
    fn malformed() {
        for bad in [
            "",
            "   ",
            "pack:2",
            "pack:2 core:2",
            "pu:2 core:2",
            "pack pu:1",
            "pack:0 pu:1",
            "pack:-1 pu:1",
            "pack:+2 pu:1",
            "pack:2x pu:1",
            "pack:2 pack:2 pu:1",
            "numa:2 node:2 pu:1",
            "machine:2 pu:1",
            "memcache:2 pu:1",
            "misc:2 pu:1",
            "p:2 pu:1",
            "l0:2 pu:1",
            "l6:2 pu:1",
            "l1i:2 pu:1",
            "l3x:2 pu:1",
            "l3:2(size=8MB) pu:1",
            "pack:2 pu:2(indexes=0,1,2)",
            "pack:2 pu:2(indexes=0,0,1,2)",
            "pack:2 pu:2(indexes=3,2,1,0",
            "pack:2 pu:2(foo=1)",
            "pack:100 core:100 pu:100",
            "pack:99999999999999999999 pu:1",
        ] {
            assert!(
                matches!(parse(bad), Err(TopologyError::Synthetic { .. })),
                "{bad:?} should be rejected"
            );
        }
    }
}
