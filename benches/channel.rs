//! The one-way 64-byte hop: a herald channel round trip (two hops) against a raw atomic
//! ping-pong on one cache line, and one-way streaming throughput.
//!
//! `cargo bench --bench channel`. Round-trip times are two hops: halve them for λ-style
//! one-way latency.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use crossbeam_utils::CachePadded;
use herald::runtime::{channel, Line};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

fn channel_round_trip(c: &mut Criterion) {
    c.bench_function("round trip/channel line", |b| {
        b.iter_custom(|iters| {
            let (mut ping_tx, mut ping_rx) = channel(8);
            let (mut pong_tx, mut pong_rx) = channel(8);
            std::thread::scope(|s| {
                s.spawn(move || {
                    for _ in 0..iters {
                        pong_tx.send(ping_rx.recv().unwrap()).unwrap();
                    }
                });
                let start = Instant::now();
                for i in 0..iters {
                    let mut line = Line::new();
                    line.set_word(0, i);
                    ping_tx.send(line).unwrap();
                    black_box(pong_rx.recv().unwrap());
                }
                start.elapsed()
            })
        });
    });
}

fn atomic_round_trip(c: &mut Criterion) {
    c.bench_function("round trip/raw atomic on one line", |b| {
        b.iter_custom(|iters| {
            let flag = CachePadded::new(AtomicU64::new(0));
            let wait_for = |value: u64| {
                while flag.load(Ordering::Acquire) != value {
                    std::hint::spin_loop();
                }
            };
            std::thread::scope(|s| {
                s.spawn(|| {
                    for i in 0..iters {
                        wait_for(2 * i + 1);
                        flag.store(2 * i + 2, Ordering::Release);
                    }
                });
                let start = Instant::now();
                for i in 0..iters {
                    flag.store(2 * i + 1, Ordering::Release);
                    wait_for(2 * i + 2);
                }
                start.elapsed()
            })
        });
    });
}

fn channel_stream(c: &mut Criterion) {
    let mut group = c.benchmark_group("stream");
    group.throughput(Throughput::Elements(1));
    group.bench_function("channel lines, capacity 64", |b| {
        b.iter_custom(|iters| {
            let (mut tx, mut rx) = channel(64);
            std::thread::scope(|s| {
                let start = Instant::now();
                s.spawn(move || {
                    for _ in 0..iters {
                        black_box(rx.recv().unwrap());
                    }
                });
                (0..iters).for_each(|i| {
                    let mut line = Line::new();
                    line.set_word(0, i);
                    tx.send(line).unwrap();
                });
                drop(tx);
                start
            })
            .elapsed()
        });
    });
    group.finish();
}

criterion_group!(
    benches,
    channel_round_trip,
    atomic_round_trip,
    channel_stream
);
criterion_main!(benches);
