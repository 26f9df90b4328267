//! Checker throughput and memory: BCAST (postal, λ = 5/2) and B(P) (LogP, L = 10, o = g = 1) on
//! 2^20 processors. Memory is measured with a counting allocator and printed before the timings:
//! bytes per send of the stored schedule, of the check's working set, and of the whole
//! generate-and-check peak.

use criterion::{criterion_group, Criterion, Throughput};
use herald::{
    generate,
    sim::{check_with, CheckOptions},
    Algorithm, LogP, Model, Postal, Ratio, Request,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Counts live and peak heap bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
        PEAK.fetch_max(live, Relaxed);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const N: u32 = 1 << 20;

/// The two models of the issue.
fn models() -> [(&'static str, Model); 2] {
    let r = |s: &str| s.parse::<Ratio>().unwrap();
    [
        (
            "bcast-postal-5/2",
            Model::from(Postal::new(r("5/2")).unwrap()),
        ),
        (
            "bp-logp-10-1-1",
            Model::from(LogP::new(r("10"), r("1"), r("1"), r("0")).unwrap()),
        ),
    ]
}

/// Prints memory per send for generate and check.
fn memory() {
    for (name, model) in models() {
        let req = Request::broadcast(Algorithm::Optimal, N, 1, 0);
        let start = LIVE.load(Relaxed);
        PEAK.store(start, Relaxed);
        let s = generate(&req, &model).unwrap();
        let gen_peak = PEAK.load(Relaxed) - start;
        let stored = LIVE.load(Relaxed) - start;
        PEAK.store(LIVE.load(Relaxed), Relaxed);
        let before = LIVE.load(Relaxed);
        let r = check_with(&s, &model, CheckOptions::default()).unwrap();
        assert!(r.legal());
        let check_peak = PEAK.load(Relaxed) - before;
        let per = |b: usize| b as f64 / s.len() as f64;
        println!(
            "memory {name}: {} sends; schedule {:.1} B/send; check working set {:.1} B/send; \
             schedule + check peak {:.1} B/send; generation peak {:.1} B/send",
            s.len(),
            per(stored),
            per(check_peak),
            per(stored + check_peak),
            per(gen_peak)
        );
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("check");
    g.sample_size(10);
    for (name, model) in models() {
        let s = generate(&Request::broadcast(Algorithm::Optimal, N, 1, 0), &model).unwrap();
        g.throughput(Throughput::Elements(s.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| check_with(black_box(&s), &model, CheckOptions::default()).unwrap())
        });
    }
    g.finish();
    let mut g = c.benchmark_group("generate");
    g.sample_size(10);
    for (name, model) in models() {
        g.throughput(Throughput::Elements(u64::from(N) - 1));
        let req = Request::broadcast(Algorithm::Optimal, N, 1, 0);
        g.bench_function(name, |b| {
            b.iter(|| generate(black_box(&req), &model).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    memory();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
