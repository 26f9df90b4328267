//! Why a channel operation did not complete.

use crate::runtime::Line;

/// Why [`Sender::try_send`](super::Sender::try_send) did not send; carries the line back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TrySendError {
    /// The ring is full.
    #[error("the channel is full")]
    Full(Line),
    /// The ring is full and the receiver is gone.
    #[error("the receiver is gone")]
    Disconnected(Line),
}

/// Why [`Sender::try_send_with`](super::Sender::try_send_with) did not send (its closure was not called).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum TrySendWithError {
    /// The ring is full.
    #[error("the channel is full")]
    Full,
    /// The ring is full and the receiver is gone.
    #[error("the receiver is gone")]
    Disconnected,
}

/// Why [`Sender::send`](super::Sender::send) did not send; carries the line back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The ring is full and the receiver is gone.
    #[error("the receiver is gone")]
    Disconnected(Line),
    /// The team running this thread was aborted by a panic elsewhere.
    #[error("the team was aborted by a panic in another worker")]
    Aborted(Line),
}

/// Why [`Receiver::try_recv`](super::Receiver::try_recv) returned no line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum TryRecvError {
    /// The ring is empty.
    #[error("the channel is empty")]
    Empty,
    /// The ring is empty and the sender is gone.
    #[error("the sender is gone")]
    Disconnected,
}

/// Why [`Receiver::recv`](super::Receiver::recv) returned no line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum RecvError {
    /// The ring is empty and the sender is gone.
    #[error("the sender is gone")]
    Disconnected,
    /// The team running this thread was aborted by a panic elsewhere.
    #[error("the team was aborted by a panic in another worker")]
    Aborted,
}

impl TrySendError {
    /// The line that was not sent.
    #[must_use]
    pub fn into_inner(self) -> Line {
        match self {
            Self::Full(line) | Self::Disconnected(line) => line,
        }
    }
}

impl SendError {
    /// The line that was not sent.
    #[must_use]
    pub fn into_inner(self) -> Line {
        match self {
            Self::Disconnected(line) | Self::Aborted(line) => line,
        }
    }
}
