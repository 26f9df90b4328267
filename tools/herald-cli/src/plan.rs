//! `herald plan`: rank every candidate broadcast by simulated time.
//!
//! With `--profile`, `--level` or `--synthetic` the model is hierarchical: per-level costs on
//! the machine's (or a synthetic) hierarchy, from a calibrated profile (nanoseconds; levels it did
//! not measure assumed `--factor` times the next finer level) and/or explicit `--level` specs.

use crate::output::{
    self, HierLevelJson, ModelJson, PlanCandidateJson, PlanJson, PlanModelJson, RuntimeRowJson,
};
use crate::sim::ModelArgs;
use crate::CliError;
use herald::{
    model::{
        load_profile, Assumptions, Hier, HierLevel, LevelCost, LevelSource, LongMessages,
        ProfileError,
    },
    plan,
    topology::RankMap,
    LogP, Model, Plan, PlanRequest, Postal, Ratio, TopologySource,
};
use std::path::PathBuf;

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
    /// A calibrated profile (herald calibrate): a hierarchical LogGP model in nanoseconds.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Accept a profile of another schema version or host.
    #[arg(long, requires = "profile")]
    force: bool,
    /// A synthetic hwloc topology (e.g. "pack:2 l3:2 core:4 pu:1") instead of this machine's.
    #[arg(long)]
    synthetic: Option<String>,
    /// Per-level costs, NAME=SPEC, SPEC one of lambda=R or L=R,o=R,g=R[,G=R], optionally with
    /// ,w=W (boundary capacity of the level's nodes); e.g. --level package=lambda=20,w=1.
    /// Replaces the profile's values for that level.
    #[arg(long = "level", value_name = "NAME=SPEC")]
    levels: Vec<String>,
    /// With --profile: an unmeasured level costs this many times the next finer level.
    #[arg(long, default_value_t = Ratio::integer(Assumptions::DEFAULT_FACTOR))]
    factor: Ratio,
    /// Rank map: compact, scatter or list:i,j,… (OS CPU indices).
    #[arg(long, default_value = "compact")]
    map: String,
}

/// Parses `NAME=SPEC` of `--level`.
fn parse_level(text: &str) -> Result<(String, HierLevel), CliError> {
    let bad = |why: &str| CliError::Usage(format!("--level {text:?}: {why}"));
    let (name, spec) = text
        .split_once('=')
        .ok_or_else(|| bad("expected NAME=SPEC"))?;
    let mut get = std::collections::HashMap::new();
    for kv in spec.split(',') {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| bad("expected key=value"))?;
        let v: Ratio = v.trim().parse().map_err(CliError::usage)?;
        if get.insert(k.trim().to_owned(), v).is_some() {
            return Err(bad("a key repeats"));
        }
    }
    let capacity = match get.remove("w") {
        Some(w) if w.is_integer() && w.numer() >= 1 && w.numer() <= u64::from(u32::MAX) => {
            Some(w.numer() as u32)
        }
        Some(_) => return Err(bad("w is a whole number ≥ 1")),
        None => None,
    };
    let cost = if let Some(lambda) = get.remove("lambda") {
        LevelCost::Postal(Postal::new(lambda).map_err(CliError::usage)?)
    } else {
        let mut need = |k: &str| {
            get.remove(k)
                .ok_or_else(|| bad("give lambda=R, or L, o and g"))
        };
        let (l, o, g) = (need("L")?, need("o")?, need("g")?);
        let big_g = get.remove("G").unwrap_or(Ratio::ZERO);
        LevelCost::LogP(LogP::new(l, o, g, big_g).map_err(CliError::usage)?)
    };
    if let Some(k) = get.keys().next() {
        return Err(bad(&format!("unknown key {k:?} (lambda, L, o, g, G, w)")));
    }
    Ok((
        name.trim().to_owned(),
        HierLevel {
            cost: Some(cost),
            capacity,
        },
    ))
}

impl PlanArgs {
    /// Whether the model is hierarchical.
    fn hierarchical(&self) -> bool {
        self.profile.is_some() || self.synthetic.is_some() || !self.levels.is_empty()
    }

    /// The hierarchical model the flags describe.
    fn hier(&self) -> Result<Hier, CliError> {
        if !self.model.is_unset() {
            return Err(CliError::Usage(
                "--model and its parameters do not apply with --profile/--level/--synthetic".into(),
            ));
        }
        let source = TopologySource::from_options(self.synthetic.as_deref(), None)
            .map_err(CliError::usage)?;
        let h = source.load().map_err(CliError::usage)?;
        let cpus = self
            .map
            .parse::<RankMap>()
            .and_then(|m| m.order(&h))
            .map_err(CliError::usage)?;
        let given = self
            .levels
            .iter()
            .map(|l| parse_level(l))
            .collect::<Result<Vec<_>, _>>()?;
        for (name, _) in &given {
            if !h.levels().iter().any(|l| l.name() == *name) {
                let known: Vec<String> = h.levels().iter().map(|l| l.name()).collect();
                return Err(CliError::Usage(format!(
                    "--level {name}: no such level in {source} (levels: {})",
                    known.join(", ")
                )));
            }
        }
        match &self.profile {
            Some(path) => {
                let profile = load_profile(path, self.force).map_err(CliError::usage)?;
                let assume = Assumptions {
                    factor: self.factor,
                    levels: given,
                    ..Assumptions::default()
                };
                Hier::from_profile(&profile, h, &cpus, &assume).map_err(|e| match e {
                    ProfileError::NoLevel(l) => CliError::Usage(format!(
                        "ranks meet at level {l}, which the profile did not measure and no finer \
                         measured level can stand for: give --level {l}=SPEC"
                    )),
                    e => CliError::usage(e),
                })
            }
            None => {
                let levels = h
                    .levels()
                    .iter()
                    .map(|l| {
                        given
                            .iter()
                            .find(|(n, _)| *n == l.name())
                            .map_or_else(HierLevel::default, |(_, v)| *v)
                    })
                    .collect();
                Hier::new(h, &cpus, levels).map_err(CliError::usage)
            }
        }
    }
}

/// Runs `herald plan`.
pub(crate) fn run(a: &PlanArgs) -> Result<(), CliError> {
    let mut machine = None;
    let mut oversubscribed = false;
    let (model, unit) = if a.hierarchical() {
        let hier = a.hier()?;
        let unit = if a.profile.is_some() { " ns" } else { "" };
        machine = Some(hier.hierarchy().clone());
        match &a.profile {
            // More ranks than PUs: the flat model the runtime plans under (threads share PUs).
            Some(path) if a.levels.is_empty() && a.n as usize > hier.hierarchy().pu_count() => {
                let profile = load_profile(path, a.force).map_err(CliError::usage)?;
                oversubscribed = true;
                let m = herald::plan::oversubscribed_model(&profile, hier.hierarchy(), a.n)
                    .map_err(CliError::usage)?;
                (m, unit)
            }
            _ => (Model::from(hier), unit),
        }
    } else {
        (a.model.model()?, "")
    };
    let req = PlanRequest {
        n: a.n,
        root: a.root,
        bytes: a.payload,
        blocks: a.blocks,
    };
    let p = plan(&model, &req).map_err(CliError::usage)?;
    let runtime = runtime_ranking(a, &req, machine.as_ref())?;
    if a.json {
        print_json(a, &model, &p, unit, runtime)?;
        return Ok(());
    }
    if let Model::Hier(h) = &model {
        print_levels(h, a.n, unit);
    }
    if let (true, Model::LogP(l)) = (oversubscribed, &model) {
        println!(
            "# {} ranks on fewer PUs: threads share PUs, so the flat LogGP model of the coarsest \
             measured level with thread handoffs added to L, as the runtime plans: L={} o={} g={} \
             G={} ns{}",
            a.n,
            l.l().decimal(),
            l.o().decimal(),
            l.g().decimal(),
            l.big_g().decimal(),
            match l.long_messages() {
                LongMessages::ReceiverCopies { above } => format!(
                    "; messages of more than {above} bytes (longer than the transport cuts into eager \
                     pieces) are copied by their receiver{}",
                    l.whole_gap().map_or(String::new(), |(_, g)| format!(", G={} ns per byte", g.decimal()))
                ),
                _ => String::new(),
            }
        );
    }
    println!(
        "# n = {}, {} bytes: {} candidates simulated, {} rejected",
        a.n,
        a.payload,
        p.ranked.len() + p.rejected.len(),
        p.rejected.len()
    );
    let width = p
        .ranked
        .iter()
        .take(a.top)
        .map(|c| c.label.chars().count())
        .max()
        .unwrap_or(9)
        .max(9);
    println!(
        "{:<4} {:<width$} {:>6} {:>11} {:>16} {:>16}",
        "rank", "candidate", "blocks", "block bytes", "makespan", "lower bound"
    );
    for (i, c) in p.ranked.iter().take(a.top).enumerate() {
        println!(
            "{:<4} {:<width$} {:>6} {:>11} {:>16} {:>16}",
            i + 1,
            c.label,
            c.blocks,
            c.block_bytes,
            format!("{}{unit}", c.makespan.decimal()),
            format!("{}{unit}", c.lower_bound.decimal())
        );
    }
    println!("why: {}", p.why_in(unit));
    if let Some(rows) = runtime {
        println!(
            "# herald's runtime (its executor's cost model, docs/fidelity.md), by predicted time:"
        );
        for (i, r) in rows.iter().take(a.top).enumerate() {
            println!(
                "{:<4} {:<width$} {:>6} {:>7} {:>14.0} ns",
                i + 1,
                r.label,
                r.blocks,
                r.transport,
                r.predicted_ns
            );
        }
    }
    Ok(())
}

/// With `--profile` (and no `--level` overrides, compact ranks): the candidates ranked by
/// herald's runtime cost model, each under every transport the profile measured.
fn runtime_ranking(
    a: &PlanArgs,
    req: &PlanRequest,
    machine: Option<&herald::Hierarchy>,
) -> Result<Option<Vec<RuntimeRowJson>>, CliError> {
    let (Some(path), Some(machine)) = (&a.profile, machine) else {
        return Ok(None);
    };
    if !a.levels.is_empty() || a.map != "compact" {
        return Ok(None);
    }
    let profile = load_profile(path, a.force).map_err(CliError::usage)?;
    let p = herald::plan::plan_for_runtime(&profile, machine, req).map_err(CliError::usage)?;
    Ok(Some(
        p.ranked
            .iter()
            .map(|c| RuntimeRowJson {
                label: c.candidate.label.clone(),
                blocks: c.candidate.blocks,
                transport: c.transport.name(),
                predicted_ns: c.predicted.makespan_ns(),
            })
            .collect(),
    ))
}

/// The hierarchical model's levels, one line each.
fn print_levels(h: &Hier, n: u32, unit: &str) {
    let used = h.used_levels(n);
    let units = if unit.is_empty() { "model units" } else { "ns" };
    println!("# hierarchical {} model ({units}), {n} ranks", h.family());
    for (d, (level, source)) in h.levels().iter().zip(h.sources()).enumerate() {
        let name = h.hierarchy().level(d).name();
        let cost = level.cost.map_or_else(|| "-".to_owned(), |c| c.to_string());
        let w = level
            .capacity
            .map_or_else(|| "unbounded".to_owned(), |w| format!("w={w}"));
        let usage = match (used[d], source) {
            (true, _) => format!("{source}; ranks meet here"),
            (false, LevelSource::Unused) => "no rank pair meets here".to_owned(),
            (false, _) => format!("{source}; no rank pair meets here"),
        };
        println!("#   {name:<8} {cost:<40} {w:<10} {usage}");
    }
}

/// The plan as one JSON object.
fn print_json(
    a: &PlanArgs,
    model: &Model,
    p: &Plan,
    unit: &str,
    runtime: Option<Vec<RuntimeRowJson>>,
) -> Result<(), CliError> {
    let rows: Vec<PlanCandidateJson> = p
        .ranked
        .iter()
        .map(|c| PlanCandidateJson {
            algorithm: c.algorithm.to_string(),
            label: c.label.clone(),
            split: c.leaders.as_ref().map(|l| l.split.clone()),
            stages: c
                .leaders
                .as_ref()
                .map(|l| l.algorithms.iter().map(|x| x.to_string()).collect()),
            blocks: c.blocks,
            block_bytes: c.block_bytes,
            makespan: c.makespan.to_string(),
            makespan_f64: c.makespan.to_f64(),
            lower_bound: c.lower_bound.to_string(),
            sends: c.sends,
        })
        .collect();
    let model = match model {
        Model::Hier(h) => PlanModelJson::Hier {
            name: "hier",
            family: h.family(),
            levels: h
                .levels()
                .iter()
                .zip(h.sources())
                .enumerate()
                .map(|(d, (l, s))| HierLevelJson {
                    name: h.hierarchy().level(d).name(),
                    depth: d,
                    cost: l.cost.map(|c| c.to_string()),
                    capacity: l.capacity,
                    source: s.to_string(),
                })
                .collect(),
        },
        m => PlanModelJson::Flat(ModelJson::of(m)),
    };
    output::print(&PlanJson {
        model,
        unit: unit.trim().to_owned(),
        n: a.n,
        bytes: a.payload,
        best: rows.first().cloned(),
        ranked: rows,
        why: p.why_in(unit),
        rejected: p.rejected.len(),
        runtime,
    })
}
