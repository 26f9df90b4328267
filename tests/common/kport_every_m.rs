//! The reduction of `docs/kport-reading.md` ("Every m"): for one `(k, n)`, whether the rotation
//! algorithm meets Theorem 10's bound for every `m`, checked on generated schedules only. Shared
//! by `tests/kport_every_m.rs` and `examples/kport_every_m.rs`.

use std::collections::{BTreeMap, BTreeSet};

use herald::{check, generate, model::KPort, Algorithm, Model, Request, Schedule};
use rayon::prelude::*;

/// `⌈log_b x⌉`.
fn clog(b: u64, x: u64) -> u64 {
    let (mut l, mut p) = (0, 1u64);
    while p < x {
        p *= b;
        l += 1;
    }
    l
}

type Sends = BTreeSet<(u64, u32, u32, u32)>;

fn build(n: u32, m: u32, k: u32) -> Result<(Schedule, Model), String> {
    let model = Model::from(KPort::new(k).map_err(|e| e.to_string())?);
    let s = generate(&Request::broadcast(Algorithm::Rotation, n, m, 0), &model)
        .map_err(|e| format!("k={k} n={n} m={m}: {e}"))?;
    Ok((s, model))
}

fn sends(s: &Schedule) -> Sends {
    s.sends().map(|t| (t.at, t.from, t.to, t.what)).collect()
}

/// Legal by the checker and within Theorem 10's bound.
fn meets(n: u32, m: u32, k: u32, kq: u32, d: u64) -> Result<(), String> {
    let (s, model) = build(n, m, k)?;
    let r = check(&s, &model).map_err(|e| format!("k={k} n={n} m={m}: {e}"))?;
    let bound = u64::from(m.div_ceil(kq)) + d;
    if !r.legal() {
        return Err(format!("k={k} n={n} m={m}: illegal"));
    }
    if r.makespan() > bound {
        return Err(format!("k={k} n={n} m={m}: {} > {bound}", r.makespan()));
    }
    Ok(())
}

/// Round `r`'s sends with block ids taken relative to `k'·r`.
fn signatures(s: &Sends, kq: u32) -> BTreeMap<u64, Vec<(u32, u32, i64)>> {
    let mut by: BTreeMap<u64, Vec<(u32, u32, i64)>> = BTreeMap::new();
    for &(r, from, to, id) in s {
        by.entry(r)
            .or_default()
            .push((from, to, i64::from(id) - i64::from(kq) * r as i64));
    }
    by
}

/// The smallest `P` such that rounds `lo ≤ r` and `r + P < hi` agree (relative ids), confirmed
/// over at least two periods.
fn period(s: &Sends, kq: u32, lo: u64, hi: u64) -> Option<u64> {
    let sig = signatures(s, kq);
    let empty = Vec::new();
    let at = |r: u64| sig.get(&r).unwrap_or(&empty);
    (1..=(hi - lo) / 3).find(|&p| (lo..hi - p).all(|r| at(r) == at(r + p)))
}

/// The longest time from a block's batch to its last arrival.
fn lag(s: &Sends, kq: u32) -> u64 {
    let mut last: BTreeMap<u32, u64> = BTreeMap::new();
    for &(r, _, _, id) in s {
        let e = last.entry(id).or_default();
        *e = (*e).max(r);
    }
    last.iter()
        .map(|(&id, &r)| r - u64::from(id / kq))
        .max()
        .unwrap_or(0)
}

/// The verdict for one `(k, n)`: `Ok(description)` if every `m` meets the bound.
pub(crate) fn every_m(n: u32, k: u32) -> Result<String, String> {
    let kq = k.min(n - 1);
    let d = clog(u64::from(kq) + 1, u64::from(n));
    // a long schedule; its middle must hold two periods
    let mut batches = 40 + 2 * d;
    let (long, p) = loop {
        let (s, model) = build(n, kq * batches as u32, k)?;
        let long = sends(&s);
        let lo = d + 2;
        let hi = batches - 4; // the last batches may be re-planned
        if let Some(p) = period(&long, kq, lo, hi) {
            let r = check(&s, &model).map_err(|e| e.to_string())?;
            if !r.legal() {
                return Err(format!("k={k} n={n}: long schedule illegal"));
            }
            break (long, p);
        }
        if batches > 1200 {
            return Err(format!("k={k} n={n}: no period within {batches} batches"));
        }
        batches *= 2;
    };
    let lag = lag(&long, kq);
    if lag <= d {
        // R1: restriction
        let mb = kq * batches as u32;
        for m in (1..=3 * kq).chain([mb / 2 + 1]) {
            let (s, _) = build(n, m, k)?;
            let want: Sends = long.iter().filter(|x| x.3 < m).copied().collect();
            if sends(&s) != want {
                return Err(format!("k={k} n={n} m={m}: not the restriction"));
            }
        }
        return Ok(format!("streaming, P = {p}"));
    }
    if lag > d + 1 {
        return Err(format!("k={k} n={n}: steady lag {lag} > D + 1"));
    }
    // re-planned: every m up to k'(B0 + P), then R4
    let b0 = 2 * d + 6;
    let ms: Vec<u32> = (1..=kq * (b0 + p) as u32).collect();
    ms.par_iter().try_for_each(|&m| meets(n, m, k, kq, d))?;
    let window = 2 * d + 6;
    let pairs: Vec<(u64, u32)> = (b0..b0 + p)
        .flat_map(|b| (1..=kq).map(move |beta| (b, beta)))
        .collect();
    pairs.par_iter().try_for_each(|&(b, beta)| {
        let m = (b as u32 - 1) * kq + beta;
        let m2 = m + p as u32 * kq;
        let tail = |m: u32, shift: u64| -> Result<Vec<(u64, u32, u32, u32)>, String> {
            let (s, _) = build(n, m, k)?;
            let end = u64::from(m.div_ceil(kq)) + d + 1;
            let from = end.saturating_sub(window);
            Ok(sends(&s)
                .into_iter()
                .filter(|x| x.0 >= from)
                .map(|(r, f, t, id)| (r - shift, f, t, id - (shift as u32) * kq))
                .collect())
        };
        if tail(m, 0)? != tail(m2, p)? {
            return Err(format!(
                "k={k} n={n} m={m}: last rounds differ from m = {m2}"
            ));
        }
        Ok(())
    })?;
    Ok(format!(
        "re-planned, P = {p}, every m ≤ {} checked",
        kq * (b0 + p) as u32
    ))
}
