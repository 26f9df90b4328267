//! `herald-mpi calibrate`: `L, o_s, o_r, g, G` and λ between ranks, per level, into a profile.

use crate::Failure;
use herald::{
    model::{Distribution, Pick},
    Profile,
};
use herald_mpi::calibrate::{calibrate, default_profile_path, CalibrateOptions};
use herald_mpi::{Cluster, Error, World};
use std::path::PathBuf;

/// Arguments of `herald-mpi calibrate`.
#[derive(Debug, clap::Args)]
pub(crate) struct CalibrateArgs {
    /// 2 to 8 s of measuring instead of 30 to 90 s.
    #[arg(long)]
    quick: bool,
    /// Where rank 0 writes the profile (default: HERALD_MPI_PROFILE, else beside herald's
    /// profile: ~/.cache/herald/mpi-openmpi.json or mpi-mpich.json).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print the profile as JSON (rank 0).
    #[arg(long)]
    json: bool,
    /// Do not measure message pieces: every message goes whole.
    #[arg(long)]
    no_pieces: bool,
    /// Do not measure broadcasts posted in a shared window: herald-mpi then never posts.
    #[arg(long)]
    no_posted: bool,
}

/// Measures the job (collective), or fails on every rank alike.
pub(crate) fn measure(
    world: &World,
    quick: bool,
    pieces: bool,
    posted: bool,
) -> Result<Option<Profile>, Failure> {
    if world.size() < 2 {
        return Err(Error::Launcher(
            "herald-mpi calibrate needs at least 2 ranks: start it with mpirun -np N".into(),
        )
        .into());
    }
    let cluster = Cluster::gather(world)?;
    let chan = world.channel()?;
    let opts = CalibrateOptions {
        pieces,
        posted,
        ..if quick {
            CalibrateOptions::quick()
        } else {
            CalibrateOptions::full()
        }
    };
    Ok(calibrate(world, &chan, &cluster, &opts, |_| {})?)
}

/// Runs `herald-mpi calibrate`.
pub(crate) fn run(world: &World, a: &CalibrateArgs) -> Result<(), Failure> {
    world.agree(&format!(
        "calibrate quick={} out={:?} no_pieces={} no_posted={}",
        a.quick, a.out, a.no_pieces, a.no_posted
    ))?;
    let out = match &a.out {
        Some(p) => Some(p.clone()),
        None => default_profile_path(world.library()),
    };
    let out = world.agree_result(
        "output",
        out.ok_or_else(|| Error::Usage("no cache directory: give --out FILE".into())),
    )?;
    let Some(profile) = measure(world, a.quick, !a.no_pieces, !a.no_posted)? else {
        return Ok(()); // not rank 0
    };
    herald::model::save_profile(&profile, &out).map_err(|e| Failure::Here(Error::herald(e)))?;
    if a.json {
        println!("{}", profile.to_json());
    } else {
        print!("{}", table(&profile));
    }
    eprintln!("profile saved to {}", out.display());
    Ok(())
}

fn cell(d: &Option<Distribution>, digits: usize) -> String {
    match d {
        None => "—".into(),
        Some(d) => {
            let mut s = format!(
                "{:.digits$} [{:.digits$}–{:.digits$}]",
                d.median, d.p10, d.p90
            );
            if d.is_multimodal() {
                let m: Vec<String> = d
                    .modes
                    .iter()
                    .map(|m| format!("{:.digits$}@{:.0}%", m.center, 100.0 * m.share))
                    .collect();
                s.push_str(&format!(" modes {}", m.join(" ")));
            }
            s
        }
    }
}

/// The profile as a table, one block per measured level.
pub(crate) fn table(p: &Profile) -> String {
    let mut out = format!(
        "MPI calibration by {} ({} mode, {:.1} s)\ntopology: {}\n",
        p.tool, p.mode, p.duration_s, p.topology.summary
    );
    for l in &p.levels {
        if l.lambda.is_none() {
            continue;
        }
        out.push_str(&format!(
            "level {} (depth {}), {} slices\n",
            l.name, l.depth, l.slices
        ));
        for (name, d, digits) in [
            ("empty-message hop ns", &l.raw_hop_ns, 0),
            ("one-way ns", &l.one_way_ns, 0),
            ("L ns", &l.l_ns, 0),
            ("o_s ns", &l.o_s_ns, 0),
            ("o_r ns", &l.o_r_ns, 0),
            ("g ns", &l.g_ns, 0),
            ("G ns/byte", &l.big_g_ns_per_byte, 3),
            ("λ", &l.lambda, 2),
        ] {
            out.push_str(&format!("  {name:<22} {}\n", cell(d, digits)));
        }
        if let Ok(m) = l.logp(Pick::Dominant) {
            let whole = m.whole_gap().map_or(String::new(), |(above, g)| {
                format!(", G={g} above {above} bytes")
            });
            out.push_str(&format!(
                "  as LogGP: L={} o={} g={} G={}{whole} (ns, dominant modes)\n",
                m.l(),
                m.o(),
                m.g(),
                m.big_g()
            ));
        }
        match &l.pieces {
            Some(p) => {
                let at = |bytes: u64| {
                    p.trials
                        .iter()
                        .find(|t| t.piece_bytes == p.piece_bytes && t.bytes == bytes)
                        .map_or(String::new(), |t| {
                            let stream = match (t.stream_whole_ns, t.stream_pieces_ns) {
                                (Some(w), Some(c)) => format!(
                                    "; {:.1} µs whole, {:.1} µs in pieces, per message of a stream",
                                    w / 1e3,
                                    c / 1e3
                                ),
                                _ => String::new(),
                            };
                            format!(
                                " ({} B: {:.1} µs whole, {:.1} µs in pieces, round trip{stream})",
                                bytes,
                                t.whole_ns / 1e3,
                                t.pieces_ns / 1e3
                            )
                        })
                };
                out.push_str(&format!(
                    "  pieces: messages of {} … {} bytes go in pieces of at most {} bytes{}\n",
                    p.piece_bytes + 1,
                    p.upto_bytes,
                    p.piece_bytes,
                    at(2 * p.piece_bytes)
                ));
                if let Some(d) = &p.whole_big_g_ns_per_byte {
                    out.push_str(&format!(
                        "  {:<22} {} (messages of more than {} bytes, sent whole)\n",
                        "G ns/byte, whole",
                        cell(&Some(d.clone()), 3),
                        p.upto_bytes
                    ));
                }
            }
            None => out.push_str("  pieces: none (no message size measured faster cut)\n"),
        }
    }
    if let Some(s) = &p.switch_ns {
        out.push_str(&format!(
            "two ranks on one CPU, one-way ns: {}\n",
            cell(&Some(s.clone()), 0)
        ));
    }
    if !p.posted.is_empty() {
        out.push_str(
            "broadcasts from rank 0, in loops of 8 after a barrier (and, where ranks have CPUs \
             of their own, one alone after a barrier), slowest rank, µs per broadcast, median \
             [p10–p90]; posted where it wins both:\n",
        );
        for t in &p.posted {
            let us = |d: &herald::model::Distribution| {
                format!(
                    "{:.2} [{:.2}–{:.2}]",
                    d.median / 1e3,
                    d.p10 / 1e3,
                    d.p90 / 1e3
                )
            };
            let alone = match (&t.posted_one_ns, &t.tree_one_ns) {
                (Some(p), Some(t)) => format!("; alone after a barrier {} and {}", us(p), us(t)),
                _ => String::new(),
            };
            out.push_str(&format!(
                "  {:>8} B, {} ranks: posted {}, tree {} ({}){alone}{}\n",
                t.bytes,
                t.ranks,
                us(&t.posted_ns),
                us(&t.tree_ns),
                t.tree,
                if p.posted_wins(t.ranks, t.bytes) == Some(true) {
                    ": posted"
                } else {
                    ""
                }
            ));
        }
    }
    let unmeasured: Vec<&str> = p
        .levels
        .iter()
        .filter(|l| l.lambda.is_none())
        .map(|l| l.name.as_str())
        .collect();
    if !unmeasured.is_empty() {
        out.push_str(&format!(
            "not measured (no two ranks meet there): {}\n",
            unmeasured.join(", ")
        ));
    }
    if !p.unsettled.is_empty() {
        out.push_str(&format!("unsettled: {}\n", p.unsettled.join(", ")));
    }
    out
}
