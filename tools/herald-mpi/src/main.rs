//! `herald-mpi`: herald's schedules, calibration and planner over MPI.
//!
//! Bad input prints one line on stderr and exits with code 2 (on every rank that can speak); a
//! failed run exits 1.

mod cli_bench;
mod cli_calibrate;
mod cli_run;
mod cli_selftest;
mod cli_table;
mod output;

use clap::{Parser, Subcommand};
use herald_mpi::{Error, InitOptions, P2pErrorKind, World};
use std::process::ExitCode;
use std::time::Duration;

/// herald-mpi: herald's broadcast schedules, calibration and planner over MPI.
#[derive(Debug, Parser)]
#[command(name = "herald-mpi", version, about, max_term_width = 100)]
struct Cli {
    /// Seconds a message may make no progress before the run fails (a dead or stuck rank).
    #[arg(long, global = true, default_value_t = 60)]
    timeout: u64,
    /// Do not pin each process to one CPU.
    #[arg(long, global = true)]
    no_pin: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run herald broadcast, reduce or allreduce schedules over MPI point-to-point.
    Run(cli_run::RunArgs),
    /// Measure L, o_s, o_r, g, G and λ between ranks per level into a profile (herald's schema).
    Calibrate(cli_calibrate::CalibrateArgs),
    /// herald against the library's MPI_Bcast and MPI_Allreduce: identical loops, alternating.
    Bench(cli_bench::BenchArgs),
    /// The multi-rank checks (run under mpirun by the tests).
    Selftest(cli_selftest::SelftestArgs),
    /// Print the MPI library this binary is linked to (without starting MPI), and exit.
    Library,
    /// Print `bench --json` files as Markdown tables (without starting MPI).
    Table(cli_table::TableArgs),
}

fn main() -> ExitCode {
    let cli: Cli = match herald_cli_common::parse("herald-mpi") {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match &cli.command {
        Command::Library => {
            println!("{}", herald_mpi::library_line());
            return ExitCode::SUCCESS;
        }
        Command::Table(a) => {
            return match cli_table::run(a) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(None, &Error::Usage(e)),
            }
        }
        _ => {}
    }
    let opts = InitOptions {
        pin: !cli.no_pin,
        timeout: Duration::from_secs(cli.timeout.max(1)),
    };
    let world = match World::init(opts) {
        Ok(w) => w,
        Err(e) => return fail(None, &e),
    };
    // A panic on one rank would leave the others waiting: print it, then end the job.
    let rank = world.rank();
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        herald_cli_common::say(&format!(
            "herald-mpi: rank {rank}: internal error (a bug); aborting the job"
        ));
        default_hook(info);
        herald_mpi::abort_world(101);
    }));
    let result = match &cli.command {
        Command::Run(a) => cli_run::run(&world, a),
        Command::Calibrate(a) => cli_calibrate::run(&world, a),
        Command::Bench(a) => cli_bench::run(&world, a),
        Command::Selftest(a) => cli_selftest::run(&world, a),
        Command::Library | Command::Table(_) => unreachable!("handled before MPI starts"),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Everywhere(e)) => fail(Some(world.rank()), &e),
        Err(Failure::Here(e)) => {
            // Only this rank knows: the others may wait for it forever.
            let _ = fail(Some(world.rank()), &e);
            if let Error::P2p(p) = &e {
                if matches!(
                    p.kind(),
                    P2pErrorKind::Timeout { .. } | P2pErrorKind::Stopped { .. }
                ) {
                    // stop notices are out: give every rank a moment to say why it stops
                    std::thread::sleep(Duration::from_millis(500));
                }
            }
            let code = if e.is_usage() {
                herald_cli_common::USAGE
            } else {
                herald_cli_common::FAILED
            };
            world.abort(i32::from(code))
        }
    }
}

/// How far an error reached.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Every rank has the same error (found before or by agreement): each exits with it.
    Everywhere(Error),
    /// Only this rank may have it (a failed message, a wrong byte): the job is aborted.
    Here(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        match e {
            Error::P2p(_) | Error::Verify(_) => Failure::Here(e),
            e => Failure::Everywhere(e),
        }
    }
}

/// Prints `e` on one line and returns its exit code.
fn fail(rank: Option<usize>, e: &Error) -> ExitCode {
    let who = match rank {
        Some(r) => format!("herald-mpi: rank {r}"),
        None => "herald-mpi".to_owned(),
    };
    herald_cli_common::fail(&who, &e.to_string(), e.is_usage())
}
