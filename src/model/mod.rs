//! Cost models: their parameters, the timing rules the checker applies, and lower bounds.
//!
//! Every model implements [`CostModel`]. Its central output is a [`Timing`]: the handful of
//! tick-valued quantities from which the checker (`sim`) derives every busy interval, arrival and
//! gap of a schedule. The models are:
//!
//! 1. [`Postal`] — Bar-Noy & Kipnis: a send occupies the sender for one unit, the receiver is busy
//!    during the last unit of the latency λ ≥ 1, sending and receiving are simultaneous.
//! 2. [`LogP`] — Karp, Sahay, Santos & Schauser (with LogGP's per-byte gap G): overhead `o` on
//!    the CPU at both ends, latency `L` in flight, gap `g` between consecutive sends and between
//!    consecutive receives, at most ⌈L/g⌉ messages in flight from or to one processor.
//!
//! 3. [`OnePort`] — the 1-port round model of Bruck, Cypher & Ho (postal rules with λ = 1).
//! 4. [`KPort`] — the k-port round model of Bar-Noy & Ho (`k` sends and `k` receives per round,
//!    distinct partners; [`Timing::ports`]).
//! 5. [`FatTree`] — the ideal fat-tree of Bilardi et al. (pair-dependent latency `2h`, channel
//!    capacities `w(n)`; checked by its own rules, not a [`Timing`]).
//! 6. [`Hier`] — postal or LogGP parameters per level of a machine hierarchy, a message paying
//!    the costs of the level where its ranks meet (a [`Timing`] per pair of ranks), with optional
//!    boundary capacities per level.
//!
//! [`Model`] wraps them for code that chooses a model at run time (the CLI).

mod fat_tree;
#[cfg(test)]
pub(crate) mod fixtures;
mod hier;
mod hierarchy;
mod kport;
mod logp;
mod oneport;
mod postal;
mod profile;
mod runtime;

pub use fat_tree::{FatTree, FatTreeCapacity};
pub use hier::{Assumptions, Hier, HierLevel, LevelCost, LevelSource};
pub(crate) use hier::{Crossing, PairTiming};
pub use hierarchy::{Hierarchy, HierarchyError, Level, LevelKind, Node, MAX_PUS};
pub(crate) use kport::log_ceil;
pub use kport::KPort;
pub use logp::{LogP, LongMessages};
pub use oneport::OnePort;
pub use postal::{Postal, UniversalTree};
pub use profile::{
    default_profile_path, host_name, load_profile, save_profile, this_cpu, Capacity, CombinePoint,
    CpuIdentity, Distribution, LevelProfile, MessagePieces, Mode, Pick, PieceTrial, PostedPoint,
    Profile, ProfileError, RuntimeCalibration, TopologyLevel, TopologySummary, WholeParams,
    PROFILE_SCHEMA,
};
pub use runtime::{RuntimeCosts, RuntimeLevel, RuntimeSource, Transport};

use crate::time::{Ratio, Ticks, TimeBase, TimeError};

/// Errors in model parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A parameter is outside the range the model allows.
    #[error("invalid parameter {name} = {value}: {why}")]
    Parameter {
        /// The parameter's name (`lambda`, `L`, …).
        name: &'static str,
        /// Its value as given.
        value: String,
        /// The rule it breaks.
        why: &'static str,
    },
    /// Exact arithmetic failed.
    #[error(transparent)]
    Time(#[from] TimeError),
}

/// The timing rules of a model, in ticks of a given [`TimeBase`].
///
/// For a send that starts at tick `t` from processor `p` to processor `q`:
///
/// * `p` is busy sending during `[t, t + send_busy)`;
/// * `q` is busy receiving during `[t + latency − recv_busy, t + latency)`;
/// * the data is available at `q` (to forward, or as finished) from `t + latency`;
/// * consecutive send starts of one processor are at least `send_gap` apart, and so are
///   consecutive receive starts;
/// * two send intervals of one processor never overlap, nor do two receive intervals; if
///   `shared_cpu`, a send interval and a receive interval of one processor never overlap either;
/// * if `capacity` is `Some(c)`, at most `c` messages are in transit from, and at most `c` to, one
///   processor at any instant, a message being in transit during `[t + transit.0, t + transit.1)`.
///
/// Intervals are half-open, so a zero-length interval overlaps nothing.
///
/// For combining collectives (reduce, allreduce, prefix) the receiver also spends `combine`
/// ticks combining the received partial value with its own, right after the receive; use
/// [`Timing::combining`] to fold that into the receive (the checker and generators do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// The tick base these values are expressed in.
    pub base: TimeBase,
    /// Ticks a sender is occupied by one send.
    pub send_busy: Ticks,
    /// Ticks a receiver is occupied by one receive (ending when the data is available).
    pub recv_busy: Ticks,
    /// Ticks from the start of a send until the data is available at the receiver (> 0).
    pub latency: Ticks,
    /// Least distance between consecutive send starts of one processor.
    pub send_gap: Ticks,
    /// Least distance between consecutive receive starts of one processor.
    pub recv_gap: Ticks,
    /// Whether sending and receiving compete for one CPU (LogP) or run on separate ports (postal).
    pub shared_cpu: bool,
    /// In-flight capacity per processor and direction, if the model bounds it.
    pub capacity: Option<u32>,
    /// The in-transit interval relative to the send start, `[transit.0, transit.1)`.
    pub transit: (Ticks, Ticks),
    /// Ticks a receiver spends combining a received partial value (combining collectives).
    pub combine: Ticks,
    /// Simultaneous sends, and simultaneous receives, one processor may have (1 for every model
    /// but k-port): up to `ports` send intervals of one processor may overlap, and up to `ports`
    /// receive intervals, each with a different partner.
    pub ports: u32,
}

impl Timing {
    /// The round models' timing (1-port, k-port): every send, receive and latency one round,
    /// `ports` sends and receives per round, no shared CPU.
    pub(crate) fn rounds(base: TimeBase, ports: u32) -> Result<Timing, ModelError> {
        let round = base.units(1)?;
        Ok(Timing {
            base,
            send_busy: round,
            recv_busy: round,
            latency: round,
            send_gap: round,
            recv_gap: round,
            shared_cpu: false,
            capacity: None,
            transit: (0, 0),
            combine: 0,
            ports,
        })
    }

    /// The least distance between consecutive sends of one processor that all rules allow
    /// (gap, and non-overlap of send intervals).
    pub fn send_step(&self) -> Ticks {
        self.send_gap.max(self.send_busy)
    }

    /// The least distance between consecutive receives of one processor that all rules allow.
    pub fn recv_step(&self) -> Ticks {
        self.recv_gap.max(self.recv_busy)
    }

    /// The rules for a combining collective: the combine is part of the receive, so the
    /// receiver is busy `recv_busy + combine` and the partial result is available `combine`
    /// later.
    pub fn combining(&self) -> Timing {
        Timing {
            recv_busy: self.recv_busy + self.combine,
            latency: self.latency + self.combine,
            combine: 0,
            ..*self
        }
    }

    /// The rules of the time-reversed machine: run a schedule backwards (a send from `p` to
    /// `q` starting at `t` becomes one from `q` to `p` ending when the original started, at
    /// `T − t`), and send and receive exchange roles. A schedule is legal under `self` if and
    /// only if its reversal is legal under `self.reversed()`; so a reduction is a reversed
    /// broadcast of the reversed machine (Karp et al. §4, where the reversed machine's send
    /// overhead is `o + 1`).
    pub fn reversed(&self) -> Timing {
        Timing {
            send_busy: self.recv_busy,
            recv_busy: self.send_busy,
            send_gap: self.recv_gap,
            recv_gap: self.send_gap,
            transit: (self.latency - self.transit.1, self.latency - self.transit.0),
            ..*self
        }
    }

    /// The optimal single-item broadcast tree these rules induce: an informed processor sends
    /// every `send_step` ticks, each receiver informed `latency` ticks after the send starts.
    pub fn universal_tree(&self) -> UniversalTree {
        UniversalTree::new(self.send_step(), self.latency)
    }
}

/// A collective problem size for lower bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Problem {
    /// Number of processors.
    pub n: u32,
    /// Number of blocks (broadcast) — 1 for a single message.
    pub m: u32,
}

/// A cost model: parameters, timing rules, lower bounds.
///
/// # Examples
///
/// ```
/// use herald::{CostModel, Postal, model::Problem};
/// let postal = Postal::new("5/2".parse()?)?;
/// let base = postal.time_base()?;
/// // Fig. 1 of Bar-Noy & Kipnis: 14 processors, λ = 5/2, optimal time 15/2.
/// let lb = postal.broadcast_lower_bound(Problem { n: 14, m: 1 }, base)?;
/// assert_eq!(base.format(lb), "15/2");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait CostModel {
    /// Short name, as on the command line (`postal`, `logp`).
    fn name(&self) -> &'static str;

    /// The parameters by name, exact, for reports and JSON.
    fn params(&self) -> Vec<(&'static str, Ratio)>;

    /// The smallest tick base in which every parameter is whole.
    ///
    /// # Errors
    /// [`ModelError::Time`] if the denominators need too many ticks per unit.
    fn time_base(&self) -> Result<TimeBase, ModelError> {
        let ratios: Vec<Ratio> = self.params().into_iter().map(|(_, r)| r).collect();
        Ok(TimeBase::for_ratios(&ratios)?)
    }

    /// The timing rules in the given base (which must be a multiple of [`Self::time_base`]).
    ///
    /// # Errors
    /// [`ModelError::Time`] if a parameter is not whole in `base` or overflows.
    fn timing(&self, base: TimeBase) -> Result<Timing, ModelError>;

    /// A lower bound on the makespan of broadcasting `p.m` blocks from one root to `p.n`
    /// processors, in ticks of `base`.
    ///
    /// The default is the bound every model here shares: for `n ≥ 2`, the root's last distinct
    /// block cannot leave before `(m − 1)` send steps, and then needs the optimal single-item
    /// broadcast time (postal: Lemma 8 of Bar-Noy & Kipnis; LogP: Theorem 3.1 of Karp et al.);
    /// for `n = 1`, 0.
    ///
    /// # Errors
    /// [`ModelError::Time`] on overflow.
    fn broadcast_lower_bound(&self, p: Problem, base: TimeBase) -> Result<Ticks, ModelError> {
        if p.n <= 1 {
            return Ok(0); // nothing to send (Lemma 8 does not hold for n = 1: docs/errata.md)
        }
        let timing = self.timing(base)?;
        let single = timing.universal_tree().index(u64::from(p.n))?;
        let pipeline = crate::time::mul(timing.send_step(), u64::from(p.m.saturating_sub(1)))?;
        Ok(crate::time::add(single, pipeline)?)
    }

    /// The ideal fat-tree, if this is one: its rules are not a [`Timing`] (the latency depends
    /// on the pair of leaves), so the checker applies its own (`sim::fat_tree`).
    fn fat_tree(&self) -> Option<&FatTree> {
        None
    }

    /// The hierarchical model, if this is one: its timing depends on the pair of ranks, so the
    /// checker and the placement apply its per-pair rules.
    fn hierarchical(&self) -> Option<&Hier> {
        None
    }
}

/// A model chosen at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Model {
    /// The postal model.
    Postal(Postal),
    /// The LogP / LogGP model.
    LogP(LogP),
    /// The 1-port round model.
    OnePort(OnePort),
    /// The k-port round model.
    KPort(KPort),
    /// The ideal fat-tree.
    FatTree(FatTree),
    /// The hierarchical model (per-level costs).
    Hier(Hier),
}

impl Model {
    /// The inner model as a trait object.
    pub fn as_dyn(&self) -> &dyn CostModel {
        match self {
            Model::Postal(m) => m,
            Model::LogP(m) => m,
            Model::OnePort(m) => m,
            Model::KPort(m) => m,
            Model::FatTree(m) => m,
            Model::Hier(m) => m,
        }
    }
}

impl CostModel for Model {
    fn name(&self) -> &'static str {
        self.as_dyn().name()
    }
    fn params(&self) -> Vec<(&'static str, Ratio)> {
        self.as_dyn().params()
    }
    fn timing(&self, base: TimeBase) -> Result<Timing, ModelError> {
        self.as_dyn().timing(base)
    }
    fn broadcast_lower_bound(&self, p: Problem, base: TimeBase) -> Result<Ticks, ModelError> {
        self.as_dyn().broadcast_lower_bound(p, base)
    }
    fn fat_tree(&self) -> Option<&FatTree> {
        self.as_dyn().fat_tree()
    }
    fn hierarchical(&self) -> Option<&Hier> {
        self.as_dyn().hierarchical()
    }
}

impl From<Hier> for Model {
    fn from(m: Hier) -> Model {
        Model::Hier(m)
    }
}

impl From<KPort> for Model {
    fn from(m: KPort) -> Model {
        Model::KPort(m)
    }
}

impl From<FatTree> for Model {
    fn from(m: FatTree) -> Model {
        Model::FatTree(m)
    }
}

impl From<Postal> for Model {
    fn from(m: Postal) -> Model {
        Model::Postal(m)
    }
}

impl From<OnePort> for Model {
    fn from(m: OnePort) -> Model {
        Model::OnePort(m)
    }
}

impl From<LogP> for Model {
    fn from(m: LogP) -> Model {
        Model::LogP(m)
    }
}
