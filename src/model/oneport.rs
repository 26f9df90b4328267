//! The 1-port round model (Bruck, Cypher & Ho): synchronous rounds of unit length.
//!
//! # Rules (as the checker applies them)
//!
//! In each round `r` (the time interval `[r, r + 1)`) a processor sends at most one block to one
//! processor and receives at most one block from one processor, simultaneously; a block received
//! in round `r` is available, and may be forwarded, from round `r + 1`. These are exactly the
//! postal rules with λ = 1 (send busy `[r, r + 1)`, receive busy `[r + λ − 1, r + λ)`), so the
//! checker applies the same [`Timing`]; times are whole rounds. The lower bound for `m` blocks is
//! `m − 1 + ⌈log2 n⌉` rounds.

use super::{CostModel, ModelError, Timing};
use crate::time::{Ratio, TimeBase};

/// The 1-port send/receive round model.
///
/// # Examples
///
/// ```
/// use herald::{CostModel, model::{OnePort, Problem}};
/// let m = OnePort;
/// let base = m.time_base()?;
/// // m − 1 + ⌈log2 n⌉: 4 blocks to 1000 processors need at least 3 + 10 rounds.
/// assert_eq!(m.broadcast_lower_bound(Problem { n: 1000, m: 4 }, base)?, 13);
/// # Ok::<(), herald::model::ModelError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OnePort;

impl CostModel for OnePort {
    fn name(&self) -> &'static str {
        "oneport"
    }

    fn params(&self) -> Vec<(&'static str, Ratio)> {
        Vec::new()
    }

    fn timing(&self, base: TimeBase) -> Result<Timing, ModelError> {
        Timing::rounds(base, 1)
    }
}
