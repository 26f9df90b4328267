//! Choosing at run time whether a broadcast is posted, by the host's latency regime.
//!
//! # Why
//!
//! A planned communicator posts a broadcast where its model predicts the post faster than
//! what the size's class runs otherwise (`comm.rs`, `posts`). The model is priced with one of
//! the profile's latency regimes, and the host changes regime while a program runs. At 4 ranks
//! on 2 CPUs and 4 KiB the faster way changes with it: a barrier-then-one broadcast posted
//! took 3.09–3.32 µs in the near mode against 3.53–4.02 by single copy, and 5.17–5.62 against
//! 4.48–5.09 in the far mode (250 `herald fidelity` runs, docs/fidelity.md, "Sixty-second
//! session"). A profile calibrated in one mode picked right in that mode and 11–15 % slower in
//! the others, so no plan made once meets issue 17's regret target there. Timing the two ways
//! against each other as calls run cost more than it won (docs/fidelity.md, "Sixty-third
//! session"): to learn, it had to try the dearer way now and then.
//!
//! # How
//!
//! The profile prices each of its latency regimes (its dominant, fastest and slowest modes,
//! those whose hops between PUs differ by half or more), and where another regime than the
//! dominant one (the plan's) predicts the other way at least 10 % faster for a size class (the
//! payloads of `2^(k−1) + 1 ..= 2^k` bytes), the class is *timed*
//! ([`TimedPosting`](crate::runtime::TimedPosting)): its calls take the model's way under the
//! regime the host is in now. Nothing is tried; what is measured is the regime, by one cache
//! miss now and then:
//!
//! - The root of every [`SAMPLE`]-th call of a class writes the call's number into a line of
//!   its own (a *stamp*) as it returns from the call, after the call's own publications.
//! - Every other rank times its load of that line at its next call of the class (before it
//!   needs anything from that call's root, where a reader waits anyway), or a later one of the
//!   same epoch if the stamp is not there yet. From a rank on another PU the load is a
//!   cross-PU miss, whose time the calibration measures in each regime by the same code
//!   ([`StampLine`]); on the root's PU a hit.
//! - Each rank keeps its loads of an epoch ([`EPOCH`] calls) on its board and publishes the
//!   epoch when it returns from the epoch's last call.
//! - At its first call of epoch `e ≥ 2` rank 0 reads every rank's loads of epoch `e − 2`
//!   (waiting for a rank that has not returned from it yet, as a collective waits for a peer):
//!   per sampled call the slowest load (a cross-PU one), then the lower quartile over the
//!   epoch. That load names the profile's nearest regime (on a log scale) if it lies within
//!   a quarter of the way to the next regime's ([`CLEAR`]), else the dominant one (the
//!   plan's): the plan is left only on clear evidence. A new regime counts once two epochs in
//!   a row name it. Rank 0 then publishes the way of epoch `e + 2`, and
//!   every other rank takes each epoch's way from there at the epoch's first call. Epochs two
//!   apart, not one: a posting root may run up to 63 calls ahead of its readers, and a wait
//!   for the last epoch would take that lead away. Epochs 0 and 1 of a set of endpoints run in
//!   the regime the last set ended in.
//!
//! Every rank takes the same way in every call: rank 0 decides each epoch's, before any rank
//! starts it. No wait can close a cycle: rank 0 waits only for ranks to return from calls it
//! has returned from itself, another rank only for rank 0 to start an epoch two before one it
//! starts, and a rank that has returned from a call has made every send that call needs from
//! it. A rank waiting for a board or a way marks itself, and only then is it woken: a rank's
//! signal is the one its collectives wait on, and a wake-up it does not need costs a thread
//! switch where ranks share CPUs.
//!
//! Cost: per sampled call a store on the root and, on every other rank, two clock reads and
//! one load (a miss from another PU: 40–170 ns here); per epoch, on rank 0, a look at every
//! rank's board, and on the others a look at rank 0's. Measured: about 2 % of a 4 KiB
//! broadcast of 4 ranks on 2 CPUs in the near mode (docs/fidelity.md, "Sixty-fourth
//! session").

use super::call::Core;
use super::error::CollectiveError;
use crate::runtime::sync::{light_fence, AtomicBool, AtomicU64, Ordering};
use crate::runtime::wait::{Phase, Polls};
use crossbeam_utils::CachePadded;
use std::sync::Arc;

/// Calls per epoch of a timed class (2 in the loom models, whose runs must stay short).
pub(crate) const EPOCH: u64 = if cfg!(all(test, herald_loom)) { 2 } else { 64 };
/// One call in this many of a class is sampled (every one in the loom models).
pub(crate) const SAMPLE: u64 = if cfg!(all(test, herald_loom)) { 1 } else { 16 };
/// Size classes that can be timed: `k` of payloads up to `2^k` bytes, for `k` up to 16
/// (64 KiB, the largest posted broadcast).
pub(crate) const CLASSES: usize = 17;
/// A stamp's load from another PU against the profile's hop between PUs (the channel's
/// one-way time, half a round trip of a line each way), for profiles that did not time the
/// load itself: 40–60 ns against a hop of 76 ns in this machine's near mode, 130–170 against
/// 276 in its far mode (the sixty-fourth session's runs), but 80–99 against 155 in a state
/// between the two (the sixty-fifth session's, calibrated at 08:05): the ratio is no constant
/// of the machine, so the calibration now times the load in each regime.
pub(crate) const LOAD_PER_HOP: f64 = 0.6;
/// How near a load must lie to a regime's, as a share of the way (on a log scale) to the next
/// regime's, to name it; a load farther from both names the dominant regime. The sixty-fifth
/// session's host met a state between the profile's two (the stamp's loads at 70–150 ns, most
/// at 80–99; the near mode's at 30–60 and the far mode's at 120–180, with hops of 76 and
/// 276 ns): there posting, the plan's way, measured fastest, and the nearest regime flipped
/// between the two ways, 5–6 % slower (docs/fidelity.md, "Sixty-fifth session").
const CLEAR: f64 = 0.25;
/// Epochs a rank's board keeps.
const RING: usize = 4;
/// Sampled calls per epoch.
const SAMPLES: usize = (EPOCH / SAMPLE) as usize;
/// Sampled calls' stamps a root's board keeps: a reader loads its root's stamp after the
/// call, and a posting root runs at most 63 calls ahead of its slowest reader.
const STAMPS: usize = if cfg!(all(test, herald_loom)) { 8 } else { 32 };

/// The class of a `bytes`-byte payload (`CLASSES` or more: never timed).
#[inline]
pub(crate) fn class_of(bytes: usize) -> usize {
    bytes.max(1).next_power_of_two().trailing_zeros() as usize
}

/// One rank's board for one class.
#[derive(Debug)]
struct Board {
    /// Epoch `e` published at `e % RING`, tagged `e + 1`.
    tags: [AtomicU64; RING],
    /// Epoch `e`'s sampled loads (ns; 0: none), at `e % RING`.
    loads: [[AtomicU64; SAMPLES]; RING],
    /// Rank 0's: the way of epoch `t` ([`encode`]), at `t % RING`.
    ways: [AtomicU64; RING],
    /// As the root of sampled call `c` (of the class): `c + 1` at `(c / SAMPLE) % STAMPS`,
    /// each on a line of its own so that a load of it is a miss wherever the root's PU is not
    /// the loader's.
    stamps: [StampLine; STAMPS],
}

/// A line one rank stamps and others time their loads of, on a line of its own: how a timed
/// class tells the host's latency regime, and what the calibration times in each regime
/// ([`RuntimeCalibration::stamp_load_ns`](crate::model::RuntimeCalibration::stamp_load_ns)),
/// so that the two measure the same code.
#[derive(Debug)]
pub(crate) struct StampLine(CachePadded<AtomicU64>);

impl StampLine {
    /// A line holding 0.
    pub(crate) fn new() -> StampLine {
        StampLine(CachePadded::new(AtomicU64::new(0)))
    }

    /// Stamps `value` (relaxed: a loader learns of the stamp otherwise, and only times it).
    #[inline]
    pub(crate) fn stamp(&self, value: u64) {
        self.0.store(value, Ordering::Relaxed);
    }

    /// The line's value and the ns its load took, between two clock reads (at least 1): from
    /// a PU other than the stamper's a cache miss, on the stamper's PU a hit.
    #[inline]
    pub(crate) fn timed_load(&self) -> (u64, u64) {
        let t0 = std::time::Instant::now();
        let value = self.0.load(Ordering::Relaxed);
        let took = t0.elapsed();
        (
            value,
            u64::try_from(took.as_nanos()).unwrap_or(u64::MAX).max(1),
        )
    }

    /// Back to 0.
    fn clear(&self) {
        self.0.store(0, Ordering::Relaxed);
    }
}

impl Default for Board {
    fn default() -> Board {
        Board {
            tags: Default::default(),
            ways: Default::default(),
            loads: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            stamps: std::array::from_fn(|_| StampLine::new()),
        }
    }
}

/// The boards of every rank for every timed class of a communicator.
#[derive(Debug, Default)]
pub(crate) struct Boards {
    /// Per class: its index among the timed classes, if it is timed.
    index: [Option<u8>; CLASSES],
    /// Timed classes.
    timed: usize,
    /// `rank * timed + index`.
    boards: Box<[CachePadded<Board>]>,
    /// Per rank: whether it waits for a board or for rank 0's way (its publishers wake it only
    /// then: a rank's [`Signal`](crate::runtime::wait::Signal) is the one its collectives wait
    /// on, and a wake-up it does not need costs a thread switch where ranks share CPUs).
    waiting: Box<[CachePadded<AtomicBool>]>,
    /// In the loom models: a sampled call's load time (ns) by its number, in place of the
    /// clock (a model's runs must be deterministic).
    #[cfg(all(test, herald_loom))]
    fake_load: Option<fn(u64) -> u64>,
}

impl Boards {
    /// Boards for `size` ranks and the classes `timed` marks.
    pub(crate) fn new(size: usize, timed: &[bool; CLASSES]) -> Boards {
        let mut index = [None; CLASSES];
        let mut n = 0usize;
        for (k, &t) in timed.iter().enumerate() {
            if t {
                index[k] = Some(n as u8);
                n += 1;
            }
        }
        Boards {
            index,
            timed: n,
            boards: (0..size * n)
                .map(|_| CachePadded::new(Board::default()))
                .collect(),
            waiting: (0..size)
                .map(|_| CachePadded::new(AtomicBool::new(false)))
                .collect(),
            #[cfg(all(test, herald_loom))]
            fake_load: None,
        }
    }

    /// Whether class `k` is timed.
    #[inline]
    pub(crate) fn is_timed(&self, k: usize) -> bool {
        self.index.get(k).is_some_and(Option::is_some)
    }

    fn board(&self, rank: usize, k: usize) -> &Board {
        let i = self.index[k].expect("a timed class") as usize;
        &self.boards[rank * self.timed + i]
    }

    /// Publishes `rank`'s epoch `e` of class `k`.
    fn publish(&self, rank: usize, k: usize, e: u64) {
        let at = (e % RING as u64) as usize;
        self.board(rank, k).tags[at].store(e + 1, Ordering::Release);
    }

    /// Whether `rank` has published epoch `e` of class `k`.
    fn published(&self, rank: usize, k: usize, e: u64) -> bool {
        let at = (e % RING as u64) as usize;
        let tag = self.board(rank, k).tags[at].load(Ordering::Acquire);
        if cfg!(any(debug_assertions, all(test, herald_loom))) {
            assert!(tag <= e + 1, "a board was overwritten before it was read");
        }
        tag == e + 1
    }

    /// As rank 0, publishes the way of epoch `t` of class `k`.
    fn publish_way(&self, k: usize, t: u64, way: Option<bool>) {
        let at = (t % RING as u64) as usize;
        self.board(0, k).ways[at].store(encode(t, way), Ordering::Release);
    }

    /// The way of epoch `t` of class `k`, if rank 0 has published it.
    fn way(&self, k: usize, t: u64) -> Option<Option<bool>> {
        let at = (t % RING as u64) as usize;
        decode(t, self.board(0, k).ways[at].load(Ordering::Acquire))
    }

    /// `rank`'s load time of sampled call `i` of epoch `e` of class `k` (published; 0: none).
    fn load(&self, rank: usize, k: usize, e: u64, i: usize) -> u64 {
        self.board(rank, k).loads[(e % RING as u64) as usize][i].load(Ordering::Relaxed)
    }

    /// Records `rank`'s load time of sampled call `i` of epoch `e` of class `k`.
    fn record(&self, rank: usize, k: usize, e: u64, i: usize, ns: u64) {
        self.board(rank, k).loads[(e % RING as u64) as usize][i].store(ns, Ordering::Relaxed);
    }

    /// As the root of sampled call `c` of class `k`, writes its stamp.
    fn stamp(&self, rank: usize, k: usize, c: u64) {
        let i = ((c / SAMPLE) % STAMPS as u64) as usize;
        self.board(rank, k).stamps[i].stamp(c + 1);
    }

    /// Times a load of the stamp of sampled call `c` of class `k` whose root was `rank`: the ns
    /// it took, or `None` if the root has not stamped that call there (yet, or any more).
    fn time_stamp(&self, rank: usize, k: usize, c: u64) -> Option<u64> {
        let line = &self.board(rank, k).stamps[((c / SAMPLE) % STAMPS as u64) as usize];
        let (tag, took) = line.timed_load();
        #[cfg(all(test, herald_loom))]
        let took = self.fake_load.map_or(took, |f| f(c).max(1));
        (tag == c + 1).then_some(took)
    }

    /// Wakes `rank` if it waits for a board or a way (after the publication it waits for).
    fn nudge(&self, core: &Core, rank: usize) {
        light_fence();
        if self.waiting[rank].load(Ordering::Relaxed) {
            core.signals[rank].notify();
        }
    }

    /// Back to the fresh state.
    pub(crate) fn reset(&self) {
        self.waiting
            .iter()
            .for_each(|w| w.store(false, Ordering::Relaxed));
        for b in self.boards.iter() {
            b.tags.iter().for_each(|t| t.store(0, Ordering::Relaxed));
            b.ways.iter().for_each(|t| t.store(0, Ordering::Relaxed));
            b.loads
                .iter()
                .flatten()
                .for_each(|x| x.store(0, Ordering::Relaxed));
            b.stamps.iter().for_each(StampLine::clear);
        }
    }
}

/// The profile's latency regimes as a timed class sees them: each one's stamp load and, per
/// class, whether the model posts there under it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Regimes {
    /// Each regime's load of a stamp from another PU (ns, [`StampLine::timed_load`]), the
    /// first the plan's (dominant) regime: calibrated
    /// ([`stamp_load_ps`](crate::model::RuntimeLevel::stamp_load_ps)), or [`LOAD_PER_HOP`] of
    /// the regime's hop between PUs where the profile did not time it.
    pub(crate) load_ns: Vec<f64>,
    /// Per class, per regime: posted or not (`None`: the class is not timed).
    pub(crate) posted: Vec<Option<Vec<bool>>>,
    /// Whether every epoch takes the other way from the last, whatever the regime (for tests).
    pub(crate) alternate: bool,
}

impl Regimes {
    /// The regime a stamp's load of `ns` names: on a log scale, a load between two regimes' loads names the nearer one only
    /// within [`CLEAR`] of the way between them, and else the dominant regime (the plan's,
    /// index 0); a load below the fastest regime's or above the slowest's names that one.
    pub(crate) fn named(&self, ns: f64) -> usize {
        let load = ns.max(1.0).ln();
        let mut by_load: Vec<(f64, usize)> = self
            .load_ns
            .iter()
            .enumerate()
            .map(|(i, &l)| (l.max(1.0).ln(), i))
            .collect();
        by_load.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (Some(&(lowest, fastest)), Some(&(highest, slowest))) =
            (by_load.first(), by_load.last())
        else {
            return 0;
        };
        if load <= lowest {
            return fastest;
        }
        if load >= highest {
            return slowest;
        }
        by_load.windows(2).find(|w| load <= w[1].0).map_or(0, |w| {
            let ((lo, below), (hi, above)) = (w[0], w[1]);
            let t = (load - lo) / (hi - lo).max(f64::MIN_POSITIVE);
            if t <= CLEAR {
                below
            } else if t >= 1.0 - CLEAR {
                above
            } else {
                0
            }
        })
    }
}

/// Epoch `t`'s way as rank 0 publishes it: `(t + 1) · 4` and 0 for the plan's own way, 1
/// for not posted, 2 for posted.
fn encode(t: u64, way: Option<bool>) -> u64 {
    ((t + 1) << 2) | way.map_or(0, |p| 1 + u64::from(p))
}

/// The way of epoch `t` from what rank 0 published in its slot (`None`: not yet).
fn decode(t: u64, v: u64) -> Option<Option<bool>> {
    (v >> 2 == t + 1).then_some(match v & 3 {
        0 => None,
        code => Some(code == 2),
    })
}

/// One rank's state of a timed class. Rank 0 decides the way of every epoch; the others
/// follow what it publishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Class {
    /// The class's calls so far.
    calls: u64,
    /// The regime the class runs by (an index into [`Regimes::load_ns`]; rank 0's).
    regime: usize,
    /// Another regime named by the last epoch, not yet confirmed.
    pending: Option<usize>,
    /// The way of epoch `e` (`None`: the plan's own way; else posted or not), at `e % RING`.
    ways: [Option<bool>; RING],
    /// Changes of regime so far.
    changes: u64,
    /// A sampled call whose root's stamp this rank has yet to time: `(root, call)`.
    probe: Option<(usize, u64)>,
}

impl Class {
    /// A class in the plan's regime.
    pub(crate) fn new() -> Class {
        Class {
            calls: 0,
            regime: 0,
            pending: None,
            ways: [None; RING],
            changes: 0,
            probe: None,
        }
    }

    /// The state a fresh set of endpoints starts from: the regime, with the epochs counted
    /// afresh.
    pub(crate) fn restarted(&self) -> Class {
        Class {
            regime: self.regime,
            changes: self.changes,
            ..Class::new()
        }
    }

    /// The regime the class runs by.
    #[cfg(test)]
    pub(crate) fn regime(&self) -> usize {
        self.regime
    }

    /// Changes of regime so far.
    #[cfg(test)]
    pub(crate) fn changes(&self) -> u64 {
        self.changes
    }

    /// Takes in an epoch's agreed load time (`None`: none timed): a regime other than the
    /// class's counts once two epochs in a row name it.
    pub(crate) fn observe(&mut self, regimes: &Regimes, load: Option<u64>) {
        let Some(ns) = load else {
            return;
        };
        let seen = regimes.named(ns as f64);
        if seen == self.regime {
            self.pending = None;
        } else if self.pending == Some(seen) {
            self.regime = seen;
            self.pending = None;
            self.changes += 1;
        } else {
            self.pending = Some(seen);
        }
    }

    /// The way of epoch `t` of class `k` in the class's regime: `None` for the plan's own way
    /// (where the regime's way is the dominant regime's), else posted or not.
    pub(crate) fn way(&self, regimes: &Regimes, k: usize, t: u64) -> Option<bool> {
        if regimes.alternate {
            return Some(t % 2 == 1);
        }
        match regimes.posted.get(k).and_then(Option::as_ref) {
            // Where the regime's way is the dominant regime's, the plan's own (size by size).
            Some(p) => p
                .get(self.regime)
                .copied()
                .filter(|&w| Some(&w) != p.first()),
            None => None,
        }
    }
}

/// One rank's states of its communicator's timed classes, and the regimes they choose by.
#[derive(Debug, Clone, Default)]
pub(crate) struct Chooser {
    classes: Vec<Option<Class>>,
    regimes: Option<Arc<Regimes>>,
}

/// What a timed call does: its class and way, and whether it is sampled.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Choice {
    /// The class.
    pub(crate) class: usize,
    /// The plan's way (`None`) or posted or not.
    pub(crate) posted: Option<bool>,
    /// The call's number in its class.
    call: u64,
    /// The root.
    root: usize,
    /// Whether the call is sampled.
    sampled: bool,
}

impl Chooser {
    /// Replicas of the classes `regimes` times, each in the plan's regime.
    pub(crate) fn new(regimes: Arc<Regimes>) -> Chooser {
        Chooser {
            classes: (0..CLASSES)
                .map(|k| {
                    regimes
                        .posted
                        .get(k)
                        .is_some_and(Option::is_some)
                        .then(Class::new)
                })
                .collect(),
            regimes: Some(regimes),
        }
    }

    /// Every class [`restarted`](Class::restarted).
    pub(crate) fn restarted(&self) -> Chooser {
        Chooser {
            classes: self
                .classes
                .iter()
                .map(|c| c.as_ref().map(Class::restarted))
                .collect(),
            regimes: self.regimes.clone(),
        }
    }

    /// The way class `k` (timed) starts on: `None` for the plan's own way, else posted or not.
    pub(crate) fn start_way(&self, k: usize) -> Option<bool> {
        let class = self.classes.get(k).and_then(Option::as_ref)?;
        class.way(self.regimes.as_ref()?, k, 0)
    }

    /// Rank `me`'s way for its next call of class `k` (timed) in call `id`. At an epoch's first
    /// call: rank 0 takes in the loads of the epoch two before (waiting for every rank's) and
    /// publishes the way of the epoch two ahead; every other rank, from the third epoch on,
    /// takes this epoch's way from rank 0 (waiting for it if need be). Epochs 0 and 1 run in
    /// the regime the endpoints started in.
    ///
    /// # Errors
    ///
    /// As a collective's wait for its peers: the poison, a peer's mismatch or departure, the
    /// team's abort.
    pub(crate) fn start(
        &mut self,
        core: &Core,
        me: usize,
        root: usize,
        k: usize,
        id: (u64, u64),
    ) -> Result<Choice, CollectiveError> {
        let regimes = self
            .regimes
            .as_ref()
            .expect("a timed communicator's regimes");
        let class = self.classes[k].as_mut().expect("a timed class");
        let call = class.calls;
        let (e, at) = (call / EPOCH, call % EPOCH);
        class.calls += 1;
        if at == 0 {
            let here = (e % RING as u64) as usize;
            if e < 2 {
                class.ways[here] = class.way(regimes, k, e);
            }
            if me == 0 {
                if e >= 2 {
                    let load = agree(core, me, k, e - 2, id)?;
                    class.observe(regimes, load);
                }
                let t = e + 2;
                let way = class.way(regimes, k, t);
                class.ways[(t % RING as u64) as usize] = way;
                core.choice.publish_way(k, t, way);
                for r in 1..core.signals.len() {
                    core.choice.nudge(core, r);
                }
            } else if e >= 2 {
                class.ways[here] = way_of(core, me, k, e, id)?;
            }
        }
        let posted = class.ways[(e % RING as u64) as usize];
        // A sampled call's stamp is timed at a later call of its epoch, before this rank needs
        // anything from that call's root (a reader waits there anyway), once the root has
        // written it (at the sampled call's end).
        if let Some((r, c)) = class.probe {
            if c / EPOCH != e {
                class.probe = None;
            } else if let Some(ns) = core.choice.time_stamp(r, k, c) {
                core.choice
                    .record(me, k, e, ((c % EPOCH) / SAMPLE) as usize, ns);
                class.probe = None;
            }
        }
        let sampled = call % SAMPLE == 0;
        Ok(Choice {
            class: k,
            posted,
            call,
            root,
            sampled,
        })
    }

    /// Rank `me` is returning from a call of `choice`: as the root of a sampled call, stamps
    /// it (after the call's own publications, which a store waiting for its line would delay);
    /// as another rank, keeps the call to time its stamp later; after the epoch's last call,
    /// publishes the epoch.
    pub(crate) fn end(&mut self, core: &Core, me: usize, choice: Choice) {
        let at = choice.call % EPOCH;
        if choice.sampled {
            if me == choice.root {
                core.choice.stamp(me, choice.class, choice.call);
            } else if let Some(class) = self.classes[choice.class].as_mut() {
                class.probe = Some((choice.root, choice.call));
            }
        }
        if at == EPOCH - 1 {
            core.choice.publish(me, choice.class, choice.call / EPOCH);
            // Only rank 0 waits for the boards.
            if me != 0 {
                core.choice.nudge(core, 0);
            }
        }
    }
}

/// The agreed load time of epoch `e` of class `k` (`None`: no load timed), waiting for ranks
/// that have not published it: per sampled call the slowest of every rank's loads, then the
/// lower quartile over the calls.
fn agree(
    core: &Core,
    me: usize,
    k: usize,
    e: u64,
    id: (u64, u64),
) -> Result<Option<u64>, CollectiveError> {
    let n = core.signals.len();
    let mut next = 0usize;
    let mut polls = Polls::default();
    let look = |phase: Phase| -> Option<Result<Option<u64>, CollectiveError>> {
        while next < n && core.choice.published(next, k, e) {
            next += 1;
        }
        if next == n {
            let mut slowest: Vec<u64> = (0..SAMPLES)
                .map(|i| {
                    (0..n)
                        .map(|r| core.choice.load(r, k, e, i))
                        .max()
                        .unwrap_or(0)
                })
                .filter(|&ns| ns > 0)
                .collect();
            return Some(Ok(lower_quartile(&mut slowest)));
        }
        core.wait_stop(&mut polls, phase, me, next, id).map(Err)
    };
    wait_marked(core, me, look)
}

/// The way of epoch `e` of class `k` as rank 0 publishes it, waiting for rank 0 to have
/// started epoch `e − 2`.
fn way_of(
    core: &Core,
    me: usize,
    k: usize,
    e: u64,
    id: (u64, u64),
) -> Result<Option<bool>, CollectiveError> {
    let mut polls = Polls::default();
    let look = |phase: Phase| -> Option<Result<Option<bool>, CollectiveError>> {
        if let Some(way) = core.choice.way(k, e) {
            return Some(Ok(way));
        }
        core.wait_stop(&mut polls, phase, me, 0, id).map(Err)
    };
    wait_marked(core, me, look)
}

/// Waits as a collective waits for a peer until `look` has an answer: at once if it has one,
/// else with this rank marked as waiting ([`Boards::nudge`]).
///
/// The mark needs no fence of its own. A waiter parks only after announcing its sleep and
/// the heavy half of the asymmetric fence pair, and then looks once more; a publisher stores,
/// takes the light half, and only then reads the mark (and, in
/// [`Signal::notify`](crate::runtime::wait::Signal::notify), the announcement). The mark's
/// store comes before the waiter's fence, so either the publisher's fence comes first in
/// their order and the waiter's last look sees the publication, or the waiter's comes first
/// and the publisher reads both the mark and the announcement and wakes it. (The loom models
/// `loom_choice_*` check it: without the nudge they deadlock.) The sixty-fourth session's
/// version followed the mark with a heavy fence too: a `membarrier` system call on every wait
/// that its first look did not end.
fn wait_marked<T>(
    core: &Core,
    me: usize,
    mut look: impl FnMut(Phase) -> Option<Result<T, CollectiveError>>,
) -> Result<T, CollectiveError> {
    if let Some(answer) = look(Phase::Spin) {
        return answer;
    }
    let mark = &core.choice.waiting[me];
    mark.store(true, Ordering::Relaxed);
    let answer = core.signals[me].wait_phased_or(look);
    mark.store(false, Ordering::Relaxed);
    answer?
}

/// The lower quartile of `v` (the nearest rank at or below a quarter), if any: a slow load
/// (a page walk, a preempted rank) lifts the upper half of an epoch's loads now and then, a
/// fast one from another PU does not happen.
fn lower_quartile(v: &mut [u64]) -> Option<u64> {
    v.sort_unstable();
    (!v.is_empty()).then(|| v[(v.len() - 1) / 4])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two regimes, stamp loads of 48 and 180 ns, class 12 posted in the first and not in the
    /// second.
    fn regimes() -> Regimes {
        let mut posted = vec![None; CLASSES];
        posted[12] = Some(vec![true, false]);
        Regimes {
            load_ns: vec![48.0, 180.0],
            posted,
            alternate: false,
        }
    }

    /// Drives rank 0's state of class 12 through the starts of `epochs` as `start` does (at
    /// the start of epoch `s ≥ 2` it takes in `load(s − 2)`), and returns the ways it decides:
    /// the `i`-th that of epoch `epochs.start + i + 2`.
    fn run(
        class: &mut Class,
        r: &Regimes,
        epochs: std::ops::Range<u64>,
        load: impl Fn(u64) -> Option<u64>,
    ) -> Vec<Option<bool>> {
        epochs
            .map(|s| {
                if s >= 2 {
                    class.observe(r, load(s - 2));
                }
                class.way(r, 12, s + 2)
            })
            .collect()
    }

    #[test]
    fn a_load_names_a_regime_only_near_it() {
        // Loads of 48 and 180 ns: a quarter of the way between them on a log scale is 48 · 3.75^¼ ≈ 66.8 ns, three quarters 180 / 3.75^¼ ≈ 129.4 ns.
        let r = regimes();
        for (ns, named) in [
            (0.0, 0),
            (30.0, 0),
            (66.0, 0),
            (68.0, 0),
            (90.0, 0),
            (128.0, 0),
            (131.0, 1),
            (180.0, 1),
            (2000.0, 1),
        ] {
            assert_eq!(r.named(ns), named, "{ns} ns");
        }
        // With the far regime the dominant one, the loads between name it, and only a load
        // near the near regime's names that.
        let far_first = Regimes {
            load_ns: vec![180.0, 48.0],
            ..regimes()
        };
        for (ns, named) in [
            (10.0, 1),
            (66.0, 1),
            (68.0, 0),
            (90.0, 0),
            (131.0, 0),
            (2000.0, 0),
        ] {
            assert_eq!(far_first.named(ns), named, "{ns} ns");
        }
        // Three regimes: between the middle and either other, the same rule.
        let three = Regimes {
            load_ns: vec![48.0, 96.0, 192.0],
            ..regimes()
        };
        // Loads 48, 96, 192: a quarter of the way from 96 to 192 is 96 · 2^¼ ≈ 114.2 ns.
        for (ns, named) in [
            (50.0, 0),
            (70.0, 0),
            (96.0, 1),
            (113.0, 1),
            (140.0, 0),
            (175.0, 2),
        ] {
            assert_eq!(three.named(ns), named, "{ns} ns");
        }
    }

    #[test]
    fn a_new_regime_counts_after_two_epochs_in_a_row() {
        let r = regimes();
        let mut class = Class::new();
        // Near for 10 epochs, one far epoch (ignored), near, then far from epoch 20 on.
        let load = |e: u64| Some(if e == 12 || e >= 20 { 180 } else { 50 });
        let ways = run(&mut class, &r, 0..40, load);
        // The plan's way until the second far epoch's loads are in: epochs 20 and 21, taken in
        // at the starts of 22 and 23, which decide the ways of epochs 24 and 25.
        assert!(ways[..23].iter().all(Option::is_none), "{ways:?}");
        assert!(ways[23..].iter().all(|&w| w == Some(false)), "{ways:?}");
        assert_eq!(class.changes(), 1);
        // And back.
        let ways = run(&mut class, &r, 40..50, |_| Some(45));
        assert_eq!(ways[0], Some(false));
        assert!(ways[1..].iter().all(Option::is_none), "{ways:?}");
        assert_eq!(class.changes(), 2);
    }

    #[test]
    fn epochs_without_loads_change_nothing() {
        let r = regimes();
        let mut class = Class::new();
        run(&mut class, &r, 0..10, |_| Some(400));
        assert_eq!(class.regime(), 1);
        let ways = run(&mut class, &r, 10..30, |_| None);
        assert!(ways.iter().all(|&w| w == Some(false)));
        assert_eq!(class.regime(), 1);
    }

    #[test]
    fn alternating_takes_the_other_way_every_epoch() {
        let r = Regimes {
            alternate: true,
            ..regimes()
        };
        let mut class = Class::new();
        let ways = run(&mut class, &r, 0..4, |_| Some(80));
        assert_eq!(ways, [Some(false), Some(true), Some(false), Some(true)]);
    }

    #[test]
    fn a_class_the_regimes_agree_on_keeps_the_plans_way() {
        let mut r = regimes();
        r.posted[12] = Some(vec![true, true]);
        let mut class = Class::new();
        assert!(run(&mut class, &r, 0..10, |_| Some(400))
            .iter()
            .all(Option::is_none));
        assert_eq!(class.regime(), 1);
    }

    #[test]
    fn ways_as_rank_0_publishes_them() {
        for t in [0u64, 1, 7, 1 << 40] {
            for way in [None, Some(false), Some(true)] {
                assert_eq!(decode(t, encode(t, way)), Some(way));
                // Another epoch's slot, or none yet, is not this epoch's way.
                assert_eq!(decode(t + 4, encode(t, way)), None);
            }
            assert_eq!(decode(t, 0), None);
        }
    }

    #[test]
    fn restarting_keeps_the_regime() {
        let r = regimes();
        let mut class = Class::new();
        run(&mut class, &r, 0..10, |_| Some(400));
        let again = class.restarted();
        assert_eq!(again.regime(), 1);
        assert_eq!(again.calls, 0);
        assert_eq!(again.pending, None);
        assert_eq!(again.way(&r, 12, 0), Some(false));
    }

    #[test]
    fn lower_quartiles() {
        assert_eq!(lower_quartile(&mut []), None);
        assert_eq!(lower_quartile(&mut [5]), Some(5));
        assert_eq!(lower_quartile(&mut [9, 1, 5, 7]), Some(1));
        assert_eq!(
            lower_quartile(&mut [90, 50, 48, 52, 300, 51, 49, 47]),
            Some(48)
        );
    }

    #[test]
    fn classes_of_sizes() {
        assert_eq!(class_of(0), 0);
        assert_eq!(class_of(1), 0);
        assert_eq!(class_of(2), 1);
        assert_eq!(class_of(4096), 12);
        assert_eq!(class_of(4097), 13);
        assert_eq!(class_of(64 << 10), 16);
    }
}

/// Loom models of the protocol alone, without the broadcasts it chooses for (so ranks are
/// held together by nothing else): ranks run calls of one timed class through [`Chooser`]'s
/// `start` and `end` (epochs of [`EPOCH`] = 2 calls, every call sampled), rank 0 deciding
/// each epoch's way from the others' boards. Every rank must take the same way in every call
/// it makes; no wait may hang (a lost wake-up of a marked waiter would); a rank that fails
/// must end every rank's run that waits for it in an error; and a board or way slot must
/// never be overwritten before it is read (`published`'s assertion). (`RUSTFLAGS="--cfg
/// herald_loom" cargo test --release --lib loom_`.)
#[cfg(all(test, herald_loom))]
mod loom_tests {
    use super::*;
    use crate::runtime::collective::call::{CallInfo, CollectiveKind};
    use crate::runtime::collective::error::PoisonCause;
    use loom::thread;

    /// The class the models time (4 KiB payloads).
    const K: usize = 12;

    /// Whether any execution of the regime model switched to the far regime's way.
    static SWITCHED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    /// Regimes of stamp loads 48 and 180 ns, class `K` posted under the first and not the
    /// second.
    fn regimes(alternate: bool) -> Regimes {
        let mut posted = vec![None; CLASSES];
        posted[K] = Some(vec![true, false]);
        Regimes {
            load_ns: vec![48.0, 180.0],
            posted,
            alternate,
        }
    }

    /// Every sampled load is a far one.
    fn far(_call: u64) -> u64 {
        180
    }

    /// Rank `me` of `n` makes `calls` calls of class `K` (roots by `root`), or fails before
    /// its call `fail`: the way each call took, and how the run ended.
    fn rank(
        core: &Core,
        mut chooser: Chooser,
        me: usize,
        n: usize,
        calls: u64,
        root: fn(u64, usize) -> usize,
        fail: Option<u64>,
    ) -> (Vec<Option<bool>>, Result<(), CollectiveError>) {
        let mut ways = Vec::new();
        for c in 0..calls {
            let seq = c + 1;
            let root = root(c, n);
            let header = CallInfo::header(CollectiveKind::Broadcast, seq, root, 4096);
            core.publish(me, seq, header);
            if fail == Some(c) {
                core.poison(me, PoisonCause::Panic);
                return (ways, Err(CollectiveError::Aborted));
            }
            match chooser.start(core, me, root, K, (seq, header)) {
                Ok(choice) => {
                    ways.push(choice.posted);
                    chooser.end(core, me, choice);
                }
                Err(e) => return (ways, Err(e)),
            }
        }
        (ways, Ok(()))
    }

    /// `n` ranks, `calls` calls each; rank `fails.0` fails before its call `fails.1`. Returns
    /// every rank's ways and result.
    fn model(
        n: usize,
        calls: u64,
        alternate: bool,
        root: fn(u64, usize) -> usize,
        fails: Option<(usize, u64)>,
        check: impl Fn(&[(Vec<Option<bool>>, Result<(), CollectiveError>)]) + Send + Sync + 'static,
    ) {
        loom::model(move || {
            let mut timed = [false; CLASSES];
            timed[K] = true;
            let mut boards = Boards::new(n, &timed);
            boards.fake_load = Some(far);
            let core = crate::runtime::sync::Arc::new(
                Core::new_with_small(n, 64, 0, false).with_choice(boards),
            );
            let chooser = Chooser::new(Arc::new(regimes(alternate)));
            let handles: Vec<_> = (1..n)
                .map(|r| {
                    let core = crate::runtime::sync::Arc::clone(&core);
                    let chooser = chooser.clone();
                    let fail = fails.filter(|f| f.0 == r).map(|f| f.1);
                    thread::spawn(move || rank(&core, chooser, r, n, calls, root, fail))
                })
                .collect();
            let fail = fails.filter(|f| f.0 == 0).map(|f| f.1);
            let mut runs = vec![rank(&core, chooser, 0, n, calls, root, fail)];
            for h in handles {
                runs.push(h.join().unwrap());
            }
            // Every call a rank made took the way every other rank took in it.
            for (r, (ways, _)) in runs.iter().enumerate() {
                for (q, (theirs, _)) in runs.iter().enumerate() {
                    let common = ways.len().min(theirs.len());
                    assert_eq!(ways[..common], theirs[..common], "ranks {r} and {q}");
                }
            }
            check(&runs);
        });
    }

    fn root_0(_: u64, _: usize) -> usize {
        0
    }

    fn roots_in_turn(c: u64, n: usize) -> usize {
        (c as usize) % n
    }

    /// Every run ended well and made every call.
    fn all_ok(runs: &[(Vec<Option<bool>>, Result<(), CollectiveError>)]) {
        assert!(runs.iter().all(|(_, r)| r.is_ok()), "{runs:?}");
    }

    /// Every run ended in an error.
    fn all_err(runs: &[(Vec<Option<bool>>, Result<(), CollectiveError>)]) {
        assert!(runs.iter().all(|(_, r)| r.is_err()), "{runs:?}");
    }

    /// `n` ranks make `calls` calls with ways alternating by epoch, roots in turn: epochs 0
    /// and 1 by each rank's own count, later ones by rank 0's word; posted in odd epochs only.
    fn alternating(n: usize, calls: u64) {
        model(n, calls, true, roots_in_turn, None, move |runs| {
            all_ok(runs);
            let want: Vec<Option<bool>> = (0..calls).map(|c| Some(c / EPOCH % 2 == 1)).collect();
            assert_eq!(runs[0].0, want);
        });
    }

    #[test]
    fn loom_choice_alternating_ways_two_ranks() {
        alternating(2, 8);
    }

    #[test]
    fn loom_choice_alternating_ways_three_ranks() {
        alternating(3, 6);
    }

    #[test]
    fn loom_choice_far_loads_switch_the_way() {
        // Far loads from the first epoch: where rank 1 timed a stamp in both of epochs 0 and
        // 1 (whether it did depends on the interleaving: a stamp not written yet is not
        // timed), rank 0 names the far regime at the start of epoch 3 and epoch 5 takes its
        // way (not posted). The plan's own way until then, and never a posted one.
        SWITCHED.store(false, std::sync::atomic::Ordering::Relaxed);
        model(2, 12, false, root_0, None, |runs| {
            all_ok(runs);
            let ways = &runs[0].0;
            let first = ways.iter().position(Option::is_some).unwrap_or(ways.len());
            assert!(first >= (5 * EPOCH) as usize, "{ways:?}");
            assert!(ways[first..].iter().all(|&w| w == Some(false)), "{ways:?}");
            if first < ways.len() {
                SWITCHED.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        });
        assert!(
            SWITCHED.load(std::sync::atomic::Ordering::Relaxed),
            "no interleaving switched regimes"
        );
    }

    /// Two ranks' core timing class `K`, rank 1 having made call 1.
    fn two_ranks() -> (crate::runtime::sync::Arc<Core>, (u64, u64)) {
        let mut timed = [false; CLASSES];
        timed[K] = true;
        let core = crate::runtime::sync::Arc::new(
            Core::new_with_small(2, 64, 0, false).with_choice(Boards::new(2, &timed)),
        );
        let header = CallInfo::header(CollectiveKind::Broadcast, 1, 0, 4096);
        core.publish(0, 1, header);
        core.publish(1, 1, header);
        (core, (1, header))
    }

    #[test]
    fn loom_choice_a_waiter_for_a_way_is_woken() {
        // Rank 1 waits for the way of epoch 2 while rank 0 publishes it and nudges: the wait
        // must end with that way, however the mark, the announcement and the publication
        // interleave.
        loom::model(|| {
            let (core, id) = two_ranks();
            let c = crate::runtime::sync::Arc::clone(&core);
            let publisher = thread::spawn(move || {
                c.choice.publish_way(K, 2, Some(true));
                c.choice.nudge(&c, 1);
            });
            assert_eq!(way_of(&core, 1, K, 2, id).expect("a way"), Some(true));
            publisher.join().unwrap();
        });
    }

    #[test]
    fn loom_choice_a_waiter_for_a_board_is_woken() {
        // Rank 0 waits for rank 1's board of epoch 0 while rank 1 records a load, publishes
        // the epoch and nudges: the wait must end with that load.
        loom::model(|| {
            let (core, id) = two_ranks();
            core.choice.publish(0, K, 0);
            let c = crate::runtime::sync::Arc::clone(&core);
            let publisher = thread::spawn(move || {
                c.choice.record(1, K, 0, 0, 180);
                c.choice.publish(1, K, 0);
                c.choice.nudge(&c, 0);
            });
            assert_eq!(agree(&core, 0, K, 0, id).expect("a load"), Some(180));
            publisher.join().unwrap();
        });
    }

    #[test]
    fn loom_choice_rank_fails_before_its_board() {
        // Rank 1 fails before the last call of epoch 1, so it never publishes that epoch:
        // rank 0 waits for it at the start of epoch 3 and must fail there.
        model(2, 8, true, roots_in_turn, Some((1, 3)), all_err);
    }

    #[test]
    fn loom_choice_rank_0_fails_before_a_way() {
        // Rank 0 fails before epoch 2 starts (call 4): it never publishes the way of epoch 4,
        // for which rank 1 waits.
        model(2, 10, true, roots_in_turn, Some((0, 4)), all_err);
    }
}
