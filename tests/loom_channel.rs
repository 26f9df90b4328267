//! Model-checks the channel protocol (`runtime/channel.rs`, `runtime/wait.rs`) with loom:
//!
//! ```text
//! RUSTFLAGS="--cfg herald_loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release --test loom_channel
//! ```
//!
//! Rings of capacity 2–4 and 8 (where the consumer publishes its position in batches) carry
//! more lines than they hold, so every run wraps around, fills the ring and drains it; loom reports a lost wake-up as a deadlock and a slot read during
//! its write as a causality violation.

#![cfg(herald_loom)]

use herald::runtime::{channel, Line, RecvError, TryRecvError, TrySendError};
use loom::thread;

fn numbered(i: u64) -> Line {
    let mut line = Line::new();
    line.set_word(0, i);
    line.set_word(6, !i);
    line
}

fn check(line: Line, i: u64) {
    assert_eq!((line.word(0), line.word(6)), (i, !i), "line {i}");
}

/// Blocking send and recv: the producer and the consumer both park on a full/empty ring.
fn blocking(capacity: usize, lines: u64) {
    loom::model(move || {
        let (mut tx, mut rx) = channel(capacity);
        let producer = thread::spawn(move || {
            for i in 0..lines {
                tx.send(numbered(i)).unwrap();
            }
        });
        for i in 0..lines {
            check(rx.recv().unwrap(), i);
        }
        assert_eq!(rx.recv(), Err(RecvError::Disconnected));
        producer.join().unwrap();
    });
}

#[test]
fn blocking_capacity_2() {
    blocking(2, 5);
}

#[test]
fn blocking_capacity_3() {
    blocking(3, 5);
}

#[test]
fn blocking_capacity_4() {
    blocking(4, 6);
}

/// Capacity 8: the consumer publishes its position every 2 lines (`capacity / 4`), so the
/// producer sees room only in batches and may wait on a ring the consumer has partly drained.
#[test]
fn blocking_capacity_8_batches() {
    blocking(8, 11);
}

/// Non-blocking ends polling each other: full and empty are seen and survived.
#[test]
fn polling_capacity_2() {
    loom::model(|| {
        let (mut tx, mut rx) = channel(2);
        let producer = thread::spawn(move || {
            let mut i = 0;
            while i < 4 {
                match tx.try_send(numbered(i)) {
                    Ok(()) => i += 1,
                    Err(TrySendError::Full(line)) => {
                        check(line, i);
                        thread::yield_now();
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        });
        let mut i = 0;
        while i < 4 {
            match rx.try_recv() {
                Ok(line) => {
                    check(line, i);
                    i += 1;
                }
                Err(TryRecvError::Empty) => thread::yield_now(),
                Err(e) => panic!("{e}"),
            }
        }
        producer.join().unwrap();
    });
}

/// Mixed: a polling producer and a blocking consumer, and the reverse.
#[test]
fn mixed_capacity_2() {
    loom::model(|| {
        let (mut tx, mut rx) = channel(2);
        let producer = thread::spawn(move || {
            let mut i = 0;
            while i < 3 {
                match tx.try_send(numbered(i)) {
                    Ok(()) => i += 1,
                    Err(_) => thread::yield_now(),
                }
            }
        });
        for i in 0..3 {
            check(rx.recv().unwrap(), i);
        }
        producer.join().unwrap();
    });
    loom::model(|| {
        let (mut tx, mut rx) = channel(2);
        let consumer = thread::spawn(move || {
            let mut i = 0;
            while i < 3 {
                match rx.try_recv() {
                    Ok(line) => {
                        check(line, i);
                        i += 1;
                    }
                    Err(_) => thread::yield_now(),
                }
            }
        });
        for i in 0..3 {
            tx.send(numbered(i)).unwrap();
        }
        consumer.join().unwrap();
    });
}

/// A consumer blocked on an empty ring learns that the producer is gone, after draining it.
#[test]
fn disconnect_wakes_the_consumer() {
    loom::model(|| {
        let (mut tx, mut rx) = channel(2);
        let producer = thread::spawn(move || {
            tx.send(numbered(0)).unwrap();
            tx.send(numbered(1)).unwrap();
            tx.send(numbered(2)).unwrap();
        });
        for i in 0..3 {
            check(rx.recv().unwrap(), i);
        }
        assert_eq!(rx.recv(), Err(RecvError::Disconnected));
        producer.join().unwrap();
    });
}

/// A producer blocked on a full ring learns that the consumer is gone.
#[test]
fn disconnect_wakes_the_producer() {
    loom::model(|| {
        let (mut tx, mut rx) = channel(2);
        let consumer = thread::spawn(move || {
            check(rx.recv().unwrap(), 0);
        });
        let mut sent = 0;
        while tx.send(numbered(sent)).is_ok() {
            sent += 1;
        }
        // The consumer took one line; at most the two slots can hold more.
        assert!((1..=3).contains(&sent), "sent {sent}");
        consumer.join().unwrap();
    });
}
