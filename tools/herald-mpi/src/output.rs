//! The `--json` outputs of `herald-mpi run` and `bench`, typed: each field is one JSON key
//! (docs/cli-json.md lists them with their meaning).

use herald::runtime::Spread;
use herald_mpi::bench::{HeraldSide, Row};
use herald_mpi::Error;
use serde::Serialize;
use std::time::Duration;

/// Prints `v` as one line of JSON.
pub(crate) fn print_json(v: &impl Serialize) -> Result<(), Error> {
    let text =
        serde_json::to_string(v).map_err(|e| Error::Herald(format!("cannot write JSON: {e}")))?;
    println!("{text}");
    Ok(())
}

/// A run's time per collective over its iterations: the slowest rank's, in ns.
#[derive(Debug, Serialize)]
pub(crate) struct TimesNs {
    /// Median.
    pub(crate) median_ns: f64,
    /// 10th percentile (nearest rank).
    pub(crate) p10_ns: f64,
    /// 90th percentile (nearest rank).
    pub(crate) p90_ns: f64,
}

impl TimesNs {
    pub(crate) fn of(s: &Spread) -> TimesNs {
        let ns = |d: Duration| d.as_nanos() as f64;
        TimesNs {
            median_ns: ns(s.median),
            p10_ns: ns(s.p10),
            p90_ns: ns(s.p90),
        }
    }
}

/// What every `herald-mpi run --json` reports.
#[derive(Debug, Serialize)]
pub(crate) struct RunJson {
    /// `broadcast`, `reduce`, `allreduce`.
    pub(crate) collective: &'static str,
    /// herald's schedule, in words.
    pub(crate) algorithm: String,
    /// Ranks.
    pub(crate) n: usize,
    /// The root.
    pub(crate) root: u32,
    /// Payload bytes.
    pub(crate) bytes: usize,
    /// Timed iterations.
    pub(crate) iters: usize,
    /// Every byte checked on every rank in every iteration.
    pub(crate) verified: bool,
    /// The MPI library.
    pub(crate) library: String,
    /// Time per collective.
    #[serde(flatten)]
    pub(crate) times: TimesNs,
}

/// `herald-mpi run --json` over MPI processes alone.
#[derive(Debug, Serialize)]
pub(crate) struct FlatRunJson {
    #[serde(flatten)]
    pub(crate) run: RunJson,
    /// Blocks (1 for reduce and allreduce).
    pub(crate) m: u32,
    /// The model's makespan in ns, when the schedule was planned from a profile.
    pub(crate) predicted_ns: Option<f64>,
    /// `median_ns / predicted_ns`.
    pub(crate) measured_over_predicted: Option<f64>,
}

/// `herald-mpi run --threads T --json`: processes of herald threads.
#[derive(Debug, Serialize)]
pub(crate) struct HierRunJson {
    #[serde(flatten)]
    pub(crate) run: RunJson,
    /// Always `true`.
    pub(crate) hierarchical: bool,
    /// MPI processes.
    pub(crate) processes: usize,
    /// herald threads per process.
    pub(crate) threads: usize,
    /// Blocks of the chosen schedule.
    pub(crate) blocks: u32,
    /// The best candidate of all (when another was chosen), in words.
    pub(crate) overall_best: Option<String>,
    /// Its makespan in ns.
    pub(crate) overall_best_ns: Option<f64>,
    /// The cost between processes (MPI), as herald writes a level cost.
    pub(crate) mpi_cost: Option<String>,
    /// Where it comes from.
    pub(crate) mpi_cost_source: String,
    /// The cost between threads of one process.
    pub(crate) thread_cost: Option<String>,
    /// Where it comes from.
    pub(crate) thread_cost_source: String,
    /// The model's makespan in ns.
    pub(crate) predicted_ns: f64,
    /// `median_ns / predicted_ns`.
    pub(crate) measured_over_predicted: f64,
}

/// `herald-mpi bench --json`.
#[derive(Debug, Serialize)]
pub(crate) struct BenchJson<'a> {
    /// The MPI library.
    pub(crate) library: &'a str,
    /// Ranks.
    pub(crate) n: usize,
    /// Which herald ran: over MPI or in process.
    pub(crate) herald: HeraldSide,
    /// Rank 0's host.
    pub(crate) host: String,
    /// Rank 0's processor (absent where the system does not name it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cpu: Option<herald::model::CpuIdentity>,
    /// When (RFC 3339, UTC).
    pub(crate) date: String,
    /// The job's hosts.
    pub(crate) hosts: &'a [String],
    /// Measured rounds per row.
    pub(crate) rounds: usize,
    /// Target time of one round (ms).
    pub(crate) target_ms: f64,
    /// The rows.
    pub(crate) rows: &'a [Row],
}
