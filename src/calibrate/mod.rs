//! Calibration: measure `L`, `o_s`, `o_r`, `g`, `G` and the postal λ at every level of the
//! machine's hierarchy, honestly about noise, into a [`Profile`].
//!
//! 1. `probes` — PRTT round trips on `runtime` channels, direct receive overheads, raw atomic
//!    ping-pong, concurrent ping-pongs for capacity; pinned two-rank teams.
//! 2. `fit` — least squares from PRTT times to LogGP parameters ([`fit_prtt`]).
//! 3. `modes` — distributions and the mode finder ([`find_modes`], [`distribution`]).
//!
//! # Pairs
//!
//! For each level above the PUs, the first node with at least two children gives the pair: the
//! first PU of its first child (client) and the first PU of its second child (server); their
//! lowest common ancestor is that level. A level whose nodes all have one child has no such pair
//! (no transfer has its LCA there): it is recorded with every parameter `null` and a note.
//!
//! # The PRTT method (Hoefler, Lichei & Rehm, *Low-Overhead LogGP Parameter Assessment for
//! Modern Interconnection Networks*, IPDPS 2007; Netgauge's `loggp` pattern)
//!
//! `PRTT(n, d, s)`: the client sends `n` messages of `s` lines, busy-waiting `d` after each but
//! the last; the server receives all `n` and answers with one message of `s` lines; the time is
//! taken at the client from its first send to the end of the answer. With LogGP parameters
//! (`G` per additional line):
//!
//! ```text
//! PRTT(1, 0, s) = 2·(o_s + L + o_r + (s−1)·G)
//! PRTT(n, 0, s) = PRTT(1, 0, s) + (n−1)·(g + (s−1)·G)     (sends limited by the gap)
//! PRTT(n, d, s) = PRTT(1, 0, s) + (n−1)·(o_s(s) + d)       (d > g: limited by the sender)
//! ```
//!
//! so, over sizes `s = 1, 2, 4, …` lines, each fitted by least squares to a line in `s − 1`
//! (on the longest prefix of sizes, smallest first, whose points all lie within 10 % + 2 ns of
//! the line: Netgauge's protocol-change rule, simplified, so a large burst in another hardware
//! regime does not distort the one-line values):
//!
//! * `g + (s−1)·G = (PRTT(n,0,s) − PRTT(1,0,s)) / (n−1)`: intercept `g`, slope `G` (per line;
//!   `G_ns_per_byte = G / 56`, the payload bytes of a line);
//! * `o_s(s) = (PRTT(n,d,s) − PRTT(1,0,s) − Σd) / (n−1)`, with `Σd` the delays actually spun
//!   (read from the clock), and `o_s = o_s(1)` (the intercept);
//! * `o_r(s)` is measured directly, as Netgauge does at the server: the server sends a "go"
//!   line, busy-waits `2·PRTT(1,0,s) + 500 ns` (the answer has surely arrived), then times the
//!   receipt of the `s` lines; `o_r = o_r(1)` (the intercept);
//! * the one-way time `T = o_s + L + o_r` is the intercept of `PRTT(1,0,s)/2`, and
//!   `L = T − o_s − o_r`.
//!
//! `n = 10` (Netgauge's). `d = PRTT(1,0,s)` as Netgauge chooses, taken from the previous slice
//! and raised to at least twice the previous slice's gap, so `d > g` holds even across a
//! switch between regimes; a slice whose measured gap exceeds its `d` is discarded. Every timed
//! interval has the cost of one clock read (median of consecutive `Instant::now()` differences)
//! subtracted; the spun delays `Σd` are measured between clock reads, so `o_s` also has one
//! clock read subtracted.
//!
//! On shared memory the line moves when the receiver reads it and when the sender claims it
//! for writing, so `o_s` and `o_r` contain coherence misses and `L` (what is left) is small and
//! may come out negative. That is a finding, not an error: `L + o_s + o_r` is the one-way time
//! in any case, and the conversions in `model::profile` keep it.
//!
//! # λ
//!
//! `λ = (L + o_s + o_r) / max(g, o_s)`: the postal model's unit is the time a sender is
//! occupied by one send, and a sender can start one send per `max(g, o_s)` (its overhead or
//! the gap, whichever binds); the latency is the one-way time from the start of a send until
//! the data is usable. Computed per slice, then summarized like every parameter.
//!
//! # Raw hop
//!
//! The honest baseline: two threads bounce a counter on one cache line (`AtomicU64`, store
//! `Release`, spin on `load(Acquire)`); one-way = round trip / 2, timed over all of a slice's
//! round trips at once (as `herald bench hop` does): a VM's clock may step in 10 ns, a few ticks
//! of one round trip, and a clock read inside the loop would sit on its path. The PRTT probes are
//! timed one round trip at a time, as Netgauge does, so their medians are multiples of the
//! clock's resolution ([`Profile::clock_resolution_ns`]).
//!
//! # Noise
//!
//! Measuring runs in slices of tens of milliseconds: in each slice every probe runs `reps`
//! times for every size (probes and sizes interleaved), the slice keeps the medians and fits
//! them, giving one value per parameter per slice, weighted by the slice's duration. Slices of
//! different levels alternate. Every few slices the modes of each parameter are recomputed
//! ([`find_modes`]); a parameter is *settled* when its number of modes and every mode center
//! (within 3 %, or 1 ns) have not changed over three checks. Measuring stops when every
//! parameter is settled and the minimum time has passed, or when the budget ends; what did not
//! settle is listed in [`Profile::unsettled`]. The runtime's quantities count as unsettled too
//! while a latency regime that the one-line call met in enough slices to name lacks some
//! quantity (fifty-seventh session): measuring goes on, within the budget, until every
//! quantity has that regime's mode.
//!
//! # Shared CPUs
//!
//! `switch_ns`: two threads pinned to one CPU ping-pong on a line, yielding while they wait;
//! half the round trip is the cost of a message whose receiver must first be scheduled. The
//! runtime's planner adds it to every latency when ranks outnumber CPUs. `spin_ns`: one spin
//! phase of the runtime's waits (its polls one spin hint apart), timed eight times a slice
//! where nothing ends it; a single copy's lender spins that long on each turn once only
//! readers on other CPUs are left.
//!
//! # Capacity
//!
//! For a level with room for `k ≥ 2` disjoint pairs of PUs under one node, each with its LCA at
//! that level, `1, 2, 4, …, k` pairs ping-pong at once; the capacity is the largest count whose
//! per-transfer time stays within 25 % of a lone transfer's ([`capacity_from_curve`]). With
//! fewer than two such pairs the capacity is `null` (unknown).

mod fit;
mod modes;
mod probes;
mod runtime_probe;
mod settle;

pub use fit::{capacity_from_curve, fit_prtt, FitError, LogGpFit, PrttPoint};
pub use modes::{distribution, find_modes, nearest_mode};
pub use probes::{clock_overhead, clock_resolution, spin_for};
pub use settle::{Settling, QUANTITIES, STABLE_CHECKS};

use crate::model::{
    host_name, Capacity, Distribution, Hierarchy, LevelProfile, Profile, TopologySummary,
    PROFILE_SCHEMA,
};
use crate::runtime::RuntimeError;
use probes::{Pair, SliceData, SlicePlan};
use std::time::{Duration, Instant, SystemTime};

/// Why calibration failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrateError {
    /// The probe threads could not be started.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A probe failed (a peer stopped answering, a channel closed).
    #[error("probe failed: {0}")]
    Probe(String),
    /// The options are unusable.
    #[error("invalid calibration options: {0}")]
    Options(&'static str),
}

/// How to calibrate: the probe settings (herald-mpi's calibration over MPI takes the same, plus
/// its large message sizes).
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrateOptions {
    /// `quick` or `full` (recorded in the profile).
    pub mode: &'static str,
    /// Measure at least this long, even when everything settled earlier.
    pub min_time: Duration,
    /// Stop measuring after this long, settled or not.
    pub budget: Duration,
    /// Target duration of one slice.
    pub slice: Duration,
    /// Message sizes in lines (at least two distinct).
    pub sizes: Vec<u32>,
    /// Messages per multi-message probe (Netgauge's `n`).
    pub n: u32,
    /// Raw ping-pong round trips per slice.
    pub hops: u32,
}

impl CalibrateOptions {
    /// Under 10 s in all: 2 s to 6 s of measuring, sizes 1, 2, 4, 8 lines.
    pub fn quick() -> CalibrateOptions {
        CalibrateOptions {
            mode: "quick",
            min_time: Duration::from_secs(2),
            budget: Duration::from_secs(6),
            slice: Duration::from_millis(15),
            sizes: vec![1, 2, 4, 8],
            n: 10,
            hops: 64,
        }
    }

    /// Under 2 minutes in all: 30 s to 90 s of measuring, sizes 1 to 16 lines.
    pub fn full() -> CalibrateOptions {
        CalibrateOptions {
            mode: "full",
            min_time: Duration::from_secs(30),
            budget: Duration::from_secs(90),
            slice: Duration::from_millis(30),
            sizes: vec![1, 2, 4, 8, 16],
            n: 10,
            hops: 128,
        }
    }

    /// Checks what every calibration needs: two distinct positive sizes, `n ≥ 2`, at least
    /// one hop, `min_time ≤ budget`.
    ///
    /// # Errors
    /// [`CalibrateError::Options`] naming the first setting that fails.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::calibrate::CalibrateOptions;
    /// assert!(CalibrateOptions::quick().validate().is_ok());
    /// let one_size = CalibrateOptions { sizes: vec![4, 4], ..CalibrateOptions::quick() };
    /// assert!(one_size.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), CalibrateError> {
        let mut sizes = self.sizes.clone();
        sizes.sort_unstable();
        sizes.dedup();
        if sizes.len() < 2 || sizes[0] == 0 {
            return Err(CalibrateError::Options("need two distinct positive sizes"));
        }
        if self.n < 2 {
            return Err(CalibrateError::Options("n must be ≥ 2"));
        }
        if self.min_time > self.budget || self.hops == 0 {
            return Err(CalibrateError::Options(
                "min_time exceeds budget, or no hops",
            ));
        }
        Ok(())
    }

    /// [`validate`](Self::validate), and `n·s` lines must fit the probes' rings.
    fn check(&self) -> Result<(), CalibrateError> {
        self.validate()?;
        let largest = self.sizes.iter().max().copied().unwrap_or(1);
        if u64::from(self.n) * u64::from(largest) + 2 > probes::RING_LINES as u64 {
            return Err(CalibrateError::Options("n·s must fit the ring"));
        }
        Ok(())
    }
}

/// Where calibration stands, for progress reports.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Time spent measuring so far.
    pub elapsed: Duration,
    /// The budget.
    pub budget: Duration,
    /// Slices measured so far (all levels).
    pub slices: usize,
    /// Quantities (`level.key`) not settled yet.
    pub unsettled: Vec<String>,
}

/// The state of one measured level.
struct Probe {
    depth: usize,
    pair: Pair,
    /// herald's runtime measured through its own calls on the same pair.
    runtime: runtime_probe::RuntimeProbe,
    /// The runtime probe's regimes not yet measured in every quantity, as of the last check
    /// ([`runtime_probe::RuntimeProbe::incomplete_regimes`]): unsettled until empty.
    incomplete: Vec<String>,
    os: [usize; 2],
    samples: Settling,
    /// Per recorded slice (as `samples`), the runtime probe's raw hop right before and right
    /// after it: the latency regime it ran in where both name the same one.
    around: Vec<[f64; 2]>,
    discarded: usize,
    last: Option<SliceData>,
    reps: u32,
}

impl Probe {
    fn plan(&self, opts: &CalibrateOptions, clock: f64) -> SlicePlan {
        let (delay, wait) = match &self.last {
            Some(last) => last
                .points
                .iter()
                .zip(&last.gaps)
                .map(|(p, &gap)| {
                    let d = p.prtt_1_0.max(2.0 * gap).max(100.0);
                    (d, 2.0 * p.prtt_1_0.max(0.0) + 500.0)
                })
                .unzip(),
            None => (
                vec![2000.0; opts.sizes.len()],
                vec![5000.0; opts.sizes.len()],
            ),
        };
        SlicePlan {
            sizes: opts.sizes.clone(),
            n: opts.n,
            reps: self.reps,
            delay,
            wait,
            hops: opts.hops,
            clock,
        }
    }

    /// Runs one slice and records it (the first slice of a level only warms up), between two
    /// raw hops of the runtime probe (its pair of PUs, its way of timing a hop: one line each
    /// way), which name the latency regime the slice ran in.
    fn step(&mut self, opts: &CalibrateOptions, clock: f64) -> Result<(), CalibrateError> {
        let plan = self.plan(opts, clock);
        let before = self.runtime.raw_hop(clock)?.0;
        let t0 = Instant::now();
        let data = self.pair.slice(&plan)?;
        let took = t0.elapsed();
        let after = self.runtime.raw_hop(clock)?.0;
        // Aim the next slice at the target duration.
        let scale = opts.slice.as_secs_f64() / took.as_secs_f64().max(1e-6);
        self.reps = ((f64::from(self.reps) * scale).round() as u32).clamp(2, 4096);
        let warm = self.last.is_some();
        let valid = data
            .gaps
            .iter()
            .zip(&plan.delay)
            .all(|(&gap, &d)| gap.is_finite() && gap < d);
        if warm && valid {
            if let Ok(fit) = fit_prtt(opts.n, &data.points) {
                self.samples.push(
                    [
                        data.raw_hop,
                        fit.one_way,
                        fit.l,
                        fit.o_s,
                        fit.o_r,
                        fit.g,
                        fit.big_g_byte,
                        fit.lambda,
                    ],
                    took.as_secs_f64(),
                );
                self.around.push([before, after]);
            } else {
                self.discarded += 1;
            }
        } else if warm {
            self.discarded += 1;
        }
        self.last = Some(data);
        Ok(())
    }
}

/// The pair of logical PUs whose LCA is level `depth`: the first PUs of the first two children
/// of the first node there with at least two children.
fn pair_at(h: &Hierarchy, depth: usize) -> Option<(usize, usize)> {
    let below = h.levels().get(depth + 1)?;
    let node = h
        .level(depth)
        .nodes()
        .iter()
        .find(|n| n.children().len() >= 2)?;
    let mut children = node.children();
    let a = below.nodes()[children.next()?].pus().start;
    let b = below.nodes()[children.next()?].pus().start;
    Some((a, b))
}

/// Disjoint pairs of logical PUs under one node of level `depth`, each pair's LCA at that level
/// (greedy: always pair PUs of the two children with the most PUs left; one PU per core).
fn disjoint_pairs(h: &Hierarchy, depth: usize) -> Vec<(usize, usize)> {
    let Some(below) = h.levels().get(depth + 1) else {
        return Vec::new();
    };
    let core_depth = h.find(crate::model::LevelKind::Core);
    let mut best = Vec::new();
    for node in h.level(depth).nodes() {
        let mut groups: Vec<Vec<usize>> = node
            .children()
            .map(|c| {
                below.nodes()[c]
                    .pus()
                    .filter(|&pu| {
                        // One PU per core: skip SMT siblings (unless cores are below this level).
                        core_depth.is_none_or(|cd| {
                            cd <= depth || pu == 0 || h.node_of(cd, pu) != h.node_of(cd, pu - 1)
                        })
                    })
                    .collect()
            })
            .collect();
        let mut pairs = Vec::new();
        loop {
            groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
            if groups.len() < 2 || groups[1].is_empty() {
                break;
            }
            let (a, b) = (groups[0].remove(0), groups[1].remove(0));
            pairs.push((a, b));
        }
        if pairs.len() > best.len() {
            best = pairs;
        }
    }
    best
}

/// Measures the capacity of a level, or `None` with the reason.
fn capacity(
    h: &Hierarchy,
    depth: usize,
    opts: &CalibrateOptions,
    clock: f64,
) -> Result<Result<Capacity, String>, CalibrateError> {
    let pairs = disjoint_pairs(h, depth);
    if pairs.len() < 2 {
        return Ok(Err(format!(
            "capacity unknown: it needs at least 2 disjoint pairs of PUs under one node with their \
             lowest common ancestor at this level; this machine has {}",
            pairs.len()
        )));
    }
    let os: Vec<(usize, usize)> = pairs
        .iter()
        .map(|&(a, b)| (h.os_index(a), h.os_index(b)))
        .collect();
    let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |k| Some(k * 2))
        .take_while(|&k| k < os.len())
        .collect();
    counts.push(os.len());
    let mut curve = Vec::new();
    for &k in &counts {
        let mut runs = Vec::new();
        for _ in 0..5 {
            runs.push(probes::concurrent_hops(&os[..k], opts.hops * 4, clock)?);
        }
        curve.push((k as u32, crate::stats::median(&runs)));
    }
    Ok(match capacity_from_curve(&curve, 0.25) {
        Some((transfers, at_least)) => Ok(Capacity {
            transfers,
            at_least,
            curve,
        }),
        None => Err("capacity unknown: no lone-transfer measurement".into()),
    })
}

/// Measures this machine's hierarchy `h` (from [`TopologySource::Machine`](crate::TopologySource))
/// and returns its profile. `progress` is called after every slice.
///
/// # Errors
///
/// [`CalibrateError`] if the options are unusable, threads cannot be pinned, or a probe stalls.
pub fn calibrate(
    h: &Hierarchy,
    opts: &CalibrateOptions,
    mut progress: impl FnMut(&Progress),
) -> Result<Profile, CalibrateError> {
    opts.check()?;
    let clock = probes::clock_overhead();
    // Measured once: the runtime probes spread their medians over it, and the profile records it.
    let step = probes::clock_resolution();
    let mut levels: Vec<LevelProfile> = Vec::new();
    let mut probes: Vec<(usize, Probe)> = Vec::new();
    for depth in 0..h.pu_level() {
        let name = h.level(depth).name();
        let mut level = LevelProfile::unmeasured(
            name,
            depth,
            "not measurable: every node of this level has one child, so no two PUs have their \
             lowest common ancestor here",
        );
        if let Some((a, b)) = pair_at(h, depth) {
            let os = [h.os_index(a), h.os_index(b)];
            level.pair = Some(os);
            level.note = None;
            probes.push((
                levels.len(),
                Probe {
                    depth,
                    pair: Pair::new(os[0], os[1])?,
                    runtime: runtime_probe::RuntimeProbe::new(os[0], os[1], step)?,
                    incomplete: Vec::new(),
                    os,
                    samples: Settling::default(),
                    around: Vec::new(),
                    discarded: 0,
                    last: None,
                    reps: 4,
                },
            ));
        }
        levels.push(level);
    }
    let mut shared = probes::SharedPair::new(h.os_index(0))?;
    let mut switch: Vec<(f64, f64)> = Vec::new();
    let mut spin: Vec<(f64, f64)> = Vec::new();
    let start = Instant::now();
    let mut slices = 0usize;
    let mut since_check = 0usize;
    while !probes.is_empty() {
        for (_, p) in probes.iter_mut() {
            p.step(opts, clock)?;
            p.runtime.step(clock)?;
            slices += 1;
        }
        let t0 = Instant::now();
        let one_way = shared.slice(opts.hops / 4 + 1, clock)?;
        switch.push((one_way, t0.elapsed().as_secs_f64()));
        let t0 = Instant::now();
        let phase = probes::spin_phase(8, clock);
        spin.push((phase, t0.elapsed().as_secs_f64()));
        since_check += 1;
        if since_check >= 10 {
            since_check = 0;
            probes.iter_mut().for_each(|(_, p)| {
                p.samples.check();
                p.incomplete = p.runtime.incomplete_regimes();
            });
        }
        let elapsed = start.elapsed();
        let unsettled: Vec<String> = probes
            .iter()
            .flat_map(|(i, p)| {
                let name = &levels[*i].name;
                let mut u = p.samples.unsettled(name);
                u.extend(p.incomplete.iter().map(|r| format!("{name}.{r}")));
                u
            })
            .collect();
        progress(&Progress {
            elapsed,
            budget: opts.budget,
            slices,
            unsettled: unsettled.clone(),
        });
        if elapsed >= opts.budget || (elapsed >= opts.min_time && unsettled.is_empty()) {
            break;
        }
    }
    let duration = start.elapsed();
    let mut unsettled = Vec::new();
    for (i, p) in &probes {
        let level = &mut levels[*i];
        debug_assert_eq!(level.depth, p.depth);
        let regimes = p.runtime.regimes();
        let d: Vec<Option<Distribution>> = (0..QUANTITIES.len())
            .map(|k| match p.samples.distribution(k) {
                // The raw hop stays the channel probe's own (one shared line).
                Some(d) if k > 0 => {
                    Some(in_regimes(d, &p.samples.weighted(k), &p.around, &regimes))
                }
                d => d,
            })
            .collect();
        let mut d = d.into_iter();
        level.raw_hop_ns = d.next().flatten();
        level.one_way_ns = d.next().flatten();
        level.l_ns = d.next().flatten();
        level.o_s_ns = d.next().flatten();
        level.o_r_ns = d.next().flatten();
        level.g_ns = d.next().flatten();
        level.big_g_ns_per_byte = d.next().flatten();
        level.lambda = d.next().flatten();
        level.slices = p.samples.len();
        level.runtime = p.runtime.calibration();
        unsettled.extend(p.samples.unsettled(&level.name));
        unsettled.extend(
            p.runtime
                .incomplete_regimes()
                .into_iter()
                .map(|r| format!("{}.{r}", level.name)),
        );
        let mut notes = Vec::new();
        if p.discarded > 0 {
            notes.push(format!(
                "{} slices discarded (gap ≥ delay d, e.g. at a regime switch)",
                p.discarded
            ));
        }
        match capacity(h, p.depth, opts, clock)? {
            Ok(c) => level.capacity = Some(c),
            Err(why) => notes.push(why),
        }
        debug_assert!(p.os[0] != p.os[1]);
        level.note = (!notes.is_empty()).then(|| notes.join("; "));
    }
    Ok(Profile {
        schema: PROFILE_SCHEMA,
        host: host_name(),
        cpu: crate::model::this_cpu(),
        date: utc_now(),
        tool: format!("herald {}", env!("CARGO_PKG_VERSION")),
        mode: opts.mode.to_owned(),
        duration_s: duration.as_secs_f64(),
        clock_overhead_ns: clock,
        clock_resolution_ns: Some(step),
        topology: TopologySummary::of(h),
        levels,
        unsettled,
        switch_ns: per_slice(&switch),
        spin_ns: per_slice(&spin),
        combine_ns: Vec::new(),
        posted: Vec::new(),
        posted_allreduce: Vec::new(),
    })
}

/// A channel probe quantity's distribution `d` (of `values`, one per recorded slice) with its
/// modes in the host's latency regimes `regimes` (the runtime probe's,
/// [`runtime_probe::RuntimeProbe::regimes`]), where they have enough slices: each slice counts
/// in the regime both hops `around` it name, and a slice whose two hops name different
/// regimes is left out ([`runtime_probe::regime_distribution`]). So L, o and g name the
/// regime of each mode ([`Mode::regime_hop_ns`](crate::model::Mode::regime_hop_ns)), as the
/// runtime's quantities do, and the runtime model prices both in one regime (docs/fidelity.md,
/// "Seventy-third session"). `d`'s settling is kept; `d` itself where no regime has enough
/// slices.
fn in_regimes(
    d: Distribution,
    values: &[(f64, f64)],
    around: &[[f64; 2]],
    regimes: &[crate::model::Mode],
) -> Distribution {
    debug_assert_eq!(values.len(), around.len());
    let tagged: Vec<(f64, f64, Option<usize>)> = values
        .iter()
        .zip(around)
        .map(|(&(v, w), &[a, b])| {
            let (a, b) = (nearest_mode(regimes, a), nearest_mode(regimes, b));
            (v, w, a.filter(|_| a == b))
        })
        .collect();
    let grouped = runtime_probe::regime_distribution(&tagged, regimes);
    if grouped.modes.iter().all(|m| m.regime_hop_ns.is_some()) && !grouped.modes.is_empty() {
        Distribution {
            settled: d.settled,
            ..grouped
        }
    } else {
        d
    }
}

/// A quantity timed once a slice (value, weight): its distribution, settled after 10 slices;
/// `None` before any.
fn per_slice(samples: &[(f64, f64)]) -> Option<Distribution> {
    (!samples.is_empty()).then(|| {
        let mut d = distribution(samples);
        d.settled = samples.len() >= 10;
        d
    })
}

/// The current UTC time as RFC 3339 with whole seconds (`2026-11-22T14:59:05Z`; `humantime`).
pub fn utc_now() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::{distribution, in_regimes, utc_now};
    use crate::model::fixtures::point_mode;
    use std::time::{Duration, SystemTime};

    /// A channel quantity's modes are the regimes both hops around its slices name; slices
    /// whose hops disagree are left out; too few slices in every regime keep the plain modes.
    #[test]
    fn channel_quantities_take_the_regime_of_the_hops_around_their_slice() {
        let hop = |center: f64| point_mode(center, 0.5, None);
        let regimes = [hop(200.0), hop(52.0)];
        // 12 slices near (L 30 ns), 9 far (L 150), 6 across a switch (L 1000).
        let mut values = Vec::new();
        let mut around = Vec::new();
        for (n, v, a) in [(12, 30.0, [50.0, 55.0]), (9, 150.0, [205.0, 190.0])] {
            values.extend((0..n).map(|_| (v, 1.0)));
            around.extend((0..n).map(|_| a));
        }
        values.extend((0..6).map(|_| (1000.0, 1.0)));
        around.extend((0..6).map(|_| [52.0, 200.0]));
        let mut plain = distribution(&values);
        plain.settled = true;
        let d = in_regimes(plain.clone(), &values, &around, &regimes);
        assert!(d.settled);
        assert_eq!(d.samples, 21);
        let modes: Vec<(f64, Option<f64>, usize)> = d
            .modes
            .iter()
            .map(|m| (m.center, m.regime_hop_ns, m.samples))
            .collect();
        assert_eq!(modes, [(30.0, Some(52.0), 12), (150.0, Some(200.0), 9)]);
        assert!((d.modes[0].share - 12.0 / 21.0).abs() < 1e-12);
        // Fewer than 8 slices in every regime: the plain distribution.
        let few = in_regimes(plain.clone(), &values[5..16], &around[5..16], &regimes);
        assert_eq!(few.modes.len(), plain.modes.len());
        assert!(few.modes.iter().all(|m| m.regime_hop_ns.is_none()));
    }

    /// `utc_now` is RFC 3339 UTC with whole seconds, and it is now: parsed back, it lies between
    /// the clock read before it (truncated to the second) and the one after it.
    #[test]
    fn utc_now_is_rfc3339_and_now() {
        let before = SystemTime::now();
        let text = utc_now();
        let after = SystemTime::now();
        assert_eq!(text.len(), "2026-11-22T14:59:05Z".len(), "{text}");
        assert!(text.ends_with('Z') && text.as_bytes()[10] == b'T', "{text}");
        let parsed = humantime::parse_rfc3339(&text).unwrap();
        assert!(
            parsed + Duration::from_secs(1) > before,
            "{text} before {before:?}"
        );
        assert!(parsed <= after, "{text} after {after:?}");
    }
}
