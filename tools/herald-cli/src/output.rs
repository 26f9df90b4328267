//! The `--json` outputs of `herald schedule`, `sim`, `check`, `plan`, `topo`, `run`, `stress`
//! and `bench`, typed:
//! each field is one JSON key (docs/cli-json.md lists them with their meaning).

use herald::{CostModel, Model, Report};
use serde::Serialize;
use std::collections::BTreeMap;

/// A flat model: its name and exact parameters.
#[derive(Debug, Serialize)]
pub(crate) struct ModelJson {
    /// `postal`, `logp`, `oneport`, `kport`, `fattree`.
    pub(crate) name: &'static str,
    /// Each parameter as an exact fraction (`lambda`, `L`, `o`, `g`, `G`, `k`, …).
    #[serde(flatten)]
    pub(crate) params: BTreeMap<&'static str, String>,
    /// LogGP bytes per message, when not 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bytes: Option<u64>,
    /// LogGP's long-message rule, when bytes are not 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) long_messages: Option<String>,
}

impl ModelJson {
    pub(crate) fn of(model: &Model) -> ModelJson {
        let long = match model {
            Model::LogP(l) if l.bytes() != 1 => Some((l.bytes(), l.long_messages().to_string())),
            _ => None,
        };
        ModelJson {
            name: model.name(),
            params: model
                .params()
                .into_iter()
                .map(|(k, v)| (k, v.to_string()))
                .collect(),
            bytes: long.as_ref().map(|(b, _)| *b),
            long_messages: long.map(|(_, r)| r),
        }
    }
}

/// One send, its time exact in the report's base.
#[derive(Debug, Serialize)]
pub(crate) struct SendJson {
    pub(crate) at: String,
    pub(crate) from: u32,
    pub(crate) to: u32,
    pub(crate) what: u32,
}

/// One violation of a model rule.
#[derive(Debug, Serialize)]
pub(crate) struct ViolationJson {
    pub(crate) rule: &'static str,
    pub(crate) at: String,
    pub(crate) processor: u32,
    pub(crate) send: Option<SendJson>,
    pub(crate) detail: String,
}

impl ViolationJson {
    pub(crate) fn of(report: &Report, v: &herald::sim::Violation) -> ViolationJson {
        ViolationJson {
            rule: v.rule.name(),
            at: report.format(v.at),
            processor: v.processor,
            send: v.send.as_ref().map(|s| SendJson {
                at: report.format(s.at),
                from: s.from,
                to: s.to,
                what: s.what,
            }),
            detail: v.detail.clone(),
        }
    }
}

/// A send of `herald schedule --json`'s `schedule` list.
#[derive(Debug, Serialize)]
pub(crate) struct ScheduledJson {
    pub(crate) at: String,
    pub(crate) from: u32,
    pub(crate) to: u32,
    pub(crate) block: u32,
}

/// One candidate of `--algo auto`: its makespan, or `null` if it did not apply or was illegal.
#[derive(Debug, Serialize)]
pub(crate) struct CandidateJson {
    pub(crate) algorithm: String,
    pub(crate) makespan: Option<String>,
}

/// Wall-clock seconds of `herald sim --timings`.
#[derive(Debug, Serialize)]
pub(crate) struct TimingsJson {
    pub(crate) generate_s: f64,
    pub(crate) check_s: f64,
}

/// What `herald check` adds for a GOAL file.
#[derive(Debug, Serialize)]
pub(crate) struct GoalJson {
    pub(crate) ranks: usize,
    pub(crate) operations: usize,
    pub(crate) busy_until: String,
    pub(crate) first_violation: Option<ViolationJson>,
}

/// A checked schedule: `herald sim/check --json`, one element of `sim --compare --json`, and
/// (with `schedule`) `herald schedule --json`.
#[derive(Debug, Serialize)]
pub(crate) struct ReportJson {
    pub(crate) model: ModelJson,
    pub(crate) algorithm: String,
    pub(crate) collective: &'static str,
    pub(crate) n: u32,
    pub(crate) m: u32,
    pub(crate) legal: bool,
    pub(crate) makespan: String,
    pub(crate) makespan_f64: f64,
    pub(crate) busy_until: String,
    /// `strict` or `queued`.
    pub(crate) arrivals: &'static str,
    pub(crate) lower_bound: Option<String>,
    pub(crate) gap: Option<String>,
    pub(crate) sends: usize,
    pub(crate) violation_count: u64,
    pub(crate) violations: Vec<ViolationJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) schedule: Option<Vec<ScheduledJson>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) candidates: Option<Vec<CandidateJson>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) timings: Option<TimingsJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) goal: Option<GoalJson>,
}

impl ReportJson {
    pub(crate) fn of(model: &Model, algorithm: &str, report: &Report, m: u32) -> ReportJson {
        let makespan = report.makespan();
        ReportJson {
            model: ModelJson::of(model),
            algorithm: algorithm.to_owned(),
            collective: report.collective().name(),
            n: report.n(),
            m,
            legal: report.legal(),
            makespan: report.format(makespan),
            makespan_f64: report.base().to_f64(makespan),
            busy_until: report.format(report.busy_until()),
            arrivals: if report.queued_arrivals() {
                "queued"
            } else {
                "strict"
            },
            lower_bound: report.lower_bound().map(|t| report.format(t)),
            gap: report.gap().map(|t| report.format(t)),
            sends: report.sends(),
            violation_count: report.violation_count(),
            violations: report
                .violations()
                .iter()
                .map(|v| ViolationJson::of(report, v))
                .collect(),
            schedule: None,
            candidates: None,
            timings: None,
            goal: None,
        }
    }
}

/// Prints `value` as indented JSON.
pub(crate) fn print_pretty(value: &impl Serialize) -> Result<(), crate::CliError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| crate::CliError::Failed(format!("cannot encode JSON: {e}")))?;
    crate::print_out(&(text + "\n"))
}

/// Prints `value` as one line of JSON.
pub(crate) fn print(value: &impl Serialize) -> Result<(), crate::CliError> {
    let text = serde_json::to_string(value)
        .map_err(|e| crate::CliError::Failed(format!("cannot encode JSON: {e}")))?;
    crate::print_out(&(text + "\n"))
}

/// One ranked candidate of `herald plan --json`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PlanCandidateJson {
    pub(crate) algorithm: String,
    pub(crate) label: String,
    /// Leaders broadcasts: the split depths.
    pub(crate) split: Option<Vec<usize>>,
    /// Leaders broadcasts: each stage's tree.
    pub(crate) stages: Option<Vec<String>>,
    pub(crate) blocks: u32,
    pub(crate) block_bytes: u64,
    pub(crate) makespan: String,
    pub(crate) makespan_f64: f64,
    pub(crate) lower_bound: String,
    pub(crate) sends: usize,
}

/// One level of a hierarchical model in `herald plan --json`.
#[derive(Debug, Serialize)]
pub(crate) struct HierLevelJson {
    pub(crate) name: String,
    pub(crate) depth: usize,
    pub(crate) cost: Option<String>,
    pub(crate) capacity: Option<u32>,
    pub(crate) source: String,
}

/// The model of `herald plan --json`: a flat model, or a hierarchical one by level.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum PlanModelJson {
    Flat(ModelJson),
    Hier {
        name: &'static str,
        family: &'static str,
        levels: Vec<HierLevelJson>,
    },
}

/// `herald plan --json`.
#[derive(Debug, Serialize)]
pub(crate) struct PlanJson {
    pub(crate) model: PlanModelJson,
    /// `ns` for a profile's model, empty for model time units.
    pub(crate) unit: String,
    pub(crate) n: u32,
    pub(crate) bytes: u64,
    pub(crate) best: Option<PlanCandidateJson>,
    pub(crate) ranked: Vec<PlanCandidateJson>,
    pub(crate) why: String,
    pub(crate) rejected: usize,
    /// With a profile: the same candidates ranked by herald's runtime cost model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) runtime: Option<Vec<RuntimeRowJson>>,
}

/// One (candidate, transport) of `herald plan --profile`'s runtime ranking.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RuntimeRowJson {
    pub(crate) label: String,
    pub(crate) blocks: u32,
    pub(crate) transport: &'static str,
    pub(crate) predicted_ns: f64,
}

/// The model of `herald run --json`: a flat model, or the profile the plan came from.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum RunModelJson {
    Flat(ModelJson),
    Profile { profile: String, host: String },
}

/// `herald run --json`.
#[derive(Debug, Serialize)]
pub(crate) struct RunJson {
    pub(crate) algorithm: String,
    pub(crate) model: RunModelJson,
    pub(crate) n: usize,
    pub(crate) m: u32,
    pub(crate) root: usize,
    pub(crate) bytes: usize,
    pub(crate) iters: usize,
    pub(crate) median_ns: u64,
    pub(crate) p10_ns: u64,
    pub(crate) p90_ns: u64,
    pub(crate) verified: bool,
    pub(crate) predicted_makespan: String,
    pub(crate) predicted_ns: Option<f64>,
    pub(crate) measured_over_predicted: Option<f64>,
    pub(crate) cpus: Vec<usize>,
    pub(crate) pinned: usize,
}

/// One level of `herald topo --json`.
#[derive(Debug, Serialize)]
pub(crate) struct TopoLevelJson {
    pub(crate) name: String,
    pub(crate) count: usize,
    pub(crate) pus_per_node: Option<usize>,
}

/// `herald topo --json`.
#[derive(Debug, Serialize)]
pub(crate) struct TopoJson {
    pub(crate) source: String,
    /// The machine's processor (only for the machine itself, where the system names it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cpu: Option<herald::model::CpuIdentity>,
    pub(crate) packages: usize,
    pub(crate) numa_nodes: usize,
    pub(crate) cores: usize,
    pub(crate) pus: usize,
    pub(crate) levels: Vec<TopoLevelJson>,
    pub(crate) os_indices: Vec<usize>,
    pub(crate) ranks: usize,
    /// Each rank map by name: the OS CPU of each rank.
    pub(crate) maps: BTreeMap<String, Vec<usize>>,
}

/// `herald stress --json` (and, as text, its report).
#[derive(Debug, Serialize)]
pub(crate) struct StressJson {
    pub(crate) ranks: usize,
    /// Wall-clock seconds the run took.
    pub(crate) seconds: f64,
    pub(crate) seed: u64,
    /// Whether panics were injected (`--panics`).
    pub(crate) panics: bool,
    pub(crate) epochs: u64,
    pub(crate) panic_epochs: u64,
    pub(crate) panics_fired: u64,
    pub(crate) calls_verified: u64,
    pub(crate) errors_surfaced: u64,
    pub(crate) unexpected_errors: u64,
    pub(crate) corruptions: u64,
    pub(crate) hangs: u64,
    /// What the first corrupted call received, if any.
    pub(crate) first_corruption: Option<String>,
}

impl StressJson {
    /// The report as text.
    pub(crate) fn text(&self) -> String {
        let mut s = format!(
            "herald stress: {} ranks, {:.1} s, seed {:#x}, panics {}\n",
            self.ranks,
            self.seconds,
            self.seed,
            if self.panics { "on" } else { "off" }
        );
        s += &format!(
            "  epochs            {} ({} with a panic planned, {} fired)\n",
            self.epochs, self.panic_epochs, self.panics_fired
        );
        for (label, v) in [
            ("calls verified", self.calls_verified),
            ("errors surfaced", self.errors_surfaced),
            ("unexpected errors", self.unexpected_errors),
            ("corruptions", self.corruptions),
            ("hangs", self.hangs),
        ] {
            s += &format!("  {label:<17} {v}\n");
        }
        if let Some(what) = &self.first_corruption {
            s += &format!("  first corruption: {what}\n");
        }
        s
    }
}

/// A figure's median, 10th and 90th percentile (nearest rank; NaN — JSON `null` — for no
/// finite samples).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spread {
    pub(crate) median: f64,
    pub(crate) p10: f64,
    pub(crate) p90: f64,
}

impl Spread {
    /// The spread of the finite values of `v` (`herald::stats`).
    pub(crate) fn of(v: &[f64]) -> Spread {
        herald::stats::Summary::of_f64(v).map_or(
            Spread {
                median: f64::NAN,
                p10: f64::NAN,
                p90: f64::NAN,
            },
            |s| Spread {
                median: s.median,
                p10: s.p10,
                p90: s.p90,
            },
        )
    }
}

/// Figures by name, in order: each is three JSON keys, `name` (the median), `name_p10` and
/// `name_p90`.
#[derive(Debug, Default)]
pub(crate) struct Figures(pub(crate) Vec<(String, Spread)>);

impl Serialize for Figures {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(3 * self.0.len()))?;
        for (name, f) in &self.0 {
            map.serialize_entry(name, &f.median)?;
            map.serialize_entry(&format!("{name}_p10"), &f.p10)?;
            map.serialize_entry(&format!("{name}_p90"), &f.p90)?;
        }
        map.end()
    }
}

/// Values `(key, value)` serialized as one JSON object, in order.
#[derive(Debug)]
pub(crate) struct Keyed<T>(pub(crate) Vec<(String, T)>);

impl<T: Serialize> Serialize for Keyed<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// A figure with three significant digits (large rates in plain form).
fn figure(x: f64) -> String {
    if x.abs() >= 1e6 {
        format!("{:.1} M", x / 1e6)
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    }
}

impl Figures {
    /// `name  median  (p10 … p90)`, a line each.
    fn text(&self, pad: &str) -> String {
        self.0
            .iter()
            .map(|(name, f)| {
                format!(
                    "{pad}{name:<24} {:>14}  ({} … {})\n",
                    figure(f.median),
                    figure(f.p10),
                    figure(f.p90)
                )
            })
            .collect()
    }
}

/// The figures of the slices that ran in one mode of the raw hop's latency.
#[derive(Debug, Serialize)]
pub(crate) struct BenchModeJson {
    /// The mode's centre (ns one-way).
    pub(crate) raw_ns_center: f64,
    /// Its share of the slices' weight.
    pub(crate) share: f64,
    /// Slices assigned to it.
    pub(crate) slices: usize,
    #[serde(flatten)]
    pub(crate) figures: Figures,
}

/// One interleaved run of contestants: their figures and ratios, and the same per latency mode.
#[derive(Debug, Default, Serialize)]
pub(crate) struct BenchRunJson {
    #[serde(flatten)]
    pub(crate) figures: Figures,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) modes: Option<Vec<BenchModeJson>>,
}

impl BenchRunJson {
    fn text(&self, pad: &str) -> String {
        let mut s = self.figures.text(pad);
        for (i, m) in self.modes.iter().flatten().enumerate() {
            s += &format!("{pad}mode {}:\n", i + 1);
            let pad = format!("{pad}    ");
            s += &format!(
                "{pad}{:<24} {:>14}\n",
                "raw_ns_center",
                figure(m.raw_ns_center)
            );
            s += &format!("{pad}{:<24} {:>14}\n", "share", figure(m.share));
            s += &format!("{pad}{:<24} {:>14}\n", "slices", m.slices);
            s += &m.figures.text(&pad);
        }
        s
    }
}

/// One payload size of `herald bench bcast`.
#[derive(Debug, Serialize)]
pub(crate) struct BenchSizeJson {
    #[serde(flatten)]
    pub(crate) run: BenchRunJson,
    /// What rayon's figure means.
    pub(crate) rayon_note: &'static str,
}

/// `herald bench --json`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum BenchJson {
    /// `hop`, `stream`.
    Run(BenchRunJson),
    /// `bcast`: by payload size (`48B`, …, `4MiB`).
    Sizes(Keyed<BenchSizeJson>),
    /// `copy`: by size (`4KiB`, …, `4MiB`).
    Copies(Keyed<BenchRunJson>),
    /// `bcast64`.
    Team {
        #[serde(flatten)]
        run: BenchRunJson,
        algorithm: String,
        ranks: usize,
    },
}

impl BenchJson {
    /// The figures as text: a line each, per size and per mode indented.
    pub(crate) fn text(&self) -> String {
        match self {
            BenchJson::Run(run) => run.text(""),
            BenchJson::Sizes(sizes) => sizes
                .0
                .iter()
                .map(|(label, size)| {
                    format!(
                        "{label}:\n{}  {:<24} {}\n",
                        size.run.text("  "),
                        "rayon_note",
                        size.rayon_note
                    )
                })
                .collect(),
            BenchJson::Copies(sizes) => sizes
                .0
                .iter()
                .map(|(label, run)| format!("{label}:\n{}", run.text("  ")))
                .collect(),
            BenchJson::Team {
                run,
                algorithm,
                ranks,
            } => format!(
                "{}{:<24} {algorithm}\n{:<24} {ranks}\n",
                run.text(""),
                "algorithm",
                "ranks"
            ),
        }
    }
}
