//! Pinned worker teams: threads created once, each pinned to a core, running borrowed
//! closures (scoped, like `std::thread::scope`) again and again.
//!
//! # Lifecycle
//!
//! Every rank is a worker thread; the caller of [`Team::run`] only waits — parked at once when
//! the workers occupy every CPU, so it never takes a CPU from them. (So every rank is pinned
//! and the caller's own affinity is never changed.) A run stores a type-erased
//! reference to the closure, bumps `epoch` (`Release`) and notifies each worker's [`Signal`];
//! each worker runs the closure under `catch_unwind` and decrements `remaining`; the last one
//! notifies the caller. The caller writes the job only while `remaining == 0`, and returns only
//! after observing `remaining == 0` again, which is what makes lending a borrowed closure to the
//! workers sound.
//!
//! # Panics
//!
//! The first panicking rank stores its payload, raises the team's abort flag and unparks
//! every worker; channel waits on the team's threads then return `Aborted` errors, so no
//! worker stays blocked. Before that, every communicator with a rank this thread drives is told
//! (`wait::job_panicked`): it poisons itself, so its ranks driven by other teams or threads stop
//! waiting as well. `run` waits for every rank and then re-raises the first payload with
//! `resume_unwind`, like `std::thread::scope`. The team stays usable. A panic in the team's own
//! bookkeeping (never user code) aborts the process, as rayon does.

use super::wait::{self, AbortFlag, Signal};
use crossbeam_utils::CachePadded;
use std::any::Any;
use std::cell::UnsafeCell;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::{self, JoinHandle};

/// Errors of setting up a [`Team`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// A team needs at least one rank.
    #[error("a team needs at least one rank")]
    NoRanks,
    /// The rank count and the rank-to-core map disagree.
    #[error("{ranks} ranks but {cores} entries in the rank-to-core map")]
    CoreMap {
        /// Ranks asked for.
        ranks: usize,
        /// Entries in the map.
        cores: usize,
    },
    /// The OS refused to start a worker thread (more threads than it allows, or no memory for
    /// the stack).
    #[error("cannot start the worker thread of rank {rank}: {source}")]
    Spawn {
        /// The rank whose thread failed to start.
        rank: usize,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// Where a rank runs: the OS CPU it was asked to bind to, and whether binding worked.
///
/// Pinning failures are not errors (oversubscription and restricted CPU sets are normal);
/// they are recorded here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Placement {
    cpu: Option<usize>,
    pinned: bool,
}

impl Placement {
    /// The OS CPU index this rank was to be pinned to (`None`: pinning was off or no CPU list).
    #[must_use]
    pub fn cpu(&self) -> Option<usize> {
        self.cpu
    }

    /// Whether the thread is bound to [`cpu`](Self::cpu).
    #[must_use]
    pub fn is_pinned(&self) -> bool {
        self.pinned
    }
}

/// What a rank knows while it runs a team's closure.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    rank: usize,
    size: usize,
    placement: Placement,
}

impl Ctx {
    /// This rank, in `0 .. size()`.
    #[must_use]
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks in the team.
    #[must_use]
    pub fn size(&self) -> usize {
        self.size
    }

    /// Where this rank runs.
    #[must_use]
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// Whether another rank panicked in this run (long user loops may poll this).
    #[must_use]
    pub fn is_aborted(&self) -> bool {
        wait::thread_aborted()
    }
}

/// A type-erased job: called once per rank with the rank.
type Job = &'static (dyn Fn(usize) + Sync);

/// The state shared by the caller and the workers.
struct Shared {
    size: usize,
    /// Bumped (`Release`) by the caller to start a run, or to shut down (`job == None`).
    epoch: CachePadded<AtomicU64>,
    /// Workers not yet done with the current run (or with starting up).
    remaining: CachePadded<AtomicUsize>,
    /// The current job. Invariant: written by the caller only while every worker is idle
    /// (`remaining == 0` observed, or before the workers' first epoch); read by workers only
    /// between seeing a new `epoch` and decrementing `remaining`.
    job: UnsafeCell<Option<Job>>,
    /// The caller's wake path (the last worker of a run notifies it).
    caller: CachePadded<Signal>,
    /// Each worker's wake path.
    workers: Box<[CachePadded<Signal>]>,
    /// Whether each worker's pinning succeeded (written at startup).
    pinned: Box<[AtomicBool]>,
    /// Each worker's thread handle, to unpark it on abort.
    threads: Box<[OnceLock<thread::Thread>]>,
    /// Raised by the first panicking rank of a run; cleared when a run starts.
    abort: Arc<AbortFlag>,
    /// The first panic payload of the current run.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Whether the caller parks at once while a run goes on: when the workers occupy every
    /// CPU, a caller that spins or yields takes time from them (measured: a 2-rank hop on a
    /// 2-CPU machine, 64 ns with a spinning and yielding caller, 44 ns without).
    caller_parks: bool,
}

// SAFETY: `job` is the only non-`Sync` field; its accesses are ordered by `epoch` and
// `remaining` as its invariant states, and the job itself is `Sync`.
unsafe impl Sync for Shared {}

impl Shared {
    /// Starts a run of `job` (or shutdown, for `None`). Every worker must be idle.
    fn start(&self, job: Option<Job>) {
        self.abort.set(false);
        self.remaining.store(self.size, Ordering::Relaxed);
        // SAFETY: every worker is idle (the caller saw `remaining == 0`, or workers have not
        // seen an epoch yet), so nobody reads `job` until the `Release` bump below.
        unsafe { *self.job.get() = job };
        self.epoch.fetch_add(1, Ordering::Release);
        for signal in self.workers.iter() {
            signal.notify();
        }
    }

    /// Waits until every worker is done with the current run (or startup).
    fn wait_idle(&self) {
        let idle = || (self.remaining.load(Ordering::Acquire) == 0).then_some(());
        if self.caller_parks {
            self.caller.wait_parked(idle);
        } else {
            self.caller.wait_until_unabortable(idle);
        }
    }

    /// A worker's end of a run (or of startup).
    fn finish_one(&self) {
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.caller.notify();
        }
    }

    /// Keeps the first panic of a run, aborts the team's waits and wakes every worker.
    fn record_panic(&self, payload: Box<dyn Any + Send>) {
        let later = {
            let mut first = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
            match *first {
                None => {
                    *first = Some(payload);
                    None
                }
                Some(_) => Some(payload),
            }
        };
        drop(later);
        self.abort.set(true);
        for handle in self.threads.iter().filter_map(OnceLock::get) {
            handle.unpark();
        }
    }

    /// Runs `job` on every worker and waits for all of them; re-raises the first panic.
    fn dispatch(&self, job: &(dyn Fn(usize) + Sync)) {
        // SAFETY: only the lifetime changes. The reference is dropped by every worker before
        // it decrements `remaining`, and `dispatch` returns (or unwinds) only after
        // `wait_idle` saw `remaining == 0`, so it never outlives the borrow.
        let job: Job = unsafe { std::mem::transmute::<&(dyn Fn(usize) + Sync), Job>(job) };
        self.start(Some(job));
        self.wait_idle();
        let payload = self
            .panic
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(payload) = payload {
            panic::resume_unwind(payload);
        }
    }
}

/// Aborts the process if the team's own bookkeeping unwinds (it never runs user code).
struct AbortOnPanic;

impl Drop for AbortOnPanic {
    fn drop(&mut self) {
        eprintln!("herald: a worker thread's bookkeeping panicked; aborting");
        std::process::abort();
    }
}

/// CPU indices at or above this are never passed to `core_affinity` (Linux `CPU_SETSIZE`: the
/// `libc` bit-set macros index out of bounds beyond it); pinning to them is a recorded failure.
const MAX_CPU: usize = 1024;

fn worker_main(shared: Arc<Shared>, rank: usize, cpu: Option<usize>, mates: u32) {
    let guard = AbortOnPanic;
    let pinned = cpu.is_some_and(|id| {
        id < MAX_CPU && core_affinity::set_for_current(core_affinity::CoreId { id })
    });
    shared.pinned[rank].store(pinned, Ordering::Relaxed);
    let _ = shared.threads[rank].set(thread::current());
    wait::set_thread_abort_flag(Arc::clone(&shared.abort));
    wait::set_thread_cpu_mates(if pinned { mates } else { 0 });
    wait::set_thread_cpu(cpu.filter(|_| pinned));
    let mut seen = 0;
    shared.finish_one();
    loop {
        seen = shared.workers[rank].wait_until_unabortable(|| {
            let epoch = shared.epoch.load(Ordering::Acquire);
            (epoch != seen).then_some(epoch)
        });
        // SAFETY: we saw the caller's `Release` bump of `epoch`, which follows its write of
        // `job`; it writes `job` again only after our `finish_one` below.
        let job = unsafe { *shared.job.get() };
        let Some(job) = job else { break };
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| job(rank))) {
            // Communicators whose ranks this thread drives learn of it first (their ranks on
            // other threads or teams stop waiting), then this team's waits are aborted.
            wait::job_panicked();
            shared.record_panic(payload);
        }
        shared.finish_one();
    }
    std::mem::forget(guard);
}

/// Hands disjoint elements of a slice to distinct ranks.
struct RankPtr<T>(*mut T);

// SAFETY: each rank touches only its own element (`add(rank)`), and `T: Send`.
unsafe impl<T: Send> Sync for RankPtr<T> {}

impl<T> RankPtr<T> {
    fn get(&self) -> *mut T {
        self.0
    }
}

/// The OS CPUs this process may run on, read once (before any pinning: after a thread is
/// pinned, `core_affinity::get_core_ids` reports only its one CPU).
fn available_cpus() -> &'static [usize] {
    static CPUS: OnceLock<Vec<usize>> = OnceLock::new();
    CPUS.get_or_init(|| {
        core_affinity::get_core_ids()
            .map(|ids| ids.into_iter().map(|c| c.id).collect())
            .unwrap_or_default()
    })
}

/// Configures a [`Team`]: rank count, rank-to-core map, pinning, stack size.
///
/// ```
/// let team = herald::Team::builder().ranks(3).pin(false).build()?;
/// assert_eq!(team.size(), 3);
/// assert!(team.placements().iter().all(|p| !p.is_pinned()));
/// # Ok::<(), herald::runtime::RuntimeError>(())
/// ```
#[derive(Clone, Debug)]
pub struct TeamBuilder {
    ranks: Option<usize>,
    cores: Option<Vec<usize>>,
    pin: bool,
    stack_size: Option<usize>,
}

impl TeamBuilder {
    /// The number of ranks (default: the length of [`cores`](Self::cores)).
    #[must_use]
    pub fn ranks(mut self, ranks: usize) -> Self {
        self.ranks = Some(ranks);
        self
    }

    /// Rank `r` is pinned to OS CPU `cores[r]` (e.g. a topology's rank→core map). Default:
    /// round-robin over [`Team::available_cpus`].
    #[must_use]
    pub fn cores(mut self, cores: Vec<usize>) -> Self {
        self.cores = Some(cores);
        self
    }

    /// Whether to pin workers at all (default `true`).
    #[must_use]
    pub fn pin(mut self, pin: bool) -> Self {
        self.pin = pin;
        self
    }

    /// The stack size of each worker thread in bytes (default: std's).
    #[must_use]
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Starts the workers, pins them and waits until all are ready.
    ///
    /// # Errors
    ///
    /// [`RuntimeError::NoRanks`] for zero ranks, [`RuntimeError::CoreMap`] if the rank count
    /// and the core map disagree, [`RuntimeError::Spawn`] if the OS refuses a thread (the
    /// workers already started are joined first).
    pub fn build(self) -> Result<Team, RuntimeError> {
        let size = self
            .ranks
            .or(self.cores.as_ref().map(Vec::len))
            .unwrap_or(0);
        if size == 0 {
            return Err(RuntimeError::NoRanks);
        }
        if let Some(cores) = self.cores.as_ref().filter(|c| c.len() != size) {
            return Err(RuntimeError::CoreMap {
                ranks: size,
                cores: cores.len(),
            });
        }
        let cpus = available_cpus();
        let cpu_of = |rank: usize| match &self.cores {
            _ if !self.pin => None,
            Some(cores) => Some(cores[rank]),
            None if cpus.is_empty() => None,
            None => Some(cpus[rank % cpus.len()]),
        };
        let mut team = Team {
            shared: Arc::new(Shared {
                size,
                epoch: CachePadded::new(AtomicU64::new(0)),
                remaining: CachePadded::new(AtomicUsize::new(size)),
                job: UnsafeCell::new(None),
                caller: CachePadded::new(Signal::new()),
                workers: (0..size).map(|_| CachePadded::new(Signal::new())).collect(),
                pinned: (0..size).map(|_| AtomicBool::new(false)).collect(),
                threads: (0..size).map(|_| OnceLock::new()).collect(),
                abort: Arc::new(AbortFlag::default()),
                panic: Mutex::new(None),
                caller_parks: size >= cpus.len().max(1),
            }),
            handles: Vec::with_capacity(size),
            placements: Vec::with_capacity(size),
        };
        // Workers per CPU: a worker that shares its CPU with others yields at once when it
        // waits, but for what only a thread on another CPU can do (`wait.rs`, "Thresholds").
        let mut per_cpu: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
        for c in (0..size).filter_map(cpu_of) {
            *per_cpu.entry(c).or_default() += 1;
        }
        for rank in 0..size {
            let mut builder = thread::Builder::new().name(format!("herald-{rank}"));
            if let Some(bytes) = self.stack_size {
                builder = builder.stack_size(bytes);
            }
            let (shared, cpu) = (Arc::clone(&team.shared), cpu_of(rank));
            let mates = cpu.and_then(|c| per_cpu.get(&c)).map_or(0, |&k| k - 1);
            let mates = u32::try_from(mates).unwrap_or(u32::MAX);
            match builder.spawn(move || worker_main(shared, rank, cpu, mates)) {
                Ok(handle) => team.handles.push(handle),
                Err(source) => return Err(RuntimeError::Spawn { rank, source }),
            }
        }
        team.shared.wait_idle();
        team.placements = (0..size)
            .map(|rank| Placement {
                cpu: cpu_of(rank),
                pinned: team.shared.pinned[rank].load(Ordering::Relaxed),
            })
            .collect();
        Ok(team)
    }
}

/// Worker threads created once, each pinned to a core, running closures again and again.
///
/// Every rank `0 .. size` is a worker thread; the caller of [`run`](Self::run) waits (spin →
/// yield → park) and never runs a rank itself, so its affinity is never changed. Dropping the
/// team joins every worker.
///
/// # Examples
///
/// A star broadcast: rank 0 sends one line to every other rank.
///
/// ```
/// use herald::{Team, runtime::{channel, Line}};
///
/// let mut team = Team::new(4)?;
/// let (txs, rxs): (Vec<_>, Vec<_>) = (1..4).map(|_| channel(2)).unzip();
/// // Each rank owns its channel ends (sending and receiving take `&mut`).
/// let mut ends: Vec<(Vec<_>, Option<_>)> = vec![(txs, None)];
/// ends.extend(rxs.into_iter().map(|rx| (Vec::new(), Some(rx))));
/// let got = team.run_with(&mut ends, |ctx, (txs, rx)| match rx {
///     None => {
///         txs.iter_mut().for_each(|tx| tx.send(Line::from_bytes(b"hello")).unwrap());
///         *b"hello"
///     }
///     Some(rx) => rx.recv().unwrap().payload()[..5].try_into().unwrap(),
/// });
/// assert!(got.iter().all(|bytes| bytes == b"hello"));
/// # Ok::<(), herald::runtime::RuntimeError>(())
/// ```
pub struct Team {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
    placements: Vec<Placement>,
}

impl Team {
    /// A team of `ranks` workers, pinned round-robin over [`Team::available_cpus`].
    ///
    /// # Errors
    ///
    /// As [`TeamBuilder::build`].
    ///
    /// ```
    /// assert!(matches!(herald::Team::new(0), Err(herald::runtime::RuntimeError::NoRanks)));
    /// ```
    pub fn new(ranks: usize) -> Result<Self, RuntimeError> {
        Self::builder().ranks(ranks).build()
    }

    /// A team with rank `r` pinned to OS CPU `cores[r]` (e.g. a topology's rank→core map).
    ///
    /// # Errors
    ///
    /// As [`TeamBuilder::build`].
    ///
    /// ```
    /// let cpu = herald::Team::available_cpus()[0];
    /// let team = herald::Team::with_cores(vec![cpu, cpu])?;
    /// assert_eq!(team.placements()[1].cpu(), Some(cpu));
    /// # Ok::<(), herald::runtime::RuntimeError>(())
    /// ```
    pub fn with_cores(cores: Vec<usize>) -> Result<Self, RuntimeError> {
        Self::builder().cores(cores).build()
    }

    /// A builder with defaults: no ranks yet, pinning on, std's stack size.
    #[must_use]
    pub fn builder() -> TeamBuilder {
        TeamBuilder {
            ranks: None,
            cores: None,
            pin: true,
            stack_size: None,
        }
    }

    /// The OS CPU indices this process may run on, read once per process before any team
    /// pins a thread.
    #[must_use]
    pub fn available_cpus() -> &'static [usize] {
        available_cpus()
    }

    /// The number of ranks.
    #[must_use]
    pub fn size(&self) -> usize {
        self.shared.size
    }

    /// Where each rank runs (pinning failures are recorded here, not raised).
    #[must_use]
    pub fn placements(&self) -> &[Placement] {
        &self.placements
    }

    /// Runs `f` once on every rank and returns the results by rank.
    ///
    /// # Panics
    ///
    /// If a rank panics, `run` waits for every rank to finish (waits in channels on the
    /// team's threads return `Aborted` errors) and then re-raises the first panic.
    ///
    /// ```
    /// let mut team = herald::Team::new(3)?;
    /// assert_eq!(team.run(|ctx| ctx.rank() * 10), [0, 10, 20]);
    /// # Ok::<(), herald::runtime::RuntimeError>(())
    /// ```
    pub fn run<R: Send>(&mut self, f: impl Fn(&Ctx) -> R + Sync) -> Vec<R> {
        let mut units = vec![(); self.size()];
        self.run_with(&mut units, |ctx, ()| f(ctx))
    }

    /// Runs `f` once on every rank `r` with `&mut states[r]` (e.g. the rank's channel ends,
    /// which are `Send` but not `Sync`), and returns the results by rank.
    ///
    /// # Panics
    ///
    /// If `states.len() != self.size()`, and as [`run`](Self::run) if a rank panics.
    pub fn run_with<S: Send, R: Send>(
        &mut self,
        states: &mut [S],
        f: impl Fn(&Ctx, &mut S) -> R + Sync,
    ) -> Vec<R> {
        let size = self.size();
        assert_eq!(states.len(), size, "run_with needs one state per rank");
        let mut results: Vec<Option<R>> = std::iter::repeat_with(|| None).take(size).collect();
        let (states, slots) = (RankPtr(states.as_mut_ptr()), RankPtr(results.as_mut_ptr()));
        let placements = &self.placements;
        let job = |rank: usize| {
            let ctx = Ctx {
                rank,
                size,
                placement: placements[rank],
            };
            // SAFETY: `rank < size == states.len()`, each rank runs once per dispatch, and
            // `states` stays mutably borrowed until `dispatch` returns: a unique reference.
            let state = unsafe { &mut *states.get().add(rank) };
            let result = f(&ctx, state);
            // SAFETY: as for `states`: `results` has `size` elements and only this rank
            // writes element `rank`, before `dispatch` returns.
            unsafe { *slots.get().add(rank) = Some(result) };
        };
        self.shared.dispatch(&job);
        results
            .into_iter()
            .map(|r| r.expect("every rank returned"))
            .collect()
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        // Every worker is idle or starting (runs and `build` wait for `remaining == 0`).
        self.shared.start(None);
        for handle in self.handles.drain(..) {
            let _ = handle.join();
        }
    }
}

impl fmt::Debug for Team {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Team")
            .field("size", &self.size())
            .field("placements", &self.placements)
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(herald_loom)))]
mod tests {
    use super::Team;

    /// Each pinned worker knows how many other workers of its team share its CPU (its waits
    /// depend on it: `wait.rs`, "Thresholds"); a worker that could not be pinned has none.
    #[test]
    fn workers_know_their_cpu_mates() {
        let cpus = Team::available_cpus();
        let (a, b) = (cpus[0], *cpus.last().unwrap());
        for layout in [vec![a, b, a, b], vec![a, a, a, b], vec![a]] {
            let mut team = Team::builder().cores(layout.clone()).build().unwrap();
            let mates = team.run(|_| crate::runtime::wait::thread_cpu_mates());
            for (r, p) in team.placements().iter().enumerate() {
                let same = layout.iter().filter(|&&c| c == layout[r]).count() as u32;
                let want = if p.is_pinned() { same - 1 } else { 0 };
                assert_eq!(mates[r], want, "layout {layout:?}, rank {r}");
            }
        }
    }
}
