//! The 64-byte message line.
//!
//! Layout decision: a message is **56 payload bytes + one 8-byte sequence word in the same
//! cache line**. The ring's slot (`channel::Slot`) holds the sequence word in front of the 56
//! payload bytes, so the consumer learns "full" and reads the payload from one 64-byte line: one
//! coherence transfer per message. The alternative — 64 payload bytes plus a separate
//! sequence/flag line — costs a second transfer per message (the flag line and the data line
//! both move from the producer's cache to the consumer's), which is the cost the FastForward
//! design removes. The slot is exactly that line (64 bytes, 64-byte aligned; a 128-byte slot
//! streamed slower, docs/runtime.md "Slot size"). The value type [`Line`] is 64 bytes with 64-byte alignment; its payload is its first
//! 56 bytes and its last 8 bytes are unused (they stand where the slot keeps its sequence word
//! in front), so copying a line into a slot is an aligned 56-byte copy.

use std::fmt;

/// A message: one 64-byte cache line carrying [`Line::PAYLOAD`] = 56 bytes of payload.
///
/// The other 8 bytes are the channel's: inside a ring they hold the line's sequence word,
/// so a message costs one cache-line transfer (see the module notes in `runtime/line.rs`).
///
/// # Examples
///
/// ```
/// use herald::runtime::Line;
///
/// let mut line = Line::new();
/// line.set_word(0, 42);
/// line.payload_mut()[8] = 7;
/// assert_eq!(line.word(0), 42);
/// assert_eq!(line.payload()[8], 7);
/// assert_eq!(std::mem::size_of::<Line>(), 64);
/// assert_eq!(std::mem::align_of::<Line>(), 64);
/// ```
#[repr(C, align(64))]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Line {
    payload: [u8; Line::PAYLOAD],
}

const _: () = assert!(std::mem::size_of::<Line>() == 64);
const _: () = assert!(std::mem::align_of::<Line>() == 64);

impl Line {
    /// Payload bytes per line: 64 minus the 8-byte sequence word.
    pub const PAYLOAD: usize = 56;
    /// Payload 64-bit words per line.
    pub const WORDS: usize = Line::PAYLOAD / 8;

    /// A line of zero bytes.
    #[must_use]
    #[inline]
    pub const fn new() -> Self {
        Self {
            payload: [0; Line::PAYLOAD],
        }
    }

    /// A line carrying `payload`.
    ///
    /// ```
    /// let line = herald::runtime::Line::from_payload([1; herald::runtime::Line::PAYLOAD]);
    /// assert!(line.payload().iter().all(|&b| b == 1));
    /// ```
    #[must_use]
    #[inline]
    pub const fn from_payload(payload: [u8; Line::PAYLOAD]) -> Self {
        Self { payload }
    }

    /// A line whose payload starts with `bytes` and is zero after them.
    ///
    /// # Panics
    ///
    /// If `bytes` is longer than [`Line::PAYLOAD`].
    ///
    /// ```
    /// let line = herald::runtime::Line::from_bytes(b"hello");
    /// assert_eq!(&line.payload()[..6], b"hello\0");
    /// ```
    #[must_use]
    #[inline]
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let mut line = Self::new();
        line.payload[..bytes.len()].copy_from_slice(bytes);
        line
    }

    /// The payload bytes.
    #[must_use]
    #[inline]
    pub const fn payload(&self) -> &[u8; Line::PAYLOAD] {
        &self.payload
    }

    /// The payload bytes, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8; Line::PAYLOAD] {
        &mut self.payload
    }

    /// Payload word `i` (little-endian bytes `8i .. 8i + 8`).
    ///
    /// # Panics
    ///
    /// If `i >= Line::WORDS`.
    ///
    /// ```
    /// let mut line = herald::runtime::Line::new();
    /// line.set_word(6, u64::MAX);
    /// assert_eq!(line.word(6), u64::MAX);
    /// assert_eq!(line.word(5), 0);
    /// ```
    #[must_use]
    #[inline]
    pub fn word(&self, i: usize) -> u64 {
        let bytes = self.payload[8 * i..8 * i + 8].try_into();
        u64::from_le_bytes(bytes.expect("8 bytes"))
    }

    /// Sets payload word `i` (little-endian bytes `8i .. 8i + 8`).
    ///
    /// # Panics
    ///
    /// If `i >= Line::WORDS`.
    #[inline]
    pub fn set_word(&mut self, i: usize, value: u64) {
        self.payload[8 * i..8 * i + 8].copy_from_slice(&value.to_le_bytes());
    }
}

impl Default for Line {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words: Vec<u64> = (0..Line::WORDS).map(|i| self.word(i)).collect();
        f.debug_struct("Line").field("words", &words).finish()
    }
}
