//! `herald-mpi bench`: herald against the library's `MPI_Bcast` / `MPI_Allreduce`.

use crate::Failure;
use herald_mpi::bench::{bench, BenchOptions, Collective, HeraldSide, PostChoice, Row, Variant};
use herald_mpi::{Cluster, Error, World};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `herald-mpi bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct BenchArgs {
    /// Which herald: `mpi` (herald's schedules over MPI point-to-point, N processes) or
    /// `inproc` (herald's in-process collectives, N threads of rank 0 on the N ranks' CPUs).
    #[arg(long, default_value = "mpi")]
    herald: String,
    /// Collectives: bcast, allreduce (comma-separated).
    #[arg(long, default_value = "bcast,allreduce")]
    collectives: String,
    /// Loops: loop, pingpong, barrier (comma-separated).
    #[arg(long, default_value = "loop,pingpong,barrier")]
    variants: String,
    /// Payload sizes in bytes (comma-separated; K, M suffixes); default 8 B, 16 B, … 4 MiB.
    #[arg(long)]
    sizes: Option<String>,
    /// Measured rounds per row (each side once per round, alternating which goes first).
    #[arg(long, default_value_t = 11)]
    rounds: usize,
    /// Target milliseconds of one side's round (sets the collectives per round).
    #[arg(long, default_value_t = 4.0)]
    target_ms: f64,
    /// herald over MPI: this algorithm instead of the planner's choice.
    #[arg(long)]
    algo: Option<String>,
    /// herald over MPI: this allreduce instead of the planner's choice (combining,
    /// reduce-bcast, ring, halving).
    #[arg(long, value_name = "ALLREDUCE")]
    allreduce: Option<String>,
    /// herald over MPI: when to post broadcasts and allreduces in an MPI shared window
    /// instead of the planner's trees and allreduces: `auto` (where the profile measured it
    /// faster: `herald-mpi calibrate` with every rank on one node; never with --algo, nor for
    /// allreduces with --allreduce), `adapt` (as `auto`, but where the profile's two times are
    /// within 2× of each other and the faster is 25 µs or more, by timing both ways as the
    /// bench runs, starting on the profile's choice), `never`, or always with slots of `default` (4144) or this many bytes
    /// (every rank must be on one node).
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    post: String,
    /// With --post: slots per rank (how far a root may run ahead of its slowest reader).
    #[arg(long, default_value_t = herald_mpi::post::DEFAULT_SLOTS)]
    post_slots: usize,
    /// With --post: bulk slots per rank, for messages longer than a slot (0: none, every
    /// message in chunks of a slot).
    #[arg(long, default_value_t = herald_mpi::post::DEFAULT_BULK_SLOTS)]
    post_bulk_slots: usize,
    /// With --post: payload bytes of a bulk slot (K, M suffixes).
    #[arg(long, value_name = "BYTES", default_value = "64K")]
    post_bulk_bytes: String,
    /// The MPI profile to plan with (herald over MPI); default: the library's default profile,
    /// else a quick calibration first.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Accept a profile of another schema version.
    #[arg(long)]
    force: bool,
    /// Print one JSON object (rank 0) instead of the table.
    #[arg(long)]
    json: bool,
    /// The number of ranks expected.
    #[arg(short = 'n')]
    n: Option<usize>,
}

/// `8`, `4K`, `1M` → bytes.
fn size(text: &str) -> Result<usize, Error> {
    let t = text.trim();
    let (num, mul) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        _ => (t, 1),
    };
    num.parse::<usize>()
        .map(|v| v * mul)
        .map_err(|_| Error::Usage(format!("--sizes: {text:?} is not a size")))
}

fn list<T: std::str::FromStr<Err = Error>>(text: &str) -> Result<Vec<T>, Error> {
    text.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse())
        .collect()
}

impl BenchArgs {
    fn options(&self) -> Result<BenchOptions, Error> {
        let herald = match self.herald.as_str() {
            "mpi" => HeraldSide::Mpi,
            "inproc" | "in-process" => HeraldSide::Inproc,
            other => return Err(Error::Usage(format!("--herald {other:?}: mpi or inproc"))),
        };
        let sizes = match &self.sizes {
            Some(s) => s.split(',').map(size).collect::<Result<Vec<_>, _>>()?,
            None => BenchOptions::default_sizes(),
        };
        let algo = match &self.algo {
            Some(a) if herald == HeraldSide::Inproc => {
                return Err(Error::Usage(format!(
                    "--algo {a} applies to --herald mpi (in process, herald uses its default)"
                )))
            }
            Some(a) => Some(a.parse().map_err(Error::herald)?),
            None => None,
        };
        let allreduce = match &self.allreduce {
            Some(a) if herald == HeraldSide::Inproc => {
                return Err(Error::Usage(format!(
                    "--allreduce {a} applies to --herald mpi (in process, herald uses its default)"
                )))
            }
            Some(a) => Some(a.parse()?),
            None => None,
        };
        if !(self.target_ms > 0.0 && self.target_ms < 60_000.0) {
            return Err(Error::Usage("--target-ms must be in (0, 60000)".into()));
        }
        Ok(BenchOptions {
            herald,
            collectives: list::<Collective>(&self.collectives)?,
            variants: list::<Variant>(&self.variants)?,
            sizes,
            rounds: self.rounds,
            target: Duration::from_secs_f64(self.target_ms / 1000.0),
            algo,
            allreduce,
            post: match self.post.as_str() {
                "auto" => PostChoice::Auto,
                "adapt" => PostChoice::Adapt,
                "never" => PostChoice::Never,
                b => {
                    let bulk_slot_bytes = size(&self.post_bulk_bytes).map_err(|_| {
                        Error::Usage(format!(
                            "--post-bulk-bytes {:?}: a slot size in bytes",
                            self.post_bulk_bytes
                        ))
                    })?;
                    let slot_bytes = match b {
                        "default" => herald_mpi::post::DEFAULT_SLOT_BYTES,
                        b => size(b).map_err(|_| {
                            Error::Usage(format!(
                                "--post {b:?}: auto, adapt, never, default or a slot size"
                            ))
                        })?,
                    };
                    PostChoice::Always(herald_mpi::post::PostShape {
                        slots: self.post_slots,
                        slot_bytes,
                        bulk_slots: self.post_bulk_slots,
                        bulk_slot_bytes,
                    })
                }
            },
        })
    }
}

fn row_line(r: &Row) -> String {
    let who = match r.collective {
        Collective::Bcast => "bcast",
        Collective::Allreduce => "allreduce",
    };
    let v = match r.variant {
        Variant::Loop => "loop",
        Variant::Pingpong => "pingpong",
        Variant::Barrier => "barrier",
    };
    format!(
        "{:>2} {:>9} {:<9} {:<8} {:>10.2} [{:>9.2}–{:>9.2}] {:>10.2} [{:>9.2}–{:>9.2}] {:>6.3} {:>6}  {}",
        r.n,
        r.bytes,
        who,
        v,
        r.herald_us.median,
        r.herald_us.p10,
        r.herald_us.p90,
        r.mpi_us.median,
        r.mpi_us.p10,
        r.mpi_us.p90,
        r.ratio,
        r.iters,
        r.algorithm
    )
}

/// Runs `herald-mpi bench`.
pub(crate) fn run(world: &World, a: &BenchArgs) -> Result<(), Failure> {
    if let Some(n) = a.n {
        world.expect_size(n)?;
    }
    if world.size() < 2 {
        return Err(Error::Launcher(
            "herald-mpi bench needs at least 2 ranks: start it with mpirun -np N".into(),
        )
        .into());
    }
    let opts = world.agree_result("bench options", a.options())?;
    world.agree(&format!("bench {a:?}"))?;
    let profile = if opts.herald == HeraldSide::Mpi {
        let found = world.agree_result(
            "profile",
            match crate::cli_run::load_mpi_profile(world, a.profile.as_deref(), a.force) {
                Ok(p) => Ok(Some(p)),
                Err(_) if a.profile.is_none() => Ok(None),
                Err(e) => Err(e),
            },
        )?;
        match found {
            Some(p) => Some(p),
            None => {
                if world.rank() == 0 {
                    eprintln!(
                        "herald-mpi: no MPI profile of {}: calibrating (--quick) first; \
                         `herald-mpi calibrate` keeps one",
                        world.library()
                    );
                }
                let p = crate::cli_calibrate::measure(world, true, true, true)?;
                // rank 0 measured it: share it with every rank
                Some(herald_mpi::calibrate::share_profile(world, p.as_ref())?)
            }
        }
    } else {
        None
    };
    let cluster = Cluster::gather(world)?;
    let chan = world.channel()?;
    let me = world.rank();
    if me == 0 && !a.json {
        println!(
            "# herald ({}) against {} — {} ranks; µs per collective, median [p10–p90] over {} \
             rounds; ratio = herald / MPI",
            match opts.herald {
                HeraldSide::Mpi => "over MPI point-to-point",
                HeraldSide::Inproc => "in process: threads of rank 0 on the ranks' CPUs",
            },
            world.library(),
            world.size(),
            opts.rounds
        );
        println!(
            "{:>2} {:>9} {:<9} {:<8} {:>10} {:>22} {:>10} {:>22} {:>6} {:>6}  herald's schedule",
            "n", "bytes", "coll", "variant", "herald", "", "MPI", "", "ratio", "iters"
        );
    }
    let rows = bench(world, &chan, &cluster, profile.as_ref(), &opts, |r| {
        if !a.json {
            println!("{}", row_line(r));
        }
    })?;
    if me == 0 && a.json {
        let out = crate::output::BenchJson {
            library: world.library(),
            n: world.size(),
            herald: opts.herald,
            host: herald::model::host_name(),
            cpu: herald::model::this_cpu(),
            date: herald::calibrate::utc_now(),
            hosts: cluster.hosts(),
            rounds: opts.rounds,
            target_ms: a.target_ms,
            rows: &rows,
        };
        crate::output::print_json(&out)?;
    }
    Ok(())
}
