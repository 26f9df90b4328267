//! Single-copy allreduce of slices: a shared-memory reduce-scatter followed by an allgather,
//! for [`CommRank::allreduce_slice`] from
//! [`CommOptions::allreduce_direct_min_bytes`](crate::CommOptions::allreduce_direct_min_bytes)
//! on.
//!
//! # Protocol
//!
//! The `len` elements are cut into `n` contiguous chunks, chunk `k` being elements
//! `k·len/n .. (k+1)·len/n`; rank `k` owns chunk `k`. In call `id`, rank `r`:
//!
//! 1. **Lends its buffer**: sends every other rank one descriptor line (the call number, its
//!    buffer's address with exposed provenance, its byte length and element size) and
//!    receives theirs; a descriptor of another call, length or element size is a mismatch.
//! 2. **Reduces its chunk**: for each block of chunk `r` (a few KiB), combines the elements of
//!    ranks 0, 1, 2, … in rank order, reading the others' buffers directly and combining in
//!    place in its own buffer: its own elements are combined with the fold of ranks 0 … r − 1
//!    (kept in a scratch block where r ≥ 2), then with ranks r + 1, …, n − 1. Every rank reads
//!    each of its elements once and combines it once.
//! 3. **Announces it**: sends every other rank a "reduced" line.
//! 4. **Gathers**: for every other rank `k`, waits for `k`'s "reduced" line and copies chunk
//!    `k` from `k`'s buffer into its own.
//! 5. **Returns only when no one reads its buffer** ([`Lent`]): every other rank has marked its
//!    reads of this call done ([`ReadsDone`]), or provably never copies (see `direct.rs`).
//!
//! # Soundness
//!
//! The rules of the single-copy broadcast (`direct.rs`) carry over, with every other rank as
//! both a reader and a lender: the buffer is reached only through a raw pointer from the first
//! descriptor on (rule 1); a rank reads another's buffer only after its descriptor of this call
//! with this length (rule 2); it looks at the poison and abort flags before each block it reads
//! (rule 3); [`ReadsDone`] and [`Lent`] mark reads done and wait for readers on every way out,
//! unwinding from a panic in `op` included (rules 4 and 5). What is new is that the buffers are
//! written while others read them; no byte is written while another thread reads it:
//!
//! * Rank `j` reads chunk `j` of every buffer in step 2 and chunk `k ≠ j` of rank `k`'s buffer
//!   in step 4.
//! * Rank `r` writes chunk `r` of its own buffer in step 2, which no other rank reads before
//!   `r`'s "reduced" line (sent after the writes: the ring's release/acquire orders them), and
//!   chunk `k ≠ r` in step 4 only after `k`'s "reduced" line, that is after `k` finished step 2,
//!   the only step in which anyone else reads chunk `k` of `r`'s buffer.
//! * Chunk `k` of rank `k`'s buffer is never written after `k`'s step 2.
//!
//! The blocks read in step 2 are shared slices of the other buffers (no thread writes them while
//! they exist, by the above); the copies of steps 2 and 4 are between distinct buffers.
//!
//! # Copies
//!
//! Step 2 combines as it reads, into the rank's own chunk: no copy of a block into a scratch
//! first, and none back (2 ranks, 16 KiB, in the state between the latency modes: 3.8–4.0
//! against 4.6–5.3 µs, docs/runtime.md, "Sixty-seventh session"); the gather's copies go
//! through the single copy's chunk copy (`chunk_copy` in `direct.rs`: an AVX2 loop where the
//! CPU has it), as the single-copy broadcast's chunks do. With the block's copy back through
//! that loop too (the sixtieth session), 2 ranks in the near latency mode: 4 MiB 128 against
//! 172 µs, 1 MiB 89 against 96.

use super::call::Core;
use super::direct::{chunk_copy, copy_allowed, Lent, ReadsDone};
use super::error::CollectiveError;
use super::rank::CommRank;
use crate::runtime::fault;
use crate::runtime::program::RankProgram;
use bytemuck::Pod;

/// Bytes per block of the reduction (a block of the own chunk, and of the scratch prefix, stays
/// in L1).
const REDUCE_BLOCK: usize = 4 << 10;
/// Bytes per copy of the gather (a look at the flags before each).
const COPY_BLOCK: usize = 64 << 10;
/// The second word of a "reduced" line (the first is the call number).
const REDUCED: u64 = 0x5245_4455_4345_4421;

/// The element range of chunk `k` of `len` elements cut in `n`.
pub(crate) fn chunk(k: usize, len: usize, n: usize) -> std::ops::Range<usize> {
    // `len · k` cannot overflow for a slice in memory (len ≤ isize::MAX / size_of, k < n ≤ 2²⁰)
    // on 64-bit targets; u128 keeps it exact everywhere.
    let at = |k: usize| (len as u128 * k as u128 / n as u128) as usize;
    at(k)..at(k + 1)
}

/// The program in which rank `me` of `n` sends to and hears from every other rank (the readers
/// [`Lent`] waits for and the lenders [`ReadsDone`] wakes).
pub(crate) fn all_peers(me: usize, n: usize) -> RankProgram {
    let others = (0..n).filter(|&k| k != me).map(|k| k as u32);
    RankProgram {
        sends: others.clone().map(|k| (k, 0)).collect(),
        incoming: others.map(|k| (k, Vec::new())).collect(),
    }
}

/// The error of a rank that stopped before a read (rule 3): the poison, or its team's abort.
fn stopped(core: &Core) -> CollectiveError {
    core.poison_error().unwrap_or(CollectiveError::Aborted)
}

impl CommRank<'_> {
    /// Rank `self.rank`'s part of the single-copy allreduce of `data` in call `id` (see the
    /// module notes).
    pub(super) fn allreduce_direct<T: Pod>(
        &mut self,
        id: (u64, u64),
        data: &mut [T],
        op: &impl Fn(T, T) -> T,
    ) -> Result<(), CollectiveError> {
        let (me, n) = (self.rank, self.size());
        if n == 1 {
            return Ok(());
        }
        let comm = self.comm;
        let core = comm.core();
        let mut peers = std::mem::take(&mut self.peers);
        if peers.sends.len() != n - 1 {
            peers = all_peers(me, n);
        }
        // Rule 1: from here on the buffer is reached only through `base`.
        let len = data.len();
        let base: *mut T = data.as_mut_ptr();
        // Rule 4: armed before the first descriptor is out; its drop waits for this rank's
        // readers (every other rank).
        let mut lent = Lent {
            core,
            me,
            id,
            receivers: &peers,
            // each reader combines one part of this rank's slice and copies another
            bytes: 2 * len * std::mem::size_of::<T>() / n,
            spin_across: false,
            succeeded: false,
        };
        let result = {
            // Rule 3: dropped (reads marked done) before `lent` waits.
            let _done = ReadsDone {
                core,
                me,
                id,
                prog: &peers,
            };
            self.scatter_gather(id, base, len, op)
        };
        lent.succeeded = result.is_ok();
        drop(lent);
        self.peers = peers;
        result
    }

    /// Steps 1–4 of the module notes on the buffer `base[..len]`.
    fn scatter_gather<T: Pod>(
        &mut self,
        id: (u64, u64),
        base: *mut T,
        len: usize,
        op: &impl Fn(T, T) -> T,
    ) -> Result<(), CollectiveError> {
        let (me, n) = (self.rank, self.size());
        let core = self.comm.core();
        let size = std::mem::size_of::<T>();
        let bytes = len * size;
        let others = (1..n).map(|d| (me + d) % n);
        // 1. Lend and learn every buffer.
        fault::reach(fault::Point::LendDescriptor);
        let addr = base.expose_provenance() as u64;
        for k in others.clone() {
            self.send_value(k, id, &[id.0, addr, bytes as u64, size as u64])?;
        }
        let mut bases: Vec<*const T> = vec![base.cast_const(); n];
        for k in others.clone() {
            let [seq, src, their_bytes, their_size]: [u64; 4] = self.recv_value(k, id)?;
            if seq != id.0 || their_bytes != bytes as u64 || their_size != size as u64 {
                // The header holds the length mod 2³² only: a longer buffer, or another
                // element size, shows here, never as a read.
                return Err(core.mismatch(me, k, id.1, !id.1));
            }
            bases[k] = std::ptr::with_exposed_provenance::<T>(src as usize);
        }
        // 2. Reduce chunk `me` in rank order, in place in this rank's own chunk.
        let mine = chunk(me, len, n);
        let per_block = (REDUCE_BLOCK / size).max(1);
        // The fold of ranks 0 … me − 1 (only a rank from 2 on has more than one element before
        // its own to fold).
        let mut prefix: Vec<T> = Vec::new();
        if me >= 2 {
            prefix.reserve(per_block.min(mine.len()));
        }
        let mut at = mine.start;
        while at < mine.end {
            let end = (at + per_block).min(mine.end);
            if !copy_allowed(core.poison_flag()) {
                return Err(stopped(core));
            }
            fault::reach(fault::Point::CopyChunk);
            let block = |k: usize| {
                debug_assert_ne!(k, me, "this rank's own block is `own`");
                // SAFETY: `bases[k]` (`k ≠ me`) is rank `k`'s buffer of `len` elements of `T`
                // (its descriptor of this call, length and size checked above), and `at..end`
                // lies in chunk `me` ⊆ `0..len`. Rank `k` is in this call and keeps the buffer
                // alive until this rank marks its reads done (`Lent`/`ReadsDone`, rule 4); no
                // thread writes chunk `me` of another rank's buffer before this rank's
                // "reduced" line, sent after this block is done (module notes), so the shared
                // slice is not written while it lives.
                unsafe { std::slice::from_raw_parts(bases[k].add(at), end - at) }
            };
            // SAFETY: `at..end` lies in chunk `me` of this rank's buffer (`base[..len]`, a
            // `&mut [T]` the caller lent for the call and reached only through `base` since);
            // no other rank reads chunk `me` of this buffer before the "reduced" line below,
            // and no other reference to this range exists while `own` lives (`block` never
            // makes one of this rank's buffer).
            let own: &mut [T] = unsafe { std::slice::from_raw_parts_mut(base.add(at), end - at) };
            // Rank 0 … me − 1 folded before this rank's elements, the rest after, each as it
            // is read: (((v0 ∘ v1) ∘ v2) ∘ …) exactly as every other chunk is combined.
            match me {
                0 => {}
                1 => own
                    .iter_mut()
                    .zip(block(0))
                    .for_each(|(o, &a)| *o = op(a, *o)),
                _ => {
                    prefix.clear();
                    prefix.extend(block(0).iter().zip(block(1)).map(|(&a, &b)| op(a, b)));
                    for k in 2..me {
                        for (a, &b) in prefix.iter_mut().zip(block(k)) {
                            *a = op(*a, b);
                        }
                    }
                    for (o, &a) in own.iter_mut().zip(&prefix) {
                        *o = op(a, *o);
                    }
                }
            }
            for k in me + 1..n {
                for (o, &b) in own.iter_mut().zip(block(k)) {
                    *o = op(*o, b);
                }
            }
            at = end;
        }
        // 3. Announce it (the ring's release orders the writes above before the line).
        for k in others.clone() {
            self.send_value(k, id, &[id.0, REDUCED])?;
        }
        // 4. Gather every other chunk from its owner.
        let per_copy = (COPY_BLOCK / size).max(1);
        for k in others {
            let [seq, word]: [u64; 2] = self.recv_value(k, id)?;
            if seq != id.0 || word != REDUCED {
                return Err(core.mismatch(me, k, id.1, !id.1));
            }
            let theirs = chunk(k, len, n);
            let mut at = theirs.start;
            while at < theirs.end {
                let end = (at + per_copy).min(theirs.end);
                if !copy_allowed(core.poison_flag()) {
                    return Err(stopped(core));
                }
                fault::reach(fault::Point::CopyChunk);
                // SAFETY: `bases[k]` is rank `k`'s live buffer of `len` elements (as in step
                // 2); `at..end` lies in chunk `k`, which rank `k` finished writing before its
                // "reduced" line (received above, acquire) and never writes again in this
                // call; the destination is the same range of this rank's own buffer, reached
                // only through `base`, which no other thread reads any more: rank `k` was the
                // only other reader of chunk `k` here, and its step 2 is over.
                unsafe {
                    chunk_copy(
                        bases[k].add(at).cast::<u8>(),
                        base.add(at).cast::<u8>(),
                        (end - at) * size,
                    );
                }
                at = end;
            }
        }
        Ok(())
    }
}

/// A loom model of the single-copy allreduce between two ranks, built from the protocol's own
/// guards (`Core::publish`, `copy_allowed`, `ReadsDone`, `Lent`, `all_peers`) with the rings'
/// lines as release/acquire flags and the buffers (one element per chunk) as loom cells, so
/// that loom reports a write that races with a peer's read, and a read of a buffer after its
/// owner's call returned. Either rank may fail mid-call (as a panic in `op` would), after
/// lending its buffer. (`RUSTFLAGS="--cfg herald_loom" cargo test --release --lib loom_`.)
#[cfg(all(test, herald_loom))]
mod loom_tests {
    use super::*;
    use crate::runtime::sync::{Arc, AtomicBool, Ordering};
    use loom::cell::UnsafeCell;
    use loom::thread;

    // Grouped by the header's fields, not by fours.
    #[allow(clippy::unusual_byte_groupings)]
    const HEADER: u64 = 0x8_01_00000_00000010;

    struct Shared {
        core: Core,
        /// Rank `r`'s buffer: chunk `k` is `bufs[r][k]`.
        bufs: [[UnsafeCell<u64>; 2]; 2],
        /// Rank `r`'s descriptor line is out.
        desc: [AtomicBool; 2],
        /// Rank `r`'s "reduced" line is out.
        reduced: [AtomicBool; 2],
    }

    /// Waits for `ready` (a line), or fails once the communicator is poisoned.
    fn wait(s: &Shared, ready: &AtomicBool) -> Result<(), ()> {
        loop {
            if ready.load(Ordering::Acquire) {
                return Ok(());
            }
            if s.core.is_poisoned() {
                return Err(());
            }
            thread::yield_now();
        }
    }

    /// Steps 1–4 of rank `me`; `fails`: it stops after lending (as a panic in `op`).
    fn steps(s: &Shared, me: usize, fails: bool) -> Result<(), ()> {
        let other = 1 - me;
        s.desc[me].store(true, Ordering::Release);
        wait(s, &s.desc[other])?;
        if fails {
            return Err(());
        }
        if !copy_allowed(s.core.poison_flag()) {
            return Err(());
        }
        // SAFETY: loom checks these accesses against the peer's.
        let theirs = s.bufs[other][me].with(|p| unsafe { *p });
        // SAFETY: as above (chunk `me` of this rank's own buffer).
        s.bufs[me][me].with_mut(|p| unsafe { *p += theirs });
        s.reduced[me].store(true, Ordering::Release);
        wait(s, &s.reduced[other])?;
        if !copy_allowed(s.core.poison_flag()) {
            return Err(());
        }
        // SAFETY: as above.
        let v = s.bufs[other][other].with(|p| unsafe { *p });
        // SAFETY: as above.
        s.bufs[me][other].with_mut(|p| unsafe { *p = v });
        Ok(())
    }

    fn rank(s: &Shared, me: usize, fails: bool) {
        let id = (1, HEADER);
        s.core.publish(me, 1, HEADER);
        let peers = all_peers(me, 2);
        let mut lent = Lent {
            core: &s.core,
            me,
            id,
            receivers: &peers,
            bytes: 0,
            spin_across: false,
            succeeded: false,
        };
        let result = {
            let _done = ReadsDone {
                core: &s.core,
                me,
                id,
                prog: &peers,
            };
            steps(s, me, fails)
        };
        lent.succeeded = result.is_ok();
        drop(lent);
        if result.is_ok() {
            for cell in &s.bufs[me] {
                // SAFETY: loom checks this read against the peer's accesses.
                assert_eq!(cell.with(|p| unsafe { *p }), 3, "the sum 1 + 2");
            }
        }
        // The call returns: the caller frees or rewrites its buffer.
        for cell in &s.bufs[me] {
            // SAFETY: loom checks this write against the peer's reads.
            cell.with_mut(|p| unsafe { *p = 0 });
        }
    }

    fn model(fails: [bool; 2]) {
        loom::model(move || {
            let s = Arc::new(Shared {
                core: Core::new(2),
                bufs: std::array::from_fn(|r| {
                    std::array::from_fn(|_| UnsafeCell::new(r as u64 + 1))
                }),
                desc: std::array::from_fn(|_| AtomicBool::new(false)),
                reduced: std::array::from_fn(|_| AtomicBool::new(false)),
            });
            let t = {
                let s = Arc::clone(&s);
                thread::spawn(move || rank(&s, 1, fails[1]))
            };
            rank(&s, 0, fails[0]);
            t.join().unwrap();
        });
    }

    #[test]
    fn loom_scatter_allreduce_succeeds() {
        model([false, false]);
    }

    #[test]
    fn loom_scatter_allreduce_rank0_fails_after_lending() {
        model([true, false]);
    }

    #[test]
    fn loom_scatter_allreduce_rank1_fails_after_lending() {
        model([false, true]);
    }
}
