//! Tests of `src/topology` and `src/model/hierarchy.rs`: synthetic descriptions, XML files and
//! sysfs trees under `tests/data`, rank maps, and hwloc against our own readers.
//!
//! Expected hierarchies, LCA levels and maps are derived by hand from the machine descriptions
//! in the comments, not copied from the program's output.

use herald::{
    model::LevelKind,
    topology::{parse_synthetic, parse_xml, read_xml, RankMap, TopologyError},
    Hierarchy, TopologySource,
};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn names(h: &Hierarchy) -> Vec<String> {
    h.levels().iter().map(|l| l.name()).collect()
}

fn counts(h: &Hierarchy) -> Vec<usize> {
    h.levels().iter().map(|l| l.len()).collect()
}

/// The name of the LCA level of two PUs given by OS index.
fn lca(h: &Hierarchy, os_a: usize, os_b: usize) -> String {
    let (a, b) = (h.pu_of_os(os_a).unwrap(), h.pu_of_os(os_b).unwrap());
    h.level(h.lca_level(a, b)).name()
}

fn map(h: &Hierarchy, map: &str, ranks: usize) -> Vec<usize> {
    map.parse::<RankMap>().unwrap().cpus(h, ranks).unwrap()
}

#[test]
fn smoke() {
    let h = TopologySource::Machine.load().unwrap();
    assert!(h.pu_count() >= 1);
    assert_eq!(h.level(0).kind(), LevelKind::Machine);
    assert_eq!(h.level(h.pu_level()).kind(), LevelKind::Pu);
}

/// 2 sockets × 2 NUMA nodes (one L3 each) × 2 cores × 2 hardware threads; threads numbered the
/// Linux way: core k (0..8) has CPUs k and k + 8.
fn check_two_socket_smt(h: &Hierarchy) {
    assert_eq!(names(h), ["machine", "package", "numa", "l3", "core", "pu"]);
    assert_eq!(counts(h), [1, 2, 4, 4, 8, 16]);
    assert_eq!(h.subtree_sizes(), [16, 8, 4, 4, 2, 1].map(Some));
    assert_eq!(
        h.os_indices(),
        [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15]
    );
    assert_eq!(lca(h, 0, 8), "core"); // SMT siblings
    assert_eq!(lca(h, 0, 1), "l3"); // two cores of NUMA node 0 (L3 = NUMA node, the deeper)
    assert_eq!(lca(h, 9, 1), "core");
    assert_eq!(lca(h, 0, 2), "package"); // NUMA nodes 0 and 1 of socket 0
    assert_eq!(lca(h, 3, 11), "core");
    assert_eq!(lca(h, 0, 4), "machine"); // the two sockets
    assert_eq!(lca(h, 15, 15), "pu");
    // Compact: siblings first, then cores of one L3, then NUMA nodes, then sockets; wraps.
    assert_eq!(
        map(h, "compact", 20),
        [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, 0, 8, 1, 9]
    );
    // Scatter: socket 0, socket 1, then the other NUMA node of each socket, then the second
    // core of each NUMA node: every physical core once before any second thread.
    assert_eq!(
        map(h, "scatter", 16),
        [0, 4, 2, 6, 1, 5, 3, 7, 8, 12, 10, 14, 9, 13, 11, 15]
    );
    assert_eq!(map(h, "list:0,2,1,3", 6), [0, 2, 1, 3, 0, 2]);
}

/// One socket, one L3, 4 L2 caches each shared by 2 cores, one thread per core.
fn check_one_socket_8core(h: &Hierarchy) {
    assert_eq!(
        names(h),
        ["machine", "package", "numa", "l3", "l2", "core", "pu"]
    );
    assert_eq!(counts(h), [1, 1, 1, 1, 4, 8, 8]);
    assert_eq!(h.os_indices(), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(lca(h, 0, 1), "l2");
    assert_eq!(lca(h, 6, 7), "l2");
    assert_eq!(lca(h, 1, 2), "l3");
    assert_eq!(lca(h, 0, 7), "l3");
    assert_eq!(map(h, "compact", 8), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(map(h, "scatter", 8), [0, 2, 4, 6, 1, 3, 5, 7]); // one core per L2 first
    assert_eq!(map(h, "scatter", 10), [0, 2, 4, 6, 1, 3, 5, 7, 0, 2]);
}

/// The 2-core development VM: one package and NUMA node, a shared L3, private L2 and L1d, one
/// thread per core.
fn check_this_machine(h: &Hierarchy) {
    assert_eq!(
        names(h),
        ["machine", "package", "numa", "l3", "l2", "l1", "core", "pu"]
    );
    assert_eq!(counts(h), [1, 1, 1, 1, 2, 2, 2, 2]);
    assert_eq!(h.os_indices(), [0, 1]);
    assert_eq!(lca(h, 0, 1), "l3");
    assert_eq!(map(h, "compact", 3), [0, 1, 0]);
    assert_eq!(map(h, "scatter", 2), [0, 1]);
}

const TWO_SOCKET: &str =
    "pack:2 numa:2 l3:1 core:2 pu:2(indexes=0,8,1,9,2,10,3,11,4,12,5,13,6,14,7,15)";
const ONE_SOCKET: &str = "pack:1 l3:1 l2:4 core:2 pu:1";

#[test]
fn synthetic_machines() {
    check_two_socket_smt(&parse_synthetic(TWO_SOCKET).unwrap());
    check_one_socket_8core(&parse_synthetic(ONE_SOCKET).unwrap());
    check_two_socket_smt(&TopologySource::Synthetic(TWO_SOCKET.into()).load().unwrap());
    check_one_socket_8core(&TopologySource::Synthetic(ONE_SOCKET.into()).load().unwrap());
}

#[test]
fn xml_machines() {
    check_two_socket_smt(&read_xml(&data("two-socket-smt.xml")).unwrap());
    check_one_socket_8core(&read_xml(&data("one-socket-8core.xml")).unwrap());
    check_this_machine(&read_xml(&data("this-machine.xml")).unwrap());
    check_two_socket_smt(
        &TopologySource::Xml(data("two-socket-smt.xml"))
            .load()
            .unwrap(),
    );
    check_one_socket_8core(
        &TopologySource::Xml(data("one-socket-8core.xml"))
            .load()
            .unwrap(),
    );
    check_this_machine(
        &TopologySource::Xml(data("this-machine.xml"))
            .load()
            .unwrap(),
    );
}

#[cfg(target_os = "linux")]
#[test]
fn sysfs_trees() {
    check_this_machine(&herald::topology::sysfs_hierarchy_at(&data("sysfs-this-machine")).unwrap());
    // The two-socket machine again, as Linux shows it: L1d and L2 per core besides.
    let h = herald::topology::sysfs_hierarchy_at(&data("sysfs-two-socket-smt")).unwrap();
    assert_eq!(
        names(&h),
        ["machine", "package", "numa", "l3", "l2", "l1", "core", "pu"]
    );
    assert_eq!(counts(&h), [1, 2, 4, 4, 8, 8, 8, 16]);
    assert_eq!(lca(&h, 0, 8), "core");
    assert_eq!(lca(&h, 0, 1), "l3");
    assert_eq!(
        map(&h, "scatter", 16),
        [0, 4, 2, 6, 1, 5, 3, 7, 8, 12, 10, 14, 9, 13, 11, 15]
    );
    let same =
        "pack:2 numa:2 l3:1 l2:2 l1:1 core:1 pu:2(indexes=0,8,1,9,2,10,3,11,4,12,5,13,6,14,7,15)";
    assert_eq!(h, parse_synthetic(same).unwrap());
    let missing = herald::topology::sysfs_hierarchy_at(&data("no-such-dir"));
    assert!(
        matches!(missing, Err(TopologyError::Sysfs { .. })),
        "{missing:?}"
    );
}

#[test]
fn the_issue_example() {
    let h = TopologySource::Synthetic("pack:2 numa:2 l3:4 core:8 pu:2".into())
        .load()
        .unwrap();
    assert_eq!(
        names(&h),
        ["machine", "package", "numa", "l3", "core", "pu"]
    );
    assert_eq!(counts(&h), [1, 2, 4, 16, 128, 256]);
    assert_eq!(h.subtree_sizes(), [256, 128, 64, 16, 2, 1].map(Some));
    assert_eq!(lca(&h, 0, 1), "core");
    assert_eq!(lca(&h, 0, 2), "l3");
    assert_eq!(lca(&h, 15, 16), "numa");
    assert_eq!(lca(&h, 63, 64), "package");
    assert_eq!(lca(&h, 127, 128), "machine");
    assert_eq!(map(&h, "scatter", 4), [0, 128, 64, 192]);
    assert_eq!(map(&h, "compact", 4), [0, 1, 2, 3]);
}

#[test]
fn malformed_synthetic_strings_are_typed_errors() {
    for bad in [
        "",
        "pack:2",
        "pack:2 core:x pu:1",
        "pack:0 pu:1",
        "memcache:2 pu:1",
        "pu:2 pu:2",
        "l1i:2 pu:1",
    ] {
        for result in [
            parse_synthetic(bad),
            TopologySource::Synthetic(bad.into()).load(),
        ] {
            assert!(
                matches!(result, Err(TopologyError::Synthetic { .. })),
                "{bad:?}: {result:?}"
            );
        }
    }
}

#[test]
fn malformed_xml_files_are_typed_errors() {
    // hwloc itself aborts the process on the last two (cpuset assertions in debug builds).
    for bad in [
        "no-such-file.xml",
        "malformed-truncated.xml",
        "malformed-cpuset.xml",
        "inconsistent-cpuset.xml",
    ] {
        for result in [read_xml(&data(bad)), TopologySource::Xml(data(bad)).load()] {
            assert!(
                matches!(result, Err(TopologyError::Xml { .. })),
                "{bad}: {result:?}"
            );
        }
    }
    assert!(matches!(
        parse_xml("<topology/>"),
        Err(TopologyError::Xml { .. })
    ));
}

#[test]
fn conflicting_sources() {
    let both = TopologySource::from_options(Some("pu:1"), Some(Path::new("x.xml")));
    assert_eq!(both, Err(TopologyError::ConflictingSources));
}

#[test]
fn bad_maps() {
    let h = parse_synthetic("core:4 pu:1").unwrap();
    assert!(matches!(
        RankMap::List(vec![0, 4]).cpus(&h, 2),
        Err(herald::topology::MapError::UnknownCpu(4))
    ));
    assert!(RankMap::List(vec![]).cpus(&h, 2).is_err());
    assert!(RankMap::Compact
        .cpus(&h, herald::topology::MAX_RANKS + 1)
        .is_err());
    assert_eq!(RankMap::Scatter.cpus(&h, 0).unwrap(), Vec::<usize>::new());
}

#[test]
fn hierarchy_json_round_trip() {
    let h = parse_synthetic(TWO_SOCKET).unwrap();
    let json = serde_json::to_string(&h).unwrap();
    assert_eq!(serde_json::from_str::<Hierarchy>(&json).unwrap(), h);
}

/// hwloc and our own readers agree.
#[cfg(feature = "hwloc")]
mod hwloc {
    use super::*;

    #[test]
    fn synthetic_strings() {
        for s in [
            TWO_SOCKET,
            ONE_SOCKET,
            "pack:2 numa:2 l3:4 core:8 pu:2",
            "socket:2 pu:2",
            "pu:1",
            "core:8 pu:1",
            "numa:2 pack:2 core:2 pu:1",
            "l3:2 numa:2 core:2 pu:1",
            "pack:2 die:2 l3cache:1 l2u:2 core:2 pu:2",
            "group:3 core:2 pu:3(indexes=17,16,15,14,13,12,11,10,9,8,7,6,5,4,3,2,1,0)",
            "pack:1 numa:1 pu:1",
        ] {
            assert_eq!(
                herald::topology::hwloc_synthetic(s).unwrap(),
                parse_synthetic(s).unwrap(),
                "{s}"
            );
        }
    }

    #[test]
    fn xml_files() {
        for f in [
            "two-socket-smt.xml",
            "one-socket-8core.xml",
            "this-machine.xml",
        ] {
            assert_eq!(
                herald::topology::hwloc_xml(&data(f)).unwrap(),
                read_xml(&data(f)).unwrap(),
                "{f}"
            );
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_machine_hwloc_equals_sysfs() {
        assert_eq!(
            herald::topology::hwloc_machine().unwrap(),
            herald::topology::sysfs_hierarchy().unwrap()
        );
    }
}

fn arities() -> impl Strategy<Value = Vec<(LevelKind, usize)>> {
    let kinds = [
        LevelKind::Package,
        LevelKind::Numa,
        LevelKind::Cache(3),
        LevelKind::Cache(2),
        LevelKind::Core,
    ];
    (
        proptest::collection::vec((any::<bool>(), 1usize..4), kinds.len()),
        1usize..4,
    )
        .prop_map(move |(levels, pus)| {
            let mut a: Vec<(LevelKind, usize)> = kinds
                .iter()
                .zip(levels)
                .filter(|(_, (keep, _))| *keep)
                .map(|(&k, (_, n))| (k, n))
                .collect();
            a.push((LevelKind::Pu, pus));
            a
        })
}

proptest! {
    #[test]
    fn uniform_hierarchies(arities in arities()) {
        let text: Vec<String> = arities.iter().map(|(k, n)| format!("{k}:{n}")).collect();
        let h = parse_synthetic(&text.join(" ")).unwrap();
        let total: usize = arities.iter().map(|a| a.1).product();
        prop_assert_eq!(h.pu_count(), total);
        prop_assert!(h.is_symmetric());
        for map in [RankMap::Compact, RankMap::Scatter] {
            let mut cpus = map.cpus(&h, total).unwrap();
            cpus.sort_unstable();
            prop_assert_eq!(cpus, (0..total).collect::<Vec<_>>());
        }
        for a in 0..total {
            for b in 0..total {
                let d = h.lca_level(a, b);
                prop_assert_eq!(d, h.lca_level(b, a));
                prop_assert_eq!(h.node_of(d, a), h.node_of(d, b));
                if d < h.pu_level() {
                    prop_assert_ne!(h.node_of(d + 1, a), h.node_of(d + 1, b));
                }
            }
        }
    }
}
