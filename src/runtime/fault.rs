//! Fault injection for the failure-path tests and `herald stress`: makes the calling thread
//! panic at a chosen point inside the runtime, where no user code runs (not a stable API).
//!
//! Each point costs one thread-local read when it is reached (a few per 64 KiB chunk of a
//! single-copy broadcast; the hot line paths have none).
//!
//! ```
//! use herald::runtime::fault::{panic_at, Point};
//! panic_at(Point::LendDescriptor, 3); // the 4th descriptor this thread is about to lend
//! herald::runtime::fault::disarm();
//! ```

use std::cell::Cell;

/// Where a fault can be injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Point {
    /// A single-copy lender about to publish the descriptor of a chunk of its buffer (the
    /// descriptors before it are out: receivers may be copying from the buffer).
    LendDescriptor,
    /// A single-copy receiver about to copy a chunk from its sender's buffer.
    CopyChunk,
}

thread_local! {
    static ARMED: Cell<Option<(Point, u32)>> = const { Cell::new(None) };
}

/// Arms the calling thread: it panics the `(skip + 1)`-th time it reaches `point` from now on,
/// once; any earlier arming is replaced.
pub fn panic_at(point: Point, skip: u32) {
    ARMED.with(|a| a.set(Some((point, skip))));
}

/// Disarms the calling thread.
pub fn disarm() {
    ARMED.with(|a| a.set(None));
}

/// The calling thread reaches `point`: panics if it was armed for it and its count is up.
#[inline]
pub(crate) fn reach(point: Point) {
    if let Some((armed, skip)) = ARMED.with(Cell::get) {
        if armed == point {
            reached_cold(point, skip);
        }
    }
}

#[cold]
fn reached_cold(point: Point, skip: u32) {
    if skip == 0 {
        disarm();
        panic!("herald fault injection: {point:?}");
    }
    ARMED.with(|a| a.set(Some((point, skip - 1))));
}
