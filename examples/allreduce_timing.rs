//! Times herald's in-process allreduce of `u64` sums, old against new, in one binary: the value
//! API ([`CommRank::allreduce`] of a `[u64; L]`, combined whole up the rank-ordered tree and
//! broadcast) and the slice API ([`CommRank::allreduce_slice`] of a heap `Vec<u64>`, single
//! copy from `CommOptions::allreduce_direct_min_bytes`, line path below it), and the slice API
//! with the line path forced (threshold `usize::MAX`).
//!
//! ```text
//! cargo run --release --example allreduce_timing -- [RANKS] [ROUNDS]
//! ```
//!
//! Each round runs `K` allreduces back to back on a pinned team (each result the next input),
//! timed from a barrier to the last rank's end; rounds alternate the contestants, and the
//! table gives the median µs per allreduce over the rounds. Every result is checked.

use herald::{Comm, CommOptions, CommRank, Team};
use std::time::Instant;

/// µs per allreduce of one round of `k` calls on per-rank state made by `init` (before the
/// clock starts): the slowest rank's time after a barrier. Checks every rank's final state
/// with `last`: after `k` sums of `rank` values, every element is `Σr · n^(k-1)` (wrapping).
fn round<S>(
    team: &mut Team,
    ranks: &mut [CommRank<'_>],
    k: usize,
    init: impl Fn(u64) -> S + Sync,
    one: impl Fn(&mut CommRank<'_>, &mut S) + Sync,
    last: impl Fn(&S) -> u64 + Sync,
) -> f64 {
    let t = team.run_with(ranks, |_, c| {
        let mut state = init(c.rank() as u64);
        c.barrier().unwrap();
        let start = Instant::now();
        for _ in 0..k {
            one(c, &mut state);
        }
        let t = start.elapsed().as_secs_f64();
        let n = c.size() as u64;
        let want = (0..n)
            .sum::<u64>()
            .wrapping_mul(n.wrapping_pow(k as u32 - 1));
        assert_eq!(last(&state), want, "a wrong result");
        t
    });
    t.into_iter().fold(0.0, f64::max) / k as f64 * 1e6
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The value API of a `V` made of u64s (`[u64; L]`, or `[[u64; 1024]; M]` beyond the array
/// lengths bytemuck implements `Pod` for), boxed on the caller's side (the value still moves
/// by value).
fn value_api<V: bytemuck::Pod>(c: &mut CommRank<'_>, v: &mut Box<V>) {
    **v = c
        .allreduce(**v, |a: V, b: V| {
            let mut o = a;
            let words: &mut [u64] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut o));
            let theirs: &[u64] = bytemuck::cast_slice(std::slice::from_ref(&b));
            words
                .iter_mut()
                .zip(theirs)
                .for_each(|(x, y)| *x = x.wrapping_add(*y));
            o
        })
        .unwrap();
}

/// The last word of a value.
fn last<V: bytemuck::Pod>(v: &V) -> u64 {
    *bytemuck::cast_slice::<V, u64>(std::slice::from_ref(v))
        .last()
        .unwrap()
}

fn slice_api(c: &mut CommRank<'_>, v: &mut [u64]) {
    c.allreduce_slice(v, u64::wrapping_add).unwrap();
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(2);
    let rounds = args.get(1).copied().unwrap_or(9);
    let mut team = Team::builder()
        .ranks(n)
        .stack_size(64 << 20)
        .build()
        .unwrap();
    let mut comm = Comm::new(n).unwrap();
    let line_only = CommOptions {
        allreduce_direct_min_bytes: usize::MAX,
        ..CommOptions::default()
    };
    let mut comm_line = Comm::with_options(n, line_only).unwrap();
    println!("{n} ranks, median µs per allreduce over {rounds} rounds");
    println!("| bytes | value API (old) | slice, line path | slice (default) |");
    println!("|---:|---:|---:|---:|");
    macro_rules! sizes {
        ($($v:ty)*) => {$({
            let l = std::mem::size_of::<$v>() / 8;
            let bytes = l * 8;
            let k = (200_000 / (bytes / 64 + 20)).clamp(3, 2000);
            let (mut old, mut line, mut new) = (vec![], vec![], vec![]);
            for _ in 0..rounds {
                let mut ranks = comm.ranks();
                let boxed = |r: u64| {
                    let mut v: Box<$v> = Box::new(bytemuck::Zeroable::zeroed());
                    bytemuck::cast_slice_mut::<$v, u64>(std::slice::from_mut(&mut *v)).fill(r);
                    v
                };
                let heap = |r| vec![r; l];
                old.push(round(&mut team, &mut ranks, k, boxed, value_api::<$v>, |v| last(&**v)));
                new.push(round(&mut team, &mut ranks, k, heap, |c, v: &mut Vec<u64>| slice_api(c, v), |v| v[l - 1]));
                drop(ranks);
                let mut ranks = comm_line.ranks();
                line.push(round(&mut team, &mut ranks, k, heap, |c, v: &mut Vec<u64>| slice_api(c, v), |v| v[l - 1]));
            }
            println!("| {bytes} | {:.2} | {:.2} | {:.2} |", median(old), median(line), median(new));
        })*};
    }
    type K = [u64; 1024];
    sizes!([u64; 1] [u64; 8] [u64; 64] [u64; 256] [u64; 512] [u64; 1024] [u64; 2048]
        [u64; 4096] [K; 8] [K; 32] [K; 128] [K; 512]);
}
