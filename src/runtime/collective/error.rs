//! What a collective call can report.

use super::call::CallInfo;
use crate::model::ProfileError;
use crate::plan::PlanError;
use crate::runtime::program::ProgramError;
use crate::runtime::team::RuntimeError;
use crate::runtime::wait::Aborted;

/// Errors of building a [`Comm`](crate::Comm) or of a collective call.
///
/// Every call that ends with an error (whatever the error) poisons its communicator first: all
/// ranks are woken, and every later call on any rank returns [`CollectiveError::Poisoned`]
/// until the endpoints are rebuilt with [`Comm::ranks`](crate::Comm::ranks).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
// A one-byte tag first: `Result<(), CollectiveError>`, returned by every call, is then told
// apart by one byte that the callee stores and the caller loads alike. (With the compiler's own
// layout the callee stored 8 bytes and the caller compared 16: a load that no store forwards,
// which waited for every earlier store, the message's included, to reach the cache.)
#[repr(u8)]
pub enum CollectiveError {
    /// A communicator needs at least one rank.
    #[error("a communicator needs at least one rank")]
    NoRanks,
    /// [`CommOptions::cpus`](crate::CommOptions::cpus) is `Some(0)`.
    #[error("the ranks run on no CPUs (CommOptions::cpus is Some(0))")]
    NoCpus,
    /// More ranks than the OS allows threads (or than a header can name).
    #[error("{ranks} ranks, but at most {max} are possible here")]
    TooManyRanks {
        /// Ranks asked for.
        ranks: usize,
        /// The limit (the OS's thread limit, or [`MAX_COMM_RANKS`](crate::runtime::MAX_COMM_RANKS)).
        max: usize,
    },
    /// A root outside `0 .. size`.
    #[error("root {root} is not a rank of a {size}-rank communicator")]
    Root {
        /// The root asked for.
        root: usize,
        /// The communicator's size.
        size: usize,
    },
    /// Ranks made different calls (collective, root or size), seen by `rank` from `peer`.
    #[error("rank {rank} expected {expected:?} but rank {peer} made {got:?}")]
    Mismatch {
        /// The rank that detected it.
        rank: usize,
        /// The peer whose call differs.
        peer: usize,
        /// This rank's call.
        expected: CallInfo,
        /// The peer's call.
        got: CallInfo,
    },
    /// An earlier call ended abnormally on rank `rank` (for `cause`); the communicator is
    /// unusable until [`Comm::ranks`](crate::Comm::ranks) is called again.
    #[error("the communicator was poisoned by rank {rank}: {cause}")]
    Poisoned {
        /// The rank whose call ended abnormally first.
        rank: usize,
        /// How it ended.
        cause: PoisonCause,
    },
    /// `peer`'s endpoint was dropped after `calls` calls, before it took part in the call
    /// `rank` is waiting in.
    #[error("rank {rank} waits for rank {peer}, whose endpoint was dropped after {calls} calls")]
    Departed {
        /// The waiting rank.
        rank: usize,
        /// The rank that left.
        peer: usize,
        /// Calls it had made.
        calls: u64,
    },
    /// A program for another team size, or one this executor cannot stream.
    #[error("program not executable here: {0}")]
    Program(#[from] ProgramError),
    /// Building the default schedule failed.
    #[error("cannot build the default schedule: {0}")]
    Schedule(String),
    /// The planner could not plan the default schedule under the communicator's profile.
    #[error("cannot plan the default schedule: {0}")]
    Plan(#[from] PlanError),
    /// A panic on another rank of the team running this thread aborted the team.
    #[error("the team was aborted by a panic in another worker")]
    Aborted,
    /// Setting up the team failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

impl From<Aborted> for CollectiveError {
    fn from(_: Aborted) -> CollectiveError {
        CollectiveError::Aborted
    }
}

/// How the call that poisoned a communicator ended.
///
/// ```
/// assert_eq!(herald::runtime::PoisonCause::Panic.to_string(), "a panic");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum PoisonCause {
    /// Ranks made different calls.
    #[error("mismatched calls")]
    Mismatch,
    /// The rank's thread panicked (inside a call, or outside one on a team worker, or while
    /// holding its endpoint).
    #[error("a panic")]
    Panic,
    /// Its team was aborted by a panic on another rank.
    #[error("its team was aborted")]
    Aborted,
    /// A peer's endpoint was dropped before the peer took part in a call.
    #[error("a departed rank")]
    Departed,
    /// The call returned another error (a bad root or program, a failed schedule, …).
    #[error("an error")]
    Error,
}

impl CollectiveError {
    /// The poison cause a call ending with this error records.
    pub(crate) fn cause(&self) -> PoisonCause {
        match self {
            CollectiveError::Mismatch { .. } => PoisonCause::Mismatch,
            CollectiveError::Aborted => PoisonCause::Aborted,
            CollectiveError::Departed { .. } => PoisonCause::Departed,
            CollectiveError::Poisoned { cause, .. } => *cause,
            _ => PoisonCause::Error,
        }
    }
}

/// Errors of [`Planned::load`](crate::runtime::Planned::load).
///
/// ```
/// match herald::runtime::Planned::load() {
///     Ok(Some(_)) => println!("planning with this machine's profile"),
///     Ok(None) => println!("no profile: the binomial tree"),
///     Err(e) => eprintln!("the profile is unusable: {e}"),
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlannedLoadError {
    /// The profile could not be read, parsed, or is another host's.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// This machine's topology could not be read.
    #[error(transparent)]
    Topology(#[from] crate::topology::TopologyError),
}
