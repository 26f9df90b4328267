// Scratch harness (not part of the repository): 2-rank ping-pong of 4 KiB copies.
use herald::{Comm, Team};
use std::hint::spin_loop;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

#[repr(align(128))]
struct Pad<T>(T);

fn wait_eq(a: &AtomicU64, v: u64) {
    while a.load(Ordering::Acquire) != v {
        spin_loop();
    }
}

/// As the bench's xcopy: the receiver copies the sender's buffer into its own; roles alternate.
fn xcopy(team: &mut Team, len: usize, k: u64) -> f64 {
    let flag = Pad(AtomicU64::new(0));
    let gap = len.next_multiple_of(4096) + 2048;
    let store = vec![1u8; gap + len];
    let base = store.as_ptr() as usize;
    let bufs = [base, base + gap];
    let t = team.run(|ctx| {
        let r = ctx.rank();
        let start = Instant::now();
        for i in 0..k {
            for step in 0..2u64 {
                let sender = step as usize;
                let seq = 2 * i + step + 1;
                if r == sender {
                    flag.0.store(seq, Ordering::Release);
                } else {
                    wait_eq(&flag.0, seq);
                    // SAFETY (scratch): the sender does not touch its buffer until it receives.
                    unsafe {
                        std::ptr::copy_nonoverlapping(bufs[sender] as *const u8, bufs[r] as *mut u8, len);
                    }
                }
            }
        }
        start.elapsed()
    });
    drop(store);
    t[0].as_nanos() as f64 / (2 * k) as f64
}

/// A bare single copy: the root publishes (seq, address) in one line, the reader copies from the
/// root's buffer into its own and answers done; the root waits for done before returning.
fn bare(team: &mut Team, len: usize, k: u64) -> f64 {
    let desc: Pad<[AtomicU64; 2]> = Pad(Default::default());
    let done = Pad(AtomicU64::new(0));
    let addr = AtomicUsize::new(0);
    let _ = &addr;
    let t = team.run(|ctx| {
        let r = ctx.rank();
        let mut mine = vec![1u8; len];
        let start = Instant::now();
        for i in 0..k {
            for step in 0..2u64 {
                let seq = 2 * i + step + 1;
                if r == step as usize {
                    desc.0[0].store(mine.as_ptr() as u64, Ordering::Relaxed);
                    desc.0[1].store(seq, Ordering::Release);
                    wait_eq(&done.0, seq);
                } else {
                    wait_eq(&desc.0[1], seq);
                    let src = desc.0[0].load(Ordering::Relaxed) as *const u8;
                    // SAFETY (scratch): the root waits for done before touching its buffer.
                    unsafe { std::ptr::copy_nonoverlapping(src, mine.as_mut_ptr(), len) };
                    done.0.store(seq, Ordering::Release);
                }
            }
        }
        std::hint::black_box(&mine);
        start.elapsed()
    });
    t[0].as_nanos() as f64 / (2 * k) as f64
}

fn herald(team: &mut Team, comm: &mut Comm, len: usize, k: u64) -> f64 {
    let mut ranks = comm.ranks();
    let t = team.run_with(&mut ranks, |_, c| {
        let mut buf = vec![1u8; len];
        let start = Instant::now();
        for _ in 0..k {
            c.broadcast(0, &mut buf).unwrap();
            c.broadcast(1, &mut buf).unwrap();
        }
        start.elapsed()
    });
    t[0].as_nanos() as f64 / (2 * k) as f64
}

/// Barrier then one: rank 0 writes fresh data, both meet at a spinning barrier, rank 0
/// broadcasts; ns per iteration (write, barrier and broadcast).
fn b1(team: &mut Team, comm: &mut Comm, len: usize, k: u64) -> f64 {
    let arrived = [Pad(AtomicU64::new(0)), Pad(AtomicU64::new(0))];
    let mut ranks = comm.ranks();
    let t = team.run_with(&mut ranks, |ctx, c| {
        let r = ctx.rank();
        let mut buf = vec![1u8; len];
        let start = Instant::now();
        for i in 0..k {
            if r == 0 {
                let v = (i % 251) as u8;
                for x in buf.iter_mut().step_by(64) {
                    *x = v;
                }
            }
            if std::env::var_os("H4K_HB").is_some() {
                c.barrier().unwrap();
                c.barrier().unwrap();
            } else {
                arrived[r].0.store(i + 1, Ordering::Release);
                wait_eq(&arrived[1 - r].0, i + 1);
            }
            c.broadcast(0, &mut buf).unwrap();
        }
        start.elapsed()
    });
    t[0].as_nanos() as f64 / k as f64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_else(|| "all".into());
    let rounds: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(10);
    let len: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(4096);
    let k = 20_000;
    let mut team = Team::new(2).unwrap();
    let mut comm = Comm::new(2).unwrap();
    for _ in 0..rounds {
        match what.as_str() {
            "herald" => println!("herald {:6.1}", herald(&mut team, &mut comm, len, k)),
            "xcopy" => println!("xcopy {:6.1}", xcopy(&mut team, len, k)),
            "bare" => println!("bare {:6.1}", bare(&mut team, len, k)),
            "b1" => println!("b1 {:8.1}", b1(&mut team, &mut comm, len, k / 20)),
            _ => {
                let x = xcopy(&mut team, len, k);
                let b = bare(&mut team, len, k);
                let h = herald(&mut team, &mut comm, len, k);
                println!("xcopy {x:6.1} bare {b:6.1} herald {h:6.1}  bare/x {:.2} herald/x {:.2} herald/bare {:.2}", b / x, h / x, h / b);
            }
        }
    }
}
