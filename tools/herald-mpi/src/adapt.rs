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
//! starts on the profile's choice and times every call of the way it is on. Every *epoch* of
//! calls the ranks agree on the slowest rank's time of the epoch, and only agreed figures
//! decide, so every rank takes the same way in every call:
//!
//! - A class's first epoch warms it up and is not compared.
//! - After its second epoch, and then after 2, 4, … up to [`MAX_BACKOFF`] epochs, a class *tries*
//!   the other way for a shorter epoch (half, at least [`MIN_TRY`] calls).
//! - A try that is more than 5 % faster per call than the fastest of the last [`RECENT`]
//!   epochs before it switches the class to that way (and its tries start again after one
//!   epoch); one that is not doubles the epochs to the next try.
//!
//! The first call on a way after calls on the other pays that way's warm-up (lines of its
//! buffers, or of the window, that left the caches meanwhile) and is not counted; later calls
//! of a short try may still pay some of it, so tries lean against switching: a class leaves
//! its way for a clearly faster one, not for one within the spread.
//!
//! Agreeing is a posted allreduce of one word per rank (each rank's epoch time in its own word),
//! so its cost is the profile's posted allreduce of that many bytes. An epoch is long enough
//! that its calls take about 100 agreements ([`Class::epoch_calls`]), and at least
//! [`MIN_EPOCH`] calls. A class whose faster way the profile puts below [`FLOOR_NS`] is not
//! timed: it takes the profile's choice.
//!
//! # Limits (measured; docs/mpi.md, "Thirty-eighth session")
//!
//! The choice is opt-in (`herald-mpi bench --post adapt`, `herald-mpi run --adapt`), not the
//! default, because an agreement is a point where the ranks wait for each other:
//!
//! - A posted broadcast loop is fastest when its root runs many calls ahead of its readers.
//!   The agreement every epoch takes that lead away. With the way held on posting and an
//!   agreement every 8 calls, a 2-rank `loop` of 256 KiB broadcasts took 0.55–1.56 of
//!   `MPI_Bcast` where the same loop without agreements took 0.32–1.03 (six passes each).
//! - So at 256 KiB the tries of the tree win against a slowed posting: with the stale profile
//!   of figures AS1, the 256 KiB rows switched to the tree in 3 to 6 passes of 10 and measured
//!   0.98–1.02 of `MPI_Bcast` (medians over the passes) against 0.24–0.53 with the profile's
//!   choice (posting).
//! - From 1 MiB it pays where the profile is stale: with the same profile (which chose the
//!   tree there) the 1 and 4 MiB broadcast rows measured 0.39–0.77 of `MPI_Bcast` against
//!   0.96–1.05.
//! - Where the profile is right it costs: with the profile of figures AS2 the 1 MiB broadcast
//!   rows measured 0.36–0.90 against 0.34–0.65, and the 1 MiB allreduces 0.46–0.57 against
//!   0.42–0.51 (a try of the tree, and in 3 of 10 passes a switch to it).
//!
//! An agreement that does not wait (each rank publishes its epoch's time in the window and
//! reads the others' one epoch later) would keep the lead; it is not built.
//!
//! [`Profile::posted_wins`]: herald::Profile::posted_wins

use crate::{Channel, P2pError, Post};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Instant;

/// A class's calls between two agreements: at least this many.
pub const MIN_EPOCH: u32 = 8;
/// A class's calls between two agreements: at most this many.
pub const MAX_EPOCH: u32 = 1 << 14;
/// Calls of a try: at least this many (else half an epoch).
pub const MIN_TRY: u32 = 4;
/// A try is compared with the fastest of this many last epochs on the settled way.
pub const RECENT: usize = 4;
/// The most epochs between two tries.
pub const MAX_BACKOFF: u32 = 64;
/// The least predicted time per call (of the faster way) at which a class is timed, ns: at
/// 5 µs the 64 KiB broadcasts of the stale profile of figures AS1 (posting, calibrated at
/// 8.4 µs) were timed too and switched to the tree in 6–8 of 10 passes, measuring 1.00–1.03
/// of `MPI_Bcast` against 0.37–1.11 with the profile's choice (module docs, "Limits").
pub const FLOOR_NS: f64 = 25_000.0;
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

/// The choice of one class: which way it is on, and when it tries the other. Only the agreed
/// epoch times ([`Class::settle`]) move it, so ranks that record the same calls and settle
/// the same figures choose alike.
///
/// ```
/// use herald_mpi::adapt::{Class, Way};
/// let mut c = Class::new(Way::OverMpi, 8);
/// // the first epoch (the warm-up), then the second: 8 calls over MPI each, the slowest
/// // rank took 800 µs in all
/// for _ in 0..2 {
///     for _ in 0..7 {
///         assert_eq!(c.took(100_000), None);
///     }
///     assert_eq!(c.took(100_000), Some(800_000));
///     c.settle(800_000);
/// }
/// // then a try of 4 calls posted, 50 µs each, after one uncounted (its warm-up): the
/// // class switches
/// assert_eq!(c.way(), Way::Posted);
/// assert_eq!(c.took(900_000), None);
/// for _ in 0..3 {
///     assert_eq!(c.took(50_000), None);
/// }
/// assert_eq!(c.took(50_000), Some(200_000));
/// c.settle(200_000);
/// assert_eq!((c.settled(), c.switches()), (Way::Posted, 1));
/// ```
#[derive(Debug, Clone)]
pub struct Class {
    /// The way of the epochs that are not tries.
    way: Way,
    /// Calls of such an epoch.
    epoch: u32,
    /// Whether the current epoch is a try of the other way.
    trying: bool,
    /// Whether the current epoch is the class's first (its warm-up, not compared).
    first: bool,
    /// Whether the next call is the first on its way after calls on the other: it is made but
    /// not counted (its warm-up).
    warming: bool,
    /// Calls recorded in the current epoch.
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

impl Class {
    /// A class on `start`, `epoch` calls (at least 1) between agreements; it tries the other
    /// way after its second epoch (its first is its warm-up).
    pub fn new(start: Way, epoch: u32) -> Class {
        Class {
            way: start,
            epoch: epoch.max(1),
            trying: false,
            first: true,
            warming: false,
            calls: 0,
            mine_ns: 0,
            held_ns: Vec::with_capacity(RECENT),
            backoff: 1,
            until_try: 1,
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
        if self.trying {
            self.way.other()
        } else {
            self.way
        }
    }

    /// The way of the epochs that are not tries.
    pub fn settled(&self) -> Way {
        self.way
    }

    /// Tries so far.
    pub fn tries(&self) -> u32 {
        self.tries
    }

    /// Switches so far (tries that won).
    pub fn switches(&self) -> u32 {
        self.switches
    }

    fn epoch_len(&self) -> u32 {
        if self.trying {
            (self.epoch / 2).max(MIN_TRY)
        } else {
            self.epoch
        }
    }

    /// Records this rank's time of a call made [`way`](Self::way); at the epoch's last call,
    /// this rank's time of the epoch, which the ranks then agree on (the slowest rank's) and
    /// pass to [`settle`](Self::settle) before the next call. The first call on a way after
    /// calls on the other is not counted: it pays that way's warm-up (the lines of its
    /// buffers, or of the window, that left the caches meanwhile).
    pub fn took(&mut self, ns: u64) -> Option<u64> {
        if std::mem::take(&mut self.warming) {
            return None;
        }
        self.calls += 1;
        self.mine_ns = self.mine_ns.saturating_add(ns);
        (self.calls >= self.epoch_len()).then_some(self.mine_ns)
    }

    /// Ends the epoch with its agreed time (the slowest rank's, ns): after a try, switches if
    /// the try was more than 5 % faster per call than the fastest of the last [`RECENT`]
    /// epochs before it (an epoch's time has a long upper tail: a slow one alone must not
    /// make a try look faster).
    pub fn settle(&mut self, agreed_ns: u64) {
        let per_call = agreed_ns / u64::from(self.calls.max(1));
        self.calls = 0;
        self.mine_ns = 0;
        let before = self.way();
        if self.trying {
            self.trying = false;
            self.tries += 1;
            match self.held_ns.iter().min() {
                Some(&held) if u128::from(per_call) * 21 < u128::from(held) * 20 => {
                    self.way = self.way.other();
                    self.held_ns.clear();
                    self.held_ns.push(per_call);
                    self.switches += 1;
                    self.backoff = 1;
                }
                _ => self.backoff = (self.backoff * 2).min(MAX_BACKOFF),
            }
            self.until_try = self.backoff;
        } else if std::mem::take(&mut self.first) {
            // the class's first epoch warms it up (the bench's first epoch of 1 MiB posted
            // allreduces took 460–540 µs a call, its later ones 100–370): not a measurement
        } else {
            if self.held_ns.len() == RECENT {
                self.held_ns.remove(0);
            }
            self.held_ns.push(per_call);
            self.until_try = self.until_try.saturating_sub(1);
            self.trying = self.until_try == 0;
        }
        self.warming = self.way() != before;
    }
}

/// A class's state as reported: `(kind, bytes of the first call, start, now, tries,
/// switches)`.
pub type ClassReport = (Kind, usize, Way, Way, u32, u32);

/// A timed class of a [`Chooser`], with the size of its first call and the way it started on.
type Entry = (Class, usize, Way);

/// Chooses, per collective and power-of-two size class, between posting and herald's plan
/// over MPI by timing (module docs). Every rank of the channel makes the same calls through
/// it, in the same order, with the same sizes and profile figures.
#[derive(Debug)]
pub struct Chooser {
    /// One agreement, ns (the profile's posted allreduce of one word per rank).
    agree_ns: f64,
    /// Per `(kind, log2 of the size class)`: the class, the size and way it started with.
    classes: RefCell<BTreeMap<(Kind, u32), Entry>>,
}

impl Chooser {
    /// A chooser whose agreement (a posted allreduce of one word per rank) takes `agree_ns`.
    pub fn new(agree_ns: f64) -> Chooser {
        Chooser {
            agree_ns,
            classes: RefCell::new(BTreeMap::new()),
        }
    }

    /// A chooser for `ranks` ranks, its agreement priced by `profile`'s posted allreduce of
    /// `8 · ranks` bytes (10 µs where the profile has none).
    pub fn for_profile(profile: &herald::Profile, ranks: u32) -> Chooser {
        let agree = profile
            .posted_allreduce_ns(ranks, 8 * u64::from(ranks))
            .map_or(10_000.0, |(posted, _)| posted);
        Chooser::new(agree)
    }

    /// Runs one collective of `kind` and `bytes` with `call`, the way chosen for its class:
    /// the faster of `posted_ns` and `over_ns` (the profile's times) where that is below
    /// [`FLOOR_NS`], else the class's way (its first call starts it on the faster). At an
    /// epoch's end the ranks agree through `post` on `chan`. Returns the way taken.
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
        let start = if posted_ns <= over_ns {
            Way::Posted
        } else {
            Way::OverMpi
        };
        let fastest = posted_ns.min(over_ns);
        if fastest.is_nan() || fastest < FLOOR_NS {
            call(start)?;
            return Ok(start);
        }
        let key = (kind, bytes.max(1).next_power_of_two().trailing_zeros());
        let way = self
            .classes
            .borrow_mut()
            .entry(key)
            .or_insert_with(|| {
                let epoch = Class::epoch_calls(fastest, self.agree_ns);
                (Class::new(start, epoch), bytes, start)
            })
            .0
            .way();
        let t0 = Instant::now();
        call(way)?;
        let ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let mine = self
            .classes
            .borrow_mut()
            .get_mut(&key)
            .and_then(|c| c.0.took(ns));
        if let Some(mine) = mine {
            let (n, me) = (chan.size(), chan.rank());
            let mut words = vec![0u64; n];
            words[me] = mine;
            post.allreduce(chan, &mut words)?;
            let slowest = words.iter().copied().max().unwrap_or(mine);
            if let Some(c) = self.classes.borrow_mut().get_mut(&key) {
                c.0.settle(slowest);
            }
        }
        Ok(way)
    }

    /// Every timed class so far, in order of kind and size.
    pub fn report(&self) -> Vec<ClassReport> {
        self.classes
            .borrow()
            .iter()
            .map(|(&(kind, _), (c, bytes, start))| {
                (kind, *bytes, *start, c.settled(), c.tries(), c.switches())
            })
            .collect()
    }

    /// The report of the class of `kind` and `bytes`, in words (`None` where it was not timed).
    pub fn describe(&self, kind: Kind, bytes: usize) -> Option<String> {
        let key = (kind, bytes.max(1).next_power_of_two().trailing_zeros());
        let classes = self.classes.borrow();
        let (c, _, start) = classes.get(&key)?;
        Some(format!(
            "chosen by timing: {} (the profile's: {}; {} of {} tries switched)",
            c.settled().name(),
            start.name(),
            c.switches(),
            c.tries()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `epochs` epochs of `class` with per-call costs `cost(way)`, the same on every
    /// rank; returns the way of every call.
    fn run(class: &mut Class, epochs: usize, cost: impl Fn(Way) -> u64) -> Vec<Way> {
        let mut ways = Vec::new();
        let mut done = 0;
        while done < epochs {
            let way = class.way();
            ways.push(way);
            if let Some(sum) = class.took(cost(way)) {
                class.settle(sum);
                done += 1;
            }
        }
        ways
    }

    #[test]
    fn a_class_on_the_slower_way_switches_at_its_first_try() {
        // AS1's 1 MiB broadcast: the profile said tree (133 against 142 µs), then posting took
        // 49 µs and the tree 83
        let mut c = Class::new(Way::OverMpi, 8);
        let cost = |w: Way| if w == Way::Posted { 49_000 } else { 83_000 };
        let ways = run(&mut c, 3, cost);
        // the warm-up epoch and one to compare with
        assert_eq!(ways[..16], [Way::OverMpi; 16]);
        // a try: one warm-up call, then four counted
        assert_eq!(ways[16..], [Way::Posted; 5]);
        assert_eq!((c.settled(), c.tries(), c.switches()), (Way::Posted, 1, 1));
        // and it stays there: the tries of the tree lose
        run(&mut c, 200, cost);
        assert_eq!(c.settled(), Way::Posted);
        assert_eq!(c.switches(), 1);
    }

    #[test]
    fn tries_of_a_slower_way_come_ever_less_often_up_to_the_cap() {
        let mut c = Class::new(Way::Posted, 8);
        let ways = run(&mut c, 400, |w| if w == Way::Posted { 100 } else { 150 });
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
        // the first gap holds the warm-up epoch
        assert_eq!(gaps[..8], [2, 2, 4, 8, 16, 32, 64, 64]);
        assert!(ways.iter().filter(|&&w| w == Way::OverMpi).count() < ways.len() / 50);
        assert_eq!(c.switches(), 0);
    }

    #[test]
    fn a_class_follows_a_change_of_the_host() {
        // posting wins at first, then the host changes and the tree wins by 1.5×
        let mut c = Class::new(Way::Posted, 8);
        run(&mut c, 20, |w| if w == Way::Posted { 100 } else { 200 });
        assert_eq!(c.settled(), Way::Posted);
        run(&mut c, 200, |w| if w == Way::Posted { 300 } else { 200 });
        assert_eq!(c.settled(), Way::OverMpi);
    }

    #[test]
    fn one_slow_epoch_does_not_make_a_slower_try_look_faster() {
        // posting takes 50 µs a call, but one epoch in three is slow (a 500 µs call among
        // its eight: 106 µs a call); the tree takes 83
        let mut c = Class::new(Way::Posted, 8);
        let mut calls = 0u64;
        let mut ways = Vec::new();
        while ways.len() < 20_000 {
            let way = c.way();
            ways.push(way);
            calls += 1;
            let ns = match way {
                Way::Posted if calls % 24 == 0 => 500_000,
                Way::Posted => 50_000,
                Way::OverMpi => 83_000,
            };
            if let Some(sum) = c.took(ns) {
                c.settle(sum);
            }
        }
        assert_eq!((c.settled(), c.switches()), (Way::Posted, 0));
        assert!(c.tries() >= 8);
    }

    #[test]
    fn the_first_call_of_a_try_is_its_warm_up() {
        // the other way takes 40 µs a call against 50, but its first call after the other
        // way's takes 1 ms (its lines left the caches): counted, it would cost the try
        // (1000 + 3 · 40) / 4 = 280 µs a call
        let mut c = Class::new(Way::OverMpi, 8);
        let mut last = Way::OverMpi;
        let mut ways = Vec::new();
        while ways.len() < 100 {
            let way = c.way();
            let ns = match (way, last) {
                (Way::Posted, Way::OverMpi) => 1_000_000,
                (Way::Posted, _) => 40_000,
                (Way::OverMpi, _) => 50_000,
            };
            ways.push(way);
            last = way;
            if let Some(sum) = c.took(ns) {
                c.settle(sum);
            }
        }
        assert_eq!((c.settled(), c.switches()), (Way::Posted, 1));
    }

    #[test]
    fn a_cold_first_epoch_is_not_compared() {
        // posting takes 100 µs a call once warm and 500 in its first epoch; the tree 150
        let mut c = Class::new(Way::Posted, 8);
        let mut calls = 0;
        for _ in 0..1000 {
            let way = c.way();
            calls += 1;
            let ns = match way {
                Way::Posted if calls <= 8 => 500_000,
                Way::Posted => 100_000,
                Way::OverMpi => 150_000,
            };
            if let Some(sum) = c.took(ns) {
                c.settle(sum);
            }
        }
        assert_eq!((c.settled(), c.switches()), (Way::Posted, 0));
        assert!(c.tries() >= 4);
    }

    #[test]
    fn a_try_within_five_percent_does_not_switch() {
        let mut c = Class::new(Way::OverMpi, 8);
        run(&mut c, 100, |w| if w == Way::Posted { 96 } else { 100 });
        assert_eq!((c.settled(), c.switches()), (Way::OverMpi, 0));
        assert!(c.tries() >= 5);
    }

    #[test]
    fn epochs_hold_about_a_hundred_agreements() {
        assert_eq!(Class::epoch_calls(1e6, 1e3), MIN_EPOCH);
        assert_eq!(Class::epoch_calls(10_000.0, 2_000.0), 20);
        assert_eq!(Class::epoch_calls(1.0, 1e9), MAX_EPOCH);
        assert_eq!(Class::epoch_calls(f64::NAN, 1.0), MAX_EPOCH);
        // a try is half an epoch, at least MIN_TRY calls
        let mut c = Class::new(Way::Posted, 40);
        run(&mut c, 2, |_| 1);
        assert_eq!(c.way(), Way::OverMpi);
        assert_eq!(run(&mut c, 1, |_| 1).len(), 1 + 20);
        let mut c = Class::new(Way::Posted, 4);
        run(&mut c, 2, |_| 1);
        assert_eq!(run(&mut c, 1, |_| 1).len(), 1 + MIN_TRY as usize);
    }
}
