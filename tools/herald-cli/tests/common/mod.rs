//! Helpers shared by the `herald` binary's tests: run it, read its JSON, check a bad-input exit.

#![allow(dead_code)] // each test binary uses part of this

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `herald` with `args`.
pub(crate) fn herald(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_herald"))
        .args(args)
        .output()
        .expect("herald runs")
}

/// Runs `herald` with `args`, failing if it takes longer than `limit` (then it is killed). A
/// hang detector, not a timing assertion. Both pipes are drained while it runs, so a chatty
/// run cannot block on a full pipe.
pub(crate) fn herald_watched(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_herald"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("herald starts");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("herald {args:?} ran longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
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
    bad_input_with(herald(args), args)
}

/// Asserts that `out`, the output of `herald args…`, is exit code 2 with exactly one line on
/// stderr and no panic, and returns it.
pub(crate) fn bad_input_with(out: Output, args: &[&str]) -> Output {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{args:?}: {err}"
    );
    out
}
