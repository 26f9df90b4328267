//! 1-port multi-message broadcast on generalized Fibonacci trees (Bruck, Cypher & Ho).
//! (Being written: issue 12.)

use super::{Schedule, ScheduleError};

/// `m` blocks from root 0 to `n` processors on `d` generalized Fibonacci trees.
pub(super) fn generate(_n: u32, _m: u32, _d: Option<u32>) -> Result<Schedule, ScheduleError> {
    Err(ScheduleError::NotApplicable {
        algorithm: "fibonacci".into(),
        why: "not implemented yet".into(),
    })
}
