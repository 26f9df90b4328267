//! `herald fidelity`: the model's predicted time of every candidate 2-rank broadcast schedule
//! against the time the runtime takes, per mode of the bimodal core-to-core hop.
//!
//! For each payload size the planner ranks its candidates under the hierarchical model built
//! from the profile; candidates whose compiled programs coincide (for 2 ranks most trees are
//! the same single edge, differing only in block count) are measured once. Each candidate's
//! prediction is its exact simulated makespan under the profile's parameters for the fastest,
//! dominant and slowest regime ([`Pick`]).
//!
//! Measuring: interleaved slices, as `herald bench` does. Each slice runs every (size,
//! candidate) in a rotating order: a short raw atomic ping-pong (its time names the latency mode
//! the measurement ran in), then about half a millisecond of ping-pong broadcasts with
//! `CommRank::broadcast_with`, the root alternating, so one broadcast is half a round trip: from
//! the root's call until the other rank holds the data.
//! The communicator streams lines (single copy off), which is the transport the profile's
//! parameters describe. Every measured broadcast's bytes are checked once per slice.
//!
//! Per mode, the prediction compared is the one whose regime's raw hop (in the profile) is
//! nearest the mode's measured raw hop.

use crate::CliError;
use herald::{
    calibrate::find_modes,
    check,
    model::{load_profile, Assumptions, Hier, Pick},
    plan,
    plan::{candidate_model, schedule_of},
    Comm, CommOptions, Model, PlanRequest, Profile, Program, Team, TopologySource,
};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `herald fidelity`.
#[derive(Debug, clap::Args)]
pub(crate) struct FidelityArgs {
    /// The calibrated profile whose model is tested.
    #[arg(long, value_name = "FILE")]
    profile: PathBuf,
    /// Accept a profile of another host or schema version.
    #[arg(long)]
    force: bool,
    /// Payload sizes in bytes.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "64,512,4096,32768,262144,1048576"
    )]
    sizes: Vec<usize>,
    /// Interleaved measurement slices.
    #[arg(long, default_value_t = 12)]
    slices: usize,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// The regimes a prediction can assume.
const PICKS: [(Pick, &str); 3] = [
    (Pick::Fastest, "fastest"),
    (Pick::Dominant, "dominant"),
    (Pick::Slowest, "slowest"),
];

/// One distinct candidate of one size.
struct Case {
    bytes: usize,
    label: String,
    blocks: u32,
    /// Programs rooted at rank 0 and at rank 1.
    programs: [Program; 2],
    /// Predicted ns per regime, in `PICKS` order.
    predicted: [f64; 3],
    /// Measured ns per slice, each with the raw hop measured just before it.
    measured: Vec<(f64, f64)>,
}

/// The hierarchical model of the 2-rank team on `cpus` with `profile`'s parameters for `pick`.
fn model(
    profile: &Profile,
    h: &herald::Hierarchy,
    cpus: &[usize],
    pick: Pick,
) -> Result<Model, CliError> {
    let assume = Assumptions {
        pick,
        ..Assumptions::default()
    };
    let hier = Hier::from_profile(profile, h.clone(), cpus, &assume).map_err(CliError::usage)?;
    Ok(Model::from(hier))
}

/// The distinct candidates for a `bytes`-byte broadcast, with their predictions.
fn cases(
    profile: &Profile,
    h: &herald::Hierarchy,
    cpus: &[usize],
    bytes: usize,
) -> Result<Vec<Case>, CliError> {
    let models: Vec<Model> = PICKS
        .iter()
        .map(|&(pick, _)| model(profile, h, cpus, pick))
        .collect::<Result<_, _>>()?;
    let dominant = &models[1];
    let req = PlanRequest {
        n: 2,
        root: 0,
        bytes: bytes as u64,
        blocks: None,
    };
    let ranked = plan(dominant, &req).map_err(CliError::usage)?.ranked;
    let mut out: Vec<Case> = Vec::new();
    for c in ranked {
        let compile = |root: u32| -> Result<Program, CliError> {
            let s = schedule_of(dominant, &c, 2, root).map_err(CliError::usage)?;
            Program::compile(&s).map_err(CliError::usage)
        };
        let programs = [compile(0)?, compile(1)?];
        if out.iter().any(|k| k.programs[0] == programs[0]) {
            continue; // the same program as a better-ranked candidate
        }
        let mut predicted = [0.0; 3];
        for (slot, m) in predicted.iter_mut().zip(&models) {
            let mm = candidate_model(m, &c).map_err(CliError::usage)?;
            let s = schedule_of(m, &c, 2, 0).map_err(CliError::usage)?;
            let r = check(&s, &mm).map_err(CliError::usage)?;
            *slot = r.base().ratio(r.makespan()).to_f64();
        }
        out.push(Case {
            bytes,
            label: c.label.clone(),
            blocks: c.blocks,
            programs,
            predicted,
            measured: Vec::new(),
        });
    }
    Ok(out)
}

/// One-way ns of `k` ping-pong broadcasts of `case`; `Err` if a byte arrived wrong.
fn measure(team: &mut Team, comm: &mut Comm, case: &Case, k: u64) -> Result<f64, CliError> {
    let mut ranks = comm.ranks();
    let want: Vec<u8> = (0..case.bytes).map(|i| (i * 31 + 7) as u8).collect();
    let out = team.run_with(&mut ranks, |ctx, c| {
        let mut buf = if ctx.rank() == 0 {
            want.clone()
        } else {
            vec![0; want.len()]
        };
        // Untimed: takes the rings and warms the caches.
        c.broadcast_with(&case.programs[0], &mut buf)?;
        c.broadcast_with(&case.programs[1], &mut buf)?;
        let start = Instant::now();
        for _ in 0..k {
            c.broadcast_with(&case.programs[0], &mut buf)?;
            c.broadcast_with(&case.programs[1], &mut buf)?;
        }
        Ok::<_, herald::runtime::CollectiveError>((start.elapsed(), buf == want))
    });
    let mut t = 0.0;
    for (rank, r) in out.into_iter().enumerate() {
        let (elapsed, ok) = r.map_err(|e| CliError::Failed(e.to_string()))?;
        if !ok {
            return Err(CliError::Failed(format!(
                "{} bytes, {}: rank {rank} holds wrong bytes",
                case.bytes, case.label
            )));
        }
        if rank == 0 {
            t = elapsed.as_nanos() as f64 / (2 * k) as f64;
        }
    }
    Ok(t)
}

/// Median, p10, p90 of `v` (nearest rank, `herald::stats`); NaN for no finite values.
fn spread(v: &[f64]) -> (f64, f64, f64) {
    herald::stats::Summary::of_f64(v)
        .map_or((f64::NAN, f64::NAN, f64::NAN), |s| (s.median, s.p10, s.p90))
}

/// Runs `herald fidelity`.
pub(crate) fn run(a: &FidelityArgs) -> Result<(), CliError> {
    if a.slices == 0 || a.sizes.is_empty() || a.sizes.contains(&0) {
        return Err(CliError::usage(
            "--slices must be at least 1 and --sizes positive",
        ));
    }
    let profile = load_profile(&a.profile, a.force).map_err(CliError::usage)?;
    let h = TopologySource::Machine.load().map_err(CliError::usage)?;
    if h.pu_count() < 2 {
        return Err(CliError::usage("fidelity needs two CPUs"));
    }
    let cpus = vec![h.os_index(0), h.os_index(1)];
    let mut all: Vec<Case> = Vec::new();
    for &bytes in &a.sizes {
        all.extend(cases(&profile, &h, &cpus, bytes)?);
    }
    let mut team = Team::with_cores(cpus.clone()).map_err(CliError::usage)?;
    let options = CommOptions {
        direct_min_bytes: usize::MAX,
        ..CommOptions::default()
    };
    let mut comm = Comm::with_options(2, options).map_err(CliError::usage)?;
    // About half a millisecond per measurement, from the dominant prediction: short enough to
    // fall in one latency mode, which the raw hop measured just before it names.
    let reps: Vec<u64> = all
        .iter()
        .map(|c| (2.5e5 / c.predicted[1].max(50.0)).clamp(2.0, 5_000.0) as u64)
        .collect();
    for (case, &k) in all.iter().zip(&reps) {
        measure(&mut team, &mut comm, case, k.min(64))?; // warm-up and first check
    }
    for s in 0..a.slices {
        for i in 0..all.len() {
            let j = (i + s) % all.len();
            let raw = crate::bench::raw_hop(&mut team, 300);
            let t = measure(&mut team, &mut comm, &all[j], reps[j])?;
            all[j].measured.push((raw, t));
        }
    }
    let report = report(&profile, &all);
    if a.json {
        println!("{report}");
    } else {
        print!("{}", table(&report));
    }
    Ok(())
}

/// The per-mode comparison as JSON.
fn report(profile: &Profile, all: &[Case]) -> Value {
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
    let mode_rows: Vec<Value> = modes
        .iter()
        .enumerate()
        .map(|(m, mode)| {
            let r = regime(mode.center);
            let cases: Vec<Value> = all
                .iter()
                .filter_map(|c| {
                    let mine: Vec<f64> = c
                        .measured
                        .iter()
                        .filter(|&&(raw, _)| owner(raw) == m)
                        .map(|&(_, t)| t)
                        .collect();
                    if mine.is_empty() {
                        return None;
                    }
                    let (med, p10, p90) = spread(&mine);
                    Some(
                        json!({"bytes": c.bytes, "candidate": c.label, "blocks": c.blocks,
                           "predicted_ns": c.predicted[r], "measured_ns": med,
                           "measured_p10_ns": p10, "measured_p90_ns": p90,
                           "samples": mine.len(),
                           "measured_over_predicted": med / c.predicted[r]}),
                    )
                })
                .collect();
            json!({"raw_hop_ns": mode.center, "share": mode.share,
                   "measurements": mode.samples,
                   "regime": PICKS[r].1, "cases": cases})
        })
        .collect();
    let predictions: Vec<Value> = all
        .iter()
        .map(|c| {
            json!({"bytes": c.bytes, "candidate": c.label, "blocks": c.blocks,
                   "fastest_ns": c.predicted[0], "dominant_ns": c.predicted[1],
                   "slowest_ns": c.predicted[2]})
        })
        .collect();
    json!({"host": profile.host, "profile_date": profile.date,
           "predictions": predictions, "modes": mode_rows})
}

/// The report as a text table, one block per mode.
fn table(v: &Value) -> String {
    let mut out = String::new();
    let empty = Vec::new();
    for mode in v["modes"].as_array().unwrap_or(&empty) {
        out.push_str(&format!(
            "mode: raw hop {:.0} ns, {:.0}% of slices; predictions for the {} regime\n",
            mode["raw_hop_ns"].as_f64().unwrap_or(f64::NAN),
            100.0 * mode["share"].as_f64().unwrap_or(0.0),
            mode["regime"].as_str().unwrap_or("?"),
        ));
        out.push_str(&format!(
            "{:>9}  {:<34} {:>12} {:>12} {:>8}\n",
            "bytes", "candidate", "predicted", "measured", "meas/pred"
        ));
        for c in mode["cases"].as_array().unwrap_or(&empty) {
            let f = |k: &str| c[k].as_f64().unwrap_or(f64::NAN);
            out.push_str(&format!(
                "{:>9}  {:<34} {:>9.0} ns {:>9.0} ns {:>8.2}\n",
                c["bytes"].as_u64().unwrap_or(0),
                format!(
                    "{} m={}",
                    c["candidate"].as_str().unwrap_or("?"),
                    c["blocks"]
                ),
                f("predicted_ns"),
                f("measured_ns"),
                f("measured_over_predicted"),
            ));
        }
    }
    out
}
