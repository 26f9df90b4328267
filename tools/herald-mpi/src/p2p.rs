//! Nonblocking point-to-point on borrowed byte slices: with `post` (the shared window), the only
//! module with `unsafe`.
//!
//! rsmpi ties every request to a scope and keeps its buffer borrowed until the scope ends, so a
//! rank cannot receive a block and then forward the same bytes while its other receives are
//! still pending. herald's executors need exactly that, so this module wraps the raw MPI handles
//! itself, with a safe interface:
//!
//! * [`Channel`]: a duplicate of the world communicator, reserved for herald's messages (they
//!   cannot match a user's), whose errors return codes instead of aborting. Holding one proves
//!   MPI was initialized with at least `MPI_THREAD_SERIALIZED`, which is what makes it `Send`:
//!   the hierarchical runtime hands it to the worker thread that leads a node.
//! * [`RecvReq`] owns the `&mut [u8]` it receives into and hands it back when the message has
//!   arrived ([`RecvReq::wait`]), so the bytes can be forwarded while other requests run.
//! * [`SendReq`] holds the `&[u8]` it sends from until it completes.
//!
//! A request is completed by polling `MPI_Test` (spinning a little, then yielding the CPU between
//! polls: ranks may outnumber CPUs) until a deadline; a rank's sends that complete together (a
//! tree node's block to its children, the pieces of one message) are polled with one
//! `MPI_Testall` ([`SendReq::wait_all`], [`Channel::send_each`]); past it the wait fails with
//! [`P2pErrorKind::Timeout`] naming the peer — a rank that died or stopped answering never makes
//! another rank hang silently. A request dropped before it completed is cancelled (receives) or
//! waited for (sends) within the same deadline; if even that fails, the process is ended with
//! `MPI_Abort`, since MPI might still write into, or read from, a buffer Rust is about to free.
//!
//! A channel may cut a peer's messages into [`Pieces`] (set from the profile, where
//! `herald-mpi calibrate` measured that pieces beat one message: just above an MPI library's
//! eager limit). Both ends of a message must cut it alike, so every rank sets the same pieces
//! from the same profile; a mismatch fails as a truncation or a [`P2pErrorKind::Length`], never
//! silently.

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::marker::PhantomData;
use std::os::raw::{c_int, c_void};
use std::time::{Duration, Instant};

/// An error of a point-to-point operation: what went wrong is its [`kind`](Self::kind).
///
/// One pointer wide, so that the results of the operations every message makes (`Result<(),
/// P2pError>`, `Result<usize, P2pError>`) travel in registers: with the kind inline (56 bytes),
/// each `?` on a message's path copied the whole result through the stack, and those copies
/// stalled on the stores that had just written it (store-to-load forwarding fails for a 16-byte
/// load of a result written piecewise).
///
/// ```
/// use herald_mpi::{P2pError, P2pErrorKind};
/// let e = P2pError::from(P2pErrorKind::Length { peer: 1, got: 8, want: 16 });
/// assert!(matches!(e.kind(), P2pErrorKind::Length { got: 8, .. }));
/// assert_eq!(std::mem::size_of::<Result<(), P2pError>>(), std::mem::size_of::<usize>());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(transparent)]
pub struct P2pError(Box<P2pErrorKind>);

impl P2pError {
    /// What went wrong.
    pub fn kind(&self) -> &P2pErrorKind {
        &self.0
    }
}

impl From<P2pErrorKind> for P2pError {
    #[cold]
    fn from(kind: P2pErrorKind) -> P2pError {
        P2pError(Box::new(kind))
    }
}

/// What went wrong in a point-to-point operation ([`P2pError::kind`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum P2pErrorKind {
    /// An MPI call returned an error code.
    #[error("{call} failed with MPI error {code}: {text}")]
    Mpi {
        /// The MPI function.
        call: &'static str,
        /// Its return code.
        code: i32,
        /// `MPI_Error_string` of the code.
        text: String,
    },
    /// A request did not complete within the deadline.
    #[error("waited {secs} s for {waiting}: a rank died, stopped, or made a different call")]
    Timeout {
        /// What was awaited (`a message from rank 3`, `the other ranks in a barrier`).
        waiting: String,
        /// The deadline in seconds.
        secs: u64,
    },
    /// Another rank gave up (a timeout or a failure of its own) and told this one.
    #[error("stopped while waiting for {waiting}: rank {from} reported: {reason}")]
    Stopped {
        /// What this rank was waiting for.
        waiting: String,
        /// The rank that gave up.
        from: usize,
        /// Its reason.
        reason: String,
    },
    /// A message arrived with another length than expected.
    #[error(
        "rank {peer} sent {got} bytes where {want} were expected: ranks called with different sizes"
    )]
    Length {
        /// The sender.
        peer: usize,
        /// Bytes received.
        got: usize,
        /// Bytes expected.
        want: usize,
    },
    /// A peer outside the communicator, or a message too long for MPI's `int` count.
    #[error("invalid point-to-point operation: {0}")]
    Invalid(String),
}

/// The text of an MPI error code.
fn error_text(code: c_int) -> String {
    let mut buf = vec![0u8; 512];
    let mut len: c_int = 0;
    // SAFETY: `buf` has room for MPI_MAX_ERROR_STRING (at most 512 in Open MPI and MPICH)
    // characters; MPI writes at most that many and stores the length in `len`.
    let rc = unsafe { ffi::MPI_Error_string(code, buf.as_mut_ptr().cast(), &mut len) };
    if rc != 0 {
        return format!("error code {code}");
    }
    buf.truncate(usize::try_from(len).unwrap_or(0).min(512));
    String::from_utf8_lossy(&buf).trim().to_owned()
}

/// `Ok` for `MPI_SUCCESS`, else the error.
#[inline]
pub(crate) fn check(call: &'static str, code: c_int) -> Result<(), P2pError> {
    if code == 0 {
        Ok(())
    } else {
        Err(mpi_error(call, code))
    }
}

/// The error of MPI call `call` that returned `code` (out of line: only failures build it).
#[cold]
#[inline(never)]
fn mpi_error(call: &'static str, code: c_int) -> P2pError {
    P2pErrorKind::Mpi {
        call,
        code,
        text: error_text(code),
    }
    .into()
}

/// How a channel cuts the messages it exchanges with one peer: a message of more than `piece`
/// and at most `upto` bytes goes as `⌈len / piece⌉` pieces of nearly equal length (same tag, in
/// order; MPI does not let messages of one sender and tag overtake each other), any other as
/// one message.
///
/// ```
/// use herald_mpi::Pieces;
/// let p = Pieces::new(4000, 16_000).unwrap();
/// assert_eq!(p.ranges(4000).count(), 1);
/// assert_eq!(p.ranges(4096).collect::<Vec<_>>(), [0..2048, 2048..4096]);
/// assert_eq!(p.ranges(16_001).count(), 1);
/// assert!(Pieces::new(4000, 4000).is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pieces {
    piece: usize,
    upto: usize,
}

impl Pieces {
    /// Pieces of at most `piece` bytes for messages of `piece + 1 ..= upto` bytes; `None`
    /// unless `0 < piece < upto`.
    pub fn new(piece: usize, upto: usize) -> Option<Pieces> {
        (piece > 0 && upto > piece).then_some(Pieces { piece, upto })
    }

    /// The cutting a profile's level records ([`herald::model::MessagePieces`]); `None` where
    /// it cuts nothing.
    pub fn of(m: &herald::model::MessagePieces) -> Option<Pieces> {
        Pieces::new(
            usize::try_from(m.piece_bytes).ok()?,
            usize::try_from(m.upto_bytes).ok()?,
        )
    }

    /// The largest piece, bytes.
    pub fn piece(&self) -> usize {
        self.piece
    }

    /// The longest message cut, bytes.
    pub fn upto(&self) -> usize {
        self.upto
    }

    /// How many pieces a message of `len` bytes goes in.
    pub fn count(&self, len: usize) -> usize {
        if len > self.piece && len <= self.upto {
            len.div_ceil(self.piece)
        } else {
            1
        }
    }

    /// The byte ranges of a message of `len` bytes, in order: `count(len)` ranges of at most
    /// `piece` bytes (one range, `0..len`, for a message not cut).
    pub fn ranges(&self, len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
        let c = self.count(len);
        (0..c).map(move |i| i * len / c..(i + 1) * len / c)
    }
}

/// Polls spent spinning before a waiting rank that shares its CPU starts yielding it between
/// polls.
pub(crate) const SPIN_POLLS: u32 = 256;

/// A communicator reserved for herald's messages (see the module docs).
pub struct Channel {
    /// The stop notice posted for any sender: `(request, buffer)`; the buffer is on the heap
    /// so its address stays put while MPI may write it.
    stop: std::cell::Cell<ffi::MPI_Request>,
    stop_buf: Box<[u8; STOP_BYTES]>,
    /// Why a wait on this channel failed, once one has: later drops of unfinished requests
    /// then give up quickly and name it.
    failed: std::cell::RefCell<Option<String>>,
    comm: SimpleCommunicator,
    rank: usize,
    size: usize,
    timeout: Duration,
    /// Whether waits yield the CPU (processes outnumber the host's CPUs), as MPI libraries do
    /// when oversubscribed; otherwise they spin, as MPI libraries do on a CPU of their own.
    yields: bool,
    /// Per peer, how its messages are cut (none: one message each).
    pieces: Vec<std::cell::Cell<Option<Pieces>>>,
}

/// Tag of the stop notices (above every block tag, beside the other control tags).
pub(crate) const STOP_TAG: u16 = 32_766;
/// Bytes of a stop notice.
const STOP_BYTES: usize = 512;

// SAFETY: a `Channel` exists only when MPI was initialized with MPI_THREAD_SERIALIZED or
// MULTIPLE (`Channel::new` checks), so any thread may make MPI calls as long as no two threads
// of the process call at the same time. `Channel` is not `Sync`, so the calls made through one
// channel come from one thread at a time; herald-mpi makes no other MPI calls while a thread
// other than the main one holds it (the main thread waits inside `Team::run_with` meanwhile).
unsafe impl Send for Channel {}

impl std::fmt::Debug for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Channel")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Channel {
    /// Duplicates `world` for herald's messages; requests fail after `timeout` without progress.
    ///
    /// # Errors
    /// [`P2pErrorKind::Invalid`] if MPI provides less than `MPI_THREAD_SERIALIZED`; [`P2pErrorKind::Mpi`]
    /// if the error handler cannot be set.
    pub(crate) fn new(
        world: &SimpleCommunicator,
        timeout: Duration,
        yields: bool,
    ) -> Result<Channel, P2pError> {
        let level = mpi::environment::threading_support();
        if !matches!(level, mpi::Threading::Serialized | mpi::Threading::Multiple) {
            return Err(P2pErrorKind::Invalid(format!(
                "MPI provides thread level {level:?}; herald-mpi needs MPI_THREAD_SERIALIZED"
            ))
            .into());
        }
        let comm = crate::bounded(
            world.rank() as usize,
            timeout + crate::SLACK,
            "MPI_Comm_dup (a channel's creation)",
            || world.duplicate(),
        );
        // SAFETY: `comm` is a valid communicator (just duplicated) and MPI_ERRORS_RETURN a
        // predefined error handler.
        let rc = unsafe { ffi::MPI_Comm_set_errhandler(comm.as_raw(), ffi::RSMPI_ERRORS_RETURN) };
        check("MPI_Comm_set_errhandler", rc)?;
        let (rank, size) = (comm.rank() as usize, comm.size() as usize);
        let mut chan = Channel {
            // SAFETY: reading an MPI-provided constant handle.
            stop: std::cell::Cell::new(unsafe { ffi::RSMPI_REQUEST_NULL }),
            stop_buf: Box::new([0u8; STOP_BYTES]),
            failed: std::cell::RefCell::new(None),
            comm,
            rank,
            size,
            timeout,
            yields,
            pieces: vec![std::cell::Cell::new(None); size],
        };
        let mut req = chan.stop.get();
        // SAFETY: `stop_buf` is a heap buffer of STOP_BYTES owned by the channel, which cancels
        // and completes this receive in its `Drop` before the buffer is freed; `req` receives
        // the handle.
        let rc = unsafe {
            ffi::MPI_Irecv(
                chan.stop_buf.as_mut_ptr().cast::<c_void>(),
                STOP_BYTES as c_int,
                ffi::RSMPI_UINT8_T,
                ffi::RSMPI_ANY_SOURCE,
                c_int::from(STOP_TAG),
                chan.comm.as_raw(),
                &mut req,
            )
        };
        check("MPI_Irecv", rc)?;
        chan.stop.set(req);
        Ok(chan)
    }

    /// Whether another rank sent a stop notice (one `MPI_Test` of the posted receive): its
    /// [`P2pErrorKind::Stopped`], whose `waiting` the caller fills in.
    fn stopped(&self) -> Option<P2pErrorKind> {
        let mut req = self.stop.get();
        // SAFETY: reading an MPI-provided constant handle.
        if req == unsafe { ffi::RSMPI_REQUEST_NULL } {
            return None;
        }
        let mut flag: c_int = 0;
        let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
        // SAFETY: `req` is the channel's active stop receive; `flag` and `status` are valid.
        let rc = unsafe { ffi::MPI_Test(&mut req, &mut flag, status.as_mut_ptr()) };
        self.stop.set(req);
        if rc != 0 || flag == 0 {
            return None;
        }
        // SAFETY: MPI_Test completed the receive and wrote its status.
        let status = unsafe { status.assume_init() };
        let text = &self.stop_buf[..];
        let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        Some(P2pErrorKind::Stopped {
            waiting: String::new(),
            from: usize::try_from(status.MPI_SOURCE).unwrap_or(usize::MAX),
            reason: String::from_utf8_lossy(&text[..end]).into_owned(),
        })
    }

    /// Tells every other rank to stop, with `reason` (best effort: the notices are never waited
    /// for, since a peer may be dead; their buffer is leaked on purpose, as MPI may read it
    /// until the process ends).
    pub fn stop_all(&self, reason: &str) {
        let mut text = format!("{reason}\0").into_bytes();
        text.truncate(STOP_BYTES);
        let buf: &'static [u8] = Box::leak(text.into_boxed_slice());
        for peer in (0..self.size).filter(|&p| p != self.rank) {
            // SAFETY: reading an MPI-provided constant handle.
            let mut req = unsafe { ffi::RSMPI_REQUEST_NULL };
            // SAFETY: `buf` is leaked, so valid for reads until the process ends; the request
            // is freed below without waiting (MPI completes it or the job ends).
            let rc = unsafe {
                ffi::MPI_Isend(
                    buf.as_ptr().cast::<c_void>(),
                    buf.len() as c_int,
                    ffi::RSMPI_UINT8_T,
                    peer as c_int,
                    c_int::from(STOP_TAG),
                    self.comm.as_raw(),
                    &mut req,
                )
            };
            if rc == 0 {
                // SAFETY: `req` is an active send; MPI_Request_free lets it complete on its own.
                unsafe { ffi::MPI_Request_free(&mut req) };
            }
        }
    }

    /// Cuts the messages exchanged with `peer` into `pieces` from now on (`None`: one message
    /// each). The peer must do the same for this rank, between the same messages.
    pub fn set_pieces(&self, peer: usize, pieces: Option<Pieces>) {
        if let Some(c) = self.pieces.get(peer) {
            c.set(pieces);
        }
    }

    /// How the messages exchanged with `peer` are cut.
    #[inline]
    pub fn pieces(&self, peer: usize) -> Option<Pieces> {
        self.pieces.get(peer).and_then(std::cell::Cell::get)
    }

    /// The byte ranges a message of `len` bytes with `peer` goes in, if more than one.
    #[inline]
    fn cut(&self, peer: usize, len: usize) -> Option<Pieces> {
        self.pieces(peer).filter(|p| p.count(len) > 1)
    }

    /// The channel's communicator (a duplicate of the world's).
    pub(crate) fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of processes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Between polls past the spin phase: yields the CPU where processes outnumber the host's
    /// CPUs, else spins.
    #[inline]
    pub(crate) fn idle(&self) {
        if self.yields {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }

    /// How long a request may make no progress before it fails.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// MPI's `(peer, count)` for a message of `len` bytes with `peer`.
    #[inline]
    fn args(&self, peer: usize, len: usize) -> Result<(c_int, c_int), P2pError> {
        match c_int::try_from(len) {
            Ok(count) if peer < self.size && peer != self.rank => Ok((peer as c_int, count)),
            _ => Err(self.bad_args(peer, len)),
        }
    }

    #[cold]
    fn bad_args(&self, peer: usize, len: usize) -> P2pError {
        if peer >= self.size || peer == self.rank {
            P2pErrorKind::Invalid(format!(
                "rank {} cannot exchange messages with rank {peer} of {}",
                self.rank, self.size
            ))
            .into()
        } else {
            P2pErrorKind::Invalid(format!("a message of {len} bytes is too long")).into()
        }
    }

    /// Posts one nonblocking transfer of `len` bytes with `peer` (a receive if `recv`): checks
    /// the arguments, then `call(count, peer, comm, handle)` is the MPI call `name` that posts
    /// it, writing the request to `handle`.
    #[inline]
    fn post<'b>(
        &'b self,
        peer: usize,
        len: usize,
        recv: bool,
        name: &'static str,
        call: impl FnOnce(c_int, c_int, ffi::MPI_Comm, &mut ffi::MPI_Request) -> c_int,
    ) -> Result<RawReq<'b>, P2pError> {
        let (rank, count) = self.args(peer, len)?;
        let kind = if recv { Kind::Recv } else { Kind::Send };
        let mut req = RawReq::null(self, peer, kind);
        check(name, call(count, rank, self.comm.as_raw(), &mut req.handle))?;
        req.active = true;
        Ok(req)
    }

    /// Starts sending `buf` to `to` with `tag`.
    ///
    /// # Errors
    /// [`P2pErrorKind::Invalid`] for a bad peer or a message over 2³¹ − 1 bytes; [`P2pErrorKind::Mpi`].
    #[inline]
    pub fn isend<'b>(
        &'b self,
        buf: &'b [u8],
        to: usize,
        tag: u16,
    ) -> Result<SendReq<'b>, P2pError> {
        let Some(pieces) = self.cut(to, buf.len()) else {
            return Ok(SendReq {
                raw: self.isend_raw(buf, to, tag)?,
                more: Vec::new(),
                _buf: PhantomData,
            });
        };
        let mut ranges = pieces.ranges(buf.len());
        let first = ranges.next().unwrap_or(0..0);
        let raw = self.isend_raw(&buf[first], to, tag)?;
        let more = ranges
            .map(|r| self.isend_raw(&buf[r], to, tag))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SendReq {
            raw,
            more,
            _buf: PhantomData,
        })
    }

    /// Posts one `MPI_Isend` of `buf`.
    #[inline]
    fn isend_raw<'b>(&'b self, buf: &'b [u8], to: usize, tag: u16) -> Result<RawReq<'b>, P2pError> {
        let (ptr, tag) = (buf.as_ptr().cast::<c_void>(), c_int::from(tag));
        self.post(
            to,
            buf.len(),
            false,
            "MPI_Isend",
            |count, peer, comm, handle| {
                // SAFETY: `buf` is valid for `count` bytes and stays borrowed (unchanged,
                // alive) by the returned request until MPI reports the send complete; `handle`
                // receives the request handle.
                unsafe { ffi::MPI_Isend(ptr, count, ffi::RSMPI_UINT8_T, peer, tag, comm, handle) }
            },
        )
    }

    /// Starts receiving exactly `buf.len()` bytes from `from` with `tag`.
    ///
    /// # Errors
    /// As [`isend`](Self::isend).
    #[inline]
    pub fn irecv<'b>(
        &'b self,
        buf: &'b mut [u8],
        from: usize,
        tag: u16,
    ) -> Result<RecvReq<'b>, P2pError> {
        let len = buf.len();
        let base = buf.as_mut_ptr();
        let Some(pieces) = self.cut(from, len) else {
            return Ok(RecvReq {
                raw: self.irecv_raw(base, 0..len, from, tag)?,
                more: Vec::new(),
                buf,
            });
        };
        let mut ranges = pieces.ranges(len);
        let first = ranges.next().unwrap_or(0..len);
        let raw = self.irecv_raw(base, first, from, tag)?;
        let more = ranges
            .map(|r| {
                let want = r.len();
                self.irecv_raw(base, r, from, tag).map(|q| (q, want))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RecvReq { raw, more, buf })
    }

    /// Posts one `MPI_Irecv` into `base[range]`; `base` points to a buffer the caller holds
    /// exclusively borrowed until the returned request completes or is dropped (a [`RecvReq`]
    /// holding it, or the caller's own frame), and `range` lies inside it.
    #[inline]
    fn irecv_raw(
        &self,
        base: *mut u8,
        range: std::ops::Range<usize>,
        from: usize,
        tag: u16,
    ) -> Result<RawReq<'_>, P2pError> {
        // SAFETY: `range` lies inside the buffer `base` points to (the caller's ranges cut
        // `0..buf.len()`), so the offset stays in the same allocation.
        let ptr = unsafe { base.add(range.start) }.cast::<c_void>();
        let tag = c_int::from(tag);
        self.post(
            from,
            range.len(),
            true,
            "MPI_Irecv",
            |count, peer, comm, handle| {
                // SAFETY: `ptr` is valid for writes of `count` bytes (its range of the
                // buffer), which stays exclusively borrowed by the `RecvReq` holding this
                // request until MPI reports the receive complete (or cancelled); the ranges of
                // one buffer's requests are disjoint.
                unsafe { ffi::MPI_Irecv(ptr, count, ffi::RSMPI_UINT8_T, peer, tag, comm, handle) }
            },
        )
    }

    /// Sends `buf` to `to` and waits until the send completes.
    ///
    /// # Errors
    /// As [`isend`](Self::isend) and [`SendReq::wait`].
    #[inline]
    pub fn send(&self, buf: &[u8], to: usize, tag: u16) -> Result<(), P2pError> {
        if let Some(pieces) = self.cut(to, buf.len()) {
            let mut sent = Pending::new();
            self.post_sends(buf, to, tag, Some(pieces), &mut sent)?;
            return wait_sends(&mut sent);
        }
        // A whole message waits on its raw request here: no `SendReq` is built and moved out
        // (see `recv`).
        self.isend_raw(buf, to, tag)?.wait().map(|_| ())
    }

    /// Sends `buf` to each rank of `to` (with `tag`), all at once, and waits until every send
    /// has completed (one `MPI_Testall` per poll, see [`SendReq::wait_all`]): a tree's node
    /// sending one block to its children.
    ///
    /// # Errors
    /// As [`send`](Self::send).
    pub fn send_each(
        &self,
        buf: &[u8],
        to: impl IntoIterator<Item = usize>,
        tag: u16,
    ) -> Result<(), P2pError> {
        let mut sent = Pending::new();
        for peer in to {
            self.post_sends(buf, peer, tag, self.cut(peer, buf.len()), &mut sent)?;
        }
        wait_sends(&mut sent)
    }

    /// Receives exactly `buf.len()` bytes from `from`.
    ///
    /// # Errors
    /// As [`irecv`](Self::irecv) and [`RecvReq::wait`].
    #[inline]
    pub fn recv(&self, buf: &mut [u8], from: usize, tag: u16) -> Result<(), P2pError> {
        let want = buf.len();
        if let Some(pieces) = self.cut(from, want) {
            let mut posted = Pending::new();
            self.post_recvs(buf, from, tag, Some(pieces), &mut posted)?;
            return wait_recvs(&mut posted, want);
        }
        // A whole message waits on its raw request here. Building a `RecvReq` only to wait on
        // it cost a stall per message: the caller moved the request, just written field by
        // field, with 16-byte loads that the stores could not forward.
        let mut raw = self.irecv_raw(buf.as_mut_ptr(), 0..want, from, tag)?;
        // `buf` stays borrowed until `raw` completes (here) or is dropped (cancelled and
        // completed, below `?`).
        let got = raw.wait()?;
        raw.check_length(got, want)
    }

    /// Sends `out` to `to` and receives exactly `inbox.len()` bytes from `from` (the same tag),
    /// the receive posted first: an exchange, as `MPI_Sendrecv`, waiting for both.
    ///
    /// # Errors
    /// As [`send`](Self::send) and [`recv`](Self::recv).
    #[inline]
    pub fn sendrecv(
        &self,
        out: &[u8],
        to: usize,
        inbox: &mut [u8],
        from: usize,
        tag: u16,
    ) -> Result<(), P2pError> {
        let want = inbox.len();
        let cuts = (self.cut(from, want), self.cut(to, out.len()));
        if cuts != (None, None) {
            let (mut posted, mut sent) = (Pending::new(), Pending::new());
            self.post_recvs(inbox, from, tag, cuts.0, &mut posted)?;
            self.post_sends(out, to, tag, cuts.1, &mut sent)?;
            wait_recvs(&mut posted, want)?;
            return wait_sends(&mut sent);
        }
        // As in `recv`: raw requests, waited for in place. `inbox` stays borrowed until `posted`
        // completes or is dropped (cancelled and completed).
        let mut posted = self.irecv_raw(inbox.as_mut_ptr(), 0..want, from, tag)?;
        let mut sent = self.isend_raw(out, to, tag)?;
        let got = posted.wait()?;
        posted.check_length(got, want)?;
        sent.wait().map(|_| ())
    }

    /// Posts the receives of `buf` from `from`, whole or cut into `pieces`, in order, into
    /// `posted` (each with its length). `buf` stays borrowed as long as `posted` holds them.
    fn post_recvs<'b>(
        &'b self,
        buf: &'b mut [u8],
        from: usize,
        tag: u16,
        pieces: Option<Pieces>,
        posted: &mut Pending<'b>,
    ) -> Result<(), P2pError> {
        let (len, base) = (buf.len(), buf.as_mut_ptr());
        match pieces {
            None => posted.push((self.irecv_raw(base, 0..len, from, tag)?, len)),
            Some(p) => {
                for r in p.ranges(len) {
                    let n = r.len();
                    posted.push((self.irecv_raw(base, r, from, tag)?, n));
                }
            }
        }
        Ok(())
    }

    /// Posts the sends of `buf` to `to`, whole or cut into `pieces`, in order, into `sent`.
    /// `buf` stays borrowed as long as `sent` holds them.
    fn post_sends<'b>(
        &'b self,
        buf: &'b [u8],
        to: usize,
        tag: u16,
        pieces: Option<Pieces>,
        sent: &mut Pending<'b>,
    ) -> Result<(), P2pError> {
        match pieces {
            None => sent.push((self.isend_raw(buf, to, tag)?, buf.len())),
            Some(p) => {
                for r in p.ranges(buf.len()) {
                    let n = r.len();
                    sent.push((self.isend_raw(&buf[r], to, tag)?, n));
                }
            }
        }
        Ok(())
    }

    /// A barrier whose waiting sleeps instead of spinning (`MPI_Ibarrier` polled every `nap`,
    /// from the first poll), for ranks that must stay off the CPUs while others measure.
    ///
    /// No spin phase: with the other waits' 256 polls first, three such ranks beside four
    /// threads that yield as they wait took turns with them for much of a 2 ms round (each
    /// poll a turn), and the threads' barrier-then-allreduce measured 6.9–9.3 µs against
    /// 3.2–5.0 without the polls (docs/mpi.md, "Forty-fifth session").
    ///
    /// # Errors
    /// [`P2pErrorKind::Mpi`], or [`P2pErrorKind::Timeout`] after the channel's timeout.
    pub fn quiet_barrier(&self, nap: Duration) -> Result<(), P2pError> {
        self.ibarrier()?.poll_quiet(|| std::thread::sleep(nap))
    }

    /// A barrier among the channel's processes (`MPI_Ibarrier`, polled like every wait here).
    ///
    /// # Errors
    /// [`P2pErrorKind::Mpi`], or [`P2pErrorKind::Timeout`] after the channel's timeout.
    pub fn barrier(&self) -> Result<(), P2pError> {
        self.ibarrier()?.wait().map(|_| ())
    }

    fn ibarrier(&self) -> Result<RawReq<'_>, P2pError> {
        let mut req = RawReq::null(self, self.rank, Kind::Barrier);
        // SAFETY: the communicator is valid; `req.handle` receives the request handle.
        let rc = unsafe { ffi::MPI_Ibarrier(self.comm.as_raw(), &mut req.handle) };
        check("MPI_Ibarrier", rc)?;
        req.active = true;
        Ok(req)
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        let mut req = self.stop.get();
        // SAFETY: reading an MPI-provided constant handle.
        if req == unsafe { ffi::RSMPI_REQUEST_NULL } {
            return;
        }
        // SAFETY: `req` is the active stop receive into `stop_buf`; cancelling a receive is
        // allowed and is completed by the wait below.
        unsafe { ffi::MPI_Cancel(&mut req) };
        // SAFETY: completes the cancelled (or arrived) receive before `stop_buf` and the
        // communicator go away.
        unsafe { ffi::MPI_Wait(&mut req, ffi::RSMPI_STATUS_IGNORE) };
    }
}

/// Ends every process of the job (`MPI_Abort` on `MPI_COMM_WORLD`): for a failure no rank can
/// report to the others, such as a panic. Does nothing useful before MPI is initialized.
pub fn abort_world(code: i32) -> ! {
    // SAFETY: MPI_COMM_WORLD is a predefined communicator; MPI_Abort may be called from any
    // thread once MPI is initialized, and does not return.
    unsafe {
        ffi::MPI_Abort(ffi::RSMPI_COMM_WORLD, code);
    }
    std::process::abort()
}

/// What a request is, for its wait and its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A send (waited for when dropped unfinished).
    Send,
    /// A receive (cancelled when dropped unfinished; its count is checked).
    Recv,
    /// A nonblocking barrier.
    Barrier,
}

/// A raw request handle and what its wait needs to know. Kept small (24 bytes, was 48 with a
/// `&str` and a `usize` peer): every message moves its request into and out of the executors'
/// per-call lists.
struct RawReq<'c> {
    handle: ffi::MPI_Request,
    /// Whether MPI still owns the request (started and not completed).
    active: bool,
    kind: Kind,
    peer: u32,
    chan: &'c Channel,
}

const _: () = assert!(std::mem::size_of::<RawReq<'static>>() <= 24);

impl<'c> RawReq<'c> {
    fn null(chan: &'c Channel, peer: usize, kind: Kind) -> RawReq<'c> {
        RawReq {
            // SAFETY: reading an MPI-provided constant handle.
            handle: unsafe { ffi::RSMPI_REQUEST_NULL },
            active: false,
            kind,
            // a peer is a rank of the channel, below its size (an MPI `int`)
            peer: u32::try_from(peer).unwrap_or(u32::MAX),
            chan,
        }
    }

    /// The peer's rank.
    fn peer(&self) -> usize {
        self.peer as usize
    }

    /// `Ok` if a completed receive got `got` bytes where `want` were expected.
    #[inline]
    fn check_length(&self, got: usize, want: usize) -> Result<(), P2pError> {
        if got == want {
            Ok(())
        } else {
            Err(P2pErrorKind::Length {
                peer: self.peer(),
                got,
                want,
            }
            .into())
        }
    }

    /// One `MPI_Test`: `Some(count of bytes)` once complete.
    #[inline]
    fn test(&mut self) -> Result<Option<usize>, P2pError> {
        if !self.active {
            return Ok(Some(0));
        }
        let mut flag: c_int = 0;
        let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
        // SAFETY: `handle` is an active request of this process; `flag` and `status` are valid
        // for writes. On completion MPI frees the request and sets `handle` to MPI_REQUEST_NULL.
        let rc = unsafe { ffi::MPI_Test(&mut self.handle, &mut flag, status.as_mut_ptr()) };
        if rc != 0 {
            self.active = false; // an erroneous request is no longer MPI's (MPI 3.1 §8.3)
            return Err(mpi_error("MPI_Test", rc));
        }
        if flag == 0 {
            return Ok(None);
        }
        self.active = false;
        if self.kind != Kind::Recv {
            return Ok(Some(0));
        }
        let mut count: c_int = 0;
        // SAFETY: MPI_Test completed the receive and wrote its status, a receive of
        // MPI_UINT8_T elements; `count` is valid for writes.
        let rc = unsafe { ffi::MPI_Get_count(status.as_ptr(), ffi::RSMPI_UINT8_T, &mut count) };
        if rc != 0 {
            return Err(mpi_error("MPI_Get_count", rc));
        }
        Ok(Some(usize::try_from(count).unwrap_or(0)))
    }

    /// Polls until complete: spins first, then calls `idle` between polls; fails after the
    /// channel's timeout.
    fn poll_count(&mut self, idle: impl FnMut()) -> Result<usize, P2pError> {
        let (chan, kind, peer) = (self.chan, self.kind, self.peer);
        poll_until(chan, || self.test(), idle, || describe(kind, peer))
    }

    /// What the request waits for, in words.
    fn describe(&self) -> String {
        describe(self.kind, self.peer)
    }

    /// Polls until complete, calling `idle` between polls from the first (no spin phase);
    /// fails after the channel's timeout.
    fn poll_quiet(&mut self, idle: impl FnMut()) -> Result<(), P2pError> {
        let (chan, kind, peer) = (self.chan, self.kind, self.peer);
        poll_spinning(chan, 0, || self.test(), idle, || describe(kind, peer)).map(|_| ())
    }

    /// Waits until the request completes: one test inline (most messages a rank waits for
    /// have arrived by then), the polling loop out of line.
    #[inline]
    fn wait(&mut self) -> Result<usize, P2pError> {
        match self.test() {
            Ok(Some(count)) => Ok(count),
            Ok(None) => self.wait_polling(),
            Err(e) => Err(self.failed(e)),
        }
    }

    /// The rest of [`wait`](Self::wait): polls until the request completes or fails.
    #[inline(never)]
    fn wait_polling(&mut self) -> Result<usize, P2pError> {
        let chan = self.chan;
        self.poll_count(|| chan.idle()).map_err(|e| self.failed(e))
    }

    /// Records that a wait on the channel failed with `e` (the first failure is kept: later
    /// drops of unfinished requests name it), and returns `e`.
    #[cold]
    fn failed(&self, e: P2pError) -> P2pError {
        self.chan
            .failed
            .borrow_mut()
            .get_or_insert_with(|| e.to_string());
        e
    }
}

impl Drop for RawReq<'_> {
    #[inline]
    fn drop(&mut self) {
        if self.active {
            self.drop_active();
        }
    }
}

impl RawReq<'_> {
    /// Dropping a request MPI still owns: see [`RawReq`]'s `Drop`.
    #[cold]
    fn drop_active(&mut self) {
        if self.kind == Kind::Recv {
            // SAFETY: `handle` is an active receive of this process; cancelling it is allowed
            // and is followed by a completing wait below.
            unsafe { ffi::MPI_Cancel(&mut self.handle) };
        }
        // After a failure elsewhere on the channel, give the request a moment only.
        let failed = self.chan.failed.borrow().clone();
        let done = match &failed {
            None => self.wait().is_ok(),
            Some(_) => {
                let start = Instant::now();
                loop {
                    match self.test() {
                        Ok(Some(_)) => break true,
                        Err(_) => break false,
                        Ok(None) if start.elapsed() > Duration::from_millis(500) => break false,
                        Ok(None) => std::thread::yield_now(),
                    }
                }
            }
        };
        if !done {
            // MPI may still read or write the request's buffer, which Rust is about to free.
            let why = failed.or_else(|| self.chan.failed.borrow().clone());
            herald_cli_common::say(&format!(
                "herald-mpi: rank {}: {}; {} cannot be completed: aborting the job (MPI_Abort)",
                self.chan.rank,
                why.unwrap_or_else(|| "a request failed".into()),
                self.describe()
            ));
            std::thread::sleep(Duration::from_millis(300));
            self.chan.comm.abort(1);
        }
    }
}

/// The raw requests of one message cut into pieces, in order, each with its length (on the
/// stack for up to 16 pieces: a profile cuts messages of at most 64 KiB into pieces of at least
/// 4 KiB). Waited for in place by [`Channel::send`], [`Channel::recv`] and
/// [`Channel::sendrecv`], which need no [`SendReq`] or [`RecvReq`] (whose lists of further
/// pieces were a heap allocation per message).
type Pending<'b> = smallvec::SmallVec<[(RawReq<'b>, usize); 16]>;

/// What a request of `kind` with `peer` waits for, in words.
fn describe(kind: Kind, peer: u32) -> String {
    match kind {
        Kind::Barrier => "the other ranks in a barrier".to_owned(),
        Kind::Recv => format!("a message from rank {peer}"),
        Kind::Send => format!("a message to rank {peer}"),
    }
}

/// Calls `test` until it gives a value: spins first, then calls `idle` between tests; fails
/// when another rank sent a stop notice (checked every 64 tests), or after the channel's
/// timeout (the clock is read only once a wait has lasted 1024 tests: most waits end within a
/// few, and reading it costs as much as a test, so the deadline runs from there). `waiting`
/// says what the wait was for, in its errors.
#[inline]
pub(crate) fn poll_until<T>(
    chan: &Channel,
    test: impl FnMut() -> Result<Option<T>, P2pError>,
    idle: impl FnMut(),
    waiting: impl Fn() -> String,
) -> Result<T, P2pError> {
    poll_spinning(chan, SPIN_POLLS, test, idle, waiting)
}

/// [`poll_until`], calling `idle` only after `spins` polls (spinning before them).
pub(crate) fn poll_spinning<T>(
    chan: &Channel,
    spins: u32,
    mut test: impl FnMut() -> Result<Option<T>, P2pError>,
    mut idle: impl FnMut(),
    waiting: impl Fn() -> String,
) -> Result<T, P2pError> {
    let mut start: Option<Instant> = None;
    let mut polls = 0u32;
    loop {
        if let Some(v) = test()? {
            return Ok(v);
        }
        polls = polls.wrapping_add(1);
        if polls > spins {
            idle();
        } else {
            std::hint::spin_loop();
        }
        if polls % 64 == 0 {
            if let Some(mut e) = chan.stopped() {
                if let P2pErrorKind::Stopped { waiting: w, .. } = &mut e {
                    *w = waiting();
                }
                return Err(e.into());
            }
        }
        if polls % 1024 == 0 && start.get_or_insert_with(Instant::now).elapsed() > chan.timeout {
            let e = P2pErrorKind::Timeout {
                waiting: waiting(),
                secs: chan.timeout.as_secs(),
            };
            chan.stop_all(&e.to_string());
            return Err(e.into());
        }
    }
}

/// Waits for the receives of one message, in order (see [`wait_in_order`]).
fn wait_recvs(posted: &mut Pending<'_>, want: usize) -> Result<(), P2pError> {
    wait_in_order(posted.iter_mut().map(|(r, len)| (r, *len)), want)
}

/// Waits for the pieces of one message of `want` bytes, in order, each with the length it was
/// posted for: a piece shorter than that ends the wait with [`P2pErrorKind::Length`] (the later
/// pieces are cancelled when their requests are dropped).
fn wait_in_order<'r, 'c: 'r>(
    pieces: impl Iterator<Item = (&'r mut RawReq<'c>, usize)>,
    want: usize,
) -> Result<(), P2pError> {
    let mut got = 0;
    for (r, len) in pieces {
        let count = r.wait()?;
        got += count;
        if count != len {
            return Err(P2pErrorKind::Length {
                peer: r.peer(),
                got,
                want,
            }
            .into());
        }
    }
    Ok(())
}

/// Waits for the sends in `sent` (the pieces of one message, or one message to each of several
/// ranks): all of them together, with one `MPI_Testall` per poll.
///
/// Waiting for them one by one cost a `MPI_Test` each, even for a send already complete: with
/// MPICH about 470 instructions a test, against about 925 for one `MPI_Testall` of three
/// (callgrind, a 4-rank star's root; docs/mpi.md, "Twenty-seventh session").
fn wait_sends(sent: &mut Pending<'_>) -> Result<(), P2pError> {
    match sent.as_mut_slice() {
        [] => Ok(()),
        [(one, _)] => one.wait().map(|_| ()),
        many => wait_all(many),
    }
}

/// [`wait_sends`] of two or more sends.
#[inline(never)]
fn wait_all(reqs: &mut [(RawReq<'_>, usize)]) -> Result<(), P2pError> {
    let chan = reqs[0].0.chan;
    let mut handles: smallvec::SmallVec<[ffi::MPI_Request; 16]> =
        reqs.iter().map(|(r, _)| r.handle).collect();
    let count = c_int::try_from(handles.len())
        .map_err(|_| P2pError::from(P2pErrorKind::Invalid("too many requests".into())))?;
    let mut rc: c_int = 0;
    let testall = |handles: &mut [ffi::MPI_Request], rc: &mut c_int| {
        let mut flag: c_int = 0;
        // SAFETY: `handles` holds `count` request handles of this process: the active requests
        // of `reqs`, and MPI_REQUEST_NULL for those complete (which MPI_Testall allows); `flag`
        // is valid for writes; the statuses are ignored. MPI frees every request and sets its
        // handle to MPI_REQUEST_NULL once all are complete, and modifies none otherwise (MPI
        // 3.1 §3.7.5); the handles are copied back into `reqs` below.
        *rc = unsafe {
            ffi::MPI_Testall(
                count,
                handles.as_mut_ptr(),
                &mut flag,
                ffi::RSMPI_STATUSES_IGNORE,
            )
        };
        flag != 0 || *rc != 0
    };
    let out = if testall(&mut handles, &mut rc) {
        Ok(())
    } else {
        let waiting = || {
            // a message cut into pieces is one message to its rank
            let mut peers: Vec<u32> = reqs.iter().map(|(r, _)| r.peer).collect();
            peers.dedup();
            match peers.as_slice() {
                &[one] => describe(Kind::Send, one),
                many => {
                    let many: Vec<String> = many.iter().map(u32::to_string).collect();
                    format!("messages to ranks {}", many.join(", "))
                }
            }
        };
        poll_until(
            chan,
            || Ok(testall(&mut handles, &mut rc).then_some(())),
            || chan.idle(),
            waiting,
        )
    };
    // Every request MPI completed (all of them, on success) now has a null handle.
    // SAFETY: reading an MPI-provided constant handle.
    let null = unsafe { ffi::RSMPI_REQUEST_NULL };
    for ((r, _), h) in reqs.iter_mut().zip(&handles) {
        r.handle = *h;
        if *h == null {
            r.active = false;
        }
    }
    if rc != 0 {
        // One of the requests failed: waiting for the rest one by one names it (and records the
        // failure, as every failed wait does); the error of `MPI_Testall` if they all complete.
        for (r, _) in reqs.iter_mut() {
            r.wait()?;
        }
        return Err(reqs[0].0.failed(mpi_error("MPI_Testall", rc)));
    }
    out.map_err(|e| reqs[0].0.failed(e))
}

/// A send in progress; its buffer stays borrowed until [`wait`](Self::wait) (or drop).
#[must_use = "a send must be waited for"]
pub struct SendReq<'b> {
    raw: RawReq<'b>,
    /// The other pieces of a message cut into [`Pieces`], in order.
    more: Vec<RawReq<'b>>,
    _buf: PhantomData<&'b [u8]>,
}

impl std::fmt::Debug for SendReq<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendReq")
            .field("to", &self.raw.peer)
            .field("active", &self.raw.active)
            .finish()
    }
}

impl SendReq<'_> {
    /// Waits until the send completes.
    ///
    /// # Errors
    /// [`P2pErrorKind::Timeout`] after the channel's timeout, [`P2pErrorKind::Mpi`].
    pub fn wait(mut self) -> Result<(), P2pError> {
        if self.more.is_empty() {
            return self.raw.wait().map(|_| ());
        }
        // a message in pieces: all of them together, as `wait_all`
        SendReq::wait_all(std::iter::once(self))
    }

    /// Waits until every send of `reqs` has completed: together, with one `MPI_Testall` per
    /// poll, where waiting for each in turn costs a `MPI_Test` per send even when it is
    /// complete (with MPICH, about half an `MPI_Testall` of three).
    ///
    /// # Errors
    /// [`P2pErrorKind::Timeout`] after the channel's timeout, [`P2pErrorKind::Mpi`].
    pub fn wait_all<'r>(reqs: impl IntoIterator<Item = SendReq<'r>>) -> Result<(), P2pError> {
        let mut sent = Pending::new();
        for SendReq { raw, more, .. } in reqs {
            sent.push((raw, 0));
            sent.extend(more.into_iter().map(|r| (r, 0)));
        }
        wait_sends(&mut sent)
    }

    /// Whether the send has completed (one `MPI_Test` per piece not yet complete).
    ///
    /// # Errors
    /// [`P2pErrorKind::Mpi`].
    pub fn test(&mut self) -> Result<bool, P2pError> {
        let mut done = self.raw.test()?.is_some();
        for r in &mut self.more {
            done &= r.test()?.is_some();
        }
        Ok(done)
    }
}

/// A receive in progress; it owns the buffer until [`wait`](Self::wait) hands it back filled.
#[must_use = "a receive must be waited for"]
pub struct RecvReq<'b> {
    raw: RawReq<'b>,
    /// The other pieces of a message cut into [`Pieces`], in order, with their lengths.
    more: Vec<(RawReq<'b>, usize)>,
    buf: &'b mut [u8],
}

impl std::fmt::Debug for RecvReq<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecvReq")
            .field("from", &self.raw.peer)
            .field("bytes", &self.buf.len())
            .field("active", &self.raw.active)
            .finish()
    }
}

impl<'b> RecvReq<'b> {
    /// Waits until the message has arrived and returns the buffer it filled.
    ///
    /// # Errors
    /// [`P2pErrorKind::Length`] if the message was shorter than the buffer (a longer one fails in
    /// MPI as a truncation); [`P2pErrorKind::Timeout`], [`P2pErrorKind::Mpi`].
    pub fn wait(mut self) -> Result<&'b mut [u8], P2pError> {
        let want = self.buf.len();
        if self.more.is_empty() {
            let got = self.raw.wait()?;
            self.raw.check_length(got, want)?;
            return Ok(self.buf);
        }
        let first = want - self.more.iter().map(|m| m.1).sum::<usize>();
        let pieces = std::iter::once((&mut self.raw, first))
            .chain(self.more.iter_mut().map(|(r, len)| (r, *len)));
        wait_in_order(pieces, want)?;
        let RecvReq { raw, more, buf } = self;
        drop((raw, more)); // completed: dropping does nothing
        Ok(buf)
    }

    /// The peer.
    pub fn peer(&self) -> usize {
        self.raw.peer()
    }
}

#[cfg(test)]
mod tests {
    use super::Pieces;

    /// Every cut covers the message exactly once, in order, with pieces of at most `piece`
    /// bytes, as few as that allows; messages outside `piece + 1 ..= upto` stay whole.
    #[test]
    fn pieces_cover_each_message_once_in_the_fewest_pieces() {
        for piece in 1..40usize {
            for upto in piece + 1..130 {
                let p = Pieces::new(piece, upto).expect("piece < upto");
                for len in 0..150usize {
                    let ranges: Vec<_> = p.ranges(len).collect();
                    assert_eq!(ranges.len(), p.count(len));
                    assert_eq!(ranges.first().map(|r| r.start), Some(0));
                    assert_eq!(ranges.last().map(|r| r.end), Some(len));
                    assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
                    if len > piece && len <= upto {
                        // the fewest pieces of at most `piece` bytes: ⌈len / piece⌉
                        assert!(ranges.iter().all(|r| !r.is_empty() && r.len() <= piece));
                        assert!((ranges.len() - 1) * piece < len);
                    } else {
                        assert_eq!(ranges.len(), 1);
                    }
                }
            }
        }
        assert!(Pieces::new(0, 10).is_none());
        assert!(Pieces::new(10, 10).is_none());
    }
}
