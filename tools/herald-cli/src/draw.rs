//! `herald draw`: pictures of a schedule as SVG, rendered to PNG when the output ends in `.png`.
//!
//! 1. `tree` — the broadcast tree of block 0 (the postal paper's Fig. 1), in [`tree`];
//! 2. `timeline` — a row per processor with busy intervals and an arrow per message, or the
//!    number of informed processors over time for large `n`, in [`timeline`];
//! 3. `compare` — every applicable algorithm's makespan against the lower bound, as bars, or
//!    against `n` as lines, in [`compare`].
//!
//! Every picture is composed with the `svg` crate (the charts' axes and keys in [`chart`]), so
//! its elements carry classes (`node`, `edge`, `send`, `msg`, …) that tests and style sheets
//! can select; the text is left to the viewer's fonts. [`raster`] renders the SVG with resvg
//! and the system fonts.

mod chart;
mod compare;
mod raster;
mod timeline;
mod tree;

use crate::sim::{ModelArgs, ProblemArgs};
use crate::CliError;
use herald::{
    check, model::Timing, schedule::Transfer, time::TimeBase, Algorithm, Collective, CostModel,
    Model, Ratio, Report, Ticks,
};
use std::path::{Path, PathBuf};

/// Arguments of `herald draw`.
#[derive(Debug, clap::Args)]
pub(crate) struct DrawArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    problem: Problem,
    /// What to draw: the broadcast tree of block 0, the timeline of every send, or a comparison
    /// of every applicable algorithm (--algo is then ignored).
    #[arg(long, value_enum, default_value = "tree")]
    view: View,
    /// Write to this file: FILE.svg, or FILE.png to render the picture (default: SVG on
    /// standard output).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// With --view compare: makespan against n for every n in A..B (both included; at most
    /// 200 values of n, evenly spaced), one line per algorithm. -n is then not needed.
    #[arg(long, value_name = "A..B", value_parser = parse_range)]
    n_range: Option<(u32, u32)>,
}

/// The pictures `herald draw` makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum View {
    /// The broadcast tree of block 0.
    Tree,
    /// A row per processor over time (aggregated above a few hundred processors).
    Timeline,
    /// Every applicable algorithm's makespan and the lower bound.
    Compare,
}

/// `sim`'s problem flags, unchanged, plus the values `draw` reads from them.
///
/// [`ProblemArgs`] keeps its fields private; this reads `n`, `m` and `root` from the same
/// parsed matches (clap's argument ids are the field names), and lets `-n` be left out when
/// `--n-range` gives the processor counts.
#[derive(Debug)]
struct Problem {
    /// The flags as `sim` parses them.
    args: ProblemArgs,
    /// `-n` (0 when left out for `--n-range`).
    n: u32,
    /// `-m`.
    m: u32,
    /// `--root`.
    root: u32,
    /// `--algo` with its parameters (`knomial(4)`, `optimal (bcast)`), or as written.
    algo: String,
}

impl clap::FromArgMatches for Problem {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let value = |id: &str| matches.get_one::<u32>(id).copied();
        let algo = matches
            .get_one::<String>("algo")
            .cloned()
            .unwrap_or_default();
        Ok(Problem {
            args: ProblemArgs::from_arg_matches(matches)?,
            n: value("n").unwrap_or(0),
            m: value("m").unwrap_or(1),
            root: value("root").unwrap_or(0),
            algo: match algo.parse::<Algorithm>() {
                Ok(a) => a
                    .with_params(value("radix").unwrap_or(2), value("d"))
                    .to_string(),
                Err(_) => algo,
            },
        })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for Problem {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        ProblemArgs::augment_args(cmd).mut_arg("n", |a| {
            a.required(false)
                .required_unless_present("n_range")
                .default_value("0")
                .hide_default_value(true)
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// Parses `A..B` or `A..=B` (both mean A to B inclusive), `1 ≤ A ≤ B ≤ 1 000 000`.
fn parse_range(s: &str) -> Result<(u32, u32), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("expected A..B, got {s:?}"))?;
    let b = b.strip_prefix('=').unwrap_or(b);
    let num = |t: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|e| format!("{t:?} in {s:?}: {e}"))
    };
    let (a, b) = (num(a)?, num(b)?);
    if a == 0 || a > b || b > 1_000_000 {
        return Err(format!("expected 1 ≤ A ≤ B ≤ 1000000, got {s:?}"));
    }
    Ok((a, b))
}

/// A finished picture.
#[derive(Debug)]
struct Picture {
    /// The SVG document.
    svg: String,
}

/// Font families for every text, first found wins (resvg and browsers both walk the list).
const FONT: &str = "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif";

/// Colours, one per block or algorithm (Tableau 10, then its light shades).
const PALETTE: [(u8, u8, u8); 15] = [
    (0x1f, 0x77, 0xb4),
    (0xff, 0x7f, 0x0e),
    (0x2c, 0xa0, 0x2c),
    (0x94, 0x67, 0xbd),
    (0x8c, 0x56, 0x4b),
    (0xe3, 0x77, 0xc2),
    (0x17, 0xbe, 0xcf),
    (0xbc, 0xbd, 0x22),
    (0x7f, 0x7f, 0x7f),
    (0xd6, 0x27, 0x28),
    (0xae, 0xc7, 0xe8),
    (0xff, 0xbb, 0x78),
    (0x98, 0xdf, 0x8a),
    (0xc5, 0xb0, 0xd5),
    (0xc4, 0x9c, 0x94),
];

/// The makespan's colour (a red kept out of the block colours of timelines).
const MAKESPAN_COLOUR: &str = "#d62728";

/// Palette entry `i` (cycling) as `#rrggbb`.
fn colour(i: usize) -> String {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// The model and its parameters as a caption (`postal λ = 5/2`).
fn model_label(model: &Model) -> String {
    let params: Vec<String> = model
        .params()
        .iter()
        .filter(|(k, v)| !(*k == "G" && *v == Ratio::ZERO))
        .map(|(k, v)| {
            let k = if *k == "lambda" { "λ" } else { k };
            format!("{k} = {v}")
        })
        .collect();
    match model {
        Model::OnePort(_) => "1-port".to_owned(),
        Model::LogP(_) => format!("LogP {}", params.join(", ")),
        _ => format!("{} {}", model.name(), params.join(", ")),
    }
}

/// What one unit of time is, for axis titles.
fn time_unit(model: &Model) -> &'static str {
    match model {
        Model::Postal(_) => "units of the send time",
        Model::OnePort(_) => "rounds",
        _ => "units of L, o, g",
    }
}

/// A step of about `span / count` rounded to 1, 2 or 5 times a power of ten.
fn nice_step(span: f64, count: f64) -> f64 {
    let raw = (span / count.max(1.0)).max(f64::MIN_POSITIVE);
    let pow = 10f64.powf(raw.log10().floor());
    let frac = raw / pow;
    let nice = if frac <= 1.0 {
        1.0
    } else if frac <= 2.0 {
        2.0
    } else if frac <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * pow
}

/// `x` without trailing zeros (`2.5`, `10`).
fn num(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A coordinate rounded to hundredths of a pixel, to keep the SVG short.
fn px(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// A generated broadcast schedule with its check, every time in the report's base.
struct Drawn {
    /// The model caption.
    model: String,
    /// The time unit of axis titles.
    unit: &'static str,
    /// The algorithm as asked for.
    algo: String,
    /// Processors.
    n: u32,
    /// Blocks.
    m: u32,
    /// The root.
    root: u32,
    /// The check (with per-processor completion times).
    report: Report,
    /// The model's rules in the report's base.
    timing: Timing,
    /// The sends by start time, in the report's base.
    sends: Vec<Transfer>,
}

impl Drawn {
    /// Generates what the flags name and checks it.
    fn new(model: &Model, p: &Problem) -> Result<Drawn, CliError> {
        let schedule = crate::sim::generate_one(model, &p.args)?;
        let report = check(&schedule, model).map_err(CliError::usage)?;
        let base = report.base();
        let timing = model.timing(base).map_err(CliError::usage)?;
        let sends = schedule
            .sends_by_time()
            .into_iter()
            .map(|s| {
                let at = base.convert(s.at, schedule.base())?;
                Ok(Transfer { at, ..s })
            })
            .collect::<Result<Vec<_>, herald::time::TimeError>>()
            .map_err(CliError::usage)?;
        let (root, m) = match schedule.collective() {
            Collective::Broadcast { root, blocks } => (root, blocks),
            _ => (p.root, p.m),
        };
        Ok(Drawn {
            model: model_label(model),
            unit: time_unit(model),
            algo: match p.algo.as_str() {
                "optimal" => compare::name(Algorithm::Optimal, model),
                _ => p.algo.clone(),
            },
            n: schedule.n(),
            m,
            root,
            report,
            timing,
            sends,
        })
    }

    /// The tick base of every time here.
    fn base(&self) -> TimeBase {
        self.report.base()
    }

    /// `t` in units, for coordinates.
    fn units(&self, t: Ticks) -> f64 {
        self.base().to_f64(t)
    }

    /// `t` as an exact fraction (`15/2`).
    fn exact(&self, t: Ticks) -> String {
        self.report.format(t)
    }

    /// "makespan 15/2, lower bound 15/2" (and "ILLEGAL" if the check failed).
    fn outcome(&self) -> String {
        let mut s = format!("makespan {}", self.exact(self.report.makespan()));
        if let Some(lb) = self.report.lower_bound() {
            s += &format!(", lower bound {}", self.exact(lb));
        }
        if !self.report.legal() {
            s += &format!(" — ILLEGAL: {} violations", self.report.violation_count());
        }
        s
    }
}

/// How the picture is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// SVG text.
    Svg,
    /// Rendered PNG.
    Png,
}

impl Format {
    /// The format `--out` asks for by its extension.
    fn of(out: Option<&Path>) -> Result<Format, CliError> {
        let Some(path) = out else {
            return Ok(Format::Svg);
        };
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("svg") => Ok(Format::Svg),
            Some("png") => Ok(Format::Png),
            _ => Err(CliError::Usage(format!(
                "--out {} must end in .svg or .png",
                path.display()
            ))),
        }
    }
}

/// Runs `herald draw`.
pub(crate) fn run(a: &DrawArgs) -> Result<(), CliError> {
    let format = Format::of(a.out.as_deref())?;
    if a.n_range.is_some() && a.view != View::Compare {
        return Err(CliError::Usage(
            "--n-range applies to --view compare only".into(),
        ));
    }
    let model = a.model.model()?;
    let picture = match (a.view, a.n_range) {
        (View::Tree, _) => tree::draw(&Drawn::new(&model, &a.problem)?)?,
        (View::Timeline, _) => timeline::draw(&Drawn::new(&model, &a.problem)?)?,
        (View::Compare, None) => compare::bars(&model, &a.problem)?,
        (View::Compare, Some(range)) => compare::lines(&model, &a.problem, range)?,
    };
    let bytes = match format {
        Format::Svg => picture.svg.into_bytes(),
        Format::Png => raster::png(&picture.svg)?,
    };
    match &a.out {
        Some(path) => std::fs::write(path, bytes)
            .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", path.display()))),
        None => {
            use std::io::Write;
            std::io::stdout()
                .write_all(&bytes)
                .map_err(|e| CliError::Failed(format!("cannot write the picture: {e}")))
        }
    }
}
