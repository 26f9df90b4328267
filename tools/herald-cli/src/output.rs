//! The `--json` outputs of `herald schedule`, `sim`, `check`, `plan`, `topo` and `run`, typed:
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
    pub(crate) long_messages: Option<&'static str>,
}

impl ModelJson {
    pub(crate) fn of(model: &Model) -> ModelJson {
        let long = match model {
            Model::LogP(l) if l.bytes() != 1 => Some((l.bytes(), l.long_messages().name())),
            _ => None,
        };
        ModelJson {
            name: model.name(),
            params: model
                .params()
                .into_iter()
                .map(|(k, v)| (k, v.to_string()))
                .collect(),
            bytes: long.map(|(b, _)| b),
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
