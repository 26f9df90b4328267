//! The optimal single-item LogP broadcast B(P) of Karp, Sahay, Santos & Schauser (section 3).
//!
//! The universal minimal broadcast tree gives the root label 0 and a node labelled `t` children
//! labelled `t + L + 2o + i·g`; B(P) is its subtree of the P smallest labels (Definition 3.5).
//! herald spaces siblings by the send step `max(g + (bytes − 1)·G, o)` rather than `g`: with
//! `o > g`, sends `g` apart would overlap their overheads (see docs/errata.md). Processors are
//! numbered in order of information time, ties broken by the sender's number.

use super::{Collective, Schedule, ScheduleError};
use crate::model::{CostModel, LogP};
use crate::time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// B(P) for `p` processors, root 0, under `logp`.
pub(super) fn bp(p: u32, logp: &LogP) -> Result<Schedule, ScheduleError> {
    let base = logp.time_base()?;
    let timing = logp.timing(base)?;
    let step = timing.send_step();
    let mut b = Schedule::builder(p, Collective::Broadcast { root: 0, blocks: 1 }, base)?;
    b.reserve(p as usize - 1);
    // (time of the sender's next possible send, sender)
    let mut heap = BinaryHeap::with_capacity(p as usize);
    heap.push(Reverse((0u64, 0u32)));
    for child in 1..p {
        let Reverse((t, sender)) = heap.pop().expect("the root is always in the heap");
        b.push(t, sender, child, 0);
        heap.push(Reverse((time::add(t, step)?, sender)));
        heap.push(Reverse((time::add(t, timing.latency)?, child)));
    }
    b.build()
}
