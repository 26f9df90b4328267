//! The `herald` binary: output shape, exit codes, one-line errors.

mod common;

use common::{bad_input, herald, json};
use std::path::Path;
use std::process::Output;

/// Runs `herald` with the whitespace-separated words of `line`.
fn herald_line(line: &str) -> Output {
    herald(&line.split_whitespace().collect::<Vec<_>>())
}

/// [`bad_input`] on the whitespace-separated words of `line`.
fn bad_line(line: &str) -> Output {
    bad_input(&line.split_whitespace().collect::<Vec<_>>())
}

/// `check FILE` followed by the whitespace-separated words of `rest`: the arguments of one
/// `herald check` run.
fn check_args<'a>(file: &'a Path, rest: &'a str) -> Vec<&'a str> {
    let mut a = vec!["check", file.to_str().expect("a UTF-8 temporary path")];
    a.extend(rest.split_whitespace());
    a
}

#[test]
fn sim_json_has_the_documented_keys() {
    let v = json(&herald(&[
        "sim", "--model", "postal", "--lambda", "5/2", "-n", "14", "--json",
    ]));
    assert_eq!(
        v["model"],
        serde_json::json!({"name": "postal", "lambda": "5/2"})
    );
    assert_eq!(v["algorithm"], "optimal");
    assert_eq!(v["n"], 14);
    assert_eq!(v["m"], 1);
    assert_eq!(v["legal"], true);
    assert_eq!(v["makespan"], "15/2");
    assert_eq!(v["makespan_f64"], 7.5);
    assert_eq!(v["lower_bound"], "15/2");
    assert_eq!(v["sends"], 13);
    assert_eq!(v["violations"], serde_json::json!([]));
}

#[test]
fn logp_model_json_and_schedule_listing() {
    let v = json(&herald(&[
        "schedule", "--model", "logp", "--L", "6", "--o", "2", "--g", "4", "-n", "8", "--json",
    ]));
    assert_eq!(
        v["model"],
        serde_json::json!({"name": "logp", "L": "6", "o": "2", "g": "4", "G": "0"})
    );
    let rows = v["schedule"].as_array().unwrap();
    assert_eq!(rows.len(), 7);
    for key in ["at", "from", "to", "block"] {
        assert!(rows.iter().all(|r| r.get(key).is_some()), "missing {key}");
    }
    // B(P): information times 0, 10, 14, 18, 20, 22, 24, 24 for L + 2o = 10, step 4
    // (children of t at t + 10 + 4i) — the 8 smallest labels; the last is informed at 24.
    assert_eq!(v["makespan"], "24");
}

#[test]
fn auto_names_its_choice() {
    let out = herald(&[
        "sim", "--model", "postal", "--lambda", "3", "-n", "100", "--algo", "auto",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("auto: optimal"), "{text}");
    assert!(text.contains("candidates"), "{text}");
}

#[test]
fn check_reads_a_hand_written_schedule() {
    let dir = std::env::temp_dir().join(format!("herald-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A 3-rank broadcast under postal λ = 3/2: rank 0 sends to 1 at 0, then `from` sends to 2
    // at 1 (rank 1 is informed only at 3/2).
    let check_postal = |name: &str, from: u32| {
        let file = dir.join(name);
        let text = format!(
            r#"{{"n": 3, "collective": {{"kind": "broadcast", "root": 0, "blocks": 1}},
            "sends": [{{"at": "0", "from": 0, "to": 1}}, {{"at": "1", "from": {from}, "to": 2}}]}}"#
        );
        std::fs::write(&file, text).unwrap();
        json(&herald(&check_args(
            &file,
            "--model postal --lambda 3/2 --json",
        )))
    };
    let v = check_postal("good.json", 0);
    assert_eq!(v["legal"], true);
    assert_eq!(v["makespan"], "5/2");
    let v = check_postal("bad.json", 1);
    assert_eq!(v["legal"], false);
    assert_eq!(v["violations"][0]["rule"], "causality");
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{\"n\": 3,").unwrap();
    bad_input(&check_args(&broken, "--model postal --lambda 2"));
    bad_input(&check_args(
        &dir.join("missing.json"),
        "--model postal --lambda 2",
    ));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    bad_input(&["sim", "--model", "postal", "--lambda", "1/2", "-n", "4"]); // λ < 1
    bad_input(&["sim", "--model", "postal", "--lambda", "2", "-n", "0"]); // n = 0
    bad_input(&[
        "sim", "--model", "postal", "--lambda", "2", "-n", "4", "-m", "0",
    ]); // m = 0
    bad_input(&[
        "sim", "--model", "postal", "--lambda", "2", "-n", "4", "--algo", "nope",
    ]);
    bad_input(&[
        "sim", "--model", "postal", "--lambda", "2", "-n", "4", "--algo", "bp",
    ]); // LogP only
    bad_input(&[
        "sim", "--model", "postal", "--lambda", "2", "-n", "4", "-m", "3",
    ]); // optimal: m = 1
    bad_input(&["sim", "--model", "postal", "--lambda", "two", "-n", "4"]);
    bad_input(&["sim", "--model", "postal", "--lambda", "2", "-n", "-3"]);
    bad_input(&["sim", "--model", "postal", "-n", "4"]); // λ missing
    bad_input(&["sim", "--model", "logp", "--L", "6", "--o", "2", "-n", "4"]); // g missing
    bad_input(&[
        "sim", "--model", "logp", "--L", "0", "--o", "0", "--g", "1", "-n", "4",
    ]);
    bad_input(&["sim", "--model", "nope", "-n", "4"]);
    bad_input(&[
        "sim", "--model", "postal", "--lambda", "2", "-n", "4", "--root", "4",
    ]);
    bad_input(&[
        "sim", "--model", "postal", "--lambda", "2", "-n", "4", "--algo", "knomial", "--radix", "1",
    ]);
    bad_input(&["frobnicate"]);
}

#[test]
fn run_verifies_every_byte_and_rejects_bad_input() {
    for (algo, n, m) in [
        ("binomial", "5", "1"),
        ("optimal", "8", "1"),
        ("chain", "3", "4"),
        ("scatter-allgather", "6", "3"),
    ] {
        let out = herald(&[
            "run", "--model", "postal", "--lambda", "2", "-n", n, "-m", m, "--algo", algo,
            "--bytes", "1000", "--iters", "20", "--verify", "--json",
        ]);
        let v = json(&out);
        assert_eq!(v["verified"], true);
        assert_eq!(v["iters"], 20);
        let ns = |key: &str| {
            v[key]
                .as_u64()
                .unwrap_or_else(|| panic!("{key} missing: {v}"))
        };
        assert!(ns("median_ns") > 0);
        assert!(ns("p10_ns") <= ns("median_ns"));
        assert!(ns("median_ns") <= ns("p90_ns"));
    }
    bad_input(&[
        "run", "--model", "postal", "--lambda", "2", "-n", "4", "--iters", "0",
    ]);
    bad_input(&[
        "run", "--model", "postal", "--lambda", "2", "-n", "4", "--algo", "reduce",
    ]);
    bad_line("run --model postal --lambda 2 -n 4 --map list:0,99999");
}

// ------------------------------------------------ herald plan, hierarchical model

fn profile() -> String {
    format!(
        "{}/../../tests/data/profile-2core.json",
        env!("CARGO_MANIFEST_DIR")
    )
}

const SYNTH: &str = "pack:2 l3:2 core:4 pu:1";

/// `plan --synthetic SYNTH -n N`, then `extra`.
fn plan_args<'a>(n: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["plan", "--synthetic", SYNTH, "-n", n];
    args.extend_from_slice(extra);
    args
}

/// `herald plan` on SYNTH with explicit postal levels, plus `extra` arguments.
fn plan_levels(extra: &[&str]) -> Output {
    let mut args = plan_args(
        "16",
        &[
            "--level",
            "numa=lambda=30",
            "--level",
            "package=lambda=6,w=1",
            "--level",
            "l3=lambda=2",
        ],
    );
    args.extend_from_slice(extra);
    herald(&args)
}

#[test]
fn explicit_levels_rank_every_candidate() {
    let v = json(&plan_levels(&["--json"]));
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
    let out = plan_levels(&[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("# hierarchical postal model"), "{text}");
    assert!(text.contains("why: "), "{text}");
}

/// `herald plan --profile FIXTURE --force --synthetic SYNTH` plus `extra`.
fn plan_profile(extra: &[&str]) -> Output {
    let p = profile();
    let mut args = vec!["plan", "--profile", &p, "--force", "--synthetic", SYNTH];
    args.extend_from_slice(extra);
    herald(&args)
}

/// [`plan_profile`] with `--json` then `extra`, parsed.
fn plan_profile_json(extra: &[&str]) -> serde_json::Value {
    json(&plan_profile(&[&["--json"], extra].concat()))
}

#[test]
fn a_profile_plans_in_nanoseconds_with_stated_assumptions() {
    let v = plan_profile_json(&["-n", "16", "--bytes", "4096"]);
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
    let v = plan_profile_json(&["-n", "8", "--factor", "3"]);
    let text = v["model"]["levels"].to_string();
    assert!(text.contains("assumed: 3 × l3"), "{text}");
}

#[test]
fn a_profile_also_ranks_for_the_runtime_and_plans_more_ranks_than_pus() {
    // The runtime's ranking: every (candidate, transport), fastest first; the fixture measured
    // no single copy, so every row streams.
    let v = plan_profile_json(&["-n", "16", "--bytes", "4096"]);
    let rows = v["runtime"].as_array().unwrap();
    assert!(!rows.is_empty());
    let t: Vec<f64> = rows
        .iter()
        .map(|r| r["predicted_ns"].as_f64().unwrap())
        .collect();
    assert!(t.windows(2).all(|w| w[0] <= w[1]) && t[0] > 0.0, "{t:?}");
    assert!(rows.iter().all(|r| r["transport"] == "stream"));
    // 24 ranks on the synthetic machine's 16 PUs: planned as the runtime would (threads
    // share PUs), not refused.
    let out = plan_profile(&["-n", "24"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("threads share PUs"), "{text}");
}

#[test]
fn bad_hierarchical_input_is_one_line_and_exit_2() {
    let p = profile();
    bad_input(&["plan", "--profile", &p, "--synthetic", SYNTH, "-n", "4"]); // other host
    bad_input(&["plan", "--profile", "/nonexistent.json", "-n", "4"]);
    bad_input(&["plan", "--synthetic", "pack:x", "-n", "4"]);
    bad_input(&plan_args("16", &["--level", "l3=lambda=2"]));
    for extra in [
        &["--level", "bogus"][..],
        &["--level", "nosuch=lambda=2"],
        &["--level", "l3=lambda=0"],
        &["--level", "l3=lambda=2,w=0"],
        &["--level", "l3=L=1,o=1"],
        &["--level", "l3=lambda=2", "--model", "logp"],
        &["--map", "nowhere"],
        &["--level", "l3=lambda=2", "--root", "9"],
    ] {
        bad_input(&plan_args("4", extra));
    }
}

// ------------------------------------------------ herald run --profile, bench

#[test]
fn run_with_a_profile_prints_predicted_and_measured() {
    let p = profile();
    let v = json(&herald(&[
        "run",
        "--profile",
        &p,
        "--force",
        "-n",
        "2",
        "--bytes",
        "4096",
        "--iters",
        "50",
        "--verify",
        "--json",
    ]));
    assert_eq!(v["verified"], true);
    assert!(v["predicted_ns"].as_f64().unwrap() > 0.0);
    assert!(v["measured_over_predicted"].as_f64().unwrap() > 0.0);
    bad_input(&["run", "--profile", "/nonexistent/profile.json", "-n", "2"]);
    // The fixture was measured on host "fixture": refused without --force.
    bad_input(&["run", "--profile", &p, "-n", "2"]);
}

#[test]
fn bench_rejects_bad_input() {
    // herald fidelity: tests/fidelity.rs
    bad_input(&["bench", "hop", "--slices", "0"]);
    bad_input(&["bench", "bcast64", "--algo", "nonsense"]);
    bad_input(&["bench", "nonsense"]);
}

#[test]
fn stress_verifies_every_call_and_counts_injected_panics() {
    let v = json(&herald_line(
        "stress --ranks 3 --seconds 3 --panics --max-bytes 300000 --seed 7 --json",
    ));
    assert_eq!(v["ranks"], 3);
    assert!(v["calls_verified"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["corruptions"], 0, "{v}");
    assert_eq!(v["unexpected_errors"], 0, "{v}");
    assert_eq!(v["hangs"], 0, "{v}");
    // Every planned panic that fired reached the caller; errors come only from them.
    let fired = v["panics_fired"].as_u64().unwrap();
    assert!(fired <= v["panic_epochs"].as_u64().unwrap(), "{v}");
    if fired == 0 {
        assert_eq!(v["errors_surfaced"], 0, "{v}");
    }
    bad_input(&["stress", "--ranks", "0"]);
    bad_input(&["stress", "--seconds", "-1"]);
    bad_input(&["stress", "--hang-seconds", "nan"]);
}

#[test]
fn export_goal_states_its_parameters_and_checks_back() {
    let dir = std::env::temp_dir().join(format!("herald-cli-goal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("sa.goal");
    // issue 20's case, fractional parameters: L = 6, o = 2, g = 4 halved → ×2 for LogGOPSim
    let out = herald(&[
        "export",
        "--model",
        "logp",
        "--L",
        "3",
        "--o",
        "1",
        "--g",
        "2",
        "-n",
        "8",
        "-m",
        "3",
        "--algo",
        "scatter-allgather",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("// herald "), "{text}");
    assert!(text.contains("-L 3 -o 1 -g 2 -G 0 -O 0 -S 65535"), "{text}");
    assert!(text.contains("time unit: 1 GOAL time unit = 1 model time unit"));
    let half = herald(&[
        "export", "--model", "logp", "--L", "3/2", "--o", "1/2", "--g", "1", "-n", "4",
    ]);
    let half = String::from_utf8_lossy(&half.stdout);
    assert!(half.contains("every parameter ×2"), "{half}");
    assert!(half.contains("-L 3 -o 1 -g 2 -G 0"), "{half}");
    // the file checks back under the same model: legal, as generated
    let v = json(&herald(&check_args(
        &file,
        "--model logp --L 3 --o 1 --g 2 --json",
    )));
    assert_eq!(v["legal"], true, "{v}");
    assert_eq!(v["collective"], "broadcast");
    assert_eq!(v["m"], 3);
    assert_eq!(v["goal"]["ranks"], 8);
    // both present (a missing key would be Null on both sides and compare equal)
    assert!(v["busy_until"].is_string(), "{v}");
    assert_eq!(v["busy_until"], v["goal"]["busy_until"]);
    // a GOAL program whose message queues is illegal under herald's rules, legal with queueing
    let chain = dir.join("chain.goal");
    std::fs::write(
        &chain,
        "num_ranks 3\nrank 0 {\nl1: send 1b to 1 tag 0\nl2: send 1b to 1 tag 1\nl2 requires l1\n}\n\
         rank 1 {\nl1: recv 1b from 0 tag 0\nl2: send 1b to 2 tag 0\nl3: recv 1b from 0 tag 1\n\
         l4: send 1b to 2 tag 1\nl2 requires l1\nl3 requires l2\nl4 requires l3\n}\n\
         rank 2 {\nl1: recv 1b from 1 tag 0\nl2: recv 1b from 1 tag 1\nl2 requires l1\n}\n",
    )
    .unwrap();
    let strict = json(&herald(&check_args(
        &chain,
        "--model logp --L 0 --o 2 --g 3 --json",
    )));
    assert_eq!(strict["legal"], false);
    assert_eq!(strict["goal"]["first_violation"]["rule"], "cpu-overlap");
    assert_eq!(strict["goal"]["busy_until"], "12");
    let queued = json(&herald(&check_args(
        &chain,
        "--model logp --L 0 --o 2 --g 3 --json --queue-arrivals",
    )));
    assert_eq!(queued["legal"], true, "{queued}");
    assert_eq!(queued["makespan"], "12");
    assert_eq!(queued["arrivals"], "queued");
    // a program that never finishes: exit 1, one line
    let stuck = dir.join("stuck.goal");
    std::fs::write(
        &stuck,
        "num_ranks 2\nrank 1 {\nl1: recv 1b from 0 tag 0\n}\n",
    )
    .unwrap();
    let out = herald(&check_args(&stuck, "--model logp --L 1 --o 1 --g 1"));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr)
            .trim_end()
            .lines()
            .count(),
        1
    );
    let broken = dir.join("broken.goal");
    std::fs::write(&broken, "num_ranks 2\nrank 0 {\nl1: sned 1b to 1\n}\n").unwrap();
    bad_input(&check_args(&broken, "--model logp --L 1 --o 1 --g 1"));
    bad_input(&check_args(
        &chain,
        "--model logp --L 1 --o 1 --g 1 --root 7",
    ));
    bad_input(&check_args(
        &chain,
        "--format xml --model postal --lambda 2",
    ));
    bad_input(&[
        "export", "--model", "kport", "--ports", "2", "-n", "4", "--algo", "binomial",
    ]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn sim_times_generation_and_check_separately() {
    let out = herald_line("sim --model logp --L 10 --o 1 --g 1 -n 4096 --algo binomial --timings");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    let line = text
        .lines()
        .find(|l| l.starts_with("timings"))
        .expect("a timings line");
    assert!(
        line.contains("generate") && line.contains("check"),
        "{line}"
    );
    assert!(text.contains("busy until"), "{text}");
    let v = json(&herald_line(
        "sim --model logp --L 10 --o 1 --g 1 -n 64 --algo binomial --timings --json",
    ));
    assert!(v["timings"]["generate_s"].is_number() && v["timings"]["check_s"].is_number());
    // the LogGP rule is a named option
    let rule = |r: &'static str| {
        json(&herald_line(&format!(
            "sim --model logp --L 5 --o 3 --g 2 --G 1 --msg-bytes 8 -n 3 --algo star \
             --long-messages {r} --json"
        )))["makespan"]
            .clone()
    };
    assert_eq!(rule("published"), "27");
    assert_eq!(rule("max-gap"), "25");
    bad_line("sim --model logp --L 5 --o 3 --g 2 -n 3 --long-messages fast");
    bad_line("sim --model postal --lambda 2 -n 3 --long-messages published");
}
