//! Tests of `runtime/channel.rs`: the SPSC ring of 64-byte lines.

mod common {
    pub(crate) mod watch;
}

// The shared watchdog's 300 s: on a loaded machine a ring of 7 lines waits for the scheduler
// thousands of times.
use common::watch::watchdog;
use herald::runtime::{
    channel, Line, Receiver, RecvError, SendError, Sender, TryRecvError, TrySendError,
};
use std::time::Duration;

/// A line whose seven words are derived from `i`.
fn numbered(i: u64) -> Line {
    let mut line = Line::new();
    for w in 0..Line::WORDS {
        line.set_word(w, i.wrapping_mul(w as u64 + 1) ^ (w as u64) << 56);
    }
    line
}

fn assert_numbered(line: &Line, i: u64) {
    assert_eq!(
        *line,
        numbered(i),
        "line {i} arrived damaged or out of order"
    );
}

#[test]
fn smoke() {
    let (mut tx, mut rx) = channel(1);
    tx.send(Line::from_bytes(b"smoke")).unwrap();
    assert_eq!(&rx.recv().unwrap().payload()[..5], b"smoke");
    assert_eq!((tx.sent(), rx.received()), (1, 1));
    assert_eq!((tx.capacity(), rx.capacity()), (1, 1));
}

#[test]
fn ends_are_send() {
    fn send<T: Send>() {}
    send::<Sender>();
    send::<Receiver>();
}

#[test]
#[should_panic(expected = "capacity")]
fn zero_capacity_panics() {
    let _ = channel(0);
}

#[test]
fn wrap_around_single_thread() {
    for capacity in [2, 3, 4] {
        let (mut tx, mut rx) = channel(capacity);
        let total = 10 * capacity as u64;
        let (mut sent, mut received) = (0, 0);
        // Uneven bursts so the positions cross the end of the ring at every offset.
        for burst in (1..).map(|k| 1 + k % capacity as u64) {
            if received == total {
                break;
            }
            for _ in 0..burst.min(total - sent) {
                tx.try_send(numbered(sent)).unwrap();
                sent += 1;
            }
            while let Ok(line) = rx.try_recv() {
                assert_numbered(&line, received);
                received += 1;
            }
        }
        assert_eq!((tx.sent(), rx.received()), (total, total));
    }
}

#[test]
fn wrap_around_two_threads() {
    watchdog(|| {
        for capacity in [2, 3, 4] {
            let (mut tx, mut rx) = channel(capacity);
            let total = 10 * capacity as u64;
            std::thread::scope(|s| {
                s.spawn(move || (0..total).for_each(|i| tx.send(numbered(i)).unwrap()));
                for i in 0..total {
                    assert_numbered(&rx.recv().unwrap(), i);
                }
                assert_eq!(rx.recv(), Err(RecvError::Disconnected));
            });
        }
    });
}

#[test]
fn full_and_empty() {
    for capacity in [1, 2, 3, 4, 17] {
        let (mut tx, mut rx) = channel(capacity);
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
        for i in 0..capacity as u64 {
            tx.try_send(numbered(i)).unwrap();
        }
        // Full: the line comes back intact.
        assert_eq!(
            tx.try_send(numbered(99)),
            Err(TrySendError::Full(numbered(99)))
        );
        assert_eq!(
            tx.try_send(numbered(99)).unwrap_err().into_inner(),
            numbered(99)
        );
        assert_numbered(&rx.try_recv().unwrap(), 0);
        // One slot free again (the consumer publishes when its batch is done or it runs dry).
        while let Ok(line) = rx.try_recv() {
            let _ = line;
        }
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
        for i in 0..capacity as u64 {
            tx.try_send(numbered(i)).unwrap();
        }
        assert!(matches!(
            tx.try_send(Line::new()),
            Err(TrySendError::Full(_))
        ));
        assert_eq!(tx.sent(), 2 * capacity as u64);
    }
}

#[test]
fn disconnection() {
    let (mut tx, mut rx) = channel(2);
    tx.send(numbered(1)).unwrap();
    drop(tx);
    assert!(rx.is_disconnected());
    assert_numbered(&rx.recv().unwrap(), 1);
    assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
    assert_eq!(rx.recv(), Err(RecvError::Disconnected));

    let (mut tx, rx) = channel(2);
    drop(rx);
    assert!(tx.is_disconnected());
    // Room left: the line is accepted (and lost), as in rtrb.
    tx.send(numbered(0)).unwrap();
    tx.send(numbered(1)).unwrap();
    assert_eq!(
        tx.try_send(numbered(2)),
        Err(TrySendError::Disconnected(numbered(2)))
    );
    assert_eq!(
        tx.send(numbered(3)),
        Err(SendError::Disconnected(numbered(3)))
    );
}

#[test]
fn blocked_ends_are_woken() {
    watchdog(|| {
        // The receiver parks on an empty ring; the sender comes late.
        let (mut tx, mut rx) = channel(2);
        std::thread::scope(|s| {
            s.spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                tx.send(numbered(7)).unwrap();
            });
            assert_numbered(&rx.recv().unwrap(), 7);
        });
        // The sender parks on a full ring; the receiver comes late.
        let (mut tx, mut rx) = channel(2);
        std::thread::scope(|s| {
            s.spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                (0..5).for_each(|i| assert_numbered(&rx.recv().unwrap(), i));
            });
            (0..5).for_each(|i| tx.send(numbered(i)).unwrap());
        });
        // A receiver parked on an empty ring learns that the sender is gone.
        let (tx, mut rx) = channel(2);
        std::thread::scope(|s| {
            s.spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                drop(tx);
            });
            assert_eq!(rx.recv(), Err(RecvError::Disconnected));
        });
    });
}

#[test]
fn stream_a_million_lines() {
    watchdog(|| {
        const LINES: u64 = if cfg!(miri) { 1_000 } else { 1_000_000 };
        for capacity in [64, 7] {
            // A small ring waits on every few lines: fewer of them keep the test short when
            // the two threads share their CPUs with others.
            let lines = if capacity < 8 { LINES / 4 } else { LINES };
            let (mut tx, mut rx) = channel(capacity);
            std::thread::scope(|s| {
                s.spawn(move || (0..lines).for_each(|i| tx.send(numbered(i)).unwrap()));
                for i in 0..lines {
                    assert_numbered(&rx.recv().unwrap(), i);
                }
                assert_eq!(rx.received(), lines);
            });
        }
    });
}

#[test]
fn rings_are_reused_across_rounds() {
    watchdog(|| {
        const ROUNDS: u64 = if cfg!(miri) { 50 } else { 2_000 };
        let (mut tx, mut rx) = channel(4);
        let (mut ack_tx, mut ack_rx) = channel(1);
        std::thread::scope(|s| {
            s.spawn(move || {
                let mut next = 0;
                for round in 0..ROUNDS {
                    // Rounds of 1 ..= 9 lines: below, at and above the capacity.
                    for _ in 0..1 + round % 9 {
                        tx.send(numbered(next)).unwrap();
                        next += 1;
                    }
                    assert_eq!(ack_rx.recv().unwrap().word(0), round);
                }
                assert_eq!(tx.sent(), next);
            });
            let mut next = 0;
            for round in 0..ROUNDS {
                for _ in 0..1 + round % 9 {
                    assert_numbered(&rx.recv().unwrap(), next);
                    next += 1;
                }
                let mut ack = Line::new();
                ack.set_word(0, round);
                ack_tx.send(ack).unwrap();
            }
            assert_eq!(rx.received(), next);
            assert_eq!(ack_tx.sent(), ROUNDS);
        });
    });
}
