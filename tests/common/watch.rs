//! Shared by the concurrent tests: a watchdog that fails a test which does not finish, and
//! deterministic pseudo-random payloads.

use std::sync::mpsc;
use std::time::Duration;

/// Runs `body` on a thread; fails the test if it does not finish in 300 s (a hang detector: a
/// 2-CPU machine shared with builds can make a sound test take minutes) (a panic in `body`
/// is re-raised as it is).
#[allow(dead_code)] // not every test binary that shares this file uses the default limit
pub(crate) fn watchdog(body: impl FnOnce() + Send + 'static) {
    watchdog_secs(300, body);
}

/// [`watchdog`] with a limit of `secs` seconds.
pub(crate) fn watchdog_secs(secs: u64, body: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        body();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(e) = handle.join() {
                std::panic::resume_unwind(e)
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("watchdog: no finish in {secs} s"),
    }
}

/// A deterministic pseudo-random payload (xorshift), different per seed.
#[allow(dead_code)] // not every test binary that shares this file sends payloads
pub(crate) fn payload(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}
