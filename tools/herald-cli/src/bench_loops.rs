//! The hop and stream loops of `herald bench`, written once and shared by every contestant.
//!
//! A contestant is a pair of ends ([`Put`], [`Take`]) that move one 64-byte message carrying a
//! counter. The loops are generic over the ends, so every contestant runs the same
//! monomorphized loop: the same counter, the same check of every value received (a message
//! lost, duplicated or reordered stops the run), the same `spin_loop` while waiting, the same
//! use of the payload (its words XORed into a register, [`consume`]). What differs is only
//! what the contestant does inside `put` and `take`. Every `put` and `take` is
//! `#[inline(always)]`, so each contestant's operations sit in the loop body: with plain
//! `#[inline]` LLVM inlined the minimal ring's and not herald's (whose `send` carries an error
//! path), and the stream then compared a call per line against none (docs/runtime.md).
//!
//! Contestants: `raw` (one cache line per direction, the counter stored into it: the floor),
//! `ff` (a minimal FastForward ring: 64-byte slots whose first word is the sequence number,
//! the consumer's position published every `capacity / 4` lines (at most 16) — the ring
//! issue 18 compares against), herald's channel through its blocking `send`/`recv`, rtrb and
//! crossbeam's `ArrayQueue`.

use crossbeam::queue::ArrayQueue;
use crossbeam::utils::CachePadded;
use herald::{
    runtime::{Line, Receiver, Sender},
    Team,
};
use std::hint::spin_loop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// The sending end of a contestant.
pub(crate) trait Put: Send {
    /// Sends one 64-byte message carrying `v`, waiting while the channel is full.
    fn put(&mut self, v: u64);
}

/// The receiving end of a contestant.
pub(crate) trait Take: Send {
    /// Receives the next message and returns the value it carries, waiting while empty.
    fn take(&mut self) -> u64;
}

/// Each rank's end on cache lines of its own (crossbeam's `CachePadded`: 128 bytes here, the
/// pair of lines x86_64 prefetches together), the same for every contestant. Ends kept side by
/// side in one `Vec` share a line, and a contestant whose end keeps its positions inline (the
/// raw line's counter, the minimal ring's `tail`, `cached_head` and `head`, rtrb's cached
/// indices) then moved that line between the CPUs on every message: the raw ping-pong read
/// 90–100 ns a hop in the fast mode and 300–390 in the far one, against 50–60 and 180–210 with
/// the ends apart (docs/runtime.md, "Seventy-fourth session: the contestants' ends shared a
/// line"). herald's endpoints are aligned to 128 bytes themselves, so only the others had
/// paid it.
pub(crate) fn padded<E>(ends: impl IntoIterator<Item = E>) -> Vec<CachePadded<E>> {
    ends.into_iter().map(CachePadded::new).collect()
}

/// Ping-pong between ranks 0 and 1 of `team`, `k` round trips; ns one-way.
///
/// # Panics
///
/// If a value arrives out of order (the contestant is broken).
pub(crate) fn hop<P: Put, T: Take>(team: &mut Team, ends: [(P, T); 2], k: u64) -> f64 {
    hop_after(team, ends, 0, k)
}

/// [`hop`] timed after `warm` untimed round trips in the same run (which wake a parked
/// worker: its wake-up otherwise falls inside the timed round trips).
///
/// # Panics
///
/// As [`hop`].
pub(crate) fn hop_after<P: Put, T: Take>(
    team: &mut Team,
    ends: [(P, T); 2],
    warm: u64,
    k: u64,
) -> f64 {
    let mut ends = padded(ends);
    let t = team.run_with(&mut ends, |ctx, end| {
        let (tx, rx) = &mut **end;
        let mut start = Instant::now();
        for i in 0..warm + k {
            if i == warm {
                start = Instant::now();
            }
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

/// Rank 0 streams `k` messages to rank 1; messages per second, from a common start to the
/// last reception.
///
/// # Panics
///
/// If a value arrives out of order.
pub(crate) fn stream<P: Put, T: Take>(team: &mut Team, tx: P, rx: T, k: u64) -> f64 {
    let mut ends = padded([(Some(tx), None), (None, Some(rx))]);
    let barrier = Barrier::new(2);
    let t = team.run_with(&mut ends, |_, end| {
        let (tx, rx) = &mut **end;
        barrier.wait();
        let start = Instant::now();
        if let Some(tx) = tx {
            (0..k).for_each(|i| tx.put(i));
        }
        if let Some(rx) = rx {
            for i in 0..k {
                assert_eq!(rx.take(), i, "a message was lost or reordered");
            }
        }
        (start, Instant::now())
    });
    k as f64 / (t[1].1 - t[0].0).as_secs_f64()
}

/// What every contestant's `take` does with the payload words after the counter: XORs them
/// and hands the result to `black_box`, so every payload byte is read, into a register, and
/// nothing is stored. A `black_box` of the message itself (or a reference to it) makes the
/// compiler store the message where the reference can point: herald's `take` passed
/// `line.payload()` and copied each 56-byte line to the stack twice more, which the minimal
/// ring's `take` (an XOR of its words) did not; in the far mode that alone put herald's stream at
/// 0.65–0.72 of the minimal ring's rate instead of 1.0–1.05 (docs/runtime.md, "Every contestant
/// uses its payload alike").
#[inline(always)]
fn consume(words: impl Iterator<Item = u64>) {
    std::hint::black_box(words.fold(0, |a, w| a ^ w));
}

/// Spins until `a` holds `v`.
#[inline]
fn spin_until(a: &AtomicU64, v: u64) {
    while a.load(Ordering::Acquire) != v {
        spin_loop();
    }
}

/// One cache line per direction: the message is the counter itself (a ping-pong needs
/// nothing more; it cannot stream).
pub(crate) struct RawPut(Arc<CachePadded<AtomicU64>>);
/// The receiving side of [`RawPut`].
pub(crate) struct RawTake(Arc<CachePadded<AtomicU64>>, u64);

impl Put for RawPut {
    #[inline(always)]
    fn put(&mut self, v: u64) {
        self.0.store(v + 1, Ordering::Release);
    }
}

impl Take for RawTake {
    #[inline(always)]
    fn take(&mut self) -> u64 {
        self.1 += 1;
        spin_until(&self.0, self.1);
        self.1 - 1
    }
}

/// A raw line.
pub(crate) fn raw() -> (RawPut, RawTake) {
    let line = Arc::new(CachePadded::new(AtomicU64::new(0)));
    (RawPut(Arc::clone(&line)), RawTake(line, 0))
}

/// One FastForward slot: the sequence word and seven payload words in one 64-byte line.
#[repr(C, align(64))]
struct FfSlot([AtomicU64; 8]);

/// The minimal FastForward ring's shared state.
struct Ff {
    slots: Box<[FfSlot]>,
    head: CachePadded<AtomicU64>,
}

/// The producer of the minimal ring.
pub(crate) struct FfPut {
    ring: Arc<Ff>,
    tail: u64,
    cached_head: u64,
}

/// The consumer of the minimal ring.
pub(crate) struct FfTake {
    ring: Arc<Ff>,
    head: u64,
    published: u64,
    batch: u64,
}

/// A minimal FastForward ring of `capacity` (≥ 2) 64-byte slots.
pub(crate) fn ff(capacity: usize) -> (FfPut, FfTake) {
    let slots = (0..capacity).map(|_| FfSlot(Default::default())).collect();
    let ring = Arc::new(Ff {
        slots,
        head: CachePadded::new(AtomicU64::new(0)),
    });
    let batch = (capacity as u64 / 4).clamp(1, 16);
    (
        FfPut {
            ring: Arc::clone(&ring),
            tail: 0,
            cached_head: 0,
        },
        FfTake {
            ring,
            head: 0,
            published: 0,
            batch,
        },
    )
}

impl Put for FfPut {
    #[inline(always)]
    fn put(&mut self, v: u64) {
        let cap = self.ring.slots.len() as u64;
        while self.tail - self.cached_head == cap {
            self.cached_head = self.ring.head.load(Ordering::Acquire);
            if self.tail - self.cached_head == cap {
                spin_loop();
            }
        }
        let slot = &self.ring.slots[(self.tail % cap) as usize].0;
        slot[1].store(v, Ordering::Relaxed);
        for w in &slot[2..] {
            w.store(!v, Ordering::Relaxed);
        }
        self.tail += 1;
        slot[0].store(self.tail, Ordering::Release);
    }
}

impl Take for FfTake {
    #[inline(always)]
    fn take(&mut self) -> u64 {
        let cap = self.ring.slots.len() as u64;
        let slot = &self.ring.slots[(self.head % cap) as usize].0;
        spin_until(&slot[0], self.head + 1);
        let v = slot[1].load(Ordering::Relaxed);
        consume(slot[2..].iter().map(|w| w.load(Ordering::Relaxed)));
        self.head += 1;
        if self.head - self.published >= self.batch {
            self.ring.head.store(self.head, Ordering::Release);
            self.published = self.head;
        }
        v
    }
}

impl Put for Sender {
    #[inline(always)]
    fn put(&mut self, v: u64) {
        let mut line = Line::new();
        line.set_word(0, v);
        (1..Line::PAYLOAD / 8).for_each(|w| line.set_word(w, !v));
        self.send(line).expect("the receiver is alive");
    }
}

impl Take for Receiver {
    #[inline(always)]
    fn take(&mut self) -> u64 {
        let line = self.recv().expect("the sender is alive");
        consume((1..Line::WORDS).map(|w| line.word(w)));
        line.word(0)
    }
}

/// A 64-byte message for the queues that carry arrays.
#[inline]
fn message(v: u64) -> [u64; 8] {
    let mut m = [!v; 8];
    m[0] = v;
    m
}

impl Put for rtrb::Producer<[u64; 8]> {
    #[inline(always)]
    fn put(&mut self, v: u64) {
        let m = message(v);
        while self.push(m).is_err() {
            spin_loop();
        }
    }
}

impl Take for rtrb::Consumer<[u64; 8]> {
    #[inline(always)]
    fn take(&mut self) -> u64 {
        loop {
            if let Ok(m) = self.pop() {
                consume(m[1..].iter().copied());
                return m[0];
            }
            spin_loop();
        }
    }
}

/// Either end of a shared `ArrayQueue`.
pub(crate) struct Aq(Arc<ArrayQueue<[u64; 8]>>);

/// An `ArrayQueue` of `capacity` messages, as a pair of ends.
pub(crate) fn aq(capacity: usize) -> (Aq, Aq) {
    let q = Arc::new(ArrayQueue::new(capacity));
    (Aq(Arc::clone(&q)), Aq(q))
}

impl Put for Aq {
    #[inline(always)]
    fn put(&mut self, v: u64) {
        let m = message(v);
        while self.0.push(m).is_err() {
            spin_loop();
        }
    }
}

impl Take for Aq {
    #[inline(always)]
    fn take(&mut self) -> u64 {
        loop {
            if let Some(m) = self.0.pop() {
                consume(m[1..].iter().copied());
                return m[0];
            }
            spin_loop();
        }
    }
}

/// Two contestants' ends crossed for a ping-pong: rank 0 sends on `a` and receives on `b`.
pub(crate) fn crossed<P, T>(a: (P, T), b: (P, T)) -> [(P, T); 2] {
    [(a.0, b.1), (b.0, a.1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each rank's end starts a 128-byte block of its own, whatever the end's size: the
    /// positions a contestant keeps inline never share a line (or a prefetched pair) with the
    /// other rank's.
    #[test]
    fn every_end_has_lines_of_its_own() {
        let ends = padded([raw(), raw(), raw()]);
        let at: Vec<usize> = ends.iter().map(|e| &**e as *const _ as usize).collect();
        for w in at.windows(2) {
            assert!(w[1] - w[0] >= 128, "{at:?}");
        }
        assert!(at.iter().all(|a| a % 128 == 0), "{at:?}");
        let small = padded([1u8, 2u8]);
        let (a, b) = (
            &*small[0] as *const u8 as usize,
            &*small[1] as *const u8 as usize,
        );
        assert!(b - a >= 128);
    }

    /// Every contestant delivers every value in order, through a full ring and a wrap.
    #[test]
    fn every_contestant_delivers_in_order() {
        // Watchdog: a lost message would hang the loops; fail instead.
        let (done, watch) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            if watch
                .recv_timeout(std::time::Duration::from_secs(120))
                .is_err()
            {
                eprintln!("every_contestant_delivers_in_order hung");
                std::process::abort();
            }
        });
        let mut team = Team::new(2).unwrap();
        assert!(hop(&mut team, crossed(raw(), raw()), 100) > 0.0);
        assert!(hop(&mut team, crossed(ff(4), ff(4)), 100) > 0.0);
        let (tx, rx) = ff(4);
        assert!(stream(&mut team, tx, rx, 1000) > 0.0);
        let (tx, rx) = herald::runtime::channel(4);
        assert!(stream(&mut team, tx, rx, 1000) > 0.0);
        let (tx, rx) = rtrb::RingBuffer::new(4);
        assert!(stream(&mut team, tx, rx, 1000) > 0.0);
        let (tx, rx) = aq(4);
        assert!(stream(&mut team, tx, rx, 1000) > 0.0);
        done.send(()).unwrap();
    }
}
