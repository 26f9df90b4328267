//! A rank's endpoint: starting and ending calls, broadcasts over compiled programs, and the
//! point-to-point line streams the combining collectives are built from.

use super::call::{Call, CallInfo, CollectiveKind, Core};
use super::choice::Chooser;
use super::comm::{Comm, MAX_CACHED_PROGRAMS};
use super::direct;
use super::error::{CollectiveError, PoisonCause};
use super::posted;
use crate::runtime::channel::{Receiver, Sender, TryRecvError, TrySendWithError};
use crate::runtime::exec::{
    fill_line, store_line, stream_lines, Exec, Framing, Links, Scratch, Stop, SLIP,
};
use crate::runtime::line::Line;
use crate::runtime::program::{Program, ProgramError, RankProgram};
use crate::runtime::sync::Ordering;
use crate::runtime::wait::{self, AbortFlag, PanicWatch, Polls};
use bytemuck::Pod;
use std::sync::Arc;

/// One rank's endpoint of a [`Comm`]: hand one to each rank (it is `Send`).
///
/// Every rank must make the same sequence of calls with the same roots and sizes. Calls may be
/// made in a loop; the default programs are compiled once per root.
///
/// Dropping an endpoint marks its rank as gone: a peer waiting for a call it never made gets
/// [`CollectiveError::Departed`] instead of waiting forever (and, dropped while its thread
/// panics, it poisons the communicator).
#[repr(align(128))]
pub struct CommRank<'c> {
    pub(crate) comm: &'c Comm,
    pub(crate) rank: usize,
    /// Calls made so far.
    seq: u64,
    /// Sending ends by receiver, taken on first use.
    out: Vec<Option<Sender>>,
    /// Receiving ends by sender, taken on first use.
    inc: Vec<Option<Receiver>>,
    /// The default programs this rank has used, by (root, size key): its own `Arc`s, so a
    /// call touches no reference count shared with other ranks.
    programs: Vec<((u32, u64), Arc<Program>)>,
    /// The index in `programs` of the last one used.
    last: usize,
    /// The executor's reusable state.
    scratch: Scratch,
    /// The communicator's core as a panic watcher (registered with the driving thread).
    watch: Arc<dyn PanicWatch>,
    /// The token of the thread that made the last call (0: none yet).
    driver: u64,
    /// That thread's team's abort flag, if it works for a team (`wait::thread_abort_flag`,
    /// read when the driver changes: a thread-local behind a `RefCell`, read on every call,
    /// it and the token's check together cost a 48-byte broadcast about 7 ns; docs/runtime.md,
    /// "Seventy-second session").
    abort: Option<Arc<AbortFlag>>,
    /// Every other rank, as the single-copy allreduce's lenders and readers (built on first
    /// use).
    pub(super) peers: RankProgram,
    /// The line path of the slice reductions: where a child's partial arrives (and the
    /// small allreduce's: where a peer's slot is read).
    pub(super) partial: Vec<u128>,
    /// Small allreduces and barriers made so far (`small.rs`: the epoch).
    pub(super) small_epoch: u64,
    /// The digest of the headers of every call made so far (`small::digest`).
    pub(super) digest: u64,
    /// This rank's place in each board's posted broadcasts (`posted.rs`: the epochs, the
    /// others' progress it saw, the shared slots between two ranks).
    posted: [posted::Cursor; 2],
    /// This rank's states of the timed classes (`choice.rs`).
    chooser: Chooser,
}

/// A rank's ends, as the executor sees them (every end the program needs is taken first).
pub(crate) struct CommLinks<'r> {
    out: &'r mut [Option<Sender>],
    inc: &'r mut [Option<Receiver>],
}

impl Links for CommLinks<'_> {
    fn sender(&mut self, to: u32) -> &mut Sender {
        self.out[to as usize]
            .as_mut()
            .expect("taken before the run")
    }

    fn receiver(&mut self, _e: usize, from: u32) -> &mut Receiver {
        self.inc[from as usize]
            .as_mut()
            .expect("taken before the run")
    }
}

impl<'c> CommRank<'c> {
    pub(crate) fn new(comm: &'c Comm, rank: usize) -> CommRank<'c> {
        CommRank {
            comm,
            rank,
            seq: 0,
            out: (0..comm.size()).map(|_| None).collect(),
            inc: (0..comm.size()).map(|_| None).collect(),
            programs: Vec::new(),
            last: 0,
            scratch: Scratch::default(),
            watch: comm.watcher(),
            driver: 0,
            abort: None,
            peers: RankProgram::default(),
            partial: Vec::new(),
            small_epoch: 0,
            digest: 0,
            posted: [posted::Cursor::new(), posted::Cursor::new()],
            chooser: comm.chooser_start(),
        }
    }

    /// This rank.
    #[must_use]
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    #[must_use]
    pub fn size(&self) -> usize {
        self.comm.size()
    }

    /// Calls this endpoint has started.
    #[must_use]
    pub fn calls(&self) -> u64 {
        self.seq
    }

    /// Whether a call ended abnormally on some rank since the endpoints were built: every
    /// call then fails until [`Comm::ranks`] is called again.
    #[must_use]
    pub fn is_poisoned(&self) -> bool {
        self.comm.core().is_poisoned()
    }

    /// Starts a call: refuses it on a poisoned communicator or an aborted team, numbers it,
    /// publishes its header and arms its guard. A bad root poisons too: the other ranks may
    /// have passed a good one and would wait for this rank forever.
    #[inline(always)]
    pub(crate) fn begin(
        &mut self,
        kind: CollectiveKind,
        root: usize,
        bytes: usize,
    ) -> Result<Call<'c>, CollectiveError> {
        let core = self.comm.core();
        if let Some(e) = core.poison_error() {
            return Err(e);
        }
        let token = wait::thread_token();
        if token != self.driver {
            self.driver = token;
            self.abort = wait::thread_abort_flag();
            core.ranks[self.rank]
                .home
                .store(wait::thread_cpu(), Ordering::Relaxed);
            core.ranks[self.rank].driver.store(token, Ordering::Release);
            wait::watch_panics(&self.watch, self.rank);
        }
        if self.abort.as_deref().is_some_and(AbortFlag::is_raised) {
            core.poison(self.rank, PoisonCause::Aborted);
            return Err(CollectiveError::Aborted);
        }
        let size = self.comm.size();
        if root >= size {
            core.poison(self.rank, PoisonCause::Error);
            return Err(CollectiveError::Root { root, size });
        }
        self.seq += 1;
        let header = CallInfo::header(kind, self.seq, root, bytes);
        self.digest = super::small::digest(self.digest, header);
        core.publish(self.rank, self.seq, header);
        Ok(Call::new(core, self.rank, self.seq, header))
    }

    /// Broadcasts `buf` from `root` to every rank over the default schedule
    /// ([`CommOptions::schedule`](crate::CommOptions::schedule)). Every rank passes a buffer of
    /// the same length; the root's contents end up in all of them.
    ///
    /// # Errors
    ///
    /// [`CollectiveError::Root`] for a root out of range, [`CollectiveError::Mismatch`] when
    /// ranks' calls differ, [`CollectiveError::Aborted`] after a panic elsewhere in the team,
    /// [`CollectiveError::Departed`] when a rank left, and [`CollectiveError::Poisoned`] once
    /// any of these (or a panic) ended a call on any rank.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut team = herald::Team::new(3)?;
    /// let mut comm = herald::Comm::new(3)?;
    /// let mut ranks = comm.ranks();
    /// let got = team.run_with(&mut ranks, |_, c| {
    ///     let mut buf = if c.rank() == 1 { vec![7u8; 1000] } else { vec![0; 1000] };
    ///     c.broadcast(1, &mut buf).unwrap();
    ///     buf.iter().all(|&b| b == 7)
    /// });
    /// assert_eq!(got, [true; 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn broadcast(&mut self, root: usize, buf: &mut [u8]) -> Result<(), CollectiveError> {
        let call = self.begin(CollectiveKind::Broadcast, root, buf.len())?;
        let result = if self.comm.posts_untimed(buf.len()) {
            self.broadcast_posted(root, call.id(), buf)
        } else if let Some(class) = self.comm.timed_class(buf.len()) {
            self.broadcast_timed(class, root, call.id(), buf)
        } else if self.comm.posts(buf.len()) {
            self.broadcast_posted(root, call.id(), buf)
        } else {
            self.broadcast_default(root, call.id(), buf)
        };
        call.end(result)
    }

    /// A broadcast of timed class `class` (`choice.rs`), as call `id`: posted or by the
    /// default schedule, by the regime the ranks agreed on.
    fn broadcast_timed(
        &mut self,
        class: usize,
        root: usize,
        id: (u64, u64),
        buf: &mut [u8],
    ) -> Result<(), CollectiveError> {
        let choice = self
            .chooser
            .start(self.comm.core(), self.rank, root, class, id)?;
        // A timed class may be posted (`timed_class`): where the regime keeps the plan's way,
        // that is the plan's.
        let posted = choice
            .posted
            .unwrap_or_else(|| self.comm.plan_posts(buf.len()));
        let result = if posted {
            self.broadcast_posted(root, id, buf)
        } else {
            self.broadcast_default(root, id, buf)
        };
        self.chooser.end(self.comm.core(), self.rank, choice);
        result
    }

    /// A broadcast posted in shared memory (`posted.rs`; at most the slots' size), as
    /// call `id`.
    #[inline]
    fn broadcast_posted(
        &mut self,
        root: usize,
        id: (u64, u64),
        buf: &mut [u8],
    ) -> Result<(), CollectiveError> {
        let (core, me) = (self.comm.core(), self.rank);
        let (board, posts) = core.posts.board_of(buf.len());
        let (at, calls) = (&mut self.posted[board], self.digest);
        posted::start(core, posts, me, at.next(me, root));
        if me == root {
            posted::post(core, me, (posts, at), id, calls, buf)
        } else {
            posted::take(core, me, root, (posts, at), id, calls, buf)?;
            posted::took(posts, at);
            Ok(())
        }
    }

    /// Broadcasts `buf` over the caller's compiled schedule `program` (any broadcast schedule:
    /// several blocks, several senders per rank).
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast), and [`CollectiveError::Program`] if the program is
    /// for another number of ranks.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::{generate, Algorithm, Comm, Model, Program, Request, Team, model::OnePort};
    /// // Träff's round-optimal schedule: 4 blocks, every rank hears from several others.
    /// let s = generate(&Request::broadcast(Algorithm::Optimal, 5, 4, 0), &Model::from(OnePort))?;
    /// let program = Program::compile(&s)?;
    /// let (mut team, mut comm) = (Team::new(5)?, Comm::new(5)?);
    /// let mut ranks = comm.ranks();
    /// let ok = team.run_with(&mut ranks, |_, c| {
    ///     let mut buf = if c.rank() == 0 { vec![3u8; 500] } else { vec![0; 500] };
    ///     c.broadcast_with(&program, &mut buf).unwrap();
    ///     buf == [3u8; 500]
    /// });
    /// assert!(ok.iter().all(|&b| b));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn broadcast_with(
        &mut self,
        program: &Program,
        buf: &mut [u8],
    ) -> Result<(), CollectiveError> {
        let root = program.root() as usize;
        let call = self.begin(CollectiveKind::Broadcast, root, buf.len())?;
        let size = self.comm.size();
        let result = if program.n() != size {
            Err(ProgramError::TeamSize {
                program: program.n(),
                team: size,
            }
            .into())
        } else {
            self.run(program, call.id(), buf)
        };
        call.end(result)
    }

    /// Broadcasts a plain-old-data value from `root` (any size).
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut team, mut comm) = (herald::Team::new(2)?, herald::Comm::new(2)?);
    /// let mut ranks = comm.ranks();
    /// let got = team.run_with(&mut ranks, |_, c| {
    ///     let mut v = [c.rank() as f64; 3];
    ///     c.broadcast_value(1, &mut v).unwrap();
    ///     v
    /// });
    /// assert_eq!(got, [[1.0; 3], [1.0; 3]]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn broadcast_value<T: Pod>(
        &mut self,
        root: usize,
        value: &mut T,
    ) -> Result<(), CollectiveError> {
        self.broadcast(root, bytemuck::bytes_of_mut(value))
    }

    /// Runs the default program for `root` (this rank's cached copy, else the `Comm`'s) as
    /// part of call `id`.
    #[inline(always)]
    pub(crate) fn broadcast_default(
        &mut self,
        root: usize,
        id: (u64, u64),
        buf: &mut [u8],
    ) -> Result<(), CollectiveError> {
        let key = self.comm.program_key(root, buf.len());
        let found = match self.programs.get(self.last) {
            Some((k, _)) if *k == key => Some(self.last),
            _ => self.programs.iter().position(|(k, _)| *k == key),
        };
        let at = match found {
            Some(at) => at,
            None => {
                let p = self.comm.default_program(root, buf.len())?;
                if self.programs.len() >= MAX_CACHED_PROGRAMS {
                    self.programs.clear();
                }
                self.programs.push((key, p));
                self.programs.len() - 1
            }
        };
        self.last = at;
        // No `Arc` clone per call: its count is shared by every rank's copy.
        let program = &*self.programs[at].1;
        let direct = self.comm.uses_direct(buf.len(), true);
        let ends = (&mut self.out, &mut self.inc, &mut self.scratch);
        run(self.comm, self.rank, ends, program, id, buf, direct)
    }

    /// Runs this rank's part of `program` in call `id` on `buf`.
    fn run(
        &mut self,
        program: &Program,
        id: (u64, u64),
        buf: &mut [u8],
    ) -> Result<(), CollectiveError> {
        let direct = self.comm.uses_direct(buf.len(), false);
        let ends = (&mut self.out, &mut self.inc, &mut self.scratch);
        run(self.comm, self.rank, ends, program, id, buf, direct)
    }
}

/// A rank's channel ends and executor state, borrowed apart from its program cache.
type Ends<'e> = (
    &'e mut Vec<Option<Sender>>,
    &'e mut Vec<Option<Receiver>>,
    &'e mut Scratch,
);

/// Runs rank `me`'s part of `program` in call `id` on `buf`, taking the ends it needs first: as
/// a line stream, or by single copy if `direct`.
#[inline(always)]
fn run(
    comm: &Comm,
    me: usize,
    (out, inc, scratch): Ends<'_>,
    program: &Program,
    id: (u64, u64),
    buf: &mut [u8],
    direct: bool,
) -> Result<(), CollectiveError> {
    let prog = program.rank(me as u32);
    for &(to, _) in &prog.sends {
        let to = to as usize;
        out[to].get_or_insert_with(|| comm.take_sender(me, to));
    }
    for (from, _) in &prog.incoming {
        let from = *from as usize;
        inc[from].get_or_insert_with(|| comm.take_receiver(from, me));
    }
    let mut links = CommLinks { out, inc };
    let core = comm.core();
    let is_root = me == program.root() as usize;
    if !direct && program.blocks() == 1 && stream_lines(buf.len()) <= SLIP {
        return small_block(core, me, prog, id, &mut links, buf);
    }
    if !direct {
        let framing = Framing::stream(id.1, buf.len(), program.blocks());
        let exec = Exec::new(
            prog,
            program.blocks(),
            is_root,
            framing,
            &mut links,
            buf,
            &core.signals,
            me,
            scratch,
        );
        return execute(core, me, prog, id, exec);
    }
    let chunk = comm.options().direct_chunk_bytes;
    direct::broadcast(
        core,
        me,
        (program, prog),
        id,
        chunk,
        (&mut links, scratch),
        buf,
    )
}

/// Rank `me`'s part of a one-block program whose stream `header ‖ buf` is at most [`SLIP`]
/// lines, in call `id`: receive every line from the parent, if any, then send them all to each
/// child in program order. The executor does the same for such a block — its receiver waits
/// for a block's last line before reading when that line is at most `SLIP` ahead — so this
/// path keeps the schedule's behaviour and skips the executor's set-up and its per-poll pass
/// over every edge, which were most of a small broadcast's cost.
#[inline(always)]
fn small_block(
    core: &Core,
    me: usize,
    prog: &RankProgram,
    id: (u64, u64),
    links: &mut CommLinks<'_>,
    buf: &mut [u8],
) -> Result<(), CollectiveError> {
    let lines = 0..stream_lines(buf.len());
    if let Some((from, _)) = prog.incoming.first() {
        let from = *from as usize;
        let rx = links.receiver(0, from as u32);
        recv_lines(core, me, from, id, rx, buf, lines.clone())?;
    }
    for &(to, _) in &prog.sends {
        let to = to as usize;
        send_lines(
            core,
            me,
            to,
            id,
            links.sender(to as u32),
            buf,
            lines.clone(),
        )?;
    }
    Ok(())
}

/// Rank `me` sends lines `lines` of the stream `header ‖ buf` of call `id` on `tx` (to `to`),
/// waiting for room when the ring is full, and wakes `to`.
fn send_lines(
    core: &Core,
    me: usize,
    to: usize,
    id: (u64, u64),
    tx: &mut Sender,
    buf: &[u8],
    lines: std::ops::Range<usize>,
) -> Result<(), CollectiveError> {
    for k in lines {
        send_line(core, me, to, id, tx, |p| fill_line(k, id.1, buf, p))?;
    }
    core.signals[to].notify();
    Ok(())
}

/// Rank `me` sends the line `fill` writes on `tx` (to `to`) in call `id`, waking `to` and
/// waiting if the ring is full (without waking `to` after it).
#[inline(always)]
pub(super) fn send_line(
    core: &Core,
    me: usize,
    to: usize,
    id: (u64, u64),
    tx: &mut Sender,
    fill: impl Fn(&mut [u8; Line::PAYLOAD]),
) -> Result<(), CollectiveError> {
    if tx.try_send_with(&fill).is_err() {
        core.signals[to].notify();
        send_wait(core, me, to, id, tx, &fill)?;
    }
    Ok(())
}

/// Rank `me` reads the next line from `from` on `rx` with `read` in call `id`, waking `from`
/// and waiting if the ring is empty (without waking `from` after it).
#[inline(always)]
pub(super) fn recv_line<R>(
    core: &Core,
    me: usize,
    from: usize,
    id: (u64, u64),
    rx: &mut Receiver,
    mut read: impl FnMut(&[u8; Line::PAYLOAD]) -> R,
) -> Result<R, CollectiveError> {
    match rx.try_recv_with(&mut read) {
        Ok(got) => Ok(got),
        Err(_) => {
            core.signals[from].notify();
            recv_wait(core, me, from, id, rx, read)
        }
    }
}

/// Rank `me` receives lines `lines` of the stream `header ‖ buf` of call `id` on `rx` (from
/// `from`), waiting for each, and wakes `from` (room in its ring). Line 0's header must be the
/// call's; its payload is stored only under that header, so a mismatched stream leaves `buf`
/// as it was.
fn recv_lines(
    core: &Core,
    me: usize,
    from: usize,
    id: (u64, u64),
    rx: &mut Receiver,
    buf: &mut [u8],
    lines: std::ops::Range<usize>,
) -> Result<(), CollectiveError> {
    for k in lines {
        let read = |p: &[u8; Line::PAYLOAD], buf: &mut [u8]| {
            let header = u64::from_le_bytes(p[..8].try_into().expect("8 bytes"));
            if k > 0 || header == id.1 {
                store_line(k, p, buf);
            }
            header
        };
        let got = recv_line(core, me, from, id, rx, |p| read(p, buf))?;
        if k == 0 && got != id.1 {
            return Err(core.mismatch(me, from, id.1, got));
        }
    }
    core.signals[from].notify();
    Ok(())
}

impl<'c> CommRank<'c> {
    /// Sends lines `lines` of the stream `header ‖ buf` to `to` in call `id`.
    pub(crate) fn send_stream(
        &mut self,
        to: usize,
        id: (u64, u64),
        buf: &[u8],
        lines: std::ops::Range<usize>,
    ) -> Result<(), CollectiveError> {
        let (comm, me) = (self.comm, self.rank);
        let tx = self.out[to].get_or_insert_with(|| comm.take_sender(me, to));
        send_lines(comm.core(), me, to, id, tx, buf, lines)
    }

    /// Receives lines `lines` of the stream `header ‖ buf` from `from` in call `id`; line 0's
    /// header must be the call's.
    pub(crate) fn recv_stream(
        &mut self,
        from: usize,
        id: (u64, u64),
        buf: &mut [u8],
        lines: std::ops::Range<usize>,
    ) -> Result<(), CollectiveError> {
        let (comm, me) = (self.comm, self.rank);
        let rx = self.inc[from].get_or_insert_with(|| comm.take_receiver(from, me));
        recv_lines(comm.core(), me, from, id, rx, buf, lines)
    }

    /// Sends a plain-old-data value to `to` in call `id`.
    pub(crate) fn send_value<T: Pod>(
        &mut self,
        to: usize,
        id: (u64, u64),
        v: &T,
    ) -> Result<(), CollectiveError> {
        let bytes = bytemuck::bytes_of(v);
        self.send_stream(to, id, bytes, 0..stream_lines(bytes.len()))
    }

    /// Receives a plain-old-data value from `from` in call `id`.
    pub(crate) fn recv_value<T: Pod>(
        &mut self,
        from: usize,
        id: (u64, u64),
    ) -> Result<T, CollectiveError> {
        let mut v = T::zeroed();
        let bytes = bytemuck::bytes_of_mut(&mut v);
        let n = stream_lines(bytes.len());
        self.recv_stream(from, id, bytes, 0..n)?;
        Ok(v)
    }
}

impl std::fmt::Debug for CommRank<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommRank")
            .field("rank", &self.rank)
            .field("size", &self.comm.size())
            .field("calls", &self.seq)
            .finish_non_exhaustive()
    }
}

impl Drop for CommRank<'_> {
    fn drop(&mut self) {
        self.comm.core().depart(self.rank, self.seq);
        if self.rank == 0 {
            // Rank 0 holds the timed classes' regimes (the others follow its ways).
            self.comm.keep_chooser(&self.chooser);
        }
    }
}

/// The peers of `prog`'s rank: whom it hears from and whom it sends to.
fn peers(prog: &RankProgram) -> impl Iterator<Item = usize> + '_ {
    let from = prog.incoming.iter().map(|(f, _)| *f as usize);
    from.chain(prog.sends.iter().map(|s| s.0 as usize))
}

/// The executor's wait hook for rank `me` in call `id`: the poison flag, and each peer's
/// published call (a mismatch) and presence (a departure).
pub(crate) fn hook<'a>(
    core: &'a Core,
    me: usize,
    prog: &'a RankProgram,
    id: (u64, u64),
) -> impl FnMut() -> Option<CollectiveError> + 'a {
    move || {
        core.poison_error()
            .or_else(|| peers(prog).find_map(|p| core.check_peer(me, p, id)))
    }
}

/// Maps why an execution stopped to the error of rank `me` in call `id`.
pub(crate) fn stopped(
    core: &Core,
    me: usize,
    id: (u64, u64),
    stop: Stop<CollectiveError>,
) -> CollectiveError {
    match stop {
        Stop::Hook(e) => e,
        Stop::Header(from, found) => core.mismatch(me, from as usize, id.1, found),
        Stop::Gone(peer) => core.departed(me, peer as usize),
        Stop::Stopped => core.poison_error().unwrap_or(CollectiveError::Aborted),
    }
}

/// Runs `exec` (rank `me`'s part of a program in call `id`) to its end.
pub(crate) fn execute<L: Links>(
    core: &Core,
    me: usize,
    prog: &RankProgram,
    id: (u64, u64),
    mut exec: Exec<'_, L>,
) -> Result<(), CollectiveError> {
    exec.run(hook(core, me, prog, id))
        .map_err(|stop| stopped(core, me, id, stop))
}

/// Waits for room in `tx` (to `to`) and sends the line `fill` writes.
#[cold]
fn send_wait(
    core: &Core,
    me: usize,
    to: usize,
    id: (u64, u64),
    tx: &mut Sender,
    fill: &impl Fn(&mut [u8; Line::PAYLOAD]),
) -> Result<(), CollectiveError> {
    let mut polls = Polls::default();
    core.signals[me].wait_phased_or(|phase| {
        match tx.try_send_with(fill) {
            Ok(()) => return Some(Ok(())),
            Err(TrySendWithError::Disconnected) => return Some(Err(core.departed(me, to))),
            Err(TrySendWithError::Full) => {}
        }
        core.wait_stop(&mut polls, phase, me, to, id).map(Err)
    })?
}

/// Waits for a line from `from` and reads it with `read`.
#[cold]
fn recv_wait<R>(
    core: &Core,
    me: usize,
    from: usize,
    id: (u64, u64),
    rx: &mut Receiver,
    mut read: impl FnMut(&[u8; Line::PAYLOAD]) -> R,
) -> Result<R, CollectiveError> {
    let mut polls = Polls::default();
    core.signals[me].wait_phased_or(|phase| match rx.try_recv_with(&mut read) {
        Ok(r) => Some(Ok(r)),
        Err(TryRecvError::Disconnected) => Some(Err(core.departed(me, from))),
        Err(TryRecvError::Empty) => core.wait_stop(&mut polls, phase, me, from, id).map(Err),
    })?
}
