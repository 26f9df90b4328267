//! Times herald's small in-process allreduce, shared memory against the tree, in one binary:
//! `CommRank::allreduce_slice` of `u64` sums with `CommOptions::allreduce_shared_max_bytes` at
//! its default (shared memory up to 4 KiB) and at 0 (up the rank-ordered tree through the
//! rings, then broadcast).
//!
//! ```text
//! cargo run --release --example small_allreduce_timing -- [RANKS] [ROUNDS]
//! ```
//!
//! Each round runs `K` allreduces back to back on a team pinned round-robin to the process's
//! CPUs (each result the next input), timed from a barrier to the slowest rank's end; rounds
//! alternate the contestants; the table gives the median µs per allreduce. Every result is
//! checked.

use herald::{Comm, CommOptions, Team};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(4);
    let rounds = args.get(1).copied().unwrap_or(9);
    let cpus = Team::available_cpus();
    let cores: Vec<usize> = (0..n).map(|r| cpus[r % cpus.len()]).collect();
    let mut team = Team::with_cores(cores).expect("a team");
    let comm_with = |max: usize| {
        let options = CommOptions {
            allreduce_shared_max_bytes: Some(max),
            ..CommOptions::default()
        };
        Comm::with_options(n, options).expect("a communicator")
    };
    let (mut shared, mut tree) = (comm_with(4096), comm_with(0));
    println!(
        "{n} ranks on {} CPUs; median µs per allreduce_slice (u64 sums)",
        cpus.len()
    );
    println!("| bytes | shared memory | tree | tree / shared |");
    println!("|---:|---:|---:|---:|");
    for bytes in [8usize, 64, 512, 4088] {
        let words = bytes / 8;
        let mut k = 1usize;
        let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for round in 0..rounds + 2 {
            for which in [round % 2, 1 - round % 2] {
                let comm = if which == 0 { &mut shared } else { &mut tree };
                let mut ranks = comm.ranks();
                let t = team.run_with(&mut ranks, |_, c| {
                    let mut v = vec![c.rank() as u64; words];
                    c.barrier().unwrap();
                    let start = Instant::now();
                    for _ in 0..k {
                        c.allreduce_slice(&mut v, u64::wrapping_add).unwrap();
                    }
                    let t = start.elapsed().as_secs_f64();
                    let nn = n as u64;
                    let want = (0..nn)
                        .sum::<u64>()
                        .wrapping_mul(nn.wrapping_pow(k as u32 - 1));
                    assert!(v.iter().all(|&x| x == want), "a wrong result");
                    t
                });
                let per = t.into_iter().fold(0.0, f64::max) / k as f64 * 1e6;
                if round >= 2 {
                    times[which].push(per);
                } else if which == 0 {
                    // Warm-up rounds: about 5 ms per round.
                    k = ((5000.0 / per.max(0.01)) as usize).clamp(1, 100_000);
                }
            }
        }
        let (s, t) = (median(times[0].clone()), median(times[1].clone()));
        println!("| {bytes} | {s:.3} | {t:.3} | {:.2} |", t / s);
    }
}
