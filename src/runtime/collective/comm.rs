//! The communicator: its options, its channels (one ring per directed pair, made on first
//! use), its shared [`Core`] and its cached default programs.

use super::call::Core;
use super::choice::{class_of, Boards, Chooser, Regimes, CLASSES, LOAD_PER_HOP};
use super::combine::OrderedTree;
use super::error::{CollectiveError, PlannedLoadError};
use super::rank::CommRank;
use crate::model::{Hierarchy, Model, Postal, Profile};
use crate::model::{Pick, RuntimeCosts, Transport};
use crate::plan::{
    rank_for_runtime, runtime_model, schedule_of, Candidate, PlanError, PlanRequest,
};
use crate::runtime::channel::{channel, Receiver, Sender};
use crate::runtime::line::Line;
use crate::runtime::program::Program;
use crate::runtime::wait::PanicWatch;
use crate::schedule::{generate, Algorithm, Request, Schedule};
use crate::sim::predict_runtime;
use crate::time::Ratio;
use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex, PoisonError};

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
    /// profile, per payload size class (the next power of two): planned for every class when
    /// the [`Comm`] is made (errors are returned there), and generated for each root from the
    /// chosen candidate.
    Planned(Planned),
}

impl Default for DefaultSchedule {
    /// The binomial tree: no profile, no I/O.
    fn default() -> DefaultSchedule {
        DefaultSchedule::Fixed(Algorithm::Binomial)
    }
}

/// Size classes the planner is asked about: `2^0 … 2^MAX_CLASS_LOG2` bytes (larger payloads
/// use the largest class's choice).
const MAX_CLASS_LOG2: u32 = 30;

/// The planner's choices for one communicator: its model and, per size class, a candidate, its
/// transport, and its schedule from root 0.
#[derive(Debug)]
struct PlanTable {
    model: Model,
    /// Indexed by the class's base-2 logarithm: the best choice that is not a post (what the
    /// class runs when it does not post).
    classes: Vec<(Candidate, Transport, Schedule)>,
    /// Whether the profile measured posting: then a payload is posted where
    /// [`posted_at`](Self::posted_at) says so; otherwise by the rule of
    /// [`CommOptions::posted_broadcast`].
    posted_modelled: bool,
    /// Per payload size up to [`POSTED_MAX_BYTES`](crate::runtime::POSTED_MAX_BYTES): whether
    /// the model predicts the post faster than its class's choice at that size (empty where
    /// posting does not apply, e.g. ranks sharing PUs).
    posted_at: Vec<bool>,
    /// Where ranks share PUs and the profile measured posting there: per slot length in lines
    /// ([`shared_posted_lines`](crate::runtime::shared_posted_lines)), up to the
    /// communicator's slots, whether the model predicts the post faster than its size's class
    /// (at the line's largest size); `None`: posting there is not modelled, and the
    /// communicator posts by [`CommOptions::shared_posted_bytes`].
    shared_posted_at: Option<Vec<bool>>,
    /// The flat tree's schedule, what a post runs (if the planner ranked posting).
    flat: Option<Schedule>,
    /// The runtime costs under each of the profile's latency regimes, the dominant first, and
    /// each one's hop between PUs and stamp load ([`Regimes::load_ns`]), ns; regimes of the
    /// same hop as an earlier one left out
    /// (none where the communicator times no class, [`TimedPosting::Never`]).
    regimes: Vec<(RuntimeCosts, f64, f64)>,
}

/// The regimes a timed class chooses by ([`choice`](super::choice)): the profile's dominant
/// (the plan's), fastest and slowest.
const REGIMES: [Pick; 3] = [Pick::Dominant, Pick::Fastest, Pick::Slowest];

/// A regime other than the dominant one takes the other way from the plan's only where the
/// model predicts it at least this much faster there: where ranks share CPUs the model's far
/// regime is about that coarse (8 ranks on 2 CPUs, 4 KiB: the post predicted 3.7 % dearer
/// than a single copy, measured 6 % cheaper; docs/fidelity.md, "Sixty-fourth session").
const REGIME_MARGIN: f64 = 0.10;

/// Regimes whose hops between PUs are nearer than this factor are one to a timed class.
const DISTINCT: f64 = 1.5;

impl PlanTable {
    fn class(&self, class: u64) -> &(Candidate, Transport, Schedule) {
        let i = (class.max(1).ilog2() as usize).min(self.classes.len() - 1);
        &self.classes[i]
    }

    /// Under each regime, whether a post of `bytes` bytes goes posted: under the dominant
    /// regime (the plan's) where it is predicted faster than the size's class; under another
    /// where the other way is predicted at least [`REGIME_MARGIN`] faster than the dominant
    /// regime's way, else as there. `None` if either way cannot be predicted, or posting was
    /// not ranked.
    fn posted_by_regime(&self, bytes: u64) -> Option<Vec<bool>> {
        let flat = self.flat.as_ref()?;
        let (_, transport, schedule) = self.class(bytes.max(1).next_power_of_two());
        let times = self
            .regimes
            .iter()
            .map(|(costs, _, _)| {
                let post = predict_runtime(flat, costs, bytes, Transport::Posted).ok()?;
                let other = predict_runtime(schedule, costs, bytes, *transport).ok()?;
                Some((post.makespan_ps as f64, other.makespan_ps as f64))
            })
            .collect::<Option<Vec<_>>>()?;
        let plan = times.first().is_some_and(|(p, o)| p < o);
        Some(
            times
                .iter()
                .map(|&(post, other)| {
                    let (mine, theirs) = if plan { (post, other) } else { (other, post) };
                    plan != (theirs * (1.0 + REGIME_MARGIN) <= mine)
                })
                .collect(),
        )
    }
}

/// Whether a planned [`Comm`] chooses, as calls run, between posting a broadcast and the
/// transport its plan runs otherwise by the host's latency regime
/// ([`CommOptions::timed_posting`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TimedPosting {
    /// Never: every size goes the plan's way.
    Never,
    /// Where the profile's latency regimes disagree: size classes that the model posts under
    /// one regime and not under another (the default).
    #[default]
    Auto,
    /// Every size class that may be posted and whose post the profile models (where the
    /// regimes agree, the way never changes; this times them all the same).
    Always,
    /// For tests: every size class that may be posted, taking the other way every epoch,
    /// whatever the regime.
    Alternate,
}

/// A calibrated profile and the machine it describes, for [`DefaultSchedule::Planned`].
///
/// # Examples
///
/// ```
/// # use herald::{*, runtime::{DefaultSchedule, Planned}};
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

    /// This machine's profile, if it has one, with this machine's topology: the one place
    /// herald reads `HERALD_PROFILE`. The variable names a profile file (`off`: none); unset,
    /// the profile is [`default_profile_path`](crate::model::default_profile_path) where that file
    /// exists (what `herald calibrate` writes). Nothing is cached: call it once and pass the
    /// result to [`CommOptions`].
    ///
    /// # Errors
    ///
    /// [`PlannedLoadError::Profile`] if the named (or cached) profile cannot be read, is not a
    /// profile of this schema, or describes another host; [`PlannedLoadError::Topology`] if
    /// this machine's topology cannot be read.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{CommOptions, runtime::{DefaultSchedule, Planned}};
    /// let schedule = match Planned::load()? {
    ///     Some(planned) => DefaultSchedule::Planned(planned),
    ///     None => DefaultSchedule::default(),
    /// };
    /// let options = CommOptions { schedule, ..CommOptions::default() };
    /// let comm = herald::Comm::with_options(2, options)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load() -> Result<Option<Planned>, PlannedLoadError> {
        let path = match std::env::var_os("HERALD_PROFILE") {
            Some(v) if v == "off" => return Ok(None),
            Some(v) => std::path::PathBuf::from(v),
            None => match crate::model::default_profile_path() {
                Some(p) if p.exists() => p,
                _ => return Ok(None),
            },
        };
        let profile = crate::model::load_profile(&path, false)?;
        let machine = crate::topology::TopologySource::Machine.load()?;
        Ok(Some(Planned::new(profile, machine)))
    }

    /// The planner's choice for `n` ranks in every size class, from root 0: candidates from
    /// the papers' models, ranked by herald's runtime cost model under each transport
    /// ([`rank_for_runtime`]); and, per payload size a slot holds, whether posting beats the
    /// class's choice at that size (a class spans sizes where the two cross).
    ///
    /// Where ranks share PUs (`shared_slot`: the communicator's slot size), posting is
    /// compared per slot length in lines, up to that size. With `timed` (the communicator may
    /// time classes, [`TimedPosting`]) the profile's other latency regimes are priced too.
    fn table(
        &self,
        n: usize,
        shared_slot: Option<usize>,
        timed: bool,
    ) -> Result<PlanTable, CollectiveError> {
        let n32 = n as u32;
        let model = runtime_model(self.profile(), self.machine(), n32)?;
        let costs = RuntimeCosts::from_profile(self.profile(), self.machine(), Pick::Dominant)
            .map_err(PlanError::from)?;
        // The flat tree's schedule, if the planner ranked posting at all.
        let mut flat: Option<Schedule> = None;
        let classes = (0..=MAX_CLASS_LOG2)
            .map(|log2| {
                let req = PlanRequest {
                    n: n32,
                    root: 0,
                    bytes: 1u64 << log2,
                    blocks: None,
                };
                let plan = rank_for_runtime(&model, &costs, &req)?;
                if flat.is_none() {
                    flat = plan
                        .ranked
                        .iter()
                        .find(|c| c.transport == Transport::Posted)
                        .map(|c| c.schedule.clone());
                }
                let best = plan
                    .ranked
                    .into_iter()
                    .find(|c| c.transport != Transport::Posted)
                    .ok_or(PlanError::Empty)?;
                Ok((best.candidate, best.transport, best.schedule))
            })
            .collect::<Result<Vec<_>, PlanError>>()?;
        // Each regime's hop between rank 0's PU and the next PU a rank is on, and its stamp
        // load there (calibrated, else `LOAD_PER_HOP` of the hop), the dominant regime (the
        // plan's costs) first; none if every rank is on rank 0's PU.
        let other = (1..n32).find(|&r| costs.pu(r) != costs.pu(0));
        let hop_and_load = |c: &RuntimeCosts| {
            other.and_then(|r| c.between(0, r)).map(|l| {
                let hop = l.hop_ps as f64 / 1e3;
                let load = l
                    .stamp_load_ps
                    .map_or(hop * LOAD_PER_HOP, |ps| ps as f64 / 1e3);
                (hop, load)
            })
        };
        let mut regimes: Vec<(RuntimeCosts, f64, f64)> = Vec::with_capacity(REGIMES.len());
        if let (true, Some((dominant, load))) = (timed, hop_and_load(&costs)) {
            regimes.push((costs.clone(), dominant, load));
            for pick in REGIMES.into_iter().filter(|&p| p != Pick::Dominant) {
                let c = RuntimeCosts::from_profile(self.profile(), self.machine(), pick)
                    .map_err(PlanError::from)?;
                let Some((h, load)) = hop_and_load(&c) else {
                    continue;
                };
                // States of one mode (a host's near mode spans 60–80 ns here) are not told
                // apart: the regimes a class chooses between differ by half or more of a hop.
                if regimes
                    .iter()
                    .all(|(_, seen, _)| h > seen * DISTINCT || h * DISTINCT < *seen)
                {
                    regimes.push((c, h, load));
                }
            }
        }
        let mut table = PlanTable {
            model,
            classes,
            posted_modelled: costs.models_posted(),
            posted_at: Vec::new(),
            shared_posted_at: None,
            flat: flat.clone(),
            regimes,
        };
        // Posting, size by size (by lines where ranks share PUs): where the post is predicted
        // faster than what the size's class runs otherwise.
        let faster = |table: &PlanTable, flat: &Schedule, b: u64| {
            let (_, transport, schedule) = table.class(b.max(1).next_power_of_two());
            let post = predict_runtime(flat, &costs, b, Transport::Posted);
            let other = predict_runtime(schedule, &costs, b, *transport);
            matches!((post, other), (Ok(p), Ok(o)) if p.makespan_ps < o.makespan_ps)
        };
        if let (Some(flat), Some(slot)) = (&flat, shared_slot) {
            if costs.models_shared_posted() && n32 > costs.pus() {
                // A post costs the same at every size of its lines: compare at the smallest
                // (where the other transports cost least).
                let lines = super::posted::shared_posted_lines(slot).unwrap_or(0);
                let least = |l: usize| if l < 2 { 1 } else { (l as u64 - 2) * 64 + 49 };
                table.shared_posted_at = Some(
                    (0..=lines)
                        .map(|l| l > 0 && faster(&table, flat, least(l)))
                        .collect(),
                );
                return Ok(table);
            }
        }
        if let Some(flat) = flat {
            table.posted_at = (0..=super::posted::POSTED_MAX_BYTES as u64)
                .map(|b| faster(&table, &flat, b))
                .collect();
        }
        Ok(table)
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
    /// allreduce, allgather and barrier, and the shape of the reduction tree. Default: binomial
    /// ([`DefaultSchedule::default`]); the planner's choice is explicit ([`Planned::load`]).
    /// With more ranks than CPUs ([`cpus`](Self::cpus)), a fixed binomial schedule broadcasts
    /// over the flat tree, at every size. The ranks then share CPUs, so each level of a tree
    /// waits for its receiver's turn on a shared CPU (about 2 µs on the development machine).
    /// The flat tree's extra sends cost tens of ns each, and its single copies take turns
    /// anyway. On 2 CPUs, the flat tree measured at most binomial's time at 4, 8 and 16 ranks
    /// from 512 B to 4 MiB in two fidelity runs, and down to a quarter of it. The rule covered
    /// 888 bytes and less until the ninth session (docs/runtime.md, "Small allreduce in shared
    /// memory" and "The flat tree at every size").
    pub schedule: DefaultSchedule,
    /// Broadcasts of at least this many bytes move by single copy: the rings carry one
    /// descriptor line per chunk and each receiver copies the chunk straight from its
    /// sender's buffer (`usize::MAX`: never). Default 1 KiB: on the development machine
    /// (docs/runtime.md) single copy took 0.77× the line stream's time at 880 bytes, 0.31× at
    /// 4 KiB and 0.24× at 16 KiB between two ranks, and 0.94× at 1 KiB and 0.76× at 4 KiB with
    /// four ranks on two CPUs; the stream won at 440 bytes (1.14×). Applies to a caller's
    /// programs ([`CommRank::broadcast_with`](crate::CommRank::broadcast_with)) and to a fixed
    /// default schedule; a planned communicator's default broadcasts move by the transport the
    /// planner chose for their size class from the profile's runtime measurements (stream
    /// only, if the profile has none).
    pub direct_min_bytes: usize,
    /// The chunk size of single-copy broadcasts (the unit a rank copies before forwarding).
    pub direct_chunk_bytes: usize,
    /// [`CommRank::allreduce_slice`](crate::CommRank::allreduce_slice) of at least this many
    /// bytes runs as a shared-memory reduce-scatter and allgather by single copy (each rank
    /// combines `1/n` of the elements, reading them straight from every rank's buffer, then
    /// copies the other chunks from their owners); below it, slices of at most 4 KiB are
    /// combined in shared memory (every rank folds every rank's slice from its slot) and longer
    /// ones up the rank-ordered tree through the rings, the result broadcast (`usize::MAX`:
    /// never single copy).
    /// Default 4 KiB (docs/runtime.md, "Allreduce of slices").
    pub allreduce_direct_min_bytes: usize,
    /// [`CommRank::allreduce`](crate::CommRank::allreduce) of values of at most this many
    /// bytes, and [`CommRank::allreduce_slice`](crate::CommRank::allreduce_slice) of such
    /// slices below `allreduce_direct_min_bytes`, go through shared memory: every rank
    /// deposits its value in its own slot and, once every rank's slot holds the call's value,
    /// folds all of them itself in rank order (each rank runs at most twice per call, which
    /// matters when ranks share CPUs). Larger ones are combined up the rank-ordered tree
    /// through the rings and broadcast (`Some(0)`: only empty values in shared memory). The
    /// communicator keeps two slots of this size per rank.
    ///
    /// Default `None`, a rule from measurements (docs/runtime.md, "Small allreduce in shared
    /// memory" and "The small allreduce's words"): 4 KiB when the communicator has more ranks
    /// than CPUs ([`cpus`](Self::cpus)) (at 4 and 8 ranks on 2 CPUs shared memory took about
    /// half the tree's time from 8 B to 512 B); else 4 KiB read per rank, `4096 / (n − 1)`
    /// bytes but at least 64 (between 2 ranks on 2 CPUs a ping-pong of allreduces took 0.6–0.8×
    /// the exchange through the rings at 512 B to 2 KiB and 0.9× at 4 KiB; more ranks with CPUs
    /// of their own were not measured: each rank reads every other rank's slot).
    pub allreduce_shared_max_bytes: Option<usize>,
    /// How many CPUs the ranks' threads run on. With more ranks than that, ranks share CPUs,
    /// and two defaults change:
    /// - a fixed binomial schedule broadcasts over the flat tree ([`schedule`](Self::schedule));
    /// - small allreduces go through shared memory up to 4 KiB ([`allreduce_shared_max_bytes`](Self::allreduce_shared_max_bytes)).
    ///
    /// Default `None`: the machine's online CPUs. They are read once per process from
    /// `/sys/devices/system/cpu/online`, or, where that cannot be read, the CPUs this process may
    /// run on. Set it where the machine's count is not what the ranks get: a [`Team`](crate::Team)
    /// on a few of the machine's cores, or a container whose CPU quota is below the CPUs it sees.
    /// With it set, a communicator's rules depend on nothing outside its options.
    ///
    /// ```
    /// use herald::{Comm, CommOptions};
    /// let on = |cpus| CommOptions { cpus: Some(cpus), ..CommOptions::default() };
    /// assert!(Comm::with_options(4, on(2))?.ranks_share_cpus());
    /// assert!(!Comm::with_options(4, on(4))?.ranks_share_cpus());
    /// # Ok::<(), herald::runtime::CollectiveError>(())
    /// ```
    pub cpus: Option<usize>,
    /// [`CommRank::broadcast`](crate::CommRank::broadcast) of at most 1072 bytes, and less
    /// than [`direct_min_bytes`](Self::direct_min_bytes), is posted in shared memory when the
    /// ranks have CPUs of their own ([`cpus`](Self::cpus)): the root writes a slot of its own
    /// (one line with the call's header for up to 48 bytes, one more line per further 64),
    /// every other rank reads it, and the root runs at most fifteen such broadcasts ahead of
    /// its slowest reader. A planned communicator whose profile measured posting (`herald
    /// calibrate` since the nineteenth session) posts each size its model predicts the post
    /// faster at than what the size's class runs otherwise, whatever `direct_min_bytes` says
    /// (a class of sizes spans the crossing of the two); with an older profile it posts by the
    /// rule above, whatever its plan picks (posting measured faster than either transport the
    /// model then knew at every size it covers, docs/fidelity.md). Where ranks share CPUs the
    /// sizes of [`shared_posted_bytes`](Self::shared_posted_bytes) are posted instead; a
    /// planned communicator whose profile measured posting on one PU (since the
    /// twenty-second session) posts those of them where its model predicts the post faster.
    /// Otherwise, and always for a
    /// caller's program ([`CommRank::broadcast_with`](crate::CommRank::broadcast_with)), it
    /// runs the default schedule, where a root may run as far ahead as the rings hold lines.
    /// [`Comm::broadcast_transport`] tells which way a size goes.
    ///
    /// Default `true`. Between two ranks on two CPUs of the development machine, a ping-pong
    /// of 48-byte broadcasts took 1.07–1.31× a shared-flag broadcast posted, against 1.66–1.69×
    /// through the rings (`herald bench bcast`, near latency mode); 512 bytes 134 ns against
    /// 271–288 through the rings and 183 by single copy, 1000 bytes 215 against 604–627 and
    /// 244–246. With ranks sharing CPUs the rings' depth matters more: a back-to-back loop of
    /// 8-byte broadcasts of 4 ranks on 2 CPUs took 0.41–0.47 µs posted against 0.13 µs through
    /// the rings (docs/runtime.md, "Posted broadcasts").
    pub posted_broadcast: bool,
    /// Where ranks share CPUs ([`cpus`](Self::cpus)) and
    /// [`posted_broadcast`](Self::posted_broadcast) is on, the broadcast sizes
    /// [`CommRank::broadcast`](crate::CommRank::broadcast) posts in shared memory, in slots of
    /// the range's end (at most [`SHARED_POSTED_LIMIT`] bytes; a larger end is taken as that).
    /// The root copies the payload once into a slot of its own and returns: it runs up to 63
    /// broadcasts of at most 1072 bytes (15 larger ones) ahead of its slowest reader without
    /// waiting for a turn of the CPU, where a single copy makes it wait for every reader in
    /// every call and the rings hold only a few calls of the larger sizes. `None` (or an empty
    /// range): never. The communicator keeps 64 slots of 1072 bytes per rank for the range's
    /// sizes up to that (68 KiB), and 16 slots of the range's end for the larger ones (129 KiB
    /// at the default 8 KiB, 1 MiB at the limit). A planned communicator whose profile
    /// measured posting on one PU posts the sizes of the range its model predicts faster
    /// posted; with an older profile, every size of the range.
    ///
    /// Default `Some(0..=8192)`: with 4 and 8 ranks on 2 CPUs of the development machine, a
    /// back-to-back loop of broadcasts took 0.3–0.95× as long posted as by the faster of the
    /// rings and single copy from 128 B to 16 KiB, and a ping-pong 0.7–0.9× from 128 B to
    /// 4 KiB and 1.0–1.3× at 8 and 16 KiB (docs/runtime.md, "Posted broadcasts where ranks
    /// share CPUs"). Below 128 B the range starts since a root may run 63 small posts ahead,
    /// not 15: a loop of 8 and 64 bytes then took 0.54–1.03× its time through the rings, a
    /// ping-pong 0.85–0.95× and a broadcast after a barrier 0.25–0.67× (docs/runtime.md,
    /// "Sixty-four slots for small posts where ranks share CPUs").
    pub shared_posted_bytes: Option<RangeInclusive<usize>>,
    /// Where a planned communicator chooses, as calls run, between posting a broadcast and the
    /// transport its plan runs otherwise, by the host's latency regime (a fixed schedule never
    /// does).
    ///
    /// The faster of the two can change with the host's latency mode while a program runs: 4
    /// ranks on 2 CPUs broadcast 4 KiB 11–15 % faster posted in the near mode and 13–15 %
    /// faster by single copy in the far mode (docs/fidelity.md, "Sixty-second session"), so a
    /// plan made once is that much off in the other mode. Where the profile's regimes (modes
    /// its calibration met, whose hops between PUs differ by half or more) disagree on posting
    /// a size class, one predicting the other way at least 10 % faster, the communicator times
    /// the class: in one call of 16 every rank but the root times its load of a line the root
    /// wrote (a miss from another CPU, the hop the regimes are named by), every 64 calls rank 0
    /// takes the loads in and names the regime they lie clearly near (else the plan's own),
    /// and the class takes the model's way under that regime. Every rank takes the same way in
    /// every call; new endpoints ([`Comm::ranks`]) start in the regime the last ones ended in.
    /// [`Comm::broadcast_timed`] tells which sizes are timed. In the far mode this took 4
    /// ranks' 4 KiB broadcasts from 14.6 % behind the fastest way to 4.3 %, at a cost of about
    /// 2 % in the near mode (docs/fidelity.md, "Sixty-fourth session"); in a state between the
    /// two the plan's way is kept, at a cost of 1–2 % at 4 ranks of 4 KiB and about 4 % at 8
    /// ranks of 8 KiB (docs/fidelity.md, "Sixty-fifth session").
    ///
    /// Default [`TimedPosting::Auto`].
    pub timed_posting: TimedPosting,
}

/// The largest slot of [`CommOptions::shared_posted_bytes`]: 64 KiB.
pub const SHARED_POSTED_LIMIT: usize = 64 << 10;

/// The largest size of class `k` (payloads of `2^(k−1) + 1 ..= 2^k` bytes) that is posted
/// when at most `max` bytes are, if any is.
fn class_posted_size(k: usize, max: usize) -> Option<u64> {
    let top = (1u64 << k).min(max as u64);
    let bottom = if k == 0 { 0 } else { 1u64 << (k - 1) };
    (top > bottom || (k == 0 && max > 0)).then_some(top)
}

/// The size classes a communicator times ([`CommOptions::timed_posting`]) and the regimes they
/// choose by: planned, posting some sizes by a modelled post, by the option; `None` if none.
fn timed_classes(
    options: &CommOptions,
    plan: Option<&PlanTable>,
    posted: Option<usize>,
    shared: bool,
) -> Option<Regimes> {
    let (Some(plan), Some(max)) = (plan, posted) else {
        return None;
    };
    let modelled = if shared {
        plan.shared_posted_at.is_some()
    } else {
        plan.posted_modelled
    };
    if !modelled || options.timed_posting == TimedPosting::Never {
        return None;
    }
    let posted: Vec<Option<Vec<bool>>> = (0..CLASSES)
        .map(|k| {
            let bytes = class_posted_size(k, max)?;
            let in_range = !shared
                || options
                    .shared_posted_bytes
                    .as_ref()
                    .is_some_and(|r| r.contains(&(bytes as usize)));
            if !in_range {
                return None;
            }
            let ways = plan.posted_by_regime(bytes)?;
            let disagree = ways.iter().any(|&w| w != ways[0]);
            (disagree || options.timed_posting != TimedPosting::Auto).then_some(ways)
        })
        .collect();
    posted.iter().any(Option::is_some).then(|| Regimes {
        load_ns: plan.regimes.iter().map(|(_, _, l)| *l).collect(),
        posted,
        alternate: options.timed_posting == TimedPosting::Alternate,
    })
}

impl Default for CommOptions {
    fn default() -> CommOptions {
        CommOptions {
            capacity: 256,
            schedule: DefaultSchedule::default(),
            direct_min_bytes: 1 << 10,
            direct_chunk_bytes: 64 << 10,
            allreduce_direct_min_bytes: 4 << 10,
            allreduce_shared_max_bytes: None,
            cpus: None,
            posted_broadcast: true,
            shared_posted_bytes: Some(0..=8 << 10),
            timed_posting: TimedPosting::Auto,
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
    /// The planner's choices ([`DefaultSchedule::Planned`]), made with the communicator.
    plan: Option<PlanTable>,
    /// The radix of the combining collectives' tree.
    radix: usize,
    /// Whether a fixed binomial default broadcasts over the flat tree: the ranks share CPUs
    /// (see [`CommOptions::schedule`]).
    flat: bool,
    /// Whether the ranks share CPUs ([`CommOptions::cpus`]).
    shared: bool,
    /// The largest broadcast posted, if any ([`CommOptions::posted_broadcast`], and
    /// [`CommOptions::shared_posted_bytes`] not empty where ranks share CPUs).
    posted: Option<usize>,
    /// Bit `b` (`b` < 64): a `b`-byte broadcast is posted and in no timed class
    /// ([`posts_untimed`](Self::posts_untimed)).
    posts_untimed: u64,
    /// The timed classes' state each new set of endpoints starts from
    /// ([`CommOptions::timed_posting`]): fresh, or what rank 0's endpoint had learnt when it
    /// was dropped.
    chooser: Mutex<Chooser>,
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
    /// As [`Comm::new`]; and, made here rather than in a call, the schedule's own:
    /// [`CollectiveError::Plan`] if the planner cannot plan for this team under the profile,
    /// [`CollectiveError::Schedule`] if a fixed algorithm cannot be generated for `size` ranks,
    /// [`CollectiveError::Program`] if its program does not compile.
    ///
    /// ```
    /// use herald::{Algorithm, Comm, CommOptions, runtime::DefaultSchedule};
    /// let options = CommOptions {
    ///     schedule: DefaultSchedule::Fixed(Algorithm::Knomial { radix: 1 }),
    ///     ..CommOptions::default()
    /// };
    /// assert!(Comm::with_options(4, options).is_err());
    /// ```
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
        let cpus = match options.cpus {
            Some(0) => return Err(CollectiveError::NoCpus),
            Some(cpus) => cpus,
            None => online_cpus(),
        };
        let shared = cpus > 0 && size > cpus;
        let shared_max = options.allreduce_shared_max_bytes.unwrap_or(if shared {
            SHARED_MAX_OVERSUBSCRIBED
        } else {
            shared_max(size)
        });
        let flat = shared && options.schedule == DefaultSchedule::Fixed(Algorithm::Binomial);
        let posted_bytes = match (options.posted_broadcast && size > 1, shared) {
            (false, _) => None,
            (true, false) => Some(super::posted::MAX_BYTES),
            (true, true) => match &options.shared_posted_bytes {
                Some(range) if !range.is_empty() => Some((*range.end()).min(SHARED_POSTED_LIMIT)),
                _ => None,
            },
        };
        let plan = match &options.schedule {
            DefaultSchedule::Fixed(_) => None,
            DefaultSchedule::Planned(p) => Some(p.table(
                size,
                posted_bytes.filter(|_| shared),
                options.timed_posting != TimedPosting::Never,
            )?),
        };
        let regimes = timed_classes(&options, plan.as_ref(), posted_bytes, shared);
        let mut timed = [false; CLASSES];
        if let Some(r) = &regimes {
            for (t, p) in timed.iter_mut().zip(&r.posted) {
                *t = p.is_some();
            }
        }
        let mut comm = Comm {
            size,
            options,
            core: Arc::new(
                Core::new_with_small(size, shared_max, posted_bytes.unwrap_or(0), shared)
                    .with_choice(Boards::new(size, &timed)),
            ),
            pairs: Mutex::new(HashMap::new()),
            programs: Mutex::new(HashMap::new()),
            plan,
            radix: 2,
            flat,
            shared,
            posted: posted_bytes,
            posts_untimed: 0,
            chooser: Mutex::new(
                regimes
                    .map(|r| Chooser::new(Arc::new(r)))
                    .unwrap_or_default(),
            ),
        };
        comm.radix = comm.tree_radix();
        comm.posts_untimed = (0..64)
            .filter(|&b| comm.timed_class(b).is_none() && comm.posts(b))
            .fold(0, |mask, b| mask | 1 << b);
        // Root 0's programs now: a schedule that cannot be run fails here, not in a call.
        comm.prepare([0])?;
        Ok(comm)
    }

    /// The number of ranks.
    #[must_use]
    pub fn size(&self) -> usize {
        self.size
    }

    /// How [`CommRank::broadcast`](crate::CommRank::broadcast) moves a `bytes`-byte payload
    /// on this communicator: [`Transport::Posted`] where it posts in shared memory,
    /// [`Transport::Direct`] where its default schedule moves by single copy,
    /// [`Transport::Stream`] where it streams lines through the rings. A planned communicator
    /// answers from its plan: the size's class, and size by size whether the post is predicted
    /// faster (where its profile measured posting, else by the rule of
    /// [`CommOptions::posted_broadcast`]); any other from its options. Where a planned
    /// communicator times the size ([`broadcast_timed`](Self::broadcast_timed)), the way its
    /// next endpoints start on: the model's under the regime the last endpoints ran in.
    ///
    /// ```
    /// use herald::{model::Transport, Comm, CommOptions};
    /// let on = |cpus| CommOptions { cpus: Some(cpus), ..CommOptions::default() };
    /// let own = Comm::with_options(2, on(2))?;
    /// assert_eq!(own.broadcast_transport(8), Transport::Posted);
    /// assert_eq!(own.broadcast_transport(1 << 20), Transport::Direct);
    /// // Ranks sharing CPUs post up to 8 KiB.
    /// let shared = Comm::with_options(4, on(2))?;
    /// assert_eq!(shared.broadcast_transport(8), Transport::Posted);
    /// assert_eq!(shared.broadcast_transport(8192), Transport::Posted);
    /// assert_eq!(shared.broadcast_transport(8193), Transport::Direct);
    /// assert_eq!(shared.broadcast_transport(1 << 20), Transport::Direct);
    /// # Ok::<(), herald::runtime::CollectiveError>(())
    /// ```
    #[must_use]
    pub fn broadcast_transport(&self, bytes: usize) -> Transport {
        let posts = match self.timed_class(bytes) {
            Some(k) => self
                .chooser
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .start_way(k)
                .unwrap_or_else(|| self.posts(bytes)),
            None => self.posts(bytes),
        };
        if posts {
            Transport::Posted
        } else if self.uses_direct(bytes, true) {
            Transport::Direct
        } else {
            Transport::Stream
        }
    }

    /// Whether the ranks share CPUs: more ranks than [`CommOptions::cpus`].
    #[must_use]
    pub fn ranks_share_cpus(&self) -> bool {
        self.shared
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
        let schedule = match (&self.options.schedule, &self.plan) {
            (DefaultSchedule::Planned(_), Some(plan)) => {
                let (candidate, _, schedule) = plan.class(key.1);
                if root == 0 {
                    schedule.clone()
                } else {
                    schedule_of(&plan.model, candidate, self.size as u32, root as u32)?
                }
            }
            (DefaultSchedule::Fixed(_), _) if key.1 == FLAT => {
                self.fixed_schedule(Algorithm::Star, root)?
            }
            (DefaultSchedule::Fixed(algorithm), _) => self.fixed_schedule(*algorithm, root)?,
            (DefaultSchedule::Planned(_), None) => unreachable!("planned when made"),
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

    /// Whether a broadcast of `bytes` bytes moves by single copy: for the default schedule of a
    /// planned communicator, the transport the planner chose for the size class; otherwise
    /// (fixed default, or a caller's program) from [`CommOptions::direct_min_bytes`] on.
    pub(crate) fn uses_direct(&self, bytes: usize, default_schedule: bool) -> bool {
        match (&self.plan, default_schedule) {
            (Some(plan), true) => {
                plan.class(bytes.max(1).next_power_of_two() as u64).1 == Transport::Direct
            }
            _ => bytes >= self.options.direct_min_bytes,
        }
    }

    /// Whether [`CommRank::broadcast`](crate::CommRank::broadcast) of `bytes` bytes is posted
    /// in shared memory ([`CommOptions::posted_broadcast`]): where ranks share CPUs, the sizes
    /// of [`CommOptions::shared_posted_bytes`] (for a planned communicator whose profile
    /// measured posting on one PU, those its model predicts faster posted);
    /// else for a planned communicator whose profile
    /// measured posting, where the model predicts the post faster than the size's class would
    /// run otherwise; else below [`CommOptions::direct_min_bytes`].
    #[inline]
    pub(crate) fn posts(&self, bytes: usize) -> bool {
        self.may_post(bytes) && self.plan_posts(bytes)
    }

    /// Whether a broadcast of `bytes` bytes may be posted at all: at most the slots' size and,
    /// where ranks share CPUs, in [`CommOptions::shared_posted_bytes`].
    #[inline]
    fn may_post(&self, bytes: usize) -> bool {
        if self.posted.is_none_or(|max| bytes > max) {
            return false;
        }
        !self.shared
            || self
                .options
                .shared_posted_bytes
                .as_ref()
                .is_some_and(|range| range.contains(&bytes))
    }

    /// Whether a `bytes`-byte broadcast is posted, and in no timed class: what
    /// [`timed_class`](Self::timed_class) and [`posts`](Self::posts) answer, looked up in one
    /// word for sizes below 64 bytes (their answers are fixed with the communicator; asked on
    /// every call they cost a 48-byte broadcast about 4 ns: docs/runtime.md, "Seventy-second
    /// session"), `false` from 64.
    #[inline]
    pub(crate) fn posts_untimed(&self, bytes: usize) -> bool {
        bytes < 64 && self.posts_untimed >> bytes & 1 != 0
    }

    /// The timed class of a `bytes`-byte broadcast ([`CommOptions::timed_posting`]), if it is
    /// in one.
    #[inline]
    pub(crate) fn timed_class(&self, bytes: usize) -> Option<usize> {
        let k = class_of(bytes);
        (self.core.choice.is_timed(k) && self.may_post(bytes)).then_some(k)
    }

    /// Whether [`CommRank::broadcast`](crate::CommRank::broadcast) of `bytes` bytes chooses
    /// at run time between posting and [`broadcast_transport`](Self::broadcast_transport)'s
    /// other choice, by the host's latency regime ([`CommOptions::timed_posting`]); then
    /// `broadcast_transport` names the way it starts on.
    ///
    /// ```
    /// use herald::{Comm, CommOptions};
    /// // A fixed schedule never times.
    /// let comm = Comm::with_options(4, CommOptions { cpus: Some(2), ..CommOptions::default() })?;
    /// assert!(!comm.broadcast_timed(4096));
    /// # Ok::<(), herald::runtime::CollectiveError>(())
    /// ```
    #[must_use]
    pub fn broadcast_timed(&self, bytes: usize) -> bool {
        self.timed_class(bytes).is_some()
    }

    /// The state a new endpoint's timed classes start from.
    pub(crate) fn chooser_start(&self) -> Chooser {
        self.chooser
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Keeps what rank 0's endpoint learnt, for the next [`ranks`](Self::ranks).
    pub(crate) fn keep_chooser(&self, learnt: &Chooser) {
        *self.chooser.lock().unwrap_or_else(PoisonError::into_inner) = learnt.restarted();
    }

    /// The plan's way for a broadcast of `bytes` bytes that may be posted.
    #[inline]
    pub(crate) fn plan_posts(&self, bytes: usize) -> bool {
        if self.shared {
            return match self.plan.as_ref().and_then(|p| p.shared_posted_at.as_ref()) {
                Some(at) => super::posted::shared_posted_lines(bytes)
                    .is_some_and(|l| at.get(l) == Some(&true)),
                None => true,
            };
        }
        match &self.plan {
            Some(plan) if plan.posted_modelled => plan.posted_at.get(bytes) == Some(&true),
            _ => bytes < self.options.direct_min_bytes,
        }
    }

    /// The cache key of the default program: the root, and the size class where it matters.
    pub(crate) fn program_key(&self, root: usize, bytes: usize) -> (u32, u64) {
        match &self.options.schedule {
            DefaultSchedule::Fixed(_) if self.flat => (root as u32, FLAT),
            DefaultSchedule::Fixed(_) => (root as u32, 0),
            DefaultSchedule::Planned(_) => (root as u32, bytes.max(1).next_power_of_two() as u64),
        }
    }

    /// Compiles the default broadcast programs for `roots` now, in every size class the
    /// schedule distinguishes, so that no later call from these roots generates or compiles
    /// one (a call from another root does, once, and caches it). Root 0's are compiled when
    /// the communicator is made.
    ///
    /// # Errors
    ///
    /// [`CollectiveError::Root`] for a root outside the communicator; otherwise as
    /// [`Comm::with_options`].
    ///
    /// ```
    /// let comm = herald::Comm::new(4)?;
    /// comm.prepare(0..4)?;
    /// assert!(comm.prepare([4]).is_err());
    /// # Ok::<(), herald::runtime::CollectiveError>(())
    /// ```
    pub fn prepare(&self, roots: impl IntoIterator<Item = usize>) -> Result<(), CollectiveError> {
        let classes: Vec<usize> = match self.plan {
            Some(ref p) => (0..p.classes.len()).map(|log2| 1usize << log2).collect(),
            // A fixed schedule has one key per root (the flat tree's, or the schedule's).
            None => vec![1],
        };
        for root in roots {
            if root >= self.size {
                return Err(CollectiveError::Root {
                    root,
                    size: self.size,
                });
            }
            for &bytes in &classes {
                self.default_program(root, bytes)?;
            }
        }
        Ok(())
    }

    /// The reduction tree: the radix of the default broadcast's tree family.
    pub(crate) fn ordered_tree(&self) -> OrderedTree {
        OrderedTree::new(self.size, self.radix)
    }

    /// The radix of the default broadcast's tree family (star: flat, k-nomial: its radix,
    /// otherwise binomial); under the planner, of its tree for an 8-byte payload (the
    /// reduction is its time reversal).
    fn tree_radix(&self) -> usize {
        let family = |a: Algorithm| match a {
            Algorithm::Star => self.size,
            Algorithm::Knomial { radix } => radix as usize,
            Algorithm::Dtree { d } if d as usize + 1 >= self.size => self.size,
            _ => 2,
        };
        match (&self.options.schedule, &self.plan) {
            (DefaultSchedule::Planned(_), Some(plan)) => family(plan.class(8).0.algorithm),
            (DefaultSchedule::Fixed(a), _) => family(*a),
            (DefaultSchedule::Planned(_), None) => 2,
        }
    }
}

/// The default largest shared-memory allreduce when ranks share CPUs (see
/// [`CommOptions::allreduce_shared_max_bytes`]).
const SHARED_MAX_OVERSUBSCRIBED: usize = 4 << 10;

/// The default largest shared-memory allreduce of `size` ranks that each have a CPU of their
/// own: 4 KiB read from the others' slots per rank, at least 64 bytes (see
/// [`CommOptions::allreduce_shared_max_bytes`]).
fn shared_max(size: usize) -> usize {
    (SHARED_READ_MAX / size.saturating_sub(1).max(1)).max(64)
}

/// The bytes a rank reads from the others' slots in the largest default shared-memory
/// allreduce when ranks have CPUs of their own.
const SHARED_READ_MAX: usize = 4 << 10;

/// The key class of a fixed binomial default's broadcasts sent over the flat tree.
const FLAT: u64 = 1;

/// The machine's online CPUs (`/sys/devices/system/cpu/online`; where it cannot be read, the
/// CPUs this process may run on), read once: the default of [`CommOptions::cpus`]. Not the
/// process's affinity mask: a launcher may bind the process to one CPU while its threads are
/// pinned to others (`mpirun` binds each of two processes to a core). (Under Miri, which
/// cannot read either: unbounded, so ranks never share CPUs.)
fn online_cpus() -> usize {
    if cfg!(miri) {
        return usize::MAX;
    }
    static ONLINE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    // 0 if neither can be read: then ranks are never taken to share CPUs.
    *ONLINE.get_or_init(|| {
        std::fs::read_to_string("/sys/devices/system/cpu/online")
            .ok()
            .and_then(|s| count_cpu_list(s.trim()))
            .filter(|&n| n > 0)
            .unwrap_or_else(|| crate::runtime::Team::available_cpus().len())
    })
}

/// The number of CPUs in a kernel CPU list (`0-3,5,7-8`), if it is one.
fn count_cpu_list(list: &str) -> Option<usize> {
    list.split(',').try_fold(0usize, |n, part| {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?),
            None => {
                let a = part.parse::<usize>().ok()?;
                (a, a)
            }
        };
        (b >= a).then(|| n + b - a + 1)
    })
}

/// The most ranks this process can have: the OS thread limit, capped at [`MAX_COMM_RANKS`].
/// (Not read under Miri, whose isolation has no `/proc`.)
fn max_ranks() -> usize {
    if cfg!(miri) {
        return MAX_COMM_RANKS;
    }
    std::fs::read_to_string("/proc/sys/kernel/threads-max")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .map_or(MAX_COMM_RANKS, |m| m.min(MAX_COMM_RANKS))
}

#[cfg(test)]
mod tests {
    use super::{count_cpu_list, Planned, LOAD_PER_HOP};
    use crate::model::Profile;

    /// The development machine's calibration that met both of its latency modes (runtime
    /// regimes of raw hops 50 and 210 ns), on the levels it measured.
    fn two_modes() -> (Profile, crate::Hierarchy) {
        crate::model::fixtures::on_two_cores("profile-2core-two-modes.json")
    }

    /// Each regime's stamp load, (hop, load) in ns, as a timed class of 4 ranks on 2 CPUs
    /// would choose by.
    fn regimes(profile: Profile, machine: crate::Hierarchy) -> Vec<(f64, f64)> {
        let table = Planned::new(profile, machine)
            .table(4, Some(8192), true)
            .unwrap();
        table.regimes.iter().map(|(_, h, l)| (*h, *l)).collect()
    }

    #[test]
    fn regimes_tell_a_stamp_load_calibrated_or_from_the_hop() {
        let (mut profile, machine) = two_modes();
        // That profile did not time the stamp: each regime's load is a fixed share of its hop.
        let old = regimes(profile.clone(), machine.clone());
        assert_eq!(old.len(), 2, "{old:?}");
        assert!(
            old[0].0 * 1.5 < old[1].0,
            "the dominant regime is the near one: {old:?}"
        );
        for &(hop, load) in &old {
            assert!((load - hop * LOAD_PER_HOP).abs() < 1e-9, "{old:?}");
        }
        // With the load timed in each regime (figures off that share, as the sixty-fifth
        // session's state was), the calibrated loads, each in its own regime.
        let level = profile
            .levels
            .iter_mut()
            .find(|l| l.runtime.is_some())
            .unwrap();
        let runtime = level.runtime.as_mut().unwrap();
        let mut loads = runtime.one_line_ns.clone();
        assert_eq!(loads.modes.len(), 2);
        let near = loads.modes[0].regime_hop_ns < loads.modes[1].regime_hop_ns;
        let (near_load, far_load) = (33.0, 222.0);
        loads.modes[0].center = if near { near_load } else { far_load };
        loads.modes[1].center = if near { far_load } else { near_load };
        runtime.stamp_load_ns = Some(loads);
        let new = regimes(profile, machine);
        assert_eq!(new.len(), 2, "{new:?}");
        // The hops are as before; the loads are the calibrated ones.
        assert_eq!((new[0].0, new[1].0), (old[0].0, old[1].0));
        assert!((new[0].1 - near_load).abs() < 1e-3, "{new:?}");
        assert!((new[1].1 - far_load).abs() < 1e-3, "{new:?}");
    }

    /// The one-word answer for sizes below a line agrees, size by size, with what
    /// [`Comm::timed_class`] and [`Comm::posts`] answer, over communicators whose small sizes
    /// are posted, timed, outside the posted range, or never posted.
    #[test]
    fn posts_untimed_answers_as_the_class_and_plan_do() {
        use super::{Comm, CommOptions, DefaultSchedule, TimedPosting};
        let (profile, machine) = two_modes();
        let planned = || DefaultSchedule::Planned(Planned::new(profile.clone(), machine.clone()));
        let on = |cpus| CommOptions {
            cpus: Some(cpus),
            ..CommOptions::default()
        };
        let cases = [
            (2, on(2)),
            (3, on(2)),
            (4, on(2)),
            (8, on(2)),
            (4, on(4)),
            (
                2,
                CommOptions {
                    posted_broadcast: false,
                    ..on(2)
                },
            ),
            (
                4,
                CommOptions {
                    shared_posted_bytes: Some(16..=40),
                    ..on(2)
                },
            ),
            (
                2,
                CommOptions {
                    schedule: planned(),
                    ..on(2)
                },
            ),
            (
                4,
                CommOptions {
                    schedule: planned(),
                    ..on(2)
                },
            ),
            (
                4,
                CommOptions {
                    schedule: planned(),
                    timed_posting: TimedPosting::Always,
                    ..on(2)
                },
            ),
            (
                2,
                CommOptions {
                    schedule: planned(),
                    timed_posting: TimedPosting::Alternate,
                    ..on(2)
                },
            ),
        ];
        let (mut posted, mut not, mut timed) = (0, 0, 0);
        for (size, options) in cases {
            let comm = Comm::with_options(size, options).unwrap();
            for b in 0..80 {
                let slow = comm.timed_class(b).is_none() && comm.posts(b);
                let expected = b < 64 && slow;
                assert_eq!(comm.posts_untimed(b), expected, "{size} ranks, {b} bytes");
                if b < 64 {
                    posted += usize::from(slow);
                    not += usize::from(!slow);
                    timed += usize::from(comm.timed_class(b).is_some());
                }
            }
        }
        // Not vacuous: the cases hold sizes of each kind.
        assert!(posted > 0 && not > 0 && timed > 0, "{posted} {not} {timed}");
    }

    #[test]
    fn cpu_lists_count() {
        assert_eq!(count_cpu_list("0-1"), Some(2));
        assert_eq!(count_cpu_list("0"), Some(1));
        assert_eq!(count_cpu_list("0-3,5,7-8"), Some(7));
        assert_eq!(count_cpu_list(""), None);
        assert_eq!(count_cpu_list("3-1"), None);
    }
}
