//! A deadline for the MPI library's own blocking calls.
//!
//! herald's waits poll nonblocking requests with a deadline ([`crate::p2p`]), so a rank that
//! stops answering costs its peers a timeout and a message, not a hang. The library's blocking
//! collectives cannot be polled: the agreement steps before a run (`MPI_Allgather`), the
//! reductions after it, the library's side of `bench` (its `MPI_Bcast`, `MPI_Allreduce` and
//! `MPI_Barrier`, which are what `bench` measures and so must stay blocking calls), the
//! collective creation and freeing of communicators and windows, and `MPI_Finalize`.
//!
//! [`bounded`] runs such a call while one watchdog thread per process holds its deadline. If
//! the call has not returned by then, the watchdog prints what this rank waited in and ends the
//! job with `MPI_Abort` (exit code 1): a rank that stops answering while the others are inside
//! one of the library's collectives ends the job with a message instead of hanging it.
//!
//! The deadline is the channel's timeout plus [`SLACK`]: where herald's own wait and the
//! library's call wait for the same stalled rank, herald's message, which names the rank it
//! waited for, comes first. Arming costs two lock operations and a wake-up of the watchdog:
//! nothing that `bench` times is armed call by call (a round of the library's side is armed
//! as a whole, outside its clock).

use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How much longer than the channel's timeout a library call may take.
pub const SLACK: Duration = Duration::from_secs(1);

/// What the watchdog holds while a call is armed.
struct Armed {
    deadline: Instant,
    rank: usize,
    what: String,
    limit: Duration,
}

#[derive(Default)]
struct State {
    /// The outermost armed call (inner ones run under its deadline).
    armed: Option<Armed>,
    /// How many [`bounded`] calls are running (nested calls count).
    depth: usize,
}

struct Watch {
    state: Mutex<State>,
    wake: Condvar,
}

impl Watch {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent under a panic (it is written under the lock in whole
        // assignments), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What the watchdog does with an expired call: its rank, what it was, its limit.
type Fire = Box<dyn FnOnce(usize, String, Duration) + Send>;

/// A watch with its watchdog thread, which calls `fire` once if a call expires.
fn start(fire: Fire) -> &'static Watch {
    let w: &'static Watch = Box::leak(Box::new(Watch {
        state: Mutex::new(State::default()),
        wake: Condvar::new(),
    }));
    std::thread::Builder::new()
        .name("herald-mpi-watchdog".into())
        .spawn(move || watchdog(w, fire))
        .expect("cannot start the watchdog thread");
    w
}

/// The process's watchdog, started on first use: it reports an expired call and ends the job.
fn watch() -> &'static Watch {
    static WATCH: OnceLock<&'static Watch> = OnceLock::new();
    WATCH.get_or_init(|| {
        start(Box::new(|rank, what, limit| {
            herald_cli_common::say(&format!(
                "herald-mpi: rank {rank}: waited {} s in {what}, which every rank must join: a \
                 rank stopped answering; aborting the job",
                limit.as_secs_f64().round()
            ));
            crate::p2p::abort_world(1)
        }))
    })
}

/// Waits for an armed call to pass its deadline; then hands it to `fire`.
fn watchdog(w: &'static Watch, fire: Fire) {
    let mut s = w.lock();
    let (rank, what, limit) = loop {
        let due = s.armed.as_ref().map(|a| a.deadline);
        match due {
            None => s = w.wake.wait(s).unwrap_or_else(|e| e.into_inner()),
            Some(d) => {
                let now = Instant::now();
                if now >= d {
                    let a = s.armed.take().expect("armed");
                    break (a.rank, a.what, a.limit);
                }
                s = w
                    .wake
                    .wait_timeout(s, d - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
    };
    drop(s);
    fire(rank, what, limit);
}

/// Disarms when the call ends (also by a panic).
struct Disarm(&'static Watch);

impl Drop for Disarm {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        s.depth -= 1;
        if s.depth == 0 {
            s.armed = None;
        }
    }
}

/// Runs `call`, a blocking call of the MPI library that every rank must join (`what` names it
/// for the message), on rank `rank`: if it has not returned after `limit`, the process prints
/// `herald-mpi: rank R: waited … in WHAT …` on stderr and ends the job with `MPI_Abort` (exit
/// code 1). Nested calls run under the outermost call's deadline.
///
/// [`World::bounded`](crate::World::bounded) passes the world's rank and its timeout plus
/// [`SLACK`].
///
/// ```
/// use std::time::Duration;
/// // (a call that returns in time is simply run)
/// let sum = herald_mpi::bounded(0, Duration::from_secs(5), "an addition", || 2 + 2);
/// assert_eq!(sum, 4);
/// ```
pub fn bounded<T>(rank: usize, limit: Duration, what: &str, call: impl FnOnce() -> T) -> T {
    armed(watch(), rank, limit, what, call)
}

fn armed<T>(
    w: &'static Watch,
    rank: usize,
    limit: Duration,
    what: &str,
    call: impl FnOnce() -> T,
) -> T {
    {
        let mut s = w.lock();
        s.depth += 1;
        if s.depth == 1 {
            s.armed = Some(Armed {
                deadline: Instant::now() + limit,
                rank,
                what: what.to_owned(),
                limit,
            });
            w.wake.notify_one();
        }
    }
    let _disarm = Disarm(w);
    call()
}

#[cfg(test)]
mod tests {
    use super::{armed, start};
    use std::sync::mpsc;
    use std::time::Duration;

    /// A watch whose watchdog sends what expired instead of ending the job.
    fn test_watch() -> (&'static super::Watch, mpsc::Receiver<(usize, String)>) {
        let (tx, rx) = mpsc::channel();
        let w = start(Box::new(move |rank, what, _| {
            let _ = tx.send((rank, what));
        }));
        (w, rx)
    }

    #[test]
    fn calls_in_time_run_and_leave_nothing_armed() {
        let (w, rx) = test_watch();
        let long = Duration::from_secs(600);
        let got = armed(w, 3, long, "outer", || armed(w, 3, long, "inner", || 7));
        assert_eq!(got, 7);
        let s = w.lock();
        assert_eq!(s.depth, 0);
        assert!(s.armed.is_none());
        drop(s);
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn a_call_that_does_not_return_is_reported_with_the_outermost_name() {
        let (w, rx) = test_watch();
        // The call returns only once the watchdog has reported it (or after a minute: the
        // test's own watchdog), so the report cannot race with the call's end.
        let got = armed(w, 2, Duration::from_millis(1), "the outer call", || {
            armed(w, 2, Duration::from_secs(600), "an inner call", || {
                rx.recv_timeout(Duration::from_secs(60))
            })
        });
        assert_eq!(got, Ok((2, "the outer call".to_owned())));
        assert!(w.lock().armed.is_none());
    }

    #[test]
    fn a_panicking_call_is_disarmed() {
        let (w, _rx) = test_watch();
        let r = std::panic::catch_unwind(|| {
            armed(w, 0, Duration::from_secs(600), "a panic", || panic!("boom"))
        });
        assert!(r.is_err());
        let s = w.lock();
        assert_eq!(s.depth, 0);
        assert!(s.armed.is_none());
    }
}
