//! The real machine from Linux sysfs, without hwloc.
//!
//! Reads, under `<root>/devices/system`:
//!
//! * `cpu/online` — the PUs (else every `cpu/cpuN` directory);
//! * `cpu/cpuN/topology/physical_package_id`, `die_id`, `cluster_id`, `core_id` — packages,
//!   dies, clusters (a `group` level) and cores, each identified within its package (and die);
//! * `cpu/cpuN/cache/index*/{level,type,shared_cpu_list}` — data and unified caches (instruction
//!   caches are skipped, as hwloc does by default);
//! * `node/nodeN/cpulist` — NUMA nodes (one for the whole machine if `node/` is missing).
//!
//! The levels then go through the same assembly as hwloc's, so both give the same
//! [`Hierarchy`].

use super::{assemble, Levels, TopologyError};
use crate::model::{Hierarchy, LevelKind};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The hierarchy of this machine from `/sys`, restricted to the CPUs this process may run on
/// (`Cpus_allowed_list` in `/proc/self/status`), as hwloc restricts it.
///
/// # Errors
///
/// [`TopologyError::Sysfs`] if a needed file is missing or malformed;
/// [`TopologyError::Hierarchy`] if the levels found do not nest.
///
/// # Examples
///
/// ```
/// # #[cfg(target_os = "linux")] {
/// let h = herald::topology::sysfs_hierarchy()?;
/// assert!(h.pu_count() >= 1);
/// # }
/// # Ok::<(), herald::topology::TopologyError>(())
/// ```
pub fn sysfs_hierarchy() -> Result<Hierarchy, TopologyError> {
    let status = Path::new("/proc/self/status");
    let allowed = fs::read_to_string(status).ok().and_then(|text| {
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
        parse_cpu_list(line.trim()).ok()
    });
    read(Path::new("/sys"), allowed)
}

/// The hierarchy described by a sysfs tree rooted at `root` (`/sys` for this machine; a copy of
/// the files listed in the module documentation for another one), with all online CPUs.
///
/// # Errors
///
/// As [`sysfs_hierarchy`].
///
/// # Examples
///
/// ```
/// # #[cfg(target_os = "linux")] {
/// let h = herald::topology::sysfs_hierarchy_at("/sys".as_ref())?;
/// assert!(h.pu_count() >= herald::topology::sysfs_hierarchy()?.pu_count());
/// # }
/// # Ok::<(), herald::topology::TopologyError>(())
/// ```
pub fn sysfs_hierarchy_at(root: &Path) -> Result<Hierarchy, TopologyError> {
    read(root, None)
}

fn read(root: &Path, allowed: Option<Vec<usize>>) -> Result<Hierarchy, TopologyError> {
    let cpu_dir = root.join("devices/system/cpu");
    let mut pus = match fs::read_to_string(cpu_dir.join("online")) {
        Ok(text) => parse_cpu_list(text.trim()).map_err(|r| sysfs(&cpu_dir.join("online"), r))?,
        Err(_) => numbered_entries(&cpu_dir, "cpu")?,
    };
    if let Some(allowed) = allowed {
        let allowed: BTreeSet<usize> = allowed.into_iter().collect();
        pus.retain(|p| allowed.contains(p));
    }
    let mut ids: BTreeMap<&str, BTreeMap<Vec<i64>, Vec<usize>>> = BTreeMap::new();
    let mut caches: BTreeMap<u8, BTreeSet<Vec<usize>>> = BTreeMap::new();
    for &pu in &pus {
        let topo = cpu_dir.join(format!("cpu{pu}/topology"));
        let package = read_id(&topo.join("physical_package_id"))?;
        let die = optional_id(&topo.join("die_id"))?;
        let cluster = optional_id(&topo.join("cluster_id"))?;
        let core = read_id(&topo.join("core_id"))?;
        ids.entry("package")
            .or_default()
            .entry(vec![package])
            .or_default()
            .push(pu);
        if let Some(die) = die {
            ids.entry("die")
                .or_default()
                .entry(vec![package, die])
                .or_default()
                .push(pu);
        }
        let die = die.unwrap_or(0);
        if let Some(cluster) = cluster {
            ids.entry("group")
                .or_default()
                .entry(vec![package, die, cluster])
                .or_default()
                .push(pu);
        }
        ids.entry("core")
            .or_default()
            .entry(vec![package, die, core])
            .or_default()
            .push(pu);
        read_caches(&cpu_dir.join(format!("cpu{pu}/cache")), &mut caches)?;
    }
    let mut levels: Levels = Vec::new();
    for (name, groups) in ids {
        let kind = name.parse().expect("fixed level names");
        levels.push((kind, groups.into_values().collect()));
    }
    for (depth, groups) in caches {
        levels.push((LevelKind::Cache(depth), groups.into_iter().collect()));
    }
    levels.push((LevelKind::Numa, numa_nodes(root, &pus)?));
    assemble(&pus, levels)
}

/// Adds this PU's data and unified caches (by level) to `caches`.
fn read_caches(
    dir: &Path,
    caches: &mut BTreeMap<u8, BTreeSet<Vec<usize>>>,
) -> Result<(), TopologyError> {
    let Ok(indices) = numbered_entries(dir, "index") else {
        return Ok(()); // no cache information: the cache levels will not cover every PU
    };
    for index in indices {
        let index = dir.join(format!("index{index}"));
        let kind = read_trimmed(&index.join("type"))?;
        if kind == "Instruction" {
            continue;
        }
        let level_path = index.join("level");
        let level: u8 = read_trimmed(&level_path)?
            .parse()
            .map_err(|_| sysfs(&level_path, "not a cache level"))?;
        if !(1..=5).contains(&level) {
            continue;
        }
        let shared = index.join("shared_cpu_list");
        let cpus = parse_cpu_list(&read_trimmed(&shared)?).map_err(|r| sysfs(&shared, r))?;
        caches.entry(level).or_default().insert(cpus);
    }
    Ok(())
}

/// The CPUs of each NUMA node (a single node of all `pus` without `node/`).
fn numa_nodes(root: &Path, pus: &[usize]) -> Result<Vec<Vec<usize>>, TopologyError> {
    let node_dir = root.join("devices/system/node");
    let Ok(nodes) = numbered_entries(&node_dir, "node") else {
        return Ok(vec![pus.to_vec()]);
    };
    let mut groups = Vec::with_capacity(nodes.len());
    for node in nodes {
        let path = node_dir.join(format!("node{node}/cpulist"));
        groups.push(parse_cpu_list(&read_trimmed(&path)?).map_err(|r| sysfs(&path, r))?);
    }
    Ok(groups)
}

/// The numbers N of the entries `<prefix>N` of a directory, sorted.
fn numbered_entries(dir: &Path, prefix: &str) -> Result<Vec<usize>, TopologyError> {
    let entries = fs::read_dir(dir).map_err(|e| sysfs(dir, e.to_string()))?;
    let mut numbers: Vec<usize> = entries
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_prefix(prefix)?
                .parse()
                .ok()
        })
        .collect();
    numbers.sort_unstable();
    Ok(numbers)
}

fn read_trimmed(path: &Path) -> Result<String, TopologyError> {
    fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .map_err(|e| sysfs(path, e.to_string()))
}

fn read_id(path: &Path) -> Result<i64, TopologyError> {
    read_trimmed(path)?
        .parse()
        .map_err(|_| sysfs(path, "not an integer"))
}

fn optional_id(path: &Path) -> Result<Option<i64>, TopologyError> {
    if path.exists() {
        read_id(path).map(Some)
    } else {
        Ok(None)
    }
}

fn sysfs(path: &Path, reason: impl Into<String>) -> TopologyError {
    TopologyError::Sysfs {
        path: PathBuf::from(path),
        reason: reason.into(),
    }
}

/// Parses a Linux CPU list such as `0-3,8,10-11` (empty: no CPU).
fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let bad = || format!("malformed CPU list {text:?}");
        let (lo, hi) = match item.split_once('-') {
            Some((lo, hi)) => (
                lo.parse().map_err(|_| bad())?,
                hi.parse().map_err(|_| bad())?,
            ),
            None => {
                let cpu: usize = item.parse().map_err(|_| bad())?;
                (cpu, cpu)
            }
        };
        if lo > hi || hi - lo >= crate::model::MAX_PUS {
            return Err(bad());
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11").unwrap(),
            [0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_cpu_list("").unwrap(), Vec::<usize>::new());
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("a").is_err());
    }
}
