//! From parametrized round-trip times to `L`, `o_s`, `o_r`, `g`, `G` (least squares).
//!
//! The formulas are in the `calibrate` module docs. Here every size-dependent quantity is
//! fitted by ordinary least squares to a line in the message size `s` (in lines), over the
//! longest prefix of sizes that line fits, and the parameter is the line's value at `s = 1`
//! (one line: herald's message) or its slope.

/// The measurements of one message size `s`, all times in nanoseconds (clock overhead already
/// subtracted).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrttPoint {
    /// Message size in lines (≥ 1).
    pub lines: u32,
    /// `PRTT(1, 0, s)`: one message there and back.
    pub prtt_1_0: f64,
    /// `PRTT(n, 0, s)`: `n` messages back to back, one reply.
    pub prtt_n_0: f64,
    /// `PRTT(n, d, s)`: `n` messages with a delay after each but the last, one reply.
    pub prtt_n_d: f64,
    /// The delays actually spent in `PRTT(n, d, s)`, summed over its `n − 1` waits.
    pub delay_total: f64,
    /// The directly measured receive overhead of an `s`-line message that had already arrived.
    pub o_r: f64,
}

/// LogGP parameters fitted from PRTT measurements (nanoseconds; `G` per line and per byte).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogGpFit {
    /// One-way time of a one-line message, `PRTT(1,0,1)/2` (from the fitted line).
    pub one_way: f64,
    /// Latency: `one_way − o_s − o_r` (may be negative on shared memory: see the module docs).
    pub l: f64,
    /// Send overhead of a one-line message.
    pub o_s: f64,
    /// Receive overhead of a one-line message.
    pub o_r: f64,
    /// Gap between consecutive one-line messages.
    pub g: f64,
    /// Gap per additional line of a message.
    pub big_g_line: f64,
    /// Gap per payload byte (`big_g_line / 56`).
    pub big_g_byte: f64,
    /// Postal latency `λ = (L + o_s + o_r) / max(g, o_s)`.
    pub lambda: f64,
}

/// Why PRTT data could not be fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FitError {
    /// `n` must be at least 2 (the gap and the overhead come from `n − 1` extra messages).
    #[error("PRTT(n, ·, s) needs n ≥ 2, got n = {0}")]
    SmallN(u32),
    /// The fit needs at least two distinct message sizes.
    #[error("the fit needs at least two distinct message sizes")]
    TooFewSizes,
    /// A measurement is not a finite number.
    #[error("a PRTT measurement is not finite")]
    NotFinite,
}

/// Least squares line `y = a + b·x`; returns `(a, b)`. Needs two distinct `x`.
fn line(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx.is_nan() || sxx <= 0.0 {
        return None;
    }
    let b = sxy / sxx;
    Some((my - b * mx, b))
}

/// How far a point may lie from the fitted line and still belong to its regime: 10 % of the
/// value plus 2 ns (clock granularity).
fn fits(line: (f64, f64), x: f64, y: f64) -> bool {
    (line.0 + line.1 * x - y).abs() <= 0.1 * y.abs() + 2.0
}

/// Fits `y(s) = y₁ + (s − 1)·slope` over the sizes (sorted by size) and returns `(y₁, slope)`.
///
/// Netgauge's protocol-change rule, simplified: the line is fitted to the longest prefix of
/// sizes (smallest first, at least two) whose every point lies within 10 % + 2 ns of it;
/// larger sizes past a change of regime (say, a burst that no longer fits a hardware buffer)
/// do not distort the one-line intercept.
fn at_one_line(points: &[PrttPoint], y: impl Fn(&PrttPoint) -> f64) -> Option<(f64, f64)> {
    let mut xy: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (f64::from(p.lines) - 1.0, y(p)))
        .collect();
    xy.sort_by(|a, b| a.0.total_cmp(&b.0));
    for m in (2..=xy.len()).rev() {
        let prefix = &xy[..m];
        if let Some(l) = line(prefix) {
            if m == 2 || prefix.iter().all(|&(x, y)| fits(l, x, y)) {
                return Some(l);
            }
        }
    }
    None
}

/// Fits LogGP parameters to PRTT measurements over several message sizes, with `n` messages
/// in the multi-message probes (Netgauge's method; formulas in the `calibrate` module docs).
///
/// # Errors
///
/// [`FitError`] if `n < 2`, fewer than two distinct sizes are given, or a value is not finite.
///
/// # Examples
///
/// ```
/// use herald::calibrate::{fit_prtt, PrttPoint};
/// // Synthetic: L = 20, o_s = 30, o_r = 25, g = 40, G = 10 per line; n = 8, d = 300.
/// let (l, os, or, g, gl, n) = (20.0, 30.0, 25.0, 40.0, 10.0, 8.0);
/// let points: Vec<PrttPoint> = [1u32, 2, 4, 8].iter().map(|&s| {
///     let extra = (f64::from(s) - 1.0) * gl;
///     let one = 2.0 * (os + l + or + extra);
///     PrttPoint {
///         lines: s,
///         prtt_1_0: one,
///         prtt_n_0: one + (n - 1.0) * (g + extra),
///         prtt_n_d: one + (n - 1.0) * (os + 300.0),
///         delay_total: (n - 1.0) * 300.0,
///         o_r: or,
///     }
/// }).collect();
/// let fit = fit_prtt(8, &points)?;
/// assert!((fit.l - l).abs() < 1e-9 && (fit.g - g).abs() < 1e-9 && (fit.big_g_line - gl).abs() < 1e-9);
/// assert!((fit.lambda - 75.0 / 40.0).abs() < 1e-9);
/// # Ok::<(), herald::calibrate::FitError>(())
/// ```
pub fn fit_prtt(n: u32, points: &[PrttPoint]) -> Result<LogGpFit, FitError> {
    if n < 2 {
        return Err(FitError::SmallN(n));
    }
    let finite = |p: &PrttPoint| {
        [p.prtt_1_0, p.prtt_n_0, p.prtt_n_d, p.delay_total, p.o_r]
            .iter()
            .all(|v| v.is_finite())
    };
    if !points.iter().all(finite) {
        return Err(FitError::NotFinite);
    }
    let extra = f64::from(n - 1);
    // One-way time T(s) = PRTT(1,0,s)/2 = (o_s + L + o_r) + (s − 1)·G.
    let (one_way, _) = at_one_line(points, |p| p.prtt_1_0 / 2.0).ok_or(FitError::TooFewSizes)?;
    // Gap per message in a stream: (PRTT(n,0,s) − PRTT(1,0,s))/(n − 1) = g + (s − 1)·G.
    let (g, big_g_line) =
        at_one_line(points, |p| (p.prtt_n_0 - p.prtt_1_0) / extra).ok_or(FitError::TooFewSizes)?;
    // Sender cost per message with a delay d > g: (PRTT(n,d,s) − PRTT(1,0,s) − Σd)/(n − 1) = o_s(s).
    let (o_s, _) = at_one_line(points, |p| {
        (p.prtt_n_d - p.prtt_1_0 - p.delay_total) / extra
    })
    .ok_or(FitError::TooFewSizes)?;
    // Receive overhead, measured directly per size: o_r(s).
    let (o_r, _) = at_one_line(points, |p| p.o_r).ok_or(FitError::TooFewSizes)?;
    let l = one_way - o_s - o_r;
    Ok(LogGpFit {
        one_way,
        l,
        o_s,
        o_r,
        g,
        big_g_line,
        big_g_byte: big_g_line / crate::runtime::Line::PAYLOAD as f64,
        lambda: lambda(one_way, g, o_s),
    })
}

/// `λ = one_way / max(g, o_s)` (one_way = L + o_s + o_r), at least 1; NaN if the denominator
/// is not positive.
pub(crate) fn lambda(one_way: f64, g: f64, o_s: f64) -> f64 {
    let unit = g.max(o_s);
    if unit > 0.0 {
        (one_way / unit).max(1.0)
    } else {
        f64::NAN
    }
}

/// The capacity of a level from its curve `(simultaneous transfers, per-transfer time)`: the
/// largest `k` such that the time at `k` and at every smaller measured count stays within
/// `tolerance` (e.g. 0.25 for +25 %) of the time of a lone transfer. Returns `(k, at_least)`,
/// `at_least` when even the largest measured count stayed within (the level had no room for
/// more). `None` without a measurement of a lone transfer.
///
/// # Examples
///
/// ```
/// let curve = [(1, 50.0), (2, 52.0), (4, 61.0), (8, 120.0)];
/// assert_eq!(herald::calibrate::capacity_from_curve(&curve, 0.25), Some((4, false)));
/// assert_eq!(herald::calibrate::capacity_from_curve(&curve[..2], 0.25), Some((2, true)));
/// assert_eq!(herald::calibrate::capacity_from_curve(&[(2, 1.0)], 0.25), None);
/// ```
pub fn capacity_from_curve(curve: &[(u32, f64)], tolerance: f64) -> Option<(u32, bool)> {
    let mut sorted = curve.to_vec();
    sorted.sort_by_key(|p| p.0);
    let base = sorted.iter().find(|p| p.0 == 1)?.1;
    let mut best = 1;
    for &(k, t) in &sorted {
        if t <= base * (1.0 + tolerance) {
            best = k;
        } else {
            return Some((best, false));
        }
    }
    Some((best, true))
}
