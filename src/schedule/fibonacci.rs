//! 1-port multi-message broadcast on `d` generalized Fibonacci trees (Bruck, Cypher & Ho).
//!
//! `d ≥ 3` odd. The broadcaster (processor 0) sends block `b` in round `b` to the root of tree
//! `b mod d`; tree `i` carries blocks `i, i + d, i + 2d, …`, and a processor with label `l` in
//! tree `i` receives block `b ≡ i (mod d)` in round `l + b − i`. Reading of the paper, the
//! construction and its errata: `docs/oneport.md`.
//!
//! # Construction (section 4 of the paper)
//!
//! * `n' = 1 + d·s` with `n' mod d² = d + 1`: the other processors form `d` groups of `s`; each
//!   group spans a copy `T_h` of the full `d`-ary treetop `T` of `FT_d(f_d(s))` made of the `x =
//!   (s − 1)/d` nodes with the smallest base-0 labels and their children (so `T` is what
//!   "successively removing leaf sibling sets" leaves with the smallest labels). `T̂_h` hangs, under
//!   every leaf of `T_h`, a sibling set of another group's tree, and under one leaf the roots of the
//!   other groups and the virtual processor `v`.
//! * All `T̂_i` are rotations of `T̂_0`: the occupant of a position in `T̂_i` is the occupant in
//!   `T̂_0` with its group number plus `i` (mod `d`), and its label is the label in `T̂_0` plus
//!   `i` (base-`i` labeling). This makes the paper's "arbitrary" pairing concrete, and it is what
//!   makes "the labels associated with any given position are all distinct modulo d" true.
//!   Labels of leaves follow Definition 4.2: a processor of group `h` gets, in `T̂_0`, the smallest
//!   label above its parent's that is `≡ l_h + 2h (mod d)`; `v` the smallest `≡ 0`.
//! * `n mod d = 1` (section 4.3): `β·d` more processors, `β = (n − n')/d ≤ d − 1`, are inserted
//!   in the edges into `β` whole leaf sibling sets (the same positions in every tree). The one in
//!   slot `c` (label `l + c` under a parent labelled `l`) feeds the leaf of slot `c + 1` (slot 1 is
//!   fed by slot `d`), so every leaf keeps its residue and at most one label grows, by `d` … to
//!   `l + d + 1`: "one more round".
//! * arbitrary `n` (section 4.4): `α = (n − 1) mod d` more processors form a chain behind `v`,
//!   which becomes real.
//!
//! Below `d² + d + 1` processors the paper's construction is not defined; herald then uses the
//! largest `n'' ≤ n`, `n'' ≡ 1 (mod d)`, that the two first cases cover (down to `n'' = 1`: the
//! broadcaster alone) and puts the remaining processors in the chain — legal, but the chain is
//! longer than the paper's `d − 1`. `docs/oneport.md` documents it.

use super::{Collective, Schedule, ScheduleError};
use crate::time::TimeBase;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// `m` blocks from root 0 to `n` processors on `d` generalized Fibonacci trees.
pub(super) fn generate(n: u32, m: u32, d: Option<u32>) -> Result<Schedule, ScheduleError> {
    let collective = Collective::Broadcast { root: 0, blocks: m };
    let mut builder = Schedule::builder(n, collective, TimeBase::UNIT)?;
    let d = d.unwrap_or_else(|| paper_d(n));
    if d < 3 || d % 2 == 0 {
        return Err(ScheduleError::NotApplicable {
            algorithm: format!("fibonacci({d})"),
            why: "the number of trees d must be odd and at least 3".into(),
        });
    }
    if n == 1 {
        return builder.build();
    }
    let sends = broadcast_sends(n, m)?;
    ensure_memory(sends.saturating_mul(20))?;
    let plan = Plan::new(u64::from(n), u64::from(d));
    let trees = if plan.s == 0 {
        None
    } else {
        let shape = Shape::new(plan.s, plan.d);
        Some(Trees::best(&shape, &plan))
    };
    builder.reserve(sends as usize);
    // Sends are pushed grouped by sender, each sender's in time order, so `build` only checks.
    let (m64, d64) = (u64::from(m), plan.d);
    let head = plan.chain_head();
    match &trees {
        None => (0..m).for_each(|b| builder.push(u64::from(b), 0, head, b)),
        Some(t) => {
            let root = Occ::Group { group: 0, index: 0 };
            for b in 0..m {
                let to = plan.proc(root, u64::from(b) % d64).unwrap_or(0);
                builder.push(u64::from(b), 0, to, b);
            }
            // group h, node v: internal in tree h only, so it sends blocks b ≡ h (mod d)
            for h in 0..d64 {
                for v in 0..plan.s {
                    let from = (1 + h * plan.s + v) as u32;
                    for b in (h..m64).step_by(d64 as usize) {
                        for e in t.out_of(v) {
                            if let Some(to) = plan.proc(e.to, h) {
                                builder.push(u64::from(e.label) + b, from, to, b as u32);
                            }
                        }
                    }
                }
            }
            // inserted processors: one child in every tree
            for k in 0..plan.beta * d64 {
                let from = (plan.first_extra() + k) as u32;
                for e in t.out_of(plan.s + k) {
                    for b in 0..m64 {
                        if let Some(to) = plan.proc(e.to, b % d64) {
                            builder.push(u64::from(e.label) + b, from, to, b as u32);
                        }
                    }
                }
            }
        }
    }
    // The chain c_1 = v, c_2, …: c_1 receives block b in round L_v + b (L_v = 0 without trees).
    let head_label = trees.as_ref().map_or(0, |t| u64::from(t.v_label));
    for k in 1..plan.alpha {
        for b in 0..m {
            let at = head_label + u64::from(b) + k;
            builder.push(at, head + k as u32 - 1, head + k as u32, b);
        }
    }
    debug_assert_eq!(builder.len() as u64, sends);
    builder.build()
}

/// The sends of a broadcast of `m` blocks to `n ≥ 2` processors (each non-root receives every
/// block once), or [`ScheduleError::TooLarge`] if they do not fit the schedule's `u32` index.
pub(super) fn broadcast_sends(n: u32, m: u32) -> Result<u64, ScheduleError> {
    let sends = u64::from(n - 1) * u64::from(m);
    if sends >= u64::from(u32::MAX) {
        return Err(ScheduleError::TooLarge(format!(
            "{n} processors × {m} blocks need {sends} sends"
        )));
    }
    Ok(sends)
}

/// Fails with [`ScheduleError::TooLarge`] unless `bytes` can be allocated now (the builder's
/// columns take 20 bytes per send), so that a huge request is an error, not an abort.
pub(super) fn ensure_memory(bytes: u64) -> Result<(), ScheduleError> {
    let mut probe: Vec<u8> = Vec::new();
    usize::try_from(bytes)
        .ok()
        .and_then(|b| probe.try_reserve_exact(b).ok())
        .ok_or_else(|| ScheduleError::TooLarge(format!("{bytes} bytes of sends")))
}

/// The paper's choice (Theorem 4.9): the smallest odd `d ≥ log2(3 + log2 n)`, i.e. the smallest
/// odd `d` with `n ≤ 2^(2^d − 3)`.
fn paper_d(n: u32) -> u32 {
    let mut d = 3u32;
    // 2^d − 3 ≥ 32 > log2 n for every u32 n once d ≥ 6
    while d < 6 && u64::from(n) > 1u64 << ((1u32 << d) - 3) {
        d += 2;
    }
    d
}

/// How `n` processors are split: groups, inserted processors, chain.
#[derive(Debug, Clone, Copy)]
struct Plan {
    /// Trees (odd, ≥ 3).
    d: u64,
    /// Group size (`s mod d = 1`), 0 when there are no trees (`n'' = 1`).
    s: u64,
    /// Inserted sibling sets (section 4.3), each of `d` processors.
    beta: u64,
    /// Chain length (section 4.4); its head plays `v`.
    alpha: u64,
}

impl Plan {
    /// The split for `n ≥ 2` and odd `d ≥ 3`.
    fn new(n: u64, d: u64) -> Plan {
        let mut covered = n - (n - 1) % d; // ≡ 1 (mod d)
        loop {
            if covered == 1 {
                return Plan {
                    d,
                    s: 0,
                    beta: 0,
                    alpha: n - 1,
                };
            }
            // the largest n' ≤ covered with n' ≡ d + 1 (mod d²); covered ≥ d + 1 here
            let beta = ((covered - (d + 1)) % (d * d)) / d;
            let s = (covered - beta * d - 1) / d;
            let leaves = (s - 1) / d * (d - 1) + 1;
            if beta <= leaves {
                return Plan {
                    d,
                    s,
                    beta,
                    alpha: n - covered,
                };
            }
            covered -= d;
        }
    }

    /// The first inserted processor.
    fn first_extra(&self) -> u64 {
        1 + self.d * self.s
    }

    /// The chain's first processor (`v` made real).
    fn chain_head(&self) -> u32 {
        (self.first_extra() + self.beta * self.d) as u32
    }

    /// The processor at `occ` in tree `tree` (`None`: the virtual processor).
    fn proc(&self, occ: Occ, tree: u64) -> Option<u32> {
        let p = match occ {
            Occ::Broadcaster => 0,
            Occ::Group { group, index } => {
                1 + (u64::from(group) + tree) % self.d * self.s + u64::from(index)
            }
            Occ::Extra(k) => self.first_extra() + u64::from(k),
            Occ::V if self.alpha > 0 => u64::from(self.chain_head()),
            Occ::V => return None,
        };
        Some(p as u32)
    }
}

/// The tree `T` (shape of every `T_h`) with its base-0 labels.
#[derive(Debug)]
struct Shape {
    /// Base-0 label of each node.
    label: Vec<u32>,
    /// First child of each internal node (children are consecutive), `u32::MAX` for a leaf.
    first_child: Vec<u32>,
    /// Internal nodes in the order they were expanded.
    internal: Vec<u32>,
    /// Leaves by (label, node).
    leaves: Vec<u32>,
    /// Degree.
    d: u32,
}

impl Shape {
    /// The full `d`-ary tree of `s ≡ 1 (mod d)` nodes whose `(s − 1)/d` internal nodes are the
    /// smallest-labelled nodes of the infinite tree in which a node labelled `l` has children
    /// labelled `l + 1, …, l + d` (ties by creation order; a parent's label is below its children's,
    /// so this is ancestor-closed). Every node of that infinite tree labelled `≤ t − d` is internal
    /// in `FT_d(t)`, so `T` is a treetop of `FT_d(f_d(s))`.
    fn new(s: u64, d: u64) -> Shape {
        let x = (s - 1) / d;
        let d32 = d as u32;
        let mut label = vec![0u32];
        let mut first_child = vec![u32::MAX];
        let mut internal = Vec::with_capacity(x as usize);
        let mut heap = BinaryHeap::new();
        heap.push(Reverse((0u32, 0u32)));
        for _ in 0..x {
            let Some(Reverse((l, v))) = heap.pop() else {
                break;
            };
            internal.push(v);
            first_child[v as usize] = label.len() as u32;
            for c in 1..=d32 {
                heap.push(Reverse((l + c, label.len() as u32)));
                label.push(l + c);
                first_child.push(u32::MAX);
            }
        }
        let mut leaves: Vec<(u32, u32)> = heap.into_iter().map(|Reverse(x)| x).collect();
        leaves.sort_unstable();
        Shape {
            label,
            first_child,
            internal,
            leaves: leaves.into_iter().map(|(_, v)| v).collect(),
            d: d32,
        }
    }

    /// The children of internal node `v`.
    fn children(&self, v: u32) -> std::ops::Range<u32> {
        let f = self.first_child[v as usize];
        f..f + self.d
    }
}

/// Who occupies a position of `T̂_0` (rotated by `i` in `T̂_i`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Occ {
    /// Processor 0.
    Broadcaster,
    /// Node `index` of group `group`'s tree `T_group`.
    Group {
        /// Group (rotates with the tree).
        group: u32,
        /// Node of the shape.
        index: u32,
    },
    /// An inserted processor (section 4.3), the same in every tree.
    Extra(u32),
    /// The virtual processor (the chain's head when the chain is not empty).
    V,
}

/// One edge of `T̂_0`: `from` sends to `to` in round `label + b` for block `b ≡ 0 (mod d)`.
#[derive(Debug, Clone, Copy)]
struct Edge {
    /// Sender.
    from: Occ,
    /// Receiver.
    to: Occ,
    /// The receiver's label in `T̂_0`.
    label: u32,
}

/// `T̂_0` as edges, with the label of `v`.
#[derive(Debug)]
struct Trees {
    /// Every edge but the broadcaster's, grouped by sender (group-0 node `v`: key `v`; inserted
    /// processor `k`: key `s + k`), each sender's by label.
    edges: Vec<Edge>,
    /// `edges[offsets[key] .. offsets[key + 1]]` are the edges out of `key`.
    offsets: Vec<u32>,
    /// `v`'s label in `T̂_0`.
    v_label: u32,
    /// Rounds after the last block leaves the broadcaster until all hold it: the makespan is
    /// `m + cost`.
    cost: u64,
}

impl Trees {
    /// `T̂_0` with the best of two choices of the leaf that takes the roots and `v` (the
    /// smallest-labelled leaf, good for the chain; or the largest-labelled leaf `≡ 0 (mod d)`,
    /// where `v` takes the latest slot) — the paper leaves this choice open.
    fn best(shape: &Shape, plan: &Plan) -> Trees {
        let first = Trees::new(shape, plan, 0);
        let d = u32::try_from(plan.d).unwrap_or(u32::MAX);
        let late = shape
            .leaves
            .iter()
            .rposition(|&q| shape.label[q as usize] % d == 0);
        match late {
            Some(r) if r != 0 => {
                let other = Trees::new(shape, plan, r);
                if other.cost < first.cost {
                    other
                } else {
                    first
                }
            }
            _ => first,
        }
    }

    /// `T̂_0` with the roots and `v` under `shape.leaves[r_leaf]`, insertions (section 4.3)
    /// above the `β` smallest-labelled other leaves.
    fn new(shape: &Shape, plan: &Plan, r_leaf: usize) -> Trees {
        let d = plan.d as u32;
        let real = |o: Occ| o != Occ::V || plan.alpha > 0;
        let mut edges = Vec::with_capacity(plan.s as usize * plan.d as usize + 1);
        edges.push(Edge {
            from: Occ::Broadcaster,
            to: Occ::Group { group: 0, index: 0 },
            label: 0,
        });
        let g0 = |index| Occ::Group { group: 0, index };
        for &v in &shape.internal {
            for c in shape.children(v) {
                edges.push(Edge {
                    from: g0(v),
                    to: g0(c),
                    label: shape.label[c as usize],
                });
            }
        }
        // leaves other than r_leaf in label order: the first β get insertions
        let mut inserted = (0..shape.leaves.len())
            .filter(|&k| k != r_leaf)
            .take(plan.beta as usize)
            .collect::<Vec<_>>();
        if inserted.len() < plan.beta as usize {
            inserted.push(r_leaf); // only when T has β leaves in all (small n)
        }
        inserted.sort_unstable();
        // sibling sets of the other groups, in order: (group j, internal node)
        let mut pairs = (1..d).flat_map(|j| shape.internal.iter().map(move |&v| (j, v)));
        let mut set = Vec::with_capacity(d as usize);
        let mut v_label = 0;
        let mut next_extra = 0u32;
        for (k, &q) in shape.leaves.iter().enumerate() {
            let l = shape.label[q as usize];
            // (occupant, residue of its label in T̂_0): Definition 4.2
            set.clear();
            if k == r_leaf {
                set.extend((1..d).map(|j| (Occ::Group { group: j, index: 0 }, (2 * j) % d)));
                set.push((Occ::V, 0));
            } else if let Some((j, v)) = pairs.next() {
                for c in shape.children(v) {
                    let residue = ((u64::from(shape.label[c as usize]) + 2 * u64::from(j))
                        % u64::from(d)) as u32;
                    set.push((Occ::Group { group: j, index: c }, residue));
                }
            }
            let insert = inserted.binary_search(&k).is_ok();
            let base = next_extra;
            if insert {
                for c in 1..=d {
                    edges.push(Edge {
                        from: g0(q),
                        to: Occ::Extra(base + c - 1),
                        label: l + c,
                    });
                }
                next_extra += d;
            }
            for &(occ, residue) in &set {
                // slot in 1..=d: the label l + slot is the smallest above l with this residue
                let slot = (residue + d - l % d + d - 1) % d + 1;
                let (from, label) = if insert {
                    // fed by the inserted processor of the previous slot (slot 1: of slot d)
                    let feeder = if slot == 1 { d } else { slot - 1 };
                    let label = if slot == 1 { l + 1 + d } else { l + slot };
                    (Occ::Extra(base + feeder - 1), label)
                } else {
                    (g0(q), l + slot)
                };
                if occ == Occ::V {
                    v_label = label;
                }
                edges.push(Edge {
                    from,
                    to: occ,
                    label,
                });
            }
        }
        let top = edges
            .iter()
            .filter(|e| real(e.to))
            .map(|e| u64::from(e.label))
            .max()
            .unwrap_or(0);
        let chain = if plan.alpha > 0 {
            u64::from(v_label) + plan.alpha - 1
        } else {
            0
        };
        // group by sender (the broadcaster's edge is implicit), each sender's by label
        let key = |o: Occ| match o {
            Occ::Group { index, .. } => u64::from(index),
            Occ::Extra(k) => plan.s + u64::from(k),
            Occ::Broadcaster | Occ::V => u64::MAX,
        };
        edges.retain(|e| e.from != Occ::Broadcaster);
        edges.sort_unstable_by_key(|e| (key(e.from), e.label));
        let keys = (plan.s + plan.beta * plan.d) as usize;
        let mut offsets = vec![0u32; keys + 1];
        for e in &edges {
            offsets[key(e.from) as usize + 1] += 1;
        }
        for k in 0..keys {
            offsets[k + 1] += offsets[k];
        }
        Trees {
            edges,
            offsets,
            v_label,
            cost: top.max(chain),
        }
    }

    /// The edges out of sender `key` (see [`Trees::edges`]), by label.
    fn out_of(&self, key: u64) -> &[Edge] {
        let k = key as usize;
        &self.edges[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_d_thresholds() {
        assert_eq!(paper_d(2), 3);
        assert_eq!(paper_d(32), 3);
        assert_eq!(paper_d(33), 5);
        assert_eq!(paper_d(1 << 29), 5);
        assert_eq!(paper_d((1 << 29) + 1), 7);
        assert_eq!(paper_d(u32::MAX), 7);
    }

    #[test]
    fn plans_cover_every_processor() {
        for d in [3u64, 5, 7, 9] {
            for n in 2..2000u64 {
                let p = Plan::new(n, d);
                assert_eq!(1 + p.d * p.s + p.beta * p.d + p.alpha, n, "n {n} d {d}");
                if n > d * d + d {
                    assert!(p.alpha < d && p.beta < d, "n {n} d {d}: {p:?}");
                    assert_eq!(p.s % d, 1);
                }
            }
        }
    }
}
