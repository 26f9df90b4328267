//! Building a hierarchy's levels: checking each level's groups, dropping redundant levels, nesting.

use super::*;

/// Checks one level's groups and labels each PU position with its group.
pub(super) fn partition(
    kind: LevelKind,
    groups: &[Vec<usize>],
    position: &HashMap<usize, usize>,
) -> Result<Partition, HierarchyError> {
    if matches!(kind, LevelKind::Machine | LevelKind::Pu)
        || matches!(kind, LevelKind::Cache(d) if !(1..=5).contains(&d))
    {
        return Err(HierarchyError::BadLevel(kind));
    }
    let mut label = vec![usize::MAX; position.len()];
    for (g, group) in groups.iter().enumerate() {
        if group.is_empty() {
            return Err(HierarchyError::NotPartition {
                level: kind,
                why: "a group is empty",
            });
        }
        for &os in group {
            let &i = position
                .get(&os)
                .ok_or(HierarchyError::UnknownPu { level: kind, os })?;
            if label[i] != usize::MAX {
                return Err(HierarchyError::NotPartition {
                    level: kind,
                    why: "a PU is in two groups",
                });
            }
            label[i] = g;
        }
    }
    if label.contains(&usize::MAX) {
        return Err(HierarchyError::NotPartition {
            level: kind,
            why: "a PU is in no group",
        });
    }
    Ok(Partition {
        kind,
        label,
        groups: groups.len(),
    })
}

/// Drops `group` and `die` levels identical to another level; rejects repeated kinds.
pub(super) fn drop_redundant(parts: Vec<Partition>) -> Result<Vec<Partition>, HierarchyError> {
    let structural = |k: LevelKind| matches!(k, LevelKind::Group | LevelKind::Die);
    let mut kept: Vec<(Partition, Vec<usize>)> = Vec::with_capacity(parts.len());
    let (mut extra, main): (Vec<Partition>, Vec<Partition>) =
        parts.into_iter().partition(|p| structural(p.kind));
    for p in main {
        if kept.iter().any(|(k, _)| k.kind == p.kind) {
            return Err(HierarchyError::DuplicateLevel(p.kind));
        }
        let c = p.canonical();
        kept.push((p, c));
    }
    extra.sort_by_key(|p| p.kind.tie_order()); // dies before groups
    for p in extra {
        let c = p.canonical();
        if kept.iter().any(|(_, kc)| *kc == c) {
            continue;
        }
        if p.kind == LevelKind::Die && kept.iter().any(|(k, _)| k.kind == LevelKind::Die) {
            return Err(HierarchyError::DuplicateLevel(p.kind));
        }
        kept.push((p, c));
    }
    Ok(kept.into_iter().map(|(p, _)| p).collect())
}

/// Sorts levels coarse to fine and checks that each nests in the one above.
pub(super) fn sort_and_nest(mut parts: Vec<Partition>) -> Result<Vec<Partition>, HierarchyError> {
    parts.sort_by_key(|p| (p.groups, p.kind.tie_order()));
    for pair in parts.windows(2) {
        let (above, below) = (&pair[0], &pair[1]);
        let mut parent = vec![usize::MAX; below.groups];
        for (i, &g) in below.label.iter().enumerate() {
            let a = above.label[i];
            if parent[g] == usize::MAX {
                parent[g] = a;
            } else if parent[g] != a {
                return Err(HierarchyError::NotNested {
                    level: below.kind,
                    above: above.kind,
                });
            }
        }
    }
    Ok(parts)
}
