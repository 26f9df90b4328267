//! Issue 22, part 1: the rotation algorithm meets Theorem 10's bound `⌈m/k'⌉ + ⌈log_{k'+1} n⌉`
//! for **every** `m`, for each `(k, n)` of a grid — by the reduction of `docs/kport-reading.md`
//! ("Every m"), whose steps this example checks on the generated schedules, never on the
//! generator's internals:
//!
//! * **Streaming `n`** (every block of a long schedule is everywhere `D = ⌈log_{k'+1} n⌉` rounds
//!   after the root sent it): (R1) the schedule for `m` is the long schedule restricted to the
//!   blocks `< m` (checked for `m ≤ 3k'` and one larger `m`); (R2) the long schedule is periodic:
//!   from round `D + 1` on, round `r + P` is round `r` with every block id raised by `P·k'`
//!   (the smallest such `P` is found and confirmed over at least two periods); (R3) the long
//!   schedule is legal (checker) and every block's last arrival is at most `D` rounds after its
//!   batch left the root. Then every round of every finite schedule is a restriction of a
//!   checked round, and every block arrives in time: every `m` meets the bound.
//! * **Other `n`** (the row plan needs `D + 1`; the last batches are re-planned): the checker and
//!   the bound for every `m ≤ k'(B0 + P)` (`B0 = 2D + 6` batches) — and (R4) for every
//!   `B0 ≤ B < B0 + P` and every size `β` of the last batch, the schedule for `B + P` batches
//!   ends with the same rounds as the one for `B` (its last `2D + 6` rounds, shifted by `P`
//!   rounds and `P·k'` blocks), while its earlier rounds are periodic row-plan rounds (R2, R3
//!   with `D + 1`). So the verdict for `B` batches repeats with period `P`: every `m`.
//!
//! ```text
//! cargo run --release --example kport_every_m            # k ≤ 9, n ≤ 400 (minutes)
//! cargo run --release --example kport_every_m -- 6 120   # k ≤ 6, n ≤ 120
//! cargo run --release --example kport_every_m -- 16 400 3 10   # 10 ≤ k ≤ 16, 3 ≤ n ≤ 400
//! cargo run --release --example kport_every_m -- 13:189 15:248  # just these (k, n) pairs
//! ```

mod common;
#[path = "../tests/common/kport_every_m.rs"]
mod reduction;

use rayon::prelude::*;
use reduction::every_m;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `K:N …`: just those pairs; else the grid the numbers (or their defaults) give.
    let listed: Vec<(u32, u32)> = std::env::args()
        .skip(1)
        .filter_map(|a| a.split_once(':').map(|(k, n)| (k.to_owned(), n.to_owned())))
        .map(|(k, n)| Ok::<_, std::num::ParseIntError>((k.parse()?, n.parse()?)))
        .collect::<Result<_, _>>()?;
    let (cases, range): (Vec<(u32, u32)>, String) = if listed.is_empty() {
        let [kmax, nmax, nmin, kmin] = common::numbers([9, 400, 3, 2])?;
        let grid = (kmin..=kmax)
            .flat_map(|k| (nmin..=nmax).map(move |n| (k, n)))
            .collect();
        (grid, format!("{kmin} ≤ k ≤ {kmax}, {nmin} ≤ n ≤ {nmax}"))
    } else {
        (listed, "listed".to_owned())
    };
    let verdicts: Vec<(u32, u32, Result<String, String>)> = cases
        .par_iter()
        .map(|&(k, n)| (k, n, every_m(n, k)))
        .collect();
    let mut bad = 0;
    let mut streaming = 0;
    let mut pmax = 0u64;
    for (k, n, v) in &verdicts {
        if let Some(p) = v.as_ref().ok().and_then(|s| s.split("P = ").nth(1)) {
            let p: u64 = p.split(',').next().unwrap_or("0").parse().unwrap_or(0);
            pmax = pmax.max(p);
        }
        match v {
            Ok(s) if s.starts_with("streaming") => streaming += 1,
            Ok(s) => println!("k={k} n={n}: {s}"),
            Err(e) => {
                bad += 1;
                println!("FAIL {e}");
            }
        }
    }
    println!(
        "{} (k, n) pairs ({range}): {streaming} streaming, {} re-planned, \
         {bad} failed; periods P ≤ {pmax}",
        cases.len(),
        cases.len() - streaming - bad
    );
    if bad == 0 {
        Ok(())
    } else {
        Err("some cases fail".into())
    }
}
