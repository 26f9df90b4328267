//! The report of `herald fidelity`: latency modes, one row per (case, mode), the planner's
//! regret per (ranks, size, mode); as JSON (docs/cli-json.md) or text tables.

use super::cases::{Case, PICKS};
use herald::{calibrate::find_modes, model::Pick, Hierarchy, Profile};
use serde::Serialize;

/// `herald fidelity --json`.
#[derive(Debug, Serialize)]
pub(crate) struct FidelityJson {
    /// The profile's host and date.
    pub(crate) host: String,
    pub(crate) profile_date: String,
    /// How a broadcast is timed (`barrier-then-one`).
    pub(crate) method: &'static str,
    /// Interleaved slices.
    pub(crate) slices: usize,
    /// One clock read, ns, taken off every timed broadcast (as the calibration does).
    pub(crate) clock_overhead_ns: f64,
    /// PUs of this machine (rank counts above it share them).
    pub(crate) pus: usize,
    /// Wall time of the whole run, seconds.
    pub(crate) wall_s: f64,
    /// The latency modes the raw hops fell into, fastest first; rows name them by index.
    pub(crate) modes: Vec<ModeJson>,
    /// One row per case and mode it was measured in.
    pub(crate) rows: Vec<RowJson>,
    /// The planner's regret per (n, bytes, mode).
    pub(crate) regret: Vec<RegretJson>,
}

/// One latency mode.
#[derive(Debug, Serialize)]
pub(crate) struct ModeJson {
    /// The mode's center, raw hop ns.
    pub(crate) raw_hop_ns: f64,
    /// Its share of the measurements.
    pub(crate) share: f64,
    /// Measurements in it.
    pub(crate) measurements: usize,
    /// The profile's regime whose raw hop is nearest: the predictions compared for `n ≤ pus`.
    pub(crate) regime: &'static str,
}

/// Median, p10 and p90, ns.
#[derive(Debug, Serialize)]
pub(crate) struct SpreadJson {
    pub(crate) median: f64,
    pub(crate) p10: f64,
    pub(crate) p90: f64,
}

/// One case in one mode.
#[derive(Debug, Serialize)]
pub(crate) struct RowJson {
    pub(crate) n: u32,
    pub(crate) bytes: usize,
    /// `label m=blocks`, as `herald plan` names candidates.
    pub(crate) candidate: String,
    pub(crate) blocks: u32,
    /// Position in the planner's ranking (1: its pick).
    pub(crate) planner_rank: usize,
    /// The MPI-style baseline this candidate stands for, if any.
    pub(crate) baseline: Option<&'static str>,
    /// `stream` or `direct`.
    pub(crate) transport: &'static str,
    /// Index into `modes`.
    pub(crate) mode: usize,
    pub(crate) predicted_ns: f64,
    /// Over this mode's measurements, each the median of its repetitions.
    pub(crate) measured_ns: SpreadJson,
    /// Measurements in this mode.
    pub(crate) samples: usize,
    pub(crate) measured_over_predicted: f64,
}

/// The planner's regret at one (n, bytes, mode).
#[derive(Debug, Serialize)]
pub(crate) struct RegretJson {
    pub(crate) n: u32,
    pub(crate) bytes: usize,
    pub(crate) mode: usize,
    /// The planner's first candidate, and its transport.
    pub(crate) pick: String,
    pub(crate) pick_transport: &'static str,
    /// The row with the smallest measured median, and its transport.
    pub(crate) best: String,
    pub(crate) best_transport: &'static str,
    pub(crate) pick_ns: f64,
    pub(crate) best_ns: f64,
    /// `pick_ns / best_ns − 1`.
    pub(crate) regret: f64,
}

/// Median, p10, p90 of `v` (nearest rank, `herald::stats`).
fn spread(v: &[f64]) -> SpreadJson {
    let s = herald::stats::Summary::of_f64(v);
    SpreadJson {
        median: s.as_ref().map_or(f64::NAN, |s| s.median),
        p10: s.as_ref().map_or(f64::NAN, |s| s.p10),
        p90: s.as_ref().map_or(f64::NAN, |s| s.p90),
    }
}

/// The regret entries of `rows` (sorted by mode, n, bytes).
fn regrets(rows: &[RowJson]) -> Vec<RegretJson> {
    let mut out = Vec::new();
    for group in rows.chunk_by(|a, b| (a.mode, a.n, a.bytes) == (b.mode, b.n, b.bytes)) {
        // The runtime's pick: the planner's first (candidate, transport).
        let Some(pick) = group.iter().find(|r| r.planner_rank == 1) else {
            continue; // the pick was not measured in this mode
        };
        let best = group
            .iter()
            .min_by(|a, b| a.measured_ns.median.total_cmp(&b.measured_ns.median))
            .expect("a group has rows");
        out.push(RegretJson {
            n: pick.n,
            bytes: pick.bytes,
            mode: pick.mode,
            pick: pick.candidate.clone(),
            pick_transport: pick.transport,
            best: best.candidate.clone(),
            best_transport: best.transport,
            pick_ns: pick.measured_ns.median,
            best_ns: best.measured_ns.median,
            regret: pick.measured_ns.median / best.measured_ns.median - 1.0,
        });
    }
    out
}

/// The report of the measured `all`.
pub(crate) fn build(
    profile: &Profile,
    h: &Hierarchy,
    all: &[Case],
    slices: usize,
    clock_overhead_ns: f64,
    wall_s: f64,
) -> FidelityJson {
    let samples: Vec<(f64, f64)> = all
        .iter()
        .flat_map(|c| c.measured.iter().map(|&(raw, _)| (raw, 1.0)))
        .collect();
    let modes = find_modes(&samples);
    let owner = |x: f64| {
        (0..modes.len())
            .min_by(|&i, &j| {
                let d = |k: usize| (x.ln() - modes[k].center.ln()).abs();
                d(i).total_cmp(&d(j))
            })
            .unwrap_or(0)
    };
    // The profile's raw hop per regime, to match a measured mode with a prediction.
    let hop = profile
        .measured_levels()
        .next()
        .and_then(|l| l.raw_hop_ns.clone());
    let regime = |center: f64| {
        let pick_hop = |p: Pick| hop.as_ref().map_or(f64::NAN, |d| d.pick(p));
        (0..PICKS.len())
            .min_by(|&i, &j| {
                let d = |k: usize| (pick_hop(PICKS[k].0) - center).abs();
                d(i).total_cmp(&d(j))
            })
            .unwrap_or(1)
    };
    let mut rows = Vec::new();
    for (m, mode) in modes.iter().enumerate() {
        let r = regime(mode.center);
        for c in all {
            let mine: Vec<f64> = c
                .measured
                .iter()
                .filter(|&&(raw, _)| owner(raw) == m)
                .map(|&(_, t)| t)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let measured_ns = spread(&mine);
            let predicted_ns = c.predicted[r];
            rows.push(RowJson {
                n: c.n,
                bytes: c.bytes,
                candidate: c.label.clone(),
                blocks: c.blocks,
                planner_rank: c.planner_rank,
                baseline: c.baseline,
                transport: c.transport.name(),
                mode: m,
                predicted_ns,
                measured_over_predicted: measured_ns.median / predicted_ns,
                measured_ns,
                samples: mine.len(),
            });
        }
    }
    rows.sort_by(|a, b| {
        (a.mode, a.n, a.bytes, a.planner_rank, a.transport).cmp(&(
            b.mode,
            b.n,
            b.bytes,
            b.planner_rank,
            b.transport,
        ))
    });
    let regret = regrets(&rows);
    FidelityJson {
        host: profile.host.clone(),
        profile_date: profile.date.clone(),
        method: "barrier-then-one",
        slices,
        clock_overhead_ns,
        pus: h.pu_count(),
        wall_s,
        modes: modes
            .iter()
            .map(|m| ModeJson {
                raw_hop_ns: m.center,
                share: m.share,
                measurements: m.samples,
                regime: PICKS[regime(m.center)].1,
            })
            .collect(),
        rows,
        regret,
    }
}

/// Formats ns compactly: `950 ns`, `12.3 µs`, `4.56 ms`.
fn ns(t: f64) -> String {
    if t < 1e4 {
        format!("{t:.0} ns")
    } else if t < 1e7 {
        format!("{:.1} µs", t / 1e3)
    } else {
        format!("{:.2} ms", t / 1e6)
    }
}

/// The report as text: per mode a table of every row, then the regret table.
pub(crate) fn table(v: &FidelityJson) -> String {
    let mut out = String::new();
    for (m, mode) in v.modes.iter().enumerate() {
        out.push_str(&format!(
            "mode {m}: raw hop {:.0} ns, {:.0}% of {} measurements; predictions for the {} regime \
             (n ≤ {} PUs; more ranks: the dominant one)\n",
            mode.raw_hop_ns,
            100.0 * mode.share,
            mode.measurements,
            mode.regime,
            v.pus,
        ));
        out.push_str(&format!(
            "{:>3} {:>8}  {:<44} {:<6} {:>10} {:>32} {:>6}\n",
            "n",
            "bytes",
            "candidate (#planner rank, baseline)",
            "via",
            "predicted",
            "measured median [p10 – p90]",
            "m/p"
        ));
        for r in v.rows.iter().filter(|r| r.mode == m) {
            let name = match r.baseline {
                Some(b) => format!("{} (#{}, {b})", r.candidate, r.planner_rank),
                None => format!("{} (#{})", r.candidate, r.planner_rank),
            };
            let measured = format!(
                "{} [{} – {}]",
                ns(r.measured_ns.median),
                ns(r.measured_ns.p10),
                ns(r.measured_ns.p90)
            );
            out.push_str(&format!(
                "{:>3} {:>8}  {:<44} {:<6} {:>10} {:>32} {:>6.2}\n",
                r.n,
                r.bytes,
                name,
                r.transport,
                ns(r.predicted_ns),
                measured,
                r.measured_over_predicted,
            ));
        }
        out.push('\n');
    }
    out.push_str("regret: the planner's pick against the best measured candidate\n");
    out.push_str(&format!(
        "{:>4} {:>3} {:>8}  {:<36} {:<36} {:>7}\n",
        "mode", "n", "bytes", "pick (measured)", "best (measured)", "regret"
    ));
    for r in &v.regret {
        out.push_str(&format!(
            "{:>4} {:>3} {:>8}  {:<36} {:<36} {:>6.1}%\n",
            r.mode,
            r.n,
            r.bytes,
            format!("{} ({})", r.pick, ns(r.pick_ns)),
            format!("{} ({})", r.best, ns(r.best_ns)),
            100.0 * r.regret,
        ));
    }
    out.push_str(&format!(
        "method: barrier then one broadcast, median of ~1 ms of repetitions per measurement; \
         {} slices in {:.0} s\n",
        v.slices, v.wall_s
    ));
    out
}
