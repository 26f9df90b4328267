//! Algorithm BCAST of Bar-Noy & Kipnis (section 3): the generalized Fibonacci tree.
//!
//! Processor `p_0` of a range `p_0 … p_{n−1}` computes `j = F_λ(f_λ(n) − 1)`, sends the message to
//! `p_j` with the request to broadcast to `p_j … p_{n−1}`, and one unit later recursively
//! broadcasts to `p_0 … p_{j−1}`; `p_j` starts on its range when the message arrives, λ later.
//! Its running time is `f_λ(n)`, which is optimal (Theorem 6).

use super::{Collective, Schedule, ScheduleError};
use crate::model::{CostModel, Postal};
use crate::time;

/// BCAST for `n` processors, root 0, under `postal`.
pub(super) fn bcast(n: u32, postal: &Postal) -> Result<Schedule, ScheduleError> {
    let base = postal.time_base()?;
    let timing = postal.timing(base)?;
    let tree = timing.universal_tree();
    let table = tree.table(tree.index(u64::from(n))?)?;
    let unit = timing.send_step();
    let mut b = Schedule::builder(n, Collective::Broadcast { root: 0, blocks: 1 }, base)?;
    b.reserve(n as usize - 1);
    // (first processor of the range, range size, time the first processor starts on it)
    let mut stack = vec![(0u32, n, 0u64)];
    while let Some((lo, mut size, mut t)) = stack.pop() {
        while size > 1 {
            let f = table
                .index(u64::from(size))
                .ok_or(time::TimeError::Overflow)?;
            // f ≥ λ ≥ 1 for size ≥ 2, so f − 1 ≥ 0; j < size by part (4) of Claim 1.
            let j = table.count(f - unit) as u32;
            debug_assert!((1..size).contains(&j));
            b.push(t, lo, lo + j, 0);
            stack.push((lo + j, size - j, time::add(t, timing.latency)?));
            size = j;
            t = time::add(t, unit)?;
        }
    }
    b.build()
}
