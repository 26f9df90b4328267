//! The one waiting primitive of `runtime`: spin, then yield, then park, with a wake path that
//! never loses a wake-up.
//!
//! # Protocol
//!
//! A [`Signal`] belongs to one waiting side (a channel end, a worker, a team's caller). The
//! waiter, after spinning and yielding, registers its thread, sets `sleeping`, issues a
//! fence, re-checks its condition and only then parks. The notifier first makes the condition
//! true (any store), issues a fence and then reads `sleeping`, unparking the registered thread
//! if it is set. The two fences forbid the store-buffering outcome in which both sides miss
//! each other, so either the waiter sees the condition or the notifier sees the waiter (loom
//! checks this in `tests/loom_channel.rs`, with `SeqCst` fences on both sides).
//!
//! A notifier claims a sleep by swapping `sleeping` back to false before it unparks, so each
//! sleep gets at most one unpark;
//! a waiter that finds its condition true after announcing its sleep but loses that swap
//! parks once more to take the claimed unpark. So no unpark is left over to wake a later,
//! unrelated block (loom requires this), and park tokens make an unpark that arrives before
//! the park harmless.
//!
//! The fences are asymmetric (`sync::light_fence`, `sync::heavy_fence`): the notifier runs on
//! every message, the waiter only on its way to sleep, so the waiter pays a process-wide
//! barrier (`membarrier(2)`, a few microseconds, beside the tens a wake-up costs) and the
//! notifier only a compiler fence. A `SeqCst` fence per notify drains the store buffer, so
//! every send waits for its line's cross-core ownership transfer: a two-thread stream of
//! blocking sends measured 28–35 M lines/s with it and 120–127 M lines/s without, in the same
//! minutes on the development machine (docs/runtime.md).
//!
//! # Thresholds
//!
//! Measured on the 2-core development machine with 16 threads doing star broadcasts: pure
//! spinning 32 ms per broadcast, spin-then-yield 59 µs, spin-then-park 137 µs; waking a parked
//! vCPU costs about 35 µs. Hence a short spin (`SPIN_POLLS` polls one spin hint apart, a few
//! microseconds, well under the cost of a wake), then `YIELD_STEPS` yields (cheap under
//! oversubscription, and what makes oversubscribed broadcasts fast), then parking (so idle
//! threads cost nothing).
//!
//! The yields also last at least [`YIELD_FOR`] (100 µs), not only `YIELD_STEPS` turns: on an
//! idle CPU 64 yields take a few tens of microseconds, so a 2-rank single copy of 1 MiB (about
//! 40 µs) let the lender park before its reader finished, and a reader parked while the root
//! wrote fresh data. Each such wake-up cost 35–250 µs on the development VM: alternating
//! measurements of the same 1 MiB broadcast (barrier, then one, fresh data each time) took
//! 32–49 µs in 18 of 18 with the floor; without it 5 of 18 took 158–223 µs, one 82 µs
//! (docs/runtime.md, "Team"). Oversubscribed waits rarely reach the floor (other ranks run
//! during each yield); 4–16 ranks on 2 CPUs measured the same with and without it. A waiter
//! that can bound its wait from the work it waits for yields longer
//! (`Signal::wait_until_unabortable_for`): a single copy's lender waits for its readers to
//! copy its buffer, 150–190 µs for 4 MiB between two ranks here, and parking there cost a
//! wake-up per broadcast (1.23–1.55× the cross-core copy, against 1.04–1.10× with the longer
//! yields; docs/runtime.md, "A lender's wait").
//!
//! A worker pinned to a CPU that another worker of its team shares skips the spin and yields
//! at once: the thread it waits for may need that very CPU, and on average `(k − 1)/2` of the
//! other `k − 1` threads do. A star of `k` ranks pinned to one CPU took 5.6–5.8 µs per
//! receiver with the spin and 1.9–2.0 µs without it; 4, 8 and 16 ranks on 2 CPUs broadcast 8
//! bytes in about half the time (docs/runtime.md, "Team").
//!
//! The exception is a wait for a thread on another CPU on which no thread of the waiter's own
//! CPU can act: the caller says so (`across`), and the waiter spins first as one with a CPU of
//! its own does. Two callers do. First, a posted broadcast's root waiting for the reply to its own
//! post from the other CPU (a ping-pong: the readers beside it read that post, they do not
//! answer it), where no mate keeps the replying root from posting. Yielding there hands the
//! CPU to a mate with nothing to do, and the reply is read only on the waiter's next turn: 4
//! ranks on 2 CPUs ping-ponged broadcasts of 8–64 bytes in about 0.3 µs against 2.0–2.2 µs
//! yielding at once, 8 ranks in 0.5–1.2 µs against 3.9–4.9 (docs/runtime.md, "A waiter spins
//! for a thread on the other CPU"). Second, a single copy's lender of one descriptor waits for its
//! readers the same way once only readers on other CPUs are left and no rank of its CPU
//! forwards (its readers on its own CPU copy first, so it asks again on each turn): with 8 and
//! 16 ranks on 2 CPUs a one-block star of 64 KiB took 12.0–12.2 and 26.3–27.4 µs against
//! 17.1–17.4 and 37.2–38.4 yielding at once, the root returning a round of its CPU's other
//! threads after its last reader (docs/runtime.md, "A lender spins for readers on the other
//! CPU"). A wait that every mate waits out too (a small allreduce
//! whose ranks beside it have deposited) is not such a wait: its mates must run to return
//! after it, and a spin there delays them (a barrier and then one allreduce took 4.4–5.4 µs
//! with it, 3.1–3.3 without in most pairs).
//!
//! # Abort
//!
//! Worker threads of a [`Team`](crate::Team) carry their team's abort flag in a thread-local.
//! When a worker panics the team raises the flag and unparks all its workers; every abortable
//! wait on such a thread then returns [`Aborted`] instead of waiting forever.

use super::sync::{self, thread, AtomicBool, Mutex, Ordering};
use std::cell::RefCell;
use std::fmt;
use std::sync::{Arc, Weak};

/// Polls, each after one spin hint, before yielding.
const SPIN_POLLS: u32 = 128;

/// One spin phase: [`SPIN_POLLS`] polls of `ready`, each after one spin hint (not in
/// exponential bursts: a burst of 64 hints is microseconds on some cores, far more than the
/// cross-core hop a wait usually covers).
#[inline]
fn spin_phase<T>(ready: &mut dyn FnMut(Phase) -> Option<T>) -> Option<T> {
    for _ in 0..SPIN_POLLS {
        std::hint::spin_loop();
        if let Some(value) = ready(Phase::Spin) {
            return Some(value);
        }
    }
    None
}

/// Runs one spin phase that nothing ends, polling `line` as a waiter polls its condition:
/// what a waiter spends spinning before it yields (calibration times it,
/// [`Profile::spin_ns`](crate::Profile::spin_ns)). Returns the loads' sum, for the caller to
/// keep.
pub(crate) fn spin_out(line: &std::sync::atomic::AtomicU64) -> u64 {
    let mut sum = 0u64;
    let out: Option<()> = spin_phase(&mut |_| {
        sum = sum.wrapping_add(line.load(std::sync::atomic::Ordering::Acquire));
        None
    });
    debug_assert!(out.is_none());
    sum
}
/// Yields before parking: at least this many…
const YIELD_STEPS: u32 = 64;
/// …and for at least this long: about what waking a parked thread costs
/// on the development machine (35–250 µs per wake-up there), so a wait that ends during the
/// yields never pays a wake-up, and one that parks has spent at most one wake-up's worth first.
const YIELD_FOR: std::time::Duration = std::time::Duration::from_micros(100);
/// The first nap of a timed park ([`Signal::wait_phased_across`]).
const PARK_FIRST: std::time::Duration = std::time::Duration::from_millis(1);
/// The longest nap of a timed park.
const PARK_MAX: std::time::Duration = std::time::Duration::from_millis(64);

/// A wait was abandoned because the worker team it runs on was aborted by a panic in
/// another worker.
///
/// ```
/// let e = herald::runtime::Aborted;
/// assert_eq!(e.to_string(), "the team was aborted by a panic in another worker");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[error("the team was aborted by a panic in another worker")]
pub struct Aborted;

/// A team-wide abort flag, shared by a team's workers (std atomics: never loom-modelled).
#[derive(Debug, Default)]
pub(crate) struct AbortFlag(std::sync::atomic::AtomicBool);

impl AbortFlag {
    /// Whether the flag is raised.
    pub(crate) fn is_raised(&self) -> bool {
        // SeqCst: raised once, read on slow paths (and before each single-copy chunk, where
        // it only makes a receiver stop sooner: soundness rests on the communicator's flag).
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Raises (`true`) or clears (`false`) the flag.
    pub(crate) fn set(&self, raised: bool) {
        self.0.store(raised, std::sync::atomic::Ordering::SeqCst);
    }
}

thread_local! {
    /// The abort flag of the team this thread works for, if any.
    static ABORT: RefCell<Option<std::sync::Arc<AbortFlag>>> = const { RefCell::new(None) };
    /// Communicator ranks this thread has driven: `(watcher, rank)` pairs, told if a team job
    /// of this thread panics (see [`watch_panics`]).
    static WATCHERS: RefCell<Vec<(Weak<dyn PanicWatch>, usize)>> = const { RefCell::new(Vec::new()) };
    /// This thread's token (0: not drawn yet).
    static TOKEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// How many other workers of its team share this thread's CPU (then its waits yield at
    /// once, but for a thread on another CPU that no mate can act on: spinning would only
    /// delay the thread it waits for).
    static CPU_MATES: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// The CPU this thread is pinned to ([`NO_CPU`]: not pinned by a team).
    static THREAD_CPU: std::cell::Cell<u64> = const { std::cell::Cell::new(NO_CPU) };
}

/// [`thread_cpu`]'s value for a thread no team pinned.
pub(crate) const NO_CPU: u64 = u64::MAX;

/// Records the CPU a team pinned the calling thread to (`None`: not pinned).
pub(crate) fn set_thread_cpu(cpu: Option<usize>) {
    THREAD_CPU.with(|c| c.set(cpu.map_or(NO_CPU, |c| c as u64)));
}

/// The CPU a team pinned the calling thread to, or [`NO_CPU`].
pub(crate) fn thread_cpu() -> u64 {
    THREAD_CPU.try_with(std::cell::Cell::get).unwrap_or(NO_CPU)
}

/// Tells the calling thread's waits how many other workers of its team share its CPU.
pub(crate) fn set_thread_cpu_mates(mates: u32) {
    CPU_MATES.with(|s| s.set(mates));
}

/// Whether other workers of its team share the calling thread's CPU (then its waits yield
/// before they spin, [`Signal::wait_phased_across`]).
#[inline]
pub(crate) fn thread_shares_cpu() -> bool {
    CPU_MATES.try_with(std::cell::Cell::get).unwrap_or(0) != 0
}

/// How many other workers of its team share the calling thread's CPU (0 where it is not
/// pinned).
#[cfg(all(test, not(herald_loom)))]
pub(crate) fn thread_cpu_mates() -> u32 {
    CPU_MATES.with(std::cell::Cell::get)
}

/// A number no other thread of the process has: who drives a communicator's rank.
pub(crate) fn thread_token() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    TOKEN.with(|t| {
        if t.get() == 0 {
            t.set(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        }
        t.get()
    })
}

/// Told when a team job panics on a thread that drove one of its ranks: a communicator, which
/// poisons itself if that thread still drives the rank (the last thread that made a call on a
/// rank drives it), so that its ranks driven by other threads or teams stop waiting too.
pub(crate) trait PanicWatch: Send + Sync {
    /// The thread with token `driver` panicked outside of the communicator's calls (inside one,
    /// its own guard has poisoned already).
    fn rank_panicked(&self, rank: usize, driver: u64);
}

/// Registers the calling thread as a driver of `watcher`'s rank `rank` (called when a rank's
/// driving thread changes). Registering the same pair again changes nothing.
pub(crate) fn watch_panics(watcher: &Arc<dyn PanicWatch>, rank: usize) {
    WATCHERS.with(|w| {
        let mut w = w.borrow_mut();
        w.retain(|(o, _)| o.strong_count() > 0);
        let known = w
            .iter()
            .any(|(o, r)| *r == rank && std::ptr::addr_eq(o.as_ptr(), Arc::as_ptr(watcher)));
        if !known {
            w.push((Arc::downgrade(watcher), rank));
        }
    });
}

/// Tells the communicators the calling thread has driven that one of its team jobs panicked.
pub(crate) fn job_panicked() {
    let token = thread_token();
    let watchers = WATCHERS
        .try_with(|w| w.borrow().clone())
        .unwrap_or_default();
    for (watcher, rank) in watchers {
        if let Some(watcher) = watcher.upgrade() {
            watcher.rank_panicked(rank, token);
        }
    }
}

/// How far a wait has gone, for conditions with an expensive part ([`Signal::wait_phased_across`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Spinning: polls are a spin hint apart.
    Spin,
    /// Every poll follows a yield or a wake-up: each one should look at everything.
    Slow,
}

/// While spinning, a collective's wait looks at everything (its peers' published calls, which
/// they write) once every this many polls, and otherwise only at what nobody writes in a healthy
/// run (the poison); after the spin phase, at everything on every poll.
pub(crate) const THOROUGH_EVERY: u32 = 64;

/// The unanswered polls of one wait, and which of them look at everything
/// ([`THOROUGH_EVERY`]).
#[derive(Debug, Default)]
pub(crate) struct Polls(u32);

impl Polls {
    /// Counts a poll that found nothing; whether it should look at everything: every poll
    /// after the spin phase, every [`THOROUGH_EVERY`]-th while spinning.
    #[inline]
    pub(crate) fn thorough(&mut self, phase: Phase) -> bool {
        self.0 = self.0.wrapping_add(1);
        phase == Phase::Slow || self.0 % THOROUGH_EVERY == 0
    }
}

/// Makes `flag` the abort flag of every abortable wait on the calling thread: once, as a team's
/// worker starts ([`thread_abort_flag`]'s callers keep what they read).
pub(crate) fn set_thread_abort_flag(flag: std::sync::Arc<AbortFlag>) {
    ABORT.with(|a| *a.borrow_mut() = Some(flag));
}

/// The abort flag of the calling thread's team, if it works for one: set once, when the
/// thread starts, so a caller may keep it ([`CommRank`](crate::CommRank) does, per driving
/// thread, and reads the flag itself at the start of each call).
pub(crate) fn thread_abort_flag() -> Option<std::sync::Arc<AbortFlag>> {
    ABORT.try_with(|a| a.borrow().clone()).unwrap_or(None)
}

/// Whether the calling thread's team (if any) is aborted.
pub(crate) fn thread_aborted() -> bool {
    ABORT
        .try_with(|a| a.borrow().as_ref().is_some_and(|f| f.is_raised()))
        .unwrap_or(false)
}

/// The wake path of one waiting side: spin → yield → park, and [`notify`](Self::notify).
///
/// At most one thread waits on a `Signal` at a time (any number may notify). The channel's
/// blocking `send`/`recv` and the [`Team`](crate::Team) use it; it is public so that code
/// built on the runtime waits the same way.
///
/// # Examples
///
/// ```
/// use herald::Signal;
/// use std::sync::atomic::{AtomicBool, Ordering};
///
/// let (signal, ready) = (Signal::new(), AtomicBool::new(false));
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         ready.store(true, Ordering::Release);
///         signal.notify(); // after making the condition true
///     });
///     let got = signal.wait_until(|| ready.load(Ordering::Acquire).then_some(7));
///     assert_eq!(got, Ok(7));
/// });
/// ```
pub struct Signal {
    /// Set by the waiter just before it parks, cleared when it stops waiting.
    sleeping: AtomicBool,
    /// The thread to unpark; written by the waiter before it sets `sleeping`.
    thread: Mutex<Option<thread::Thread>>,
}

impl Signal {
    /// A signal nobody waits on.
    #[must_use]
    pub fn new() -> Self {
        Self {
            sleeping: AtomicBool::new(false),
            thread: Mutex::new(None),
        }
    }

    /// Waits until `ready` returns `Some`, and returns its value.
    ///
    /// `ready` is called repeatedly; it must read, with `Acquire` or stronger, the state that
    /// the notifier changes before calling [`notify`](Self::notify). It must not block or wait
    /// (it runs while the thread is announced as sleeping): check, and act after the wait.
    ///
    /// # Errors
    ///
    /// [`Aborted`] if the calling thread is a worker of a team that a panic aborted.
    #[inline]
    pub fn wait_until<T>(&self, mut ready: impl FnMut() -> Option<T>) -> Result<T, Aborted> {
        match ready() {
            Some(value) => Ok(value),
            None => self.wait_cold(&mut |_| ready(), true, false, YIELD_FOR, &|| false, false),
        }
    }

    /// Like [`wait_until`](Self::wait_until), telling `ready` the phase of each poll: a
    /// condition with an expensive part (reading other ranks' lines) checks it on every
    /// [`Phase::Slow`] poll — so every wake-up sees it — and only now and then while spinning.
    /// A parked waiter also wakes by itself now and then ([`PARK_FIRST`], doubling up to
    /// [`PARK_MAX`]), so a condition nobody notifies about (a peer that will never come, found
    /// only by looking) is seen too.
    ///
    /// `across` answers whether a thread on another CPU makes the condition true and no
    /// thread of the waiter's CPU can act on it. A waiter that shares its CPU with other
    /// workers then spins first too, as one with a CPU of its own does (yielding would hand its
    /// CPU to a mate with nothing to do, and the wait would end only on the waiter's next
    /// turn); otherwise it yields at once (module notes, "Thresholds"). It is asked only by
    /// such a waiter, once its first poll has failed: its answer may read other ranks' lines,
    /// and a waiter with a CPU of its own, which spins anyway, never pays for them (a 2-rank
    /// ping-pong of 48-byte posts read the root's call-number line on every call while the
    /// answer was computed up front: docs/runtime.md, "The reply rule's price where ranks have
    /// CPUs of their own").
    #[inline]
    pub(crate) fn wait_phased_across<T>(
        &self,
        across: impl Fn() -> bool,
        mut ready: impl FnMut(Phase) -> Option<T>,
    ) -> Result<T, Aborted> {
        match ready(Phase::Spin) {
            Some(value) => Ok(value),
            None => self.wait_cold(&mut ready, true, true, YIELD_FOR, &across, false),
        }
    }

    /// [`wait_phased_across`](Self::wait_phased_across) for a condition that may fail: `ready`
    /// answers `Some(Ok(value))` when done and `Some(Err(e))` to stop.
    ///
    /// The polling loop never carries `Result<T, E>` itself. An error type such as
    /// `CollectiveError` makes it wider than two registers, so the condition wrote it through
    /// the waiter's pointer on the poll that ended the wait and the caller read it back in
    /// pieces (likely loads that cannot be forwarded from the wider stores just made, which
    /// then wait behind every earlier store, such as a slot's on its way to a peer). Here the
    /// error is set aside where it happens and the loop answers with `Option<T>`: a 48-byte
    /// broadcast went from 1.75–1.82 to 1.58–1.72 times a shared flag (docs/runtime.md, "The
    /// 48-byte broadcast taken apart").
    #[inline]
    pub(crate) fn wait_phased_or<T, E>(
        &self,
        ready: impl FnMut(Phase) -> Option<Result<T, E>>,
    ) -> Result<Result<T, E>, Aborted> {
        self.wait_phased_or_across(|| false, ready)
    }

    /// [`wait_phased_or`](Self::wait_phased_or) with
    /// [`wait_phased_across`](Self::wait_phased_across)'s `across`.
    #[inline]
    pub(crate) fn wait_phased_or_across<T, E>(
        &self,
        across: impl Fn() -> bool,
        mut ready: impl FnMut(Phase) -> Option<Result<T, E>>,
    ) -> Result<Result<T, E>, Aborted> {
        let mut failed = None;
        let done = self.wait_phased_across(across, |phase| match ready(phase)? {
            Ok(value) => Some(Some(value)),
            Err(e) => {
                failed = Some(e);
                Some(None)
            }
        })?;
        Ok(match (done, failed) {
            (Some(value), _) => Ok(value),
            (None, Some(e)) => Err(e),
            (None, None) => unreachable!("a condition that stops sets its error first"),
        })
    }

    /// Like [`wait_until`](Self::wait_until), but not abortable (team bookkeeping).
    pub(crate) fn wait_until_unabortable<T>(&self, ready: impl FnMut() -> Option<T>) -> T {
        self.wait_until_unabortable_for(YIELD_FOR, || false, ready)
    }

    /// Like [`wait_until_unabortable`](Self::wait_until_unabortable), yielding for at least
    /// `expected` (and at least [`YIELD_FOR`]) before parking: for a wait whose length the
    /// waiter can bound from the work it waits for (a lender's readers copying its buffer),
    /// so that a wait of known length does not pay a wake-up.
    ///
    /// `across` answers whether only threads on other CPUs can still make the condition true
    /// (see [`wait_phased_across`](Self::wait_phased_across)). It is asked again on each of the
    /// waiter's turns where it shares its CPU: a lender's readers on its own CPU copy first,
    /// then only those on the other CPU are left, and from then on each turn spins before it
    /// yields again (a reader there that finishes during the spin is seen at once, not a round
    /// of the CPU's other threads later).
    pub(crate) fn wait_until_unabortable_for<T>(
        &self,
        expected: std::time::Duration,
        across: impl Fn() -> bool,
        mut ready: impl FnMut() -> Option<T>,
    ) -> T {
        match ready() {
            Some(value) => value,
            None => match self.wait_cold(
                &mut |_| ready(),
                false,
                false,
                expected.max(YIELD_FOR),
                &across,
                true,
            ) {
                Ok(value) => value,
                Err(Aborted) => unreachable!("an unabortable wait returned Aborted"),
            },
        }
    }

    /// Like [`wait_until_unabortable`](Self::wait_until_unabortable), but parks at once: for
    /// a waiter whose spinning or yielding would take a CPU from the threads it waits for (a
    /// team's caller when every CPU has a pinned worker).
    pub(crate) fn wait_parked<T>(&self, mut ready: impl FnMut() -> Option<T>) -> T {
        match ready() {
            Some(value) => value,
            None => match self.park_until(&mut |_| ready(), &|| false, false) {
                Ok(value) => value,
                Err(Aborted) => unreachable!("an unabortable wait returned Aborted"),
            },
        }
    }

    #[cold]
    fn wait_cold<T>(
        &self,
        ready: &mut dyn FnMut(Phase) -> Option<T>,
        abortable: bool,
        timed: bool,
        yield_for: std::time::Duration,
        across: &dyn Fn() -> bool,
        respin: bool,
    ) -> Result<T, Aborted> {
        let aborted = || abortable && thread_aborted();
        let shares = thread_shares_cpu();
        let (spins, yields) = if cfg!(herald_loom) {
            (false, 0)
        } else {
            (!shares || across(), YIELD_STEPS)
        };
        if spins {
            if let Some(value) = spin_phase(ready) {
                return Ok(value);
            }
        }
        if yields > 0 {
            let began = std::time::Instant::now();
            for yielded in 1u32.. {
                if aborted() {
                    return Err(Aborted);
                }
                thread::yield_now();
                if let Some(value) = ready(Phase::Slow) {
                    return Ok(value);
                }
                // A waiter that shares its CPU spins on each turn where `respin` asks, once
                // only other CPUs' threads can end the wait (whether or not it spun before its
                // first yield: the model's rule, docs/runtime.md).
                if respin && shares && across() {
                    if let Some(value) = spin_phase(ready) {
                        return Ok(value);
                    }
                }
                if yielded >= yields && began.elapsed() >= yield_for {
                    break;
                }
            }
        }
        self.park_until(ready, &aborted, timed)
    }

    /// The parking phase: the waiter half of the protocol in the module notes.
    fn park_until<T>(
        &self,
        ready: &mut dyn FnMut(Phase) -> Option<T>,
        aborted: &dyn Fn() -> bool,
        timed: bool,
    ) -> Result<T, Aborted> {
        *sync::lock(&self.thread) = Some(thread::current());
        let mut nap = PARK_FIRST;
        loop {
            // An RMW, not a store: every write of `sleeping` is then an RMW, so the claim
            // below and a notifier's claim are totally ordered (loom models a plain relaxed
            // store racing an RMW too loosely and reports a false lost wake-up).
            self.sleeping.swap(true, Ordering::Relaxed);
            sync::heavy_fence();
            // Announced: from here until the swap below, `ready` must not block.
            let result = match ready(Phase::Slow) {
                Some(value) => Ok(value),
                None if aborted() => Err(Aborted),
                None => {
                    // A timed park that ends by itself leaves `sleeping` set: the next round
                    // announces again, and a notifier's claim in between costs one spurious
                    // wake-up later at most (every park here is in a loop).
                    if timed && !cfg!(herald_loom) {
                        std::thread::park_timeout(nap);
                        nap = (nap * 2).min(PARK_MAX);
                    } else {
                        thread::park();
                    }
                    continue;
                }
            };
            if !self.sleeping.swap(false, Ordering::Acquire) {
                // A notifier claimed this sleep and is unparking us: take its token now, so
                // no unpark is ever left over for an unrelated later block.
                thread::park();
            }
            return result;
        }
    }

    /// Wakes the waiter, if it is parked or about to park. Call after making its condition
    /// true.
    #[inline]
    pub fn notify(&self) {
        sync::light_fence();
        if self.sleeping.load(Ordering::Relaxed) {
            self.wake_cold();
        }
    }

    /// Claims the waiter's sleep (one unpark per sleep) and unparks it.
    #[cold]
    fn wake_cold(&self) {
        if self.sleeping.swap(false, Ordering::AcqRel) {
            if let Some(thread) = sync::lock(&self.thread).as_ref() {
                thread.unpark();
            }
        }
    }
}

impl Default for Signal {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signal")
            .field("sleeping", &self.sleeping.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(herald_loom)))]
mod tests {
    use super::{Phase, Signal};

    /// A condition that answers `answer` on its `at`-th poll (1-based), and the count of its
    /// polls.
    fn after<T: Copy>(
        at: u32,
        answer: T,
    ) -> (
        impl FnMut(Phase) -> Option<T>,
        std::rc::Rc<std::cell::Cell<u32>>,
    ) {
        let polls = std::rc::Rc::new(std::cell::Cell::new(0));
        let seen = std::rc::Rc::clone(&polls);
        let ready = move |_: Phase| {
            seen.set(seen.get() + 1);
            (seen.get() >= at).then_some(answer)
        };
        (ready, polls)
    }

    #[test]
    fn wait_phased_or_returns_the_value_or_the_error_of_the_poll_that_ended_it() {
        let signal = Signal::new();
        // At once (the inline first look) and after some spinning, both outcomes.
        for at in [1, 2, 40, 200] {
            let (ready, polls) = after(at, Ok::<u64, u32>(u64::from(at) * 7));
            assert_eq!(signal.wait_phased_or(ready), Ok(Ok(u64::from(at) * 7)));
            assert_eq!(polls.get(), at, "stops at the first answer");

            let (ready, polls) = after(at, Err::<u64, (u32, u64)>((at, 99)));
            assert_eq!(signal.wait_phased_or(ready), Ok(Err((at, 99))));
            assert_eq!(polls.get(), at);
        }
    }

    #[test]
    fn wait_phased_or_keeps_a_wide_error_whole() {
        // An error wider than two registers, with every byte distinct: the path this wait
        // exists for.
        let wide: [u64; 6] = std::array::from_fn(|i| 0x0101_0101_0101_0101 * (i as u64 + 1));
        let signal = Signal::new();
        let (ready, _) = after(3, Err::<(), _>(wide));
        assert_eq!(signal.wait_phased_or(ready), Ok(Err(wide)));
    }

    #[test]
    fn only_a_waiter_beside_a_mate_asks_whether_it_waits_across_and_only_once_it_waits() {
        // `across` may read other ranks' lines: a waiter with a CPU of its own spins anyway
        // and must never pay for it, nor any waiter whose first look succeeds.
        std::thread::spawn(|| {
            let signal = Signal::new();
            let asked = std::cell::Cell::new(0u32);
            let across = || {
                asked.set(asked.get() + 1);
                true
            };
            for (mates, at, expected) in [(0, 1, 0), (0, 5, 0), (1, 1, 0), (1, 5, 1), (3, 5, 1)] {
                super::set_thread_cpu_mates(mates);
                asked.set(0);
                let (ready, polls) = after(at, 11u8);
                assert_eq!(signal.wait_phased_across(across, ready), Ok(11));
                assert_eq!(polls.get(), at);
                assert_eq!(
                    asked.get(),
                    expected,
                    "{mates} mates, answered on poll {at}"
                );
            }
        })
        .join()
        .expect("the waits");
    }
}
