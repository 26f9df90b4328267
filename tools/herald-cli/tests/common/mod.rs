//! Helpers shared by the `herald` binary's tests: run it, read its JSON, check a bad-input exit.

#![allow(dead_code)] // each test binary uses part of this

use std::process::{Command, Output};

/// Runs `herald` with `args`.
pub(crate) fn herald(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_herald"))
        .args(args)
        .output()
        .expect("herald runs")
}

/// Asserts success and parses stdout as one JSON object.
pub(crate) fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

/// Runs `herald` with `args` and parses its JSON.
pub(crate) fn run_json(args: &[&str]) -> serde_json::Value {
    json(&herald(args))
}

/// Runs `herald` with `args`, asserts exit code 2 with exactly one line on stderr and no panic,
/// and returns the output.
pub(crate) fn bad_input(args: &[&str]) -> Output {
    let out = herald(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{args:?}: {err}"
    );
    out
}
