//! Tests of `runtime/baton.rs`: a value handed round a ring of ends in turn. Run under Miri
//! too (scripts/test.sh), which reports any access of the value not ordered after the
//! previous holder's as a data race.

mod common {
    pub(crate) mod watch;
}

use common::watch::{payload, watchdog};
use herald::runtime::baton;

/// Two threads copy a buffer back and forth in turns, each checking every byte the other
/// wrote: the cross-core copy `herald bench bcast` times.
#[test]
fn two_ends_copy_a_buffer_in_turns_byte_for_byte() {
    watchdog(|| {
        let len = 1000;
        let rounds: u64 = if cfg!(miri) { 20 } else { 2000 };
        let mut ends = baton(vec![0u8; 2 * len], 2);
        let mut one = ends.pop().expect("two ends");
        let mut zero = ends.pop().expect("two ends");
        let echo = std::thread::spawn(move || {
            for round in 0..rounds {
                let mut held = one.hold();
                let (a, b) = held.split_at_mut(len);
                assert_eq!(a, &payload(len, round)[..], "round {round}");
                b.copy_from_slice(a);
            }
        });
        for round in 0..rounds {
            let mut held = zero.hold();
            if round > 0 {
                let (a, b) = held.split_at(len);
                assert_eq!(a, b, "echo of round {}", round - 1);
            }
            held[..len].copy_from_slice(&payload(len, round));
        }
        let held = zero.hold();
        assert_eq!(held[..len], held[len..]);
        drop(held);
        echo.join().expect("echo");
    });
}

/// More ends than CPUs (waiting yields): the turns go round the ring in order.
#[test]
fn a_ring_of_five_takes_turns_in_order() {
    watchdog(|| {
        let (n, rounds) = (5, if cfg!(miri) { 3 } else { 200 });
        let ends = baton(Vec::new(), n);
        let threads: Vec<_> = ends
            .into_iter()
            .map(|mut end| {
                std::thread::spawn(move || {
                    for _ in 0..rounds {
                        let i = end.index();
                        end.hold().push(i);
                    }
                    end
                })
            })
            .collect();
        let mut ends: Vec<_> = threads
            .into_iter()
            .map(|t| t.join().expect("end"))
            .collect();
        let log = ends[0].hold().clone();
        let expected: Vec<usize> = (0..rounds * n).map(|t| t % n).collect();
        assert_eq!(log, expected);
    });
}

/// Only the end whose turn it is gets the value; holding and dropping passes the turn on.
#[test]
fn try_hold_only_on_the_ends_turn() {
    let mut ends = baton(7u32, 3);
    assert_eq!(
        ends.iter().map(|e| e.is_turn()).collect::<Vec<_>>(),
        [true, false, false]
    );
    assert!(ends[1].try_hold().is_none());
    assert!(ends[2].try_hold().is_none());
    *ends[0].try_hold().expect("end 0's turn") += 1;
    assert!(ends[0].try_hold().is_none());
    assert_eq!(*ends[1].try_hold().expect("end 1's turn"), 8);
    assert!(ends[2].is_turn());
    assert!(format!("{:?}", ends[2]).contains("turn: 2"));
}

/// No ends: the value is dropped at once.
#[test]
fn zero_ends_drop_the_value() {
    let value = std::sync::Arc::new(());
    let ends = baton(value.clone(), 0);
    assert!(ends.is_empty());
    assert_eq!(std::sync::Arc::strong_count(&value), 1);
}

/// The auto traits: ends and held values move between threads where `T: Send`; a held value
/// is shared between threads only where `T: Sync` too (the `compile_fail` example on `Held`
/// checks the converse).
#[test]
fn ends_and_held_values_are_send_and_sync_as_their_value_allows() {
    fn send<S: Send>() {}
    fn sync<S: Sync>() {}
    send::<herald::runtime::Baton<Vec<u8>>>();
    send::<herald::runtime::Held<'static, Vec<u8>>>();
    sync::<herald::runtime::Held<'static, Vec<u8>>>();
    send::<herald::runtime::Baton<std::cell::Cell<u8>>>();
    send::<herald::runtime::Held<'static, std::cell::Cell<u8>>>();
}
