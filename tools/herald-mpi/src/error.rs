//! herald-mpi's error type.

use crate::p2p::P2pError;

/// What can go wrong in herald-mpi.
///
/// [`Error::is_usage`] separates bad input (the command line, the launcher, arguments that
/// differ between ranks: exit code 2) from failures of a run (exit code 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Bad input.
    #[error("{0}")]
    Usage(String),
    /// The process was started by a launcher that does not match the linked MPI library, or
    /// by none, or with another number of ranks than asked for.
    #[error("{0}")]
    Launcher(String),
    /// Ranks were started with different arguments (each rank names what differs).
    #[error("ranks disagree: {0}")]
    Disagree(String),
    /// A message failed: a peer died, stopped answering, or sent another size.
    #[error(transparent)]
    P2p(#[from] P2pError),
    /// A rank received wrong bytes.
    #[error("verification failed: {0}")]
    Verify(String),
    /// herald refused something (a schedule, a plan, a profile, a topology).
    #[error("{0}")]
    Herald(String),
}

impl Error {
    /// Whether the error is bad input (exit code 2) rather than a failed run (exit code 1).
    ///
    /// ```
    /// use herald_mpi::Error;
    /// assert!(Error::Usage("--bytes must be at least 1".into()).is_usage());
    /// assert!(!Error::Verify("rank 1 differs at byte 7".into()).is_usage());
    /// ```
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Error::Usage(_) | Error::Launcher(_) | Error::Disagree(_) | Error::Herald(_)
        )
    }

    /// One of herald's typed errors (schedule, plan, profile, topology), as [`Error::Herald`].
    pub fn herald(e: impl std::fmt::Display) -> Error {
        Error::Herald(e.to_string())
    }
}
