//! The probes: PRTT round trips over `runtime` channels, direct receive overheads, and a raw
//! atomic ping-pong on one cache line, run by a pinned two-rank [`Team`] (rank 0 the client,
//! rank 1 the server). Protocols are in the `calibrate` module docs.

use super::fit::PrttPoint;
use super::CalibrateError;
use crate::runtime::{channel, Ctx, Line, Receiver, Sender, Team, TryRecvError};
use crate::stats::median;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A wait longer than this means the peer is gone or the protocol broke.
const STALL: Duration = Duration::from_secs(2);
/// Ring capacity of the probe channels: above the largest `n·s` in flight.
pub(crate) const RING_LINES: usize = 512;

/// Nanoseconds since `t0`.
#[inline]
fn since(t0: Instant) -> f64 {
    t0.elapsed().as_nanos() as f64
}

/// The clock's resolution: the step between the values that differences of consecutive
/// `Instant::now()` calls take, in ns (10 ns on the development VM: every interval it times
/// is a multiple of 10 ns, give or take the 1 ns of the conversion from cycles, so short single
/// intervals are quantized; [`crate::stats::smoothed_median`] takes it as its step). 1 where
/// the differences show no step coarser than a nanosecond.
///
/// Until the fifty-sixth session this was the greatest common divisor of the differences,
/// which the conversion's odd nanosecond (differences of 20, 21, 30 and 31 ns) took to 1.
///
/// # Examples
///
/// ```
/// assert!(herald::calibrate::clock_resolution() >= 1.0);
/// ```
pub fn clock_resolution() -> f64 {
    let mut deltas = Vec::with_capacity(20_000);
    let mut last = Instant::now();
    for _ in 0..20_000 {
        let now = Instant::now();
        deltas.push(u64::try_from(now.duration_since(last).as_nanos()).unwrap_or(u64::MAX));
        last = now;
    }
    clock_step_of(&deltas)
}

/// The step of a clock from differences of consecutive reads (ns): the differences grouped
/// into runs of values at most 1 ns apart, the runs holding at least 1 % of them kept, and the
/// least distance between the weighted centres of two neighbouring kept runs; 1 with fewer
/// than two such runs.
fn clock_step_of(deltas: &[u64]) -> f64 {
    let mut sorted = deltas.to_vec();
    sorted.sort_unstable();
    // (weight, sum of values) per run
    let mut runs: Vec<(u64, f64)> = Vec::new();
    let mut prev: Option<u64> = None;
    for &d in &sorted {
        match (prev, runs.last_mut()) {
            (Some(p), Some(run)) if d - p <= 1 => {
                run.0 += 1;
                run.1 += d as f64;
            }
            _ => runs.push((1, d as f64)),
        }
        prev = Some(d);
    }
    let least = (sorted.len() as u64).div_ceil(100).max(1);
    let centres: Vec<f64> = runs
        .iter()
        .filter(|r| r.0 >= least)
        .map(|r| r.1 / r.0 as f64)
        .collect();
    centres
        .windows(2)
        .map(|w| w[1] - w[0])
        .min_by(f64::total_cmp)
        .map_or(1.0, |s| s.max(1.0))
}

/// The cost of one clock read: the mean difference of consecutive `Instant::now()` calls
/// between their 10th and 90th percentiles (the interdecile mean).
///
/// Not the median: where the clock steps coarsely (10 ns on the development VM, see
/// [`clock_resolution`]), the differences fall on two neighbouring steps, and their median
/// lands on one or the other from run to run. `herald calibrate` read 40 ns and `herald
/// fidelity` 30 ns on the same machine on 2026-11-29, and each subtracted its own from every
/// interval it timed: a one-line broadcast measured 10 ns dearer than it was calibrated. The
/// mean of the central differences is the expected cost of a read, which is what each timed
/// interval carries.
///
/// # Examples
///
/// ```
/// assert!(herald::calibrate::clock_overhead().is_finite());
/// ```
pub fn clock_overhead() -> f64 {
    let mut diffs = Vec::with_capacity(20_001);
    let mut last = Instant::now();
    for _ in 0..20_001 {
        let now = Instant::now();
        diffs.push(now.duration_since(last).as_nanos() as f64);
        last = now;
    }
    interdecile_mean(&mut diffs)
}

/// The mean of `v`'s values from its 10th to its 90th percentile (sorts `v`); NaN if empty.
fn interdecile_mean(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let cut = v.len() / 10;
    let mid = &v[cut..v.len() - cut];
    if mid.is_empty() {
        return f64::NAN;
    }
    mid.iter().sum::<f64>() / mid.len() as f64
}

/// Spins for at least `ns` nanoseconds; returns the time actually spun (first to last read).
///
/// # Examples
///
/// ```
/// assert!(herald::calibrate::spin_for(1000.0) >= 1000.0);
/// ```
#[inline]
pub fn spin_for(ns: f64) -> f64 {
    let t0 = Instant::now();
    loop {
        let e = since(t0);
        if e >= ns {
            return e;
        }
    }
}

/// What one slice runs: per size, `reps` rounds of the four probes, then `hops` raw round trips.
#[derive(Debug, Clone)]
pub(crate) struct SlicePlan {
    /// Message sizes in lines.
    pub(crate) sizes: Vec<u32>,
    /// Messages in `PRTT(n, ·, s)`.
    pub(crate) n: u32,
    /// Repetitions of each probe per size.
    pub(crate) reps: u32,
    /// The delay `d` of `PRTT(n, d, s)` per size (ns).
    pub(crate) delay: Vec<f64>,
    /// How long the server waits before timing a receive (ns), per size.
    pub(crate) wait: Vec<f64>,
    /// Raw ping-pong round trips.
    pub(crate) hops: u32,
    /// Clock overhead to subtract (ns).
    pub(crate) clock: f64,
}

/// The raw results of one slice.
#[derive(Debug, Clone)]
pub(crate) struct SliceData {
    /// Per size: the medians over the slice's repetitions.
    pub(crate) points: Vec<PrttPoint>,
    /// Per size: the median per-message gap `(PRTT(n,0,s) − PRTT(1,0,s))/(n − 1)`.
    pub(crate) gaps: Vec<f64>,
    /// Median one-way time of the raw ping-pong (ns).
    pub(crate) raw_hop: f64,
}

/// One rank's channel ends.
#[derive(Debug)]
pub(crate) struct Ends {
    tx: Sender,
    rx: Receiver,
}

/// What a rank returns.
enum RankOut {
    Client {
        /// `[size][rep]` of (prtt_1_0, prtt_n_0, prtt_n_d, delay_total).
        prtt: Vec<Vec<[f64; 4]>>,
        /// Mean raw round trip (ns).
        rtt: f64,
    },
    Server {
        /// `[size][rep]` of o_r.
        o_r: Vec<Vec<f64>>,
    },
}

/// A pinned client/server pair with its channels and ping-pong line.
#[derive(Debug)]
pub(crate) struct Pair {
    team: Team,
    ends: Vec<Ends>,
    flag: CachePadded<AtomicU64>,
}

impl Pair {
    /// A team pinned to OS CPUs `a` (client) and `b` (server), with one ring each way.
    pub(crate) fn new(a: usize, b: usize) -> Result<Pair, CalibrateError> {
        let team = Team::builder().ranks(2).cores(vec![a, b]).build()?;
        let (req_tx, req_rx) = channel(RING_LINES);
        let (rep_tx, rep_rx) = channel(RING_LINES);
        Ok(Pair {
            team,
            ends: vec![
                Ends {
                    tx: req_tx,
                    rx: rep_rx,
                },
                Ends {
                    tx: rep_tx,
                    rx: req_rx,
                },
            ],
            flag: CachePadded::new(AtomicU64::new(0)),
        })
    }

    /// Runs one slice.
    pub(crate) fn slice(&mut self, plan: &SlicePlan) -> Result<SliceData, CalibrateError> {
        self.flag.store(0, Ordering::Relaxed);
        let flag = &self.flag;
        let outs = self.team.run_with(&mut self.ends, |ctx, e| {
            let side = Side { ctx, e, plan, flag };
            if ctx.rank() == 0 {
                side.client()
            } else {
                side.server()
            }
        });
        let mut prtt = None;
        let mut o_r = None;
        let mut rtt = f64::NAN;
        for out in outs {
            match out? {
                RankOut::Client { prtt: p, rtt: r } => {
                    prtt = Some(p);
                    rtt = r;
                }
                RankOut::Server { o_r: o } => o_r = Some(o),
            }
        }
        let (Some(prtt), Some(o_r)) = (prtt, o_r) else {
            return Err(CalibrateError::Probe("a rank returned no results".into()));
        };
        Ok(summarize(plan, &prtt, &o_r, rtt))
    }
}

/// Medians per size, and the raw hop.
fn summarize(plan: &SlicePlan, prtt: &[Vec<[f64; 4]>], o_r: &[Vec<f64>], rtt: f64) -> SliceData {
    let extra = f64::from(plan.n - 1);
    let mut points = Vec::with_capacity(plan.sizes.len());
    let mut gaps = Vec::with_capacity(plan.sizes.len());
    for (k, &lines) in plan.sizes.iter().enumerate() {
        let col = |i: usize| median(&prtt[k].iter().map(|r| r[i]).collect::<Vec<f64>>());
        let point = PrttPoint {
            lines,
            prtt_1_0: col(0),
            prtt_n_0: col(1),
            prtt_n_d: col(2),
            delay_total: col(3),
            o_r: median(&o_r[k]),
        };
        gaps.push((point.prtt_n_0 - point.prtt_1_0) / extra);
        points.push(point);
    }
    SliceData {
        points,
        gaps,
        raw_hop: rtt / 2.0,
    }
}

/// Polls `rx` until a line comes (no waiting primitive: its back-off would blur the timing).
#[inline]
fn take(ctx: &Ctx, rx: &mut Receiver) -> Result<Line, CalibrateError> {
    match rx.try_recv() {
        Ok(line) => Ok(line),
        Err(_) => take_slow(ctx, rx),
    }
}

#[inline(never)]
fn take_slow(ctx: &Ctx, rx: &mut Receiver) -> Result<Line, CalibrateError> {
    let t0 = Instant::now();
    let mut polls = 0u32;
    loop {
        match rx.try_recv() {
            Ok(line) => return Ok(line),
            Err(TryRecvError::Disconnected) => {
                return Err(CalibrateError::Probe("a probe channel closed".into()))
            }
            Err(TryRecvError::Empty) => {}
        }
        polls = polls.wrapping_add(1);
        if polls % 4096 == 0 && (ctx.is_aborted() || t0.elapsed() > STALL) {
            return Err(CalibrateError::Probe("the peer stopped answering".into()));
        }
    }
}

/// Receives `count` lines.
#[inline]
fn take_n(ctx: &Ctx, rx: &mut Receiver, count: u32) -> Result<(), CalibrateError> {
    for _ in 0..count {
        take(ctx, rx)?;
    }
    Ok(())
}

/// Sends `count` lines.
#[inline]
fn put_n(tx: &mut Sender, count: u32) -> Result<(), CalibrateError> {
    for _ in 0..count {
        let mut line = Line::new();
        line.set_word(0, tx.sent());
        tx.send(line)
            .map_err(|_| CalibrateError::Probe("a probe channel closed".into()))?;
    }
    Ok(())
}

/// Waits until the ping-pong line holds `value`.
#[inline]
fn await_flag(ctx: &Ctx, flag: &AtomicU64, value: u64) -> Result<(), CalibrateError> {
    if flag.load(Ordering::Acquire) == value {
        return Ok(());
    }
    let t0 = Instant::now();
    let mut polls = 0u32;
    while flag.load(Ordering::Acquire) != value {
        polls = polls.wrapping_add(1);
        if polls % 4096 == 0 && (ctx.is_aborted() || t0.elapsed() > STALL) {
            return Err(CalibrateError::Probe("the ping-pong peer stopped".into()));
        }
    }
    Ok(())
}

/// One rank's part of a slice: its channel ends, the plan, and the pair's ping-pong line.
struct Side<'a> {
    ctx: &'a Ctx,
    e: &'a mut Ends,
    plan: &'a SlicePlan,
    flag: &'a AtomicU64,
}

impl Side<'_> {
    /// The sequence both sides walk in lockstep: `reps` rounds over the sizes, `probe(k, s)` for
    /// size `k` of `s` lines. Returns, per size, each round's result.
    fn rounds<T>(
        &mut self,
        mut probe: impl FnMut(&Ctx, &mut Ends, usize, u32) -> Result<T, CalibrateError>,
    ) -> Result<Vec<Vec<T>>, CalibrateError> {
        let plan = self.plan;
        let mut out: Vec<Vec<T>> = plan
            .sizes
            .iter()
            .map(|_| Vec::with_capacity(plan.reps as usize))
            .collect();
        for _ in 0..plan.reps {
            for (k, &s) in plan.sizes.iter().enumerate() {
                out[k].push(probe(self.ctx, self.e, k, s)?);
            }
        }
        Ok(out)
    }

    /// Rank 0: times the round trips.
    fn client(mut self) -> Result<RankOut, CalibrateError> {
        let plan = self.plan;
        let c = plan.clock;
        let prtt = self.rounds(|ctx, e, k, s| {
            // PRTT(1, 0, s)
            let t0 = Instant::now();
            put_n(&mut e.tx, s)?;
            take_n(ctx, &mut e.rx, s)?;
            let one = since(t0) - c;
            // PRTT(n, 0, s)
            let t0 = Instant::now();
            put_n(&mut e.tx, plan.n * s)?;
            take_n(ctx, &mut e.rx, s)?;
            let burst = since(t0) - c;
            // PRTT(n, d, s)
            let mut delays = 0.0;
            let t0 = Instant::now();
            for i in 0..plan.n {
                put_n(&mut e.tx, s)?;
                if i + 1 < plan.n {
                    delays += spin_for(plan.delay[k]);
                }
            }
            take_n(ctx, &mut e.rx, s)?;
            let spaced = since(t0) - c;
            // o_r: wait for "go", send the message at once, wait for "done".
            take(ctx, &mut e.rx)?;
            put_n(&mut e.tx, s)?;
            take(ctx, &mut e.rx)?;
            Ok([one, burst, spaced, delays])
        })?;
        // The raw round trips are timed together, not one by one: a round trip (50–450 ns) is a
        // few ticks of a VM's clock (10 ns here), and a clock read inside it would sit on the
        // path.
        let t0 = Instant::now();
        for i in 0..u64::from(plan.hops) {
            self.flag.store(2 * i + 1, Ordering::Release);
            await_flag(self.ctx, self.flag, 2 * i + 2)?;
        }
        let rtt = (since(t0) - c) / f64::from(plan.hops);
        Ok(RankOut::Client { prtt, rtt })
    }

    /// Rank 1: answers, and times receive overheads.
    fn server(mut self) -> Result<RankOut, CalibrateError> {
        let plan = self.plan;
        let o_r = self.rounds(|ctx, e, k, s| {
            take_n(ctx, &mut e.rx, s)?;
            put_n(&mut e.tx, s)?;
            take_n(ctx, &mut e.rx, plan.n * s)?;
            put_n(&mut e.tx, s)?;
            take_n(ctx, &mut e.rx, plan.n * s)?;
            put_n(&mut e.tx, s)?;
            // o_r: "go", wait until the message has surely arrived, time its receipt, "done".
            put_n(&mut e.tx, 1)?;
            spin_for(plan.wait[k]);
            let t0 = Instant::now();
            take_n(ctx, &mut e.rx, s)?;
            let o_r = since(t0) - plan.clock;
            put_n(&mut e.tx, 1)?;
            Ok(o_r)
        })?;
        for i in 0..u64::from(plan.hops) {
            await_flag(self.ctx, self.flag, 2 * i + 1)?;
            self.flag.store(2 * i + 2, Ordering::Release);
        }
        Ok(RankOut::Server { o_r })
    }
}

/// Runs `k` simultaneous raw ping-pongs on the pairs `pairs[..k]` (OS CPUs) and returns the
/// median per-transfer one-way time (ns), the median over pairs of each pair's median.
pub(crate) fn concurrent_hops(
    pairs: &[(usize, usize)],
    hops: u32,
    clock: f64,
) -> Result<f64, CalibrateError> {
    let cores: Vec<usize> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    let mut team = Team::builder().cores(cores).build()?;
    let flags: Vec<CachePadded<AtomicU64>> = pairs
        .iter()
        .map(|_| CachePadded::new(AtomicU64::new(0)))
        .collect();
    let outs = team.run(|ctx| -> Result<f64, CalibrateError> {
        let flag = &flags[ctx.rank() / 2];
        let mut rtt = Vec::with_capacity(hops as usize);
        for i in 0..u64::from(hops) {
            if ctx.rank() % 2 == 0 {
                let t0 = Instant::now();
                flag.store(2 * i + 1, Ordering::Release);
                await_flag(ctx, flag, 2 * i + 2)?;
                rtt.push(since(t0) - clock);
            } else {
                await_flag(ctx, flag, 2 * i + 1)?;
                flag.store(2 * i + 2, Ordering::Release);
            }
        }
        Ok(median(&rtt) / 2.0)
    });
    let mut per_pair = Vec::with_capacity(pairs.len());
    for (rank, out) in outs.into_iter().enumerate() {
        let v = out?;
        if rank % 2 == 0 {
            per_pair.push(v);
        }
    }
    Ok(median(&per_pair))
}

/// One spin phase of the runtime's waits, timed `reps` times where nothing ends it, less the
/// clock's overhead `clock`: the median, ns ([`Profile::spin_ns`](crate::Profile::spin_ns)).
pub(crate) fn spin_phase(reps: u32, clock: f64) -> f64 {
    let line = CachePadded::new(AtomicU64::new(0));
    let mut keep = 0u64;
    let times: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let t0 = Instant::now();
            keep ^= crate::runtime::spin_out(&line);
            since(t0) - clock
        })
        .collect();
    std::hint::black_box(keep);
    median(&times)
}

/// Two threads pinned to one CPU, taking turns: the one-way handoff when ranks share a core
/// (the receiver runs only once the sender yields the CPU).
#[derive(Debug)]
pub(crate) struct SharedPair {
    team: Team,
    flag: CachePadded<AtomicU64>,
}

impl SharedPair {
    /// Both ranks on OS CPU `cpu`.
    pub(crate) fn new(cpu: usize) -> Result<SharedPair, CalibrateError> {
        let team = Team::builder().ranks(2).cores(vec![cpu, cpu]).build()?;
        Ok(SharedPair {
            team,
            flag: CachePadded::new(AtomicU64::new(0)),
        })
    }

    /// Runs `hops` round trips, each side yielding while it waits; the median one-way time
    /// (ns).
    pub(crate) fn slice(&mut self, hops: u32, clock: f64) -> Result<f64, CalibrateError> {
        self.flag.store(0, Ordering::Relaxed);
        let flag = &self.flag;
        let outs = self.team.run(|ctx| -> Result<Vec<f64>, CalibrateError> {
            let mut rtt = Vec::with_capacity(hops as usize);
            let wait = |value: u64| -> Result<(), CalibrateError> {
                let t0 = Instant::now();
                while flag.load(Ordering::Acquire) != value {
                    std::thread::yield_now();
                    if ctx.is_aborted() || t0.elapsed() > STALL {
                        return Err(CalibrateError::Probe("the shared-CPU peer stopped".into()));
                    }
                }
                Ok(())
            };
            for i in 0..u64::from(hops) {
                if ctx.rank() == 0 {
                    let t0 = Instant::now();
                    flag.store(2 * i + 1, Ordering::Release);
                    wait(2 * i + 2)?;
                    rtt.push(since(t0) - clock);
                } else {
                    wait(2 * i + 1)?;
                    flag.store(2 * i + 2, Ordering::Release);
                }
            }
            Ok(rtt)
        });
        let mut rtt = Vec::new();
        for out in outs {
            rtt.extend(out?);
        }
        Ok(median(&rtt) / 2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::{clock_step_of, interdecile_mean};

    /// The development VM's differences (2026-12-05: 20 ns 76 %, 21 ns 2 %, 30 ns 21 %,
    /// 31 ns 1 %) have a step of 10 ns; a clock of nanoseconds, or one whose reads all take
    /// the same time, has none coarser than 1 ns; rare outliers (interrupts) do not count.
    #[test]
    fn a_clock_s_step_is_the_distance_between_its_common_differences() {
        let mut vm = vec![20; 760];
        vm.extend([21; 24]);
        vm.extend([30; 206]);
        vm.extend([31; 10]);
        vm.extend([5000, 7321]);
        let step = clock_step_of(&vm);
        assert!((step - 10.0).abs() < 0.2, "{step}");
        let fine: Vec<u64> = (0..1000).map(|i| 18 + i % 5).collect();
        assert_eq!(clock_step_of(&fine), 1.0);
        assert_eq!(clock_step_of(&[25; 100]), 1.0);
        // A clock of microseconds: reads mostly see the same value.
        let coarse: Vec<u64> = (0..1000)
            .map(|i| if i % 40 == 0 { 1000 } else { 0 })
            .collect();
        assert_eq!(clock_step_of(&coarse), 1000.0);
        assert_eq!(clock_step_of(&[]), 1.0);
    }

    #[test]
    fn a_clock_read_between_two_steps_costs_their_mean() {
        // Half the reads on each of two 10 ns steps: the median would be either step, the
        // expected cost lies between them.
        let mut v: Vec<f64> = (0..100)
            .map(|i| if i % 2 == 0 { 30.0 } else { 40.0 })
            .collect();
        assert_eq!(interdecile_mean(&mut v), 35.0);
        // A tenth of the reads interrupted (microseconds) do not count.
        let mut v: Vec<f64> = (0..100)
            .map(|i| if i % 10 == 0 { 5000.0 } else { 30.0 })
            .collect();
        assert_eq!(interdecile_mean(&mut v), 30.0);
        assert!(interdecile_mean(&mut []).is_nan());
    }
}
