//! Values on the ideal fat-tree: running a combining schedule on real operands.

use super::*;

/// Runs a combining `schedule` (reduce, allreduce, prefix) on the ideal fat-tree `tree` with real
/// values: every processor starts with `initial[p]`; a send carries the sender's value at the
/// send's start (arrivals at that step included) and arrives `2h` steps later, where the
/// receiver combines it with its own — `op(held, received)` or `op(received, held)` so that rank
/// order is kept ([`Operands::Linear`]: a received run of ranks must be adjacent to the held
/// one; [`Operands::Cyclic`] is treated as linear), or held on the left with only double
/// counting checked ([`Operands::Commutative`], `n ≤ 4096`). Returns every processor's final
/// value. Channel capacities are the checker's business.
///
/// # Errors
/// As [`evaluate`](crate::sim::evaluate): [`ValueError::NotCombining`], [`ValueError::Count`],
/// [`ValueError::BadReceiver`], [`ValueError::DoubleCount`], [`ValueError::NonAdjacent`],
/// [`ValueError::Incomplete`], [`ValueError::TooLarge`].
///
/// # Examples
///
/// ```
/// use herald::{Collective, Schedule, model::{FatTree, FatTreeCapacity}, sim::{evaluate_fat_tree, Operands}, time::TimeBase};
/// let tree = FatTree::new(FatTreeCapacity::One);
/// let mut b = Schedule::builder(4, Collective::Prefix, TimeBase::UNIT)?;
/// b.push(0, 0, 1, 0); // arrives at 2: 1 holds "ab"
/// b.push(0, 2, 3, 0); // arrives at 2: 3 holds "cd"
/// b.push(2, 1, 2, 0); // height 2, arrives at 6: 2 holds "abc"
/// b.push(2, 1, 3, 0); // arrives at 6: 3 holds "abcd"
/// let words: Vec<String> = ["a", "b", "c", "d"].map(String::from).into();
/// let v = evaluate_fat_tree(&b.build()?, &tree, words, Operands::Linear, |l: &String, r: &String| format!("{l}{r}"))?;
/// assert_eq!(v, ["a", "ab", "abc", "abcd"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn evaluate<T: Clone>(
    schedule: &Schedule,
    tree: &FatTree,
    initial: Vec<T>,
    operands: Operands,
    mut op: impl FnMut(&T, &T) -> T,
) -> Result<Vec<T>, ValueError> {
    let collective = schedule.collective();
    if !collective.is_combining() {
        return Err(ValueError::NotCombining(collective.name()));
    }
    let n = schedule.n();
    tree.validate(n).map_err(CheckError::from)?;
    if initial.len() != n as usize {
        return Err(ValueError::Count {
            given: initial.len(),
            n,
        });
    }
    if schedule.sends().any(|s| s.what != 0) {
        return evaluate_pieces(schedule, tree, initial, op);
    }
    let commutative = operands == Operands::Commutative;
    if commutative && n > 4096 {
        return Err(ValueError::TooLarge(n));
    }
    let words = if commutative {
        (n as usize).div_ceil(64)
    } else {
        0
    };
    let mut values = initial;
    let mut spans: Vec<Span> = (0..n).map(|p| Span { start: p, len: 1 }).collect();
    let mut sets = vec![0u64; words * n as usize];
    for p in 0..n as usize {
        if words > 0 {
            sets[p * words + p / 64] |= 1 << (p % 64);
        }
    }
    let mut sends: Vec<Transfer> = schedule.sends().collect();
    for s in &sends {
        if s.to >= n || s.to == s.from {
            return Err(ValueError::BadReceiver {
                at: s.at,
                from: s.from,
                to: s.to,
            });
        }
    }
    sends.sort_by_key(|s| (s.at, s.from));
    type Flight<T> = (T, Span, Vec<u64>);
    let mut carried: Vec<Option<Flight<T>>> = vec![None; sends.len()];
    let mut pending: BinaryHeap<Reverse<(Ticks, usize)>> = BinaryHeap::new();
    let mut deliver = |upto: Option<Ticks>,
                       pending: &mut BinaryHeap<Reverse<(Ticks, usize)>>,
                       carried: &mut Vec<Option<Flight<T>>>,
                       values: &mut Vec<T>,
                       spans: &mut Vec<Span>,
                       sets: &mut Vec<u64>|
     -> Result<(), ValueError> {
        while let Some(&Reverse((at, k))) = pending.peek() {
            if upto.is_some_and(|t| at > t) {
                break;
            }
            pending.pop();
            let (from, q) = (sends[k].from, sends[k].to as usize);
            let Some((value, span, bits)) = carried[k].take() else {
                continue;
            };
            let held = spans[q];
            if commutative {
                let set = &mut sets[q * words..(q + 1) * words];
                if let Some(rank) = crate::sim::first_common(set, &bits) {
                    return Err(ValueError::DoubleCount {
                        at,
                        processor: q as u32,
                        from,
                        rank,
                    });
                }
                for (x, y) in set.iter_mut().zip(&bits) {
                    *x |= y;
                }
                values[q] = op(&values[q], &value);
                spans[q] = Span {
                    start: 0,
                    len: held.len + span.len,
                };
                continue;
            }
            let (h_end, s_end) = (held.start + held.len, span.start + span.len);
            if span.start < h_end && held.start < s_end {
                return Err(ValueError::DoubleCount {
                    at,
                    processor: q as u32,
                    from,
                    rank: span.start.max(held.start),
                });
            }
            if s_end == held.start {
                values[q] = op(&value, &values[q]);
                spans[q] = Span {
                    start: span.start,
                    len: span.len + held.len,
                };
            } else if h_end == span.start {
                values[q] = op(&values[q], &value);
                spans[q] = Span {
                    start: held.start,
                    len: held.len + span.len,
                };
            } else {
                return Err(ValueError::NonAdjacent {
                    at,
                    processor: q as u32,
                    from,
                    held,
                    received: span,
                });
            }
        }
        Ok(())
    };
    // Each send in time order, then `None`: deliver everything still in flight.
    for next in sends.iter().enumerate().map(Some).chain([None]) {
        deliver(
            next.map(|(_, s)| s.at),
            &mut pending,
            &mut carried,
            &mut values,
            &mut spans,
            &mut sets,
        )?;
        let Some((k, s)) = next else { break };
        let p = s.from as usize;
        let bits = if commutative {
            sets[p * words..(p + 1) * words].to_vec()
        } else {
            Vec::new()
        };
        carried[k] = Some((values[p].clone(), spans[p], bits));
        let arrival =
            s.at.checked_add(tree.latency(s.from, s.to))
                .ok_or(TimeError::Overflow)?;
        pending.push(Reverse((arrival, k)));
    }
    for q in 0..n {
        let span = spans[q as usize];
        let ok = match collective {
            Collective::Reduce { root } if q != root => true,
            Collective::Reduce { .. } | Collective::Allreduce => span.len == n,
            _ if commutative => {
                let set = &sets[q as usize * words..(q as usize + 1) * words];
                (0..n).all(|x| (set[x as usize / 64] >> (x % 64) & 1 == 1) == (x <= q))
            }
            _ => span.start == 0 && span.len == q + 1,
        };
        if !ok {
            return Err(ValueError::Incomplete {
                processor: q,
                held: span,
            });
        }
    }
    Ok(values)
}

/// The earliest tiling of the run `lo ..= hi` by `pieces` (`(first, last, arrival)`, in any
/// order): the time its last piece arrived and the pieces' indices in rank order, or `None`.
/// Dynamic programming over the run's start positions, `O(p log p)` for `p` pieces.
pub(super) fn tiling(
    pieces: &[(u32, u32, Ticks)],
    lo: u32,
    hi: u32,
) -> Option<(Ticks, Vec<usize>)> {
    let mut order: Vec<usize> = (0..pieces.len())
        .filter(|&i| pieces[i].0 >= lo && pieces[i].1 <= hi)
        .collect();
    order.sort_by_key(|&i| pieces[i].0);
    // best[x]: (earliest time, piece used) to tile lo .. x − 1
    let mut best: std::collections::BTreeMap<u32, (Ticks, usize)> = Default::default();
    best.insert(lo, (0, usize::MAX));
    for &i in &order {
        let (a, b, t) = pieces[i];
        let Some(&(at, _)) = best.get(&a) else {
            continue;
        };
        let cand = (at.max(t), i);
        let slot = best.entry(b + 1).or_insert(cand);
        if cand.0 < slot.0 {
            *slot = cand;
        }
    }
    let &(time, _) = best.get(&(hi + 1))?;
    let mut used = Vec::new();
    let mut x = hi + 1;
    while x > lo {
        let (_, i) = best[&x];
        used.push(i);
        x = pieces[i].0;
    }
    used.reverse();
    Some((time, used))
}

/// [`evaluate`] for schedules that name their runs (the piece rule; `operands` does not
/// matter: pieces are always combined in rank order).
pub(super) fn evaluate_pieces<T: Clone>(
    schedule: &Schedule,
    tree: &FatTree,
    initial: Vec<T>,
    mut op: impl FnMut(&T, &T) -> T,
) -> Result<Vec<T>, ValueError> {
    let n = schedule.n();
    let mut store: Vec<Vec<(u32, u32, Ticks)>> = (0..n).map(|p| vec![(p, p, 0)]).collect();
    let mut vals: Vec<Vec<T>> = initial.into_iter().map(|v| vec![v]).collect();
    let mut sends: Vec<Transfer> = schedule.sends().collect();
    sends.sort_by_key(|s| (s.at, s.from));
    let mut pending: BinaryHeap<Reverse<(Ticks, usize)>> = BinaryHeap::new();
    let mut flying: Vec<Option<(u32, u32, T)>> = vec![None; sends.len()];
    let mut form = |store: &[(u32, u32, Ticks)], vals: &[T], p: u32, lo: u32, hi: u32| {
        let Some((_, used)) = tiling(store, lo, hi) else {
            let mut reach = lo;
            while let Some(&(_, b, _)) = store.iter().find(|x| x.0 == reach && x.1 <= hi) {
                reach = b + 1;
            }
            return Err(ValueError::Incomplete {
                processor: p,
                held: Span {
                    start: lo,
                    len: reach - lo,
                },
            });
        };
        let mut acc = vals[used[0]].clone();
        for &i in &used[1..] {
            acc = op(&acc, &vals[i]);
        }
        Ok(acc)
    };
    let mut k = 0;
    loop {
        let next_send = sends.get(k).map(|s| s.at);
        // arrivals at or before the next send's start come first
        if let Some(&Reverse((a, j))) = pending.peek() {
            if next_send.is_none_or(|t| a <= t) {
                pending.pop();
                let q = sends[j].to as usize;
                if let Some((lo, hi, v)) = flying[j].take() {
                    store[q].push((lo, hi, a));
                    vals[q].push(v);
                }
                continue;
            }
        }
        let Some(&s) = sends.get(k) else { break };
        k += 1;
        if s.to >= n || s.to == s.from {
            return Err(ValueError::BadReceiver {
                at: s.at,
                from: s.from,
                to: s.to,
            });
        }
        let Some((lo, hi)) = FatTree::piece_run(n, s.what) else {
            return Err(ValueError::Incomplete {
                processor: s.from,
                held: Span { start: 0, len: 0 },
            });
        };
        let p = s.from as usize;
        let v = form(&store[p], &vals[p], s.from, lo, hi)?;
        flying[k - 1] = Some((lo, hi, v));
        let arrival = s.at.checked_add(tree.latency(s.from, s.to));
        pending.push(Reverse((arrival.ok_or(TimeError::Overflow)?, k - 1)));
    }
    let collective = schedule.collective();
    let mut out = Vec::with_capacity(n as usize);
    for q in 0..n {
        let hi = match collective {
            Collective::Reduce { root } if q != root => {
                out.push(vals[q as usize][0].clone());
                continue;
            }
            Collective::Prefix => q,
            _ => n - 1,
        };
        out.push(form(&store[q as usize], &vals[q as usize], q, 0, hi)?);
    }
    Ok(out)
}
