use herald::{Comm, Team};
use std::hint::spin_loop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

#[repr(align(128))]
struct Pad<T>(T);

fn wait_eq(a: &AtomicU64, v: u64) {
    while a.load(Ordering::Acquire) != v {
        spin_loop();
    }
}

fn wait_eq_nopause(a: &AtomicU64, v: u64) {
    let mut n = 0u32;
    while a.load(Ordering::Acquire) != v {
        n += 1;
        if n > 8 { spin_loop(); }
    }
}

fn flag(team: &mut Team, k: u64) -> f64 {
    let flag = Pad(AtomicU64::new(0));
    let data: Pad<[AtomicU64; 8]> = Pad(Default::default());
    let t = team.run(|ctx| {
        let r = ctx.rank();
        let mut mine = [1u64; 8];
        let start = Instant::now();
        for i in 0..k {
            for step in 0..2u64 {
                let seq = 2 * i + step + 1;
                if r == step as usize {
                    for (d, v) in data.0.iter().zip(&mine).take(6) {
                        d.store(*v, Ordering::Relaxed);
                    }
                    flag.0.store(seq, Ordering::Release);
                } else {
                    wait_eq(&flag.0, seq);
                    for (v, d) in mine.iter_mut().zip(data.0.iter()).take(6) {
                        *v = d.load(Ordering::Relaxed);
                    }
                    std::hint::black_box(&mine);
                }
            }
        }
        start.elapsed()
    });
    t[0].as_nanos() as f64 / (2 * k) as f64
}

/// herald's one-line protocol, bare: one shared line with six words, a header and a tag.
fn bare(team: &mut Team, k: u64, np: bool) -> f64 {
    let line: Pad<[AtomicU64; 8]> = Pad(Default::default());
    let t = team.run(|ctx| {
        let r = ctx.rank();
        let mut mine = [1u64; 6];
        let start = Instant::now();
        for i in 0..k {
            for step in 0..2u64 {
                let seq = 2 * i + step + 1;
                if r == step as usize {
                    for (d, v) in line.0.iter().zip(&mine) {
                        d.store(*v, Ordering::Relaxed);
                    }
                    line.0[6].store(seq ^ 77, Ordering::Relaxed);
                    line.0[7].store(seq, Ordering::Release);
                } else {
                    if np { wait_eq_nopause(&line.0[7], seq) } else { wait_eq(&line.0[7], seq) }
                    if line.0[6].load(Ordering::Relaxed) != seq ^ 77 { panic!() }
                    for (v, d) in mine.iter_mut().zip(line.0.iter()) {
                        *v = d.load(Ordering::Relaxed);
                    }
                    std::hint::black_box(&mine);
                }
            }
        }
        start.elapsed()
    });
    t[0].as_nanos() as f64 / (2 * k) as f64
}

fn herald(team: &mut Team, comm: &mut Comm, k: u64) -> f64 {
    let mut ranks = comm.ranks();
    let t = team.run_with(&mut ranks, |_, c| {
        let mut buf = vec![1u8; 48];
        let start = Instant::now();
        for _ in 0..k {
            c.broadcast(0, &mut buf).unwrap();
            c.broadcast(1, &mut buf).unwrap();
        }
        start.elapsed()
    });
    t[0].as_nanos() as f64 / (2 * k) as f64
}

fn main() {
    let rounds: usize = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(10);
    let k = 100_000;
    let mut team = Team::new(2).unwrap();
    let mut comm = Comm::new(2).unwrap();
    for _ in 0..rounds {
        let f = flag(&mut team, k);
        let b = bare(&mut team, k, false);
        let h = herald(&mut team, &mut comm, k);
        let bn = bare(&mut team, k, true);
        println!("flag {f:6.1} bare {b:6.1} herald {h:6.1}  bare/flag {:.2} herald/flag {:.2} barenp {bn:6.1}", b / f, h / f);
    }
}
