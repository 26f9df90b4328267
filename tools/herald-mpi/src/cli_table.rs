//! `herald-mpi table FILE…`: `herald-mpi bench --json` output as Markdown tables (no MPI).

use serde_json::Value;
use std::path::PathBuf;

/// Arguments of `herald-mpi table`.
#[derive(Debug, clap::Args)]
pub(crate) struct TableArgs {
    /// Files written by `herald-mpi bench --json`.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

fn number(x: f64) -> String {
    match x {
        x if x >= 1000.0 => format!("{x:.0}"),
        x if x >= 100.0 => format!("{x:.1}"),
        x if x >= 10.0 => format!("{x:.2}"),
        x => format!("{x:.3}"),
    }
}

fn size(b: u64) -> String {
    match b {
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// One file's tables: per collective, a row per size, a column per loop variant.
fn tables(v: &Value) -> Result<String, String> {
    let rows = v["rows"].as_array().ok_or("no rows")?;
    let mut out = format!(
        "{} ranks, {}, herald {}; µs per collective, herald / MPI median (ratio)\n\n",
        v["n"],
        v["library"].as_str().unwrap_or("?"),
        v["herald"].as_str().unwrap_or("?")
    );
    for coll in ["bcast", "allreduce"] {
        let mine: Vec<&Value> = rows.iter().filter(|r| r["collective"] == coll).collect();
        if mine.is_empty() {
            continue;
        }
        let wins = mine
            .iter()
            .filter(|r| r["ratio"].as_f64().is_some_and(|x| x <= 1.0))
            .count();
        out.push_str(&format!(
            "{coll}: herald at least as fast in {wins} of {} rows\n\n",
            mine.len()
        ));
        out.push_str("| bytes | loop | pingpong | barrier |\n|---:|---:|---:|---:|\n");
        let mut sizes: Vec<u64> = mine.iter().filter_map(|r| r["bytes"].as_u64()).collect();
        sizes.sort_unstable();
        sizes.dedup();
        for b in sizes {
            let cells: Vec<String> = ["loop", "pingpong", "barrier"]
                .iter()
                .map(|variant| {
                    mine.iter()
                        .find(|r| r["bytes"].as_u64() == Some(b) && r["variant"] == *variant)
                        .map_or("—".into(), |r| {
                            let h = r["herald_us"]["median"].as_f64().unwrap_or(f64::NAN);
                            let m = r["mpi_us"]["median"].as_f64().unwrap_or(f64::NAN);
                            let ratio = r["ratio"].as_f64().unwrap_or(f64::NAN);
                            format!("{} / {} ({ratio:.2})", number(h), number(m))
                        })
                })
                .collect();
            out.push_str(&format!("| {} | {} |\n", size(b), cells.join(" | ")));
        }
        out.push('\n');
    }
    Ok(out)
}

/// Runs `herald-mpi table`.
pub(crate) fn run(a: &TableArgs) -> Result<(), String> {
    for f in &a.files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", f.display()))?;
        print!(
            "{}",
            tables(&v).map_err(|e| format!("{}: {e}", f.display()))?
        );
    }
    Ok(())
}
