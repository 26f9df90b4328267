//! The JSON form of a schedule, for people who write schedules by hand.
//!
//! ```json
//! { "n": 3,
//!   "collective": { "kind": "broadcast", "root": 0, "blocks": 1 },
//!   "sends": [ { "at": "0", "from": 0, "to": 1, "block": 0 },
//!              { "at": "1", "from": 0, "to": 2 } ] }
//! ```
//!
//! `at` is an exact time: `"5/2"`, `"2.5"` or a number. A broadcast send names its `block`
//! (default 0); an all-to-all send its `origin` and `item`; a combining send nothing (it carries
//! the sender's current partial value).

use super::{Collective, Schedule, ScheduleError, Transfer};
use crate::time::{Ratio, TimeBase, TimeError};
use serde::{Deserialize, Serialize};

/// Errors reading a schedule from JSON.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScheduleJsonError {
    /// Not JSON of the expected shape.
    #[error("malformed schedule JSON: {0}")]
    Syntax(#[from] serde_json::Error),
    /// A send's payload fields do not fit the collective.
    #[error("send {index}: {why}")]
    Payload {
        /// The send's position in the file.
        index: usize,
        /// What is wrong.
        why: String,
    },
    /// Exact time.
    #[error(transparent)]
    Time(#[from] TimeError),
    /// The schedule itself.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
}

/// One send as written in JSON.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SendJson {
    /// Exact start time.
    at: Ratio,
    /// Sender.
    from: u32,
    /// Receiver.
    to: u32,
    /// Broadcast block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    block: Option<u32>,
    /// All-to-all origin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    origin: Option<u32>,
    /// All-to-all item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    item: Option<u32>,
}

/// A whole schedule as written in JSON.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScheduleJson {
    /// Processor count.
    n: u32,
    /// The collective.
    collective: Collective,
    /// The sends, any order.
    sends: Vec<SendJson>,
}

impl Schedule {
    /// The schedule's JSON value (sends in time order, times exact).
    pub fn to_json(&self) -> serde_json::Value {
        let sends = self
            .sends_by_time()
            .iter()
            .map(|s| self.send_json(s))
            .collect();
        let doc = ScheduleJson {
            n: self.n,
            collective: self.collective,
            sends,
        };
        serde_json::to_value(doc).unwrap_or(serde_json::Value::Null)
    }

    /// The JSON list of sends only, in time order.
    pub fn sends_json(&self) -> serde_json::Value {
        let sends: Vec<SendJson> = self
            .sends_by_time()
            .iter()
            .map(|s| self.send_json(s))
            .collect();
        serde_json::to_value(sends).unwrap_or(serde_json::Value::Null)
    }

    /// One send as JSON.
    fn send_json(&self, s: &Transfer) -> SendJson {
        let (mut block, mut origin, mut item) = (None, None, None);
        match self.collective {
            Collective::Broadcast { .. } => block = Some(s.what),
            Collective::AllToAll { items } => {
                origin = Some(s.what / items);
                item = Some(s.what % items);
            }
            _ => {}
        }
        SendJson {
            at: self.base.ratio(s.at),
            from: s.from,
            to: s.to,
            block,
            origin,
            item,
        }
    }

    /// Reads a schedule from its JSON form. The tick base is the least that makes every time
    /// whole.
    ///
    /// # Errors
    /// [`ScheduleJsonError`] for malformed JSON, payload fields that do not fit the collective,
    /// a sender out of range, or times needing too fine a tick.
    ///
    /// # Examples
    ///
    /// ```
    /// use herald::Schedule;
    /// let s = Schedule::from_json(r#"{"n": 2, "collective": {"kind": "broadcast", "root": 0,
    ///     "blocks": 1}, "sends": [{"at": "1/2", "from": 0, "to": 1}]}"#)?;
    /// assert_eq!(s.base().ticks_per_unit(), 2);
    /// # Ok::<(), herald::schedule::ScheduleJsonError>(())
    /// ```
    pub fn from_json(text: &str) -> Result<Schedule, ScheduleJsonError> {
        let doc: ScheduleJson = serde_json::from_str(text)?;
        let base = doc
            .sends
            .iter()
            .try_fold(TimeBase::UNIT, |b, s| b.refine(s.at.denom()))?;
        let mut b = Schedule::builder(doc.n, doc.collective, base)?;
        b.reserve(doc.sends.len());
        for (index, s) in doc.sends.iter().enumerate() {
            let bad = |why: &str| ScheduleJsonError::Payload {
                index,
                why: why.to_owned(),
            };
            let what = match (doc.collective, s.block, s.origin, s.item) {
                (Collective::Broadcast { .. }, block, None, None) => block.unwrap_or(0),
                (Collective::AllToAll { items }, None, Some(o), Some(i)) => {
                    if i >= items || o >= doc.n {
                        return Err(bad("origin or item out of range"));
                    }
                    o * items + i
                }
                (c, None, None, None) if c.is_combining() => 0,
                (Collective::Broadcast { .. }, ..) => {
                    return Err(bad("a broadcast send names a block"))
                }
                (Collective::AllToAll { .. }, ..) => {
                    return Err(bad("an all-to-all send names its origin and item"))
                }
                _ => {
                    return Err(bad(
                        "a combining send carries its sender's partial value, no payload field",
                    ))
                }
            };
            if s.from >= doc.n {
                return Err(bad(&format!(
                    "sender {} is not below n = {}",
                    s.from, doc.n
                )));
            }
            b.push(base.ticks(s.at)?, s.from, s.to, what);
        }
        Ok(b.build()?)
    }
}
