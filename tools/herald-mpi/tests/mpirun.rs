//! herald-mpi under `mpirun`: `cargo test` cannot create ranks, so these tests start the
//! `herald-mpi` binary with the launcher of the MPI library it is linked to (`herald-mpi
//! library` names it; `HERALD_MPIRUN` overrides), each run under a watchdog: a run that does not
//! end in time is killed (with its whole process group) and the test fails as a hang.
//!
//! The multi-rank correctness checks live in `herald-mpi selftest` (every byte of every
//! broadcast, every reduce and allreduce sum, hierarchical runs, a short calibration and bench);
//! here it runs on 2 ranks and on 4 (more ranks than this machine's CPUs), and the bad inputs
//! are tried: a launcher of the other MPI, a world of one where more ranks are expected,
//! arguments that differ between ranks, a rank that dies, a rank that stops answering.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_herald-mpi");

/// The outcome of one run.
#[derive(Debug)]
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `program args` in its own process group; kills the group after `limit`.
fn run_limited(program: &str, args: &[&str], limit: Duration) -> Out {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().unwrap_or_else(|e| {
        panic!("cannot start {program}: {e} (is MPI installed? scripts/setup.sh)")
    });
    let mut so = child.stdout.take().expect("piped");
    let mut se = child.stderr.take().expect("piped");
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code();
        }
        if start.elapsed() > limit {
            let _ = Command::new("kill")
                .args(["-9", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            panic!(
                "{program} {args:?} did not end within {limit:?} (a hang); stderr so far: {}",
                t_err.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Out {
        code,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
    }
}

/// This binary's MPI library and its launcher with the flags it needs here.
fn launcher() -> (String, Vec<&'static str>) {
    let lib = run_limited(BIN, &["library"], Duration::from_secs(30)).stdout;
    let default = if lib.contains("Open MPI") {
        "mpirun.openmpi"
    } else if lib.contains("MPICH") {
        "mpirun.mpich"
    } else {
        "mpirun"
    };
    let prog = std::env::var("HERALD_MPIRUN").unwrap_or_else(|_| default.to_owned());
    let flags = if lib.contains("Open MPI") {
        vec!["--oversubscribe"]
    } else {
        vec![]
    };
    (prog, flags)
}

/// Runs of `mpirun` share the machine's CPUs; a calibration measures them and is given them to
/// itself: other runs take this lock shared, a calibration exclusively. (Once, in a CI run of
/// the fifty-first session, the calibration beside other runs fitted `G` = 0 ns/byte and the
/// profile check below failed; nine calibrations beside one or two selftests did not repeat it.
/// The check prints the profile if it fails again.)
static CPUS: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// `mpirun -np n herald-mpi args…` under a watchdog, beside other such runs.
fn mpirun(n: usize, args: &[&str], limit: Duration) -> Out {
    let _shared = CPUS.read().unwrap_or_else(|e| e.into_inner());
    launch(n, args, limit)
}

/// `mpirun -np n herald-mpi args…` under a watchdog, with no other such run at the same time.
fn mpirun_alone(n: usize, args: &[&str], limit: Duration) -> Out {
    let _alone = CPUS.write().unwrap_or_else(|e| e.into_inner());
    launch(n, args, limit)
}

fn launch(n: usize, args: &[&str], limit: Duration) -> Out {
    let (prog, flags) = launcher();
    let np = n.to_string();
    let mut all: Vec<&str> = flags;
    all.extend(["-np", &np, BIN]);
    all.extend(args);
    run_limited(&prog, &all, limit)
}

fn lines_with(text: &str, needle: &str) -> usize {
    text.lines().filter(|l| l.contains(needle)).count()
}

#[test]
fn selftest_on_two_ranks() {
    let out = mpirun(2, &["selftest"], Duration::from_secs(240));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("selftest passed on 2 ranks"), "{out:?}");
}

#[test]
fn selftest_on_four_ranks_oversubscribed() {
    let out = mpirun(4, &["selftest"], Duration::from_secs(300));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("selftest passed on 4 ranks"), "{out:?}");
}

#[test]
fn run_verifies_every_byte_and_reports_json() {
    let out = mpirun(
        3,
        &[
            "run", "--algo", "optimal", "-m", "4", "--bytes", "100000", "--iters", "20",
            "--verify", "--json", "-n", "3",
        ],
        Duration::from_secs(120),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).expect("one JSON object");
    assert_eq!(v["n"], 3);
    assert_eq!(v["m"], 4);
    assert_eq!(v["verified"], true);
    assert!(v["median_ns"].as_f64().is_some_and(|x| x > 0.0));
}

#[test]
fn allreduce_sizes_must_be_whole_elements_on_every_rank() {
    let out = mpirun(
        2,
        &["run", "--algo", "allreduce", "--bytes", "12"],
        Duration::from_secs(60),
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        lines_with(&out.stderr, "a positive multiple of 8"),
        2,
        "{out:?}"
    );
}

#[test]
fn an_unknown_allreduce_is_a_usage_error_on_every_rank() {
    let out = mpirun(
        2,
        &["bench", "--allreduce", "tree", "--sizes", "8"],
        Duration::from_secs(60),
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(lines_with(&out.stderr, "unknown allreduce"), 2, "{out:?}");
}

#[test]
fn a_world_of_one_where_more_ranks_are_expected_is_refused() {
    // started without mpirun: a singleton world
    let out = run_limited(
        BIN,
        &["run", "-n", "2", "--algo", "binomial"],
        Duration::from_secs(60),
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("expected 2 ranks, the MPI world has 1"),
        "{out:?}"
    );
}

#[test]
fn the_other_mpis_launcher_is_named() {
    let lib = run_limited(BIN, &["library"], Duration::from_secs(30)).stdout;
    let other = if lib.contains("Open MPI") {
        "mpirun.mpich"
    } else {
        "mpirun.openmpi"
    };
    if Command::new(other).arg("--version").output().is_err() {
        panic!("{other} is not installed: scripts/setup.sh installs both Open MPI and MPICH");
    }
    let mut args = vec![];
    if other == "mpirun.openmpi" {
        args.push("--oversubscribe");
    }
    args.extend(["-np", "2", BIN, "run", "--algo", "binomial"]);
    let out = run_limited(other, &args, Duration::from_secs(60));
    assert_ne!(out.code, Some(0), "{out:?}");
    assert_eq!(
        lines_with(&out.stderr, "started by another MPI's mpirun"),
        2,
        "{out:?}"
    );
}

#[test]
fn arguments_that_differ_between_ranks_fail_on_every_rank() {
    let (prog, flags) = launcher();
    let mut args: Vec<&str> = flags.clone();
    args.extend([
        "-np", "1", BIN, "run", "--algo", "binomial", "--bytes", "8", ":",
    ]);
    args.extend(flags);
    args.extend([
        "-np", "1", BIN, "run", "--algo", "binomial", "--bytes", "16",
    ]);
    let out = run_limited(&prog, &args, Duration::from_secs(60));
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(lines_with(&out.stderr, "ranks disagree"), 2, "{out:?}");
    assert!(out.stderr.contains("bytes=16"), "{out:?}");
}

#[test]
fn a_rank_that_dies_ends_the_job() {
    let out = mpirun(
        3,
        &["--timeout", "10", "selftest", "--die", "1"],
        Duration::from_secs(60),
    );
    assert!(out.code != Some(0), "{out:?}");
    assert!(out.stderr.contains("rank 1: selftest --die"), "{out:?}");
}

#[test]
fn a_rank_that_stops_answering_is_reported_by_the_others() {
    let out = mpirun(
        3,
        &["--timeout", "3", "selftest", "--stall", "1"],
        Duration::from_secs(60),
    );
    assert!(out.code != Some(0), "{out:?}");
    // in the chain 0 → 1 → 2, rank 2 waits for a message from rank 1, rank 0 for its sends to
    // rank 1: each reports what it waited for (the first to time out tells the other)
    assert!(said(&out, 2, "message from rank 1"), "{out:?}");
    assert!(said(&out, 0, "message to rank 1"), "{out:?}");
}

#[test]
fn a_reader_that_stops_answering_a_posted_broadcast_is_reported() {
    let out = mpirun(
        3,
        &["--timeout", "3", "selftest", "--stall", "1", "--posted"],
        Duration::from_secs(60),
    );
    assert!(out.code != Some(0), "{out:?}");
    // the root runs ahead of rank 1 until its slots are full, then waits for it and names it;
    // rank 2 waits for the root's next post and hears why it stops
    assert!(said(&out, 0, "rank 1 to read an earlier post"), "{out:?}");
    assert!(said(&out, 2, "posted broadcast from rank 0"), "{out:?}");
}

#[test]
fn a_rank_that_stops_answering_a_posted_allreduce_is_named_by_the_others() {
    let out = mpirun(
        3,
        &[
            "--timeout",
            "3",
            "selftest",
            "--stall",
            "1",
            "--posted",
            "allreduce",
        ],
        Duration::from_secs(60),
    );
    assert!(out.code != Some(0), "{out:?}");
    // ranks 0 and 2 wait for rank 1's part of the 11th allreduce: one times out, the other
    // times out too or hears the stop notice, and both name what they waited for
    for r in [0, 2] {
        assert!(
            said(&out, r, "rank 1's part of a posted allreduce"),
            "{out:?}"
        );
    }
}

#[test]
fn a_rank_that_stops_answering_inside_a_library_collective_ends_the_job() {
    let out = mpirun(
        3,
        &["--timeout", "3", "selftest", "--stall", "1", "--in-library"],
        Duration::from_secs(60),
    );
    assert!(out.code != Some(0), "{out:?}");
    // ranks 0 and 2 wait in MPI_Barrier, which cannot be polled: their watchdogs end the job
    // after the timeout and a second; the first to fire says so (the abort may end the other
    // before it can)
    let told = |r| said(&out, r, "waited 4 s in MPI_Barrier");
    assert!(told(0) || told(2), "{out:?}");
    assert!(!said(&out, 1, "waited"), "{out:?}");
}

/// Whether rank `rank` wrote a line of stderr containing `what`.
fn said(out: &Out, rank: usize, what: &str) -> bool {
    out.stderr
        .lines()
        .any(|l| l.starts_with(&format!("herald-mpi: rank {rank}:")) && l.contains(what))
}

#[test]
fn calibration_writes_a_profile_herald_and_run_read() {
    let path = std::env::temp_dir().join(format!("herald-mpi-test-{}.json", std::process::id()));
    let p = path.to_str().expect("utf-8 temp path");
    let out = mpirun_alone(
        2,
        &["calibrate", "--quick", "--out", p],
        Duration::from_secs(120),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let text = std::fs::read_to_string(&path).expect("profile written");
    let profile = herald::Profile::from_json(&text).expect("herald reads it");
    let measured: Vec<&str> = profile.measured_levels().map(|l| l.name.as_str()).collect();
    assert!(!measured.is_empty(), "no measured level: {text}");
    for l in profile.measured_levels() {
        let one_way = l.one_way_ns.as_ref().expect("one-way time").median;
        assert!(
            one_way.is_finite() && one_way > 0.0,
            "{}: {one_way}",
            l.name
        );
        assert!(
            l.logp(herald::model::Pick::Dominant).is_ok(),
            "{} converts to LogGP",
            l.name
        );
    }
    // A schedule named with `--algo` is generated and predicted under the profile's model, its
    // messages of the payload's size and its combines at the profile's measured cost: a 2-rank
    // broadcast of 1 MiB is predicted later than one of 8 B by at least the level's G for every
    // further byte, and an allreduce of 1 MiB (each rank receives the other's value and adds
    // it) later than the broadcast by at least the combine of 1 MiB.
    let named = |algo: &str, bytes: &str| {
        let out = mpirun(
            2,
            &[
                "run",
                "--algo",
                algo,
                "--profile",
                p,
                "--bytes",
                bytes,
                "--iters",
                "3",
                "--verify",
                "--json",
            ],
            Duration::from_secs(120),
        );
        assert_eq!(out.code, Some(0), "{out:?}");
        let v: serde_json::Value =
            serde_json::from_str(out.stdout.trim()).expect("one JSON object");
        v["predicted_ns"]
            .as_f64()
            .unwrap_or_else(|| panic!("{algo} of {bytes} B: no prediction: {v}"))
    };
    let (small, big) = (named("binomial", "8"), named("binomial", "1048576"));
    let levels: Vec<_> = profile.measured_levels().collect();
    assert_eq!(levels.len(), 1, "two ranks meet at one level: {measured:?}");
    let big_g = levels[0]
        .logp(herald::model::Pick::Dominant)
        .expect("LogGP")
        .big_g()
        .to_f64();
    assert!(
        big - small >= (1_048_576.0 - 8.0) * big_g * (1.0 - 1e-9) && big > small,
        "1 MiB predicted {big} ns, 8 B {small} ns, G = {big_g} ns/B; profile: {text}"
    );
    let combine = profile
        .combine_ns(1 << 20, herald::model::Pick::Dominant)
        .expect("calibrate measures the combine");
    let allreduce = named("allreduce", "1048576");
    assert!(
        allreduce >= big + combine - 1.0,
        "allreduce {allreduce} ns, broadcast {big} ns, combine {combine} ns"
    );
    // `run --profile` plans with it: flat (the planner's choice among 3 processes) …
    let flat = mpirun(
        3,
        &[
            "run",
            "--profile",
            p,
            "--bytes",
            "20000",
            "--iters",
            "10",
            "--verify",
            "--json",
        ],
        Duration::from_secs(120),
    );
    // … and hierarchical: 2 processes of 2 threads, MPI between the leaders, herald inside
    // (the thread costs from the 2-core fixture profile of herald's own tests)
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/profile-2core.json"
    );
    let hier = mpirun(
        2,
        &[
            "run",
            "--threads",
            "2",
            "--profile",
            p,
            "--thread-profile",
            fixture,
            "--force",
            "--bytes",
            "10000",
            "--iters",
            "10",
            "--root",
            "3",
            "--verify",
            "--json",
        ],
        Duration::from_secs(120),
    );
    // `run --adapt` and `bench --post adapt` time posting against the planner's tree at 4 MiB
    // and take both ways: the class's first try runs from its 33rd call and is settled at the
    // end of its seventh epoch (about its 58th call; agreements are two late). A class is
    // timed where the profile's two times are close (within 2×) and long (25 µs): so the
    // calibrated tree times are set to the posted ones (a broadcast of 4 MiB takes more than
    // 25 µs on any machine: 160 GB/s)
    let close = path.with_extension("close.json");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("profile JSON");
    for table in ["posted", "posted_allreduce"] {
        for point in v[table].as_array_mut().expect("posted points") {
            point["tree_ns"] = point["posted_ns"].clone();
        }
    }
    std::fs::write(&close, v.to_string()).expect("profile written");
    let pc = close.to_str().expect("utf-8 temp path");
    let adapt = mpirun(
        2,
        &[
            "run",
            "--profile",
            pc,
            "--adapt",
            "--bytes",
            "4194304",
            "--iters",
            "80",
            "--verify",
            "--json",
        ],
        Duration::from_secs(120),
    );
    let bench = mpirun(
        2,
        &[
            "bench",
            "--profile",
            pc,
            "--post",
            "adapt",
            "--collectives",
            "bcast,allreduce",
            "--sizes",
            "4M",
            "--variants",
            "pingpong",
            "--rounds",
            "2",
            "--json",
        ],
        Duration::from_secs(120),
    );
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&close);
    assert_eq!(adapt.code, Some(0), "{adapt:?}");
    let v: serde_json::Value = serde_json::from_str(adapt.stdout.trim()).expect("one JSON object");
    assert_eq!(v["verified"], true, "{v}");
    let algorithm = v["algorithm"].as_str().unwrap_or_default();
    let tries = algorithm
        .split(" of ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse::<u32>().ok());
    assert!(
        algorithm.contains("chosen by timing") && tries.is_some_and(|t| t >= 1),
        "{v}"
    );
    assert_eq!(bench.code, Some(0), "{bench:?}");
    let v: serde_json::Value = serde_json::from_str(bench.stdout.trim()).expect("one JSON object");
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2, "{v}");
    for row in rows {
        assert!(
            row["algorithm"]
                .as_str()
                .is_some_and(|a| a.contains("chosen by timing")),
            "{row}"
        );
    }
    assert_eq!(flat.code, Some(0), "{flat:?}");
    let v: serde_json::Value = serde_json::from_str(flat.stdout.trim()).expect("one JSON object");
    assert_eq!(
        (v["n"].as_u64(), v["verified"].as_bool()),
        (Some(3), Some(true)),
        "{v}"
    );
    assert!(v["predicted_ns"].as_f64().is_some_and(|x| x > 0.0), "{v}");
    assert_eq!(hier.code, Some(0), "{hier:?}");
    let v: serde_json::Value = serde_json::from_str(hier.stdout.trim()).expect("one JSON object");
    assert_eq!(v["hierarchical"], true, "{v}");
    assert_eq!(
        (v["n"].as_u64(), v["root"].as_u64()),
        (Some(4), Some(3)),
        "{v}"
    );
    assert_eq!(v["verified"], true, "{v}");
    assert!(
        v["algorithm"]
            .as_str()
            .is_some_and(|a| a.starts_with("leaders(")),
        "{v}"
    );
}
