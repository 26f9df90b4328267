//! Threads, channels, programs and collectives: the only module with `unsafe`.
//!
//! 1. `line` — the 64-byte message [`Line`] (56 payload bytes + the ring's sequence word).
//! 2. `channel` — the SPSC ring of lines ([`channel`], [`Sender`], [`Receiver`]); loom-checked.
//! 3. `wait` — the one waiting primitive, [`Signal`]: spin → yield → park, no lost wake-ups.
//! 4. `team` — pinned worker threads running borrowed closures ([`Team`], [`Ctx`]).
//! 5. `program` — schedules compiled into per-rank programs ([`Program`]) and executed on a
//!    team over channels on the schedule's edges only ([`Network`]).
//! 6. `collective` — SPMD collectives over per-pair rings ([`Comm`], [`CommRank`]).
//! 7. `sync` — the std/loom shim (`cfg(herald_loom)`).
//! 8. `fault` — fault injection for the failure-path tests (hidden, not a stable API).
//! 9. `hint` — prefetch hints for lines another CPU holds.
//! 10. `baton` — a value handed round a ring of ends without a lock ([`baton`], [`Baton`]):
//!     the lock-free baseline of `herald bench`'s cross-core copy.

mod baton;
mod channel;
mod collective;
mod exec;
#[doc(hidden)]
pub mod fault;
mod hint;
mod line;
mod program;
mod sync;
mod team;
mod wait;

pub use baton::{baton, Baton, Held};
pub use channel::{
    channel, Receiver, RecvError, SendError, Sender, TryRecvError, TrySendError, TrySendWithError,
    MAX_BATCH,
};
pub use collective::{copy_plain, copy_plain_to, copy_streaming, copy_streaming_words};
pub use collective::{posted_lines, shared_posted_lines, POSTED_MAX_BYTES};
pub use collective::{
    CallInfo, CollectiveError, CollectiveKind, Comm, CommOptions, CommRank, DefaultSchedule,
    Planned, PlannedLoadError, PoisonCause, TimedPosting, MAX_COMM_RANKS, SHARED_POSTED_LIMIT,
};
pub(crate) use collective::{StampLine, STREAMING};
pub(crate) use exec::SLIP;
pub use line::Line;
pub use program::{
    Blocking, Iteration, Network, Program, ProgramError, RankProgram, RankTiming, Spread,
};
pub use team::{Ctx, Placement, RuntimeError, Team, TeamBuilder};
pub(crate) use wait::spin_out;
pub use wait::{Aborted, Signal};
