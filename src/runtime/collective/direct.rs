//! Single copy: broadcasts of at least
//! [`CommOptions::direct_min_bytes`](crate::CommOptions::direct_min_bytes) move without
//! streaming their bytes through the rings. This file holds the whole protocol: its descriptor
//! framing, its one `unsafe` copy, the guards that make it sound on every way out of a call,
//! its soundness argument, and its stress test.
//!
//! # Protocol
//!
//! The rings carry one descriptor line per chunk: the call's header and full number, the
//! sender's buffer address (exposed provenance), the chunk's offset and length, and the
//! sender's buffer length. A receiver copies the chunk straight from the sender's buffer into
//! its own and then forwards a descriptor of its own copy: one memory copy per hop, as the
//! cross-core copy that bounds any transfer.
//!
//! # Soundness
//!
//! A copy reads another thread's buffer, which its owner's caller frees or reuses when the call
//! returns — or unwinds. Five rules make every copy read live, unchanging memory:
//!
//! 1. **Only held bytes are lent.** A rank publishes a descriptor only for bytes it holds and
//!    never writes them again in the call; from the first descriptor on it reaches its buffer
//!    only through a raw pointer, so readers and its own writes (to other chunks) never alias a
//!    reference.
//! 2. **Only this call's bytes are read.** A receiver copies only for a descriptor carrying its
//!    own call's header and full number, a chunk inside its own layout and a sender buffer of its
//!    own length (so a stale descriptor, or one from a rank with another buffer, is refused, not
//!    followed).
//! 3. **A receiver looks before each copy.** Its call number is published (`Release`) when the
//!    call starts; before every copy, after a `SeqCst` fence, it reads the communicator's poison flag (`SeqCst`) and its
//!    team's abort flag, and refuses to copy if either is raised. On every way out of the call,
//!    unwinding included, [`ReadsDone`] marks its reads done.
//! 4. **A lender waits for its readers on every way out.** [`Lent`] is armed before the first
//!    descriptor is published. When dropped — on success, on an error, or while unwinding — it
//!    first poisons the communicator if the call did not succeed (so every reader stops at its
//!    next look), then waits until each receiver of this rank has marked its reads of this call
//!    done, or left, or is provably not copying: the communicator is poisoned and the
//!    receiver's published call is another (number or header). Only then can the buffer be freed.
//! 5. **The last two checks exclude each other** (Dekker): the lender reads the poison flag and
//!    then the receiver's call number, the receiver stores its call number and then reads the
//!    poison flag, each pair with a `SeqCst` fence between. If the lender sees the flag raised
//!    and the receiver's old number, the receiver's later look sees the flag raised and it never
//!    copies in this call.
//!
//! The wait in rule 4 is not abortable; it ends because every receiver's own waits see the
//! poison on every wake-up, and a receiver copies at most one chunk after the flag is raised.
//! Only the communicator's flag counts there, never the lender's team abort flag: a receiver
//! driven by another team does not see that flag, so a lender whose team is aborted poisons
//! the communicator before it stops waiting (`Call` and `Lent` both do).

use super::call::{Core, PRESENT};
use super::error::{CollectiveError, PoisonCause};
use super::held::{HELD_FROM, PLAIN};
use super::rank::{execute, recv_line, send_line, CommLinks};
use crate::runtime::exec::{Exec, Framing, Links, Refused, Scratch};
use crate::runtime::fault;
use crate::runtime::hint;
use crate::runtime::line::Line;
use crate::runtime::program::{Program, RankProgram};
use crate::runtime::sync::{fence, AtomicBool, Ordering};
use crate::runtime::wait::{thread_aborted, thread_cpu, NO_CPU};
use std::cell::Cell;
use std::time::Duration;

/// Words of a descriptor: header, call number, source address, offset, length, source length.
const DESCRIPTOR_WORDS: usize = 6;
const _: () = assert!(DESCRIPTOR_WORDS * 8 <= Line::PAYLOAD);

/// The single-copy framing of one rank's buffer in one call: block `b` is bytes
/// `b·per_block .. min((b + 1)·per_block, bytes)`, sent in chunks of `chunk` bytes, one
/// descriptor line each.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DirectFraming<'a> {
    /// The call's header and full number (every descriptor carries both).
    call: (u64, u64),
    /// This rank's buffer (rule 1: reached only through this pointer during the call).
    base: *mut u8,
    /// Payload length.
    bytes: usize,
    /// Bytes per block.
    per_block: usize,
    /// Bytes per chunk.
    chunk: usize,
    /// The communicator's poison flag (rule 3).
    poisoned: &'a AtomicBool,
    /// Copy with non-temporal stores: another CPU holds this rank's buffer ([`held`]) and
    /// the size or the communicator's timings say streaming is cheaper (`held.rs`).
    streaming: bool,
    /// No other CPU holds this rank's buffer: its chunks are copied by [`chunk_copy`] (else
    /// by [`copy_chunk`], plainly or streaming).
    unheld: bool,
    /// Where this call's copies add their time ([`clock`] ticks) and bytes, if the call is
    /// timed (`held.rs`).
    timer: Option<&'a Cell<(u64, u64)>>,
}

impl<'a> DirectFraming<'a> {
    /// The framing of `buf` in `blocks` blocks of `chunk`-byte chunks for call `(seq, header)`,
    /// copied into with non-temporal stores if `streaming`, by [`chunk_copy`] if `unheld`,
    /// each copy's time and bytes added to `timer` if given.
    fn new(
        (seq, header): (u64, u64),
        buf: &mut [u8],
        (blocks, chunk): (u32, usize),
        poisoned: &'a AtomicBool,
        (streaming, unheld, timer): (bool, bool, Option<&'a Cell<(u64, u64)>>),
    ) -> DirectFraming<'a> {
        let bytes = buf.len();
        DirectFraming {
            call: (header, seq),
            base: buf.as_mut_ptr(),
            bytes,
            per_block: bytes.div_ceil(blocks.max(1) as usize).max(1),
            chunk: chunk.max(1),
            poisoned,
            streaming,
            unheld,
            timer,
        }
    }

    /// Bytes of block `b`.
    fn block(&self, b: u32) -> std::ops::Range<usize> {
        let start = (b as usize).saturating_mul(self.per_block).min(self.bytes);
        start..(start + self.per_block).min(self.bytes)
    }

    /// Offset and length of chunk `j` of block `b`.
    fn chunk(&self, b: u32, j: usize) -> (usize, usize) {
        let block = self.block(b);
        let off = (block.start + j * self.chunk).min(block.end);
        (off, (block.end - off).min(self.chunk))
    }

    /// Descriptor lines of block `b` (at least 1).
    pub(crate) fn lines(&self, b: u32) -> usize {
        self.block(b).len().div_ceil(self.chunk).max(1)
    }

    /// Writes the descriptor of chunk `j` of block `b` into a slot's payload.
    pub(crate) fn fill(&self, b: u32, j: usize, p: &mut [u8; Line::PAYLOAD]) {
        fault::reach(fault::Point::LendDescriptor);
        let (off, len) = self.chunk(b, j);
        let (header, seq) = self.call;
        let src = self.base.expose_provenance() as u64;
        let words = [header, seq, src, off as u64, len as u64, self.bytes as u64];
        for (i, word) in words.into_iter().enumerate() {
            p[8 * i..8 * i + 8].copy_from_slice(&word.to_le_bytes());
        }
    }

    /// Copies the chunk that descriptor `p` (chunk `j` of block `b`) names into this rank's
    /// buffer; refused for another call's descriptor (rule 2) or once the run is stopped
    /// (rule 3).
    pub(crate) fn store(&self, b: u32, j: usize, p: &[u8; Line::PAYLOAD]) -> Result<(), Refused> {
        if !copy_allowed(self.poisoned) {
            return Err(Refused::Stopped);
        }
        let word = |i: usize| u64::from_le_bytes(p[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let (header, seq, src) = (word(0), word(1), word(2));
        let (off, len, src_bytes) = (word(3) as usize, word(4) as usize, word(5) as usize);
        if (header, seq) != self.call {
            return Err(Refused::Header(header));
        }
        if (off, len) != self.chunk(b, j) || src_bytes != self.bytes {
            // This call's header, but another layout or buffer length (the header holds the
            // length mod 2³² only): a mismatch, never a copy.
            return Err(Refused::Header(!header));
        }
        fault::reach(fault::Point::CopyChunk);
        let src = std::ptr::with_exposed_provenance::<u8>(src as usize);
        let start = self.timer.map(|_| clock());
        // SAFETY: the descriptor carries this call's header and number, so its sender is in
        // this call and keeps `src[off..off + len]` written and unchanged until this rank
        // marks its reads done (rules 1 and 4); the sender's buffer has `self.bytes` bytes
        // and `off + len <= self.bytes` (this rank's own chunk layout, checked above), so the
        // read stays inside it; `base[off..off + len]` lies in this rank's buffer, which no
        // other thread touches before this rank forwards a descriptor of it (so the shared
        // slice the hint is given over it, dropped before the copy writes, aliases nothing).
        unsafe {
            let (src, dst) = (src.add(off), self.base.add(off));
            if self.unheld {
                chunk_copy(src, dst, len);
            } else {
                if !self.streaming && len <= HINTED_UPTO {
                    // The other CPU read these lines last: ask for them all at once.
                    hint::for_write(std::slice::from_raw_parts(dst.cast_const(), len));
                }
                copy_chunk(src, dst, len, self.streaming);
            }
        }
        if let (Some(timer), Some(start)) = (self.timer, start) {
            let (ticks, bytes) = timer.get();
            let took = clock().saturating_sub(start);
            timer.set((ticks.saturating_add(took), bytes + len as u64));
        }
        Ok(())
    }
}

/// A held copy (into lines the other CPU read last) of at most this many bytes first asks for
/// all of its destination's lines for writing ([`hint::for_write`]), so that their transfers
/// overlap instead of waiting for each other behind the copy's stores. Measured with the
/// sixty-ninth session's Intel host (docs/runtime.md, "Sixty-ninth session: a held copy asks
/// for its lines at once"), builds alternating: `herald bench bcast`'s 4 KiB ping-pong 1.06
/// µs median over nine runs against 1.16 without; herald in process, 2 ranks, the ping-pong
/// broadcast of 2 KiB 0.65–0.71 µs against 0.85–0.88. Longer chunks are not hinted: with the
/// first 4 KiB of each 64 KiB chunk hinted, 64 and 256 KiB broadcasts were 2–4 % slower in 4
/// of 5 pairs (not settled: the kept build, which does not hint them, measured 1–2 % slower
/// at 256 KiB too). Copies into lines no other CPU holds are not hinted either: 4–16 KiB
/// broadcasts from one root were 10–20 % slower with it.
const HINTED_UPTO: usize = 4 << 10;

/// A cheap clock for timing copies against each other (`held.rs`): the time-stamp counter on
/// x86-64 (about 10 ns a read here, against about 25 for `Instant::now`), elsewhere (and
/// under loom or Miri) nanoseconds since the first call. Only differences of one thread's
/// reads are used, and only to compare copies with each other.
fn clock() -> u64 {
    #[cfg(all(target_arch = "x86_64", not(herald_loom), not(miri)))]
    {
        // SAFETY: RDTSC has no preconditions on x86-64 (it reads the time-stamp counter and
        // touches no memory).
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(all(target_arch = "x86_64", not(herald_loom), not(miri))))]
    {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        let start = *START.get_or_init(std::time::Instant::now);
        u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// A receiver's look before each copy (rule 3): neither the communicator's poison flag nor its
/// team's abort flag is raised. The fence orders the receiver's published call number (stored
/// when the call started) before the flag's load (rule 5).
#[inline]
pub(super) fn copy_allowed(poisoned: &AtomicBool) -> bool {
    fence(Ordering::SeqCst);
    !poisoned.load(Ordering::SeqCst) && !thread_aborted()
}

/// Runs rank `me`'s part of `program` in call `id` by single copy on `buf`, in chunks of
/// `chunk` bytes.
pub(crate) fn broadcast(
    core: &Core,
    me: usize,
    (program, prog): (&Program, &RankProgram),
    id: (u64, u64),
    chunk: usize,
    (links, scratch): (&mut CommLinks<'_>, &mut Scratch),
    buf: &mut [u8],
) -> Result<(), CollectiveError> {
    let geometry = (program.blocks(), chunk);
    // Into a buffer another CPU holds: plainly or streaming, by size and by the
    // communicator's timings (`held.rs`); anywhere else by herald's own loop (`chunk_copy`).
    let unheld = !held(scratch.lent_across, buf);
    let pick = if unheld {
        PLAIN
    } else {
        core.held.pick(&mut scratch.held_calls, buf.len())
    };
    let timer = Cell::new((0u64, 0u64));
    let way = (pick.streaming, unheld, pick.timed.then_some(&timer));
    let framing = DirectFraming::new(id, buf, geometry, core.poison_flag(), way);
    let lent_buf = (buf.as_ptr() as usize, buf.len());
    let is_root = me == program.root() as usize;
    let one = one_descriptor(program, prog, is_root, &framing);
    // The lender's wait may spin for readers on other CPUs only where no rank of its CPU
    // forwards in this call (such a rank may still wait on this CPU after its reads).
    let spin_across = one
        && core
            .mates(me)
            .all(|r| program.rank(r as u32).sends.is_empty());
    // Rule 4: armed before anything is published; its drop waits for this rank's readers.
    let mut lent = Lent {
        core,
        me,
        id,
        receivers: prog,
        bytes: buf.len(),
        spin_across,
        succeeded: false,
    };
    let result = {
        // Rule 3: dropped (reads marked done) before `lent` waits for this rank's readers.
        let _done = ReadsDone { core, me, id, prog };
        if one {
            one_chunk(core, me, prog, id, &framing, links)
        } else {
            let exec = Exec::new(
                prog,
                program.blocks(),
                is_root,
                Framing::Direct(framing),
                links,
                &mut [],
                &core.signals,
                me,
                scratch,
            );
            execute(core, me, prog, id, exec)
        }
    };
    lent.succeeded = result.is_ok();
    drop(lent);
    if pick.timed && result.is_ok() {
        core.held.record(lent_buf.1, pick.streaming, timer.get());
    }
    // Every reader is done: whether one ran on another CPU, whose cache now holds this
    // buffer's lines (asked only of a buffer long enough to be [`held`]).
    let mine = thread_cpu();
    let across = lent_buf.1 >= HELD_FROM
        && mine != NO_CPU
        && prog.sends.iter().any(|&(to, _)| {
            let theirs = core.ranks[to as usize].progress.cpu.load(Ordering::Relaxed);
            theirs != NO_CPU && theirs != mine
        });
    scratch.lent_across = (result.is_ok() && across).then_some(lent_buf);
    result
}

/// Whether rank `prog` of `program` moves one descriptor line per edge: one block of one
/// chunk, received once (unless it is the root) and sent to each child. [`one_chunk`] then does
/// what the executor would, without its set-up and its passes over every edge.
fn one_descriptor(
    program: &Program,
    prog: &RankProgram,
    is_root: bool,
    framing: &DirectFraming<'_>,
) -> bool {
    let heard = match prog.incoming.as_slice() {
        [] => is_root,
        [(_, blocks)] => !is_root && blocks.len() == 1,
        _ => false,
    };
    heard && program.blocks() == 1 && framing.lines(0) == 1
}

/// Rank `me`'s part of a one-descriptor single copy ([`one_descriptor`]) in call `id`: take
/// the parent's descriptor and copy (rule 2 and 3 in [`DirectFraming::store`]), then send a
/// descriptor of this rank's buffer to each child in program order, waking each. As the
/// executor: a refused descriptor is a mismatch or a stop, a parent gone is a departure, and a
/// wait looks at the poison flag and the peer's call as a stream's does ([`recv_line`]).
fn one_chunk(
    core: &Core,
    me: usize,
    prog: &RankProgram,
    id: (u64, u64),
    framing: &DirectFraming<'_>,
    links: &mut CommLinks<'_>,
) -> Result<(), CollectiveError> {
    if let Some(&(from, _)) = prog.incoming.first() {
        let rx = links.receiver(0, from);
        let from = from as usize;
        let got = recv_line(core, me, from, id, rx, |p| framing.store(0, 0, p))?;
        core.signals[from].notify(); // room in its ring
        match got {
            Ok(()) => {}
            Err(Refused::Header(found)) => return Err(core.mismatch(me, from, id.1, found)),
            Err(Refused::Stopped) => {
                return Err(core.poison_error().unwrap_or(CollectiveError::Aborted))
            }
        }
    }
    for &(to, _) in &prog.sends {
        let tx = links.sender(to);
        let to = to as usize;
        send_line(core, me, to, id, tx, |p| framing.fill(0, 0, p))?;
        core.signals[to].notify();
    }
    Ok(())
}

/// The payloads copied with non-temporal stores into a buffer another CPU holds. A 2-rank
/// ping-pong of single-copy broadcasts (each rank copies into the buffer the other copied
/// from in the call before), through the runtime, median µs per broadcast, plain against
/// streaming (docs/runtime.md, "Copies into a buffer another CPU holds"):
///
/// | bytes | fast latency mode | slow latency mode |
/// |---:|---|---|
/// | 4 KiB | 0.54 against 1.15 | 2.37 against 1.44 |
/// | 16 KiB | 2.0–2.5 against 2.5–3.1 | 8.2 against 3.0 |
/// | 32 KiB | 4.2–5.0 against 3.0–3.5 | 15.6 against 3.2 |
/// | 2 MiB | 97 against 90–96 | 542 against 106 |
/// | 3 MiB | 120–128 against 138–147 | |
/// | 4 MiB | 145–155 against 188–199 | |
///
/// Streaming is nearly blind to the host's latency mode (its stores go to memory), a plain
/// copy is not. The window is where streaming wins in both modes, so its size classes start
/// streamed and the others (from [`HELD_FROM`] bytes) plain; the communicator then times its
/// ranks' copies and picks the cheaper way per size class for all of them (`held.rs`), so the
/// slow mode's gain outside the window is taken where it is measured, and a third mode in which
/// the CPUs share a cache (where plain copies win inside the window too) is followed as well.
pub(crate) const STREAMING: std::ops::RangeInclusive<usize> = (32 << 10)..=(2 << 20);

/// Whether another CPU holds `buf`: it is the buffer this rank lent to a reader on another
/// CPU in its last single-copy call (`lent_across`), so that CPU's cache holds its lines. An
/// ordinary copy into it would first take each line back from that cache; a streaming one
/// only invalidates it, and the next reader reads the bytes from memory. Such copies stream
/// where the communicator's timings say so, from the start inside [`STREAMING`] (`held.rs`).
/// Into a buffer no other CPU holds, streaming is slower (3.5 µs against 2.6 for a plain copy
/// of 64 KiB), so it is kept for this case.
fn held(lent_across: Option<(usize, usize)>, buf: &[u8]) -> bool {
    buf.len() >= HELD_FROM && lent_across == Some((buf.as_ptr() as usize, buf.len()))
}

/// Copies `len` bytes from `src` to `dst`; if `streaming` (and the target has them), with
/// non-temporal stores and then a store fence, so that the bytes are visible before anything
/// this thread stores after it (the descriptor it forwards, its reads-done mark).
///
/// # Safety
/// As for [`std::ptr::copy_nonoverlapping`]: `src` valid for `len` bytes of reads, `dst` for
/// `len` bytes of writes, the two not overlapping.
unsafe fn copy_chunk(src: *const u8, dst: *mut u8, len: usize, streaming: bool) {
    #[cfg(all(target_arch = "x86_64", not(herald_loom), not(miri)))]
    if streaming {
        // SAFETY: the caller's contract.
        unsafe { stream_copy(src, dst, len) };
        return;
    }
    let _ = streaming;
    // SAFETY: the caller's contract.
    unsafe { plain_copy(src, dst, len) };
}

/// Copies of at least this many bytes go through [`vector_copy`] where the CPU has AVX2.
#[cfg(all(target_arch = "x86_64", not(herald_loom), not(miri)))]
const VECTOR_FROM: usize = 256;

/// `copy_nonoverlapping`, but as fast when `dst − src` is not a multiple of 32: on x86-64
/// with AVX2, such copies of `VECTOR_FROM` (256) bytes or more go through [`vector_copy`]. The C
/// library's copy (`rep movsb` from a few KiB here) is then up to 2.4× slower (from another
/// CPU's cache, `dst − src` 16 mod 64: 1 MiB in 149 µs against 62, 64 KiB in 2.9 against 1.8;
/// docs/runtime.md, "Copies between buffers aligned apart"), and the buffers of a broadcast are
/// the caller's, as the allocator placed them (16-byte aligned: either case is as likely).
/// Buffers a multiple of 32 apart keep the C library's copy: with this loop for every copy,
/// herald-mpi's posted 64 KiB and 1 MiB `barrier` broadcasts, whose copies write lines the other
/// CPU read last, got slower (same section).
///
/// # Safety
/// As [`copy_chunk`].
#[inline]
unsafe fn plain_copy(src: *const u8, dst: *mut u8, len: usize) {
    if (dst as usize).wrapping_sub(src as usize) % 32 != 0 {
        // SAFETY: the caller's contract (`chunk_copy` has the same).
        unsafe { chunk_copy(src, dst, len) };
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
}

/// A single copy's chunk into a buffer no other CPU holds (the single-copy allreduce's
/// write-backs and gathers in `scatter.rs` too): on x86-64 with AVX2, chunks of
/// [`VECTOR_FROM`] (256) bytes or more through [`vector_copy`] whatever the two addresses,
/// shorter ones by `copy_nonoverlapping`. Where the two buffers lie a multiple of 32 bytes
/// apart the C library copies such chunks with `rep movsb` (glibc 2.36 on this AMD host: from
/// 2112 bytes up to the L2's size), which is slower here from another CPU's cache. A cross-core copy of a buffer
/// the other CPU just wrote, the median over 60 slices, the two ways alternating: 4 KiB 170–180
/// ns by the C library against 141–150 by the loop, 16 KiB 400 against 400, 64 KiB 1.52–1.53
/// µs against 1.53, and 1 MiB in 16 chunks of 64 KiB (as herald's single copy moves it)
/// 29.3–29.5 against 22.1–22.4 µs (one 1 MiB `memcpy`, which glibc does with a vector loop of
/// its own: 22.4–22.5); into a buffer the other CPU read last, 4 KiB 260 against 241 ns, 16 KiB
/// 1.73 against 1.58 µs (docs/runtime.md, "Chunks copied by a vector loop"). Copies into a
/// buffer another CPU holds keep [`copy_chunk`]: its plain and streaming ways are chosen by
/// timings of the C library's copy (`held.rs`), and `herald bench bcast`'s 4 KiB ping-pong,
/// whose copies are such, was no faster with the loop (paired 1.02 over 31 runs). herald-mpi's
/// copies keep [`plain_copy`] too ([`copy_plain`]: with the loop for every copy its posted
/// 64 KiB and 1 MiB broadcasts got slower, "Copies between buffers aligned apart").
///
/// # Safety
/// As [`copy_chunk`].
#[inline]
pub(super) unsafe fn chunk_copy(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(all(target_arch = "x86_64", not(herald_loom), not(miri)))]
    if len >= VECTOR_FROM && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the caller's contract; the CPU has AVX2 (checked).
        unsafe { vector_copy(src, dst, len) };
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
}

/// Copies `len` bytes with 32-byte AVX2 loads from any address and 32-byte
/// stores to aligned ones, 128 bytes an iteration, the unaligned ends copied plainly: a
/// misaligned load costs the same whatever the distance between `src` and `dst`.
///
/// # Safety
/// As [`copy_chunk`], and the CPU has AVX2.
#[cfg(all(target_arch = "x86_64", not(herald_loom), not(miri)))]
#[target_feature(enable = "avx2")]
unsafe fn vector_copy(src: *const u8, dst: *mut u8, len: usize) {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_store_si256};
    let head = dst.align_offset(32).min(len);
    // SAFETY: `head ≤ len`: the first `head` bytes of both ranges (the caller's contract).
    unsafe { std::ptr::copy_nonoverlapping(src, dst, head) };
    let mut at = head;
    while at + 128 <= len {
        // SAFETY: `at + 128 ≤ len`, so every 32-byte access below lies in its range; `dst +
        // at` is 32-byte aligned (`head` aligned it, `at − head` is a multiple of 128), as
        // `_mm256_store_si256` needs; the loads are unaligned. All four loads come before the
        // stores (the ranges do not overlap, so the order changes nothing but the schedule).
        unsafe {
            let v = [0, 32, 64, 96].map(|k| _mm256_loadu_si256(src.add(at + k).cast::<__m256i>()));
            for (k, v) in [0, 32, 64, 96].into_iter().zip(v) {
                _mm256_store_si256(dst.add(at + k).cast::<__m256i>(), v);
            }
        }
        at += 128;
    }
    // SAFETY: `at ≤ len`: the rest of both ranges.
    unsafe { std::ptr::copy_nonoverlapping(src.add(at), dst.add(at), len - at) };
}

/// Copies `src` to `dst` with non-temporal stores where the target has them (x86-64: the
/// 16-byte-aligned middle, the ends copied plainly), then a store fence; elsewhere (and under
/// loom or Miri) plainly.
///
/// Into a buffer whose lines another CPU holds in its cache (one it read last), a plain copy
/// first takes every line back from that CPU; non-temporal stores only invalidate them and
/// write to memory, where the next reader reads them. herald's single-copy protocol streams
/// such copies where its timings find that cheaper, from the start at 32 KiB – 2 MiB
/// (docs/runtime.md, "The streaming window"); herald-mpi's posted broadcasts stream their long
/// chunks where the root measures that cheaper. Into a buffer no other CPU holds, a plain copy
/// is faster.
///
/// The fence orders the copy's stores before every later store of this thread: a flag
/// released after the call publishes the bytes.
///
/// ```
/// let src: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
/// let mut dst = vec![0u8; src.len() + 3];
/// // SAFETY: `dst[3..]` is valid for `src.len()` bytes of writes, apart from `src`, and no
/// // other thread accesses it.
/// unsafe { herald::runtime::copy_streaming(&src, dst.as_mut_ptr().add(3)) };
/// assert_eq!(&dst[3..], &src[..]);
/// ```
///
/// # Safety
/// `dst` is valid for `src.len()` bytes of writes and does not overlap `src`, and no other
/// thread (or process) accesses those bytes until the call returns.
pub unsafe fn copy_streaming(src: &[u8], dst: *mut u8) {
    // SAFETY: the caller's contract; `src` is valid for its length.
    unsafe { copy_chunk(src.as_ptr(), dst, src.len(), true) };
}

/// Copies `src` into `dst` as [`slice::copy_from_slice`] does, but as fast whatever the
/// distance between the two: the C library's copy, which `copy_from_slice` calls, takes up to
/// 2.4× as long when `dst − src` is not a multiple of 32 (x86-64 here; 1 MiB from another
/// CPU's cache in 149 µs against 62), and such copies take a loop of AVX2 loads and aligned
/// stores instead. herald-mpi's posted broadcasts use it for their copies into and out of the
/// shared window; herald's single copy takes that loop at every distance for its chunks into a
/// buffer no other CPU holds (docs/runtime.md, "Chunks copied by a vector loop").
///
/// ```
/// let src: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
/// let mut dst = vec![0u8; src.len() + 16];
/// herald::runtime::copy_plain(&mut dst[16..], &src);
/// assert_eq!(&dst[16..], &src[..]);
/// ```
///
/// # Panics
/// If the two slices differ in length (as `copy_from_slice`).
pub fn copy_plain(dst: &mut [u8], src: &[u8]) {
    assert_eq!(
        dst.len(),
        src.len(),
        "copy_plain: slices of different lengths"
    );
    // SAFETY: `src` is valid for its length of reads, `dst` (as long, checked) for as many
    // writes; a `&mut` slice does not overlap any other live slice.
    unsafe { plain_copy(src.as_ptr(), dst.as_mut_ptr(), src.len()) };
}

/// [`copy_plain`] into memory no `&mut` slice may name (such as a window other processes map,
/// which herald-mpi's posted broadcasts write): copies `src` to `dst`.
///
/// ```
/// let src: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
/// let mut dst = vec![0u8; src.len() + 16];
/// // SAFETY: `dst[16..]` is valid for `src.len()` bytes of writes, apart from `src`, and no
/// // other thread accesses it.
/// unsafe { herald::runtime::copy_plain_to(&src, dst.as_mut_ptr().add(16)) };
/// assert_eq!(&dst[16..], &src[..]);
/// ```
///
/// # Safety
/// As [`copy_streaming`].
pub unsafe fn copy_plain_to(src: &[u8], dst: *mut u8) {
    // SAFETY: the caller's contract; `src` is valid for its length.
    unsafe { plain_copy(src.as_ptr(), dst, src.len()) };
}

/// [`copy_streaming`] for 64-bit words: copies `src` to `dst` with non-temporal stores where
/// the target has them, then a store fence.
///
/// ```
/// let src: Vec<u64> = (0..10_000).collect();
/// let mut dst = vec![0u64; src.len()];
/// // SAFETY: `dst` is valid for `src.len()` words of writes, apart from `src`, and no other
/// // thread accesses it.
/// unsafe { herald::runtime::copy_streaming_words(&src, dst.as_mut_ptr()) };
/// assert_eq!(src, dst);
/// ```
///
/// # Safety
/// As [`copy_streaming`], for `src.len()` words at `dst`.
pub unsafe fn copy_streaming_words(src: &[u64], dst: *mut u64) {
    // SAFETY: a `u64` has no padding, so all of `src`'s bytes are initialized and readable as
    // bytes; `dst` is valid for as many bytes of writes, apart from `src` (the caller's
    // contract).
    unsafe {
        copy_chunk(
            src.as_ptr().cast::<u8>(),
            dst.cast::<u8>(),
            std::mem::size_of_val(src),
            true,
        );
    }
}

/// `copy_nonoverlapping` with the 16-byte-aligned middle of `dst` written by non-temporal
/// stores (SSE2, part of every x86-64), ends copied plainly, then `sfence`: non-temporal stores
/// are not ordered with later stores otherwise.
///
/// # Safety
/// As [`copy_chunk`].
#[cfg(all(target_arch = "x86_64", not(herald_loom), not(miri)))]
unsafe fn stream_copy(src: *const u8, dst: *mut u8, len: usize) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
    let head = dst.align_offset(16).min(len);
    // SAFETY: `head ≤ len`, inside both ranges (the caller's contract).
    unsafe { std::ptr::copy_nonoverlapping(src, dst, head) };
    let mut at = head;
    while at + 64 <= len {
        for k in [0, 16, 32, 48] {
            // SAFETY: `at + k + 16 ≤ len`, so both 16-byte accesses lie in their ranges;
            // `dst + at` is 16-byte aligned (`head` aligned it, and `at − head` is a multiple
            // of 64), as `_mm_stream_si128` needs; the load is unaligned.
            unsafe {
                let v = _mm_loadu_si128(src.add(at + k).cast::<__m128i>());
                _mm_stream_si128(dst.add(at + k).cast::<__m128i>(), v);
            }
        }
        at += 64;
    }
    // SAFETY: `at ≤ len`; the rest of both ranges. Then the fence (SSE, no memory access).
    unsafe {
        std::ptr::copy_nonoverlapping(src.add(at), dst.add(at), len - at);
        _mm_sfence();
    }
}

/// Marks, when dropped (on every way out of a single-copy run, unwinding included), that rank
/// `me` reads no other rank's buffer in call `id` any more, and wakes the ranks it reads from.
pub(super) struct ReadsDone<'p> {
    pub(super) core: &'p Core,
    pub(super) me: usize,
    pub(super) id: (u64, u64),
    pub(super) prog: &'p RankProgram,
}

impl Drop for ReadsDone<'_> {
    fn drop(&mut self) {
        let progress = &self.core.ranks[self.me].progress;
        // Before `reads_done`: a lender that sees this call's reads done sees this too.
        progress.cpu.store(thread_cpu(), Ordering::Relaxed);
        progress.reads_done.store(self.id.0, Ordering::Release);
        for (from, _) in &self.prog.incoming {
            self.core.signals[*from as usize].notify();
        }
    }
}

/// Rank `me`'s buffer, lent to its receivers in call `id` (rule 4).
pub(super) struct Lent<'p> {
    pub(super) core: &'p Core,
    pub(super) me: usize,
    pub(super) id: (u64, u64),
    pub(super) receivers: &'p RankProgram,
    /// The bytes each reader copies from the lent buffer (at most): the wait for the readers
    /// yields for about their copy time before it parks ([`lend_wait`]).
    pub(super) bytes: usize,
    /// Whether the wait spins on each turn once only readers on other CPUs are left: a
    /// one-descriptor copy ([`one_descriptor`]) whose CPU's other ranks forward nothing in the
    /// call (docs/runtime.md, "A lender spins for readers on the other CPU").
    pub(super) spin_across: bool,
    /// Whether the run succeeded (set just before the drop on the normal path).
    pub(super) succeeded: bool,
}

/// A lender's readers copy at least this many bytes per nanosecond (one quarter of a byte per
/// ns, 250 MB/s: far below the 14–36 GB/s of a cross-core copy measured on the development
/// machine, 2026-11-25, and below the 2 GB/s of its slowest host minutes).
const LEND_BYTES_PER_NS: u64 = 4;

/// The longest a lender yields before it parks, whatever it lent.
const LEND_YIELD_MAX: Duration = Duration::from_millis(4);

/// How long a lender's wait for its readers yields before it parks: about the time its readers
/// need to copy `bytes` each, one after the other, at [`LEND_BYTES_PER_NS`] (at most
/// [`LEND_YIELD_MAX`]). A single copy of 4 MiB between two ranks takes 150–190 µs here, longer
/// than the runtime's usual 100 µs of yields; the lender then parked and paid a wake-up (35–250
/// µs) on every broadcast. Yielding instead costs its CPU nothing another thread wants.
pub(super) fn lend_wait(bytes: usize, readers: usize) -> Duration {
    let ns = (bytes as u64)
        .saturating_mul(readers as u64)
        .div_ceil(LEND_BYTES_PER_NS);
    Duration::from_nanos(ns).min(LEND_YIELD_MAX)
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if !self.succeeded {
            let cause = if std::thread::panicking() {
                PoisonCause::Panic
            } else {
                PoisonCause::Error
            };
            self.core.poison(self.me, cause);
        }
        let (core, me, id) = (self.core, self.me, self.id);
        let expected = lend_wait(self.bytes, self.receivers.sends.len());
        // Once every reader still copying runs on another CPU, nothing on this one can end
        // the wait: it spins on each turn (docs/runtime.md, "A lender spins for readers on
        // the other CPU").
        let across = || {
            self.spin_across
                && self.receivers.sends.iter().all(|&(to, _)| {
                    core.across(me, to as usize) || reader_finished(core, to as usize, id)
                })
        };
        core.signals[me].wait_until_unabortable_for(expected, across, || {
            if thread_aborted() && !core.is_poisoned() {
                // This rank's team was aborted: receivers driven by other teams do not see
                // that flag, so make it the communicator's before relying on it (rule 5).
                core.poison(me, PoisonCause::Aborted);
            }
            self.receivers
                .sends
                .iter()
                .all(|&(to, _)| reader_finished(core, to as usize, id))
                .then_some(())
        });
    }
}

/// Whether rank `to` can no longer read the lender's buffer in call `(seq, header)`: it marked
/// its reads done, or left, or the communicator is poisoned and its published call is another
/// (rule 5; the receiver copies only for descriptors of its own call, and looks at the flag
/// after publishing its call).
pub(crate) fn reader_finished(core: &Core, to: usize, (seq, header): (u64, u64)) -> bool {
    let r = &core.ranks[to];
    let p = &r.progress;
    if p.reads_done.load(Ordering::Acquire) >= seq || p.departed.load(Ordering::Acquire) != PRESENT
    {
        return true;
    }
    if !core.poison_flag().load(Ordering::SeqCst) {
        return false;
    }
    // Rule 5: the flag's load before the receiver's call number.
    fence(Ordering::SeqCst);
    // A receiver at this call number with this header may still read; at another number, or
    // with another header at this number, it never copies for this call's descriptors.
    r.seq.load(Ordering::SeqCst) != seq || r.header_of(seq) != Some(header)
}

/// Loom models of the lender/reader handshake (rules 3–5), built from the protocol's own parts:
/// `Core::publish`, `copy_allowed`, `ReadsDone`, `Lent` and `reader_finished`, with the lent
/// buffer as a loom cell so that loom reports a read that is not ordered before the buffer's
/// release. (`RUSTFLAGS="--cfg herald_loom" cargo test --release --lib loom_`.)
#[cfg(all(test, herald_loom))]
mod loom_tests {
    use super::*;
    use crate::runtime::sync::{Arc, AtomicBool};
    use loom::cell::UnsafeCell;
    use loom::thread;

    // Grouped by the header's fields, not by fours.
    #[allow(clippy::unusual_byte_groupings)]
    const HEADER: u64 = 0x1_01_00000_00000040;

    /// How the reader takes part.
    #[derive(Clone, Copy, Debug)]
    enum Reader {
        /// In the same call: copies if the descriptor is there and the flags allow.
        Same,
        /// In the same call number with another header: never copies.
        Other,
        /// Leaves without making the call.
        Leaves,
    }

    fn model(reader: Reader, succeeded: bool) {
        loom::model(move || {
            let core = Arc::new(Core::new(2));
            let buf = Arc::new(UnsafeCell::new(7u64));
            let desc = Arc::new(AtomicBool::new(false));
            let id = (1, HEADER);
            let r = {
                let (core, buf, desc) = (Arc::clone(&core), Arc::clone(&buf), Arc::clone(&desc));
                thread::spawn(move || match reader {
                    Reader::Leaves => core.depart(1, 0),
                    Reader::Same | Reader::Other => {
                        let header = if matches!(reader, Reader::Same) {
                            HEADER
                        } else {
                            HEADER + 1
                        };
                        core.publish(1, 1, header);
                        let prog = RankProgram {
                            sends: vec![],
                            incoming: vec![(0, vec![0])],
                        };
                        let _done = ReadsDone {
                            core: &core,
                            me: 1,
                            id: (1, header),
                            prog: &prog,
                        };
                        let mine = header == HEADER;
                        if mine && desc.load(Ordering::Acquire) && copy_allowed(core.poison_flag())
                        {
                            // SAFETY: loom checks this read against the release below.
                            let seen = buf.with(|p| unsafe { *p });
                            assert_eq!(seen, 7, "read a released buffer");
                        }
                    }
                })
            };
            core.publish(0, 1, HEADER);
            desc.store(true, Ordering::Release);
            let prog = RankProgram {
                sends: vec![(1, 0)],
                incoming: vec![],
            };
            drop(Lent {
                core: &core,
                me: 0,
                id,
                receivers: &prog,
                bytes: 0,
                spin_across: false,
                succeeded,
            });
            // The call returns: the caller frees or rewrites its buffer.
            // SAFETY: loom checks this write against the reader's read.
            buf.with_mut(|p| unsafe { *p = 0 });
            r.join().unwrap();
        });
    }

    #[test]
    fn loom_lender_fails_while_reader_copies() {
        model(Reader::Same, false);
    }

    #[test]
    fn loom_lender_succeeds_reader_copies() {
        model(Reader::Same, true);
    }

    #[test]
    fn loom_lender_fails_reader_in_another_call() {
        model(Reader::Other, false);
    }

    #[test]
    fn loom_lender_fails_reader_leaves() {
        model(Reader::Leaves, false);
    }
}

/// The protocol's own stress test: single-copy broadcasts of many chunks in which, round after
/// round, the lender panics while its descriptors are out, or a reader panics mid-copy, or all
/// goes well. The lent buffers overwrite themselves before they are freed, so a read after the
/// release shows as a byte that is neither the receiver's own nor the root's; a call that
/// returns `Ok` must have delivered every byte.
#[cfg(all(test, not(herald_loom)))]
mod stress {
    use crate::runtime::collective::{Comm, CommOptions};
    use crate::runtime::fault::{self, Point};
    use crate::runtime::team::Team;
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::atomic::{AtomicUsize, Ordering};

    const SENT: u8 = 0x11;
    const BEFORE: u8 = 0x55;
    const SCRUB: u8 = 0xDE;
    const BYTES: usize = 48 << 10;
    const CHUNK: usize = 4 << 10;

    /// A buffer that overwrites itself with [`SCRUB`] before it is freed.
    struct Scrubbed(Vec<u8>);

    impl Drop for Scrubbed {
        fn drop(&mut self) {
            self.0.fill(SCRUB);
            std::hint::black_box(&self.0);
        }
    }

    #[test]
    fn panics_anywhere_in_a_lend_never_expose_a_freed_buffer() {
        stress(3, BYTES, CHUNK);
    }

    /// The same with one chunk, so every rank moves one descriptor (`one_chunk`, not the
    /// executor), on 4 ranks: the binomial tree's rank 1 forwards to rank 3.
    #[test]
    fn panics_anywhere_in_a_one_descriptor_lend_never_expose_a_freed_buffer() {
        stress(4, CHUNK, CHUNK);
    }

    /// `n` ranks broadcast `bytes` by single copy in chunks of `chunk`, one rank panicking
    /// at a lend or a copy in two of three rounds.
    fn stress(n: usize, bytes: usize, chunk: usize) {
        let (done, watch) = std::sync::mpsc::channel::<()>();
        // Only a timeout is a hang: a failed assertion drops `done`, and its panic is the
        // test's report (an abort here would hide it behind "hung").
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                watch.recv_timeout(std::time::Duration::from_secs(300))
            {
                eprintln!("direct::stress hung");
                std::process::abort();
            }
        });
        // Nothing posted: with more ranks than CPUs a few KiB would be.
        let options = CommOptions {
            direct_min_bytes: chunk,
            direct_chunk_bytes: chunk,
            posted_broadcast: false,
            shared_posted_bytes: None,
            ..CommOptions::default()
        };
        let mut comm = Comm::with_options(n, options).unwrap();
        let mut team = Team::new(n).unwrap();
        let rounds = if cfg!(miri) { 6 } else { 60 };
        let (mut oks, mut panics) = (0, 0);
        let (torn, false_ok) = (AtomicUsize::new(0), AtomicUsize::new(0));
        for round in 0..rounds {
            // Which rank panics (none every third round), and at which chunk.
            let victim = (round % 3 != 2).then_some(round % n);
            let skip = (round / 3 % bytes.div_ceil(chunk)) as u32;
            let root = round / 2 % n;
            let mut ranks = comm.ranks();
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                team.run_with(&mut ranks, |_, c| {
                    let me = c.rank();
                    let mut buf = Scrubbed(vec![if me == root { SENT } else { BEFORE }; bytes]);
                    if victim == Some(me) {
                        // A forwarder's lend too, with one chunk (its copy is its only chunk).
                        let lends = me == root || (bytes == chunk && round % 4 >= 2);
                        let point = if lends {
                            Point::LendDescriptor
                        } else {
                            Point::CopyChunk
                        };
                        fault::panic_at(point, skip);
                    }
                    let result = c.broadcast(root, &mut buf.0);
                    fault::disarm();
                    // Recorded, not asserted: the victim's panic is what the team re-raises.
                    if !buf.0.iter().all(|&b| b == SENT || b == BEFORE) {
                        torn.fetch_add(1, Ordering::Relaxed);
                    }
                    if result.is_ok() && !buf.0.iter().all(|&b| b == SENT) {
                        false_ok.fetch_add(1, Ordering::Relaxed);
                    }
                    result.is_ok()
                })
            }));
            match outcome {
                Ok(all) => oks += all.iter().filter(|&&ok| ok).count(),
                Err(e) => {
                    let msg = e
                        .downcast_ref::<String>()
                        .map(String::as_str)
                        .or_else(|| e.downcast_ref::<&str>().copied())
                        .unwrap_or("");
                    assert!(
                        msg.contains("fault injection"),
                        "an unexpected panic: {msg}"
                    );
                    panics += 1;
                }
            }
            drop(ranks);
            assert_eq!(torn.load(Ordering::Relaxed), 0, "a freed buffer was read");
            assert_eq!(false_ok.load(Ordering::Relaxed), 0, "Ok without the data");
        }
        // Both kinds of round happened: the test exercised the failure paths and the happy one.
        assert!(oks > 0 && panics > 0, "oks {oks}, panics {panics}");
        done.send(()).unwrap();
    }
}

#[cfg(all(test, not(herald_loom)))]
mod copy_tests {
    use super::{chunk_copy, copy_chunk, held, HELD_FROM};

    #[test]
    fn a_streaming_copy_moves_every_byte_at_every_alignment_and_length() {
        // Every destination alignment modulo 16 and source misalignment, lengths around the
        // 64-byte body and its ends: the bytes land exactly, and nothing beyond them moves.
        let src: Vec<u8> = (0..600u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in (0..200).chain([255, 256, 257, 511, 512, 513]) {
            for d in 0..16 {
                for s in [0, 1, 5, 15] {
                    for streaming in [false, true] {
                        let mut dst = vec![0xEEu8; 600];
                        // SAFETY: both ranges lie inside their vectors (`d + len < 600`,
                        // `s + len < 600`) and the vectors are distinct.
                        unsafe {
                            copy_chunk(src.as_ptr().add(s), dst.as_mut_ptr().add(d), len, streaming)
                        };
                        assert_eq!(&dst[d..d + len], &src[s..s + len], "len {len} d {d} s {s}");
                        assert!(dst[..d].iter().all(|&b| b == 0xEE));
                        assert!(dst[d + len..].iter().all(|&b| b == 0xEE));
                    }
                }
            }
        }
    }

    #[test]
    fn a_plain_copy_moves_every_byte_whatever_the_two_alignments() {
        // The vector copy's cases, by both plain ways (the C library's or the loop by the
        // distance, and a single copy's chunk, the loop at every distance): every destination
        // alignment modulo 64 (its head aligns to 32), sources at distances from it that are
        // and are not multiples of 16 and 32, lengths on both sides of its threshold and of
        // its 128-byte steps, and a few short ones.
        const ROOM: usize = 5000;
        let src: Vec<u8> = (0..ROOM as u32).map(|i| (i * 13 + 1) as u8).collect();
        let lens = (0..4)
            .chain(250..=300)
            .chain([383, 384, 385, 511, 512, 513, 640, 4096 + 17]);
        for len in lens {
            for d in 0..64 {
                for s in [0, 1, 16, 17, 31, 32, 48, 63] {
                    for chunk in [false, true] {
                        let mut dst = vec![0xEEu8; ROOM];
                        let (from, to) = (src.as_ptr(), dst.as_mut_ptr());
                        // SAFETY: both ranges lie inside their vectors (`d + len < ROOM`, `s +
                        // len < ROOM`) and the vectors are distinct.
                        unsafe {
                            if chunk {
                                chunk_copy(from.add(s), to.add(d), len);
                            } else {
                                copy_chunk(from.add(s), to.add(d), len, false);
                            }
                        }
                        let at = format!("len {len} d {d} s {s} chunk {chunk}");
                        assert_eq!(&dst[d..d + len], &src[s..s + len], "{at}");
                        assert!(dst[..d].iter().all(|&b| b == 0xEE), "{at}");
                        assert!(dst[d + len..].iter().all(|&b| b == 0xEE), "{at}");
                    }
                }
            }
        }
    }

    #[test]
    fn only_the_buffer_lent_across_cpus_is_held() {
        let buf = vec![0u8; HELD_FROM];
        let at = (buf.as_ptr() as usize, buf.len());
        assert!(held(Some(at), &buf));
        assert!(!held(None, &buf));
        // Another buffer, or the same address with another length: not held.
        assert!(!held(Some((at.0 + 64, at.1)), &buf));
        assert!(!held(Some((at.0, at.1 + 1)), &buf));
        // From `HELD_FROM` bytes on (shorter copies are never worth streaming).
        for len in [HELD_FROM - 1, HELD_FROM, 4 << 20] {
            let b = vec![0u8; len];
            let lent = Some((b.as_ptr() as usize, b.len()));
            assert_eq!(held(lent, &b), len >= HELD_FROM, "{len} bytes");
        }
    }
}
