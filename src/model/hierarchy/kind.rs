//! What the nodes of a level are: [`LevelKind`], its names and parsing.

use super::*;

/// What the nodes of one level of a [`Hierarchy`] are.
///
/// # Examples
///
/// ```
/// use herald::model::LevelKind;
/// assert_eq!(LevelKind::Cache(3).to_string(), "l3");
/// assert_eq!("numa".parse::<LevelKind>()?, LevelKind::Numa);
/// # Ok::<(), herald::model::HierarchyError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum LevelKind {
    /// The whole machine (always level 0, one node).
    Machine,
    /// A processor package (socket).
    Package,
    /// A die inside a package.
    Die,
    /// A NUMA node: the PUs closest to one memory.
    Numa,
    /// Any other grouping (hwloc `Group`, e.g. a cluster of cores).
    Group,
    /// A data or unified cache of the given level (1 ..= 5); its nodes are the PUs sharing one cache.
    Cache(u8),
    /// A core.
    Core,
    /// A processing unit (hardware thread): always the last level, one PU per node.
    Pu,
}

impl LevelKind {
    /// Among levels with identical partitions, the order top to bottom.
    pub(super) fn tie_order(self) -> u8 {
        match self {
            LevelKind::Machine => 0,
            LevelKind::Package => 1,
            LevelKind::Die => 2,
            LevelKind::Numa => 3,
            LevelKind::Group => 4,
            LevelKind::Cache(d) => 10u8.saturating_sub(d.min(5)),
            LevelKind::Core => 10,
            LevelKind::Pu => 11,
        }
    }
}

impl fmt::Display for LevelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LevelKind::Machine => f.write_str("machine"),
            LevelKind::Package => f.write_str("package"),
            LevelKind::Die => f.write_str("die"),
            LevelKind::Numa => f.write_str("numa"),
            LevelKind::Group => f.write_str("group"),
            LevelKind::Cache(d) => write!(f, "l{d}"),
            LevelKind::Core => f.write_str("core"),
            LevelKind::Pu => f.write_str("pu"),
        }
    }
}

impl FromStr for LevelKind {
    type Err = HierarchyError;

    /// Parses the names [`Display`](fmt::Display) prints (`machine`, `package`, `die`, `numa`,
    /// `group`, `l1` … `l5`, `core`, `pu`).
    fn from_str(s: &str) -> Result<LevelKind, HierarchyError> {
        let kind = match s {
            "machine" => LevelKind::Machine,
            "package" => LevelKind::Package,
            "die" => LevelKind::Die,
            "numa" => LevelKind::Numa,
            "group" => LevelKind::Group,
            "core" => LevelKind::Core,
            "pu" => LevelKind::Pu,
            _ => match s.strip_prefix('l').map(str::parse::<u8>) {
                Some(Ok(d @ 1..=5)) => LevelKind::Cache(d),
                _ => return Err(HierarchyError::UnknownKind(s.to_owned())),
            },
        };
        Ok(kind)
    }
}

impl From<LevelKind> for String {
    fn from(kind: LevelKind) -> String {
        kind.to_string()
    }
}

impl TryFrom<String> for LevelKind {
    type Error = HierarchyError;
    fn try_from(s: String) -> Result<LevelKind, HierarchyError> {
        s.parse()
    }
}
