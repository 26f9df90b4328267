//! The time herald's runtime takes to execute a broadcast schedule, under the runtime's cost
//! model ([`RuntimeCosts`]; its module docs list the rules). The papers' checker ([`check`](super::check))
//! is untouched: this is a second, approximate clock for the planner and `herald fidelity`.
//!
//! The evaluation follows the executor: each rank makes its sends in its schedule order (the
//! compiled program's order), a send starts when its sender is free and holds the block's first
//! unit (line, or chunk under single copy), and the block flows as a ramp: unit `j` leaves no
//! earlier than the sender holds it. Sends are processed in order of their start times (a
//! discrete-event list schedule). With more ranks than PUs the ranks of each PU take turns on
//! it: a simulation of their cycle (`runtime_shared`; the rules are in [`RuntimeCosts`]' module
//! docs).

use super::runtime_shared::{self, Shape};
use crate::model::{RuntimeCosts, RuntimeLevel, Transport};
use crate::schedule::{Collective, Schedule};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Payload bytes per 56-byte line after the 8-byte header of a streamed call (the header
/// occupies the first 8 bytes of the stream).
const LINE_PAYLOAD: u64 = 56;
/// The call header's bytes at the start of a stream.
const HEADER: u64 = 8;
/// Lines a ring holds: `CommOptions::default().capacity` (a test checks they agree). With
/// more ranks than PUs, a stream longer than this stalls its sender until the receiver runs.
pub const RING_LINES: u64 = 256;

/// Why a schedule has no runtime prediction.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PredictError {
    /// Only broadcasts are modelled.
    #[error("the runtime cost model times broadcasts only, not {0}")]
    NotBroadcast(&'static str),
    /// The profile did not measure single copy.
    #[error("the profile has no single-copy measurement: single copy is not modelled")]
    NoDirect,
    /// The costs name no level at all.
    #[error("the runtime costs have no level")]
    NoCosts,
    /// A rank's next send is of a block it never receives (the runtime would wait forever).
    #[error("rank {rank} sends block {block}, which it never receives")]
    Stuck {
        /// The rank.
        rank: u32,
        /// The block.
        block: u32,
    },
    /// The profile did not measure posting.
    #[error("the profile has no posted-broadcast measurement: posting is not modelled")]
    NoPosted,
    /// Posting does not apply: it moves a flat tree's single block of at most
    /// [`POSTED_MAX_BYTES`](crate::runtime::POSTED_MAX_BYTES) between ranks with PUs of their
    /// own, and of at most [`SHARED_POSTED_LIMIT`](crate::runtime::SHARED_POSTED_LIMIT) where
    /// ranks share PUs and the profile measured posting there.
    #[error("posting does not apply: {0}")]
    NotPostable(&'static str),
}

/// The runtime's predicted time of one broadcast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimePrediction {
    /// The transport assumed.
    pub transport: Transport,
    /// From the call until every rank holds every byte, made its last send, and (single copy)
    /// saw its last reader's copy done, ps.
    pub makespan_ps: u64,
    /// From the call until the last rank holds the last byte, ps.
    pub last_hold_ps: u64,
}

impl RuntimePrediction {
    /// The makespan in ns.
    pub fn makespan_ns(&self) -> f64 {
        self.makespan_ps as f64 / 1000.0
    }
}

/// What a rank holds of one block: when its first and its last unit arrived.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ramp {
    pub(super) first: u64,
    pub(super) last: u64,
}

/// Predicts the runtime's time for broadcast schedule `s` of `bytes` payload bytes moved by
/// `transport` under `costs` (module docs).
///
/// # Errors
/// [`PredictError`] for a schedule that is not a broadcast, single copy without its
/// measurement, or a send of a block that never reaches its sender.
///
/// # Examples
///
/// ```
/// # use herald::{*, model::{RuntimeCosts, Pick, Transport}, sim::predict_runtime};
/// # let text = std::fs::read_to_string("tests/data/profile-2core.json")?;
/// let profile = Profile::from_json_forced(&text)?;
/// let h = TopologySource::from_options(Some("core:2 pu:1"), None)?.load()?;
/// let costs = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant)?;
/// let model = Model::from(Postal::new(Ratio::ONE)?);
/// let one = generate(&Request::broadcast(Algorithm::Binomial, 2, 1, 0), &model)?;
/// let eight = generate(&Request::broadcast(Algorithm::Binomial, 2, 8, 0), &model)?;
/// // Lines are forwarded as they come: on one edge, 8 blocks cost what 1 block costs.
/// let t1 = predict_runtime(&one, &costs, 4096, Transport::Stream)?;
/// let t8 = predict_runtime(&eight, &costs, 4096, Transport::Stream)?;
/// assert_eq!(t1.makespan_ps, t8.makespan_ps);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn predict_runtime(
    s: &Schedule,
    costs: &RuntimeCosts,
    bytes: u64,
    transport: Transport,
) -> Result<RuntimePrediction, PredictError> {
    let (root, blocks) = match s.collective() {
        Collective::Broadcast { root, blocks } => (root, blocks.max(1)),
        other => return Err(PredictError::NotBroadcast(other.name())),
    };
    let call = match transport {
        Transport::Stream => costs.call_ps(),
        Transport::Direct => {
            if !costs.models_direct() {
                return Err(PredictError::NoDirect);
            }
            costs.direct_call_ps().unwrap_or(0)
        }
        Transport::Posted => return predict_posted(s, costs, bytes),
    };
    let n = s.n();
    // Units per block and the payload bytes each unit carries (single copy: copied bytes).
    let (units, unit_bytes): (Vec<u64>, Vec<u64>) = (0..blocks)
        .map(|b| block_units(bytes, blocks, b, transport, costs.chunk_bytes()))
        .unzip();
    let finest = costs.levels().iter().rev().flatten().next();
    // A stream of several blocks, or of more lines than a receiver reads ahead, runs the
    // executor: each rank's call costs `exec` more than the one-block path's.
    let burst = finest.map_or(1, |l| l.burst_lines.max(1));
    let stream_lines = (HEADER + bytes).div_ceil(LINE_PAYLOAD);
    // A single copy of one chunk in one block goes without the executor (one descriptor per
    // edge); several blocks or chunks run it.
    let exec = match transport {
        Transport::Stream if blocks > 1 || stream_lines > burst => costs.exec_ps(stream_lines),
        Transport::Direct if blocks > 1 || bytes > costs.chunk_bytes() => costs.direct_exec_ps(),
        _ => 0,
    };
    let sends = program_of(s);
    // Single copy: per rank, what its copy costs beyond itself because readers on other PUs
    // hold its buffer, because the broadcast's buffers outgrow the caches, and because it
    // copies from a forwarder's buffer that its own copy streamed to memory (0 for streams).
    let held: Vec<u64> = match transport {
        Transport::Direct => {
            let extra = footprint_ps(costs, finest, &sends, bytes);
            let forwarded = forwarded_ps(costs, finest, &sends, root, bytes);
            (0..n)
                .map(|r| {
                    held_ps(costs, &sends, r, bytes) + extra[r as usize] + forwarded[r as usize]
                })
                .collect()
        }
        _ => vec![0; n as usize],
    };
    // More ranks than PUs: the ranks of a PU take turns on it, simulated.
    if n > costs.pus().max(1) {
        let spins = spinning_lenders(costs, &sends, root, transport, &units);
        let shape = Shape {
            n,
            root,
            sends: &sends,
            held: &held,
            units: &units,
            unit_bytes: &unit_bytes,
            bytes,
            transport,
            call,
            exec,
            post: runtime_shared::Post::default(),
            spins: &spins,
        };
        let (makespan_ps, last_hold_ps) = runtime_shared::predict(&shape, costs)?;
        return Ok(RuntimePrediction {
            transport,
            makespan_ps,
            last_hold_ps,
        });
    }
    // Every rank sets its executor up at once, in parallel: the broadcast starts that much
    // later.
    let call = call + exec;
    let mut hold: Vec<Vec<Option<Ramp>>> = vec![vec![None; blocks as usize]; n as usize];
    hold[root as usize] = vec![
        Some(Ramp {
            first: call,
            last: call
        });
        blocks as usize
    ];
    let mut next = vec![0usize; n as usize];
    // When each rank may start its next message (its last start plus the gap, or its last end).
    let mut free = vec![call; n as usize];
    // Single copy: when each rank's copying is done (it copies one chunk at a time).
    let mut copy_free = vec![call; n as usize];
    let mut end = call;
    let mut heap: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    // Here every rank has a PU of its own (more ranks are simulated above).
    let ready = |r: u32, next: &[usize], hold: &[Vec<Option<Ramp>>], free: &[u64]| {
        let &(_, b) = sends[r as usize].get(next[r as usize])?;
        let h = hold[r as usize][b as usize]?;
        Some(free[r as usize].max(h.first))
    };
    for r in 0..n {
        if let Some(t) = ready(r, &next, &hold, &free) {
            heap.push(Reverse((t, r)));
        }
    }
    while let Some(Reverse((key, r))) = heap.pop() {
        let Some(start) = ready(r, &next, &hold, &free) else {
            continue; // a stale entry
        };
        if start > key {
            heap.push(Reverse((start, r)));
            continue;
        }
        let (to, b) = sends[r as usize][next[r as usize]];
        let h = hold[r as usize][b as usize].expect("ready");
        let u = units[b as usize];
        let level = match costs.between(r, to) {
            Some(l) => l,
            None => finest.ok_or(PredictError::NoCosts)?,
        };
        let hop = level.hop_ps;
        let (sent_last, first, last) = match transport {
            Transport::Stream => {
                let sent_last = (start + level.stream_ps(u)).max(h.last + level.line_ps);
                // The receiver reads once the line `burst_lines` ahead (or the last) is written.
                let first = start + level.stream_ps(u.min(level.burst_lines)) + hop;
                (sent_last, first, (sent_last + hop).max(first))
            }
            Transport::Direct => {
                // One descriptor line per chunk; the receiver copies chunk by chunk, at the
                // per-byte cost of the whole payload's size (what the caches hold depends on
                // the payload, not on how it is cut into blocks).
                // A reader that forwards to another PU writes into lines that PU holds.
                let whole = level.copy_ps(bytes).ok_or(PredictError::NoDirect)? + held[to as usize];
                let copy = (u128::from(whole) * u128::from(unit_bytes[b as usize])
                    / u128::from(bytes.max(1))) as u64;
                let per_unit = copy.div_ceil(u);
                let line = level.burst_line_ps;
                let sent_last = (start + u * line).max(h.last + line);
                let arrive = start + line + hop;
                let first = arrive.max(copy_free[to as usize]) + level.block_ps + per_unit;
                let last = (sent_last + hop + per_unit).max(first + (u - 1) * per_unit);
                copy_free[to as usize] = last;
                // The lender waits for its reader: its call ends a hop after the last copy.
                end = end.max(last + hop);
                (sent_last, first, last)
            }
            Transport::Posted => unreachable!("a posted broadcast is predicted apart"),
        };
        let ramp = Ramp { first, last };
        let slot = &mut hold[to as usize][b as usize];
        let newly = slot.is_none();
        *slot = Some(match *slot {
            Some(old) if old.first <= ramp.first => old,
            _ => ramp,
        });
        free[r as usize] = (start + level.gap_ps).max(sent_last);
        end = end.max(sent_last).max(last);
        next[r as usize] += 1;
        if let Some(t) = ready(r, &next, &hold, &free) {
            heap.push(Reverse((t, r)));
        }
        if newly && to != r {
            if let Some(t) = ready(to, &next, &hold, &free) {
                heap.push(Reverse((t, to)));
            }
        }
    }
    for r in 0..n {
        if let Some(&(_, b)) = sends[r as usize].get(next[r as usize]) {
            return Err(PredictError::Stuck { rank: r, block: b });
        }
    }
    let last_hold = hold
        .iter()
        .flatten()
        .map(|h| h.map_or(call, |h| h.last))
        .max()
        .unwrap_or(call);
    // The first message's parts overlap by what the calibration measured them to.
    let overlap = match transport {
        Transport::Direct => costs.direct_overlap_ps(),
        Transport::Stream => costs.stream_overlap_ps(),
        Transport::Posted => 0,
    };
    Ok(RuntimePrediction {
        transport,
        makespan_ps: end.max(last_hold).saturating_sub(overlap),
        last_hold_ps: last_hold.saturating_sub(overlap),
    })
}

/// One rank's sends `(to, block)` in program order.
pub(crate) type RankSends = Vec<(u32, u32)>;

/// Per rank: whether it lends by one descriptor (a single copy of one block of one chunk,
/// which it heard from one rank, or holds as the root) and no other rank of its PU forwards:
/// such a lender spins for readers on other PUs ([`RuntimeCosts::spin_ps`]), as the runtime's
/// does (its `one_descriptor` and `spin_across`).
fn spinning_lenders(
    costs: &RuntimeCosts,
    sends: &[RankSends],
    root: u32,
    transport: Transport,
    units: &[u64],
) -> Vec<bool> {
    let n = sends.len();
    if transport != Transport::Direct || units != [1] {
        return vec![false; n];
    }
    let mut heard = vec![0usize; n];
    for &(to, _) in sends.iter().flatten() {
        heard[to as usize] += 1;
    }
    // Per PU, its ranks that send: a lender spins where it is the only one.
    let mut senders = vec![0usize; costs.pus().max(1) as usize];
    for r in (0..n).filter(|&r| !sends[r].is_empty()) {
        senders[costs.pu(r as u32) as usize] += 1;
    }
    (0..n)
        .map(|r| {
            !sends[r].is_empty()
                && heard[r] == usize::from(r != root as usize)
                && senders[costs.pu(r as u32) as usize] == 1
        })
        .collect()
}

/// What rank `r`'s single copy of a `bytes`-byte payload costs beyond the copy itself because
/// ranks on other PUs read its buffer (it forwards to them, and in a repeated broadcast they
/// still hold its lines from the call before): the largest
/// [`held_ps`](crate::model::RuntimeLevel::held_ps) of the levels it forwards over, ps.
fn held_ps(costs: &RuntimeCosts, sends: &[RankSends], r: u32, bytes: u64) -> u64 {
    sends[r as usize]
        .iter()
        .filter_map(|&(to, _)| costs.between(r, to))
        .map(|l| l.held_ps(bytes))
        .max()
        .unwrap_or(0)
}

/// Per rank, what its single copy of the `bytes`-byte payload costs beyond the copy because
/// the broadcast's buffers (one of the payload per rank) outgrow the caches, ps, at the level
/// between it and the rank it copies from (the finest where they share a PU); 0 for the root.
fn footprint_ps(
    costs: &RuntimeCosts,
    finest: Option<&RuntimeLevel>,
    sends: &[RankSends],
    bytes: u64,
) -> Vec<u64> {
    let footprint = (sends.len() as u64).saturating_mul(bytes);
    per_reader(
        costs,
        finest,
        sends,
        |_| true,
        |l| l.footprint_ps(footprint, bytes),
    )
}

/// Per rank, what its single copy of the `bytes`-byte payload costs beyond the copy because
/// it copies from a forwarder's buffer that another PU holds (the forwarder lends it to a rank
/// on another PU, so its own copy into it streams inside the runtime's window and the bytes
/// are read from memory), ps, at the level between the two (the finest where they share a
/// PU); 0 for the root's readers and the root.
fn forwarded_ps(
    costs: &RuntimeCosts,
    finest: Option<&RuntimeLevel>,
    sends: &[RankSends],
    root: u32,
    bytes: u64,
) -> Vec<u64> {
    // A forwarder lends across PUs when one of its readers runs on another PU.
    let held = |from: u32| {
        from != root
            && sends[from as usize]
                .iter()
                .any(|&(to, _)| costs.between(from, to).is_some())
    };
    per_reader(costs, finest, sends, held, |l| l.forwarded_ps(bytes))
}

/// Per rank, the largest `extra` of the levels between it and the ranks it copies from whose
/// sends count (`counts(from)`; the finest level where the two share a PU), ps; 0 for a rank
/// no counted sender reaches.
fn per_reader(
    costs: &RuntimeCosts,
    finest: Option<&RuntimeLevel>,
    sends: &[RankSends],
    counts: impl Fn(u32) -> bool,
    extra: impl Fn(&RuntimeLevel) -> u64,
) -> Vec<u64> {
    let mut out = vec![0; sends.len()];
    for (from, s) in sends.iter().enumerate() {
        let from = from as u32;
        if !counts(from) {
            continue;
        }
        for &(to, _) in s {
            if let Some(l) = costs.between(from, to).or(finest) {
                let e = &mut out[to as usize];
                *e = (*e).max(extra(l));
            }
        }
    }
    out
}

/// What the runtime's executor runs of broadcast `s`: each rank's sends in program order (all
/// a prediction reads of the schedule, with its root and blocks).
pub(crate) fn program_of(s: &Schedule) -> Vec<RankSends> {
    (0..s.n())
        .map(|p| s.sends_of(p).map(|t| (t.to, t.what)).collect())
        .collect()
}

/// Whether posting can move broadcast `s`: a single block, sent by its root straight to every
/// other rank once (the flat tree; a post is one write that every rank reads).
///
/// # Examples
///
/// ```
/// # use herald::{*, sim::postable};
/// let model = Model::from(Postal::new(Ratio::ONE)?);
/// let tree = |a, blocks| generate(&Request::broadcast(a, 4, blocks, 0), &model);
/// assert!(postable(&tree(Algorithm::Star, 1)?));
/// assert!(!postable(&tree(Algorithm::Star, 2)?));
/// assert!(!postable(&tree(Algorithm::Binomial, 1)?));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn postable(s: &Schedule) -> bool {
    let Collective::Broadcast { root, blocks } = s.collective() else {
        return false;
    };
    let mut reached = vec![false; s.n() as usize];
    reached[root as usize] = true;
    blocks <= 1
        && s.sends_by_time().iter().all(|t| {
            t.from == root && t.what == 0 && !std::mem::replace(&mut reached[t.to as usize], true)
        })
        && reached.iter().all(|&r| r)
}

/// A posted broadcast: the root posts once, every other rank reads the slot; the call ends
/// when the slowest reader returns. Where every rank has a PU of its own, each reader costs
/// what the calibration measured between two ranks meeting at its level with the root
/// (readers of one post are not charged for one another: a machine of 2 PUs cannot measure
/// that). Where ranks share PUs the turns are simulated (`runtime_shared`): the root writes,
/// then its PU's other ranks read in turn, and those of other PUs as their turns come.
fn predict_posted(
    s: &Schedule,
    costs: &RuntimeCosts,
    bytes: u64,
) -> Result<RuntimePrediction, PredictError> {
    if !costs.models_posted() {
        return Err(PredictError::NoPosted);
    }
    if !postable(s) {
        return Err(PredictError::NotPostable(
            "only a flat tree's single block is posted",
        ));
    }
    let Collective::Broadcast { root, .. } = s.collective() else {
        unreachable!("postable")
    };
    if s.n() > costs.pus().max(1) {
        return predict_shared_posted(s, costs, bytes, root);
    }
    let mut makespan = 0;
    for r in (0..s.n()).filter(|&r| r != root) {
        let level = costs.between(root, r).ok_or(PredictError::NotPostable(
            "ranks share PUs, or meet at a level without costs",
        ))?;
        let t = level.posted_ps(bytes).ok_or(PredictError::NotPostable(
            "the payload is larger than a slot",
        ))?;
        makespan = makespan.max(t);
    }
    Ok(RuntimePrediction {
        transport: Transport::Posted,
        makespan_ps: makespan,
        last_hold_ps: makespan,
    })
}

/// [`predict_posted`] where ranks share PUs: the root's post costs it its share of what a
/// posted broadcast between two ranks of one PU took beyond the handoff, a reader on its PU
/// the rest ([`RuntimeCosts::shared_posted_split_ps`]), and a reader on another PU what a post
/// between their level's two PUs took beyond the root's share and the hop.
fn predict_shared_posted(
    s: &Schedule,
    costs: &RuntimeCosts,
    bytes: u64,
    root: u32,
) -> Result<RuntimePrediction, PredictError> {
    let (write, read) = costs
        .shared_posted_split_ps(bytes)
        .ok_or(PredictError::NotPostable(
            "ranks share PUs, and the profile did not measure posting there (or the payload is \
         larger than a slot)",
        ))?;
    let lines = crate::runtime::shared_posted_lines(bytes as usize).expect("measured") as u64;
    let sends = program_of(s);
    let shape = Shape {
        n: s.n(),
        root,
        sends: &sends,
        held: &vec![0; s.n() as usize],
        units: &[1],
        unit_bytes: &[bytes],
        bytes,
        transport: Transport::Posted,
        call: 0,
        exec: 0,
        post: runtime_shared::Post { write, read, lines },
        spins: &vec![false; s.n() as usize],
    };
    let (makespan_ps, last_hold_ps) = runtime_shared::predict(&shape, costs)?;
    Ok(RuntimePrediction {
        transport: Transport::Posted,
        makespan_ps,
        last_hold_ps,
    })
}

/// Units (lines or chunks) of block `b` of a `bytes`-byte payload in `blocks` blocks, and the
/// payload bytes of the block, as the runtime frames them.
fn block_units(bytes: u64, blocks: u32, b: u32, transport: Transport, chunk: u64) -> (u64, u64) {
    let blocks = u64::from(blocks.max(1));
    let b = u64::from(b);
    match transport {
        Transport::Stream => {
            // The stream `header ‖ payload` in 56-byte lines, cut into blocks of whole lines.
            let total = (HEADER + bytes).div_ceil(LINE_PAYLOAD);
            let per_block = total.div_ceil(blocks).max(1);
            let start = (b * per_block).min(total);
            let lines = (total - start).min(per_block).max(1);
            (lines, (lines * LINE_PAYLOAD).min(bytes))
        }
        Transport::Direct => {
            let per_block = bytes.div_ceil(blocks).max(1);
            let start = (b * per_block).min(bytes);
            let len = (bytes - start).min(per_block);
            (len.div_ceil(chunk.max(1)).max(1), len)
        }
        Transport::Posted => unreachable!("a posted broadcast is predicted apart"),
    }
}

#[cfg(test)]
mod tests {
    use super::{program_of, spinning_lenders};
    use crate::model::{Pick, RuntimeCosts, Transport};
    use crate::{generate, Algorithm, Model, Postal, Profile, Ratio, Request, TopologySource};

    /// Which ranks of a 4-rank broadcast `a` from rank 0 on 2 PUs (ranks 0 and 2 on one, 1 and
    /// 3 on the other) spin for readers on the other PU, single copy in `blocks` blocks of
    /// `chunks` chunks each.
    fn spinners(a: Algorithm, blocks: u32, chunks: u64) -> Vec<bool> {
        let text = std::fs::read_to_string("tests/data/profile-2core.json").unwrap();
        let profile = Profile::from_json_forced(&text).unwrap();
        let h = TopologySource::from_options(Some("l3:1 core:2 pu:1"), None)
            .unwrap()
            .load()
            .unwrap();
        let costs = RuntimeCosts::from_profile(&profile, &h, Pick::Dominant).unwrap();
        assert_eq!(
            (0..4).map(|r| costs.pu(r)).collect::<Vec<_>>(),
            [0, 1, 0, 1]
        );
        let model = Model::from(Postal::new(Ratio::ONE).unwrap());
        let s = generate(&Request::broadcast(a, 4, blocks, 0), &model).unwrap();
        let units = vec![chunks; blocks as usize];
        spinning_lenders(&costs, &program_of(&s), 0, Transport::Direct, &units)
    }

    /// The runtime's rule (`one_descriptor` and `spin_across`): a lender of one block of one
    /// chunk, none of whose PU's other ranks forwards.
    #[test]
    fn lenders_of_one_descriptor_without_forwarding_mates_spin() {
        // A star: the root lends, its mate (rank 2) only reads; the readers lend nothing.
        assert_eq!(spinners(Algorithm::Star, 1, 1), [true, false, false, false]);
        // A chain 0 → 1 → 2 → 3: the root's mate forwards, and rank 2's mate is the root,
        // which sends; rank 1's mate only reads.
        assert_eq!(
            spinners(Algorithm::Chain, 1, 1),
            [false, true, false, false]
        );
        // Several blocks or chunks run the executor, whose lender yields at once.
        assert_eq!(spinners(Algorithm::Star, 2, 1), [false; 4]);
        assert_eq!(spinners(Algorithm::Star, 1, 2), [false; 4]);
    }
}
