//! Times a one-block star broadcast from rank 0, posted and by single copy, on a placement of
//! ranks on CPUs given on the command line, and when each rank returns: where `herald
//! fidelity` times a call as a whole, this shows which rank ends it. (Posting applies where
//! ranks share CPUs, or to payloads of one slot; elsewhere the line says `stream`.)
//!
//! ```text
//! cargo run --release --example placement_timing -- CPUS BYTES [SLICES] [REPS]
//! cargo run --release --example placement_timing -- 0,0,0,1 8,8192,65536
//! ```
//!
//! `CPUS` names the CPU of each rank (indices into the process's CPUs, rank 0 the root);
//! `BYTES` the payload sizes. Each slice runs `REPS` barrier-then-one broadcasts (two barriers,
//! then rank 0 reads the clock and broadcasts; each rank reads the clock when its call
//! returns), writing fresh data on the root before each; a line gives, per size and
//! transport, the median over slices of each slice's median makespan (the root's start to the
//! latest return) and of each rank's median return, and per rank in how many broadcasts it
//! returned first among its CPU's readers (which thread of a CPU catches the call first, where
//! medians of ranks that swap that role mix two roles). The bytes are checked after a slice's last
//! broadcast only: a check after every broadcast changed what it measured (a 64 KiB post
//! between two CPUs took 8.8 µs with it and 7.5 without, docs/fidelity.md, "Seventieth
//! session").

use herald::stats::median;
use herald::{Algorithm, Comm, CommOptions, Model, Postal, Program, Ratio, Request, Team};
use std::time::Instant;

/// Rewrites `buf` for repetition `i`.
fn fill(buf: &mut [u8], i: u64) {
    for (j, b) in buf.iter_mut().enumerate() {
        *b = (j as u8).wrapping_mul(31) ^ (i as u8);
    }
}

/// Per slice: the median makespan, each rank's median return, ns, and per repetition the
/// rank that returned first among each group of `readers` (the readers of one CPU).
fn slice(
    readers: &[Vec<usize>],
    team: &mut Team,
    comm: &mut Comm,
    program: &Program,
    posted: bool,
    bytes: usize,
    reps: u64,
) -> (f64, Vec<f64>, Vec<usize>) {
    let mut ranks = comm.ranks();
    let out = team.run_with(&mut ranks, |_, c| {
        let me = c.rank();
        let call = |c: &mut herald::CommRank<'_>, buf: &mut [u8]| {
            if posted {
                c.broadcast(0, buf)
            } else {
                c.broadcast_with(program, buf)
            }
        };
        let mut buf = vec![0u8; bytes];
        c.barrier()?;
        call(c, &mut buf)?;
        let (mut starts, mut ends) = (Vec::new(), Vec::new());
        for i in 0..reps {
            if me == 0 {
                fill(&mut buf, i);
            }
            c.barrier()?;
            c.barrier()?;
            if me == 0 {
                starts.push(Instant::now());
            }
            call(c, &mut buf)?;
            ends.push(Instant::now());
        }
        // Every rank is done before any checks its bytes.
        c.barrier()?;
        let mut want = vec![0u8; bytes];
        fill(&mut want, reps - 1);
        Ok::<_, herald::runtime::CollectiveError>((starts, ends, buf == want))
    });
    let records: Vec<_> = out
        .into_iter()
        .enumerate()
        .map(|(r, o)| {
            let o = o.unwrap_or_else(|e| panic!("rank {r}: {e}"));
            assert!(o.2, "rank {r} holds wrong bytes after {bytes} bytes");
            o
        })
        .collect();
    let starts = &records[0].0;
    let since = |end: Instant, i: usize| end.saturating_duration_since(starts[i]).as_nanos() as f64;
    let span: Vec<f64> = (0..reps as usize)
        .map(|i| since(records.iter().map(|r| r.1[i]).max().expect("ranks"), i))
        .collect();
    let each = records
        .iter()
        .map(|r| {
            median(
                &(0..reps as usize)
                    .map(|i| since(r.1[i], i))
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    let records = &records;
    let firsts = (0..reps as usize)
        .flat_map(|i| {
            readers.iter().map(move |group| {
                *group
                    .iter()
                    .min_by_key(|&&r| records[r].1[i])
                    .expect("a reader on that CPU")
            })
        })
        .collect();
    (median(&span), each, firsts)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let list = |i: usize| -> Vec<usize> {
        args.get(i)
            .map(|a| a.split(',').filter_map(|x| x.parse().ok()).collect())
            .unwrap_or_default()
    };
    let (placement, sizes) = (list(0), list(1));
    if placement.len() < 2 || sizes.is_empty() {
        eprintln!("usage: placement_timing CPUS BYTES [SLICES] [REPS] (CPUS, BYTES: comma lists)");
        std::process::exit(2);
    }
    let slices = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(15);
    let reps = args
        .get(3)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100u64)
        .max(1);
    let cpus = Team::available_cpus();
    let Some(cores) = placement
        .iter()
        .map(|&c| cpus.get(c).copied())
        .collect::<Option<Vec<usize>>>()
    else {
        eprintln!("placement_timing: this process has {} CPUs", cpus.len());
        std::process::exit(2);
    };
    let n = cores.len();
    let mut distinct = cores.clone();
    distinct.sort_unstable();
    distinct.dedup();
    // The readers (every rank but the root) of each CPU that has some.
    let readers: Vec<Vec<usize>> = distinct
        .iter()
        .map(|&c| (1..n).filter(|&r| cores[r] == c).collect::<Vec<_>>())
        .filter(|g| !g.is_empty())
        .collect();
    let model = Model::from(Postal::new(Ratio::ONE).expect("λ = 1"));
    let star = herald::generate(&Request::broadcast(Algorithm::Star, n as u32, 1, 0), &model)
        .expect("a star");
    let program = Program::compile(&star).expect("a star compiles");
    let mut team = Team::with_cores(cores.clone()).expect("a team on these CPUs");
    println!("ranks on CPUs {placement:?}; median ns over {slices} slices of {reps} broadcasts");
    for &bytes in &sizes {
        for posted in [true, false] {
            let options = CommOptions {
                cpus: Some(distinct.len()),
                direct_min_bytes: if posted { usize::MAX } else { 1 },
                posted_broadcast: posted,
                shared_posted_bytes: Some(0..=herald::runtime::SHARED_POSTED_LIMIT),
                ..CommOptions::default()
            };
            let mut comm = Comm::with_options(n, options).expect("a communicator");
            let runs: Vec<(f64, Vec<f64>, Vec<usize>)> = (0..slices)
                .map(|_| {
                    slice(
                        &readers, &mut team, &mut comm, &program, posted, bytes, reps,
                    )
                })
                .collect();
            let mut first = vec![0usize; n];
            for r in runs.iter().flat_map(|s| &s.2) {
                first[*r] += 1;
            }
            let span = median(&runs.iter().map(|r| r.0).collect::<Vec<_>>());
            let each: Vec<String> = (0..n)
                .map(|r| {
                    let returns: Vec<f64> = runs.iter().map(|s| s.1[r]).collect();
                    format!("{:.0}", median(&returns))
                })
                .collect();
            // What the communicator moves the payload by (posting falls back to the rings
            // past a slot where ranks have CPUs of their own).
            let how = comm.broadcast_transport(bytes).name();
            println!(
                "{bytes:>8} B {how:<6} makespan {span:>8.0}  returns [{}]  first of its CPU's readers: {:?}",
                each.join(", "),
                first
            );
        }
    }
}
