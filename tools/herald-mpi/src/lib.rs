//! # herald-mpi — herald's schedules, calibration and planner over MPI
//!
//! herald builds broadcast schedules from the theory and runs them between the cores of one
//! machine. Programs that outgrow a machine run under MPI, on the MPI library their cluster
//! already has; herald-mpi brings herald there, on MPI point-to-point (no transport of its own):
//!
//! * [`BroadcastPlan`] runs any herald broadcast schedule (one or many blocks, one or many
//!   senders per rank) with nonblocking sends and receives in the schedule's order;
//!   [`CombinePlan`] runs herald's reduce and allreduce schedules.
//! * [`calibrate`](mod@calibrate) measures `L, o_s, o_r, g, G` and λ between ranks with herald's
//!   method (Netgauge's PRTT) at every level where ranks meet — between hosts, between
//!   sockets, inside a socket — into herald's profile schema, which `herald plan` reads too.
//! * [`Cluster`] is the job as one hierarchy (hosts, then each host's hwloc levels), so
//!   herald's hierarchical model and planner choose the schedule.
//! * [`hier`] runs a broadcast hierarchically: herald's in-process runtime (threads of one
//!   process, [`herald::Comm`]) inside a node, MPI among node leaders, the split and every
//!   stage's tree chosen by herald's planner.
//! * [`bench`](mod@bench) measures herald against the library's `MPI_Bcast` and `MPI_Allreduce` with
//!   identical loops, alternating.
//!
//! The binary `herald-mpi` (`run`, `calibrate`, `bench`, `selftest`, `library`, `table`) is the
//! way in; see `docs/mpi.md`.
//!
//! Building needs an MPI library: `MPICC=mpicc.openmpi` (Open MPI) or `MPICC=mpicc.mpich`
//! (MPICH), one target directory per library (the `mpi-sys` build does not notice a change of
//! `MPICC`). A binary must be started by its own library's `mpirun`.
//!
//! ```no_run
//! use herald::{generate, Algorithm, Model, Request, model::OnePort};
//! use herald_mpi::{BroadcastPlan, InitOptions, World};
//!
//! let world = World::init(InitOptions::default())?; // under mpirun -np 4
//! let n = world.size() as u32;
//! let s = generate(&Request::broadcast(Algorithm::Optimal, n, 4, 0), &Model::from(OnePort))?;
//! let plan = BroadcastPlan::new(&s)?;
//! let chan = world.channel()?;
//! let mut buf = if world.rank() == 0 { vec![7u8; 1 << 20] } else { vec![0; 1 << 20] };
//! plan.run(&chan, &mut buf)?;
//! assert!(buf.iter().all(|&b| b == 7));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, missing_debug_implementations)]

pub mod adapt;
pub mod allreduce;
pub mod bench;
pub mod calibrate;
mod cluster;
mod error;
mod exec;
mod halving;
pub mod hier;
mod p2p;
pub mod post;
mod watch;
mod world;

pub use cluster::Cluster;
pub use error::Error;
pub use exec::{
    block_ranges, BroadcastPlan, CombineOp, CombinePlan, CombineScratch, RankPart, RingAllreduce,
    MAX_BLOCKS,
};
pub use halving::{HalvingAllreduce, MessageGroup};
pub use p2p::{abort_world, Channel, P2pError, P2pErrorKind, Pieces, RecvReq, SendReq};
pub use post::Post;
pub use watch::{bounded, SLACK};
pub use world::{library_line, InitOptions, RankPlace, World};

/// A payload that differs per iteration and per byte (xorshift), for verifying every byte.
///
/// ```
/// let (mut a, mut b) = (vec![0u8; 100], vec![0u8; 100]);
/// herald_mpi::payload(&mut a, 7);
/// herald_mpi::payload(&mut b, 7);
/// assert_eq!(a, b);
/// herald_mpi::payload(&mut b, 8);
/// assert_ne!(a, b);
/// ```
pub fn payload(buf: &mut [u8], seed: u64) {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for b in buf {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
}

/// Rank `rank`'s contribution to a combining collective in iteration `seed`: element `j` is
/// a hash of `(rank, j, seed)`, so the expected sum can be computed by anyone.
///
/// ```
/// let mut v = vec![0u64; 4];
/// herald_mpi::contribution(&mut v, 1, 9);
/// let mut w = vec![0u64; 4];
/// herald_mpi::contribution(&mut w, 2, 9);
/// assert_ne!(v, w);
/// ```
pub fn contribution(value: &mut [u64], rank: usize, seed: u64) {
    for (j, v) in value.iter_mut().enumerate() {
        let mut x = (rank as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (j as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9)
            ^ seed.wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
        x = x.wrapping_mul(0xD6E8_FEB8_6659_FD93);
        *v = x ^ (x >> 32);
    }
}

/// The element-wise (wrapping) sum of the [`contribution`]s of ranks `0..n`, `len` elements
/// each, in iteration `seed`: what an allreduce of them must give.
///
/// ```
/// let (mut a, mut b) = (vec![0u64; 3], vec![0u64; 3]);
/// herald_mpi::contribution(&mut a, 0, 5);
/// herald_mpi::contribution(&mut b, 1, 5);
/// let sum: Vec<u64> = a.iter().zip(&b).map(|(x, y)| x.wrapping_add(*y)).collect();
/// assert_eq!(herald_mpi::sum_of_contributions(2, 3, 5), sum);
/// ```
pub fn sum_of_contributions(n: usize, len: usize, seed: u64) -> Vec<u64> {
    let mut sum = vec![0u64; len];
    let mut part = vec![0u64; len];
    for r in 0..n {
        contribution(&mut part, r, seed);
        sum.iter_mut()
            .zip(&part)
            .for_each(|(s, p)| *s = s.wrapping_add(*p));
    }
    sum
}
