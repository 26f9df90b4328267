//! `herald plan` with a hierarchical model: explicit levels, a profile, one-line errors.

use std::process::{Command, Output};

fn herald(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_herald"))
        .args(args)
        .output()
        .expect("herald runs")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

fn bad_input(args: &[&str]) {
    let out = herald(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

fn profile() -> String {
    format!(
        "{}/../../tests/data/profile-2core.json",
        env!("CARGO_MANIFEST_DIR")
    )
}

const SYNTH: &str = "pack:2 l3:2 core:4 pu:1";

#[test]
fn explicit_levels_rank_every_candidate() {
    let v = json(&herald(&[
        "plan",
        "--synthetic",
        SYNTH,
        "-n",
        "16",
        "--level",
        "numa=lambda=30",
        "--level",
        "package=lambda=6,w=1",
        "--level",
        "l3=lambda=2",
        "--json",
    ]));
    assert_eq!(v["model"]["name"], "hier");
    assert_eq!(v["model"]["family"], "postal");
    let ranked = v["ranked"].as_array().unwrap();
    assert!(ranked.len() > 10);
    let times: Vec<f64> = ranked
        .iter()
        .map(|r| r["makespan_f64"].as_f64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    assert!(ranked.iter().any(|r| r["algorithm"] == "leaders"));
    assert!(ranked.iter().any(|r| r["algorithm"] == "earliest"));
    let best = &v["best"];
    assert!(v["why"]
        .as_str()
        .unwrap()
        .starts_with(best["label"].as_str().unwrap()));
    // text output: the levels, then the table
    let out = herald(&[
        "plan",
        "--synthetic",
        SYNTH,
        "-n",
        "16",
        "--level",
        "numa=lambda=30",
        "--level",
        "package=lambda=6,w=1",
        "--level",
        "l3=lambda=2",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("# hierarchical postal model"), "{text}");
    assert!(text.contains("why: "), "{text}");
}

#[test]
fn a_profile_plans_in_nanoseconds_with_stated_assumptions() {
    let p = profile();
    let v = json(&herald(&[
        "plan",
        "--profile",
        &p,
        "--force",
        "--synthetic",
        SYNTH,
        "-n",
        "16",
        "--bytes",
        "4096",
        "--json",
    ]));
    assert_eq!(v["unit"], "ns");
    assert_eq!(v["model"]["family"], "logp");
    let sources: Vec<String> = v["model"]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["source"].as_str().unwrap().to_owned())
        .collect();
    assert!(sources.iter().any(|s| s.starts_with("measured")));
    assert!(sources.iter().any(|s| s.starts_with("assumed: 2 × l3")));
    assert!(sources.iter().any(|s| s.starts_with("assumed: 4 × l3")));
    assert!(v["why"].as_str().unwrap().contains(" ns"));
    // --factor changes the assumption
    let v = json(&herald(&[
        "plan",
        "--profile",
        &p,
        "--force",
        "--synthetic",
        SYNTH,
        "-n",
        "8",
        "--factor",
        "3",
        "--json",
    ]));
    let text = v["model"]["levels"].to_string();
    assert!(text.contains("assumed: 3 × l3"), "{text}");
}

#[test]
fn bad_hierarchical_input_is_one_line_and_exit_2() {
    let p = profile();
    bad_input(&["plan", "--profile", &p, "--synthetic", SYNTH, "-n", "4"]); // other host
    bad_input(&["plan", "--profile", "/nonexistent.json", "-n", "4"]);
    bad_input(&["plan", "--synthetic", SYNTH, "-n", "4", "--level", "bogus"]);
    bad_input(&[
        "plan",
        "--synthetic",
        SYNTH,
        "-n",
        "4",
        "--level",
        "nosuch=lambda=2",
    ]);
    bad_input(&[
        "plan",
        "--synthetic",
        SYNTH,
        "-n",
        "4",
        "--level",
        "l3=lambda=0",
    ]);
    bad_input(&[
        "plan",
        "--synthetic",
        SYNTH,
        "-n",
        "4",
        "--level",
        "l3=lambda=2,w=0",
    ]);
    bad_input(&[
        "plan",
        "--synthetic",
        SYNTH,
        "-n",
        "4",
        "--level",
        "l3=L=1,o=1",
    ]);
    bad_input(&[
        "plan",
        "--synthetic",
        SYNTH,
        "-n",
        "16",
        "--level",
        "l3=lambda=2",
    ]);
    bad_input(&["plan", "--synthetic", "pack:x", "-n", "4"]);
    bad_input(&[
        "plan",
        "--synthetic",
        SYNTH,
        "-n",
        "4",
        "--level",
        "l3=lambda=2",
        "--model",
        "logp",
    ]);
    bad_input(&["plan", "--synthetic", SYNTH, "-n", "4", "--map", "nowhere"]);
    bad_input(&[
        "plan",
        "--synthetic",
        SYNTH,
        "-n",
        "4",
        "--level",
        "l3=lambda=2",
        "--root",
        "9",
    ]);
}
