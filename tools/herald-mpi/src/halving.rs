//! Allreduce by recursive halving and doubling (Rabenseifner's algorithm).
//!
//! The ring ([`RingAllreduce`](crate::RingAllreduce)) moves the fewest bytes, `2(n − 1)/n` of
//! the value per rank, but in `2(n − 1)` steps. Recursive halving moves the same bytes in
//! `2 log₂ n` steps (Rabenseifner 2004; Thakur, Rabenseifner & Gropp 2005), as MPI libraries
//! do for long vectors (MPICH's reduce-scatter and allgather, one of Open MPI's tuned choices):
//!
//! * **reduce-scatter by recursive halving:** `log₂ p` steps; in step `s` each rank exchanges
//!   half of its current window of chunks with the rank whose (virtual) number differs in bit
//!   `log₂ p − 1 − s`, keeps the half its bit selects and adds the partner's copy of it. The
//!   windows halve, so the messages are `m/2, m/4, …, m/p`; afterwards virtual rank `v` holds
//!   chunk `v` summed over all ranks.
//! * **allgather by recursive doubling:** the same exchanges in the reverse order, each rank
//!   sending the summed chunks it holds and receiving its partner's, `m/p, …, m/2`.
//!
//! For `n` ranks that are not a power of two, `p` is the largest power of two below `n` and
//! the first `2(n − p)` ranks fold in pairs first: each even one sends its whole value to the
//! odd one after it, which adds it and takes part as virtual rank `r / 2`; the others take part
//! as `r − (n − p)`. At the end every odd folding rank sends the result back. That costs two
//! whole messages more on the path, the simple version of the fold (Thakur et al. describe it).
//!
//! Each step is one `sendrecv` of both partners: under a flat LogGP model it takes one message's
//! latency at that step's size, with the combine in the halving steps
//! ([`HalvingAllreduce::predicted`]).

use crate::error::Error;
use crate::exec::{add, disjoint, ranks_match, CombineScratch};
use crate::p2p::Channel;
use herald::Model;
use std::ops::Range;

/// Tag of the halving allreduce's messages. (Unique among herald-mpi's tags: blocks 0 … 31 999,
/// the ring 32 763, calibration 32 764–32 765, stop notices 32 766, combining 32 767.)
const HALVING_TAG: u16 = 32_762;

/// One group of messages of an allreduce: `count` messages of `bytes` each, added into the
/// receiver's value (`combine`) or stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageGroup {
    /// Messages in the group, all ranks together.
    pub count: u64,
    /// Bytes of each (the longest of the group, where chunks differ by an element).
    pub bytes: u64,
    /// Whether the receiver adds the message into its value.
    pub combine: bool,
}

/// Allreduce of `n` ranks by recursive halving and doubling (module docs).
///
/// # Examples
///
/// ```
/// use herald_mpi::HalvingAllreduce;
/// let h = HalvingAllreduce::new(6)?;
/// // 6 ranks: 4 take part, ranks 0 and 2 fold into 1 and 3
/// assert_eq!(h.participants(), 4);
/// assert_eq!((0..6).map(|r| h.virtual_rank(r)).collect::<Vec<_>>(),
///            [None, Some(0), None, Some(1), Some(2), Some(3)]);
/// // virtual rank 2 first keeps chunks 2..4 and gives 0..2 to virtual rank 0
/// assert_eq!(h.halving_step(2, 0), (0, 2..4, 0..2));
/// # Ok::<(), herald_mpi::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HalvingAllreduce {
    n: usize,
    p: usize,
}

impl HalvingAllreduce {
    /// The allreduce of `n` ranks.
    ///
    /// # Errors
    /// [`Error::Usage`] if `n` is 0.
    pub fn new(n: usize) -> Result<HalvingAllreduce, Error> {
        if n == 0 {
            return Err(Error::Usage(
                "recursive halving needs at least one rank".into(),
            ));
        }
        let p = 1usize << (usize::BITS - 1 - n.leading_zeros());
        Ok(HalvingAllreduce { n, p })
    }

    /// The number of ranks.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The ranks that take part in the halving and doubling: the largest power of two ≤ `n`.
    pub fn participants(&self) -> usize {
        self.p
    }

    /// The halving steps (as many doubling steps follow): `log₂` of [`participants`](Self::participants).
    pub fn steps(&self) -> usize {
        self.p.trailing_zeros() as usize
    }

    /// The ranks that fold into a neighbour: `n −` [`participants`](Self::participants).
    fn folded(&self) -> usize {
        self.n - self.p
    }

    /// Rank `rank`'s number among the participants, or `None` if it folds into `rank + 1`.
    pub fn virtual_rank(&self, rank: usize) -> Option<usize> {
        let r = self.folded();
        if rank < 2 * r {
            (rank % 2 == 1).then_some(rank / 2)
        } else {
            Some(rank - r)
        }
    }

    /// The rank of participant `v` (the inverse of [`virtual_rank`](Self::virtual_rank)).
    pub fn real_rank(&self, v: usize) -> usize {
        let r = self.folded();
        if v < r {
            2 * v + 1
        } else {
            v + r
        }
    }

    /// The elements of chunks `chunks` (of `p`) of a value of `len` elements: chunk `i` is
    /// `[i·len/p, (i+1)·len/p)`, so consecutive chunks are one range.
    pub fn elements(&self, len: usize, chunks: Range<usize>) -> Range<usize> {
        let at = |k: usize| (k as u128 * len as u128 / self.p as u128) as usize;
        at(chunks.start)..at(chunks.end)
    }

    /// Halving step `s` of participant `v`: its partner, the chunks it keeps (and adds the
    /// partner's copy of) and the chunks it gives away.
    pub fn halving_step(&self, v: usize, s: usize) -> (usize, Range<usize>, Range<usize>) {
        let half = self.p >> (s + 1);
        let lo = v & !(2 * half - 1);
        let (lower, upper) = (lo..lo + half, lo + half..lo + 2 * half);
        if v & half == 0 {
            (v ^ half, lower, upper)
        } else {
            (v ^ half, upper, lower)
        }
    }

    /// Doubling step `s` of participant `v`: its partner, the summed chunks it sends and the
    /// ones it receives.
    pub fn doubling_step(&self, v: usize, s: usize) -> (usize, Range<usize>, Range<usize>) {
        let width = 1usize << s;
        let mine = v & !(width - 1);
        let theirs = (v ^ width) & !(width - 1);
        (v ^ width, mine..mine + width, theirs..theirs + width)
    }

    /// Every message of one allreduce of `bytes` bytes, in groups of one size: the fold's
    /// whole values, each halving step's `p` messages with the combine, each doubling step's
    /// `p` without, the unfold's whole values.
    pub fn messages(&self, bytes: u64) -> Vec<MessageGroup> {
        let (p, r) = (self.p as u64, self.folded() as u64);
        let group = |count, bytes, combine| MessageGroup {
            count,
            bytes,
            combine,
        };
        let mut g = Vec::with_capacity(2 * self.steps() + 2);
        if r > 0 {
            g.push(group(r, bytes, true));
        }
        for s in 0..self.steps() {
            g.push(group(p, bytes.div_ceil(2 << s), true));
        }
        for s in 0..self.steps() {
            g.push(group(p, (bytes << s).div_ceil(p), false));
        }
        if r > 0 {
            g.push(group(r, bytes, false));
        }
        g
    }

    /// What a flat model predicts for a value of `bytes` bytes: one message's latency per
    /// group of [`messages`](Self::messages) (a group's messages are exchanged at once), with
    /// the combine where the group combines (`combine` of its bytes, ns,
    /// [`crate::allreduce::sized`]); in ns.
    ///
    /// # Errors
    /// [`Error::Herald`] on model or time errors; [`Error::Usage`] for a hierarchical model.
    pub fn predicted(
        &self,
        model: &Model,
        bytes: u64,
        combine: &dyn Fn(u64) -> f64,
    ) -> Result<f64, Error> {
        self.messages(bytes)
            .iter()
            .map(|g| crate::allreduce::message_ns(model, g.bytes, g.combine.then_some(combine)))
            .sum()
    }

    /// Runs this rank's part: `value` is this rank's contribution; on return every rank's
    /// `value` holds the element-wise (wrapping) sum of all contributions, which must have one
    /// length on every rank. `scratch` keeps the receive buffer between calls.
    ///
    /// # Errors
    /// [`Error::Usage`] if `chan` has another number of ranks; as
    /// [`BroadcastPlan::run`](crate::BroadcastPlan::run).
    pub fn run(
        &self,
        chan: &Channel,
        scratch: &mut CombineScratch,
        value: &mut [u64],
    ) -> Result<(), Error> {
        let me = ranks_match(self.n, chan)?;
        if self.n == 1 {
            return Ok(());
        }
        let len = value.len();
        let Some(v) = self.virtual_rank(me) else {
            // An even folding rank: its value to the next rank, the sum back from it.
            chan.send(bytemuck::cast_slice(value), me + 1, HALVING_TAG)?;
            chan.recv(bytemuck::cast_slice_mut(value), me + 1, HALVING_TAG)?;
            return Ok(());
        };
        let inbox = &mut scratch.chunks;
        inbox.resize(len, 0);
        let folds = me < 2 * self.folded();
        if folds {
            chan.recv(
                bytemuck::cast_slice_mut(&mut inbox[..]),
                me - 1,
                HALVING_TAG,
            )?;
            add(value, inbox);
        }
        for s in 0..self.steps() {
            let (partner, keep, give) = self.halving_step(v, s);
            let (keep, give) = (self.elements(len, keep), self.elements(len, give));
            let partner = self.real_rank(partner);
            let got = &mut inbox[..keep.len()];
            chan.sendrecv(
                bytemuck::cast_slice(&value[give]),
                partner,
                bytemuck::cast_slice_mut(got),
                partner,
                HALVING_TAG,
            )?;
            add(&mut value[keep], got);
        }
        for s in 0..self.steps() {
            let (partner, mine, theirs) = self.doubling_step(v, s);
            let (mine, theirs) = (self.elements(len, mine), self.elements(len, theirs));
            let partner = self.real_rank(partner);
            let (send, recv) = disjoint(value, mine, theirs);
            chan.sendrecv(
                bytemuck::cast_slice(send),
                partner,
                bytemuck::cast_slice_mut(recv),
                partner,
                HALVING_TAG,
            )?;
        }
        if folds {
            chan.send(bytemuck::cast_slice(value), me - 1, HALVING_TAG)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rank of 1 … 13 ranks ends with the sum of every contribution, for values shorter
    /// than the participants (empty chunks) and longer: the fold, the steps and the unfold run
    /// in lockstep, every exchange's two sides checked to name each other and the same chunks.
    #[test]
    fn every_rank_ends_with_the_sum_of_every_contribution() {
        for n in 1..=13usize {
            let h = HalvingAllreduce::new(n).unwrap();
            assert!(h.participants().is_power_of_two() && h.participants() <= n);
            assert!(2 * h.participants() > n);
            for len in [0usize, 1, 3, n, 4 * n + 3, 100] {
                let (mut v, want) = crate::exec::contributions_and_sum(n, len);
                let r = n - h.participants();
                for e in (0..2 * r).step_by(2) {
                    assert_eq!(h.virtual_rank(e), None);
                    let sent = v[e].clone();
                    add(&mut v[e + 1], &sent);
                }
                let parts: Vec<usize> = (0..h.participants()).map(|x| h.real_rank(x)).collect();
                for (x, &rank) in parts.iter().enumerate() {
                    assert_eq!(h.virtual_rank(rank), Some(x));
                }
                for s in 0..h.steps() {
                    let before = v.clone();
                    for (x, &rank) in parts.iter().enumerate() {
                        let (partner, keep, give) = h.halving_step(x, s);
                        let (back, pkeep, pgive) = h.halving_step(partner, s);
                        assert_eq!((back, &pkeep, &pgive), (x, &give, &keep));
                        let got = &before[parts[partner]][h.elements(len, keep.clone())];
                        add(&mut v[rank][h.elements(len, keep)], got);
                    }
                }
                for (x, &rank) in parts.iter().enumerate() {
                    let mine = h.elements(len, x..x + 1);
                    assert_eq!(v[rank][mine.clone()], want[mine], "n {n}, len {len}");
                }
                for s in 0..h.steps() {
                    let before = v.clone();
                    for (x, &rank) in parts.iter().enumerate() {
                        let (partner, mine, theirs) = h.doubling_step(x, s);
                        let (back, pmine, ptheirs) = h.doubling_step(partner, s);
                        assert_eq!((back, &pmine, &ptheirs), (x, &theirs, &mine));
                        let theirs = h.elements(len, theirs);
                        v[rank][theirs.clone()].copy_from_slice(&before[parts[partner]][theirs]);
                    }
                }
                for e in (0..2 * r).step_by(2) {
                    v[e] = v[e + 1].clone();
                }
                for (rank, vr) in v.iter().enumerate() {
                    assert_eq!(vr, &want, "n = {n}, len = {len}, rank {rank}");
                }
            }
        }
        assert!(HalvingAllreduce::new(0).is_err());
    }

    /// The messages are those of the algorithm: `2 p log₂ p` in the steps plus `2 (n − p)`
    /// whole values, each rank of the steps sending `2 (p − 1) / p` of the value (the ring's
    /// bytes), and the halving steps' bytes halving.
    #[test]
    fn messages_count_the_steps_and_the_fold() {
        for n in 1..=17u64 {
            let h = HalvingAllreduce::new(n as usize).unwrap();
            let (p, k) = (h.participants() as u64, h.steps() as u64);
            let g = h.messages(1 << 20);
            let total: u64 = g.iter().map(|m| m.count).sum();
            assert_eq!(total, 2 * p * k + 2 * (n - p), "n = {n}");
            // (the fold's groups count n − p < p messages)
            let step_bytes: u64 = g.iter().filter(|m| m.count == p).map(|m| m.bytes).sum();
            assert_eq!(step_bytes * p, 2 * (p - 1) * (1 << 20), "n = {n}");
            let halving: Vec<u64> = g
                .iter()
                .filter(|m| m.combine && m.count == p)
                .map(|m| m.bytes)
                .collect();
            assert!(halving.windows(2).all(|w| w[0] == 2 * w[1]), "{halving:?}");
        }
    }
}
