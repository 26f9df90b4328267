//! herald's channel and collectives against raw atomics and peer crates: the comparisons of
//! `herald bench hop|stream|bcast|bcast64` as criterion benchmark groups.
//!
//! ```text
//! cargo bench --bench collectives               # everything (a few minutes)
//! cargo bench --bench collectives -- bcast      # one group
//! cargo bench --bench collectives -- --quick    # criterion's quick mode
//! ```
//!
//! # What is timed
//!
//! Every group runs on a persistent [`Team`] of pinned workers, created once per group, and
//! every measurement (`iter_custom`) is one [`Team::run`]: the ranks first meet at a start
//! rendezvous, then run the contestant `iters` times. The time reported for the call is **from
//! the first rank leaving the rendezvous to the last rank finishing**, measured on the workers,
//! so waking the team, building states and the rendezvous itself are never timed. Queues,
//! communicator endpoints, buses and buffers are built once per group (and payload size) as
//! well, and reused by every call.
//!
//! Criterion's "time" is therefore per iteration, where one iteration is:
//!
//! * **`hop`** — one **one-way** hop of a 64-byte message: a ping-pong between two cores,
//!   timed over `iters` round trips and halved. Contestants: `raw` (two atomic stores and
//!   spins on one cache line: the hardware's floor), `herald` (a [`channel`] of
//!   [`Line`]s, blocking `send`/`recv`), `rtrb` and `arrayqueue` (crossbeam's `ArrayQueue`).
//! * **`stream`** — one 64-byte message from core 0 to core 1, streamed: the producer sends
//!   `iters` messages as fast as the 512-slot queue lets it, the consumer receives them; the
//!   time runs until the consumer holds the last one. Throughput is in messages per second.
//!   Contestants: `herald`, `rtrb`, `arrayqueue`.
//! * **`bcast/*/64B`, `bcast/*/1MiB`** — one 2-rank broadcast, from the root's call until the
//!   other rank holds the data. The root alternates (0, 1, 0, …), so broadcast `i + 1` starts
//!   only once broadcast `i` has arrived, and the time per iteration is the one-way latency.
//!   Contestants: `herald` ([`CommRank::broadcast`]); `rayon` (`ThreadPool::broadcast` from
//!   rank 0 to a one-thread pool pinned to rank 1's core, which copies the root's buffer:
//!   **rayon's broadcast returns only when the pool is done, so each of its iterations is a
//!   round trip**, reported as measured); `bus` (one `bus::Bus` per direction, a `Vec<u8>` per
//!   message: the sender clones its buffer into the bus, the receiver keeps the `Vec`);
//!   `flag` (the root copies its buffer into a shared one and raises a flag; the other rank
//!   copies it out); for 1 MiB `xcopy` (the receiver copies, after a flag, the buffer the
//!   sender's core wrote last: the physical limit of moving 1 MiB between two cores); and for
//!   64 B `raw-hop`, the `hop/raw` ping-pong again, as the reference for the 64-byte target.
//!   (herald's messages start with an 8-byte call header and carry 56 bytes per line, so its
//!   64-byte broadcast moves two lines.)
//! * **`bcast_many/*/16`** — one 64-byte broadcast from rank 0 to 15 others on 16 threads,
//!   oversubscribing this 2-core machine, in a loop of back-to-back broadcasts: `herald`
//!   (whose root may run ahead of slow ranks by up to a ring's capacity) against `star`, a
//!   spin-then-yield star in which the root writes one shared line, raises a sequence number
//!   and waits for every rank's acknowledgement before the next broadcast.
//!
//! Peer messages are a `#[repr(align(64))]` 64-byte struct, so each rtrb slot is exactly one
//! cache line, as each herald slot is (an `ArrayQueue` slot adds a stamp word in front, so a
//! slot spans two lines). Every wait outside herald spins with [`spin_loop`] for a few hundred
//! rounds, then yields, so that oversubscription cannot livelock; it stops with a panic if
//! another rank of the team panicked.
//!
//! # How to read the figures
//!
//! Criterion measures each contestant in its own run of seconds. On a VM whose core-to-core
//! latency switches between modes every few seconds (this one: a raw hop of about 48 ns or
//! about 225 ns), two contestants measured seconds apart can see different modes, so ratios of
//! these figures can mislead. For ratios, use `herald bench`, which interleaves short slices of
//! every contestant and reports per-slice ratios; use these benches to catch regressions of one
//! contestant on a quiet machine, and for criterion's statistics and history.

use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion};
use criterion::{measurement::WallTime, Throughput};
use crossbeam::queue::ArrayQueue;
use crossbeam_utils::CachePadded;
use herald::{
    runtime::{baton, channel, Baton, Ctx, Line},
    Comm, CommRank, Team,
};
use std::hint::{black_box, spin_loop};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Waiting, timing, teams.

/// Spin hints before a wait starts yielding the core.
const SPINS: u32 = 300;

/// Polls `ready` until it returns `Some`: spins first, then yields (never a bare spin forever).
#[inline]
fn wait_for<T>(ctx: &Ctx, mut ready: impl FnMut() -> Option<T>) -> T {
    for _ in 0..SPINS {
        if let Some(value) = ready() {
            return value;
        }
        spin_loop();
    }
    yield_until(ctx, &mut ready)
}

/// The yielding phase of [`wait_for`]; panics if another rank of the team panicked.
#[cold]
fn yield_until<T>(ctx: &Ctx, ready: &mut dyn FnMut() -> Option<T>) -> T {
    loop {
        if let Some(value) = ready() {
            return value;
        }
        assert!(!ctx.is_aborted(), "another rank panicked");
        std::thread::yield_now();
    }
}

/// Waits until `cond` holds (see [`wait_for`]).
#[inline]
fn until(ctx: &Ctx, mut cond: impl FnMut() -> bool) {
    wait_for(ctx, || cond().then_some(()));
}

/// Runs `body` on every rank with its state, after a start rendezvous; returns the time from
/// the first rank leaving the rendezvous to the last rank finishing `body`.
fn timed_run<S: Send>(
    team: &mut Team,
    states: &mut [S],
    body: impl Fn(&Ctx, &mut S) + Sync,
) -> Duration {
    let n = team.size();
    let arrived = CachePadded::new(AtomicUsize::new(0));
    let spans = team.run_with(states, |ctx, state| {
        arrived.fetch_add(1, Ordering::AcqRel);
        until(ctx, || arrived.load(Ordering::Acquire) == n);
        let start = Instant::now();
        body(ctx, state);
        (start, Instant::now())
    });
    let first = spans.iter().map(|s| s.0).min().expect("a rank");
    let last = spans.iter().map(|s| s.1).max().expect("a rank");
    last - first
}

/// [`timed_run`] without per-rank state.
fn timed_run_all(team: &mut Team, body: impl Fn(&Ctx) + Sync) -> Duration {
    let mut units = vec![(); team.size()];
    timed_run(team, &mut units, |ctx, ()| body(ctx))
}

/// A team of `ranks` workers pinned round-robin over the available CPUs.
fn team(ranks: usize) -> Team {
    Team::new(ranks).expect("start the worker team")
}

/// Benchmarks `f(iters)` (a duration for `iters` iterations) as `id` in `group`.
fn bench(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: BenchmarkId,
    mut f: impl FnMut(u64) -> Duration,
) {
    group.bench_function(id, |b| b.iter_custom(&mut f));
}

// ---------------------------------------------------------------------------------------------
// hop and stream: one queue direction, generic over the implementation.

/// A peer's 64-byte message: one cache line, like herald's [`Line`].
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Msg([u64; 8]);

impl Msg {
    fn new(word: u64) -> Msg {
        let mut m = Msg([0; 8]);
        m.0[0] = word;
        m
    }
}

/// One direction of a queue of 64-byte messages, as `hop` and `stream` use it.
trait Queue {
    /// The benchmark's name for the implementation.
    const NAME: &'static str;
    /// The sending end.
    type Tx: Send;
    /// The receiving end.
    type Rx: Send;
    /// A queue of `capacity` messages.
    fn with_capacity(capacity: usize) -> (Self::Tx, Self::Rx);
    /// Sends a message carrying `word` if there is room.
    fn try_send(tx: &mut Self::Tx, word: u64) -> bool;
    /// Receives a message, if there is one, and returns its word.
    fn try_recv(rx: &mut Self::Rx) -> Option<u64>;

    /// Sends a message carrying `word`, waiting while the queue is full.
    #[inline]
    fn send(ctx: &Ctx, tx: &mut Self::Tx, word: u64) {
        until(ctx, || Self::try_send(tx, word));
    }

    /// Receives a message and returns its word, waiting while the queue is empty.
    #[inline]
    fn recv(ctx: &Ctx, rx: &mut Self::Rx) -> u64 {
        wait_for(ctx, || Self::try_recv(rx))
    }
}

/// herald's [`channel`]; it waits with its own blocking `send`/`recv` (spin → yield → park).
struct Herald;

impl Queue for Herald {
    const NAME: &'static str = "herald";
    type Tx = herald::runtime::Sender;
    type Rx = herald::runtime::Receiver;

    fn with_capacity(capacity: usize) -> (Self::Tx, Self::Rx) {
        channel(capacity)
    }

    fn try_send(tx: &mut Self::Tx, word: u64) -> bool {
        tx.try_send(Herald::line(word)).is_ok()
    }

    fn try_recv(rx: &mut Self::Rx) -> Option<u64> {
        rx.try_recv().ok().map(|line| line.word(0))
    }

    #[inline]
    fn send(_: &Ctx, tx: &mut Self::Tx, word: u64) {
        tx.send(Herald::line(word)).expect("herald send");
    }

    #[inline]
    fn recv(_: &Ctx, rx: &mut Self::Rx) -> u64 {
        rx.recv().expect("herald recv").word(0)
    }
}

impl Herald {
    #[inline]
    fn line(word: u64) -> Line {
        let mut line = Line::new();
        line.set_word(0, word);
        line
    }
}

/// `rtrb`'s wait-free ring, polled with [`wait_for`].
struct Rtrb;

impl Queue for Rtrb {
    const NAME: &'static str = "rtrb";
    type Tx = rtrb::Producer<Msg>;
    type Rx = rtrb::Consumer<Msg>;

    fn with_capacity(capacity: usize) -> (Self::Tx, Self::Rx) {
        rtrb::RingBuffer::new(capacity)
    }

    #[inline]
    fn try_send(tx: &mut Self::Tx, word: u64) -> bool {
        tx.push(Msg::new(word)).is_ok()
    }

    #[inline]
    fn try_recv(rx: &mut Self::Rx) -> Option<u64> {
        rx.pop().ok().map(|m| m.0[0])
    }
}

/// crossbeam's `ArrayQueue` (an MPMC queue used SPSC), polled with [`wait_for`].
struct ArrayQ;

impl Queue for ArrayQ {
    const NAME: &'static str = "arrayqueue";
    type Tx = Arc<ArrayQueue<Msg>>;
    type Rx = Arc<ArrayQueue<Msg>>;

    fn with_capacity(capacity: usize) -> (Self::Tx, Self::Rx) {
        let q = Arc::new(ArrayQueue::new(capacity));
        (Arc::clone(&q), q)
    }

    #[inline]
    fn try_send(tx: &mut Self::Tx, word: u64) -> bool {
        tx.push(Msg::new(word)).is_ok()
    }

    #[inline]
    fn try_recv(rx: &mut Self::Rx) -> Option<u64> {
        rx.pop().map(|m| m.0[0])
    }
}

/// Raw ping-pong on one cache line: `iters` round trips, returned halved (one-way).
fn raw_hop(team: &mut Team, iters: u64) -> Duration {
    let flag = CachePadded::new(AtomicU64::new(0));
    let rtt = timed_run_all(team, |ctx| {
        let me = ctx.rank() as u64;
        for i in 0..iters {
            // Rank 0 writes the odd values, rank 1 the even ones.
            if me == 1 {
                until(ctx, || flag.load(Ordering::Acquire) == 2 * i + 1);
            }
            flag.store(2 * i + 1 + me, Ordering::Release);
            if me == 0 {
                until(ctx, || flag.load(Ordering::Acquire) == 2 * i + 2);
            }
        }
    });
    rtt / 2
}

/// `iters` round trips over two `Q` queues (one per direction), returned halved (one-way).
fn queue_hop<Q: Queue>(group: &mut BenchmarkGroup<'_, WallTime>, team: &mut Team) {
    let ((a_tx, a_rx), (b_tx, b_rx)) = (Q::with_capacity(64), Q::with_capacity(64));
    // Rank 0 sends on `a` and hears on `b`. Each rank's ends on lines of their own: side by
    // side, the ends that keep their positions inline (rtrb's) shared a line that moved
    // between the CPUs on every message (herald's are aligned themselves; docs/runtime.md,
    // "Seventy-fourth session: the contestants' ends shared a line").
    let mut ends = [
        CachePadded::new((a_tx, b_rx)),
        CachePadded::new((b_tx, a_rx)),
    ];
    bench(group, BenchmarkId::from_parameter(Q::NAME), |iters| {
        let rtt = timed_run(team, &mut ends, |ctx, end| {
            let (tx, rx) = &mut **end;
            for i in 0..iters {
                if ctx.rank() == 0 {
                    Q::send(ctx, tx, i);
                    black_box(Q::recv(ctx, rx));
                } else {
                    let word = Q::recv(ctx, rx);
                    Q::send(ctx, tx, word);
                }
            }
        });
        rtt / 2
    });
}

fn hop(c: &mut Criterion) {
    let mut team = team(2);
    let mut group = c.benchmark_group("hop");
    bench(&mut group, BenchmarkId::from_parameter("raw"), |iters| {
        raw_hop(&mut team, iters)
    });
    queue_hop::<Herald>(&mut group, &mut team);
    queue_hop::<Rtrb>(&mut group, &mut team);
    queue_hop::<ArrayQ>(&mut group, &mut team);
    group.finish();
}

/// Streams `iters` messages rank 0 → rank 1 through a 512-slot `Q`.
fn queue_stream<Q: Queue>(group: &mut BenchmarkGroup<'_, WallTime>, team: &mut Team) {
    let (tx, rx) = Q::with_capacity(512);
    // Each end on lines of its own, as in `queue_hop`.
    let mut ends = [
        CachePadded::new((Some(tx), None)),
        CachePadded::new((None, Some(rx))),
    ];
    bench(group, BenchmarkId::from_parameter(Q::NAME), |iters| {
        timed_run(team, &mut ends, |ctx, end| match &mut **end {
            (Some(tx), _) => (0..iters).for_each(|i| Q::send(ctx, tx, i)),
            (_, Some(rx)) => {
                let sum = (0..iters).fold(0u64, |s, _| s.wrapping_add(Q::recv(ctx, rx)));
                black_box(sum);
            }
            (None, None) => unreachable!("every rank holds one end"),
        })
    });
}

fn stream(c: &mut Criterion) {
    let mut team = team(2);
    let mut group = c.benchmark_group("stream");
    group.throughput(Throughput::Elements(1));
    queue_stream::<Herald>(&mut group, &mut team);
    queue_stream::<Rtrb>(&mut group, &mut team);
    queue_stream::<ArrayQ>(&mut group, &mut team);
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// bcast and bcast_many.

/// Runs `iters` herald broadcasts of each rank's buffer; broadcast `i` has root `root(i)`.
fn herald_bcast(
    team: &mut Team,
    states: &mut [(CommRank<'_>, Vec<u8>)],
    iters: u64,
    root: impl Fn(u64) -> usize + Sync,
) -> Duration {
    timed_run(team, states, |_, (comm, buf)| {
        for i in 0..iters {
            comm.broadcast(root(i), buf).expect("herald broadcast");
        }
    })
}

/// One endpoint per rank of `comm`, each with a buffer of `len` bytes.
fn comm_states(comm: &mut Comm, len: usize) -> Vec<(CommRank<'_>, Vec<u8>)> {
    let ranks = comm.ranks().into_iter();
    ranks
        .map(|r| {
            let buf = vec![r.rank() as u8; len];
            (r, buf)
        })
        .collect()
}

/// The 2-rank ping-pong's root of broadcast `i`.
fn alternate(i: u64) -> usize {
    (i % 2) as usize
}

/// A buffer both ranks copy into and out of, without `unsafe`: one line of word atomics for
/// small payloads (a lock would add a second line transfer to a 64-byte message), a mutex
/// for bulk ones: its line moves between the CPUs with every copy, which a scratch program
/// measured at 1.02× a lock-free copy at 64 KiB and which is less at this bench's 1 MiB
/// (docs/runtime.md, "Seventy-fourth session: the contestants' ends shared a line"); the
/// cross-core copy, [`xcopy`], takes no lock.
enum SharedBuf {
    /// Up to 64 bytes, in one line.
    Words(CachePadded<[AtomicU64; 8]>),
    /// Anything larger.
    Bulk(Mutex<Vec<u8>>),
}

impl SharedBuf {
    fn new(len: usize) -> SharedBuf {
        if len <= 64 {
            SharedBuf::Words(CachePadded::new(Default::default()))
        } else {
            SharedBuf::Bulk(Mutex::new(vec![0; len]))
        }
    }

    /// Copies `src` in.
    fn store(&self, src: &[u8]) {
        match self {
            SharedBuf::Words(words) => {
                for (w, chunk) in words.iter().zip(src.chunks(8)) {
                    let mut bytes = [0; 8];
                    bytes[..chunk.len()].copy_from_slice(chunk);
                    w.store(u64::from_le_bytes(bytes), Ordering::Relaxed);
                }
            }
            SharedBuf::Bulk(bytes) => lock(bytes).copy_from_slice(src),
        }
    }

    /// Copies out into `dst`.
    fn load(&self, dst: &mut [u8]) {
        match self {
            SharedBuf::Words(words) => {
                for (w, chunk) in words.iter().zip(dst.chunks_mut(8)) {
                    let bytes = w.load(Ordering::Relaxed).to_le_bytes();
                    chunk.copy_from_slice(&bytes[..chunk.len()]);
                }
            }
            SharedBuf::Bulk(bytes) => dst.copy_from_slice(&lock(bytes)),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The shared-flag broadcast, ping-pong: the root stores its buffer into `shared` and raises
/// the flag to `i + 1`; the other rank waits for it and loads the buffer.
fn flag_bcast(team: &mut Team, shared: &SharedBuf, bufs: &mut [Vec<u8>], iters: u64) -> Duration {
    let flag = CachePadded::new(AtomicU64::new(0));
    timed_run(team, bufs, |ctx, buf| {
        for i in 0..iters {
            if ctx.rank() == alternate(i) {
                shared.store(buf);
                flag.store(i + 1, Ordering::Release);
            } else {
                until(ctx, || flag.load(Ordering::Acquire) == i + 1);
                shared.load(buf);
            }
        }
    })
}

/// The cross-core copy, ping-pong: each rank's buffer is `bufs[rank]`; after the flag, the
/// receiver copies the root's buffer (which the root's core wrote last, as the previous
/// receiver) into its own. The flag is a [`Baton`]'s turn, so the copy takes no lock (one
/// `Acquire` load sees the turn, one `Release` store passes it): rank `r` holds turns
/// `t ≡ r (mod 2)` for `t` in `0..=iters`, receiving broadcast `t - 1` and then, by passing
/// the turn, sending broadcast `t`; a call passes an even number of turns (one more, empty,
/// where `iters` is even), so every call starts on rank 0's turn.
fn xcopy(team: &mut Team, ends: &mut [CachePadded<Baton<[Vec<u8>; 2]>>], iters: u64) -> Duration {
    timed_run(team, ends, |ctx, end| {
        let r = ctx.rank();
        for t in (r as u64..=(iters | 1)).step_by(2) {
            until(ctx, || end.is_turn());
            let mut held = end.hold();
            if t > 0 && t <= iters {
                let [a, b] = &mut *held;
                let (src, dst) = if r == 0 { (b, a) } else { (a, b) };
                dst.copy_from_slice(src);
            }
        }
    })
}

/// A rank's bus to the other rank, its reader of the other rank's bus, and its buffer.
type BusEnds = (bus::Bus<Vec<u8>>, bus::BusReader<Vec<u8>>, Vec<u8>);

/// Both ranks' [`BusEnds`] for buffers of `len` bytes, each on lines of its own (as in
/// `queue_hop`).
fn bus_states(len: usize) -> Vec<CachePadded<BusEnds>> {
    let (mut a, mut b) = (bus::Bus::new(4), bus::Bus::new(4));
    let (from_a, from_b) = (a.add_rx(), b.add_rx());
    vec![
        CachePadded::new((a, from_b, vec![0; len])),
        CachePadded::new((b, from_a, vec![1; len])),
    ]
}

/// `bus` ping-pong: the root broadcasts a clone of its buffer on its bus (4 slots, which never
/// fill here, so `broadcast` never blocks); the other rank polls its reader and keeps the `Vec`.
fn bus_bcast(team: &mut Team, states: &mut [CachePadded<BusEnds>], iters: u64) -> Duration {
    timed_run(team, states, |ctx, end| {
        let (tx, rx, buf) = &mut **end;
        for i in 0..iters {
            if ctx.rank() == alternate(i) {
                tx.broadcast(buf.clone());
            } else {
                *buf = wait_for(ctx, || rx.try_recv().ok());
            }
        }
    })
}

/// `rayon::ThreadPool::broadcast` from rank 0 to a one-thread pool that copies rank 0's
/// buffer into its own: `iters` calls, each a round trip.
fn rayon_bcast(
    team: &mut Team,
    pool: &rayon::ThreadPool,
    src: &[u8],
    dst: &Mutex<Vec<u8>>,
    iters: u64,
) -> Duration {
    timed_run_all(team, |ctx| {
        if ctx.rank() == 0 {
            for _ in 0..iters {
                pool.broadcast(|_| lock(dst).copy_from_slice(src));
            }
        }
    })
}

/// A one-thread rayon pool, its thread pinned to `cpu` if given.
fn rayon_pool(cpu: Option<usize>) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .start_handler(move |_| {
            if let Some(id) = cpu {
                core_affinity::set_for_current(core_affinity::CoreId { id });
            }
        })
        .build()
        .expect("build the rayon pool")
}

fn bcast(c: &mut Criterion) {
    let mut team = team(2);
    let mut comm = Comm::new(2).expect("a 2-rank communicator");
    let pool = rayon_pool(team.placements()[1].cpu());
    let mut group = c.benchmark_group("bcast");
    for (label, len) in [("64B", 64usize), ("1MiB", 1 << 20)] {
        group.throughput(Throughput::Bytes(len as u64));
        let id = |name: &str| BenchmarkId::new(name, label);
        if len == 64 {
            bench(&mut group, id("raw-hop"), |iters| raw_hop(&mut team, iters));
        }
        let mut states = comm_states(&mut comm, len);
        bench(&mut group, id("herald"), |iters| {
            herald_bcast(&mut team, &mut states, iters, alternate)
        });
        drop(states);
        let (src, dst) = (vec![1u8; len], Mutex::new(vec![0u8; len]));
        bench(&mut group, id("rayon"), |iters| {
            rayon_bcast(&mut team, &pool, &src, &dst, iters)
        });
        let mut states = bus_states(len);
        bench(&mut group, id("bus"), |iters| {
            bus_bcast(&mut team, &mut states, iters)
        });
        let (shared, mut bufs) = (SharedBuf::new(len), vec![vec![1u8; len]; 2]);
        bench(&mut group, id("flag"), |iters| {
            flag_bcast(&mut team, &shared, &mut bufs, iters)
        });
        if len > 64 {
            let mut ends: Vec<_> = baton([vec![0u8; len], vec![1u8; len]], 2)
                .into_iter()
                .map(CachePadded::new)
                .collect();
            bench(&mut group, id("xcopy"), |iters| {
                xcopy(&mut team, &mut ends, iters)
            });
        }
    }
    group.finish();
}

/// Ranks of `bcast_many`: eight threads per core on the 2-core development machine.
const MANY: usize = 16;

/// `iters` back-to-back spin-then-yield star broadcasts of one line from rank 0: the root
/// waits for every acknowledgement of broadcast `i - 1`, writes the line, raises `seq` to `i`;
/// the others wait for `seq ≥ i`, read the line and acknowledge.
fn star_bcast(team: &mut Team, iters: u64) -> Duration {
    let n = team.size() as u64;
    let seq = CachePadded::new(AtomicU64::new(0));
    let acks = CachePadded::new(AtomicU64::new(0));
    let data = CachePadded::new(<[AtomicU64; 8]>::default());
    timed_run_all(team, |ctx| {
        for i in 1..=iters {
            if ctx.rank() == 0 {
                until(ctx, || acks.load(Ordering::Acquire) == (n - 1) * (i - 1));
                data.iter().for_each(|d| d.store(i, Ordering::Relaxed));
                seq.store(i, Ordering::Release);
            } else {
                until(ctx, || seq.load(Ordering::Acquire) >= i);
                let sum = data.iter().map(|d| d.load(Ordering::Relaxed)).sum::<u64>();
                black_box(sum);
                acks.fetch_add(1, Ordering::AcqRel);
            }
        }
    })
}

fn bcast_many(c: &mut Criterion) {
    let mut team = team(MANY);
    let mut comm = Comm::new(MANY).expect("a communicator");
    let mut group = c.benchmark_group("bcast_many");
    group.throughput(Throughput::Bytes(64));
    let mut states = comm_states(&mut comm, 64);
    bench(&mut group, BenchmarkId::new("herald", MANY), |iters| {
        herald_bcast(&mut team, &mut states, iters, |_| 0)
    });
    drop(states);
    bench(&mut group, BenchmarkId::new("star", MANY), |iters| {
        star_bcast(&mut team, iters)
    });
    group.finish();
}

criterion_group!(benches, hop, stream, bcast, bcast_many);
criterion_main!(benches);
