//! The choice between a plain and a streaming copy into a buffer another CPU holds.
//!
//! A single copy into a buffer whose lines another CPU's cache holds (the reader's own buffer,
//! which that CPU read in the call before: `direct.rs`, `held`) either takes every line back
//! from that cache (a plain copy) or invalidates it with non-temporal stores (a streaming
//! copy). Which is cheaper depends on the size and on the host's latency mode, which changes
//! while a program runs (docs/runtime.md, "The streaming window"; a 2-rank ping-pong, µs per
//! broadcast):
//!
//! | bytes | fast mode, plain | fast, streamed | slow mode, plain | slow, streamed |
//! |---:|---:|---:|---:|---:|
//! | 4 KiB | 0.54 | 1.15 | 2.37 | 1.44 |
//! | 16 KiB | 2.0–2.5 | 2.5–3.1 | 8.2 | 3.0 |
//! | 32 KiB – 2 MiB | | streaming wins in both | | |
//! | 4 MiB | 145–155 | 188–199 | | 223 |
//!
//! A third mode, in which the two CPUs share a cache (a raw hop of about 31 ns), reverses the
//! window: there a plain 256 KiB copy into a held buffer took 4.8 µs and herald's streamed
//! broadcast 17.7 (docs/runtime.md, "The streaming window in a shared cache").
//!
//! From [`HELD_FROM`] bytes the communicator chooses per size class (lengths within a factor
//! of 2), for all its ranks at once, from timings of the copies themselves. A class starts
//! streamed if its shortest length lies in [`STREAMING`] (where streaming won in the fast and
//! the slow mode alike), plain otherwise:
//!
//! * **One way for every rank.** One rank's way changes what the others' copies cost: a
//!   streamed buffer is read from memory by its next reader, a plainly copied one from the
//!   copier's cache. Measured in a 2-rank ping-pong at 4 KiB, fast mode, ps per byte copied:
//!   both plain 51–53, both streaming 190–210, one rank streaming 58–70 for that rank while
//!   the other's plain copies rose to 149–158. A rank choosing from its own timings alone
//!   switched to streaming (its own copies got cheaper), and the pair oscillated. So every
//!   rank copies the communicator's way ([`HeldWays`]), and the timings of all ranks' copies
//!   under one way price that way.
//! * **Epochs.** Each rank times every [`SAMPLE`]-th held copy of a class (two clock reads per
//!   chunk), one in [`SAMPLE_LARGE`] from [`LARGE`] bytes, and every one during a try (so a
//!   try lasts about [`EPOCH`] calls, or one if its first timing is [`GIVE_UP`] times the
//!   chosen way's cost). [`EPOCH`] timings, from any ranks, make an epoch; its median (ps per byte) is the
//!   way's cost. After each epoch of the chosen way, once [`FIRST_TRY`] epochs have passed (at
//!   once if the other way has no cost yet), one epoch tries the other way; it is chosen if it
//!   costs less than [`HYSTERESIS`] of the chosen way's last epoch. Each failed try doubles the
//!   epochs before the next, up to [`MAX_TRY`]; a switch starts again from [`FIRST_TRY`].
//!   A timing of a call that picked its way before a switch is dropped.
//!
//! Cost: a try costs one to [`EPOCH`] calls in the dearer way, at most once per `MAX_TRY`
//! epochs (`SAMPLE × EPOCH` calls each) once settled; the clock (the time-stamp counter on
//! x86-64) about 20 ns per timed chunk.

use super::direct::STREAMING;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

/// Held buffers shorter than this are copied plainly without timing (2 KiB: 0.35 µs plain
/// against 0.78 streamed in the fast mode; a copy this short is a fraction of its call).
pub(crate) const HELD_FROM: usize = 2 << 10;
/// One held copy in this many of a class, per rank, is timed (a 4 KiB call: about 0.5 µs, two
/// reads of the time-stamp counter about 20 ns, so 0.25% on average); one in
/// [`SAMPLE_LARGE`] from [`LARGE`] bytes.
pub(crate) const SAMPLE: u32 = 16;
/// Copies of at least this many bytes are timed more often: a program makes fewer of them
/// (one in 16 of a few hundred 4 MiB broadcasts would hardly finish an epoch), and a timing
/// costs them less (64 KiB: one chunk, two clock reads of a copy of 2–5 µs). Before the
/// sixty-seventh session 1 MiB: a bench of 2-rank 512 KiB ping-pongs in rounds of 2 ms took
/// 56–90 µs a broadcast, its class still in the way it started in, and 40–42 µs in rounds of
/// 10 ms (docs/runtime.md, "Sixty-seventh session").
pub(crate) const LARGE: usize = 64 << 10;
/// One held copy in this many from [`LARGE`] bytes is timed (4 MiB: 64 chunks of 64 KiB, two
/// clock reads each, about 1.3 µs of 150).
pub(crate) const SAMPLE_LARGE: u32 = 4;
/// A try ends at its first timing if that costs more than this many times the chosen way's
/// last epoch: a way that much dearer is not worth the rest of the epoch (4 KiB in the fast
/// mode: streaming 190–210 ps per byte against 51–53 plain).
pub(crate) const GIVE_UP: u64 = 2;
/// Timings per epoch.
pub(crate) const EPOCH: usize = 4;
/// Epochs of the chosen way before the first try of the other after a switch.
pub(crate) const FIRST_TRY: u32 = 4;
/// The most epochs between two tries.
pub(crate) const MAX_TRY: u32 = 256;
/// The other way must cost less than this share of the chosen way's (9/10) to be chosen, so
/// equal costs do not flip the choice on noise.
pub(crate) const HYSTERESIS: (u64, u64) = (9, 10);
/// Size classes: lengths of 2^k … 2^(k+1) − 1 bytes, k up to 47 (longer ones share the last).
const CLASSES: usize = 48;

/// What one call does: copy with non-temporal stores, and time its copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pick {
    pub(crate) streaming: bool,
    pub(crate) timed: bool,
}

/// A plain, untimed copy.
pub(crate) const PLAIN: Pick = Pick {
    streaming: false,
    timed: false,
};

/// One size class's epochs.
#[derive(Debug, Clone, Copy)]
struct Epochs {
    /// The way in use now (the chosen one, or the other during a try).
    way: bool,
    /// The chosen way.
    chosen: bool,
    /// This epoch's timings, ps per byte.
    samples: [u64; EPOCH],
    taken: usize,
    /// Per way (plain, streamed): the median of its last epoch.
    cost: [Option<u64>; 2],
    /// Epochs of the chosen way since the last try.
    since_try: u32,
    /// Epochs between tries now.
    every: u32,
}

impl Epochs {
    /// A class's epochs before any timing: `streaming` chosen.
    fn starting(streaming: bool) -> Epochs {
        Epochs {
            way: streaming,
            chosen: streaming,
            samples: [0; EPOCH],
            taken: 0,
            cost: [None; 2],
            since_try: 0,
            every: FIRST_TRY,
        }
    }

    /// The class's [`HeldWays`] bits: the way in use ([`STREAMS`]), and whether it is a try
    /// ([`TRYING`]).
    fn bits(&self) -> u8 {
        (if self.way { STREAMS } else { 0 }) | if self.way != self.chosen { TRYING } else { 0 }
    }

    /// Adds a timing of `way` (dropped unless `way` is the one in use); `self.way` is then
    /// the way to use from now on.
    fn add(&mut self, way: bool, ps_per_byte: u64) {
        if way != self.way {
            return;
        }
        self.samples[self.taken] = ps_per_byte;
        self.taken += 1;
        let chosen_cost = self.cost[usize::from(self.chosen)];
        let hopeless = way != self.chosen
            && self.taken == 1
            && chosen_cost.is_some_and(|c| ps_per_byte > c.saturating_mul(GIVE_UP));
        if hopeless {
            // A try given up at its first timing: as a failed try.
            self.taken = 0;
            self.cost[usize::from(way)] = Some(ps_per_byte);
            self.every = (self.every * 2).min(MAX_TRY);
            self.since_try = 0;
            self.way = self.chosen;
            return;
        }
        if self.taken < EPOCH {
            return;
        }
        self.taken = 0;
        let mut sorted = self.samples;
        sorted.sort_unstable();
        let median = sorted[(EPOCH - 1) / 2];
        self.cost[usize::from(way)] = Some(median);
        if way != self.chosen {
            // The end of a try.
            let mine = self.cost[usize::from(self.chosen)].unwrap_or(u64::MAX);
            if median.saturating_mul(HYSTERESIS.1) < mine.saturating_mul(HYSTERESIS.0) {
                self.chosen = way;
                self.every = FIRST_TRY;
            } else {
                self.every = (self.every * 2).min(MAX_TRY);
            }
            self.since_try = 0;
            self.way = self.chosen;
        } else {
            self.since_try += 1;
            if self.cost[usize::from(!way)].is_none() || self.since_try >= self.every {
                self.way = !self.chosen;
            }
        }
    }
}

/// A communicator's ways for copies into held buffers, per size class (see the module docs).
#[derive(Debug)]
pub(crate) struct HeldWays {
    /// Per class, the way in use ([`STREAMS`]) and whether it is a try ([`TRYING`]): read by
    /// every held copy, written after each epoch.
    way: [AtomicU8; CLASSES],
    /// The epochs per class (locked only by timed calls, and never waited for).
    epochs: [Mutex<Epochs>; CLASSES],
}

/// Whether class `k` starts streamed: its shortest length lies in [`STREAMING`].
fn starts_streamed(k: usize) -> bool {
    u32::try_from(k)
        .ok()
        .and_then(|k| 1usize.checked_shl(k))
        .is_some_and(|shortest| STREAMING.contains(&shortest))
}

impl Default for HeldWays {
    fn default() -> HeldWays {
        let epochs: [Epochs; CLASSES] =
            std::array::from_fn(|k| Epochs::starting(starts_streamed(k)));
        HeldWays {
            way: std::array::from_fn(|k| AtomicU8::new(epochs[k].bits())),
            epochs: epochs.map(Mutex::new),
        }
    }
}

/// [`HeldWays`]' bit of a class that streams now.
const STREAMS: u8 = 1;
/// [`HeldWays`]' bit of a class that tries the way not chosen (every copy is timed then, so a
/// try lasts about [`EPOCH`] calls).
const TRYING: u8 = 2;

/// A rank's count of its held copies per class (which ones it times).
#[derive(Debug, Clone)]
pub(crate) struct HeldCalls {
    calls: [u32; CLASSES],
}

impl Default for HeldCalls {
    fn default() -> HeldCalls {
        HeldCalls {
            calls: [0; CLASSES],
        }
    }
}

/// One held copy of `len` bytes in this many is timed, per rank ([`SAMPLE`], or
/// [`SAMPLE_LARGE`] from [`LARGE`] bytes).
fn sample_every(len: usize) -> u32 {
    if len >= LARGE {
        SAMPLE_LARGE
    } else {
        SAMPLE
    }
}

/// The class of a `len`-byte copy.
fn class_of(len: usize) -> usize {
    (len.max(1).ilog2() as usize).min(CLASSES - 1)
}

impl HeldWays {
    /// How a rank whose counts are `calls` copies `len` bytes into a held buffer in this call.
    pub(crate) fn pick(&self, calls: &mut HeldCalls, len: usize) -> Pick {
        if len < HELD_FROM {
            return PLAIN;
        }
        let class = class_of(len);
        let n = &mut calls.calls[class];
        *n = n.wrapping_add(1);
        // Relaxed: a stale way only costs one call the other way (and its timing is dropped).
        let way = self.way[class].load(Ordering::Relaxed);
        Pick {
            streaming: way & STREAMS != 0,
            timed: way & TRYING != 0 || *n % sample_every(len) == 0,
        }
    }

    /// Records a timed call of a `len`-byte buffer whose copies, streamed or not, moved
    /// `copied` bytes in `ns` nanoseconds. A call that copied nothing (a root's) is no timing;
    /// nor is one that finds another rank recording (it is dropped rather than waited for).
    pub(crate) fn record(&self, len: usize, streaming: bool, (ns, copied): (u64, u64)) {
        if len < HELD_FROM || copied == 0 {
            return;
        }
        let class = class_of(len);
        let Ok(mut epochs) = self.epochs[class].try_lock() else {
            return;
        };
        let ps_per_byte = (ns.saturating_mul(1000) / copied).max(1);
        epochs.add(streaming, ps_per_byte);
        self.way[class].store(epochs.bits(), Ordering::Relaxed);
    }

    /// The way chosen now for `len`-byte copies (not the one in use during a try).
    #[cfg(test)]
    fn chosen(&self, len: usize) -> bool {
        self.epochs[class_of(len)]
            .lock()
            .expect("unpoisoned")
            .chosen
    }
}

#[cfg(test)]
mod tests {
    use super::{
        sample_every, HeldCalls, HeldWays, Pick, EPOCH, FIRST_TRY, GIVE_UP, HELD_FROM, LARGE,
        MAX_TRY, PLAIN, SAMPLE, SAMPLE_LARGE,
    };
    use crate::runtime::collective::direct::STREAMING;

    /// Runs `calls` held copies of `len` bytes, alternating between `ranks` ranks, each copy
    /// costing `cost(streaming)` ps per byte; returns the calls (numbered from 0) of each try,
    /// a run of calls that used the way not chosen.
    fn drive(
        w: &HeldWays,
        ranks: &mut [HeldCalls],
        len: usize,
        calls: u32,
        mut cost: impl FnMut(bool) -> u64,
    ) -> Vec<u32> {
        let mut tries = Vec::new();
        let mut in_try = false;
        for i in 0..calls {
            let chosen = w.chosen(len);
            let r = i as usize % ranks.len();
            let Pick { streaming, timed } = w.pick(&mut ranks[r], len);
            if streaming != chosen && !in_try {
                tries.push(i);
            }
            in_try = streaming != chosen;
            if timed {
                w.record(
                    len,
                    streaming,
                    (cost(streaming) * len as u64 / 1000, len as u64),
                );
            }
        }
        tries
    }

    #[test]
    fn classes_start_streamed_in_the_window_and_short_copies_are_plain_and_untimed() {
        let w = HeldWays::default();
        let mut c = HeldCalls::default();
        // A class starts streamed iff its shortest length lies in the window.
        let window = [*STREAMING.start(), 1 << 20, *STREAMING.end(), 3 << 20];
        for len in window {
            assert!(w.pick(&mut c, len).streaming, "{len}");
            assert!(w.chosen(len), "{len}");
        }
        for len in [HELD_FROM, 4096, *STREAMING.start() - 1, 4 << 20] {
            assert!(!w.pick(&mut c, len).streaming, "{len}");
            assert!(!w.chosen(len), "{len}");
        }
        for len in [1, 64, HELD_FROM - 1] {
            for _ in 0..100 {
                assert_eq!(w.pick(&mut c, len), PLAIN);
            }
        }
    }

    #[test]
    fn copies_from_large_on_are_timed_more_often() {
        let w = HeldWays::default();
        let mut c = HeldCalls::default();
        // Fresh classes (nothing recorded, so no try under way): one call in 16 below 64 KiB,
        // one in 4 from there.
        for (len, every) in [
            (4096, SAMPLE),
            (LARGE - 1, SAMPLE),
            (LARGE, SAMPLE_LARGE),
            (4 << 20, SAMPLE_LARGE),
        ] {
            assert_eq!(sample_every(len), every);
            let timed = (0..64).filter(|_| w.pick(&mut c, len).timed).count();
            assert_eq!(timed, 64 / every as usize, "{len}");
        }
    }

    #[test]
    fn a_window_class_leaves_streaming_only_where_plain_copies_are_cheaper() {
        let len = 256 << 10;
        let per_epoch = sample_every(len) * EPOCH as u32;
        // The fast and the slow mode (docs/runtime.md, "The streaming window": 13.7 µs
        // streamed against 30.6 plain, and 15.0 against 163; ps per byte): streaming stays,
        // the tries of plain copies come ever less often, and in the slow mode each ends at
        // its first call (plain costs more than GIVE_UP times streaming).
        for (streamed, plain) in [(52, 117), (57, 622)] {
            let w = HeldWays::default();
            let mut ranks = vec![HeldCalls::default(); 2];
            let tries = drive(&w, &mut ranks, len, 200_000, |s| {
                if s {
                    streamed
                } else {
                    plain
                }
            });
            assert!(w.chosen(len), "{streamed} {plain}");
            // The first try follows the first epoch (plain has no cost yet).
            assert_eq!(tries.first(), Some(&per_epoch));
            let gaps: Vec<u32> = tries.windows(2).map(|t| t[1] - t[0]).collect();
            assert!(gaps.windows(2).all(|g| g[1] >= g[0]), "{gaps:?}");
            assert!(
                gaps.last()
                    .is_some_and(|&g| g + EPOCH as u32 >= MAX_TRY * per_epoch),
                "{gaps:?}"
            );
        }
        // The shared-cache mode (4.8 µs plain against 17.7 streamed): plain after the first
        // try, and it stays.
        let w = HeldWays::default();
        let mut ranks = vec![HeldCalls::default(); 2];
        let cost = |s: bool| if s { 68 } else { 18 };
        drive(&w, &mut ranks, len, 2 * per_epoch, cost);
        assert!(!w.chosen(len));
        drive(&w, &mut ranks, len, 100_000, cost);
        assert!(!w.chosen(len));
        // Other classes have not moved.
        assert!(w.chosen(64 << 10) && !w.chosen(4096));
    }

    #[test]
    fn a_class_settles_on_the_cheaper_way_and_tries_the_other_ever_less_often() {
        // Plain cheaper (the fast mode at 4 KiB, both ranks' copies): stays plain.
        let w = HeldWays::default();
        let mut ranks = vec![HeldCalls::default(); 2];
        let per_epoch = sample_every(4096) * EPOCH as u32;
        let tries = drive(&w, &mut ranks, 4096, 400_000, |s| if s { 200 } else { 52 });
        assert!(!w.chosen(4096));
        // The first try follows the first epoch (streaming has no cost yet); then tries
        // come 8, 16, … up to 256 plain epochs apart, each try timing every call (EPOCH
        // calls long).
        assert_eq!(tries[0], per_epoch);
        // (The try's calls count towards the ranks' sampling, so a gap is the plain epochs'
        // calls give or take the try's.)
        let gaps: Vec<u32> = tries.windows(2).map(|t| t[1] - t[0]).collect();
        let mut every = 2 * FIRST_TRY;
        for &gap in &gaps {
            assert!(gap.abs_diff(every * per_epoch) <= EPOCH as u32, "{gaps:?}");
            every = (every * 2).min(MAX_TRY);
        }
        assert!(gaps.len() >= 7, "{gaps:?}");
        // A try lasts its epoch, EPOCH calls, every one timed; or one call if that costs
        // GIVE_UP times the chosen way or more.
        for (streamed, calls) in [(80, EPOCH), (52 * GIVE_UP + 1, 1)] {
            let w2 = HeldWays::default();
            let mut r2 = vec![HeldCalls::default(); 2];
            drive(
                &w2,
                &mut r2,
                4096,
                per_epoch,
                |s| if s { streamed } else { 52 },
            );
            let mut trial = 0;
            while w2.pick(&mut r2[trial % 2], 4096).streaming {
                w2.record(4096, true, (streamed * 4096 / 1000, 4096));
                trial += 1;
            }
            assert_eq!(trial, calls, "streamed {streamed}");
        }
        // Streaming cheaper (the slow mode at 4 KiB): a fresh class switches after its first
        // try, and stays.
        let w = HeldWays::default();
        drive(&w, &mut ranks, 4096, 2 * per_epoch, |s| {
            if s {
                350
            } else {
                580
            }
        });
        assert!(w.chosen(4096));
        drive(&w, &mut ranks, 4096, 100_000, |s| if s { 350 } else { 580 });
        assert!(w.chosen(4096));
        // Classes are apart: 4 MiB has not moved.
        assert!(!w.chosen(4 << 20));
    }

    #[test]
    fn the_mode_changing_moves_the_choice_both_ways_and_noise_does_not() {
        // (8 MiB: one copy in SAMPLE_LARGE is timed)
        let len = 8 << 20;
        let w = HeldWays::default();
        let mut ranks = vec![HeldCalls::default(); 2];
        let per_epoch = sample_every(len) * EPOCH as u32;
        drive(&w, &mut ranks, len, 500 * per_epoch, |s| {
            if s {
                50
            } else {
                40
            }
        });
        assert!(!w.chosen(len));
        // The slow mode comes: plain costs 5× more. Within one try interval the class
        // streams.
        drive(&w, &mut ranks, len, (MAX_TRY + 2) * per_epoch, |s| {
            if s {
                50
            } else {
                200
            }
        });
        assert!(w.chosen(len));
        // Back to the fast mode: plain again within one try interval.
        drive(&w, &mut ranks, len, (MAX_TRY + 2) * per_epoch, |s| {
            if s {
                50
            } else {
                40
            }
        });
        assert!(!w.chosen(len));
        // One slow timing in an epoch (a preemption) does not move the median; costs within
        // 10% do not flip the choice.
        let mut k = 0u64;
        drive(&w, &mut ranks, len, 600 * per_epoch, |s| {
            k += 1;
            match (s, k % 7) {
                (_, 0) => 10_000,
                (true, _) => 46,
                (false, _) => 48,
            }
        });
        assert!(!w.chosen(len));
    }

    #[test]
    fn timings_of_a_way_no_longer_in_use_and_of_calls_that_copied_nothing_are_dropped() {
        let len = 4096;
        let w = HeldWays::default();
        // A root's timed call copies nothing.
        for _ in 0..10 * EPOCH {
            w.record(len, false, (0, 0));
        }
        assert!(w.epochs[super::class_of(len)].lock().unwrap().cost[0].is_none());
        // Streamed timings while the class copies plainly (picked before a switch): dropped.
        for _ in 0..10 * EPOCH {
            w.record(len, true, (100, len as u64));
        }
        let e = *w.epochs[super::class_of(len)].lock().unwrap();
        assert_eq!((e.taken, e.cost), (0, [None, None]));
    }
}
