//! In-process collectives, SPMD style: a [`Comm`] is built once for a team size; each rank
//! gets a [`CommRank`] endpoint (hand them out with [`Team::run_with`](crate::Team::run_with),
//! or move one into each thread) whose methods are the collectives: broadcast, reduce,
//! allreduce, scan, allgather, barrier.
//!
//! # Files
//!
//! 1. `comm` — the communicator: options, one SPSC ring per directed pair of ranks (made the
//!    first time the pair talks, so only the edges the collectives use exist), cached default
//!    programs.
//! 2. `call` — call numbers and headers, the state each rank publishes for its peers, poison,
//!    mismatch and departure detection, and the guard that poisons on every abnormal end.
//! 3. `rank` — the endpoint: broadcasts over compiled programs (the shared executor,
//!    `runtime/exec.rs`, forwarding line by line) and the point-to-point line streams.
//! 4. `direct` — single copy for large broadcasts: its framing, its `unsafe` copy, its guards
//!    and its soundness argument, all in one file.
//! 5. `combine` — reduce, allreduce, scan, allgather and barrier on the rank-ordered tree.
//! 6. `scatter` — single copy for large slice allreduces: a shared-memory reduce-scatter and
//!    allgather on the guards of `direct`, with its soundness argument.
//! 7. `small` — small allreduces in shared memory: every rank deposits its
//!    value in its own slot and, once every slot holds the call's value, combines them all in
//!    rank order.
//! 8. `error` — [`CollectiveError`] and [`PoisonCause`].
//!
//! # Messages
//!
//! A message is a byte stream `header ‖ payload` cut into 56-byte lines: the first line holds
//! the 8-byte header and 48 payload bytes, the next lines 56 each. The header names the call
//! (collective kind, call number mod 256, root, payload length mod 2³²), so a receiver detects
//! a mismatched call when the first line arrives. A rank that waits also compares its peers'
//! published calls at the same full call number (`call.rs`), so mismatches that would deadlock
//! are reported, and never a false one however far a root runs ahead.
//!
//! # Failure
//!
//! Whatever a rank does — returns an error, panics inside or outside a call, drops its endpoint
//! early, arrives late with another call — the others neither hang nor report success for a
//! call that did not happen, and no buffer is read after it is freed. Every abnormal end of a
//! call poisons the communicator; every wait sees the poison on every wake-up; single-copy
//! lenders wait for their readers on every way out (`direct.rs`). The poison stays until
//! [`Comm::ranks`] rebuilds the endpoints.
//!
//! # Combining collectives
//!
//! They combine in rank order, so any associative `op` works, commutative or not: the
//! reduction tree is the `R`-nomial tree rooted at rank 0 in which each subtree is a contiguous
//! range of ranks, and a rank combines its own value with its children's partials left to
//! right. Reduce to another root adds one hop; allreduce is reduce to 0 plus broadcast (small
//! values: every rank folds every rank's value from shared memory); scan
//! adds a down-sweep of exclusive prefixes; allgather gathers contiguous ranges up the same tree
//! and broadcasts the result.
//!
//! # Waiting
//!
//! One [`Signal`](crate::Signal) per rank: spin, yield, park. A sender that finds the ring full
//! notifies the receiver and waits; a receiver that finds it empty notifies the sender and
//! waits; both notify after every batch of lines they move.

mod call;
mod choice;
mod combine;
mod comm;
mod direct;
mod error;
mod held;
mod posted;
mod rank;
mod scatter;
mod small;
mod words;

pub use call::{CallInfo, CollectiveKind};
pub use comm::{
    Comm, CommOptions, DefaultSchedule, Planned, TimedPosting, MAX_COMM_RANKS, SHARED_POSTED_LIMIT,
};
pub use error::{CollectiveError, PlannedLoadError, PoisonCause};
pub use posted::{posted_lines, shared_posted_lines, POSTED_MAX_BYTES};
pub use rank::CommRank;

pub(crate) use choice::StampLine;
pub use direct::{copy_plain, copy_plain_to, copy_streaming, copy_streaming_words};
pub(crate) use direct::{DirectFraming, STREAMING};
pub(crate) use held::HeldCalls;
