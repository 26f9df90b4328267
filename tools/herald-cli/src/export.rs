//! `herald export`.

use crate::sim::{ModelArgs, ProblemArgs};
use crate::CliError;

/// Arguments of `herald export`.
#[derive(Debug, clap::Args)]
pub(crate) struct ExportArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    problem: ProblemArgs,
    /// Output format: goal (LogGOPSim) or json.
    #[arg(long, default_value = "goal")]
    format: String,
    /// Write to this file instead of standard output.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

/// Runs `herald export`.
pub(crate) fn run(a: &ExportArgs) -> Result<(), CliError> {
    let model = a.model.model()?;
    let schedule = crate::sim::generate_one(&model, &a.problem)?;
    let text = match a.format.as_str() {
        "goal" => schedule
            .to_goal(a.model.bytes())
            .map_err(CliError::usage)?
            .to_text(),
        "json" => format!("{}\n", schedule.to_json()),
        other => {
            return Err(CliError::Usage(format!(
                "unknown format {other:?} (known: goal, json)"
            )))
        }
    };
    match &a.out {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", path.display()))),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}
