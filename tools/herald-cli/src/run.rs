//! `herald run`.

use crate::CliError;

/// Arguments of `herald run`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {}

/// Runs `herald run`.
pub(crate) fn run(_args: &RunArgs) -> Result<(), CliError> {
    Err(CliError::Usage("herald run is not built yet".into()))
}
