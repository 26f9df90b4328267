//! The k-port rotation algorithm against Theorem 10's bound `⌈m/k'⌉ + ⌈log_{k'+1} n⌉` (Bar-Noy &
//! Ho), over a whole grid: every `k ≤ K`, `2 ≤ n ≤ N`, `1 ≤ m ≤ 4k + 1` (issue 22). Every
//! schedule goes through the k-port checker; the example prints each case that is illegal or
//! over the bound, a summary, and exits with an error if there is any.
//!
//! ```text
//! cargo run --release --example kport_sweep            # K = 9, N = 400 (minutes)
//! cargo run --release --example kport_sweep -- 6 120   # K = 6, N = 120
//! ```
//!
//! The fast tests (`tests/kport_rotation.rs`) cover the cases that needed the re-plan; this is
//! the wide sweep behind the claims in `docs/kport-reading.md`.

mod common;

use herald::{check, generate, model::KPort, Algorithm, Model, Request};
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let [kmax, nmax] = common::numbers([9, 400])?;
    let cases: Vec<(u32, u32, u32)> = (2..=kmax)
        .flat_map(|k| (2..=nmax).flat_map(move |n| (1..=4 * k + 1).map(move |m| (k, n, m))))
        .collect();
    let bad: Vec<String> = cases
        .par_iter()
        .filter_map(|&(k, n, m)| {
            let model = Model::from(KPort::new(k).ok()?);
            let s = match generate(&Request::broadcast(Algorithm::Rotation, n, m, 0), &model) {
                Ok(s) => s,
                Err(e) => return Some(format!("k={k} n={n} m={m}: {e}")),
            };
            let r = match check(&s, &model) {
                Ok(r) => r,
                Err(e) => return Some(format!("k={k} n={n} m={m}: {e}")),
            };
            let kq = k.min(n - 1);
            let bound = u64::from(m.div_ceil(kq)) + clog(u64::from(kq) + 1, u64::from(n));
            if !r.legal() {
                Some(format!("k={k} n={n} m={m}: illegal"))
            } else if r.makespan() > bound {
                Some(format!(
                    "k={k} n={n} m={m}: {} rounds, bound {bound}",
                    r.makespan()
                ))
            } else {
                None
            }
        })
        .collect();
    for line in &bad {
        println!("{line}");
    }
    println!(
        "{} cases (k ≤ {kmax}, n ≤ {nmax}, m ≤ 4k + 1), {} over Theorem 10's bound or illegal",
        cases.len(),
        bad.len()
    );
    if bad.is_empty() {
        Ok(())
    } else {
        Err("some cases miss the bound".into())
    }
}
