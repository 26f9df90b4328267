//! `herald plan`: rank every candidate broadcast by simulated time.

use crate::sim::ModelArgs;
use crate::CliError;
use herald::{plan, PlanRequest};
use serde_json::json;

/// Arguments of `herald plan`.
#[derive(Debug, clap::Args)]
pub(crate) struct PlanArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Number of ranks.
    #[arg(short = 'n')]
    n: u32,
    /// The root rank.
    #[arg(long, default_value_t = 0)]
    root: u32,
    /// Payload bytes (LogGP models try block sizes for it).
    #[arg(long = "bytes", id = "plan_bytes", default_value_t = 64)]
    payload: u64,
    /// Blocks, for models without bytes (postal, oneport).
    #[arg(long)]
    blocks: Option<u32>,
    /// Rows to print (all with --json).
    #[arg(long, default_value_t = 12)]
    top: usize,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Runs `herald plan`.
pub(crate) fn run(a: &PlanArgs) -> Result<(), CliError> {
    let model = a.model.model()?;
    let req = PlanRequest {
        n: a.n,
        root: a.root,
        bytes: a.payload,
        blocks: a.blocks,
    };
    let p = plan(&model, &req).map_err(CliError::usage)?;
    if a.json {
        let rows: Vec<_> = p
            .ranked
            .iter()
            .map(|c| {
                json!({"algorithm": c.algorithm.to_string(), "blocks": c.blocks, "block_bytes": c.block_bytes,
                       "makespan": c.makespan.to_string(), "makespan_f64": c.makespan.to_f64(),
                       "lower_bound": c.lower_bound.to_string(), "sends": c.sends})
            })
            .collect();
        let v = json!({"model": crate::sim::model_json(&model), "n": a.n, "bytes": a.payload,
                       "best": rows.first(), "ranked": rows, "why": p.why(),
                       "rejected": p.rejected.len()});
        println!("{v}");
        return Ok(());
    }
    println!(
        "# n = {}, {} bytes: {} candidates simulated, {} rejected",
        a.n,
        a.payload,
        p.ranked.len() + p.rejected.len(),
        p.rejected.len()
    );
    println!(
        "{:<4} {:<22} {:>6} {:>12} {:>16} {:>12}",
        "rank", "algorithm", "blocks", "block bytes", "makespan", "lower bound"
    );
    for (i, c) in p.ranked.iter().take(a.top).enumerate() {
        println!(
            "{:<4} {:<22} {:>6} {:>12} {:>16} {:>12}",
            i + 1,
            c.algorithm.to_string(),
            c.blocks,
            c.block_bytes,
            c.makespan.to_string(),
            c.lower_bound.to_string()
        );
    }
    println!("why: {}", p.why());
    Ok(())
}
