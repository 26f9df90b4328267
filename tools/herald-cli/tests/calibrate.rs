//! `herald calibrate`: exit codes and one-line errors on bad input, stored profiles, and the
//! shape (never the speed) of a real `--quick` run under a watchdog.

mod common;

use common::{herald, herald_watched as with_watchdog};
use std::path::PathBuf;
use std::time::Duration;

/// Asserts exit code 2 with exactly one line on stderr (no panic) and returns that line.
fn bad_input(args: &[&str]) -> String {
    String::from_utf8_lossy(&common::bad_input(args).stderr).into_owned()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("herald-cli-cal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A minimal valid profile of schema `schema` measured on `host`.
fn profile_json(schema: u32, host: &str) -> String {
    serde_json::json!({
        "schema": schema,
        "host": host,
        "date": "2026-01-01T00:00:00Z",
        "tool": "test",
        "mode": "quick",
        "duration_s": 1.0,
        "clock_overhead_ns": 20.0,
        "topology": { "pus": 2, "os_indices": [0, 1], "summary": "machine 1×2", "levels": [] },
        "levels": [],
        "unsettled": []
    })
    .to_string()
}

#[test]
fn bad_input_exits_2_with_one_line() {
    bad_input(&["calibrate", "--bogus"]);
    bad_input(&["calibrate", "--force"]); // --force needs --profile
    bad_input(&["calibrate", "--quick", "--profile", "x.json"]);
    let missing = temp("missing.json");
    let line = bad_input(&["calibrate", "--profile", missing.to_str().unwrap()]);
    assert!(line.contains("cannot access profile"), "{line}");

    let malformed = temp("malformed.json");
    std::fs::write(&malformed, "{ not json").unwrap();
    let line = bad_input(&["calibrate", "--profile", malformed.to_str().unwrap()]);
    assert!(line.contains("malformed profile"), "{line}");
    // Even --force needs a profile.
    bad_input(&[
        "calibrate",
        "--force",
        "--profile",
        malformed.to_str().unwrap(),
    ]);

    let dir = temp("a-directory");
    std::fs::create_dir_all(&dir).unwrap();
    let line = bad_input(&["calibrate", "--quick", "--out", dir.to_str().unwrap()]);
    assert!(line.contains("is a directory"), "{line}");
}

#[test]
fn mismatched_profiles_are_refused_unless_forced() {
    let foreign = temp("foreign.json");
    std::fs::write(&foreign, profile_json(1, "another-host.invalid")).unwrap();
    let line = bad_input(&["calibrate", "--profile", foreign.to_str().unwrap()]);
    assert!(line.contains("another-host.invalid"), "{line}");
    let out = herald(&[
        "calibrate",
        "--json",
        "--force",
        "--profile",
        foreign.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["host"], "another-host.invalid");

    let future = temp("future.json");
    std::fs::write(&future, profile_json(99, &herald::model::host_name())).unwrap();
    let line = bad_input(&["calibrate", "--profile", future.to_str().unwrap()]);
    assert!(line.contains("schema version 99"), "{line}");
    let out = herald(&[
        "calibrate",
        "--force",
        "--profile",
        future.to_str().unwrap(),
    ]);
    assert!(out.status.success());
}

#[test]
fn quick_run_has_the_profile_shape() {
    let out_file = temp("quick.json");
    let out = with_watchdog(
        &[
            "calibrate",
            "--quick",
            "--json",
            "--out",
            out_file.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["schema"], 1);
    assert_eq!(v["mode"], "quick");
    assert_eq!(v["host"], herald::model::host_name());
    // The processor it ran on, as this machine names it (absent where it names none).
    match herald::model::this_cpu() {
        Some(cpu) => assert_eq!(v["cpu"], serde_json::to_value(&cpu).unwrap()),
        None => assert!(v.get("cpu").is_none()),
    }
    assert!(v["date"].as_str().unwrap().ends_with('Z'));
    let levels = v["levels"].as_array().unwrap();
    assert!(!levels.is_empty());
    let measured: Vec<&serde_json::Value> =
        levels.iter().filter(|l| !l["lambda"].is_null()).collect();
    if v["topology"]["pus"].as_u64().unwrap() >= 2 {
        assert!(!measured.is_empty(), "no level measured: {v:#}");
    }
    for level in &measured {
        for key in ["raw_hop_ns", "one_way_ns", "o_s_ns", "o_r_ns", "lambda"] {
            let d = &level[key];
            let stat = |s: &str| d[s].as_f64().unwrap_or(f64::NAN);
            let (p10, median, p90) = (stat("p10"), stat("median"), stat("p90"));
            assert!(
                p10.is_finite() && p10 <= median && median <= p90 && p90.is_finite(),
                "{}.{key} = {p10} … {median} … {p90}",
                level["name"]
            );
            // Times measured directly are positive; the overheads are fitted differences of
            // round trips, whose lower slices can dip below 0 by noise (−1.6 ns seen under load).
            if !key.starts_with("o_") {
                assert!(p10 > 0.0, "{}.{key}.p10 = {p10}", level["name"]);
            }
            assert!(!d["modes"].as_array().unwrap().is_empty());
            let share: f64 = d["modes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["share"].as_f64().unwrap())
                .sum();
            assert!((share - 1.0).abs() < 1e-9);
        }
        for key in ["L_ns", "g_ns", "G_ns_per_byte"] {
            assert!(level[key]["median"].is_f64(), "{key}");
        }
        assert!(level["lambda"]["median"].as_f64().unwrap() >= 1.0);
        assert!(level.get("capacity").is_some());
    }
    // The saved file is the same profile, and readable by --profile.
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(saved, v);
    let shown = herald(&["calibrate", "--profile", out_file.to_str().unwrap()]);
    // Failed once (seventy-second session, in a full workspace run) and not in eight runs by
    // hand: say why if it does again.
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    assert!(String::from_utf8_lossy(&shown.stdout).contains("calibration of"));
}
