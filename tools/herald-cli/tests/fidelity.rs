//! `herald fidelity`: the shape of a tiny real run and invariants derived from its own rows
//! (never its speed), under a watchdog; bad input exits 2 with one line.

mod common;

use common::{herald_watched as watched, json};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Duration;

fn profile() -> String {
    format!(
        "{}/../../tests/data/profile-2core.json",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Asserts exit code 2 with exactly one line on stderr and no panic (under a watchdog).
fn bad_input(args: &[&str]) {
    common::bad_input_with(watched(args, Duration::from_secs(120)), args);
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The runtime planner's first (candidate, transport) for 2 ranks, asked of `herald plan` with
/// the same profile (its `runtime` ranking; ranks in compact order).
fn plan_first(bytes: usize) -> (String, String) {
    let v = json(&watched(
        &[
            "plan",
            "--profile",
            &profile(),
            "--force",
            "-n",
            "2",
            "--bytes",
            &bytes.to_string(),
            "--json",
        ],
        Duration::from_secs(120),
    ));
    let best = &v["runtime"][0];
    (
        format!("{} m={}", best["label"].as_str().unwrap(), best["blocks"]),
        best["transport"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn tiny_run_has_the_documented_shape_and_invariants() {
    let p = profile();
    let v = json(&watched(
        &[
            "fidelity",
            "--profile",
            &p,
            "--force",
            "--ranks",
            "2,3",
            "--sizes",
            "8,4096",
            "--slices",
            "1",
            "--top",
            "2",
            "--measure-us",
            "200",
            "--json",
        ],
        Duration::from_secs(300),
    ));
    assert_eq!(v["method"], "barrier-then-one");
    assert_eq!(v["slices"], 1);
    assert_eq!(v["measure_us"], 200);
    // The clock's step, over which each measurement's median is spread: at least 1 ns (the
    // value where the clock shows no coarser step) and finite.
    let step = v["clock_step_ns"].as_f64().expect("clock_step_ns");
    assert!(step.is_finite() && step >= 1.0, "clock_step_ns {step}");
    let modes = v["modes"].as_array().expect("modes");
    assert!(!modes.is_empty());
    // Each mode names the value of its regime in the profile: one of the centers of the
    // measured level's one-way modes, or its median (the fastest and slowest regimes are
    // taken no further out than the median; the test profile has one-way times).
    let prof: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).expect("profile")).expect("json");
    let one_way = prof["levels"]
        .as_array()
        .expect("levels")
        .iter()
        .find_map(|l| l.get("one_way_ns").filter(|d| !d.is_null()))
        .expect("the test profile has a one-way time");
    let centers: Vec<f64> = one_way["modes"]
        .as_array()
        .expect("one-way modes")
        .iter()
        .map(|m| f(&m["center"]))
        .chain([f(&one_way["median"])])
        .collect();
    for m in modes {
        let reference = f(&m["regime_reference_ns"]);
        assert!(
            centers.iter().any(|&c| (c - reference).abs() < 1e-9),
            "{m}: not one of the profile's one-way modes {centers:?}"
        );
    }
    let rows = v["rows"].as_array().expect("rows");
    let regret = v["regret"].as_array().expect("regret");
    for r in rows {
        for key in [
            "n",
            "bytes",
            "candidate",
            "mode",
            "predicted_ns",
            "measured_ns",
            "transport",
            "blocks",
            "samples",
            "measured_over_predicted",
            "mean_ns",
            "mean_over_predicted",
            "planner_rank",
        ] {
            assert!(r.get(key).is_some(), "row lacks {key}: {r}");
        }
        let n = r["n"].as_u64().unwrap();
        let bytes = r["bytes"].as_u64().unwrap() as usize;
        assert!(n == 2 || n == 3, "{r}");
        assert!(bytes == 8 || bytes == 4096, "{r}");
        assert!((r["mode"].as_u64().unwrap() as usize) < modes.len());
        let predicted = f(&r["predicted_ns"]);
        assert!(predicted > 0.0 && predicted.is_finite(), "{r}");
        let m = &r["measured_ns"];
        let (p10, median, p90) = (f(&m["p10"]), f(&m["median"]), f(&m["p90"]));
        assert!(0.0 < p10 && p10 <= median && median <= p90, "{r}");
        let m = &r["mean_ns"];
        let (p10, mean, p90) = (f(&m["p10"]), f(&m["median"]), f(&m["p90"]));
        assert!(0.0 < p10 && p10 <= mean && mean <= p90, "{r}");
        let ratio = f(&r["mean_over_predicted"]);
        assert!((ratio - mean / predicted).abs() <= 1e-9 * ratio, "{r}");
        assert!(r["samples"].as_u64().unwrap() >= 1);
        // --transport auto: the planner's transport per case. This profile has no runtime
        // measurements, so the runtime model falls back to LogGP, which knows no single copy
        // (src/model/runtime.rs): every case streams, whatever `CommOptions::direct_min_bytes` says.
        assert_eq!(r["transport"], "stream", "{r}");
    }
    // Every (n, bytes) measured has the planner's pick among its rows and a regret entry.
    let mut seen = BTreeSet::new();
    for g in regret {
        let key = (g["n"].as_u64().unwrap(), g["bytes"].as_u64().unwrap());
        seen.insert(key);
        let group: Vec<&Value> = rows
            .iter()
            .filter(|r| (r["n"].as_u64().unwrap(), r["bytes"].as_u64().unwrap()) == key)
            .filter(|r| r["mode"] == g["mode"])
            .collect();
        assert!(!group.is_empty(), "{g}");
        let regret = f(&g["regret"]);
        assert!(regret >= 0.0, "{g}");
        let fastest = group
            .iter()
            .map(|r| f(&r["measured_ns"]["median"]))
            .fold(f64::INFINITY, f64::min);
        let best = group
            .iter()
            .find(|r| r["candidate"] == g["best"])
            .expect("best is one of the rows");
        assert_eq!(f(&best["measured_ns"]["median"]), fastest, "{g}");
        let pick = group
            .iter()
            .find(|r| r["planner_rank"] == 1)
            .expect("the pick was measured in this mode");
        assert_eq!(g["pick"], pick["candidate"], "{g}");
        let want = f(&pick["measured_ns"]["median"]) / f(&best["measured_ns"]["median"]) - 1.0;
        assert!((regret - want).abs() <= 1e-9 * want.abs().max(1.0), "{g}");
        // The same by the means of repetitions.
        let mean = |r: &Value| f(&r["mean_ns"]["median"]);
        let by_mean = group
            .iter()
            .find(|r| {
                r["candidate"] == g["best_by_mean"] && r["transport"] == g["best_by_mean_transport"]
            })
            .expect("best_by_mean is one of the rows");
        let fastest = group.iter().map(|r| mean(r)).fold(f64::INFINITY, f64::min);
        assert_eq!(mean(by_mean), fastest, "{g}");
        let want = mean(pick) / fastest - 1.0;
        let got = f(&g["regret_mean"]);
        assert!(
            got >= 0.0 && (got - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{g}"
        );
        // Paired: the pick's own ratio is 1, so never below 0; taken against one of the rows
        // (absent where no other row shares a slice with the pick in this mode).
        match (g["paired"].as_f64(), g["paired_best"].as_str()) {
            (Some(p), Some(best)) => {
                assert!(p >= -1e-12, "{g}");
                assert!(g["paired_slices"].as_u64().unwrap() >= 1, "{g}");
                let via = &g["paired_best_transport"];
                assert!(
                    group
                        .iter()
                        .any(|r| r["candidate"] == best && r["transport"] == *via),
                    "{g}"
                );
            }
            (None, None) => assert_eq!(g["paired_slices"], 0, "{g}"),
            _ => panic!("paired and paired_best go together: {g}"),
        }
        // At most --top planner candidates, the rest baselines.
        let plain = group.iter().filter(|r| r["baseline"].is_null()).count();
        assert!(plain <= 2, "{g}");
    }
    let all: BTreeSet<(u64, u64)> = [(2, 8), (2, 4096), (3, 8), (3, 4096)].into();
    assert_eq!(seen, all);
    // The targets per mode, counted again from the rows and the regret entries: at 2 ranks the
    // pick's |m/p − 1| ≤ 0.10, the paired regret ≤ 0.05 where there is one.
    let targets = v["targets"].as_array().expect("targets");
    assert_eq!(targets.len(), modes.len());
    for (m, t) in targets.iter().enumerate() {
        assert_eq!(t["mode"], m, "{t}");
        // The test profile names its regimes by value, not by their hop: no mode is then known
        // to be uncalibrated, in the modes and their targets alike.
        assert_eq!(modes[m]["uncalibrated"], false, "{}", modes[m]);
        assert_eq!(t["uncalibrated"], false, "{t}");
        let picks: Vec<f64> = rows
            .iter()
            .filter(|r| r["mode"] == m && r["n"] == 2 && r["planner_rank"] == 1)
            .map(|r| r["measured_over_predicted"].as_f64().unwrap_or(f64::NAN))
            .collect();
        let within = picks.iter().filter(|x| (*x - 1.0).abs() <= 0.10).count();
        assert_eq!(t["two_rank_sizes"], picks.len(), "{t}");
        assert_eq!(t["two_rank_within_10pct"], within, "{t}");
        assert_eq!(
            t["two_rank_misses"].as_array().unwrap().len(),
            picks.len() - within
        );
        let paired: Vec<f64> = regret
            .iter()
            .filter(|g| g["mode"] == m)
            .filter_map(|g| g["paired"].as_f64())
            .collect();
        let within = paired.iter().filter(|&&x| x <= 0.05).count();
        assert_eq!(t["paired_entries"], paired.len(), "{t}");
        assert_eq!(t["paired_within_5pct"], within, "{t}");
        assert_eq!(
            t["paired_misses"].as_array().unwrap().len(),
            paired.len() - within
        );
    }
    // The pick for 2 ranks is what `herald plan` ranks first for the runtime with the same
    // profile, in the same transport.
    for bytes in [8usize, 4096] {
        let (first, transport) = plan_first(bytes);
        for g in regret.iter().filter(|g| g["n"] == 2 && g["bytes"] == bytes) {
            assert_eq!(g["pick"], first.as_str(), "{g}");
            assert_eq!(g["pick_transport"], transport.as_str(), "{g}");
        }
    }
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let p = profile();
    let base = ["fidelity", "--profile", p.as_str(), "--force"];
    for extra in [
        &["--ranks", "0"][..],
        &["--ranks", "1"],
        &["--ranks", "2,1"],
        &["--ranks", "x"],
        &["--sizes", "0"],
        &["--sizes", "8,0"],
        &["--slices", "0"],
        &["--top", "0"],
        &["--measure-us", "0"],
        &["--measure-us", "-5"],
        &["--measure-us", "10000001"],
        &["--transport", "carrier-pigeon"],
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        bad_input(&args);
    }
    // The fixture was measured on host "fixture": refused without --force.
    bad_input(&["fidelity", "--profile", &p]);
    bad_input(&["fidelity", "--profile", "/nonexistent/profile.json"]);
    let malformed = std::env::temp_dir().join(format!("herald-fid-{}.json", std::process::id()));
    std::fs::write(&malformed, "{ not json").unwrap();
    bad_input(&[
        "fidelity",
        "--profile",
        malformed.to_str().unwrap(),
        "--force",
    ]);
    let _ = std::fs::remove_file(&malformed);
}
