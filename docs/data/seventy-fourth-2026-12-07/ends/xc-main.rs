// Scratch (outside the repository): herald bench's locked cross-core copy (flag_bcast with
// copies = 1) against the same loop reaching the other buffer through a raw pointer.
use crossbeam_utils::CachePadded;
use herald::Team;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

fn wait_eq(a: &AtomicU64, v: u64) {
    while a.load(Ordering::Acquire) != v {
        std::hint::spin_loop();
    }
}

fn locked(team: &mut Team, len: usize, k: u64) -> f64 {
    let flag = CachePadded::new(AtomicU64::new(0));
    let gap = len.next_multiple_of(4096) + 2048;
    let mut store = vec![1u8; gap + len];
    let (a, b) = store.split_at_mut(gap);
    let shared = [Mutex::new(&mut a[..len]), Mutex::new(b)];
    let t = team.run(|ctx| {
        let r = ctx.rank();
        let start = Instant::now();
        for i in 0..k {
            for step in 0..2u64 {
                let sender = step as usize;
                let seq = 2 * i + step + 1;
                if r == sender {
                    flag.store(seq, Ordering::Release);
                } else {
                    wait_eq(&flag, seq);
                    let src = shared[sender].lock().unwrap();
                    shared[r].lock().unwrap().copy_from_slice(&src);
                }
            }
        }
        start.elapsed()
    });
    t[0].as_nanos() as f64 / (2 * k) as f64
}

struct P(*mut u8);
unsafe impl Sync for P {}
unsafe impl Send for P {}

fn raw(team: &mut Team, len: usize, k: u64) -> f64 {
    let flag = CachePadded::new(AtomicU64::new(0));
    let gap = len.next_multiple_of(4096) + 2048;
    let mut store = vec![1u8; gap + len];
    let base = P(store.as_mut_ptr());
    let ptrs = [0usize, gap];
    let base = &base;
    let t = team.run(|ctx| {
        let r = ctx.rank();
        let start = Instant::now();
        for i in 0..k {
            for step in 0..2u64 {
                let sender = step as usize;
                let seq = 2 * i + step + 1;
                if r == sender {
                    flag.store(seq, Ordering::Release);
                } else {
                    wait_eq(&flag, seq);
                    // SAFETY (scratch): the flag orders the sender's last write (its own copy
                    // in the step before) before this read; nobody writes `src` meanwhile.
                    unsafe {
                        let src = std::slice::from_raw_parts(base.0.add(ptrs[sender]), len);
                        let dst = std::slice::from_raw_parts_mut(base.0.add(ptrs[r]), len);
                        dst.copy_from_slice(src);
                    }
                }
            }
        }
        start.elapsed()
    });
    drop(store);
    t[0].as_nanos() as f64 / (2 * k) as f64
}

fn hop(team: &mut Team) -> f64 {
    let lines = [CachePadded::new(AtomicU64::new(0)), CachePadded::new(AtomicU64::new(0))];
    let t = team.run(|ctx| {
        let me = ctx.rank();
        let start = Instant::now();
        for i in 1..=300u64 {
            if me == 0 { lines[0].store(i, Ordering::Release); }
            wait_eq(&lines[1 - me], i);
            if me == 1 { lines[1].store(i, Ordering::Release); }
        }
        start.elapsed()
    });
    t[0].as_nanos() as f64 / 600.0
}

fn main() {
    let mut team = Team::with_cores(vec![0, 1]).unwrap();
    let rounds: usize = std::env::args().nth(1).map_or(10, |s| s.parse().unwrap());
    for _ in 0..rounds {
        let h = hop(&mut team);
        let mut line = format!("hop {h:6.1}");
        for (len, k) in [(48usize, 20000u64), (4096, 5000), (65536, 500)] {
            let l = locked(&mut team, len, k);
            let r = raw(&mut team, len, k);
            line += &format!(" | {len}: locked {l:8.1} raw {r:8.1} ({:.3})", l / r);
        }
        println!("{line}");
    }
}
