//! `herald`: schedules, checks, runs and measures broadcasts from the command line.
//!
//! Bad input prints one line on stderr and exits with code 2; a failed verification exits 1.

mod bench;
mod bench_loops;
mod calibrate;
mod draw;
mod export;
mod fidelity;
mod output;
mod plan;
mod run;
mod sim;
mod stress;
mod topo;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// How a subcommand failed.
#[derive(Debug)]
pub(crate) enum CliError {
    /// Bad input: one line on stderr, exit code 2.
    Usage(String),
    /// The command ran and found a failure (e.g. `--verify` saw a wrong byte): exit code 1.
    Failed(String),
}

impl CliError {
    /// Bad input from any displayable error.
    pub(crate) fn usage(e: impl std::fmt::Display) -> CliError {
        CliError::Usage(e.to_string())
    }
}

/// Writes `text` to standard output; a pipe closed early (`herald schedule … | head`) ends the
/// output quietly instead of panicking.
pub(crate) fn print_out(text: &str) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::Failed(format!(
            "cannot write to standard output: {e}"
        ))),
        _ => Ok(()),
    }
}

/// herald: optimal broadcast schedules for shared-memory multicores, checked and run for real.
#[derive(Debug, Parser)]
#[command(name = "herald", version, about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Generate a schedule and print it.
    Schedule(sim::ScheduleArgs),
    /// Generate a schedule, check it under the model, and print makespan, lower bound and gap.
    Sim(sim::SimArgs),
    /// Check a schedule written by hand (JSON) under a model.
    Check(sim::CheckArgs),
    /// Show the machine's topology (or a synthetic / XML one) and the rank-to-core maps.
    Topo(topo::TopoArgs),
    /// Run real broadcasts on pinned threads with a generated schedule.
    Run(run::RunArgs),
    /// Rank every candidate broadcast schedule by simulated time under a model.
    Plan(plan::PlanArgs),
    /// Write a schedule in another tool's format (LogGOPSim's GOAL).
    Export(export::ExportArgs),
    /// Draw a schedule: tree, timeline or comparison (SVG, PNG).
    Draw(draw::DrawArgs),
    /// Measure L, o, g, G and λ per level of this machine's hierarchy into a profile.
    Calibrate(calibrate::CalibrateArgs),
    /// Measure herald against raw hardware and peer crates (per-slice ratios).
    Bench(bench::BenchArgs),
    /// Compare the planner's predicted broadcast times with measured ones for several rank
    /// counts, per latency mode, and measure the regret of its pick.
    Fidelity(fidelity::FidelityArgs),
    /// Soak the collectives: random calls, sizes, late ranks and injected panics, every byte
    /// verified; counts corruptions and hangs.
    Stress(stress::StressArgs),
}

fn main() -> ExitCode {
    let cli: Cli = match herald_cli_common::parse("herald") {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match &cli.command {
        Command::Schedule(a) => sim::schedule(a),
        Command::Sim(a) => sim::sim(a),
        Command::Check(a) => sim::check(a),
        Command::Topo(a) => topo::run(a),
        Command::Run(a) => run::run(a),
        Command::Plan(a) => plan::run(a),
        Command::Export(a) => export::run(a),
        Command::Draw(a) => draw::run(a),
        Command::Calibrate(a) => calibrate::run(a),
        Command::Bench(a) => bench::bench(a),
        Command::Fidelity(a) => fidelity::run(a),
        Command::Stress(a) => stress::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Usage(msg)) => herald_cli_common::fail("herald", &msg, true),
        Err(CliError::Failed(msg)) => herald_cli_common::fail("herald", &msg, false),
    }
}
