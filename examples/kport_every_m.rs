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
//! cargo run --release --example kport_every_m -- 17:313-324      # k = 17, 313 ≤ n ≤ 324
//! cargo run --release --example kport_every_m -- --excepted 18 31 1000
//!     # only the pairs the row plan does not stream (tests/common/kport_class.rs: every other
//!     # pair meets the bound for every m by the proof of docs/kport-reading.md)
//! HERALD_PROGRESS=1 cargo run …   # also one line per pair on stderr as it is settled
//! ```

#[path = "../tests/common/kport_class.rs"]
mod class;
mod common;
#[path = "../tests/common/kport_every_m.rs"]
mod reduction;

use rayon::prelude::*;
use reduction::every_m;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `K:N …`: just those pairs; else the grid the numbers (or their defaults) give.
    // `K:N` or `K:N1-N2` (every n from N1 to N2)
    let mut listed: Vec<(u32, u32)> = Vec::new();
    for a in std::env::args().skip(1) {
        let Some((k, ns)) = a.split_once(':') else {
            continue;
        };
        let k: u32 = k.parse()?;
        let (lo, hi) = ns.split_once('-').unwrap_or((ns, ns));
        listed.extend((lo.parse::<u32>()?..=hi.parse()?).map(|n| (k, n)));
    }
    // HERALD_PROGRESS=1: one line per (k, n) on stderr as soon as it is settled
    let progress = std::env::var_os("HERALD_PROGRESS").is_some();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (cases, range): (Vec<(u32, u32)>, String) =
        if args.first().map(String::as_str) == Some("--excepted") {
            // only the pairs the closed form leaves to the re-plan (every other pair streams)
            let num = |i: usize| -> Result<u32, Box<dyn std::error::Error>> {
                Ok(args.get(i).ok_or("--excepted K_MIN K_MAX N_MAX")?.parse()?)
            };
            let (kmin, kmax, nmax) = (num(1)?.max(2), num(2)?, num(3)?);
            let pairs = (kmin..=kmax)
                .flat_map(|k| (k + 2..=nmax).map(move |n| (k, n)))
                .filter(|&(k, n)| !class::streams(u64::from(k), u64::from(n)))
                .collect();
            (
                pairs,
                format!("the excepted pairs of {kmin} ≤ k ≤ {kmax}, n ≤ {nmax}"),
            )
        } else if listed.is_empty() {
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
        .map(|&(k, n)| {
            let t0 = std::time::Instant::now();
            let v = every_m(n, k);
            // one line per pair as it is settled, so a long sweep stopped early keeps its verdicts
            if progress {
                let verdict = match &v {
                    Ok(s) => s.clone(),
                    Err(e) => format!("FAIL {e}"),
                };
                eprintln!(
                    "k={k} n={n}: {verdict} ({:.1} s)",
                    t0.elapsed().as_secs_f64()
                );
            }
            (k, n, v)
        })
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
