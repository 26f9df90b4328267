//! Payloads in atomic words: the shared-memory collectives (`posted.rs`, `small.rs`) keep
//! their payloads in `AtomicU64`s, written and read `Relaxed` and ordered by a flag's
//! `Release`/`Acquire`, so they need no `unsafe`.
//!
//! Whole words move with one 8-byte access of the caller's buffer each; only the tail is
//! assembled from a copy of run-time length. A copy of run-time length per word read a buffer
//! the previous call had just written through loads the store buffer could not forward, and
//! each waited for those stores to leave (docs/runtime.md, "The 48-byte broadcast taken apart"
//! and "Posted broadcasts").

use crate::runtime::sync::{AtomicU64, Ordering};

/// Stores `bytes` (at most `8 × words.len()`) into `words`: whole words with one 8-byte load
/// of the caller's buffer each, then the tail zero-padded.
#[inline]
pub(super) fn store_words(words: &[AtomicU64], bytes: &[u8]) {
    let mut chunks = bytes.chunks_exact(8);
    for (word, chunk) in words.iter().zip(&mut chunks) {
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        word.store(w, Ordering::Relaxed);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut w = [0u8; 8];
        w[..tail.len()].copy_from_slice(tail);
        words[bytes.len() / 8].store(u64::from_le_bytes(w), Ordering::Relaxed);
    }
}

/// Loads `out.len()` bytes (at most `8 × words.len()`) from `words`: the inverse of
/// [`store_words`].
#[inline]
pub(super) fn load_words(words: &[AtomicU64], out: &mut [u8]) {
    let whole = out.len() / 8;
    let mut chunks = out.chunks_exact_mut(8);
    for (chunk, word) in (&mut chunks).zip(words) {
        chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let w = words[whole].load(Ordering::Relaxed).to_le_bytes();
        tail.copy_from_slice(&w[..tail.len()]);
    }
}
