//! Allreduce with combining (Karp et al. §5.2): the generalized circulant algorithm, recursive halving, and §5.2.1 verbatim.

use super::*;

/// A slotted view of a machine for symmetric schedules: sends start only at multiples of `step`,
/// each processor starts at most one send and receives at most one message per slot, and a
/// message sent in slot `j` can be forwarded from slot `j + lambda` on. `step` is the least
/// period `≥ max(send step, receive step)` (and `≥ send_busy + recv_busy` on a shared CPU) at
/// which the receive overheads, `latency − recv_busy` after each send, never meet a send overhead.
#[derive(Debug, Clone, Copy)]
struct Slots {
    /// Ticks per slot (> 0).
    step: Ticks,
    /// Slots from a send until its value can be forwarded: `⌈latency / step⌉ ≥ 1`.
    lambda: u64,
}

impl Slots {
    /// The slotted machine of `t`, or `None` if `t` lets a processor send unboundedly often.
    fn new(t: &Timing) -> Option<Slots> {
        let base = t.send_step().max(t.recv_step());
        let (sb, rb) = (t.send_busy, t.recv_busy);
        let cpu = t.shared_cpu && sb > 0 && rb > 0;
        let step = if !cpu {
            base
        } else {
            let lo = base.max(sb.saturating_add(rb));
            let hi = lo.max(t.latency);
            let x = t.latency.saturating_sub(rb);
            let fits = |s: Ticks| {
                let phi = x % s;
                phi >= sb && phi + rb <= s
            };
            (lo..=hi.min(lo.saturating_add(1 << 22)))
                .find(|&s| fits(s))
                .unwrap_or(hi)
        };
        (step > 0).then(|| Slots {
            step,
            lambda: t.latency.div_ceil(step).max(1),
        })
    }

    /// A schedule from `(slot, from, to)` sends.
    fn schedule(
        &self,
        n: u32,
        collective: Collective,
        base: crate::time::TimeBase,
        sends: &[(u64, u32, u32)],
    ) -> Result<Schedule, ScheduleError> {
        let mut b = Schedule::builder(n, collective, base)?;
        b.reserve(sends.len());
        for &(slot, from, to) in sends {
            b.push(mul(self.step, slot)?, from, to, 0);
        }
        b.build()
    }
}

/// The lengths `H_t` of the circulant's runs for decisions `d` (whether everyone sends in slot
/// `j`), up to slot `upto`, saturating.
pub(super) fn run_lengths(d: &[bool], lambda: u64, upto: usize) -> Vec<u64> {
    let l = lambda as usize;
    let mut h = vec![1u64; upto + 1];
    for t in l..=upto {
        let j = t - l;
        let add = if d.get(j).copied().unwrap_or(false) {
            h[j]
        } else {
            0
        };
        h[t] = h[t - 1].saturating_add(add);
    }
    h
}

/// Decisions `d_0 ..= d_J` (`d_J` true, `J` least) with `H_{J + λ} = n` exactly, searched
/// depth-first with monotone bounds (`H` only grows with more sends) and a node budget.
pub(super) fn circulant_decisions(n: u32, lambda: u64) -> Option<Vec<bool>> {
    let n = u64::from(n);
    let l = lambda as usize;
    if n <= 1 {
        return Some(Vec::new());
    }
    // The least J at which sending in every slot reaches n.
    let mut j_min = 0usize;
    loop {
        let h = run_lengths(&vec![true; j_min + 1], lambda, j_min + l);
        if h[j_min + l] >= n {
            break;
        }
        j_min += 1;
        if j_min > 1 << 20 {
            return None;
        }
    }
    /// The search.
    struct Dfs {
        /// Target.
        n: u64,
        /// λ.
        lambda: u64,
        /// Last slot.
        last: usize,
        /// Nodes left.
        budget: u64,
        /// Decisions so far.
        d: Vec<bool>,
    }
    impl Dfs {
        fn go(&mut self) -> bool {
            if self.budget == 0 {
                return false;
            }
            self.budget -= 1;
            let j = self.d.len();
            let l = self.lambda as usize;
            let choices: &[bool] = if j == self.last {
                &[true]
            } else {
                &[true, false]
            };
            for &c in choices {
                self.d.push(c);
                let h = run_lengths(&self.d, self.lambda, j + l);
                let now = h[j + l];
                let ok = if j == self.last {
                    now == self.n
                } else if now >= self.n {
                    false
                } else {
                    let mut all = self.d.clone();
                    all.resize(self.last + 1, true);
                    run_lengths(&all, self.lambda, self.last + l)[self.last + l] >= self.n
                };
                if ok && (j == self.last || self.go()) {
                    return true;
                }
                self.d.pop();
            }
            false
        }
    }
    for last in j_min..=j_min + 2 * l + 4 {
        let mut s = Dfs {
            n,
            lambda,
            last,
            budget: 200_000,
            d: Vec::new(),
        };
        if s.go() {
            return Some(s.d);
        }
    }
    None
}

/// The circulant allreduce's sends for decisions `d`: in every slot `j` with `d_j`, processor
/// `i` sends its value to `i + H_{j + λ − 1}` (mod n).
pub(super) fn circulant_sends(n: u32, lambda: u64, d: &[bool]) -> Vec<(u64, u32, u32)> {
    let l = lambda as usize;
    let h = run_lengths(d, lambda, d.len() + l);
    let mut out = Vec::new();
    for (j, &send) in d.iter().enumerate() {
        if !send {
            continue;
        }
        let off = h[j + l - 1] % u64::from(n);
        for i in 0..n {
            out.push((j as u64, i, ((u64::from(i) + off) % u64::from(n)) as u32));
        }
    }
    out
}

/// Karp et al. §5.2.1 verbatim, generalized only in its clock: everyone sends every
/// `send_step` (the paper: every unit, g = 1), `λ = ⌈latency / send_step⌉` steps before a value
/// can be forwarded (the paper: L), in steps `j = 0 ..= T − λ` to `i + f_{j+λ−1}`, where `f` is
/// the paper's sequence and `T` the least with `f_T ≥ n`. For `n = f_T`, `o = 0`, `g = 1` and
/// free combining this is Theorem 5.1; otherwise the checker reports what breaks.
///
/// # Errors
/// [`ScheduleError::NotApplicable`] if the send step is 0; `n = 0`; overflow.
pub fn allreduce_paper(n: u32, timing: &Timing) -> Result<Schedule, ScheduleError> {
    let tc = timing.combining();
    let step = tc.send_step();
    if step == 0 {
        return Err(not("allreduce-paper", "the send step is 0"));
    }
    let lambda = tc.latency.div_ceil(step).max(1);
    let mut j = 0usize;
    let l = lambda as usize;
    while n > 1 && run_lengths(&vec![true; j + 1], lambda, j + l)[j + l] < u64::from(n) {
        j += 1;
    }
    let d = if n > 1 { vec![true; j + 1] } else { Vec::new() };
    let slots = Slots { step, lambda };
    let sends = circulant_sends(n.max(1), lambda, &d);
    slots.schedule(n, Collective::Allreduce, timing.base, &sends)
}

/// Recursive halving: the two halves `[lo, lo + a)` and `[lo + a, hi)` (`a = ⌈size/2⌉`) reduce
/// among themselves, then exchange: equal halves pairwise in one slot; if the first half has one
/// more, the second half's first member sends to the first half's last member one slot before
/// it exchanges with the first half's first member. Every combine joins adjacent runs of ranks.
/// Returns the slot from which everyone in the range holds the range's sum.
pub(super) fn merge_sends(lo: u32, hi: u32, lambda: u64, out: &mut Vec<(u64, u32, u32)>) -> u64 {
    let size = hi - lo;
    if size <= 1 {
        return 0;
    }
    let a = size.div_ceil(2);
    let b = size - a;
    let f = merge_sends(lo, lo + a, lambda, out).max(merge_sends(lo + a, hi, lambda, out));
    let (aa, bb) = (lo, lo + a);
    if a == b {
        for i in 0..b {
            out.push((f, aa + i, bb + i));
            out.push((f, bb + i, aa + i));
        }
        f + lambda
    } else {
        out.push((f, bb, aa + b));
        for i in 1..b {
            out.push((f, aa + i, bb + i));
            out.push((f, bb + i, aa + i));
        }
        out.push((f + 1, aa, bb));
        out.push((f + 1, bb, aa));
        f + 1 + lambda
    }
}

/// An allreduce in which every processor ends with every contribution exactly once, for every
/// `n` and every model: the faster of the generalized circulant (when its recurrence reaches
/// `n`; runs are cyclic, results rotations) and recursive halving (linear runs, results in rank
/// order; chosen on ties). With no send step at all (`g = o = c = 0`), everyone sends its own
/// value to everyone at time 0.
///
/// # Errors
/// `n = 0`; overflow.
pub fn allreduce(n: u32, timing: &Timing) -> Result<Schedule, ScheduleError> {
    let tc = timing.combining();
    let Some(slots) = Slots::new(&tc) else {
        let mut b = Schedule::builder(n, Collective::Allreduce, timing.base)?;
        for i in 0..n {
            for k in 0..n {
                if k != i {
                    b.push(0, i, k, 0);
                }
            }
        }
        return b.build();
    };
    let mut merge = Vec::new();
    let done = merge_sends(0, n.max(1), slots.lambda, &mut merge);
    let merge_last = done.saturating_sub(slots.lambda);
    let circ = circulant_decisions(n, slots.lambda);
    let sends = match circ {
        Some(d) if (d.len() as u64).saturating_sub(1) < merge_last => {
            circulant_sends(n, slots.lambda, &d)
        }
        _ => merge,
    };
    slots.schedule(n, Collective::Allreduce, timing.base, &sends)
}

/// The generalized circulant allreduce alone, if its recurrence reaches `n` (see [`allreduce`]).
///
/// # Errors
/// `n = 0`; overflow.
pub fn allreduce_circulant(n: u32, timing: &Timing) -> Result<Option<Schedule>, ScheduleError> {
    let tc = timing.combining();
    let Some(slots) = Slots::new(&tc) else {
        return Ok(None);
    };
    circulant_decisions(n, slots.lambda)
        .map(|d| {
            let sends = circulant_sends(n, slots.lambda, &d);
            slots.schedule(n, Collective::Allreduce, timing.base, &sends)
        })
        .transpose()
}

/// Recursive halving alone (see [`allreduce`]).
///
/// # Errors
/// [`ScheduleError::NotApplicable`] if the model has no send step; `n = 0`; overflow.
pub fn allreduce_halving(n: u32, timing: &Timing) -> Result<Schedule, ScheduleError> {
    let tc = timing.combining();
    let slots = Slots::new(&tc).ok_or_else(|| not("allreduce-halving", "the send step is 0"))?;
    let mut sends = Vec::new();
    merge_sends(0, n.max(1), slots.lambda, &mut sends);
    slots.schedule(n, Collective::Allreduce, timing.base, &sends)
}
