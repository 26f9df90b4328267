//! `herald bench hop|stream|bcast|bcast64`: herald against raw atomics and peer crates.
//!
//! Every figure comes from interleaved short slices in one run (each slice runs every
//! contestant once, in a random order), and comparisons are per-slice ratios reported as
//! median, p10 and p90: on a VM whose core-to-core latency switches between modes every few
//! seconds, separate long runs would compare different modes.

use crate::bench_loops as loops;
use crate::output::{
    BenchJson, BenchModeJson, BenchRunJson, BenchSizeJson, Figures, Keyed, Spread,
};
use crate::CliError;
use crossbeam::utils::CachePadded;
use herald::{
    runtime::{baton, channel},
    Comm, Team,
};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::hint::spin_loop;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Which benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum What {
    /// One-way 64-byte latency (ping-pong / 2): raw lines, herald, rtrb, ArrayQueue, a minimal
    /// FastForward ring; one loop for all (bench_loops.rs).
    Hop,
    /// 64-byte messages per second core 0 → core 1 (the same contestants but raw, one loop).
    Stream,
    /// 2-rank broadcast of 48 B … 4 MiB against rayon, bus, a shared flag, a cross-core copy.
    Bcast,
    /// `-n` threads on the machine's cores: herald's broadcast vs a spin-then-yield star.
    Bcast64,
    /// Cross-core copies of 4 KiB … 4 MiB (one rank writes, the other copies in 64 KiB
    /// pieces, as herald's single copy does) by the C library's copy and by herald's
    /// `copy_plain`, into a buffer a multiple of 4096 bytes, or that and 16 bytes, from the
    /// source.
    Copy,
}

/// Arguments of `herald bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct BenchArgs {
    /// hop, stream, bcast, bcast64 or copy.
    #[arg(value_enum)]
    what: What,
    /// Ranks for bcast64.
    #[arg(short = 'n', long, default_value_t = 64)]
    ranks: usize,
    /// bcast64: the communicator's default broadcast tree (`binomial`, `star`, `knomial`
    /// with `--radix`, …; any single-block algorithm herald generates).
    #[arg(long, default_value = "binomial")]
    algo: String,
    /// Interleaved slices per contestant.
    #[arg(long, default_value_t = 40)]
    slices: usize,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// A contestant: runs one slice on the team and returns its figure.
type Contestant<'a> = (&'static str, Box<dyn FnMut(&mut Team) -> f64 + 'a>);

/// The seed of the slices' orders (fixed: a run's orders are the same every time).
const ORDER_SEED: u64 = 7;

/// Runs `slices` rounds of every contestant, each round in a random order; figures by
/// contestant.
///
/// Not a rotation of one order, which kept every contestant behind the same neighbour: in
/// `bcast`, herald right after the raw hop on the same team, the cross-core copy right after the
/// shared flag's copy of the same size. Twelve alternating runs of `herald bench bcast --slices
/// 6` each way (docs/runtime.md, "Forty-eighth session"): herald over the copy at 4 MiB 1.105
/// (1.01–1.28) rotating, 0.974 (0.86–1.18) shuffled; 4 KiB 1.20 and 1.25; 48 B over the flag
/// 1.53 and 1.58.
fn interleave(team: &mut Team, slices: usize, cs: &mut [Contestant<'_>]) -> Vec<Vec<f64>> {
    let mut out = vec![Vec::with_capacity(slices); cs.len()];
    for c in cs.iter_mut() {
        (c.1)(team); // warm-up
    }
    let mut rng = StdRng::seed_from_u64(ORDER_SEED);
    let mut order: Vec<usize> = (0..cs.len()).collect();
    for _ in 0..slices {
        order.shuffle(&mut rng);
        for &j in &order {
            out[j].push((cs[j].1)(team));
        }
    }
    out
}

/// Records `name` (median) and `name_p10`, `name_p90`.
fn put(figures: &mut Figures, name: &str, v: &[f64]) {
    figures.0.push((name.to_owned(), Spread::of(v)));
}

/// The figures again, per mode of the raw hop: the VM's core-to-core latency is bimodal, so
/// every slice is assigned to the nearest mode of the slices' raw-hop times (herald's mode
/// finder) and each series is summarized per mode. Ratios are never averaged across modes.
fn by_mode(raw: &[f64], series: &[(&str, Vec<f64>)]) -> Vec<BenchModeJson> {
    let samples: Vec<(f64, f64)> = raw.iter().map(|&x| (x, 1.0)).collect();
    let modes = herald::calibrate::find_modes(&samples);
    let owner: Vec<usize> = raw
        .iter()
        .map(|&x| herald::calibrate::nearest_mode(&modes, x).unwrap_or(0))
        .collect();
    modes
        .iter()
        .enumerate()
        .map(|(i, mode)| {
            let mine: Vec<usize> = (0..raw.len()).filter(|&s| owner[s] == i).collect();
            let mut figures = Figures::default();
            for (name, v) in series {
                let vals: Vec<f64> = mine.iter().map(|&s| v[s]).collect();
                if !vals.is_empty() {
                    put(&mut figures, name, &vals);
                }
            }
            BenchModeJson {
                raw_ns_center: mode.center,
                share: mode.share,
                slices: mine.len(),
                figures,
            }
        })
        .collect()
}

/// Records into `out` each contestant's figures (`v` by contestant, as [`interleave`] returns
/// them), the per-slice ratios `(name, a, b)` = contestant `a` / contestant `b`, and, when
/// `raw` names the raw-hop contestant, the contestants `per_mode` and every ratio per mode.
fn record(
    cs: &[Contestant<'_>],
    v: &[Vec<f64>],
    ratio_of: &[(&str, usize, usize)],
    raw: Option<usize>,
    per_mode: &[usize],
) -> BenchRunJson {
    let mut out = BenchRunJson::default();
    for (c, v) in cs.iter().zip(v) {
        put(&mut out.figures, c.0, v);
    }
    let rs: Vec<(&str, Vec<f64>)> = ratio_of
        .iter()
        .map(|&(name, a, b)| (name, ratios(&v[a], &v[b])))
        .collect();
    for (name, r) in &rs {
        put(&mut out.figures, name, r);
    }
    if let Some(raw) = raw {
        let mut series: Vec<(&str, Vec<f64>)> =
            per_mode.iter().map(|&i| (cs[i].0, v[i].clone())).collect();
        series.extend(rs);
        out.modes = Some(by_mode(&v[raw], &series));
    }
    out
}

fn ratios(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x / y).collect()
}

fn wait_eq(a: &AtomicU64, v: u64) {
    while a.load(Ordering::Acquire) != v {
        spin_loop();
    }
}

/// Round trips per hop slice.
const HOPS: u64 = 20_000;
/// Messages per stream slice.
const MSGS: u64 = 200_000;

/// Raw ping-pong, one cache line per direction; ns one-way.
pub(crate) fn raw_hop(team: &mut Team, k: u64) -> f64 {
    loops::hop(team, loops::crossed(loops::raw(), loops::raw()), k)
}

/// [`raw_hop`] timed after `warm` untimed round trips in the same run.
pub(crate) fn raw_hop_after(team: &mut Team, warm: u64, k: u64) -> f64 {
    loops::hop_after(team, loops::crossed(loops::raw(), loops::raw()), warm, k)
}

fn ns(d: Duration, per: u64) -> f64 {
    d.as_nanos() as f64 / per as f64
}

/// Lines per ring in the hop and stream contestants.
const RING: usize = 512;

/// 2-rank broadcasts of `len` bytes, ping-pong (root alternates); ns one-way.
fn herald_bcast(team: &mut Team, comm: &mut Comm, len: usize, k: u64) -> f64 {
    let mut ranks = comm.ranks();
    let t = team.run_with(&mut ranks, |_, c| {
        let mut buf = vec![1u8; len];
        let start = Instant::now();
        for _ in 0..k {
            c.broadcast(0, &mut buf).expect("broadcast");
            c.broadcast(1, &mut buf).expect("broadcast");
        }
        start.elapsed()
    });
    ns(t[0], 2 * k)
}

/// rayon `ThreadPool::broadcast` from rank 0 to a one-thread pool: a round trip per call.
fn rayon_bcast(team: &mut Team, pool: &rayon::ThreadPool, len: usize, k: u64) -> f64 {
    let data = vec![1u8; len];
    let t = team.run(|ctx| {
        let start = Instant::now();
        if ctx.rank() == 0 {
            for _ in 0..k {
                pool.broadcast(|_| {
                    let mut mine = vec![0u8; len];
                    mine.copy_from_slice(&data);
                    std::hint::black_box(&mine);
                });
            }
        }
        start.elapsed()
    });
    ns(t[0], k)
}

fn bus_bcast(team: &mut Team, len: usize, k: u64) -> f64 {
    let (mut a, mut b) = (bus::Bus::<Vec<u8>>::new(4), bus::Bus::<Vec<u8>>::new(4));
    let (ra, rb) = (a.add_rx(), b.add_rx());
    let mut ends = loops::padded([(a, rb), (b, ra)]);
    let t = team.run_with(&mut ends, |ctx, end| {
        let (tx, rx) = &mut **end;
        let mut buf = vec![1u8; len];
        let start = Instant::now();
        for _ in 0..k {
            if ctx.rank() == 0 {
                tx.broadcast(buf.clone());
                buf.copy_from_slice(&rx.recv().expect("bus"));
            } else {
                buf.copy_from_slice(&rx.recv().expect("bus"));
                tx.broadcast(buf.clone());
            }
        }
        start.elapsed()
    });
    ns(t[0], 2 * k)
}

/// Shared-flag broadcast: the root copies into a shared buffer and raises a flag; the other
/// copies out. `copies == 1`: the cross-core copy (the receiver copies the buffer the sender
/// just wrote).
///
/// The buffers are reached through a [`Baton`](herald::runtime::Baton): the turn counter is
/// the flag, and passing it is one `Release` store, taking it one `Acquire` load, as on a raw
/// pointer. (Until the seventy-fifth session each buffer sat behind a `Mutex`, whose line the
/// reader took from the other CPU before every copy: 1.13× a raw-pointer copy at 4 KiB,
/// docs/runtime.md.) Rank 0 holds turns 0, 2, …, 2k: it sends on the first, receives on the
/// last and does both on the rest; rank 1 holds turns 1, 3, …, 2k − 1, each a receive and a
/// send. Rank 0's time counts.
fn flag_bcast(team: &mut Team, len: usize, k: u64, copies: usize) -> f64 {
    // Both buffers in one allocation, the second starting 2 KiB past a 4 KiB multiple after
    // the first: two separate allocations fell at addresses 16 bytes apart modulo 4 KiB in
    // some runs, and a copy between them then stalled on 4 KiB aliasing (the same 4 KiB copy
    // measured 0.36 µs in one binary and 1.8 µs in another).
    let gap = len.next_multiple_of(4096) + 2048;
    let mut ends = loops::padded(baton(vec![1u8; gap + len], 2));
    let t = team.run_with(&mut ends, |ctx, end| {
        let r = ctx.rank();
        let mut mine = vec![1u8; len];
        let holds = if r == 0 { k + 1 } else { k };
        let start = Instant::now();
        for h in 0..holds {
            let mut held = end.hold();
            let (a, b) = held.split_at_mut(gap);
            let (own, other) = if r == 0 {
                (&mut a[..len], &b[..])
            } else {
                (b, &a[..len])
            };
            if r == 1 || h > 0 {
                if copies == 2 {
                    mine.copy_from_slice(other);
                } else {
                    own.copy_from_slice(other);
                }
            }
            if copies == 2 && (r == 1 || h < k) {
                own.copy_from_slice(&mine);
            }
        }
        start.elapsed()
    });
    ns(t[0], 2 * k)
}

/// A cross-core copy: rank 0 writes a fresh byte into every line of the source and raises a
/// flag; rank 1 copies the source in pieces of at most 64 KiB into a buffer `off` bytes past a
/// multiple of 4096 from it, by herald's `copy_plain` if `ours`, else by the C library's copy,
/// and answers. ns per copy, rank 1's copies only (the writes are every contestant's alike,
/// and untimed).
fn copy_at(team: &mut Team, len: usize, k: u64, off: usize, ours: bool) -> f64 {
    let src_at = len.next_multiple_of(4096) + 4096 + off;
    let store = vec![1u8; src_at + len + 4096];
    // Both ends at the same distance from a page start (the allocation's own alignment
    // cancels out): only `off` differs between contestants.
    let page = (store.as_ptr() as usize).next_multiple_of(4096) - store.as_ptr() as usize;
    // Rank 0 holds the even turns (it writes), rank 1 the odd ones (it copies).
    let mut ends = loops::padded(baton(store, 2));
    let t = team.run_with(&mut ends, |ctx, end| {
        let mut taken = Duration::ZERO;
        for _ in 0..k {
            let mut s = end.hold();
            if ctx.rank() == 0 {
                for line in s[page..page + len].chunks_mut(64) {
                    line[0] = line[0].wrapping_add(1);
                }
            } else {
                let (a, b) = s.split_at_mut(page + src_at);
                let (src, dst) = (&a[page..page + len], &mut b[..len]);
                let start = Instant::now();
                for (from, to) in src.chunks(64 << 10).zip(dst.chunks_mut(64 << 10)) {
                    if ours {
                        herald::runtime::copy_plain(to, from);
                    } else {
                        to.copy_from_slice(from);
                    }
                }
                taken += start.elapsed();
            }
        }
        taken
    });
    ns(t[1], k)
}

/// Shared-flag broadcast of at most 64 bytes without a lock: the sender stores the bytes as
/// words of one line (relaxed: plain moves) and raises the flag; the other loads them. The
/// baseline of issue 18's small-broadcast target (the lock of [`flag_bcast`] would be most of
/// its cost at this size).
fn flag_words_bcast(team: &mut Team, len: usize, k: u64) -> f64 {
    assert!(len <= 64, "one line");
    let words = len.div_ceil(8);
    let flag = CachePadded::new(AtomicU64::new(0));
    let data: CachePadded<[AtomicU64; 8]> = CachePadded::new(Default::default());
    let t = team.run(|ctx| {
        let r = ctx.rank();
        let mut mine = [1u64; 8];
        let start = Instant::now();
        for i in 0..k {
            for step in 0..2u64 {
                let seq = 2 * i + step + 1;
                if r == step as usize {
                    for (d, v) in data.iter().zip(&mine).take(words) {
                        d.store(*v, Ordering::Relaxed);
                    }
                    flag.store(seq, Ordering::Release);
                } else {
                    wait_eq(&flag, seq);
                    for (v, d) in mine.iter_mut().zip(data.iter()).take(words) {
                        *v = d.load(Ordering::Relaxed);
                    }
                    std::hint::black_box(&mine);
                }
            }
        }
        start.elapsed()
    });
    ns(t[0], 2 * k)
}

/// A spin-then-yield star broadcast of 64 bytes on the whole team; ns per iteration.
fn star_bcast(team: &mut Team, k: u64) -> f64 {
    let n = team.size();
    let seq = CachePadded::new(AtomicU64::new(0));
    let acks = CachePadded::new(AtomicUsize::new(0));
    let data: [AtomicU64; 8] = Default::default();
    let wait = |ok: &dyn Fn() -> bool| {
        let mut spins = 0u32;
        while !ok() {
            if spins < 100 {
                spins += 1;
                spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    };
    let start = Instant::now();
    team.run(|ctx| {
        for i in 1..=k {
            if ctx.rank() == 0 {
                wait(&|| acks.load(Ordering::Acquire) == (n - 1) * (i as usize - 1));
                data.iter().for_each(|d| d.store(i, Ordering::Relaxed));
                seq.store(i, Ordering::Release);
            } else {
                wait(&|| seq.load(Ordering::Acquire) >= i);
                let s: u64 = data.iter().map(|d| d.load(Ordering::Relaxed)).sum();
                std::hint::black_box(s);
                acks.fetch_add(1, Ordering::AcqRel);
            }
        }
    });
    ns(start.elapsed(), k)
}

/// `k` back-to-back 64-byte broadcasts from rank 0 on the whole team; ns per broadcast.
/// With `acked`, each broadcast is followed by a reduction of one byte to the root, so (like
/// the star, whose root waits for every acknowledgement) an iteration ends only when every rank
/// holds the data; without it the root may run ahead into the rings.
fn herald_bcast_team(team: &mut Team, comm: &mut Comm, k: u64, acked: bool) -> f64 {
    let mut ranks = comm.ranks();
    let start = Instant::now();
    team.run_with(&mut ranks, |_, c| {
        let mut buf = [7u8; 64];
        for _ in 0..k {
            c.broadcast(0, &mut buf).expect("broadcast");
            if acked {
                c.reduce(0, 1u8, |a, b| a.wrapping_add(b)).expect("reduce");
            }
        }
    });
    ns(start.elapsed(), k)
}

/// Runs `herald bench`.
pub(crate) fn bench(a: &BenchArgs) -> Result<(), CliError> {
    if a.slices == 0 || a.ranks == 0 {
        return Err(CliError::usage("--slices and -n must be at least 1"));
    }
    let mut team =
        Team::new(if a.what == What::Bcast64 { a.ranks } else { 2 }).map_err(CliError::usage)?;
    let out = match a.what {
        What::Hop => {
            let mut cs: Vec<Contestant<'_>> = vec![
                ("raw_ns", Box::new(|t: &mut Team| raw_hop(t, HOPS))),
                (
                    "herald_ns",
                    Box::new(|t: &mut Team| {
                        loops::hop(t, loops::crossed(channel(RING), channel(RING)), HOPS)
                    }),
                ),
                (
                    "rtrb_ns",
                    Box::new(|t: &mut Team| {
                        let ring = || rtrb::RingBuffer::<[u64; 8]>::new(RING);
                        loops::hop(t, loops::crossed(ring(), ring()), HOPS)
                    }),
                ),
                (
                    "arrayqueue_ns",
                    Box::new(|t: &mut Team| {
                        loops::hop(t, loops::crossed(loops::aq(RING), loops::aq(RING)), HOPS)
                    }),
                ),
                (
                    "ff_ns",
                    Box::new(|t: &mut Team| {
                        loops::hop(t, loops::crossed(loops::ff(RING), loops::ff(RING)), HOPS)
                    }),
                ),
            ];
            let v = interleave(&mut team, a.slices, &mut cs);
            let ratio_of = [
                ("ratio_raw", 1, 0),
                ("ratio_rtrb", 1, 2),
                ("ratio_ff", 1, 4),
                ("rtrb_ratio_raw", 2, 0),
                ("ff_ratio_raw", 4, 0),
            ];
            BenchJson::Run(record(&cs, &v, &ratio_of, Some(0), &[1, 2, 4]))
        }
        What::Stream => {
            let mut cs: Vec<Contestant<'_>> = vec![
                (
                    "herald_mps",
                    Box::new(|t: &mut Team| {
                        let (tx, rx) = channel(RING);
                        loops::stream(t, tx, rx, MSGS)
                    }),
                ),
                (
                    "rtrb_mps",
                    Box::new(|t: &mut Team| {
                        let (tx, rx) = rtrb::RingBuffer::<[u64; 8]>::new(RING);
                        loops::stream(t, tx, rx, MSGS)
                    }),
                ),
                (
                    "arrayqueue_mps",
                    Box::new(|t: &mut Team| {
                        let (tx, rx) = loops::aq(RING);
                        loops::stream(t, tx, rx, MSGS)
                    }),
                ),
                (
                    "ff_mps",
                    Box::new(|t: &mut Team| {
                        let (tx, rx) = loops::ff(RING);
                        loops::stream(t, tx, rx, MSGS)
                    }),
                ),
                // Labels each slice with the latency mode it ran in.
                ("raw_ns", Box::new(|t: &mut Team| raw_hop(t, HOPS / 4))),
            ];
            let v = interleave(&mut team, a.slices, &mut cs);
            let ratio_of = [
                ("ratio_rtrb", 0, 1),
                ("ratio_arrayqueue", 0, 2),
                ("ratio_ff", 0, 3),
            ];
            BenchJson::Run(record(&cs, &v, &ratio_of, Some(4), &[0, 1, 3]))
        }
        What::Bcast => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .map_err(CliError::usage)?;
            let mut comm = Comm::new(2).map_err(CliError::usage)?;
            let mut out = Keyed(vec![]);
            // 48 B: header and payload in one line (issue 18's ≤ 1.3 × flag target); 4 KiB …
            // 4 MiB: against the cross-core copy (≤ 1.1 ×).
            let sizes: [(&str, usize, u64); 7] = [
                ("48B", 48, 10_000),
                ("64B", 64, 10_000),
                ("4KiB", 4 << 10, 2_000),
                ("64KiB", 64 << 10, 200),
                ("256KiB", 256 << 10, 60),
                ("1MiB", 1 << 20, 20),
                ("4MiB", 4 << 20, 5),
            ];
            for (label, len, k) in sizes {
                let comm = &mut comm;
                let pool = &pool;
                let mut cs: Vec<Contestant<'_>> = vec![
                    ("raw_ns", Box::new(|t: &mut Team| raw_hop(t, HOPS / 4))),
                    (
                        "herald_ns",
                        Box::new(move |t: &mut Team| herald_bcast(t, comm, len, k)),
                    ),
                    (
                        "rayon_ns",
                        Box::new(move |t: &mut Team| rayon_bcast(t, pool, len, k)),
                    ),
                    ("bus_ns", Box::new(move |t: &mut Team| bus_bcast(t, len, k))),
                    (
                        "flag_ns",
                        Box::new(move |t: &mut Team| {
                            if len <= 64 {
                                flag_words_bcast(t, len, k)
                            } else {
                                flag_bcast(t, len, k, 2)
                            }
                        }),
                    ),
                    (
                        "xcopy_ns",
                        Box::new(move |t: &mut Team| flag_bcast(t, len, k, 1)),
                    ),
                ];
                let v = interleave(&mut team, a.slices, &mut cs);
                let ratio_of = [
                    ("ratio_raw", 1, 0),
                    ("ratio_rayon", 2, 1),
                    ("ratio_xcopy", 5, 1),
                    ("herald_over_flag", 1, 4),
                    ("herald_over_xcopy", 1, 5),
                ];
                let size = BenchSizeJson {
                    run: record(&cs, &v, &ratio_of, Some(0), &[1]),
                    rayon_note: "rayon is a round trip per call, as measured",
                };
                out.0.push((label.to_owned(), size));
            }
            BenchJson::Sizes(out)
        }
        What::Copy => {
            let mut out = Keyed(vec![]);
            let sizes: [(&str, usize, u64); 4] = [
                ("4KiB", 4 << 10, 2_000),
                ("64KiB", 64 << 10, 200),
                ("1MiB", 1 << 20, 20),
                ("4MiB", 4 << 20, 5),
            ];
            for (label, len, k) in sizes {
                let mut cs: Vec<Contestant<'_>> =
                    vec![("raw_ns", Box::new(|t: &mut Team| raw_hop(t, HOPS / 4)))];
                for (name, off, ours) in [
                    ("libc_ns", 0, false),
                    ("libc16_ns", 16, false),
                    ("herald_ns", 0, true),
                    ("herald16_ns", 16, true),
                ] {
                    cs.push((
                        name,
                        Box::new(move |t: &mut Team| copy_at(t, len, k, off, ours)),
                    ));
                }
                let v = interleave(&mut team, a.slices, &mut cs);
                let ratio_of = [
                    ("libc16_over_libc", 2, 1),
                    ("herald_over_libc", 3, 1),
                    ("herald16_over_libc", 4, 1),
                    ("herald16_over_libc16", 4, 2),
                ];
                out.0.push((
                    label.to_owned(),
                    record(&cs, &v, &ratio_of, Some(0), &[1, 2, 4]),
                ));
            }
            BenchJson::Copies(out)
        }
        What::Bcast64 => {
            let algorithm: herald::Algorithm = a.algo.parse().map_err(CliError::usage)?;
            let options = herald::CommOptions {
                schedule: herald::runtime::DefaultSchedule::Fixed(algorithm),
                ..herald::CommOptions::default()
            };
            let comm = Comm::with_options(a.ranks, options).map_err(CliError::usage)?;
            let comm = &std::cell::RefCell::new(comm);
            let k = 200;
            let mut cs: Vec<Contestant<'_>> = vec![
                (
                    "herald_ns",
                    Box::new(move |t: &mut Team| {
                        herald_bcast_team(t, &mut comm.borrow_mut(), k, false)
                    }),
                ),
                (
                    "herald_acked_ns",
                    Box::new(move |t: &mut Team| {
                        herald_bcast_team(t, &mut comm.borrow_mut(), k, true)
                    }),
                ),
                ("star_ns", Box::new(move |t: &mut Team| star_bcast(t, k))),
            ];
            let v = interleave(&mut team, a.slices, &mut cs);
            let ratio_of = [("ratio_star", 0, 2), ("ratio_star_acked", 1, 2)];
            BenchJson::Team {
                run: record(&cs, &v, &ratio_of, None, &[]),
                algorithm: a.algo.clone(),
                ranks: a.ranks,
            }
        }
    };
    if a.json {
        crate::output::print(&out)
    } else {
        crate::print_out(&out.text())
    }
}
