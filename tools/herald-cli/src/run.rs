//! `herald run`: real broadcasts on pinned threads with a generated schedule.

use crate::output::{self, ModelJson, RunJson, RunModelJson};
use crate::sim::{ModelArgs, ProblemArgs};
use crate::CliError;
use herald::{runtime::Spread, topology::RankMap, Network, Program, Team, TopologySource};
use std::time::Duration;

/// Arguments of `herald run`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    problem: ProblemArgs,
    /// Payload bytes per broadcast (cut into the schedule's m blocks of whole 56-byte lines).
    #[arg(long = "bytes", id = "payload_bytes", default_value_t = 64)]
    payload: usize,
    /// Broadcasts to time.
    #[arg(long, default_value_t = 100)]
    iters: usize,
    /// Check every byte on every rank in every iteration (exit 1 on a mismatch).
    #[arg(long)]
    verify: bool,
    /// Lines per channel ring.
    #[arg(long, default_value_t = 64)]
    capacity: usize,
    /// Rank-to-core map: compact, scatter or list:0,1,… (OS CPU numbers).
    #[arg(long, default_value = "compact")]
    map: String,
    /// Run the planner's choice for this machine under a calibrated profile (what the
    /// collectives use by default) and print its predicted time beside the measured one;
    /// `--algo` and the model flags are ignored.
    #[arg(long, value_name = "FILE")]
    profile: Option<std::path::PathBuf>,
    /// Accept a profile of another host or schema version.
    #[arg(long, requires = "profile")]
    force: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// What is run: the schedule, its name, and the predicted time with its unit.
struct Chosen {
    schedule: herald::Schedule,
    name: String,
    predicted: String,
    predicted_ns: Option<f64>,
    model: RunModelJson,
}

/// The schedule the flags name (a model and `--algo`), or the planner's choice for a profile.
fn choose(a: &RunArgs, hierarchy: &herald::Hierarchy) -> Result<Chosen, CliError> {
    if let Some(path) = &a.profile {
        let profile = herald::model::load_profile(path, a.force).map_err(CliError::usage)?;
        let req = herald::PlanRequest {
            n: a.problem.n(),
            root: a.problem.root(),
            bytes: a.payload as u64,
            blocks: None,
        };
        let (schedule, c) =
            herald::plan::plan_runtime(&profile, hierarchy, &req).map_err(CliError::usage)?;
        return Ok(Chosen {
            schedule,
            name: format!("{} (planned, {} block(s))", c.label, c.blocks),
            predicted: format!("{} ns", c.makespan.decimal()),
            predicted_ns: Some(c.makespan.to_f64()),
            model: RunModelJson::Profile {
                profile: path.display().to_string(),
                host: profile.host,
            },
        });
    }
    let model = a.model.model()?;
    let schedule = crate::sim::generate_one(&model, &a.problem)?;
    let report = herald::check(&schedule, &model).map_err(CliError::usage)?;
    Ok(Chosen {
        schedule,
        name: a.problem.algo_name().to_owned(),
        predicted: format!("{} (model time units)", report.format(report.makespan())),
        predicted_ns: None,
        model: RunModelJson::Flat(ModelJson::of(&model)),
    })
}

/// A payload that differs per iteration (xorshift).
fn payload(buf: &mut [u8], seed: u64) {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for b in buf {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
}

/// Runs `herald run`.
pub(crate) fn run(a: &RunArgs) -> Result<(), CliError> {
    if a.iters == 0 || a.capacity == 0 {
        return Err(CliError::Usage(
            "--iters and --capacity must be at least 1".into(),
        ));
    }
    let hierarchy = TopologySource::Machine.load().map_err(CliError::usage)?;
    let chosen = choose(a, &hierarchy)?;
    let schedule = &chosen.schedule;
    let program = Program::compile(schedule).map_err(CliError::usage)?;
    let n = schedule.n() as usize;
    let root = program.root() as usize;
    let map: RankMap = a.map.parse().map_err(CliError::usage)?;
    let cpus = map.cpus(&hierarchy, n).map_err(CliError::usage)?;
    let mut team = Team::with_cores(cpus.clone()).map_err(CliError::usage)?;
    let mut net = Network::new(program, a.capacity);
    let mut bufs: Vec<Vec<u8>> = vec![vec![0u8; a.payload]; n];
    // Every iteration runs inside one team run (ranks stay awake); each rank checks its own
    // bytes after each broadcast, against the payload regenerated from the iteration's seed.
    let first_bad: std::sync::Mutex<Option<(usize, usize, usize)>> = std::sync::Mutex::new(None);
    let before = |i: usize, r: usize, buf: &mut [u8]| {
        if r == root {
            payload(buf, i as u64 + 1);
        } else if a.verify {
            buf.fill(0);
        }
    };
    let after = |i: usize, r: usize, buf: &[u8]| {
        if !a.verify || r == root {
            return true;
        }
        let mut want = vec![0u8; buf.len()];
        payload(&mut want, i as u64 + 1);
        match buf.iter().zip(&want).position(|(x, y)| x != y) {
            None => true,
            Some(at) => {
                let mut bad = first_bad.lock().unwrap_or_else(|e| e.into_inner());
                bad.get_or_insert((i, r, at));
                false
            }
        }
    };
    let iterations = net
        .iterate(&mut team, &mut bufs, a.iters, before, after)
        .map_err(|e| CliError::Failed(e.to_string()))?;
    if let Some((i, r, at)) = *first_bad.lock().unwrap_or_else(|e| e.into_inner()) {
        return Err(CliError::Failed(format!(
            "iteration {i}: rank {r} differs at byte {at}"
        )));
    }
    let times: Vec<Duration> = iterations.iter().map(|it| it.time()).collect();
    let spread = Spread::of(&times).ok_or_else(|| CliError::Usage("no iterations".into()))?;
    let ns = |d: Duration| d.as_nanos() as u64;
    let pinned = team.placements().iter().filter(|p| p.is_pinned()).count();
    if a.json {
        output::print(&RunJson {
            algorithm: chosen.name.clone(),
            model: chosen.model,
            n,
            m: net.program().blocks(),
            root,
            bytes: a.payload,
            iters: a.iters,
            median_ns: ns(spread.median),
            p10_ns: ns(spread.p10),
            p90_ns: ns(spread.p90),
            verified: a.verify,
            predicted_makespan: chosen.predicted.clone(),
            predicted_ns: chosen.predicted_ns,
            measured_over_predicted: chosen.predicted_ns.map(|p| ns(spread.median) as f64 / p),
            cpus: cpus.clone(),
            pinned,
        })?;
    } else {
        println!(
            "broadcast of {} bytes, n = {n}, {} ({} sends), {} iterations{}",
            a.payload,
            chosen.name,
            schedule.len(),
            a.iters,
            if a.verify {
                ", every byte verified"
            } else {
                ""
            }
        );
        println!("time per broadcast: {spread}");
        match chosen.predicted_ns {
            Some(p) => println!(
                "predicted {}, measured median {:.0} ns: measured/predicted = {:.2}",
                chosen.predicted,
                ns(spread.median) as f64,
                ns(spread.median) as f64 / p
            ),
            None => println!("model prediction: makespan {}", chosen.predicted),
        }
        println!(
            "ranks pinned: {pinned} of {n} (cpus {:?})",
            &cpus[..cpus.len().min(16)]
        );
    }
    Ok(())
}
