//! A lock-free single-producer/single-consumer ring of 64-byte lines, FastForward-style.
//!
//! Design (Giacomoni, Moseley & Vachharajani, *FastForward for efficient pipeline
//! parallelism*, PPoPP 2008, with the sequence-word and lazy-index refinements of later
//! SPSC rings):
//!
//! * Each slot is an 8-byte sequence word and 56 payload bytes in one 64-byte line
//!   (`#[repr(C, align(64))]`). Slots padded to 128 bytes (so that no two share the pair of
//!   lines an adjacent-line prefetcher fetches together) streamed about 20 % slower on the
//!   development machine with the same hop (docs/runtime.md, "Slot size"). The producer writes position `p` into slot `p mod capacity` and then stores
//!   `seq = p + 1` (`Release`); the consumer at position `c` polls only its slot's sequence
//!   word (`Acquire`) until it reads `c + 1`. In the steady state the producer and consumer
//!   never touch a shared index: one line transfer per message.
//! * The consumer never writes a slot. It publishes its position `head` on its own padded
//!   line, lazily: every `batch` lines (`capacity / 4`, between 1 and [`MAX_BATCH`]) and
//!   whenever it finds the ring empty (so a producer waiting on a full ring always learns of
//!   the free space before the consumer waits). The producer keeps a cached copy of `head`
//!   and re-reads the shared one only when the cached one says "full".
//! * Positions are `u64` and only grow, so a ring is reused across repeated collectives with
//!   no reset: position `p` carries its lap in the sequence word.
//! * Blocking `send`/`recv` wait with [`Signal`]: the producer notifies the consumer after
//!   every line (a compiler fence and a read of a rarely written line: the waiter pays the
//!   process-wide half of the fence, see `wait`), the consumer notifies
//!   the producer after every publication.
//!
//! The protocol is model-checked with loom (`tests/loom_channel.rs`).

use super::sync::{Arc, AtomicBool, AtomicU64, Ordering, UnsafeCell};
use super::wait::Signal;
use super::Line;
use crossbeam_utils::CachePadded;
use std::fmt;

mod error;
pub use error::{RecvError, SendError, TryRecvError, TrySendError, TrySendWithError};

/// The largest number of lines the consumer reads before publishing its position.
pub const MAX_BATCH: usize = 16;

/// One ring slot: the sequence word and the payload in one 64-byte line.
#[repr(C, align(64))]
struct Slot {
    /// `p + 1` once the producer has written position `p` here; 0 before the first lap.
    /// Invariant: while the consumer is at position `c` of this slot, `seq <= c + 1`.
    seq: AtomicU64,
    /// The payload of position `seq - 1`; written only by the producer, only while the
    /// consumer's published `head` shows the slot free.
    payload: UnsafeCell<Payload>,
}

/// A slot's payload bytes, aligned to 8 so that [`Sender::send`] can store them as words.
#[repr(C, align(8))]
struct Payload([u8; Line::PAYLOAD]);

#[cfg(not(herald_loom))]
const _: () = assert!(std::mem::size_of::<Slot>() == 64 && std::mem::align_of::<Slot>() == 64);

/// The state shared by the two ends. Lines written by one side only are padded apart
/// (`CachePadded` is 128 bytes on x86_64: the adjacent-line prefetcher pairs lines).
struct Ring {
    slots: Box<[Slot]>,
    /// The consumer's published position. Invariant: `head <= tail`, `tail - head <= capacity`.
    head: CachePadded<AtomicU64>,
    /// Consumer-side wake path (the producer reads `sleeping` on every line).
    rx_signal: CachePadded<Signal>,
    /// Producer-side wake path.
    tx_signal: CachePadded<Signal>,
    /// Set when the `Sender` is dropped.
    tx_closed: AtomicBool,
    /// Set when the `Receiver` is dropped.
    rx_closed: AtomicBool,
}

impl Ring {
    fn capacity(&self) -> usize {
        self.slots.len()
    }
}

// SAFETY: every slot payload is accessed by one end at a time, as the sequence words and the
// published head decide (see the module notes); everything else is atomic or `Sync`.
unsafe impl Sync for Ring {}

/// Creates a ring of `capacity` lines and returns its two ends.
///
/// # Panics
///
/// If `capacity` is 0.
///
/// # Examples
///
/// ```
/// let (mut tx, mut rx) = herald::runtime::channel(4);
/// tx.try_send(herald::runtime::Line::from_bytes(b"hi")).unwrap();
/// assert_eq!(&rx.try_recv().unwrap().payload()[..2], b"hi");
/// assert_eq!((tx.sent(), rx.received()), (1, 1));
/// ```
///
/// Every method that moves a line takes its end by `&mut`, so one end is used by one thread at
/// a time and the closure APIs cannot be re-entered (a closure that reads a slot in place cannot
/// consume that slot, nor write the slot it is filling twice):
///
/// ```compile_fail
/// let (mut tx, _rx) = herald::runtime::channel(2);
/// tx.try_send_with(|_| {
///     let _ = tx.try_send(herald::runtime::Line::new());
/// })
/// .unwrap();
/// ```
///
/// ```compile_fail
/// let (mut tx, mut rx) = herald::runtime::channel(2);
/// tx.try_send(herald::runtime::Line::new()).unwrap();
/// rx.try_recv_with(|_| {
///     let _ = rx.try_recv();
/// })
/// .unwrap();
/// ```
#[must_use]
pub fn channel(capacity: usize) -> (Sender, Receiver) {
    assert!(
        capacity > 0,
        "a channel needs a capacity of at least one line"
    );
    let slots = (0..capacity)
        .map(|_| Slot {
            seq: AtomicU64::new(0),
            payload: UnsafeCell::new(Payload([0; Line::PAYLOAD])),
        })
        .collect();
    let ring = Arc::new(Ring {
        slots,
        head: CachePadded::new(AtomicU64::new(0)),
        rx_signal: CachePadded::new(Signal::new()),
        tx_signal: CachePadded::new(Signal::new()),
        tx_closed: AtomicBool::new(false),
        rx_closed: AtomicBool::new(false),
    });
    let batch = (capacity / 4).clamp(1, MAX_BATCH) as u64;
    let tx = Sender {
        ring: Arc::clone(&ring),
        lap: 0,
        index: 0,
        cached_head: 0,
    };
    let rx = Receiver {
        ring,
        lap: 0,
        index: 0,
        published: 0,
        batch,
    };
    (tx, rx)
}

/// The producing end of a [`channel`]; sending takes `&mut self`.
///
/// An end is aligned to 128 bytes, so that ends driven by different threads never share a
/// cache line (or the pair of lines x86_64 prefetches together) wherever they are stored: two
/// ranks' ends kept side by side in one `Vec` had cost a line transfer per message.
#[repr(align(128))]
pub struct Sender {
    ring: Arc<Ring>,
    /// The position of slot 0 in the current lap: a multiple of the capacity. The next
    /// position to write, `tail`, is `lap + index` (see [`tail`](Self::tail)).
    lap: u64,
    /// `tail mod capacity`, kept incrementally (capacities need not be powers of two). Only
    /// this field changes on every line, `lap` once a lap: a send makes one store of
    /// bookkeeping, not two (every store queues behind the slot stores in flight).
    index: usize,
    /// The last `head` read from the ring. Invariant: `cached_head <= head <= tail`.
    cached_head: u64,
}

/// The consuming end of a [`channel`]; receiving takes `&mut self` (aligned like [`Sender`]).
#[repr(align(128))]
pub struct Receiver {
    ring: Arc<Ring>,
    /// The position of slot 0 in the current lap; the next position to read, `head`, is
    /// `lap + index` (see [`head`](Self::head)).
    lap: u64,
    /// `head mod capacity`.
    index: usize,
    /// The last position stored into the ring's `head`. Invariant: `published <= head`.
    published: u64,
    /// Publish after this many unpublished lines (1 ..= `MAX_BATCH`).
    batch: u64,
}

impl Sender {
    /// Sends `line` if the ring has room.
    ///
    /// While the ring has room this succeeds even if the receiver is gone (as `rtrb` does).
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] if the ring is full, [`TrySendError::Disconnected`] if it is
    /// full and the receiver was dropped; both return `line`.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::runtime::{channel, Line, TrySendError};
    /// let (mut tx, _rx) = channel(1);
    /// tx.try_send(Line::new()).unwrap();
    /// assert!(matches!(tx.try_send(Line::new()), Err(TrySendError::Full(_))));
    /// ```
    #[inline]
    pub fn try_send(&mut self, line: Line) -> Result<(), TrySendError> {
        if self.has_room() {
            self.write(&line);
            Ok(())
        } else if self.ring.rx_closed.load(Ordering::Acquire) {
            Err(TrySendError::Disconnected(line))
        } else {
            Err(TrySendError::Full(line))
        }
    }

    /// Sends a line whose payload `fill` writes in place, in the ring's slot: no intermediate
    /// [`Line`] is built or copied. `fill` is called only if the ring has room.
    ///
    /// The slot still holds an older line's bytes: `fill` must write every byte the receiver
    /// will read. If `fill` panics, nothing is sent.
    ///
    /// # Errors
    ///
    /// [`TrySendWithError::Full`] if the ring is full, [`TrySendWithError::Disconnected`] if
    /// it is full and the receiver was dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut tx, mut rx) = herald::runtime::channel(2);
    /// tx.try_send_with(|p| p[..5].copy_from_slice(b"hello")).unwrap();
    /// let got = rx.try_recv_with(|p| p[..5] == *b"hello").unwrap();
    /// assert!(got);
    /// ```
    #[inline]
    pub fn try_send_with(
        &mut self,
        fill: impl FnOnce(&mut [u8; Line::PAYLOAD]),
    ) -> Result<(), TrySendWithError> {
        if self.has_room() {
            self.write_with(fill);
            Ok(())
        } else if self.ring.rx_closed.load(Ordering::Acquire) {
            Err(TrySendWithError::Disconnected)
        } else {
            Err(TrySendWithError::Full)
        }
    }

    /// Sends `line`, waiting (spin → yield → park) while the ring is full.
    ///
    /// # Errors
    ///
    /// [`SendError::Disconnected`] if the ring is full and the receiver was dropped;
    /// [`SendError::Aborted`] if this thread's team was aborted while waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut tx, mut rx) = herald::runtime::channel(2);
    /// std::thread::scope(|s| {
    ///     s.spawn(move || (0..10).for_each(|i| {
    ///         let mut line = herald::runtime::Line::new();
    ///         line.set_word(0, i);
    ///         tx.send(line).unwrap();
    ///     }));
    ///     for i in 0..10 {
    ///         assert_eq!(rx.recv().unwrap().word(0), i);
    ///     }
    /// });
    /// ```
    #[inline]
    pub fn send(&mut self, line: Line) -> Result<(), SendError> {
        // The cold wait never sees `line`, so the fast path can keep it in registers (a line
        // whose address escapes is built on the stack, and its stores queue behind the slot
        // stores still waiting for their cache lines).
        if !self.has_room() {
            return self.send_cold(line);
        }
        self.write(&line);
        Ok(())
    }

    /// [`send`](Self::send) when the ring was full: waits for room, then writes. Out of line,
    /// so that the fast path saves no registers and builds no error on the stack: every store
    /// a send makes queues behind the slot stores still waiting for their cache line, and
    /// the fewer of them, the more lines a stream keeps in flight (docs/runtime.md).
    #[cold]
    #[inline(never)]
    fn send_cold(&mut self, line: Line) -> Result<(), SendError> {
        match self.wait_for_room() {
            Ok(()) => {
                self.write(&line);
                Ok(())
            }
            Err(RecvError::Disconnected) => Err(SendError::Disconnected(line)),
            Err(RecvError::Aborted) => Err(SendError::Aborted(line)),
        }
    }

    /// Lines sent so far (always counted; it is the producer's position).
    #[must_use]
    pub fn sent(&self) -> u64 {
        self.tail()
    }

    /// The next position to write; also the number of lines sent so far.
    #[inline]
    fn tail(&self) -> u64 {
        self.lap + self.index as u64
    }

    /// The ring's capacity in lines.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.ring.capacity()
    }

    /// Whether the receiver was dropped.
    #[must_use]
    pub fn is_disconnected(&self) -> bool {
        self.ring.rx_closed.load(Ordering::Acquire)
    }

    /// Whether a slot is free, re-reading the consumer's `head` only when the cached copy
    /// says full.
    #[inline]
    fn has_room(&mut self) -> bool {
        let capacity = self.ring.capacity() as u64;
        let tail = self.tail();
        if tail - self.cached_head < capacity {
            return true;
        }
        let head = self.ring.head.load(Ordering::Acquire);
        debug_assert!(self.cached_head <= head && head <= tail);
        self.cached_head = head;
        tail - head < capacity
    }

    #[cold]
    fn wait_for_room(&mut self) -> Result<(), RecvError> {
        // `ready` only loads and updates our own cache: it must not block (see `Signal`).
        // (The wait holds its own reference to the ring: `ready` borrows `self` mutably.)
        let ring = Arc::clone(&self.ring);
        let ready = || {
            if self.has_room() {
                Some(true)
            } else {
                ring.rx_closed.load(Ordering::Acquire).then_some(false)
            }
        };
        match ring.tx_signal.wait_until(ready) {
            Ok(true) => Ok(()),
            Ok(false) => Err(RecvError::Disconnected),
            Err(_) => Err(RecvError::Aborted),
        }
    }

    /// Writes `line` at `tail` (which has room), publishes it and wakes the consumer.
    ///
    /// The payload is loaded from `line` and stored into the slot word by word, with volatile
    /// stores the compiler cannot merge. A copy in 16-byte moves (what a plain `*p = *line`
    /// compiles to) loads a caller's freshly built line in pieces that straddle the caller's
    /// own stores; such a load cannot be forwarded from the store buffer and waits until
    /// those stores reach the cache — which, stores retiring in order, waits for the previous
    /// line's slot store and its cross-core ownership transfer. Every send then paid a
    /// transfer: blocking `send` streamed at a third of a minimal ring's rate in the far mode
    /// (docs/runtime.md). Eight-byte loads are each contained in one store of the caller's
    /// (any store of 8 bytes or more at an 8-byte boundary), so they forward.
    #[inline]
    fn write(&mut self, line: &Line) {
        let words: [u64; Line::WORDS] = std::array::from_fn(|i| line.word(i));
        self.write_raw(|p| {
            let p = p.cast::<u64>();
            for (i, w) in words.into_iter().enumerate() {
                // SAFETY: `p` is the slot's payload, which `write_raw` hands over exclusively
                // (see there); `Payload` is 56 bytes aligned to 8, so word `i < 7` is inside it
                // and aligned. Little-endian words hold `line`'s bytes in order.
                unsafe { p.add(i).write_volatile(w.to_le()) };
            }
        });
    }

    /// Lets `fill` write the payload at `tail` (which has room), publishes it and wakes the
    /// consumer.
    #[inline]
    fn write_with(&mut self, fill: impl FnOnce(&mut [u8; Line::PAYLOAD])) {
        // SAFETY: `write_raw` hands over the payload exclusively for the closure's duration.
        self.write_raw(|p| fill(unsafe { &mut (*p).0 }));
    }

    /// Lets `fill` write the payload at `tail` (which has room) through a raw pointer,
    /// publishes it and wakes the consumer.
    #[inline]
    fn write_raw(&mut self, fill: impl FnOnce(*mut Payload)) {
        let (tail, index) = (self.tail(), self.index);
        debug_assert!(tail - self.cached_head < self.ring.capacity() as u64);
        debug_assert_eq!(tail % self.ring.capacity() as u64, index as u64);
        let slot = &self.ring.slots[index];
        // `has_room` saw the consumer's published head past this slot's previous position
        // (Acquire), so the consumer is done reading it and will not read it again until it
        // sees the sequence word stored below; no one else writes slots. So nothing else
        // reaches the payload while `fill` runs (the callers' `SAFETY` rests on this).
        slot.payload.with_mut(fill);
        slot.seq.store(tail + 1, Ordering::Release);
        advance(&mut self.lap, &mut self.index, self.ring.capacity());
        self.ring.rx_signal.notify();
    }
}

impl Receiver {
    /// Takes the next line if there is one.
    ///
    /// # Errors
    ///
    /// [`TryRecvError::Empty`] if the ring is empty, [`TryRecvError::Disconnected`] if it is
    /// empty and the sender was dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::runtime::{channel, TryRecvError};
    /// let (mut tx, mut rx) = channel(2);
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    /// drop(tx);
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
    /// ```
    #[inline]
    pub fn try_recv(&mut self) -> Result<Line, TryRecvError> {
        if let Some(line) = self.read() {
            return Ok(line);
        }
        self.publish();
        if !self.ring.tx_closed.load(Ordering::Acquire) {
            return Err(TryRecvError::Empty);
        }
        // The sender's last lines happen-before its close flag: look once more.
        self.read().ok_or(TryRecvError::Disconnected)
    }

    /// Reads the next line in place: calls `f` with the payload in the ring's slot (no copy
    /// into a [`Line`]) and returns its result. `f` is called only if a line is there.
    ///
    /// If `f` panics, the line is not consumed.
    ///
    /// # Errors
    ///
    /// As [`try_recv`](Self::try_recv).
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut tx, mut rx) = herald::runtime::channel(2);
    /// tx.try_send(herald::runtime::Line::from_bytes(&[1, 2, 3])).unwrap();
    /// let mut buf = [0u8; 3];
    /// rx.try_recv_with(|p| buf.copy_from_slice(&p[..3])).unwrap();
    /// assert_eq!(buf, [1, 2, 3]);
    /// ```
    #[inline]
    pub fn try_recv_with<R>(
        &mut self,
        f: impl FnOnce(&[u8; Line::PAYLOAD]) -> R,
    ) -> Result<R, TryRecvError> {
        let mut f = Some(f);
        let mut take = |p: &[u8; Line::PAYLOAD]| (f.take().expect("called once"))(p);
        if let Some(r) = self.read_with(&mut take) {
            return Ok(r);
        }
        self.publish();
        if !self.ring.tx_closed.load(Ordering::Acquire) {
            return Err(TryRecvError::Empty);
        }
        // The sender's last lines happen-before its close flag: look once more.
        self.read_with(&mut take).ok_or(TryRecvError::Disconnected)
    }

    /// Takes the next line, waiting (spin → yield → park) while the ring is empty.
    ///
    /// # Errors
    ///
    /// [`RecvError::Disconnected`] if the ring is empty and the sender was dropped;
    /// [`RecvError::Aborted`] if this thread's team was aborted while waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut tx, mut rx) = herald::runtime::channel(2);
    /// tx.send(herald::runtime::Line::from_bytes(&[9])).unwrap();
    /// drop(tx);
    /// assert_eq!(rx.recv().unwrap().payload()[0], 9);
    /// assert_eq!(rx.recv(), Err(herald::runtime::RecvError::Disconnected));
    /// ```
    #[inline]
    pub fn recv(&mut self) -> Result<Line, RecvError> {
        // Check, wait (cold) and only then read: the line is built once, straight into the
        // result, with no `Option` of it moved around (each move is stores that queue behind
        // the consumer's position store while its cache line is away).
        if !self.is_readable() {
            self.wait_readable()?;
        }
        // SAFETY: `is_readable` (here or in `wait_readable`) saw the slot's sequence word
        // written (Acquire).
        Ok(unsafe { self.consume(|p| Line::from_payload(*p)) })
    }

    /// Whether the line `ahead` positions past the next one has been written (so the next
    /// `ahead + 1` lines can be read without waiting). A hint for reading in bursts: polling a
    /// line the producer writes only later keeps the consumer off the lines the producer is
    /// writing now ("temporal slipping", Giacomoni et al. §3.3), so they move between the cores
    /// in a stream instead of one contended transfer each.
    ///
    /// ```
    /// let (mut tx, mut rx) = herald::runtime::channel(4);
    /// tx.try_send(herald::runtime::Line::new()).unwrap();
    /// assert!(rx.is_written(0) && !rx.is_written(1));
    /// tx.try_send(herald::runtime::Line::new()).unwrap();
    /// assert!(rx.is_written(1));
    /// ```
    #[inline]
    #[must_use]
    pub fn is_written(&self, ahead: usize) -> bool {
        let capacity = self.ring.capacity();
        if ahead >= capacity {
            return false;
        }
        let (head, index) = (self.head(), self.index);
        let far = (index + ahead) % capacity;
        // Load the next line's word too: when both lines have been written, the two misses
        // overlap instead of the next line's coming only after the far one's.
        let next = self.ring.slots[index].seq.load(Ordering::Acquire);
        let written = self.ring.slots[far].seq.load(Ordering::Acquire) == head + ahead as u64 + 1;
        written && next == head + 1
    }

    /// Lines received so far (always counted; it is the consumer's position).
    #[must_use]
    pub fn received(&self) -> u64 {
        self.head()
    }

    /// The next position to read; also the number of lines received so far.
    #[inline]
    fn head(&self) -> u64 {
        self.lap + self.index as u64
    }

    /// The ring's capacity in lines.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.ring.capacity()
    }

    /// Whether the sender was dropped.
    #[must_use]
    pub fn is_disconnected(&self) -> bool {
        self.ring.tx_closed.load(Ordering::Acquire)
    }

    /// Waits until the line at `head` is written; [`RecvError::Disconnected`] if the sender
    /// is gone first.
    #[cold]
    fn wait_readable(&mut self) -> Result<(), RecvError> {
        // Publish our position before waiting, so a producer waiting for room gets it.
        self.publish();
        // `ready` only loads: it must not block (see `Signal`), so reading the line (which
        // may publish and notify) happens after the wait.
        let ready = || {
            if self.is_readable() {
                Some(())
            } else {
                self.ring.tx_closed.load(Ordering::Acquire).then_some(())
            }
        };
        match self.ring.rx_signal.wait_until(ready) {
            // The sender's last lines happen-before its close flag: a closed ring may still
            // hold a line.
            Ok(()) if self.is_readable() => Ok(()),
            Ok(()) => Err(RecvError::Disconnected),
            Err(_) => Err(RecvError::Aborted),
        }
    }

    /// Whether the producer has written the line at `head`.
    #[inline]
    fn is_readable(&self) -> bool {
        let seq = self.ring.slots[self.index].seq.load(Ordering::Acquire);
        let head = self.head();
        debug_assert!(seq <= head + 1, "slot sequence ran ahead of the consumer");
        seq == head + 1
    }

    /// Reads the line at `head` if the producer has written it.
    #[inline]
    fn read(&mut self) -> Option<Line> {
        self.read_with(|p| Line::from_payload(*p))
    }

    /// Calls `f` with the payload at `head` and consumes it, if the producer has written it.
    #[inline]
    fn read_with<R>(&mut self, f: impl FnOnce(&[u8; Line::PAYLOAD]) -> R) -> Option<R> {
        if !self.is_readable() {
            return None;
        }
        // SAFETY: `is_readable` just saw the slot's sequence word written (Acquire).
        Some(unsafe { self.consume(f) })
    }

    /// Calls `f` with the payload at `head` and consumes it.
    ///
    /// # Safety
    ///
    /// [`is_readable`](Self::is_readable) must have returned true since the last consumption
    /// (an `Acquire` load of the slot's sequence word that read `head + 1`).
    #[inline]
    unsafe fn consume<R>(&mut self, f: impl FnOnce(&[u8; Line::PAYLOAD]) -> R) -> R {
        let (head, index) = (self.head(), self.index);
        debug_assert_eq!(head % self.ring.capacity() as u64, index as u64);
        let slot = &self.ring.slots[index];
        debug_assert_eq!(slot.seq.load(Ordering::Relaxed), head + 1);
        // SAFETY: the caller saw seq == head + 1 (Acquire): the producer finished writing
        // position `head` here, and it will not write this slot again before we publish a
        // head past it (below, after `f` returns): a shared reference for `f`'s duration is
        // sound.
        let result = slot.payload.with(|p| f(unsafe { &(*p).0 }));
        advance(&mut self.lap, &mut self.index, self.ring.capacity());
        if head + 1 - self.published >= self.batch {
            self.publish();
        }
        result
    }

    /// Publishes `head` to the producer if it moved, and wakes the producer.
    fn publish(&mut self) {
        let head = self.head();
        if head != self.published {
            self.ring.head.store(head, Ordering::Release);
            self.published = head;
            self.ring.tx_signal.notify();
        }
    }
}

/// Moves an end's position `lap + index` one slot on in a ring of `capacity` slots: the index
/// on every line, the lap (and the index back to 0) once a lap.
#[inline]
fn advance(lap: &mut u64, index: &mut usize, capacity: usize) {
    if *index + 1 == capacity {
        *lap += capacity as u64;
        *index = 0;
    } else {
        *index += 1;
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        self.ring.tx_closed.store(true, Ordering::Release);
        self.ring.rx_signal.notify();
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.ring.rx_closed.store(true, Ordering::Release);
        self.ring.tx_signal.notify();
    }
}

impl fmt::Debug for Sender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("capacity", &self.ring.capacity())
            .field("sent", &self.tail())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Receiver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("capacity", &self.ring.capacity())
            .field("received", &self.head())
            .finish_non_exhaustive()
    }
}
