//! `herald calibrate`: measure L, o_s, o_r, g, G and λ per level into a profile, or show one.

use crate::CliError;
use herald::{
    calibrate,
    calibrate::{CalibrateOptions, Progress},
    model::{default_profile_path, load_profile, save_profile, Distribution, LevelProfile, Pick},
    Profile, TopologySource,
};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Arguments of `herald calibrate`.
#[derive(Debug, clap::Args)]
pub(crate) struct CalibrateArgs {
    /// Finish in under 10 s (fewer sizes, shorter budget).
    #[arg(long, conflicts_with = "profile")]
    quick: bool,
    /// Print the profile as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Write the profile here (default: $XDG_CACHE_HOME/herald/profile.json or
    /// ~/.cache/herald/profile.json).
    #[arg(long, value_name = "FILE", conflicts_with = "profile")]
    out: Option<PathBuf>,
    /// Show a saved profile instead of measuring.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Accept a profile of another schema version or host.
    #[arg(long, requires = "profile")]
    force: bool,
}

/// Runs `herald calibrate`.
pub(crate) fn run(args: &CalibrateArgs) -> Result<(), CliError> {
    let (profile, saved) = match &args.profile {
        Some(path) => (
            load_profile(path, args.force).map_err(CliError::usage)?,
            None,
        ),
        None => {
            let out = match &args.out {
                Some(p) => p.clone(),
                None => default_profile_path().ok_or_else(|| {
                    CliError::Usage(
                        "no cache directory (set XDG_CACHE_HOME or HOME), give --out FILE".into(),
                    )
                })?,
            };
            check_writable(&out)?;
            let profile = measure(args.quick)?;
            save_profile(&profile, &out).map_err(CliError::usage)?;
            (profile, Some(out))
        }
    };
    if args.json {
        println!("{}", profile.to_json());
    } else {
        print!("{}", table(&profile));
    }
    if let Some(out) = saved {
        let _ = std::io::stdout().flush();
        eprintln!("profile saved to {}", out.display());
    }
    Ok(())
}

/// Fails early (before minutes of measuring) if `out` cannot be written: it must not be a
/// directory, and its directory must exist or be creatable.
fn check_writable(out: &Path) -> Result<(), CliError> {
    if out.is_dir() {
        return Err(CliError::Usage(format!(
            "--out {} is a directory",
            out.display()
        )));
    }
    match out.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => std::fs::create_dir_all(dir).map_err(|e| {
            CliError::Usage(format!("cannot create directory {}: {e}", dir.display()))
        }),
        None => Ok(()),
    }
}

fn measure(quick: bool) -> Result<Profile, CliError> {
    let opts = if quick {
        CalibrateOptions::quick()
    } else {
        CalibrateOptions::full()
    };
    let h = TopologySource::Machine.load().map_err(CliError::usage)?;
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(opts.budget.as_millis() as u64);
        let style = ProgressStyle::with_template("calibrating {bar:30} {elapsed:>3}/{msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar
    });
    let update = |p: &Progress| {
        if let Some(bar) = &bar {
            bar.set_position(p.elapsed.as_millis() as u64);
            let left = if p.unsettled.is_empty() {
                "all settled".to_owned()
            } else {
                format!("{} unsettled", p.unsettled.len())
            };
            bar.set_message(format!(
                "{}s max, {} slices, {left}",
                p.budget.as_secs(),
                p.slices
            ));
        }
    };
    let profile = calibrate(&h, &opts, update).map_err(|e| CliError::Failed(e.to_string()));
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    profile
}

/// `median [p10–p90]`, and the modes when there are several (each with the one-way hop of its
/// latency regime where the calibration names it: `110@69%(hop 53)`).
fn cell(d: &Option<Distribution>, digits: usize) -> String {
    let Some(d) = d else {
        return "—".into();
    };
    let mut s = format!(
        "{:.digits$} [{:.digits$}–{:.digits$}]",
        d.median, d.p10, d.p90
    );
    if d.is_multimodal() {
        let modes: Vec<String> = d
            .modes
            .iter()
            .map(|m| {
                let regime = m
                    .regime_hop_ns
                    .map_or(String::new(), |h| format!("(hop {h:.0})"));
                format!("{:.digits$}@{:.0}%{regime}", m.center, 100.0 * m.share)
            })
            .collect();
        s.push_str(&format!(" modes {}", modes.join(" ")));
    }
    if !d.settled {
        s.push_str(" (unsettled)");
    }
    s
}

fn models(level: &LevelProfile) -> String {
    let logp = level.logp(Pick::Dominant).map(|m| {
        let whole = m.whole_gap().map_or(String::new(), |(above, g)| {
            format!(", G={g} above {above} B")
        });
        format!(
            "LogP L={} o={} g={} G={}{whole}",
            m.l(),
            m.o(),
            m.g(),
            m.big_g()
        )
    });
    let postal = level
        .postal(Pick::Dominant)
        .map(|m| format!("postal λ={}", m.lambda()));
    match (logp, postal) {
        (Ok(a), Ok(b)) => format!("{a}; {b} (dominant modes, ns)"),
        (Err(e), _) | (_, Err(e)) => format!("no model: {e}"),
    }
}

fn table(p: &Profile) -> String {
    let resolution = p
        .clock_resolution_ns
        .map_or(String::new(), |r| format!(", resolution {r:.0} ns"));
    let mut out = format!(
        "calibration of {} ({}, {} mode, {:.1} s, clock read {:.0} ns{resolution})\ntopology: {}\n",
        p.host, p.date, p.mode, p.duration_s, p.clock_overhead_ns, p.topology.summary
    );
    if let Some(cpu) = &p.cpu {
        out.push_str(&format!("cpu: {cpu}\n"));
    }
    for level in &p.levels {
        let Some(pair) = level.pair else {
            out.push_str(&format!(
                "{:<8} not measurable (one child per node)\n",
                level.name
            ));
            continue;
        };
        out.push_str(&format!(
            "{:<8} CPUs {} ↔ {}, {} slices — median [p10–p90] ns\n",
            level.name, pair[0], pair[1], level.slices
        ));
        let rows: [(&str, &Option<Distribution>, usize); 8] = [
            ("raw hop", &level.raw_hop_ns, 1),
            ("one-way", &level.one_way_ns, 1),
            ("L", &level.l_ns, 1),
            ("o_s", &level.o_s_ns, 1),
            ("o_r", &level.o_r_ns, 1),
            ("g", &level.g_ns, 1),
            ("G /byte", &level.big_g_ns_per_byte, 3),
            ("λ", &level.lambda, 2),
        ];
        for (name, d, digits) in rows {
            out.push_str(&format!("  {name:<8} {}\n", cell(d, digits)));
        }
        if let Some(r) = &level.runtime {
            let c = |d: &Distribution, digits: usize| cell(&Some(d.clone()), digits);
            out.push_str(&format!(
                "  runtime  through herald's own calls (2-rank broadcasts, barrier then one; modes between the PUs by the hop before each case):\n    \
                 one line {}\n    per line, first {} {}\n    \
                 per line, sustained {} ({}–{} B streams)\n    \
                 single copy {} for {} B, then {} ns/B to {} B, {} ns/B to {} B",
                c(&r.one_line_ns, 0),
                r.burst_lines,
                c(&r.burst_line_ns, 2),
                c(&r.line_ns, 2),
                r.stream_bytes[0],
                r.stream_bytes[1],
                c(&r.direct_ns, 0),
                r.direct_bytes[0],
                c(&r.copy_ns_per_byte, 4),
                r.direct_bytes[1],
                c(&r.copy_large_ns_per_byte, 4),
                r.upper_bytes.unwrap_or(r.direct_bytes[2]),
            ));
            if let Some(d) = &r.copy_upper_ns_per_byte {
                out.push_str(&format!(", {} ns/B to {} B", c(d, 4), r.direct_bytes[2]));
            }
            out.push('\n');
            if let (Some(d), Some(b)) = (&r.copy_mid_ns_per_byte, r.mid_bytes) {
                out.push_str(&format!(
                    "    single copy from {} B to {b} B: {} ns/B (the model bends the line to {} B there)\n",
                    r.direct_bytes[0],
                    c(d, 4),
                    r.direct_bytes[1],
                ));
            }
            if let (Some(d), Some(b)) = (&r.copy_huge_ns_per_byte, r.huge_bytes) {
                out.push_str(&format!("    single copy then {} ns/B to {b} B\n", c(d, 4)));
            }
            if let Some(d) = &r.stream_two_ns {
                out.push_str(&format!(
                    "    stream's second line {} (2 lines in 1 block against 1 line; the model \
                     spreads the rest of the first {} lines over the third to the last)\n",
                    c(d, 1),
                    r.burst_lines
                ));
            }
            for (d, lines) in [(&r.exec_ns, r.burst_lines), (&r.exec_short_ns, 2)] {
                if let Some(d) = d {
                    out.push_str(&format!(
                        "    stream through the executor {} more ({lines} lines in 2 blocks \
                         against 1)\n",
                        c(d, 0)
                    ));
                }
            }
            if let Some(d) = &r.direct_block_ns {
                let less = if r.direct_exec_ns.is_some() {
                    format!(", less {} B in 2 blocks against 1", r.direct_bytes[0])
                } else {
                    String::new()
                };
                out.push_str(&format!(
                    "    single copy per extra block {} ({} B in 16 blocks against 1{less})\n",
                    c(d, 0),
                    r.direct_bytes[1]
                ));
            }
            if let Some(d) = &r.direct_exec_ns {
                out.push_str(&format!(
                    "    single copy through the executor {} more ({} B in 2 blocks against 1, \
                     less a block)\n",
                    c(d, 0),
                    r.direct_bytes[0]
                ));
            }
            if let Some(d) = &r.shared_one_line_ns {
                out.push_str(&format!(
                    "    one line between two ranks of one CPU {}\n",
                    c(d, 0)
                ));
            }
            if let (Some(d), Some(l), Some(b)) = (&r.posted_ns, &r.posted_line_ns, r.posted_bytes) {
                out.push_str(&format!(
                    "    posted one line {}, then {} per further line (to {b} B)\n",
                    c(d, 0),
                    c(l, 1)
                ));
            }
            if let Some(d) = &r.posted_two_ns {
                out.push_str(&format!("    posted two lines {} (112 B)\n", c(d, 0)));
            }
            if let (Some(d), Some(b)) = (&r.posted_curve_ns, &r.posted_curve_bytes) {
                let points: Vec<String> = b
                    .iter()
                    .zip(d)
                    .map(|(b, d)| {
                        let modes: Vec<String> =
                            d.modes.iter().map(|m| format!("{:.0}", m.center)).collect();
                        format!("{b} B {:.0} ({})", d.median, modes.join(" | "))
                    })
                    .collect();
                out.push_str(&format!(
                    "    posted by length, median (each mode's centre): {}\n",
                    points.join(", ")
                ));
            }
            if let (Some(l), Some(b)) = (&r.posted_long_line_ns, r.posted_long_bytes) {
                out.push_str(&format!(
                    "    posted per line past a full slot {} (to {b} B)
",
                    c(l, 1)
                ));
            }
            if let (Some(d), Some(l), Some(b)) = (
                &r.shared_posted_ns,
                &r.shared_posted_line_ns,
                r.shared_posted_bytes,
            ) {
                out.push_str(&format!(
                    "    posted between two ranks of one CPU: one line {}, then {} per further \
                     line (to {b} B)
",
                    c(d, 0),
                    c(l, 1)
                ));
            }
            if let (Some(l), Some(b)) = (&r.shared_posted_read_line_ns, r.shared_posted_read_bytes)
            {
                out.push_str(&format!(
                    "    of which a further reader of that CPU reads {} per further line (three \
                     ranks against two, to {b} B)\n",
                    c(l, 1)
                ));
            }
            let one_cpu = [
                (
                    &r.shared_copy_ns_per_byte,
                    r.direct_bytes[0],
                    r.direct_bytes[1],
                ),
                (
                    &r.shared_copy_large_ns_per_byte,
                    r.direct_bytes[1],
                    r.direct_bytes[2],
                ),
                (
                    &r.shared_copy_huge_ns_per_byte,
                    r.direct_bytes[2],
                    r.huge_bytes.unwrap_or(r.direct_bytes[2]),
                ),
            ];
            for (d, from, to) in one_cpu {
                if let Some(d) = d {
                    out.push_str(&format!(
                        "    single copy between two ranks of one CPU {} per byte (from {from} to \
                         {to} B)\n",
                        c(d, 3)
                    ));
                }
            }
            // Points measured at sizes, ns each: `… at B B, …`.
            let at_sizes = |d: &[Distribution], b: &[u64]| {
                let points: Vec<String> = b
                    .iter()
                    .zip(d)
                    .map(|(b, d)| format!("{} at {b} B", c(d, 0)))
                    .collect();
                points.join(", ")
            };
            if let (Some(d), Some(b)) = (&r.held_extra_ns, &r.held_bytes) {
                out.push_str(&format!(
                    "    single copy into a buffer the other CPU holds, beyond the copy: {}\n",
                    at_sizes(d, b)
                ));
            }
            if let (Some(d), Some(b), Some(h)) = (
                &r.footprint_extra_ns_per_byte,
                &r.footprint_bytes,
                r.huge_bytes,
            ) {
                let points: Vec<String> = b
                    .iter()
                    .zip(d)
                    .map(|(b, d)| format!("{} at {} MiB", c(d, 3), b >> 20))
                    .collect();
                out.push_str(&format!(
                    "    single copy of {} MiB among more buffers, beyond the copy, ns per byte: {}\n",
                    h >> 20,
                    points.join(", ")
                ));
            }
            if let (Some(d), Some(b)) = (&r.forwarded_extra_ns, &r.forwarded_bytes) {
                out.push_str(&format!(
                    "    single copy from a forwarder's buffer another CPU holds, beyond the held \
                     copy: {}\n",
                    at_sizes(d, b)
                ));
            }
            if let Some(d) = &r.stamp_load_ns {
                out.push_str(&format!(
                    "    a load of a line the other CPU wrote, timed as the run-time choice times \
                     it (clock reads included) {}\n",
                    c(d, 0)
                ));
            }
        }
        let capacity = match &level.capacity {
            Some(c) => format!("{}{}", if c.at_least { "≥" } else { "" }, c.transfers),
            None => "unknown".into(),
        };
        out.push_str(&format!(
            "  capacity {capacity}\n  model    {}\n",
            models(level)
        ));
        if let Some(note) = &level.note {
            out.push_str(&format!("  note     {note}\n"));
        }
    }
    let threads = [
        (
            "shared CPU: one-way handoff between two threads of one CPU",
            &p.switch_ns,
        ),
        ("spin: one spin phase of a waiting thread", &p.spin_ns),
    ];
    for (label, d) in threads.into_iter().filter(|(_, d)| d.is_some()) {
        out.push_str(&format!("{label} {}\n", cell(d, 0)));
    }
    if !p.unsettled.is_empty() {
        out.push_str(&format!("unsettled: {}\n", p.unsettled.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text table names both one-CPU copy slopes with the sizes each was measured between.
    #[test]
    fn the_table_prints_both_one_cpu_copy_slopes() {
        let slopes = |path: &str| {
            let text = std::fs::read_to_string(path).unwrap();
            let t = table(&Profile::from_json_forced(&text).unwrap());
            t.lines()
                .filter(|l| l.starts_with("    single copy between two ranks of one CPU"))
                .map(|l| l.rsplit_once("per byte ").unwrap().1.to_owned())
                .collect::<Vec<String>>()
        };
        let (a, b, c) = (
            "(from 4096 to 65536 B)",
            "(from 65536 to 1048576 B)",
            "(from 1048576 to 4194304 B)",
        );
        // A profile from before the 4 MiB point prints two slopes, one after it three.
        assert_eq!(
            slopes("../../docs/data/fidelity-2026-12-02-paired/P5.json"),
            [a, b]
        );
        assert_eq!(
            slopes("../../docs/data/lender-spin-model-2026-12-04/huge/P2.json"),
            [a, b, c]
        );
    }

    /// The held and forwarded copies' extras each print on a line of their own, every point
    /// with its size.
    #[test]
    fn the_table_prints_each_point_with_its_size() {
        let text = std::fs::read_to_string("../../docs/data/forwarded-2026-12-04/C1.json").unwrap();
        let profile = Profile::from_json_forced(&text).unwrap();
        let t = table(&profile);
        let line = |start: &str| {
            t.lines()
                .find(|l| l.starts_with(start))
                .unwrap_or_else(|| panic!("no line {start:?} in\n{t}"))
                .to_string()
        };
        let held = line("    single copy into a buffer the other CPU holds, beyond the copy: ");
        for b in [4096, 16384, 65536, 262144, 1048576] {
            assert!(held.contains(&format!(" at {b} B")), "{held}");
        }
        let fwd = line(
            "    single copy from a forwarder's buffer another CPU holds, beyond the held copy: ",
        );
        assert_eq!(fwd.matches(" at ").count(), 3, "{fwd}");
        for b in [65536, 262144, 1048576] {
            assert!(fwd.contains(&format!(" at {b} B")), "{fwd}");
        }
    }
}
