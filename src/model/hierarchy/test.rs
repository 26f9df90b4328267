use super::*;
use LevelKind::*;

#[test]
fn smoke() {
    let h = Hierarchy::uniform(&[(Package, 2), (Numa, 2), (Core, 2), (Pu, 2)]).unwrap();
    assert_eq!(h.depth(), 5);
    assert_eq!(h.pu_count(), 16);
    assert_eq!(h.level(2).nodes()[3].pus(), 12..16);
    assert_eq!(h.level(2).nodes()[3].parent(), Some(1));
    assert_eq!(h.level(1).nodes()[1].children(), 2..4);
    assert_eq!(h.lca_level(0, 15), 0);
    assert_eq!(h.lca_level(4, 7), 2);
    assert_eq!(h.lca_level(4, 5), 3);
    assert_eq!(h.lca_level(9, 9), 4);
    assert_eq!(h.level(4).arity(), Some(0));
    assert_eq!(h.level(0).arity(), Some(2));
}

#[test]
fn serde_round_trip() {
    let h = Hierarchy::new(&[0, 1, 2, 3], vec![(Core, vec![vec![0, 2], vec![1, 3]])]).unwrap();
    let json = serde_json::to_string(&h).unwrap();
    assert_eq!(
        json,
        r#"{"levels":[{"kind":"machine","sizes":[4]},{"kind":"core","sizes":[2,2]},{"kind":"pu","sizes":[1,1,1,1]}],"os_indices":[0,2,1,3]}"#
    );
    let back: Hierarchy = serde_json::from_str(&json).unwrap();
    assert_eq!(back, h);
    let bad = r#"{"levels":[{"kind":"machine","sizes":[4]},{"kind":"core","sizes":[3,1]},{"kind":"l3","sizes":[2,2]},{"kind":"pu","sizes":[1,1,1,1]}],"os_indices":[0,2,1,3]}"#;
    assert!(serde_json::from_str::<Hierarchy>(bad).is_err());
}

#[test]
fn redundant_groups_and_ties() {
    let all = vec![vec![0, 1, 2, 3]];
    let h = Hierarchy::new(
        &[0, 1, 2, 3],
        vec![
            (Cache(3), all.clone()),
            (Group, vec![vec![0, 1], vec![2, 3]]),
            (Numa, all.clone()),
            (Package, all),
            (Core, vec![vec![0, 1], vec![2, 3]]),
        ],
    )
    .unwrap();
    let kinds: Vec<LevelKind> = h.levels().iter().map(Level::kind).collect();
    assert_eq!(kinds, [Machine, Package, Numa, Cache(3), Core, Pu]);
}

#[test]
fn errors() {
    let e = |levels| Hierarchy::new(&[0, 1, 2, 3], levels).unwrap_err();
    assert!(matches!(
        e(vec![(Core, vec![vec![0, 1], vec![2]])]),
        HierarchyError::NotPartition { .. }
    ));
    assert!(matches!(
        e(vec![(Core, vec![vec![0, 1], vec![1, 2, 3]])]),
        HierarchyError::NotPartition { .. }
    ));
    assert!(matches!(
        e(vec![(Core, vec![vec![0, 1], vec![2, 9]])]),
        HierarchyError::UnknownPu { os: 9, .. }
    ));
    assert!(matches!(
        e(vec![
            (Core, vec![vec![0, 1], vec![2, 3]]),
            (Cache(2), vec![vec![0, 2], vec![1, 3]])
        ]),
        HierarchyError::NotNested { .. }
    ));
    assert!(matches!(
        e(vec![(Pu, vec![])]),
        HierarchyError::BadLevel(Pu)
    ));
    assert_eq!(
        Hierarchy::new(&[], vec![]).unwrap_err(),
        HierarchyError::NoPus
    );
    assert_eq!(
        Hierarchy::new(&[1, 1], vec![]).unwrap_err(),
        HierarchyError::DuplicatePu(1)
    );
    assert_eq!(
        Hierarchy::uniform(&[(Core, 1 << 9), (Pu, 1 << 8)]).unwrap_err(),
        HierarchyError::TooManyPus
    );
}
