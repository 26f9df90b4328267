//! `herald topo`.

use crate::CliError;

/// Arguments of `herald topo`.
#[derive(Debug, clap::Args)]
pub(crate) struct TopoArgs {}

/// Runs `herald topo`.
pub(crate) fn run(_args: &TopoArgs) -> Result<(), CliError> {
    Err(CliError::Usage("herald topo is not built yet".into()))
}
