//! Round-optimal `m − 1 + ⌈log2 n⌉` 1-port broadcast for every `n` (Träff, arXiv 2312.11236).
//! (Being written: issue 12.)

use super::{Schedule, ScheduleError};

/// `m` blocks from root 0 to `n` processors in `m − 1 + ⌈log2 n⌉` rounds.
pub(super) fn generate(_n: u32, _m: u32) -> Result<Schedule, ScheduleError> {
    Err(ScheduleError::NotApplicable {
        algorithm: "optimal".into(),
        why: "not implemented yet".into(),
    })
}
