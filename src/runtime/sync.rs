//! The synchronization shim: std types normally, loom's model-checked types under
//! `cfg(herald_loom)` (STYLE.md practice 12).
//!
//! The switch is a plain `cfg(herald_loom)`, not `cfg(test)`, so the integration test
//! `tests/loom_channel.rs` sees the loom types too. Everything in `runtime` that the
//! channel protocol depends on goes through here; worker threads of a `Team` are plain
//! std threads (a team is never run under loom).

#[cfg(herald_loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
#[cfg(herald_loom)]
pub(crate) use loom::sync::{Arc, Mutex};

#[cfg(not(herald_loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
#[cfg(not(herald_loom))]
pub(crate) use std::sync::{Arc, Mutex};

/// The notifier's half of an asymmetric Dekker fence (see `wait`): free on Linux.
///
/// Paired with [`heavy_fence`] on the waiter's side it orders like two `SeqCst` fences: the
/// waiter's `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` makes every running thread of the
/// process execute a full barrier, so the notifier needs only a compiler fence (the `membarrier2`
/// crate falls back to an `mprotect` TLB shootdown, or to real fences on both sides). Under
/// loom and Miri, which model neither a process-wide barrier nor its system call, both halves
/// are `SeqCst` fences.
#[inline(always)]
pub(crate) fn light_fence() {
    #[cfg(any(herald_loom, miri))]
    fence(Ordering::SeqCst);
    #[cfg(not(any(herald_loom, miri)))]
    membarrier2::light();
}

/// The waiter's half of the asymmetric fence (a system call: only on the way to parking).
pub(crate) fn heavy_fence() {
    #[cfg(any(herald_loom, miri))]
    fence(Ordering::SeqCst);
    #[cfg(not(any(herald_loom, miri)))]
    membarrier2::heavy();
}

/// Threads as the waiting protocol sees them (park, unpark, yield).
pub(crate) mod thread {
    #[cfg(herald_loom)]
    pub(crate) use loom::thread::{current, park, yield_now, Thread};
    #[cfg(not(herald_loom))]
    pub(crate) use std::thread::{current, park, yield_now, Thread};
}

/// An `UnsafeCell` with loom's closure API, so loom can track every access.
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(Inner<T>);

#[cfg(herald_loom)]
type Inner<T> = loom::cell::UnsafeCell<T>;
#[cfg(not(herald_loom))]
type Inner<T> = std::cell::UnsafeCell<T>;

impl<T> UnsafeCell<T> {
    /// Wraps `value`.
    pub(crate) fn new(value: T) -> Self {
        Self(Inner::new(value))
    }

    /// Calls `f` with a shared raw pointer to the contents.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        #[cfg(herald_loom)]
        return self.0.with(f);
        #[cfg(not(herald_loom))]
        return f(self.0.get());
    }

    /// Calls `f` with a unique raw pointer to the contents.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(herald_loom)]
        return self.0.with_mut(f);
        #[cfg(not(herald_loom))]
        return f(self.0.get());
    }
}

/// Locks `mutex`, ignoring poisoning: no lock in `runtime` is held across user code.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> impl std::ops::DerefMut<Target = T> + '_ {
    #[cfg(herald_loom)]
    return mutex.lock().unwrap();
    #[cfg(not(herald_loom))]
    return mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
}
