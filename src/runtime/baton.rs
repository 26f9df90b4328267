//! A value handed round a ring of ends in turn, without a lock: the lock-free baseline of a
//! cross-core copy.
//!
//! A benchmark that times a copy between two CPUs needs both to reach one buffer. Safe code
//! has only a lock for that, and a lock's own line moves between the CPUs before every copy
//! (`herald bench bcast`'s copy baseline measured 1.13× a copy on a raw pointer at 4 KiB,
//! docs/runtime.md). A [`Baton`] is what the raw-pointer version does, behind a safe API: one
//! turn counter on a line of its own, one `Release` store to pass the value on and one
//! `Acquire` load to see it arrive, the very instructions of a shared-flag loop.
//!
//! Exclusivity comes from the ring, not from a read-modify-write: end `i` of `n` may hold the
//! value only while the counter `t` has `t % n == i`, only the holder advances `t`, and an end
//! is not `Clone` and holds through `&mut self`. So at most one thread touches the value at a
//! time, and the `Release`/`Acquire` pair orders each holder's accesses after the previous
//! holder's.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use crossbeam_utils::CachePadded;

use super::sync::{thread, Arc, AtomicU64, Ordering, UnsafeCell};

/// Spins before a waiting [`Baton::hold`] starts yielding its CPU.
const SPINS: u32 = 1 << 12;

struct Shared<T> {
    /// Turns passed so far: end `turn % ends` may hold the value.
    turn: CachePadded<AtomicU64>,
    value: UnsafeCell<T>,
    ends: u64,
}

// SAFETY: the value is reached only through a `Held`, and a `Held` exists only at the end whose
// turn it is (`Baton::is_turn` with an `Acquire` load); only that end advances the turn, and the
// ends are unique (`Baton` is not `Clone`; holding takes `&mut Baton`). So one thread at a time
// has the value, each after the previous holder's `Release` store: sharing `Shared` across
// threads moves the value between them, which `T: Send` allows.
unsafe impl<T: Send> Sync for Shared<T> {}
// SAFETY: as above; `Shared` owns the value, which may move to another thread since `T: Send`.
unsafe impl<T: Send> Send for Shared<T> {}

/// One end of a ring of ends that hand one value round in turn ([`baton`]).
///
/// End `i` of `n` holds the value on turns `i`, `i + n`, `i + 2n`, …; dropping the [`Held`]
/// passes the turn to end `i + 1` (mod `n`). Nothing but the turn counter's line moves between
/// CPUs to pass it, so a loop that copies a buffer in turns times the copy and a shared flag,
/// as a loop on a raw pointer would.
///
/// Waiting for a turn spins, then yields ([`hold`](Self::hold)); it never parks, since passing
/// the turn wakes nobody. An end whose turn never comes waits for ever: a ring of ends works
/// only if every end takes its turns.
///
/// # Examples
///
/// Two threads take turns to append to one vector:
///
/// ```
/// let mut ends = herald::runtime::baton(Vec::new(), 2);
/// let mut second = ends.pop().expect("two ends");
/// let mut first = ends.pop().expect("two ends");
/// std::thread::scope(|s| {
///     s.spawn(move || {
///         for i in 0..3 {
///             second.hold().push(2 * i + 1);
///         }
///     });
///     for i in 0..3 {
///         first.hold().push(2 * i);
///     }
///     assert_eq!(*first.hold(), [0, 1, 2, 3, 4, 5]);
/// });
/// ```
pub struct Baton<T> {
    shared: Arc<Shared<T>>,
    index: u64,
}

/// Makes a ring of `ends` ends handing `value` round in turn; end 0 holds it first.
///
/// With `ends == 0` the vector is empty and `value` is dropped.
#[must_use]
pub fn baton<T: Send>(value: T, ends: usize) -> Vec<Baton<T>> {
    let shared = Arc::new(Shared {
        turn: CachePadded::new(AtomicU64::new(0)),
        value: UnsafeCell::new(value),
        ends: ends as u64,
    });
    (0..ends as u64)
        .map(|index| Baton {
            shared: shared.clone(),
            index,
        })
        .collect()
}

impl<T> Baton<T> {
    /// This end's place in the ring, 0-based.
    #[must_use]
    pub fn index(&self) -> usize {
        self.index as usize
    }

    /// Whether it is this end's turn (one `Acquire` load of the turn counter).
    #[inline]
    #[must_use]
    pub fn is_turn(&self) -> bool {
        self.shared.turn.load(Ordering::Acquire) % self.shared.ends == self.index
    }

    /// The value, if it is this end's turn; `None` at once otherwise.
    #[inline]
    pub fn try_hold(&mut self) -> Option<Held<'_, T>> {
        self.is_turn().then(|| Held::new(self))
    }

    /// The value, once it is this end's turn: spins, then yields the CPU between looks.
    #[inline]
    pub fn hold(&mut self) -> Held<'_, T> {
        let mut spins = 0u32;
        while !self.is_turn() {
            if cfg!(herald_loom) || spins >= SPINS {
                thread::yield_now();
            } else {
                spins += 1;
                std::hint::spin_loop();
            }
        }
        Held::new(self)
    }
}

impl<T> fmt::Debug for Baton<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Baton")
            .field("index", &self.index)
            .field("ends", &self.shared.ends)
            .field("turn", &self.shared.turn.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// The value while its [`Baton`] end holds it; dropping it passes the turn on.
///
/// A `Held` is `Send` where `T` is, and `Sync` only where `T` is `Send` and `Sync`: a shared
/// `&Held` gives out `&T`, as a `&MutexGuard` does. So a value that is `Send` but not `Sync`
/// cannot be reached from two threads at once through one `Held`:
///
/// ```compile_fail
/// fn sync<S: Sync>(_: &S) {}
/// let mut ends = herald::runtime::baton(std::cell::Cell::new(0u32), 1);
/// let held = ends[0].hold();
/// sync(&held); // `Cell<u32>` is not `Sync`, so neither is `Held<'_, Cell<u32>>`
/// ```
pub struct Held<'a, T> {
    end: &'a mut Baton<T>,
    /// `Sync` only where `T: Sync` (`&mut Baton<T>` alone is `Sync` where `T: Send`).
    _value: PhantomData<T>,
}

impl<'a, T> Held<'a, T> {
    /// The value of `end`, whose turn it is.
    fn new(end: &'a mut Baton<T>) -> Self {
        Held {
            end,
            _value: PhantomData,
        }
    }

    fn ptr(&self) -> *mut T {
        self.end.shared.value.with_mut(|p| p)
    }
}

impl<T> Deref for Held<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: a `Held` exists only while its end holds the turn (see `Shared`'s `Sync`):
        // no other thread reaches the value until `drop` passes the turn, and this `Held`'s
        // borrow of its end ends before that.
        unsafe { &*self.ptr() }
    }
}

impl<T> DerefMut for Held<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this the only reference from this end.
        unsafe { &mut *self.ptr() }
    }
}

impl<T> Drop for Held<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // Only the holder writes the counter, so a plain store after a relaxed load suffices;
        // `Release` publishes this holder's accesses to the next end's `Acquire` load.
        let turn = &self.end.shared.turn;
        turn.store(turn.load(Ordering::Relaxed) + 1, Ordering::Release);
    }
}

impl<T: fmt::Debug> fmt::Debug for Held<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Held").field(&**self).finish()
    }
}

#[cfg(all(test, herald_loom))]
mod loom_tests {
    use super::baton;
    use loom::cell::UnsafeCell;
    use loom::thread;

    /// Ends take turns at a counter in a loom cell: loom reports any access not ordered after
    /// the previous holder's as a causality violation, and two holders at once as a
    /// concurrent access. (Only two ends: with three, the two waiting ends yield to each other
    /// past loom's branch limit; rings of more ends run under Miri, tests/baton.rs.)
    fn turns(ends: usize, rounds: u64) {
        loom::model(move || {
            let threads: Vec<_> = baton(UnsafeCell::new(0u64), ends)
                .into_iter()
                .map(|mut end| {
                    thread::spawn(move || {
                        let index = end.index() as u64;
                        for round in 0..rounds {
                            let held = end.hold();
                            // SAFETY: loom's own cell; loom checks the access.
                            let seen = held.with_mut(|p| unsafe {
                                *p += 1;
                                *p
                            });
                            assert_eq!(seen, ends as u64 * round + index + 1);
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().expect("end");
            }
        });
    }

    #[test]
    fn loom_baton_two_ends_three_rounds() {
        turns(2, 3);
    }
}
