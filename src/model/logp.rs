//! The LogP model (Culler et al.; broadcast by Karp, Sahay, Santos & Schauser) with LogGP's G.
//!
//! # Rules (as the checker applies them)
//!
//! Messages carry one block of `bytes` bytes; `w = (bytes − 1)·G` is the time the network
//! interface needs to inject the bytes after the first (LogGP). Under the default rule,
//! [`LongMessages::Published`] — LogGP as Alexandrov, Ionescu, Schauser & Scheiman state it, and as
//! LogGOPSim simulates it — a send from `p` to `q` starting at `t`:
//! * occupies `p`'s CPU with the send overhead during `[t, t + o)`;
//! * injects its bytes during `[t + o, t + o + w)`; they are in the network during
//!   `[t + o, t + o + w + L)` (the first byte arrives at `t + o + L`, the last at `t + o + w + L`);
//! * occupies `q`'s CPU from the first byte's arrival until the last byte is received and the
//!   receive overhead paid, `[t + o + L, t + 2o + w + L)`;
//! * makes the data available at `q` from `t + L + 2o + w`.
//!
//! Per processor: the send and receive overheads never overlap one another (one CPU); consecutive
//! send starts are at least `g + w` apart, and so are consecutive receive starts; at most
//! `max(1, ⌈L/g⌉)` messages are in transit from it, and at most as many to it, at any instant
//! (no limit when `g = 0`). The receive overhead starts exactly when the message arrives: a
//! schedule whose arrival meets a busy CPU is illegal, not delayed (every time is derived from the
//! send start alone). `L + 2o` must be positive.
//!
//! [`LongMessages::MaxGap`] is herald's former rule, kept for comparison: the gap and the
//! injection overlap (consecutive starts `max(g, w)` apart), the receiver is busy only `o` (during
//! `[t + o + w + L, t + 2o + w + L)`), and a message is in transit during `[t + o + w, t + o + w + L)`.
//! Both rules agree for one-byte messages or `G = 0`. docs/errata.md ("LogGP's long messages")
//! gives the smallest case where they differ.
//!
//! [`LongMessages::ReceiverCopies`] describes a single-copy rendezvous, as MPI libraries move
//! messages above their eager limit between processes of one host (Open MPI's `vader` and MPICH
//! with cross-memory attach: the sender posts where its bytes are, the receiver copies them). A
//! message of more than `above` bytes then occupies and spaces its receiver as under the published
//! rule (busy `o + w` from the first byte's arrival, receive starts `g + w` apart), but its sender
//! only for `o`, its sends `g` apart: the bytes are the receiver's work, so one sender's messages
//! to different receivers are copied at once. What is in transit, during `[t + o, t + o + L)`, is
//! the message's descriptor (the in-flight capacity counts those). Messages of at most `above`
//! bytes follow the published rule (the eager path copies them through a buffer at both ends).
//! Not one of the papers' rules: herald-mpi uses it where ranks share CPUs (docs/mpi.md,
//! thirteenth session, has the measurement behind it).
//!
//! Combining collectives: after receiving a partial value the CPU spends `c` combining it
//! (default 1: "local operations execute in unit time", and Karp et al. §4 count one unit per
//! addition; 0 models §5.2.1's instantaneous combining).

use super::{CostModel, ModelError, Timing};
use crate::time::{self, Ratio, TimeBase};

/// LogP with the LogGP per-byte gap.
///
/// # Examples
///
/// ```
/// use herald::{CostModel, LogP, model::Problem};
/// let m = LogP::new("6".parse()?, "2".parse()?, "4".parse()?, "0".parse()?)?;
/// let base = m.time_base()?;
/// let t = m.timing(base)?;
/// assert_eq!(t.latency, 6 + 2 * 2); // L + 2o
/// assert_eq!(t.capacity, Some(2)); // ⌈L/g⌉
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogP {
    /// Latency.
    l: Ratio,
    /// Overhead, at each end.
    o: Ratio,
    /// Gap between consecutive sends, and between consecutive receives.
    g: Ratio,
    /// Gap per byte for long messages (LogGP).
    big_g: Ratio,
    /// Bytes per message; ≥ 1.
    bytes: u64,
    /// Time to combine a received partial value.
    combine: Ratio,
    /// How long messages space and occupy (LogGP's rule or herald's former one).
    long_messages: LongMessages,
    /// Messages of more than `.0` bytes pay `.1` per byte instead of `big_g` (a transport
    /// that sends them by another protocol: [`LogP::with_whole_gap`]).
    whole: Option<(u64, Ratio)>,
}

/// How LogGP's per-byte gap `G` spaces and occupies messages of more than one byte (module docs).
///
/// # Examples
///
/// ```
/// use herald::{CostModel, LogP, Ratio, model::LongMessages};
/// // Star on 3 ranks, L = 5, o = 3, g = 2, G = 1, 8-byte messages: w = 7.
/// let m = LogP::new(Ratio::integer(5), Ratio::integer(3), Ratio::integer(2), Ratio::ONE)?
///     .with_bytes(8)?;
/// let t = m.timing(m.time_base()?)?;
/// assert_eq!((t.send_gap, t.recv_busy), (2 + 7, 3 + 7)); // g + w, o + w
/// let old = m.with_long_messages(LongMessages::MaxGap).timing(m.time_base()?)?;
/// assert_eq!((old.send_gap, old.recv_busy), (7, 3)); // max(g, w), o
/// // The receiver copies messages of more than 4 bytes: the sender's starts g apart.
/// let pull = m.with_long_messages(LongMessages::ReceiverCopies { above: 4 });
/// let t = pull.timing(m.time_base()?)?;
/// assert_eq!((t.send_gap, t.recv_gap, t.recv_busy), (2, 2 + 7, 3 + 7));
/// // Messages of at most 4 bytes go by the published rule.
/// let t = pull.with_bytes(4)?.timing(m.time_base()?)?;
/// assert_eq!((t.send_gap, t.recv_gap), (2 + 3, 2 + 3));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LongMessages {
    /// LogGP as published and as LogGOPSim simulates it: consecutive message starts of one
    /// processor at least `g + (bytes − 1)·G` apart (sends and receives alike), the receiver busy
    /// `o + (bytes − 1)·G` from the first byte's arrival.
    #[default]
    Published,
    /// herald's former rule: consecutive starts `max(g, (bytes − 1)·G)` apart, the receiver busy
    /// `o` after the last byte's arrival.
    MaxGap,
    /// A single-copy rendezvous for messages of more than `above` bytes: the receiver copies
    /// (busy `o + (bytes − 1)·G` from the first byte's arrival, receive starts
    /// `g + (bytes − 1)·G` apart), the sender's starts only `g` apart; messages of at most
    /// `above` bytes as [`Published`](Self::Published) (module docs).
    ReceiverCopies {
        /// The longest message that still goes by the published rule (an eager limit), bytes.
        above: u64,
    },
}

impl LongMessages {
    /// The rule's name on the command line (`published`, `max-gap`, `receiver-copies`; the
    /// last takes its limit as `receiver-copies:BYTES`, by default 0).
    pub fn name(self) -> &'static str {
        match self {
            LongMessages::Published => "published",
            LongMessages::MaxGap => "max-gap",
            LongMessages::ReceiverCopies { .. } => "receiver-copies",
        }
    }
}

impl std::fmt::Display for LongMessages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LongMessages::ReceiverCopies { above } => write!(f, "receiver-copies:{above}"),
            other => f.write_str(other.name()),
        }
    }
}

impl std::str::FromStr for LongMessages {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<LongMessages, ModelError> {
        match s {
            "published" | "loggp" => Ok(LongMessages::Published),
            "max-gap" | "maxgap" => Ok(LongMessages::MaxGap),
            "receiver-copies" => Ok(LongMessages::ReceiverCopies { above: 0 }),
            other => match other.strip_prefix("receiver-copies:").map(str::parse) {
                Some(Ok(above)) => Ok(LongMessages::ReceiverCopies { above }),
                _ => Err(ModelError::Parameter {
                    name: "long-messages",
                    value: other.to_owned(),
                    why: "known rules: published, max-gap, receiver-copies[:BYTES]",
                }),
            },
        }
    }
}

impl LogP {
    /// LogP with latency `l`, overhead `o`, gap `g` and per-byte gap `big_g`, one-byte messages.
    ///
    /// # Errors
    /// [`ModelError::Parameter`] if `L + 2o = 0` (information would be instantaneous).
    pub fn new(l: Ratio, o: Ratio, g: Ratio, big_g: Ratio) -> Result<LogP, ModelError> {
        if l == Ratio::ZERO && o == Ratio::ZERO {
            return Err(ModelError::Parameter {
                name: "L",
                value: l.to_string(),
                why: "L + 2o must be positive",
            });
        }
        Ok(LogP {
            l,
            o,
            g,
            big_g,
            bytes: 1,
            combine: Ratio::ONE,
            long_messages: LongMessages::Published,
            whole: None,
        })
    }

    /// The same model with messages of `bytes` bytes (LogGP: `(bytes − 1)·G` more per message).
    ///
    /// # Errors
    /// [`ModelError::Parameter`] if `bytes == 0`.
    pub fn with_bytes(self, bytes: u64) -> Result<LogP, ModelError> {
        if bytes == 0 {
            return Err(ModelError::Parameter {
                name: "bytes",
                value: "0".into(),
                why: "a message has at least one byte",
            });
        }
        Ok(LogP { bytes, ..self })
    }

    /// The same model with combining taking `c` (default 1).
    pub fn with_combine(self, c: Ratio) -> LogP {
        LogP { combine: c, ..self }
    }

    /// The same model with long messages spaced and received by `rule`.
    pub fn with_long_messages(self, rule: LongMessages) -> LogP {
        LogP {
            long_messages: rule,
            ..self
        }
    }

    /// The long-message rule.
    pub fn long_messages(&self) -> LongMessages {
        self.long_messages
    }

    /// The same model with a second per-byte gap: messages of more than `above` bytes pay
    /// `big_g` per byte after the first instead of [`LogP::big_g`]. A transport that cuts
    /// messages into eager pieces up to a limit and sends longer ones whole by a single-copy
    /// rendezvous (an MPI library on one host, [`MessagePieces`]) moves the two kinds at
    /// different speeds per byte: one slope fitted on either side prices the other side
    /// wrongly, by three times in one calibration (docs/mpi.md, "Seventy-fifth session").
    /// Every other rule (the gaps, the busy times, [`LongMessages`]) is unchanged; only `w`
    /// takes the slope of its message's size.
    ///
    /// [`MessagePieces`]: crate::model::MessagePieces
    ///
    /// ```
    /// use herald::{CostModel, LogP, Ratio};
    /// // L = 100, o = 50, g = 20, G = 1/2 per byte up to 1000 bytes, 1/10 above.
    /// let m = LogP::new(Ratio::integer(100), Ratio::integer(50), Ratio::integer(20), Ratio::new(1, 2)?)?
    ///     .with_whole_gap(1000, Ratio::new(1, 10)?);
    /// let latency = |bytes| -> Result<u64, Box<dyn std::error::Error>> {
    ///     let m = m.with_bytes(bytes)?;
    ///     Ok(m.timing(m.time_base()?)?.latency / 10) // the base is 1/10
    /// };
    /// assert_eq!(latency(1001)?, 100 + 2 * 50 + 100); // 1000 bytes after the first at 1/10
    /// assert_eq!(latency(1000)?, 100 + 2 * 50 + 999 / 2); // 999 at 1/2 (499.5, in tenths)
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_whole_gap(self, above: u64, big_g: Ratio) -> LogP {
        LogP {
            whole: Some((above, big_g)),
            ..self
        }
    }

    /// The second per-byte gap and the size above which it applies, if set
    /// ([`LogP::with_whole_gap`]).
    pub fn whole_gap(&self) -> Option<(u64, Ratio)> {
        self.whole
    }

    /// The per-byte gap this model's messages pay: the second one ([`LogP::with_whole_gap`])
    /// where it is set and the messages are longer than its limit, else `G`.
    pub fn message_big_g(&self) -> Ratio {
        match self.whole {
            Some((above, g)) if self.bytes > above => g,
            _ => self.big_g,
        }
    }

    /// Time to combine a received partial value.
    pub fn combine(&self) -> Ratio {
        self.combine
    }

    /// L.
    pub fn l(&self) -> Ratio {
        self.l
    }
    /// o.
    pub fn o(&self) -> Ratio {
        self.o
    }
    /// g.
    pub fn g(&self) -> Ratio {
        self.g
    }
    /// G.
    pub fn big_g(&self) -> Ratio {
        self.big_g
    }
    /// Bytes per message.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl CostModel for LogP {
    fn name(&self) -> &'static str {
        "logp"
    }

    fn params(&self) -> Vec<(&'static str, Ratio)> {
        let mut params = vec![
            ("L", self.l),
            ("o", self.o),
            ("g", self.g),
            ("G", self.big_g),
        ];
        if let Some((_, g)) = self.whole {
            params.push(("G_whole", g));
        }
        params
    }

    fn time_base(&self) -> Result<TimeBase, ModelError> {
        let whole = self.whole.map_or(Ratio::ZERO, |(_, g)| g);
        let ratios = [self.l, self.o, self.g, self.big_g, self.combine, whole];
        Ok(TimeBase::for_ratios(&ratios)?)
    }

    fn timing(&self, base: TimeBase) -> Result<Timing, ModelError> {
        let l = base.ticks(self.l)?;
        let o = base.ticks(self.o)?;
        let g = base.ticks(self.g)?;
        let w = time::mul(base.ticks(self.message_big_g())?, self.bytes - 1)?;
        let capacity = (g > 0).then(|| l.div_ceil(g).clamp(1, u64::from(u32::MAX)) as u32);
        let injected = time::add(o, w)?;
        let last_byte = time::add(injected, l)?; // the last byte's arrival
        let gw = time::add(g, w)?;
        let published = (gw, gw, injected, (o, last_byte));
        let (send_gap, recv_gap, recv_busy, transit) = match self.long_messages {
            LongMessages::Published => published,
            LongMessages::MaxGap => (g.max(w), g.max(w), o, (injected, last_byte)),
            // In transit: the descriptor, `[o, o + L)`; the bytes move by the receiver's copy.
            LongMessages::ReceiverCopies { above } if self.bytes > above => {
                (g, gw, injected, (o, time::add(o, l)?))
            }
            LongMessages::ReceiverCopies { .. } => published,
        };
        Ok(Timing {
            base,
            send_busy: o,
            recv_busy,
            latency: time::add(last_byte, o)?,
            send_gap,
            recv_gap,
            shared_cpu: true,
            capacity,
            transit,
            combine: base.ticks(self.combine)?,
            ports: 1,
        })
    }
}
