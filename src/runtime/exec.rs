//! The one executor of compiled broadcast programs, shared by [`Network`](super::Network) and
//! the [`Comm`](super::Comm) collectives.
//!
//! A rank runs its [`RankProgram`]: it receives blocks on its incoming edges (each a FIFO ring,
//! carrying its blocks in the program's order) and sends blocks in its send order. It forwards
//! **line by line**: line `j` of a block goes out as soon as the rank holds it, so a single-block
//! tree is pipelined at line granularity and a large payload streams through every level at
//! once. (The cost models treat a block as one message; on more than one hop the runtime is
//! therefore no slower than the model's block-level schedule, and usually faster.)
//!
//! A receiver reads in bursts: it waits until the line [`SLIP`] ahead of its next one (or the
//! block's last line, if nearer) is written, so it never polls the line the producer is writing
//! (which would make every line a contended transfer).
//!
//! A rank never blocks on one operation: while its next send waits for data or for ring space
//! it drains every incoming ring, so ranks streaming to each other cannot deadlock whatever the
//! ring capacity. When nothing moves it waits on its [`Signal`] (spin, yield, park); every push
//! notifies the receiver and every drain the sender.
//!
//! How blocks map onto lines is a [`Framing`]: whole lines of the buffer ([`Network`](super::Network)),
//! or lines of the stream `header ‖ buffer` whose first line carries the call's header
//! ([`Comm`](super::Comm), which detects mismatched calls with it).

use super::channel::{Receiver, Sender, TryRecvError, TrySendWithError};
use super::collective::DirectFraming;
use super::line::Line;
use super::program::{Blocking, RankProgram};
use super::wait::{Aborted, Polls, Signal};
use crossbeam_utils::CachePadded;

/// How the blocks of a broadcast map onto lines and bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Framing<'a> {
    /// Blocks of whole lines of the buffer.
    Plain(Blocking),
    /// The stream `header ‖ buffer` cut into 56-byte lines; block `b` is stream lines
    /// `b·per_block .. min((b + 1)·per_block, total)`.
    Stream {
        /// The call's header (the first 8 bytes of line 0).
        header: u64,
        /// Lines in the stream.
        total: usize,
        /// Lines per block.
        per_block: usize,
    },
    /// Single copy: a "line" is a descriptor of one chunk of the sender's buffer, and storing
    /// it copies the chunk into this rank's buffer (`collective/direct.rs`, which owns the
    /// protocol that makes the copy sound).
    Direct(DirectFraming<'a>),
}

/// Why a line was not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// It is another call's (its header, as found).
    Header(u64),
    /// The run was stopped (poison or abort) before a single-copy read.
    Stopped,
}

impl Framing<'_> {
    /// The stream framing of `bytes` payload bytes in `blocks` blocks.
    pub(crate) fn stream(header: u64, bytes: usize, blocks: u32) -> Framing<'static> {
        let total = stream_lines(bytes);
        Framing::Stream {
            header,
            total,
            per_block: total.div_ceil(blocks.max(1) as usize).max(1),
        }
    }

    /// Lines of block `b` (at least 1).
    #[inline]
    fn lines(&self, b: u32) -> usize {
        match self {
            Framing::Direct(d) => d.lines(b),
            Framing::Plain(blocking) => blocking.lines(b),
            &Framing::Stream {
                total, per_block, ..
            } => {
                let start = (b as usize * per_block).min(total);
                (total - start).min(per_block).max(1)
            }
        }
    }

    /// Writes line `j` of block `b` of `buf` into a slot's payload.
    #[inline]
    fn fill(&self, b: u32, j: usize, buf: &[u8], p: &mut [u8; Line::PAYLOAD]) {
        match self {
            Framing::Plain(blocking) => {
                let range = blocking.range(b);
                let off = range.start + j * Line::PAYLOAD;
                let len = range.end.saturating_sub(off).min(Line::PAYLOAD);
                p[..len].copy_from_slice(&buf[off..off + len]);
            }
            &Framing::Stream {
                header, per_block, ..
            } => fill_line(b as usize * per_block + j, header, buf, p),
            Framing::Direct(d) => d.fill(b, j, p),
        }
    }

    /// Stores line `j` of block `b` into `buf`; refused if it is line 0 of a stream or a
    /// descriptor and its header is not this call's, or if a single-copy run was stopped.
    #[inline]
    fn store(
        &self,
        b: u32,
        j: usize,
        p: &[u8; Line::PAYLOAD],
        buf: &mut [u8],
    ) -> Result<(), Refused> {
        match self {
            Framing::Plain(blocking) => {
                let range = blocking.range(b);
                let off = range.start + j * Line::PAYLOAD;
                let len = range.end.saturating_sub(off).min(Line::PAYLOAD);
                buf[off..off + len].copy_from_slice(&p[..len]);
                Ok(())
            }
            &Framing::Stream {
                header, per_block, ..
            } => {
                let k = b as usize * per_block + j;
                match store_line(k, p, buf) {
                    got if k == 0 && got != header => Err(Refused::Header(got)),
                    _ => Ok(()),
                }
            }
            Framing::Direct(d) => d.store(b, j, p),
        }
    }
}

/// Lines of the stream `header ‖ buf` for a `bytes`-byte `buf`.
pub(crate) fn stream_lines(bytes: usize) -> usize {
    (8 + bytes).div_ceil(Line::PAYLOAD)
}

/// Writes line `k` of the stream `header ‖ buf` into a slot's payload `p` (every byte the
/// receiver reads: the header and the line's share of `buf`).
#[inline]
pub(crate) fn fill_line(k: usize, header: u64, buf: &[u8], p: &mut [u8; Line::PAYLOAD]) {
    if k == 0 {
        p[..8].copy_from_slice(&header.to_le_bytes());
        let n = buf.len().min(Line::PAYLOAD - 8);
        p[8..8 + n].copy_from_slice(&buf[..n]);
    } else {
        let start = (k * Line::PAYLOAD - 8).min(buf.len());
        let end = (start + Line::PAYLOAD).min(buf.len());
        p[..end - start].copy_from_slice(&buf[start..end]);
    }
}

/// Stores line `k` of a stream into `buf`; returns line 0's header (0 for other lines).
#[inline]
pub(crate) fn store_line(k: usize, p: &[u8; Line::PAYLOAD], buf: &mut [u8]) -> u64 {
    if k == 0 {
        let n = buf.len().min(Line::PAYLOAD - 8);
        buf[..n].copy_from_slice(&p[8..8 + n]);
        u64::from_le_bytes(p[..8].try_into().expect("8 bytes"))
    } else {
        let start = (k * Line::PAYLOAD - 8).min(buf.len());
        let end = (start + Line::PAYLOAD).min(buf.len());
        buf[start..end].copy_from_slice(&p[..end - start]);
        0
    }
}

/// A rank's channel ends, as the executor asks for them.
pub(crate) trait Links {
    /// The sending end of the edge to `to` (the program guarantees the edge).
    fn sender(&mut self, to: u32) -> &mut Sender;
    /// The receiving end of the `e`-th incoming edge of the program (from `from`).
    fn receiver(&mut self, e: usize, from: u32) -> &mut Receiver;
}

/// Why an execution stopped early.
#[derive(Debug)]
pub(crate) enum Stop<E> {
    /// A stream's first line carried another call's header: `(from, found)`.
    Header(u32, u64),
    /// A single-copy run found the poison or abort flag raised before a copy.
    Stopped,
    /// The other end of the edge with this peer was dropped while lines were still due.
    Gone(u32),
    /// The wait hook reported an error (abort, poison, a peer's mismatched call).
    Hook(E),
}

/// How far ahead of its next line a receiver waits for the producer before reading a burst.
pub(crate) const SLIP: usize = 16;

/// Reusable per-rank scratch state (so a call allocates nothing once warm).
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// Lines of each block held (a contiguous prefix: one sender delivers a block in order).
    held: Vec<usize>,
    /// Per incoming edge: next block index and lines of it received.
    recv: Vec<(usize, usize)>,
    /// Single copy: the buffer (address, length) this rank lent in its last single-copy call
    /// to a reader on another CPU, which then holds its lines (`collective/direct.rs`).
    pub(crate) lent_across: Option<(usize, usize)>,
    /// Single copy: this rank's count of its copies into such a buffer, per size class.
    pub(crate) held_calls: crate::runtime::collective::HeldCalls,
}

/// One rank's execution of a program.
pub(crate) struct Exec<'a, L: Links> {
    prog: &'a RankProgram,
    framing: Framing<'a>,
    links: &'a mut L,
    buf: &'a mut [u8],
    signals: &'a [CachePadded<Signal>],
    rank: usize,
    held: &'a mut Vec<usize>,
    recv: &'a mut Vec<(usize, usize)>,
    /// Next send, and lines of it pushed.
    send: (usize, usize),
}

impl<'a, L: Links> Exec<'a, L> {
    /// The state at the start of a broadcast; `root` holds every block.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        prog: &'a RankProgram,
        blocks: u32,
        is_root: bool,
        framing: Framing<'a>,
        links: &'a mut L,
        buf: &'a mut [u8],
        signals: &'a [CachePadded<Signal>],
        rank: usize,
        scratch: &'a mut Scratch,
    ) -> Self {
        scratch.held.clear();
        scratch
            .held
            .extend((0..blocks).map(|b| if is_root { framing.lines(b) } else { 0 }));
        scratch.recv.clear();
        scratch.recv.resize(prog.incoming.len(), (0, 0));
        Exec {
            prog,
            framing,
            links,
            buf,
            signals,
            rank,
            held: &mut scratch.held,
            recv: &mut scratch.recv,
            send: (0, 0),
        }
    }

    /// Whether every send is done and every expected line received.
    fn finished(&self) -> bool {
        self.send.0 == self.prog.sends.len()
            && self
                .recv
                .iter()
                .zip(&self.prog.incoming)
                .all(|(st, (_, bl))| st.0 == bl.len())
    }

    /// Runs to completion. While waiting, `hook` may stop the run with an error: it is called
    /// on every poll after the spin phase (so on every wake-up) and on every
    /// [`THOROUGH_EVERY`](crate::runtime::wait::THOROUGH_EVERY)-th poll while spinning (the
    /// hook may read lines its peers write).
    pub(crate) fn run<E>(&mut self, mut hook: impl FnMut() -> Option<E>) -> Result<(), Stop<E>>
    where
        E: From<Aborted>,
    {
        while !self.finished() {
            if !self.step()? {
                let signals = self.signals;
                let mut polls = Polls::default();
                let waited = signals[self.rank].wait_phased_or(|phase| match self.step() {
                    Ok(true) => Some(Ok(())),
                    Ok(false) => {
                        if polls.thorough(phase) {
                            hook().map(|e| Err(Stop::Hook(e)))
                        } else {
                            None
                        }
                    }
                    Err(stop) => Some(Err(stop)),
                });
                match waited {
                    Ok(r) => r?,
                    Err(aborted) => return Err(Stop::Hook(E::from(aborted))),
                }
            }
        }
        Ok(())
    }

    /// One pass: drain incoming rings, push what can be sent. Whether anything moved.
    fn step<E>(&mut self) -> Result<bool, Stop<E>> {
        let mut moved = false;
        for e in 0..self.recv.len() {
            moved |= self.drain(e)?;
        }
        Ok(moved | self.push()?)
    }

    /// Receives what edge `e` has, in bursts: it reads only once the line `SLIP` lines ahead
    /// (or the block's last line, if nearer) is written (see [`Receiver::is_written`]).
    fn drain<E>(&mut self, e: usize) -> Result<bool, Stop<E>> {
        let (from, ref blocks) = self.prog.incoming[e];
        let rx = self.links.receiver(e, from);
        let mut got = false;
        if let Some(&block) = blocks.get(self.recv[e].0) {
            let remaining = self.framing.lines(block) - self.recv[e].1;
            let slip = match self.framing {
                Framing::Direct(_) => 0, // a descriptor is worth acting on at once
                _ => SLIP,
            };
            // At most half the ring: the producer must be able to write the awaited line even
            // while up to a quarter of the ring is read but not yet published back to it.
            let ahead = (remaining - 1).min(slip).min(rx.capacity() / 2);
            if ahead > 0 && !rx.is_written(ahead) {
                return Ok(false);
            }
        }
        while let Some(&block) = blocks.get(self.recv[e].0) {
            let j = self.recv[e].1;
            let (framing, buf) = (&self.framing, &mut *self.buf);
            match rx.try_recv_with(|p| framing.store(block, j, p, buf)) {
                Ok(Ok(())) => {}
                Ok(Err(Refused::Header(found))) => return Err(Stop::Header(from, found)),
                Ok(Err(Refused::Stopped)) => return Err(Stop::Stopped),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return Err(Stop::Gone(from)),
            }
            got = true;
            let held = &mut self.held[block as usize];
            *held = (*held).max(j + 1);
            self.recv[e].1 = j + 1;
            if j + 1 == self.framing.lines(block) {
                self.recv[e] = (self.recv[e].0 + 1, 0);
            }
        }
        if got {
            self.signals[from as usize].notify(); // room in its ring
        }
        Ok(got)
    }

    /// Pushes the lines of the current sends that are held and fit their rings.
    fn push<E>(&mut self) -> Result<bool, Stop<E>> {
        let mut moved = false;
        while let Some(&(to, block)) = self.prog.sends.get(self.send.0) {
            let lines = self.framing.lines(block);
            let held = self.held[block as usize];
            let tx = self.links.sender(to);
            let mut pushed = false;
            while self.send.1 < held {
                let (framing, buf, j) = (&self.framing, &*self.buf, self.send.1);
                match tx.try_send_with(|p| framing.fill(block, j, buf, p)) {
                    Ok(()) => {}
                    Err(TrySendWithError::Full) => break,
                    Err(TrySendWithError::Disconnected) => return Err(Stop::Gone(to)),
                }
                self.send.1 += 1;
                pushed = true;
            }
            if pushed {
                self.signals[to as usize].notify();
                moved = true;
            }
            if self.send.1 < lines {
                break;
            }
            self.send = (self.send.0 + 1, 0);
        }
        Ok(moved)
    }
}

/// Loom model of the executor's wake protocol: ranks of a chain forward a block line by line
/// over rings smaller than the block, each waiting on its signal (spin, yield, park) whenever
/// nothing moves; a lost wake-up is a deadlock loom reports, a slot read during its write a
/// causality violation. (`RUSTFLAGS="--cfg herald_loom" cargo test --release --lib loom_`.)
#[cfg(all(test, herald_loom))]
mod loom_tests {
    use super::*;
    use crate::runtime::channel::channel;
    use crate::runtime::program::ProgramError;
    use crate::runtime::sync::Arc;
    use loom::thread;

    /// A rank's ends in the model.
    struct Ends {
        tx: Option<Sender>,
        rx: Option<Receiver>,
    }

    impl Links for Ends {
        fn sender(&mut self, _to: u32) -> &mut Sender {
            self.tx.as_mut().expect("a sender")
        }

        fn receiver(&mut self, _e: usize, _from: u32) -> &mut Receiver {
            self.rx.as_mut().expect("a receiver")
        }
    }

    /// Rank `i` of an `n`-rank chain.
    fn program(i: u32, n: u32) -> RankProgram {
        RankProgram {
            sends: if i + 1 < n { vec![(i + 1, 0)] } else { vec![] },
            incoming: if i > 0 {
                vec![(i - 1, vec![0])]
            } else {
                vec![]
            },
        }
    }

    fn rank(
        i: u32,
        n: u32,
        ends: &mut Ends,
        signals: &[CachePadded<Signal>],
        bytes: usize,
    ) -> Vec<u8> {
        let prog = program(i, n);
        let mut buf: Vec<u8> = if i == 0 {
            (0..bytes).map(|b| b as u8 ^ 0x5a).collect()
        } else {
            vec![0; bytes]
        };
        let mut scratch = Scratch::default();
        let framing = Framing::Plain(Blocking::new(bytes, 1));
        let mut exec = Exec::new(
            &prog,
            1,
            i == 0,
            framing,
            ends,
            &mut buf,
            signals,
            i as usize,
            &mut scratch,
        );
        assert!(exec.run(|| None::<ProgramError>).is_ok());
        buf
    }

    fn chain(n: u32, lines: usize, capacity: usize) {
        loom::model(move || {
            let bytes = lines * Line::PAYLOAD;
            let signals: Arc<Vec<CachePadded<Signal>>> =
                Arc::new((0..n).map(|_| CachePadded::new(Signal::new())).collect());
            let mut ends: Vec<Ends> = (0..n).map(|_| Ends { tx: None, rx: None }).collect();
            for i in 0..n as usize - 1 {
                let (tx, rx) = channel(capacity);
                ends[i].tx = Some(tx);
                ends[i + 1].rx = Some(rx);
            }
            let mut root = ends.remove(0);
            let handles: Vec<_> = ends
                .into_iter()
                .enumerate()
                .map(|(i, mut e)| {
                    let signals = Arc::clone(&signals);
                    thread::spawn(move || rank(i as u32 + 1, n, &mut e, &signals, bytes))
                })
                .collect();
            let sent = rank(0, n, &mut root, &signals, bytes);
            for h in handles {
                assert_eq!(h.join().unwrap(), sent);
            }
        });
    }

    #[test]
    fn loom_exec_two_ranks_ring_of_two() {
        chain(2, 3, 2);
    }

    #[test]
    fn loom_exec_two_ranks_ring_of_one() {
        chain(2, 3, 1);
    }

    #[test]
    fn loom_exec_chain_of_three() {
        chain(3, 2, 1);
    }
}
