//! The LogP model (Culler et al.; broadcast by Karp, Sahay, Santos & Schauser) with LogGP's G.
//!
//! # Rules (as the checker applies them)
//!
//! Messages carry one block of `bytes` bytes; `w = (bytes − 1)·G` is the time the network
//! interface needs to inject the bytes after the first (LogGP). A send from `p` to `q` starting
//! at `t`:
//! * occupies `p`'s CPU with the send overhead during `[t, t + o)`;
//! * is injected during `[t + o, t + o + w)` and in transit during `[t + o + w, t + o + w + L)`;
//! * occupies `q`'s CPU with the receive overhead during `[t + o + w + L, t + 2o + w + L)`;
//! * makes the data available at `q` from `t + L + 2o + w`.
//!
//! Per processor: the send and receive overheads never overlap one another (one CPU); consecutive
//! send starts are at least `max(g, w)` apart, and so are consecutive receive starts; at most
//! `max(1, ⌈L/g⌉)` messages are in transit from it, and at most as many to it, at any instant
//! (no limit when `g = 0`). The receive overhead starts exactly when the message arrives: a
//! schedule whose arrival meets a busy CPU is illegal, not delayed (every time is derived from the
//! send start alone). `L + 2o` must be positive.
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
/// use herald::{CostModel, LogP, Problem};
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
        vec![
            ("L", self.l),
            ("o", self.o),
            ("g", self.g),
            ("G", self.big_g),
        ]
    }

    fn time_base(&self) -> Result<TimeBase, ModelError> {
        let ratios = [self.l, self.o, self.g, self.big_g, self.combine];
        Ok(TimeBase::for_ratios(&ratios)?)
    }

    fn timing(&self, base: TimeBase) -> Result<Timing, ModelError> {
        let l = base.ticks(self.l)?;
        let o = base.ticks(self.o)?;
        let g = base.ticks(self.g)?;
        let w = time::mul(base.ticks(self.big_g)?, self.bytes - 1)?;
        let in_flight_end = time::add(time::add(o, w)?, l)?;
        let capacity = (g > 0).then(|| l.div_ceil(g).clamp(1, u64::from(u32::MAX)) as u32);
        Ok(Timing {
            base,
            send_busy: o,
            recv_busy: o,
            latency: time::add(in_flight_end, o)?,
            send_gap: g.max(w),
            recv_gap: g.max(w),
            shared_cpu: true,
            capacity,
            transit: (time::add(o, w)?, in_flight_end),
            combine: base.ticks(self.combine)?,
            ports: 1,
        })
    }
}
