use crossbeam_utils::CachePadded;
use herald::Team;
use std::hint::spin_loop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn spin_until(a: &AtomicU64, v: u64, yield_every: bool) {
    let mut spins = 0u32;
    while a.load(Ordering::Acquire) != v {
        spins = spins.wrapping_add(1);
        if yield_every && spins % 4096 == 0 {
            std::thread::yield_now();
        } else {
            spin_loop();
        }
    }
}

// Calibration style: two lines in one array on the caller's stack.
fn cal_style(team: &mut Team, warm: u64, trips: u64) -> f64 {
    let lines = [CachePadded::new(AtomicU64::new(0)), CachePadded::new(AtomicU64::new(0))];
    let out = team.run(|ctx| {
        let me = ctx.rank();
        let (mine, theirs) = (&lines[me], &lines[1 - me]);
        let mut start = Instant::now();
        for i in 0..warm + trips {
            if i == warm { start = Instant::now(); }
            if me == 0 { mine.store(i + 1, Ordering::Release); }
            spin_until(theirs, i + 1, true);
            if me == 1 { mine.store(i + 1, Ordering::Release); }
        }
        start.elapsed().as_nanos() as f64
    });
    out[0] / (2 * trips) as f64
}

// Bench style: two Arc'd lines.
fn bench_style(team: &mut Team, warm: u64, trips: u64) -> f64 {
    let a = Arc::new(CachePadded::new(AtomicU64::new(0)));
    let b = Arc::new(CachePadded::new(AtomicU64::new(0)));
    let out = team.run(|ctx| {
        let me = ctx.rank();
        let (tx, rx) = if me == 0 { (&a, &b) } else { (&b, &a) };
        let mut start = Instant::now();
        for i in 0..warm + trips {
            if i == warm { start = Instant::now(); }
            if me == 0 {
                tx.store(i + 1, Ordering::Release);
                spin_until(rx, i + 1, false);
            } else {
                spin_until(rx, i + 1, false);
                tx.store(i + 1, Ordering::Release);
            }
        }
        start.elapsed().as_nanos() as f64
    });
    out[0] / (2 * trips) as f64
}

trait Put: Send { fn put(&mut self, v: u64); }
trait Take: Send { fn take(&mut self) -> u64; }
struct RawPut(Arc<CachePadded<AtomicU64>>);
struct RawTake(Arc<CachePadded<AtomicU64>>, u64);
impl Put for RawPut { #[inline(always)] fn put(&mut self, v: u64) { self.0.store(v + 1, Ordering::Release); } }
impl Take for RawTake { #[inline(always)] fn take(&mut self) -> u64 { self.1 += 1; spin_until(&self.0, self.1, false); self.1 - 1 } }
fn raw() -> (RawPut, RawTake) { let line = Arc::new(CachePadded::new(AtomicU64::new(0))); (RawPut(Arc::clone(&line)), RawTake(line, 0)) }
fn crossed<P, T>(a: (P, T), b: (P, T)) -> [(P, T); 2] { [(a.0, b.1), (b.0, a.1)] }
fn hop_after<P: Put, T: Take>(team: &mut Team, ends: [(P, T); 2], warm: u64, k: u64) -> f64 {
    let mut ends = Vec::from(ends);
    let t = team.run_with(&mut ends, |ctx, (tx, rx)| {
        let mut start = Instant::now();
        for i in 0..warm + k {
            if i == warm { start = Instant::now(); }
            if ctx.rank() == 0 {
                tx.put(i);
                assert_eq!(rx.take(), i, "a message was lost or reordered");
            } else {
                let v = rx.take();
                assert_eq!(v, i, "a message was lost or reordered");
                tx.put(v);
            }
        }
        start.elapsed()
    });
    t[0].as_nanos() as f64 / (2 * k) as f64
}

fn hop_after_padded<P: Put, T: Take>(team: &mut Team, ends: [(P, T); 2], warm: u64, k: u64) -> f64 {
    let mut ends: Vec<CachePadded<(P, T)>> = ends.into_iter().map(CachePadded::new).collect();
    let t = team.run_with(&mut ends, |ctx, end| {
        let (tx, rx) = &mut **end;
        let mut start = Instant::now();
        for i in 0..warm + k {
            if i == warm { start = Instant::now(); }
            if ctx.rank() == 0 {
                tx.put(i);
                assert_eq!(rx.take(), i, "a message was lost or reordered");
            } else {
                let v = rx.take();
                assert_eq!(v, i, "a message was lost or reordered");
                tx.put(v);
            }
        }
        start.elapsed()
    });
    t[0].as_nanos() as f64 / (2 * k) as f64
}

fn main() {
    let mut team = Team::with_cores(vec![0, 1]).unwrap();
    let mut other = Team::with_cores(vec![0, 1]).unwrap();
    let rounds: usize = std::env::args().nth(1).map_or(20, |s| s.parse().unwrap());
    for r in 0..rounds {
        // hot: the same team, back to back
        let c1 = cal_style(&mut team, 20, 200);
        let b1 = bench_style(&mut team, 20, 300);
        let c2 = cal_style(&mut team, 20, 200);
        // cold: a team parked for 5 ms (as fidelity's hop team)
        std::thread::sleep(Duration::from_millis(5));
        let bc = bench_style(&mut other, 20, 300);
        std::thread::sleep(Duration::from_millis(5));
        let cc = cal_style(&mut other, 20, 200);
        // fidelity's pattern: a job on `team` ends, the hop on `other` at once
        let _ = cal_style(&mut team, 20, 200);
        let fb = bench_style(&mut other, 20, 300);
        let _ = cal_style(&mut team, 20, 200);
        std::thread::sleep(Duration::from_micros(300));
        let fs = bench_style(&mut other, 20, 300);
        println!("      after another team's job: at once {fb:6.1}, 300 us later {fs:6.1}");
        // busy other team then hop (as calibration: a case, then the hop on the same team)
        let cl = hop_after(&mut team, crossed(raw(), raw()), 20, 300);
        let cl2 = hop_after(&mut other, crossed(raw(), raw()), 20, 300);
        let pd = hop_after_padded(&mut team, crossed(raw(), raw()), 20, 300);
        println!("      cli code: {cl:6.1} {cl2:6.1} padded {pd:6.1}");
        println!("{r:3} hot cal {c1:6.1} bench {b1:6.1} cal {c2:6.1} | parked bench {bc:6.1} cal {cc:6.1}");
    }
}
