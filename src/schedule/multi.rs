//! Postal multi-message broadcast (Bar-Noy & Kipnis §4): REPEAT, PACK, PIPELINE-1/2, and a
//! greedy schedule on the exact model. (Being written: issue 3.)

use super::{Algorithm, Schedule, ScheduleError};
use crate::model::{Model, Postal};

/// REPEAT, PACK or PIPELINE for `m` blocks, root 0.
pub(super) fn generate(
    algorithm: Algorithm,
    _n: u32,
    _m: u32,
    _postal: &Postal,
) -> Result<Schedule, ScheduleError> {
    Err(ScheduleError::NotApplicable {
        algorithm: algorithm.to_string(),
        why: "not implemented yet".into(),
    })
}

/// The greedy multi-block schedule, root 0.
pub(super) fn greedy(_n: u32, _m: u32, _model: &Model) -> Result<Schedule, ScheduleError> {
    Err(ScheduleError::NotApplicable {
        algorithm: "greedy".into(),
        why: "not implemented yet".into(),
    })
}
