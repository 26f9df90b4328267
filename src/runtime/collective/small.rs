//! Small allreduces in shared memory: every rank deposits its value in its
//! own slot, waits until every rank's slot holds this call's value, and combines all of them
//! itself, in rank order.
//!
//! # Why
//!
//! Up and down the rank-ordered tree through the rings, an allreduce is about twice the tree's
//! depth in hops, each one a wait for the receiving rank to run. With more ranks than CPUs
//! each such wait is a turn (a switch to another thread on the CPU), and a level of the tree
//! often waits for a whole round of the threads on a CPU. Here every rank runs twice per call
//! at most — once to deposit, once to combine after the last deposit — and a rank that finds
//! every slot full on its first look runs once. Between two ranks on two CPUs it is one line
//! transfer each way, in parallel, instead of one up and one down in sequence.
//! (docs/runtime.md, "Small allreduce in shared memory".)
//!
//! # Protocol
//!
//! A rank counts its small calls (its *epoch* `e`, from 1) and owns two slots, used by odd and
//! even epochs. A slot is one padded line — the epoch it holds (`gen`), the call's number and
//! header, the digest of the headers of every call the rank made so far, and the first
//! [`INLINE_WORDS`] payload words — and, for longer payloads, a region of the communicator's
//! overflow words. Every field is an atomic (payload words included, written
//! and read `Relaxed`), so no access is ever a data race and the protocol needs no `unsafe`.
//!
//! 1. Rank `me` writes its payload, call number and header into slot `e mod 2`, then stores
//!    `gen = e` with `Release`, and notifies every other rank.
//! 2. It waits until every other rank's slot `e mod 2` has `gen == e` (`Acquire`), checking
//!    each one's call number, header and digest against its own: another call there, or
//!    another call before it, is a [`CollectiveError::Mismatch`](super::CollectiveError::Mismatch).
//!    (The digest matters: a mismatched earlier call may have left nothing to read — a flat
//!    broadcast's line to a rank that made a reduce instead, a leaf's reduce line to a rank that
//!    broadcast — and the rings would report it only at that ring's next read, which may never
//!    come.)
//! 3. It reads every slot's payload and combines them in rank order.
//!
//! **Reuse.** Rank `r` writes slot `e mod 2` again in epoch `e + 2`, after finishing epoch
//! `e + 1`, so after every rank `q` deposited for `e + 1`; `q` does that only after finishing
//! epoch `e`, so after reading `r`'s slot for `e`. So no slot is written while a rank still
//! reads it for an earlier epoch, and a reader waiting for `e` sees `gen` below `e` (not yet)
//! or `e`, never `e + 2`. A rank leaves a call early only with an error, which poisons the
//! communicator (or sees its poison), so it makes no later call; a waiter sees the poison, a
//! mismatched peer or a departed one in its waits (`check_peer`, one peer per look, on every
//! look after the spin phase and every 64th while spinning), so it never waits forever.
//!
//! A rank that fails after depositing (a panic in its `op`) does not stop the others: every
//! value of the epoch is there, so they finish the call with its right result, and their next
//! call fails on the poison.
//!
//! **Equal results.** Every rank folds the same values in the same order with the same `op`,
//! so (for a deterministic `op`) every rank gets the same bytes.

use super::call::{Core, HISTORY};
use super::error::CollectiveError;
use super::words::{load_words, store_words};
use crate::runtime::sync::{AtomicU64, Ordering};
use crate::runtime::wait::{Phase, Polls};
use crossbeam_utils::CachePadded;
use std::sync::OnceLock;

/// Payload words kept in a slot's own line (with its epoch, call number, header and digest).
pub(crate) const INLINE_WORDS: usize = 4;

/// One rank's slot for one parity of epochs.
#[derive(Debug)]
pub(crate) struct Slot {
    /// The epoch whose value the slot holds (0: none yet); stored last, with `Release`.
    gen: AtomicU64,
    /// The call number of that epoch's call on the depositing rank.
    seq: AtomicU64,
    /// That call's header.
    header: AtomicU64,
    /// The digest of every header of the depositing rank's calls so far ([`digest`]).
    digest: AtomicU64,
    /// The first payload words.
    words: [AtomicU64; INLINE_WORDS],
}

impl Slot {
    fn new() -> Slot {
        Slot {
            gen: AtomicU64::new(0),
            seq: AtomicU64::new(0),
            header: AtomicU64::new(0),
            digest: AtomicU64::new(0),
            words: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

/// Every rank's two slots and the overflow words of longer payloads.
#[derive(Debug)]
pub(crate) struct Slots {
    /// Rank `r`'s slot for parity `p` at `2r + p`.
    heads: Box<[CachePadded<Slot>]>,
    /// Payload words past the inline ones, `stride` per slot (made on first use).
    extra: OnceLock<Box<[AtomicU64]>>,
    /// The largest payload in bytes.
    max_bytes: usize,
}

impl Slots {
    /// Slots for `n` ranks and payloads of at most `max_bytes` bytes.
    pub(crate) fn new(n: usize, max_bytes: usize) -> Slots {
        Slots {
            heads: (0..2 * n).map(|_| CachePadded::new(Slot::new())).collect(),
            extra: OnceLock::new(),
            max_bytes,
        }
    }

    /// The largest payload this communicator's slots hold, in bytes.
    pub(crate) fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Back to the fresh state (no endpoint exists).
    pub(crate) fn reset(&self) {
        for h in self.heads.iter() {
            h.gen.store(0, Ordering::Relaxed);
        }
    }

    /// Overflow words per slot: whole 128-byte blocks, so two ranks' regions share no line
    /// (nor an adjacent-line prefetch pair).
    fn stride(&self) -> usize {
        self.max_bytes
            .div_ceil(8)
            .saturating_sub(INLINE_WORDS)
            .div_ceil(16)
            * 16
    }

    /// The overflow words (made by the first rank that needs them).
    fn extra(&self) -> &[AtomicU64] {
        self.extra.get_or_init(|| {
            (0..self.heads.len() * self.stride())
                .map(|_| AtomicU64::new(0))
                .collect()
        })
    }

    fn slot(&self, rank: usize, epoch: u64) -> (&Slot, usize) {
        let i = 2 * rank + (epoch % 2) as usize;
        (&self.heads[i], i * self.stride())
    }

    /// The `count` overflow words of the slot whose region starts at `base`.
    fn more(&self, base: usize, count: usize) -> &[AtomicU64] {
        &self.extra()[base..base + count]
    }
}

/// Payload bytes kept in a slot's own line.
const INLINE_BYTES: usize = INLINE_WORDS * 8;

/// Stores the payload bytes past the inline ones into a slot's overflow words.
#[inline(never)]
fn store_more(slots: &Slots, base: usize, rest: &[u8]) {
    store_words(slots.more(base, rest.len().div_ceil(8)), rest);
}

/// Loads the payload bytes past the inline ones from a slot's overflow words.
#[inline(never)]
fn load_more(slots: &Slots, base: usize, rest: &mut [u8]) {
    load_words(slots.more(base, rest.len().div_ceil(8)), rest);
}

/// The digest of a rank's calls after one more with `header`: equal on every rank while the
/// ranks made the same calls (every call's header is the same on every rank), different — but
/// for a 2⁻⁶⁴ chance — once any earlier call differed.
pub(crate) fn digest(before: u64, header: u64) -> u64 {
    (before.rotate_left(23) ^ header).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Step 1: rank `me` deposits `payload` (at most [`Slots::max_bytes`]) for its epoch `epoch`
/// in call `(seq, header)`, after calls whose [`digest`] is `calls`, and wakes every other
/// rank.
pub(crate) fn deposit(
    core: &Core,
    me: usize,
    epoch: u64,
    (seq, header): (u64, u64),
    calls: u64,
    payload: &[u8],
) {
    let slots = &core.small;
    debug_assert!(payload.len() <= slots.max_bytes());
    let (slot, base) = slots.slot(me, epoch);
    // Whole words, one 8-byte load each (`words.rs`): the payload was often just written.
    let first = if payload.len() > INLINE_BYTES {
        let (first, rest) = payload.split_at(INLINE_BYTES);
        store_more(slots, base, rest);
        first
    } else {
        payload
    };
    store_words(&slot.words, first);
    slot.seq.store(seq, Ordering::Relaxed);
    slot.header.store(header, Ordering::Relaxed);
    slot.digest.store(calls, Ordering::Relaxed);
    slot.gen.store(epoch, Ordering::Release);
    core.notify_others(me);
}

/// Step 2: rank `me` waits until every rank has deposited for `epoch` in the same call, after
/// the same calls (digest `calls`).
///
/// # Errors
///
/// A mismatch (another call in a peer's slot, another digest, or another call in its
/// published history), a departed peer, the poison, or the team's abort.
pub(crate) fn wait_all(
    core: &Core,
    me: usize,
    epoch: u64,
    id: (u64, u64),
    calls: u64,
) -> Result<(), CollectiveError> {
    let n = core.signals.len();
    let mut next = 0usize;
    let mut polls = Polls::default();
    let look = |phase: Phase| -> Option<Result<(), CollectiveError>> {
        while next < n {
            if next != me {
                let (slot, _) = core.small.slot(next, epoch);
                if slot.gen.load(Ordering::Acquire) != epoch {
                    break;
                }
                let (seq, header) = (
                    slot.seq.load(Ordering::Relaxed),
                    slot.header.load(Ordering::Relaxed),
                );
                if (seq, header) != id {
                    return Some(Err(core.mismatch(me, next, id.1, header)));
                }
                if slot.digest.load(Ordering::Relaxed) != calls {
                    return Some(Err(earlier_mismatch(core, me, next, id)));
                }
            }
            next += 1;
        }
        if next == n {
            return Some(Ok(()));
        }
        core.wait_stop(&mut polls, phase, me, next, id).map(Err)
    };
    // `wait_phased_or` looks once inline before it waits.
    core.signals[me].wait_phased_or(look)?
}

/// The error of rank `me`, whose calls before `id` differ from `peer`'s (the digests do): the
/// first differing call still in both ranks' histories, else this call's headers.
#[cold]
pub(super) fn earlier_mismatch(
    core: &Core,
    me: usize,
    peer: usize,
    (seq, header): (u64, u64),
) -> CollectiveError {
    for s in seq.saturating_sub(HISTORY as u64 - 1).max(1)..seq {
        let (mine, theirs) = (core.ranks[me].header_of(s), core.ranks[peer].header_of(s));
        if let (Some(m), Some(t)) = (mine, theirs) {
            if m != t {
                return core.mismatch(me, peer, m, t);
            }
        }
    }
    core.mismatch(me, peer, header, header)
}

/// Step 3: reads `rank`'s payload for `epoch` into `out` (deposited, and seen by
/// [`wait_all`], with `out.len()` bytes).
pub(crate) fn read(core: &Core, rank: usize, epoch: u64, out: &mut [u8]) {
    let slots = &core.small;
    let (slot, base) = slots.slot(rank, epoch);
    if out.len() > INLINE_BYTES {
        let (first, rest) = out.split_at_mut(INLINE_BYTES);
        load_words(&slot.words, first);
        load_more(slots, base, rest);
    } else {
        load_words(&slot.words, out);
    }
}

/// A loom model of the protocol from its own parts (`deposit`, `wait_all`, `read`, the
/// communicator's poison and published calls): ranks run several epochs with a
/// non-commutative operation and payloads longer than a slot's inline words, and every result
/// must be the rank-ordered fold of that epoch's values — a slot reused too early, or read
/// before its epoch, would show. One rank may fail in an epoch (as a panic in `op` would):
/// the others must then fail, never succeed with a wrong value, never hang. A rank may also
/// arrive with another call (a mismatch). (`RUSTFLAGS="--cfg herald_loom" cargo test
/// --release --lib loom_`.)
#[cfg(all(test, herald_loom))]
mod loom_tests {
    use super::*;
    use crate::runtime::collective::call::{CallInfo, CollectiveKind};
    use crate::runtime::collective::error::PoisonCause;
    use crate::runtime::sync::Arc;
    use loom::thread;

    /// Payload words: one past the inline ones.
    const WORDS: usize = INLINE_WORDS + 1;

    /// Rank `r`'s value in epoch `e`: a word pattern of both.
    fn value(r: usize, e: u64) -> [u64; WORDS] {
        std::array::from_fn(|k| (r as u64 + 1) + 10 * e + 100 * k as u64)
    }

    /// A non-commutative, associative fold: affine maps `x ↦ a·x + b` composed, on wrapping
    /// words (word `k` of the pair is `(a, b)` = `(v[k] | 1, v[k])`, composed left to right).
    fn fold(values: &[[u64; WORDS]]) -> [(u64, u64); WORDS] {
        std::array::from_fn(|k| {
            values.iter().fold((1u64, 0u64), |(a, b), v| {
                let (c, d) = (v[k] | 1, v[k]);
                // x ↦ c·(a·x + b) + d
                (c.wrapping_mul(a), c.wrapping_mul(b).wrapping_add(d))
            })
        })
    }

    /// Rank `me` of `n`: `epochs` calls (call numbers `1..`); `fail`: fails in that epoch
    /// after depositing; `skew`: its first call has another number (a mismatch).
    fn rank(
        core: &Core,
        me: usize,
        n: usize,
        epochs: u64,
        fail: Option<u64>,
        skew: bool,
    ) -> Result<(), CollectiveError> {
        for e in 1..=epochs {
            let seq = if skew { e + 1 } else { e };
            let header = CallInfo::header(CollectiveKind::Allreduce, seq, 0, WORDS * 8);
            core.publish(me, seq, header);
            let mine = value(me, e);
            let bytes: Vec<u8> = mine.iter().flat_map(|w| w.to_le_bytes()).collect();
            deposit(core, me, e, (seq, header), seq, &bytes);
            if fail == Some(e) {
                core.poison(me, PoisonCause::Panic);
                return Err(CollectiveError::Aborted);
            }
            wait_all(core, me, e, (seq, header), seq)?;
            let mut all = Vec::new();
            for r in 0..n {
                let mut out = vec![0u8; WORDS * 8];
                read(core, r, e, &mut out);
                let words: [u64; WORDS] = std::array::from_fn(|k| {
                    u64::from_le_bytes(out[8 * k..8 * k + 8].try_into().unwrap())
                });
                all.push(words);
            }
            let want: Vec<[u64; WORDS]> = (0..n).map(|r| value(r, e)).collect();
            assert_eq!(fold(&all), fold(&want), "rank {me} epoch {e}");
        }
        Ok(())
    }

    /// `n` ranks, `epochs` calls; rank `fails.0` fails in epoch `fails.1`; `skewed`: that
    /// rank's calls are numbered one later.
    fn model(n: usize, epochs: u64, fails: Option<(usize, u64)>, skewed: Option<usize>) {
        loom::model(move || {
            let core = Arc::new(Core::new_with_small(n, WORDS * 8, 0, false));
            // The overflow words exist before the threads start (loom models no `OnceLock`).
            let _ = core.small.extra();
            let handles: Vec<_> = (1..n)
                .map(|r| {
                    let core = Arc::clone(&core);
                    let fail = fails.filter(|f| f.0 == r).map(|f| f.1);
                    let skew = skewed == Some(r);
                    thread::spawn(move || rank(&core, r, n, epochs, fail, skew))
                })
                .collect();
            let fail = fails.filter(|f| f.0 == 0).map(|f| f.1);
            let mut results = vec![rank(&core, 0, n, epochs, fail, skewed == Some(0))];
            for h in handles {
                results.push(h.join().unwrap());
            }
            if fails.is_some() || skewed.is_some() {
                // Nobody finishes every epoch: the failing epoch (or the mismatched first
                // call) ends every rank's run with an error.
                assert!(results.iter().all(Result::is_err), "{results:?}");
            } else {
                assert!(results.iter().all(Result::is_ok), "{results:?}");
            }
        });
    }

    #[test]
    fn loom_small_allreduce_two_ranks_three_epochs() {
        model(2, 3, None, None);
    }

    #[test]
    fn loom_small_allreduce_three_ranks_two_epochs() {
        model(3, 2, None, None);
    }

    #[test]
    fn loom_small_allreduce_rank_fails_in_second_epoch() {
        model(2, 3, Some((1, 2)), None);
    }

    #[test]
    fn loom_small_allreduce_mismatched_call() {
        model(2, 2, None, Some(1));
    }
}
