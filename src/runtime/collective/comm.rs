//! The communicator: its options, its channels (one ring per directed pair, made on first
//! use), its shared [`Core`] and its cached default programs.

use super::call::Core;
use super::combine::OrderedTree;
use super::error::CollectiveError;
use super::rank::CommRank;
use crate::model::{Hierarchy, Model, Postal, Profile};
use crate::plan::plan_runtime;
use crate::runtime::channel::{channel, Receiver, Sender};
use crate::runtime::line::Line;
use crate::runtime::program::Program;
use crate::runtime::wait::PanicWatch;
use crate::schedule::{generate, Algorithm, Request, Schedule};
use crate::time::Ratio;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The largest rank count a header can name (the root field has 20 bits).
pub const MAX_COMM_RANKS: usize = 1 << 20;

/// Default programs kept per communicator (and per rank) before the cache is emptied.
pub(crate) const MAX_CACHED_PROGRAMS: usize = 64;

/// Which broadcast schedule a [`Comm`] uses when the caller names none.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DefaultSchedule {
    /// A fixed algorithm for every root and size (its tree shape; one block, forwarded line
    /// by line).
    Fixed(Algorithm),
    /// The planner's choice ([`plan_runtime`](crate::plan::plan_runtime)) under a calibrated
    /// profile, per root and payload size class (the next power of two).
    Planned(Planned),
}

/// A calibrated profile and the machine it describes, for [`DefaultSchedule::Planned`].
///
/// # Examples
///
/// ```
/// # use herald::*;
/// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
/// let profile = Profile::from_json_forced(&text)?;
/// let machine = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
/// let options = CommOptions {
///     schedule: DefaultSchedule::Planned(Planned::new(profile, machine)),
///     ..CommOptions::default()
/// };
/// let (mut team, mut comm) = (Team::new(6)?, Comm::with_options(6, options)?);
/// let mut ranks = comm.ranks();
/// let got = team.run_with(&mut ranks, |_, c| {
///     let mut buf = vec![c.rank() as u8; 4096];
///     c.broadcast(5, &mut buf).unwrap();
///     buf.iter().all(|&b| b == 5)
/// });
/// assert_eq!(got, [true; 6]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Planned(Arc<(Profile, Hierarchy)>);

impl Planned {
    /// Plans with `profile`'s costs on `machine` (ranks in compact order).
    #[must_use]
    pub fn new(profile: Profile, machine: Hierarchy) -> Planned {
        Planned(Arc::new((profile, machine)))
    }

    /// This machine's profile, if there is one: the file named by `HERALD_PROFILE` (`off`:
    /// none), else [`default_profile_path`](crate::model::default_profile_path), when it is a profile
    /// of this host and schema; with this machine's topology. Read once per process.
    #[must_use]
    pub fn detect() -> Option<Planned> {
        static FOUND: OnceLock<Option<Planned>> = OnceLock::new();
        FOUND
            .get_or_init(|| {
                let path = match std::env::var_os("HERALD_PROFILE") {
                    Some(v) if v == "off" => return None,
                    Some(v) => std::path::PathBuf::from(v),
                    None => crate::model::default_profile_path()?,
                };
                let profile = crate::model::load_profile(&path, false).ok()?;
                let machine = crate::topology::TopologySource::Machine.load().ok()?;
                Some(Planned::new(profile, machine))
            })
            .clone()
    }

    /// The profile.
    #[must_use]
    pub fn profile(&self) -> &Profile {
        &self.0 .0
    }

    /// The machine.
    #[must_use]
    pub fn machine(&self) -> &Hierarchy {
        &self.0 .1
    }
}

impl PartialEq for Planned {
    fn eq(&self, other: &Planned) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Planned {}

/// Tuning of a [`Comm`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommOptions {
    /// Lines per ring (at least 4).
    pub capacity: usize,
    /// The broadcast schedule of [`CommRank::broadcast`] and of the broadcast phases of
    /// allreduce, allgather and barrier, and the shape of the reduction tree. Default: the
    /// planner's choice when this machine has a profile ([`Planned::detect`]), else binomial.
    pub schedule: DefaultSchedule,
    /// Broadcasts of at least this many bytes move by single copy: the rings carry one
    /// descriptor line per chunk and each receiver copies the chunk straight from its
    /// sender's buffer (`usize::MAX`: never). Default 64 KiB, where single copy overtook the
    /// line stream in `herald bench bcast` on the development machine.
    pub direct_min_bytes: usize,
    /// The chunk size of single-copy broadcasts (the unit a rank copies before forwarding).
    pub direct_chunk_bytes: usize,
}

impl Default for CommOptions {
    fn default() -> CommOptions {
        CommOptions {
            capacity: 256,
            schedule: Planned::detect().map_or(
                DefaultSchedule::Fixed(Algorithm::Binomial),
                DefaultSchedule::Planned,
            ),
            direct_min_bytes: 64 << 10,
            direct_chunk_bytes: 64 << 10,
        }
    }
}

/// Both ends of one directed pair's ring, until the endpoints take them.
type Pair = (Option<Sender>, Option<Receiver>);

/// A communicator for a fixed number of ranks: channels, signals and cached programs.
///
/// Its endpoints ([`Comm::ranks`]) borrow it; a panic or an error in any call poisons it for
/// every rank until `ranks` is called again (see [`CollectiveError`]).
///
/// # Examples
///
/// ```
/// use herald::{Comm, Team};
/// let mut team = Team::new(4)?;
/// let mut comm = Comm::new(4)?;
/// let mut ranks = comm.ranks();
/// let sums = team.run_with(&mut ranks, |_, c| {
///     let mut data = if c.rank() == 2 { *b"hello" } else { [0; 5] };
///     c.broadcast(2, &mut data).unwrap();
///     assert_eq!(&data, b"hello");
///     c.allreduce(c.rank() as u64, |a, b| a + b).unwrap()
/// });
/// assert_eq!(sums, [6, 6, 6, 6]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Comm {
    size: usize,
    options: CommOptions,
    /// Signals, published calls, poison: shared with the endpoints (and, weakly, with the
    /// team workers that drive them).
    core: Arc<Core>,
    /// Directed pair `(from, to)` → ends not yet taken.
    pairs: Mutex<HashMap<(u32, u32), Pair>>,
    /// Default broadcast programs by (root, size key).
    programs: Mutex<HashMap<(u32, u64), Arc<Program>>>,
    /// The radix of the combining collectives' tree, chosen on first use.
    radix: OnceLock<usize>,
}

impl Comm {
    /// A communicator for `size` ranks with default options.
    ///
    /// # Errors
    ///
    /// [`CollectiveError::NoRanks`], [`CollectiveError::TooManyRanks`].
    ///
    /// ```
    /// assert!(matches!(herald::Comm::new(0), Err(herald::runtime::CollectiveError::NoRanks)));
    /// ```
    pub fn new(size: usize) -> Result<Comm, CollectiveError> {
        Comm::with_options(size, CommOptions::default())
    }

    /// A communicator for `size` ranks.
    ///
    /// # Errors
    ///
    /// As [`Comm::new`].
    pub fn with_options(size: usize, options: CommOptions) -> Result<Comm, CollectiveError> {
        if size == 0 {
            return Err(CollectiveError::NoRanks);
        }
        let max = max_ranks();
        if size > max {
            return Err(CollectiveError::TooManyRanks { ranks: size, max });
        }
        let options = CommOptions {
            capacity: options.capacity.max(4),
            direct_chunk_bytes: options.direct_chunk_bytes.max(Line::PAYLOAD),
            ..options
        };
        Ok(Comm {
            size,
            options,
            core: Arc::new(Core::new(size)),
            pairs: Mutex::new(HashMap::new()),
            programs: Mutex::new(HashMap::new()),
            radix: OnceLock::new(),
        })
    }

    /// The number of ranks.
    #[must_use]
    pub fn size(&self) -> usize {
        self.size
    }

    /// The options in force.
    #[must_use]
    pub fn options(&self) -> &CommOptions {
        &self.options
    }

    /// Whether a call ended abnormally since the endpoints were built (every later call then
    /// fails until [`ranks`](Self::ranks) is called again).
    #[must_use]
    pub fn is_poisoned(&self) -> bool {
        self.core.is_poisoned()
    }

    /// One endpoint per rank, in rank order: fresh channels and a healthy communicator (this
    /// is what clears a poison).
    pub fn ranks(&mut self) -> Vec<CommRank<'_>> {
        self.pairs
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.core.reset();
        let comm: &Comm = self;
        (0..comm.size)
            .map(|rank| CommRank::new(comm, rank))
            .collect()
    }

    /// The shared state.
    pub(crate) fn core(&self) -> &Core {
        &self.core
    }

    /// The shared state as a panic watcher for team workers.
    pub(crate) fn watcher(&self) -> Arc<dyn PanicWatch> {
        Arc::clone(&self.core) as Arc<dyn PanicWatch>
    }

    /// The sending end of the ring `from → to` (made on first use by either end).
    pub(crate) fn take_sender(&self, from: usize, to: usize) -> Sender {
        let mut pairs = self.pairs.lock().unwrap_or_else(PoisonError::into_inner);
        let pair = self.pair(&mut pairs, from, to);
        pair.0
            .take()
            .unwrap_or_else(|| channel(self.options.capacity).0)
    }

    /// The receiving end of the ring `from → to`.
    pub(crate) fn take_receiver(&self, from: usize, to: usize) -> Receiver {
        let mut pairs = self.pairs.lock().unwrap_or_else(PoisonError::into_inner);
        let pair = self.pair(&mut pairs, from, to);
        pair.1
            .take()
            .unwrap_or_else(|| channel(self.options.capacity).1)
    }

    fn pair<'m>(
        &self,
        pairs: &'m mut HashMap<(u32, u32), Pair>,
        from: usize,
        to: usize,
    ) -> &'m mut Pair {
        pairs.entry((from as u32, to as u32)).or_insert_with(|| {
            let (tx, rx) = channel(self.options.capacity);
            (Some(tx), Some(rx))
        })
    }

    /// The default broadcast program for `root` and a `bytes`-byte payload, compiled once and
    /// shared by every rank.
    pub(crate) fn default_program(
        &self,
        root: usize,
        bytes: usize,
    ) -> Result<Arc<Program>, CollectiveError> {
        let key = self.program_key(root, bytes);
        let mut programs = self.programs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = programs.get(&key) {
            return Ok(Arc::clone(p));
        }
        let schedule = match &self.options.schedule {
            DefaultSchedule::Fixed(algorithm) => self.fixed_schedule(*algorithm, root)?,
            DefaultSchedule::Planned(p) => {
                let (n, class) = (self.size as u32, key.1);
                match plan_runtime(p.profile(), p.machine(), n, class, root as u32) {
                    Ok((schedule, _)) => schedule,
                    // A profile that cannot describe this team: the binomial tree.
                    Err(_) => self.fixed_schedule(Algorithm::Binomial, root)?,
                }
            }
        };
        let program = Arc::new(Program::compile(&schedule)?);
        if programs.len() >= MAX_CACHED_PROGRAMS {
            programs.clear();
        }
        programs.insert(key, Arc::clone(&program));
        Ok(program)
    }

    /// A fixed algorithm's single-block schedule for `root`.
    fn fixed_schedule(
        &self,
        algorithm: Algorithm,
        root: usize,
    ) -> Result<Schedule, CollectiveError> {
        let err = |e: &dyn std::fmt::Display| CollectiveError::Schedule(e.to_string());
        // The tree's shape does not depend on λ for the fixed algorithms the runtime uses;
        // λ = 2 is only what `generate` needs to time it.
        let model = Model::from(Postal::new(Ratio::integer(2)).map_err(|e| err(&e))?);
        let req = Request::broadcast(algorithm, self.size as u32, 1, root as u32);
        generate(&req, &model).map_err(|e| err(&e))
    }

    /// The cache key of the default program: the root, and the size class where it matters.
    pub(crate) fn program_key(&self, root: usize, bytes: usize) -> (u32, u64) {
        match &self.options.schedule {
            DefaultSchedule::Fixed(_) => (root as u32, 0),
            DefaultSchedule::Planned(_) => (root as u32, bytes.max(1).next_power_of_two() as u64),
        }
    }

    /// The reduction tree: the radix of the default broadcast's tree family (star: flat,
    /// k-nomial: its radix, otherwise binomial).
    pub(crate) fn ordered_tree(&self) -> OrderedTree {
        let radix = *self.radix.get_or_init(|| {
            let family = |a: Algorithm| match a {
                Algorithm::Star => self.size,
                Algorithm::Knomial { radix } => radix as usize,
                Algorithm::Dtree { d } if d as usize + 1 >= self.size => self.size,
                _ => 2,
            };
            match &self.options.schedule {
                DefaultSchedule::Fixed(a) => family(*a),
                // The planner's tree for a small payload from rank 0 (the reduction is its
                // time reversal).
                DefaultSchedule::Planned(p) => {
                    plan_runtime(p.profile(), p.machine(), self.size as u32, 8, 0)
                        .map_or(2, |(_, c)| family(c.algorithm))
                }
            }
        });
        OrderedTree::new(self.size, radix)
    }
}

/// The most ranks this process can have: the OS thread limit, capped at [`MAX_COMM_RANKS`].
fn max_ranks() -> usize {
    std::fs::read_to_string("/proc/sys/kernel/threads-max")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .map_or(MAX_COMM_RANKS, |m| m.min(MAX_COMM_RANKS))
}
