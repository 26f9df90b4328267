//! Choosing between posting in a shared window and herald's plan over MPI by timing, at run
//! time.
//!
//! # Why
//!
//! `herald-mpi calibrate` times a posted broadcast ([`Post`]) against the planner's tree over
//! MPI at 8 B … 1 MiB, and a profile's choice between them is the faster at its sizes
//! ([`Profile::posted_wins`]). That choice describes the state the host was in during the
//! calibration. In the thirty-seventh session's figures AS1 the calibration timed a 2-rank
//! posted broadcast of 1 MiB at 142 µs against the tree's 133, so the bench ran the tree; the
//! bench itself, a minute later, timed posting at 49 µs and lost its 1 MiB and 4 MiB rows to
//! Open MPI (docs/mpi.md, "Thirty-seventh session"). herald's in-process runtime chooses its
//! copies by its own timings for the same reason (`herald::runtime`, held copies).
//!
//! # How
//!
//! A [`Chooser`] keeps one [`Class`] per collective and power-of-two size class. A class
//! starts on the profile's choice and times every call of the way it is on. At the end of
//! every *epoch* of calls the ranks agree on the slowest rank's time of it, and only agreed
//! figures decide, so every rank takes the same way in every call:
//!
//! - A class's first epoch warms it up and is not compared.
//! - Once an epoch after it is settled, and then after 2, 4, … up to [`MAX_BACKOFF`] epochs, a
//!   class *tries* the other way for an epoch (at least [`MIN_TRY`] calls).
//! - A try that is more than 5 % faster per call than the fastest of the last [`RECENT`]
//!   epochs on the settled way switches the class to that way (and its tries start again
//!   after one epoch); one that is not doubles the epochs to the next try.
//!
//! The first call on a way after calls on the other pays that way's warm-up (lines of its
//! buffers, or of the window, that left the caches meanwhile) and is not counted; later calls
//! of a try may still pay some of it, so tries lean against switching: a class leaves its way
//! for a clearly faster one, not for one within the spread.
//!
//! **Agreements do not wait** ([`Post::agree`]): at the end of an epoch each rank publishes
//! its time in the shared window and reads every rank's time of the agreement two before,
//! waiting only for a rank that has not got that far. A posted broadcast loop is fastest when
//! its root runs many calls ahead of its readers; an agreement that made the ranks wait for
//! each other (a posted allreduce, the first version of this session) took that lead away:
//! with the class held on posting and such an agreement every 8 calls, a 2-rank `loop` of
//! 256 KiB broadcasts took 0.55–1.56 of `MPI_Bcast` where the same loop without agreements
//! took 0.32–1.03, and the tries of the tree won against the slowed posting. So a class's
//! epochs are planned from times two agreements old ([`Class::begin`]).
//!
//! An epoch is long enough that its calls take about 100 agreements' time (priced as the
//! profile's posted allreduce of a word per rank, [`Class::epoch_calls`]), and at least
//! [`MIN_EPOCH`] calls. A class is timed only where both the profile's times are long and
//! close ([`timed`]): the faster at least [`FLOOR_NS`], the slower at most [`BAND`] times it;
//! elsewhere it takes the profile's choice.
//!
//! # Measured, and why it is opt-in (docs/mpi.md, "Thirty-eighth session")
//!
//! `herald-mpi bench --post adapt` and `herald-mpi run --adapt` use it; the bench's default is
//! still the profile's choice. Ten passes of 2 processes against `--post auto`
//! (`docs/data/mpi-adapt-2026-12-01.txt`, run 6):
//!
//! - With the stale profile of figures AS1 (the tree at 1 MiB), the 1 and 4 MiB broadcast
//!   rows measured 0.47–0.94 of `MPI_Bcast` (medians over the passes) against 0.99–1.02.
//!   The 4 MiB `loop`, the first row of its class in the bench, mostly ended before the class
//!   switched (9 of 10 passes).
//! - With the profile of figures AS2 (posting, right), the class never switched, but its tries
//!   of the tree cost: the 256 KiB to 4 MiB broadcasts measured 0.24–0.97 against 0.24–0.61.
//!   Some of that is the host: in four passes of 4 processes, where the chooser timed no
//!   broadcast (the profile's two ways lie more than 2× apart there), the same posted
//!   broadcast rows differed by up to 2.2× between the two sides of the A/B (1 MiB `barrier`:
//!   0.11 against 0.25 of `MPI_Bcast`).
//!
//! So it is worth it where a profile may be stale and calls are long; it is not yet shown to
//! cost nothing where the profile is right. Thirty jobs of 2 processes, each calibrated
//! afresh, `--post auto` and `--post adapt` alternating (docs/mpi.md, "Forty-seventh
//! session"): in the host's fast mode the profile's choice won every row of its 20 runs and
//! the tries raised the 256 KiB `loop` from 0.37 to 0.44 of `MPI_Bcast` (medians); in the slow
//! mode both sides tie the library at 256 KiB – 1 MiB, and `adapt` lost 6 rows in 5 runs
//! against the profile's 9 in 4.
//!
//! [`Profile::posted_wins`]: herald::Profile::posted_wins

use crate::{Channel, P2pError, Post};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

/// A class's calls between two agreements: at least this many.
pub const MIN_EPOCH: u32 = 8;
/// A class's calls between two agreements: at most this many.
pub const MAX_EPOCH: u32 = 1 << 14;
/// Calls of a try: at least this many (else an epoch's).
pub const MIN_TRY: u32 = 4;
/// A try is compared with the fastest of this many last epochs on the settled way.
pub const RECENT: usize = 4;
/// The most epochs between two tries.
pub const MAX_BACKOFF: u32 = 64;
/// The least predicted time per call (of the faster way) at which a class is timed, ns: at
/// 5 µs the 64 KiB broadcasts of the stale profile of figures AS1 (posting, calibrated at
/// 8.4 µs) were timed too and switched to the tree in 6–8 of 10 passes, measuring 1.00–1.03
/// of `MPI_Bcast` against 0.37–1.11 with the profile's choice (the first version, whose
/// agreements waited: docs/data/mpi-adapt-2026-12-01.txt, run 1).
pub const FLOOR_NS: f64 = 25_000.0;
/// A class is timed only where the profile's slower way takes at most this many times the
/// faster's: where one way is far faster, a try of the other costs more than the choice is
/// likely to win back. (4 processes on 2 CPUs, where posting took 0.03–0.3 of the tree's
/// time: timing both ways, the 256 KiB allreduce measured 0.71–0.73 of `MPI_Allreduce`
/// against 0.36–0.40 and the 1 MiB broadcast 0.20–0.32 of `MPI_Bcast` against 0.11–0.17, the
/// class staying on posting, in four passes; the host's spread between the two sides of such
/// an A/B reaches 2× too, docs/data/mpi-adapt-2026-12-01.txt, runs 5b and 7.)
pub const BAND: f64 = 2.0;
/// An epoch's calls take about this many agreements' time.
const AGREEMENTS_PER_EPOCH: f64 = 100.0;

/// How a collective among the ranks of one node goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Posted in the shared window ([`Post`]).
    Posted,
    /// herald's plan over MPI point-to-point.
    OverMpi,
}

impl Way {
    /// The other way.
    pub fn other(self) -> Way {
        match self {
            Way::Posted => Way::OverMpi,
            Way::OverMpi => Way::Posted,
        }
    }

    /// The way in words.
    pub fn name(self) -> &'static str {
        match self {
            Way::Posted => "posted",
            Way::OverMpi => "over MPI",
        }
    }
}

/// The collectives a [`Chooser`] keeps apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A broadcast.
    Broadcast,
    /// An allreduce.
    Allreduce,
}

/// The choice of one class: which way it is on, and when it tries the other.
///
/// Only agreed epoch times move it ([`Class::settle`]), so ranks that record the same calls
/// and settle the same figures choose alike. Times may come back late: the [`Chooser`]'s
/// agreements do not wait ([`Post::agree`]), so an epoch's time is settled while later
/// epochs run, and each epoch is planned ([`Class::begin`]) from the times settled so far.
///
/// ```
/// use herald_mpi::adapt::{Class, Way};
/// let mut c = Class::new(Way::OverMpi, 8);
/// // the first epoch (the warm-up), then the second: 8 calls over MPI each, 100 µs a call on
/// // the slowest rank, each epoch's time settled at once
/// for _ in 0..2 {
///     for _ in 0..7 {
///         assert_eq!(c.took(100_000), None);
///     }
///     assert_eq!(c.took(100_000), Some(100_000));
///     c.settle(100_000);
///     c.begin();
/// }
/// // then a try of 8 calls posted, 50 µs each, after one uncounted (its warm-up): the
/// // class switches
/// assert_eq!(c.way(), Way::Posted);
/// assert_eq!(c.took(900_000), None);
/// for _ in 0..7 {
///     assert_eq!(c.took(50_000), None);
/// }
/// assert_eq!(c.took(50_000), Some(50_000));
/// c.settle(50_000);
/// c.begin();
/// assert_eq!((c.settled(), c.switches()), (Way::Posted, 1));
/// ```
#[derive(Debug, Clone)]
pub struct Class {
    /// The way it started on (the profile's choice).
    start: Way,
    /// The way of the epochs that are not tries.
    way: Way,
    /// Calls of such an epoch.
    epoch: u32,
    /// The epoch being run.
    now: Epoch,
    /// Epochs run whose agreed times have not been settled, oldest first.
    pending: VecDeque<Epoch>,
    /// Whether the next call is the first on its way after calls on the other: it is made but
    /// not counted (its warm-up).
    warming: bool,
    /// Calls counted in the current epoch.
    calls: u32,
    /// This rank's time of them, ns.
    mine_ns: u64,
    /// The agreed times per call of the last [`RECENT`] epochs on `way`, ns, oldest first.
    held_ns: Vec<u64>,
    /// Epochs from one try to the next.
    backoff: u32,
    /// Epochs on `way` left before the next try.
    until_try: u32,
    tries: u32,
    switches: u32,
}

/// An epoch of a [`Class`]: its way, whether it is a try, whether it is the class's first
/// (its warm-up, not compared).
#[derive(Debug, Clone, Copy)]
struct Epoch {
    way: Way,
    trying: bool,
    first: bool,
}

impl Class {
    /// A class on `start`, `epoch` calls (at least 1) between agreements; it tries the other
    /// way once an epoch after its first (its warm-up) is settled.
    pub fn new(start: Way, epoch: u32) -> Class {
        Class {
            start,
            way: start,
            epoch: epoch.max(1),
            now: Epoch {
                way: start,
                trying: false,
                first: true,
            },
            pending: VecDeque::new(),
            warming: false,
            calls: 0,
            mine_ns: 0,
            held_ns: Vec::with_capacity(RECENT),
            backoff: 1,
            until_try: 0,
            tries: 0,
            switches: 0,
        }
    }

    /// Calls of an epoch for a class whose faster way takes `call_ns` per call, where one
    /// agreement takes `agree_ns`: calls for about 100 agreements, from [`MIN_EPOCH`] to
    /// [`MAX_EPOCH`].
    ///
    /// ```
    /// use herald_mpi::adapt::{Class, MIN_EPOCH, MAX_EPOCH};
    /// assert_eq!(Class::epoch_calls(50_000.0, 300.0), MIN_EPOCH);
    /// assert_eq!(Class::epoch_calls(5_000.0, 1_000.0), 20);
    /// assert_eq!(Class::epoch_calls(0.0, 1_000.0), MAX_EPOCH);
    /// ```
    pub fn epoch_calls(call_ns: f64, agree_ns: f64) -> u32 {
        let calls = (AGREEMENTS_PER_EPOCH * agree_ns / call_ns).ceil();
        if calls.is_nan() || calls >= f64::from(MAX_EPOCH) {
            MAX_EPOCH
        } else {
            (calls as u32).max(MIN_EPOCH)
        }
    }

    /// The way of the next call.
    pub fn way(&self) -> Way {
        self.now.way
    }

    /// The way of the epochs that are not tries.
    pub fn settled(&self) -> Way {
        self.way
    }

    /// The way it started on.
    pub fn started(&self) -> Way {
        self.start
    }

    /// Tries settled so far.
    pub fn tries(&self) -> u32 {
        self.tries
    }

    /// Switches so far (tries that won).
    pub fn switches(&self) -> u32 {
        self.switches
    }

    /// Records this rank's time of a call made [`way`](Self::way). At the epoch's last call,
    /// returns this rank's time per call of the epoch, which the ranks then agree on (the
    /// slowest rank's goes to [`settle`](Self::settle), now or later), and the epoch is over:
    /// [`begin`](Self::begin) plans the next before the next call. The first call on a way
    /// after calls on the other is not counted: it pays that way's warm-up (the lines of its
    /// buffers, or of the window, that left the caches meanwhile).
    pub fn took(&mut self, ns: u64) -> Option<u64> {
        if std::mem::take(&mut self.warming) {
            return None;
        }
        self.calls += 1;
        self.mine_ns = self.mine_ns.saturating_add(ns);
        let len = if self.now.trying {
            self.epoch.max(MIN_TRY)
        } else {
            self.epoch
        };
        if self.calls < len {
            return None;
        }
        let per_call = self.mine_ns / u64::from(self.calls);
        (self.calls, self.mine_ns) = (0, 0);
        self.pending.push_back(self.now);
        Some(per_call)
    }

    /// Settles the oldest epoch not yet settled with its agreed time per call (the slowest
    /// rank's, ns): after a try, switches if the try was more than 5 % faster than the
    /// fastest of the last [`RECENT`] epochs on the settled way (an epoch's time has a long
    /// upper tail: a slow one alone must not make a try look faster).
    pub fn settle(&mut self, agreed_ns: u64) {
        let Some(e) = self.pending.pop_front() else {
            return;
        };
        if e.first {
            // the class's first epoch warms it up (the bench's first epoch of 1 MiB posted
            // allreduces took 460–540 µs a call, its later ones 100–370): not a measurement
        } else if e.trying {
            self.tries += 1;
            match self.held_ns.iter().min() {
                Some(&held) if u128::from(agreed_ns) * 21 < u128::from(held) * 20 => {
                    self.way = e.way;
                    self.held_ns.clear();
                    self.held_ns.push(agreed_ns);
                    self.switches += 1;
                    self.backoff = 1;
                }
                _ => self.backoff = (self.backoff * 2).min(MAX_BACKOFF),
            }
            self.until_try = self.backoff;
        } else if e.way == self.way {
            if self.held_ns.len() == RECENT {
                self.held_ns.remove(0);
            }
            self.held_ns.push(agreed_ns);
        }
    }

    /// Plans the next epoch, after [`took`](Self::took) ended one (and after the settling
    /// its agreement brought): a try of the other way once the epochs before the next try
    /// have run, no try is waiting to be settled and an epoch on the settled way is; else an
    /// epoch on the settled way.
    pub fn begin(&mut self) {
        let before = self.now.way;
        let try_out = self.pending.iter().any(|e| e.trying);
        let trying = !try_out && !self.held_ns.is_empty() && self.until_try == 0;
        if !try_out && !self.held_ns.is_empty() && !trying {
            self.until_try -= 1;
        }
        self.now = Epoch {
            way: if trying { self.way.other() } else { self.way },
            trying,
            first: false,
        };
        self.warming = self.now.way != before;
    }
}

/// Whether a [`Chooser`] times a class whose ways the profile prices at `(posted, over MPI)`
/// ns a call: the faster at least [`FLOOR_NS`], the slower at most [`BAND`] times the faster.
///
/// ```
/// use herald_mpi::adapt::timed;
/// assert!(timed((142_000.0, 133_000.0))); // AS1's 2-rank 1 MiB broadcast
/// assert!(!timed((8_400.0, 11_000.0))); // its 64 KiB: too short to time
/// assert!(!timed((30_000.0, 100_000.0))); // posting far faster
/// assert!(!timed((f64::NAN, 100_000.0)));
/// ```
pub fn timed((posted_ns, over_ns): (f64, f64)) -> bool {
    let (fast, slow) = (posted_ns.min(over_ns), posted_ns.max(over_ns));
    // (`min` and `max` pass over a NaN)
    !posted_ns.is_nan() && !over_ns.is_nan() && fast >= FLOOR_NS && slow <= BAND * fast
}

/// The profile's choice between the two ways priced `(posted, over MPI)` ns a call.
fn faster((posted_ns, over_ns): (f64, f64)) -> Way {
    if posted_ns <= over_ns {
        Way::Posted
    } else {
        Way::OverMpi
    }
}

/// The [`Chooser`]'s key of a collective of `kind` and `bytes`: its power-of-two size class.
fn key(kind: Kind, bytes: usize) -> (Kind, u32) {
    (kind, bytes.max(1).next_power_of_two().trailing_zeros())
}

/// Chooses, per collective and power-of-two size class, between posting and herald's plan
/// over MPI by timing (module docs). Every rank of the channel makes the same calls through
/// it, in the same order, with the same sizes and profile figures, and with the same
/// [`Post`]: a chooser takes every agreement of its post ([`Post::agree`]) for its own, so
/// one post serves one chooser.
#[derive(Debug)]
pub struct Chooser {
    /// One agreement, ns (the profile's posted allreduce of one word per rank).
    agree_ns: f64,
    /// Per `(kind, log2 of the size class)`: the timed classes.
    classes: RefCell<BTreeMap<(Kind, u32), Class>>,
    /// The classes of the agreements whose times have not come back, oldest first.
    order: RefCell<VecDeque<(Kind, u32)>>,
}

impl Chooser {
    /// A chooser whose agreement takes `agree_ns` (epochs are about 100 agreements long).
    pub fn new(agree_ns: f64) -> Chooser {
        Chooser {
            agree_ns,
            classes: RefCell::new(BTreeMap::new()),
            order: RefCell::new(VecDeque::new()),
        }
    }

    /// A chooser for `ranks` ranks, its agreement priced by `profile`'s posted allreduce of
    /// `8 · ranks` bytes (10 µs where the profile has none): an agreement ([`Post::agree`])
    /// writes a word and reads one per rank, as that allreduce does, without its wait.
    pub fn for_profile(profile: &herald::Profile, ranks: u32) -> Chooser {
        let agree = profile
            .posted_allreduce_ns(ranks, 8 * u64::from(ranks))
            .map_or(10_000.0, |(posted, _)| posted);
        Chooser::new(agree)
    }

    /// Runs one collective of `kind` and `bytes` with `call`, the way chosen for its class:
    /// the faster of `posted_ns` and `over_ns` (the profile's times) where the class is not
    /// [`timed`], else the class's way (its first call starts it on the faster). At an
    /// epoch's end the ranks agree through `post` on `chan` ([`Post::agree`]: it brings the
    /// times of the agreement two before). Returns the way taken.
    ///
    /// # Errors
    /// `call`'s error, or the agreement's.
    pub fn call<E: From<P2pError>>(
        &self,
        (kind, bytes): (Kind, usize),
        (posted_ns, over_ns): (f64, f64),
        (post, chan): (&Post, &Channel),
        call: impl FnOnce(Way) -> Result<(), E>,
    ) -> Result<Way, E> {
        let start = faster((posted_ns, over_ns));
        if !timed((posted_ns, over_ns)) {
            call(start)?;
            return Ok(start);
        }
        let fastest = posted_ns.min(over_ns);
        let key = key(kind, bytes);
        let way = self
            .classes
            .borrow_mut()
            .entry(key)
            .or_insert_with(|| Class::new(start, Class::epoch_calls(fastest, self.agree_ns)))
            .way();
        let t0 = Instant::now();
        call(way)?;
        let ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let mine = self
            .classes
            .borrow_mut()
            .get_mut(&key)
            .and_then(|c| c.took(ns));
        if let Some(mine) = mine {
            // agreement k is this class's; it brings every rank's time of agreement k − 2,
            // whichever class that was
            self.order.borrow_mut().push_back(key);
            let mut earlier = vec![0u64; chan.size()];
            let mut classes = self.classes.borrow_mut();
            if post.agree(chan, mine, &mut earlier)? {
                let slowest = earlier.iter().copied().max().unwrap_or(mine);
                let old = self.order.borrow_mut().pop_front();
                if let Some(c) = old.and_then(|old| classes.get_mut(&old)) {
                    c.settle(slowest);
                }
            }
            if let Some(c) = classes.get_mut(&key) {
                c.begin();
            }
        }
        Ok(way)
    }

    /// The way the class of `kind` and `bytes`, priced `times` by the profile, is settled
    /// on: what [`Chooser::call`] takes there outside a try (the profile's choice where the
    /// class is not timed).
    pub fn settled(&self, (kind, bytes): (Kind, usize), times: (f64, f64)) -> Way {
        self.classes
            .borrow()
            .get(&key(kind, bytes))
            .map_or_else(|| faster(times), Class::settled)
    }

    /// The report of the class of `kind` and `bytes`, in words (`None` where it was not timed).
    pub fn describe(&self, kind: Kind, bytes: usize) -> Option<String> {
        let classes = self.classes.borrow();
        let c = classes.get(&key(kind, bytes))?;
        Some(format!(
            "chosen by timing: {} (the profile's: {}; {} of {} tries switched)",
            c.settled().name(),
            c.started().name(),
            c.switches(),
            c.tries()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Agreements late that an epoch's time is settled, as the [`Chooser`]'s are.
    const LAG: usize = crate::post::AGREE_LAG as usize;

    /// A class and the times of its epochs not yet settled, driven as a [`Chooser`] drives it.
    struct Driven {
        class: Class,
        times: VecDeque<u64>,
    }

    impl Driven {
        fn new(start: Way, epoch: u32) -> Driven {
            Driven {
                class: Class::new(start, epoch),
                times: VecDeque::new(),
            }
        }

        /// One call costing `ns` on every rank; whether it ended an epoch.
        fn call(&mut self, ns: u64) -> bool {
            let Some(t) = self.class.took(ns) else {
                return false;
            };
            self.times.push_back(t);
            if self.times.len() > LAG {
                let t = self.times.pop_front().expect("a time");
                self.class.settle(t);
            }
            self.class.begin();
            true
        }

        /// Runs `epochs` epochs with per-call costs `cost(way)`; the way of every call.
        fn run(&mut self, epochs: usize, cost: impl Fn(Way) -> u64) -> Vec<Way> {
            let mut ways = Vec::new();
            let mut done = 0;
            while done < epochs {
                let way = self.class.way();
                ways.push(way);
                done += usize::from(self.call(cost(way)));
            }
            ways
        }

        /// Makes `calls` calls, the `i`-th (from 1) costing `cost(i, way, way of the call
        /// before)` (the first call's "before" is its own way).
        fn drive(&mut self, calls: u64, mut cost: impl FnMut(u64, Way, Way) -> u64) {
            let mut last = self.class.way();
            for call in 1..=calls {
                let way = self.class.way();
                self.call(cost(call, way, last));
                last = way;
            }
        }
    }

    #[test]
    fn a_class_on_the_slower_way_switches_at_its_first_try() {
        // AS1's 1 MiB broadcast: the profile said tree (133 against 142 µs), then posting took
        // 49 µs and the tree 83
        let mut d = Driven::new(Way::OverMpi, 8);
        let cost = |w: Way| if w == Way::Posted { 49_000 } else { 83_000 };
        let ways = d.run(5, cost);
        // the warm-up epoch, one to compare with, and the two run while its time comes back
        assert_eq!(ways[..32], [Way::OverMpi; 32]);
        // a try: one warm-up call, then an epoch's counted
        assert_eq!(ways[32..], [Way::Posted; 9]);
        // its time comes back two epochs later
        d.run(1, cost);
        assert_eq!((d.class.settled(), d.class.tries()), (Way::OverMpi, 0));
        d.run(1, cost);
        let c = &d.class;
        assert_eq!((c.settled(), c.tries(), c.switches()), (Way::Posted, 1, 1));
        // and it stays there: the tries of the tree lose
        d.run(200, cost);
        assert_eq!((d.class.settled(), d.class.switches()), (Way::Posted, 1));
    }

    #[test]
    fn tries_of_a_slower_way_come_ever_less_often_up_to_the_cap() {
        let mut d = Driven::new(Way::Posted, 8);
        let ways = d.run(600, |w| if w == Way::Posted { 100 } else { 150 });
        // the epochs between tries, from the calls: runs of posted calls / 8 (a run after a
        // try starts with an uncounted call)
        let mut gaps = Vec::new();
        let mut run_len = 0;
        for w in &ways {
            match w {
                Way::Posted => run_len += 1,
                Way::OverMpi if run_len > 0 => {
                    gaps.push(run_len / 8);
                    run_len = 0;
                }
                Way::OverMpi => {}
            }
        }
        // the first gap: the warm-up, an epoch to compare with and the two its time takes to
        // come back; then the backoff (2, 4, … 64) and the two epochs each try's time takes
        assert_eq!(gaps[..8], [4, 4, 6, 10, 18, 34, 66, 66]);
        // tries cost 9 calls in 66 epochs of 8 at the cap (1.7 %), more before it
        assert!(ways.iter().filter(|&&w| w == Way::OverMpi).count() < ways.len() / 33);
        assert_eq!(d.class.switches(), 0);
    }

    #[test]
    fn a_class_follows_a_change_of_the_host() {
        // posting wins at first, then the host changes and the tree wins by 1.5×
        let mut d = Driven::new(Way::Posted, 8);
        d.run(20, |w| if w == Way::Posted { 100 } else { 200 });
        assert_eq!(d.class.settled(), Way::Posted);
        d.run(200, |w| if w == Way::Posted { 300 } else { 200 });
        assert_eq!(d.class.settled(), Way::OverMpi);
    }

    #[test]
    fn one_slow_epoch_does_not_make_a_slower_try_look_faster() {
        // posting takes 50 µs a call, but one epoch in three is slow (a 500 µs call among
        // its eight: 106 µs a call); the tree takes 83
        let mut d = Driven::new(Way::Posted, 8);
        d.drive(20_000, |call, way, _| match way {
            Way::Posted if call % 24 == 0 => 500_000,
            Way::Posted => 50_000,
            Way::OverMpi => 83_000,
        });
        assert_eq!((d.class.settled(), d.class.switches()), (Way::Posted, 0));
        assert!(d.class.tries() >= 8);
    }

    #[test]
    fn the_first_call_of_a_try_is_its_warm_up() {
        // the other way takes 40 µs a call against 50, but its first call after the other
        // way's takes 1 ms (its lines left the caches): counted, it would cost the try
        // (1000 + 3 · 40) / 4 = 280 µs a call
        let mut d = Driven::new(Way::OverMpi, 8);
        d.drive(100, |_, way, last| match (way, last) {
            (Way::Posted, Way::OverMpi) => 1_000_000,
            (Way::Posted, _) => 40_000,
            (Way::OverMpi, _) => 50_000,
        });
        assert_eq!((d.class.settled(), d.class.switches()), (Way::Posted, 1));
    }

    #[test]
    fn a_cold_first_epoch_is_not_compared() {
        // posting takes 100 µs a call once warm and 500 in its first epoch; the tree 150
        let mut d = Driven::new(Way::Posted, 8);
        d.drive(1000, |call, way, _| match way {
            Way::Posted if call <= 8 => 500_000,
            Way::Posted => 100_000,
            Way::OverMpi => 150_000,
        });
        assert_eq!((d.class.settled(), d.class.switches()), (Way::Posted, 0));
        assert!(d.class.tries() >= 4);
    }

    #[test]
    fn a_try_within_five_percent_does_not_switch() {
        let mut d = Driven::new(Way::OverMpi, 8);
        d.run(100, |w| if w == Way::Posted { 96 } else { 100 });
        assert_eq!((d.class.settled(), d.class.switches()), (Way::OverMpi, 0));
        assert!(d.class.tries() >= 5);
    }

    #[test]
    fn epochs_hold_about_a_hundred_agreements() {
        assert_eq!(Class::epoch_calls(1e6, 1e3), MIN_EPOCH);
        assert_eq!(Class::epoch_calls(10_000.0, 2_000.0), 20);
        assert_eq!(Class::epoch_calls(1.0, 1e9), MAX_EPOCH);
        assert_eq!(Class::epoch_calls(f64::NAN, 1.0), MAX_EPOCH);
        // a try is an epoch long, at least MIN_TRY calls (after the warm-up epoch, one to
        // compare with and the two its time takes to come back)
        let mut d = Driven::new(Way::Posted, 40);
        d.run(4, |_| 1);
        assert_eq!(d.class.way(), Way::OverMpi);
        assert_eq!(d.run(1, |_| 1).len(), 1 + 40);
        let mut d = Driven::new(Way::Posted, 2);
        d.run(4, |_| 1);
        assert_eq!(d.run(1, |_| 1).len(), 1 + MIN_TRY as usize);
    }
}
