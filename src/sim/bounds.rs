//! Lower bounds per collective, from the model's rules.
//!
//! * broadcast of `m` blocks: the model's own bound ([`CostModel::broadcast_lower_bound`]);
//! * reduce: by time reversal ([`Timing::reversed`](crate::model::Timing::reversed)) a legal reduction
//!   is a legal broadcast of the reversed machine (combine folded into the receive), so the
//!   optimal single-item broadcast time of that machine bounds it — Karp et al.'s `L + 1`
//!   correspondence, with the send step `max(g, o + c)` the reversed CPU imposes;
//! * allreduce and prefix: every processor (allreduce) or the last one (prefix) ends with all
//!   contributions, so each contains a reduction to it: the reduce bound;
//! * all-to-all with `k` items: each processor receives `k(P − 1)` messages, the first done at
//!   the earliest one latency after time 0, their receives at least one receive step apart:
//!   `latency + (k(P − 1) − 1) · recv_step` (Karp et al. §5.1: `L + 2o + g(k(P − 1) − 1)`).
//! * k-port (`Timing::ports = k > 1`): reductions need `⌈log_{k'+1} n⌉` rounds, all-to-all
//!   `⌈items(n − 1)/k'⌉` rounds (`k' = min(k, n − 1)`).
//! * hierarchical model: broadcast by its own bound; the others as above with the relaxed
//!   timing (`Hier::relaxed_timing`).
//! * ideal fat-tree: broadcast as [`CostModel::broadcast_lower_bound`] (Theorem 2); product and
//!   prefix the same (Theorem 6); all-to-all `1 + items(n − 1)` steps (one arrival per step).

use super::CheckError;
use crate::model::{CostModel, Problem};
use crate::schedule::Collective;
use crate::time::{self, Ticks, TimeBase};

/// A lower bound on the makespan of `collective` on `n` processors under `model`, in ticks of
/// `base` (a multiple of the model's base). See the module docs for each bound's argument.
///
/// # Errors
/// [`CheckError`] on model or time errors.
///
/// # Examples
///
/// ```
/// use herald::{Collective, CostModel, LogP, Ratio, sim::lower_bound};
/// let logp = LogP::new(Ratio::integer(6), Ratio::integer(2), Ratio::integer(4), Ratio::ZERO)?;
/// let base = logp.time_base()?;
/// // All-to-all of one item on 4 processors: L + 2o + 2g = 18.
/// let lb = lower_bound(&logp, &Collective::AllToAll { items: 1 }, 4, base)?;
/// assert_eq!(lb, 18);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn lower_bound(
    model: &dyn CostModel,
    collective: &Collective,
    n: u32,
    base: TimeBase,
) -> Result<Ticks, CheckError> {
    if n <= 1 {
        return Ok(0);
    }
    if let Some(tree) = model.fat_tree() {
        tree.validate(n)?;
        let steps = match *collective {
            Collective::Broadcast { blocks, .. } => {
                return Ok(model.broadcast_lower_bound(Problem { n, m: blocks }, base)?)
            }
            // Theorem 6: product and prefix have broadcast's lower bound (time reversal).
            Collective::Reduce { .. } | Collective::Allreduce | Collective::Prefix => {
                tree.theorem2_bound(u64::from(n))
            }
            // one receive per step: items·(n − 1) arrivals, the first at step 2 at the earliest
            Collective::AllToAll { items } => 1 + u64::from(items) * u64::from(n - 1),
        };
        return Ok(time::mul(base.units(1)?, steps)?);
    }
    // A hierarchical model: every bound below holds for its relaxed timing (each quantity the
    // least over the levels in use), since every real message costs at least that much.
    let timing = match model.hierarchical() {
        Some(h) => h.relaxed_timing(n, base)?,
        None => model.timing(base)?,
    };
    if timing.ports > 1 {
        // k-port rounds: the informed set grows at most (k' + 1)-fold per round, and so (reversed)
        // does a reduction's; k' receives per round at most.
        let k = u64::from(timing.ports.min(n - 1));
        return Ok(match *collective {
            Collective::Broadcast { blocks, .. } => {
                model.broadcast_lower_bound(Problem { n, m: blocks }, base)?
            }
            Collective::Reduce { .. } | Collective::Allreduce | Collective::Prefix => {
                let levels = crate::model::log_ceil(k + 1, u64::from(n));
                time::mul(timing.latency, levels)?
            }
            Collective::AllToAll { items } => {
                let receives = (u64::from(items) * u64::from(n - 1)).div_ceil(k);
                time::add(timing.latency, time::mul(timing.recv_step(), receives - 1)?)?
            }
        });
    }
    Ok(match *collective {
        Collective::Broadcast { blocks, .. } => {
            model.broadcast_lower_bound(Problem { n, m: blocks }, base)?
        }
        Collective::Reduce { .. } | Collective::Allreduce | Collective::Prefix => timing
            .combining()
            .reversed()
            .universal_tree()
            .index(u64::from(n))?,
        Collective::AllToAll { items } => {
            let receives = u64::from(items) * u64::from(n - 1);
            time::add(timing.latency, time::mul(timing.recv_step(), receives - 1)?)?
        }
    })
}
