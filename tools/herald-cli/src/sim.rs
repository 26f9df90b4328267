//! `herald schedule`, `herald sim` and `herald check`.

use crate::output::{
    self, CandidateJson, GoalJson, ReportJson, ScheduledJson, TimingsJson, ViolationJson,
};
use crate::CliError;
use herald::{
    generate,
    model::{FatTree, FatTreeCapacity, KPort, LongMessages, OnePort},
    schedule::Goal,
    sim::{check_goal, check_with, CheckOptions},
    Algorithm, Collective, CostModel, LogP, Model, Postal, Ratio, Report, Request, Schedule,
};
use std::time::{Duration, Instant};

/// The flat cost models the flags describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ModelKind {
    /// Bar-Noy & Kipnis' postal model (`--lambda`).
    Postal,
    /// LogP / LogGP (`--L --o --g`, optional `--G --msg-bytes --combine --long-messages`).
    Logp,
    /// The 1-port round model (no parameters).
    Oneport,
    /// The k-port round model (`--ports`).
    Kport,
    /// The ideal fat-tree (`--w`).
    Fattree,
}

impl ModelKind {
    /// The model-specific flags this model accepts; every other one is an error.
    fn accepts(self) -> &'static [&'static str] {
        match self {
            ModelKind::Postal => &["--lambda", "--combine"],
            ModelKind::Logp => &[
                "--L",
                "--o",
                "--g",
                "--G",
                "--msg-bytes",
                "--combine",
                "--long-messages",
            ],
            ModelKind::Oneport => &[],
            ModelKind::Kport => &["--ports"],
            ModelKind::Fattree => &["--w"],
        }
    }

    /// The flag's spelling (`--model NAME`).
    fn name(self) -> &'static str {
        match self {
            ModelKind::Postal => "postal",
            ModelKind::Logp => "logp",
            ModelKind::Oneport => "oneport",
            ModelKind::Kport => "kport",
            ModelKind::Fattree => "fattree",
        }
    }
}

/// Which model, with its parameters.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ModelArgs {
    /// Cost model.
    #[arg(long, value_enum, default_value_t = ModelKind::Postal)]
    model: ModelKind,
    /// k-port: ports per direction K ≥ 1.
    #[arg(long, required_if_eq("model", "kport"))]
    ports: Option<u32>,
    /// Fat-tree channel capacity w(n): 1, log, sqrt or linear.
    #[arg(long, required_if_eq("model", "fattree"))]
    w: Option<FatTreeCapacity>,
    /// Postal latency λ ≥ 1 (e.g. 5/2, 2.5, 3).
    #[arg(long)]
    lambda: Option<Ratio>,
    /// LogP latency L.
    #[arg(long = "L", required_if_eq("model", "logp"))]
    l: Option<Ratio>,
    /// LogP overhead o.
    #[arg(long = "o", required_if_eq("model", "logp"))]
    o: Option<Ratio>,
    /// LogP gap g.
    #[arg(long = "g", required_if_eq("model", "logp"))]
    g: Option<Ratio>,
    /// LogGP gap per byte G (default 0).
    #[arg(long = "G")]
    big_g: Option<Ratio>,
    /// LogGP: bytes per message (default 1; also the message size of `herald export`).
    #[arg(long = "msg-bytes")]
    bytes: Option<u64>,
    /// LogP: time to combine a received partial value in reduce/allreduce/prefix (default 1).
    #[arg(long)]
    combine: Option<Ratio>,
    /// LogGP's rule for long messages: published (default; g + (s−1)G between messages, the
    /// receiver busy o + (s−1)G), max-gap (herald's former max(g, (s−1)G), receiver busy o) or
    /// receiver-copies[:BYTES] (above BYTES, default 0, a sender's messages only g apart: the
    /// receiver copies, as in an MPI library's single-copy rendezvous).
    #[arg(long = "long-messages")]
    long_messages: Option<LongMessages>,
}

impl ModelArgs {
    /// The model-specific flags given, by name.
    fn given(&self) -> [(&'static str, bool); 10] {
        [
            ("--ports", self.ports.is_some()),
            ("--w", self.w.is_some()),
            ("--lambda", self.lambda.is_some()),
            ("--L", self.l.is_some()),
            ("--o", self.o.is_some()),
            ("--g", self.g.is_some()),
            ("--G", self.big_g.is_some()),
            ("--msg-bytes", self.bytes.is_some()),
            ("--combine", self.combine.is_some()),
            ("--long-messages", self.long_messages.is_some()),
        ]
    }

    /// Whether no flat-model flag was given (`--model` left at postal, no parameters).
    pub(crate) fn is_unset(&self) -> bool {
        self.model == ModelKind::Postal && self.given().iter().all(|(_, given)| !given)
    }

    /// LogGP bytes per message (`--msg-bytes`, default 1).
    pub(crate) fn msg_bytes(&self) -> u64 {
        self.bytes.unwrap_or(1)
    }

    /// The model these flags describe.
    pub(crate) fn model(&self) -> Result<Model, CliError> {
        let kind = self.model;
        if let Some((flag, _)) = self
            .given()
            .into_iter()
            .find(|&(flag, given)| given && !kind.accepts().contains(&flag))
        {
            return Err(CliError::Usage(format!(
                "{flag} does not apply to --model {}",
                kind.name()
            )));
        }
        let missing = |flag: &str| CliError::Usage(format!("--model {} needs {flag}", kind.name()));
        Ok(match kind {
            ModelKind::Kport => Model::from(
                KPort::new(self.ports.ok_or_else(|| missing("--ports"))?)
                    .map_err(CliError::usage)?,
            ),
            ModelKind::Fattree => Model::from(FatTree::new(self.w.ok_or_else(|| missing("--w"))?)),
            ModelKind::Postal => {
                let lambda = self.lambda.ok_or_else(|| missing("--lambda"))?;
                Model::from(Postal::new(lambda).map_err(CliError::usage)?)
            }
            ModelKind::Logp => {
                let (l, o, g) = (self.l, self.o, self.g);
                let logp = LogP::new(
                    l.ok_or_else(|| missing("--L"))?,
                    o.ok_or_else(|| missing("--o"))?,
                    g.ok_or_else(|| missing("--g"))?,
                    self.big_g.unwrap_or(Ratio::ZERO),
                )
                .and_then(|m| m.with_bytes(self.msg_bytes()))
                .map_err(CliError::usage)?;
                Model::from(
                    logp.with_combine(self.combine.unwrap_or(Ratio::ONE))
                        .with_long_messages(self.long_messages.unwrap_or_default()),
                )
            }
            ModelKind::Oneport => Model::from(OnePort),
        })
    }
}

/// `--algo`'s values: `auto` and every generator in the library's registry, with its help.
fn algo_parser() -> clap::builder::PossibleValuesParser {
    let auto = clap::builder::PossibleValue::new("auto")
        .help("the planner's fastest candidate for this model and problem");
    let registered = herald::schedule::registry::generators().iter().map(|g| {
        clap::builder::PossibleValue::new(g.name)
            .help(g.help)
            .aliases(g.aliases.iter().copied())
    });
    clap::builder::PossibleValuesParser::new(std::iter::once(auto).chain(registered))
}

/// The broadcast problem and the algorithm.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ProblemArgs {
    /// Number of processors (ranks).
    #[arg(short = 'n')]
    n: u32,
    /// Number of blocks (messages) to broadcast.
    #[arg(short = 'm', default_value_t = 1)]
    m: u32,
    /// The root rank.
    #[arg(long, default_value_t = 0)]
    root: u32,
    /// Algorithm (`auto`: the planner's fastest candidate by simulated makespan).
    #[arg(long, default_value = "optimal", value_parser = algo_parser())]
    algo: String,
    /// Radix of the k-nomial tree.
    #[arg(long, default_value_t = 2)]
    radix: u32,
    /// Degree of DTREE(d); number of trees of `fibonacci`.
    #[arg(long)]
    d: Option<u32>,
    /// All-to-all: items per processor.
    #[arg(long)]
    items: Option<u32>,
    /// Summation: number of operands (default n).
    #[arg(long)]
    operands: Option<u64>,
}

impl ProblemArgs {
    /// The algorithm as given (`--algo`).
    pub(crate) fn algo_name(&self) -> &str {
        &self.algo
    }

    /// Ranks (`-n`).
    pub(crate) fn n(&self) -> u32 {
        self.n
    }

    /// The root (`--root`).
    pub(crate) fn root(&self) -> u32 {
        self.root
    }

    /// The request these flags describe, for `algorithm`.
    pub(crate) fn request(&self, algorithm: Algorithm) -> Request {
        let algorithm = match algorithm {
            Algorithm::Summation { .. } => Algorithm::Summation {
                operands: self.operands,
            },
            a => a,
        };
        let mut req = Request::broadcast(algorithm, self.n, self.m, self.root);
        if let (Collective::AllToAll { .. }, Some(items)) = (req.collective, self.items) {
            req.collective = Collective::AllToAll { items };
        }
        req
    }
}

/// Arguments of `herald schedule`.
#[derive(Debug, clap::Args)]
pub(crate) struct ScheduleArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    problem: ProblemArgs,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Arguments of `herald sim`: those of `herald schedule` and how to check.
#[derive(Debug, clap::Args)]
pub(crate) struct SimArgs {
    #[command(flatten)]
    base: ScheduleArgs,
    /// Compare every applicable algorithm (one row each; with --json, a list).
    #[arg(long, conflicts_with = "algo")]
    compare: bool,
    /// Print how long generation and the check took, separately (wall clock).
    #[arg(long)]
    timings: bool,
    /// Check with queued arrivals (LogGOPSim's rule) instead of calling them illegal.
    #[arg(long = "queue-arrivals")]
    queue_arrivals: bool,
}

/// A schedule file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FileFormat {
    /// LogGOPSim's GOAL.
    Goal,
    /// herald's schedule JSON (`herald schedule --json`).
    Json,
}

/// The collective a GOAL file performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CollectiveArg {
    /// Broadcast from `--root` of `--blocks` blocks.
    Broadcast,
    /// All-to-all broadcast of `--items` items per rank.
    Alltoall,
    /// Reduce to `--root`.
    Reduce,
    /// Allreduce.
    Allreduce,
    /// Prefix (scan).
    Prefix,
}

/// Arguments of `herald check`.
#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    /// The schedule: JSON (see `herald schedule --json` for the form) or GOAL (LogGOPSim's).
    file: std::path::PathBuf,
    #[command(flatten)]
    model: ModelArgs,
    /// The file's format (default: goal for a .goal file, else json).
    #[arg(long, value_enum)]
    format: Option<FileFormat>,
    /// GOAL: the collective (default: a broadcast from the only rank that receives nothing,
    /// tags as block numbers).
    #[arg(long, value_enum)]
    collective: Option<CollectiveArg>,
    /// GOAL: the root of a broadcast or reduce (default: the only rank that receives nothing).
    #[arg(long)]
    root: Option<u32>,
    /// GOAL: blocks of a broadcast (default: the largest tag + 1).
    #[arg(long)]
    blocks: Option<u32>,
    /// GOAL: items per rank of an all-to-all (default 1).
    #[arg(long)]
    items: Option<u32>,
    /// Check with queued arrivals (LogGOPSim's rule) instead of calling them illegal.
    #[arg(long = "queue-arrivals")]
    queue_arrivals: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// A generated schedule with how it was chosen.
struct Chosen {
    /// The algorithm that made it.
    algorithm: Algorithm,
    /// The schedule.
    schedule: Schedule,
    /// Its check.
    report: Report,
    /// For `auto`: every candidate's name and makespan (None if illegal or not applicable).
    candidates: Vec<(String, Option<String>)>,
    /// Wall-clock time of generation and of the check (the chosen schedule's).
    timings: (Duration, Duration),
}

/// Generates (and checks) what the flags ask for.
fn choose(model: &Model, p: &ProblemArgs, options: CheckOptions) -> Result<Chosen, CliError> {
    let run = |algorithm: Algorithm| -> Result<(Schedule, Report, (Duration, Duration)), CliError> {
        let req = p.request(algorithm);
        let start = Instant::now();
        let schedule = generate(&req, model).map_err(CliError::usage)?;
        let generated = start.elapsed();
        let start = Instant::now();
        let report = check_with(&schedule, model, options).map_err(CliError::usage)?;
        Ok((schedule, report, (generated, start.elapsed())))
    };
    if p.algo != "auto" {
        let algorithm = p
            .algo
            .parse::<Algorithm>()
            .map_err(CliError::usage)?
            .with_params(p.radix, p.d);
        let (schedule, report, timings) = run(algorithm)?;
        return Ok(Chosen {
            algorithm,
            schedule,
            report,
            candidates: vec![],
            timings,
        });
    }
    // auto: the library's planner, for exactly these blocks under this model.
    let plan = herald::plan::plan_blocks(model, p.n, p.m, p.root).map_err(CliError::usage)?;
    let best = plan
        .best()
        .ok_or_else(|| CliError::Usage("no candidate applies".into()))?;
    let (schedule, report, timings) = run(best.algorithm)?;
    let mut candidates: Vec<(String, Option<String>)> = plan
        .ranked
        .iter()
        .map(|c| (c.label.clone(), Some(c.makespan.to_string())))
        .collect();
    candidates.extend(plan.rejected.iter().map(|(name, _)| (name.clone(), None)));
    Ok(Chosen {
        algorithm: best.algorithm,
        schedule,
        report,
        candidates,
        timings,
    })
}

/// The model in one line of text.
fn model_text(model: &Model) -> String {
    let params: Vec<String> = model
        .params()
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!("{} {}", model.name(), params.join(" "))
}

/// The check as text.
fn report_text(model: &Model, algorithm: &str, report: &Report) -> String {
    let mut out = String::new();
    let fmt = |t| format!("{} ({:.6})", report.format(t), report.base().to_f64(t));
    out += &format!("model        {}\n", model_text(model));
    out += &format!("algorithm    {algorithm}\n");
    out += &format!(
        "collective   {} on n = {}, {} sends\n",
        report.collective().name(),
        report.n(),
        report.sends()
    );
    out += &format!(
        "legal        {}\n",
        if report.legal() { "yes" } else { "NO" }
    );
    out += &format!(
        "makespan     {} — the last first arrival\n",
        fmt(report.makespan())
    );
    out += &format!(
        "busy until   {} — the last send or receive ends{}\n",
        fmt(report.busy_until()),
        if report.queued_arrivals() {
            " (arrivals queued)"
        } else {
            ""
        }
    );
    if let Some(lb) = report.lower_bound() {
        out += &format!("lower bound  {}\n", fmt(lb));
    }
    if let Some(gap) = report.gap() {
        out += &format!("gap          {}\n", report.format(gap));
    }
    if !report.legal() {
        out += &format!("violations   {}\n", report.violation_count());
        for v in report.violations().iter().take(20) {
            out += &format!(
                "  {} at {} on processor {}: {}\n",
                v.rule,
                report.format(v.at),
                v.processor,
                v.detail
            );
        }
    }
    out
}

/// The chosen algorithm's name, with auto's choice spelled out.
fn algorithm_name(c: &Chosen) -> String {
    if c.candidates.is_empty() {
        c.algorithm.to_string()
    } else {
        format!("auto: {}", c.algorithm)
    }
}

/// auto's candidates as text.
fn candidates_text(c: &Chosen) -> String {
    let rows: Vec<String> = c
        .candidates
        .iter()
        .map(|(name, ms)| format!("{name}={}", ms.as_deref().unwrap_or("n/a")))
        .collect();
    format!("candidates   {}\n", rows.join(" "))
}

/// `herald schedule`.
pub(crate) fn schedule(a: &ScheduleArgs) -> Result<(), CliError> {
    let model = a.model.model()?;
    let c = choose(&model, &a.problem, CheckOptions::default())?;
    if a.json {
        let mut v = ReportJson::of(&model, &algorithm_name(&c), &c.report, a.problem.m);
        let base = c.report.base();
        let rows: Vec<ScheduledJson> = c
            .schedule
            .sends_by_time()
            .iter()
            .map(|s| {
                let at = base
                    .convert(s.at, c.schedule.base())
                    .map_err(CliError::usage)?;
                Ok(ScheduledJson {
                    at: base.format(at),
                    from: s.from,
                    to: s.to,
                    block: s.what,
                })
            })
            .collect::<Result<_, CliError>>()?;
        v.schedule = Some(rows);
        return output::print(&v);
    }
    let base = c.schedule.base();
    let mut out = format!(
        "# {} on n = {}, m = {}, root {}: {} sends\n# at\tfrom\tto\tblock\n",
        algorithm_name(&c),
        a.problem.n,
        a.problem.m,
        a.problem.root,
        c.schedule.len()
    );
    for s in c.schedule.sends_by_time() {
        out += &format!("{}\t{}\t{}\t{}\n", base.format(s.at), s.from, s.to, s.what);
    }
    out += &report_text(&model, &algorithm_name(&c), &c.report);
    crate::print_out(&out)
}

/// Every algorithm `--compare` tries: the planner's candidates for `n` ranks and `m` blocks
/// (the registry's sweeps of every broadcast generator that applies to the model).
pub(crate) fn compare_candidates(
    model: &Model,
    n: u32,
    m: u32,
) -> Result<Vec<Algorithm>, CliError> {
    herald::plan::candidates(model, n, m).map_err(CliError::usage)
}

/// `herald sim --compare`.
fn compare(a: &SimArgs, model: &Model) -> Result<(), CliError> {
    let p = &a.base.problem;
    let mut rows = vec![];
    let mut lower_bound = None;
    for algorithm in compare_candidates(model, p.n, p.m)? {
        let req = p.request(algorithm);
        let schedule = match generate(&req, model) {
            Ok(s) => s,
            Err(herald::schedule::ScheduleError::NotApplicable { .. }) => continue,
            Err(e) => return Err(CliError::usage(e)),
        };
        let report =
            check_with(&schedule, model, CheckOptions::default()).map_err(CliError::usage)?;
        lower_bound = lower_bound.or(report.lower_bound().map(|t| report.base().ratio(t)));
        rows.push((algorithm, report));
    }
    let lb = lower_bound.ok_or_else(|| CliError::Usage("no algorithm applies".into()))?;
    if a.base.json {
        let list: Vec<ReportJson> = rows
            .iter()
            .map(|(alg, r)| ReportJson::of(model, &alg.to_string(), r, p.m))
            .collect();
        return output::print(&list);
    }
    println!(
        "# {} — n = {}, m = {}; lower bound {} ({:.6})",
        model_text(model),
        p.n,
        p.m,
        lb,
        lb.to_f64()
    );
    println!(
        "{:<22} {:>16} {:>14} {:>12} {:>6}",
        "algorithm", "makespan", "", "gap", "legal"
    );
    for (alg, r) in &rows {
        let gap = r.gap().map(|g| r.format(g)).unwrap_or_else(|| "-".into());
        let ms = r.makespan();
        println!(
            "{:<22} {:>16} {:>14.6} {:>12} {:>6}",
            alg.to_string(),
            r.format(ms),
            r.base().to_f64(ms),
            gap,
            if r.legal() { "yes" } else { "NO" }
        );
    }
    Ok(())
}

/// Generates the one schedule the flags name (`auto` picks by simulated makespan).
pub(crate) fn generate_one(model: &Model, p: &ProblemArgs) -> Result<Schedule, CliError> {
    Ok(choose(model, p, CheckOptions::default())?.schedule)
}

/// The one schedule the flags name, with its algorithm's name and its check.
pub(crate) fn generate_checked(
    model: &Model,
    p: &ProblemArgs,
) -> Result<(String, Schedule, Report), CliError> {
    let c = choose(model, p, CheckOptions::default())?;
    Ok((algorithm_name(&c), c.schedule, c.report))
}

/// `herald sim`.
pub(crate) fn sim(a: &SimArgs) -> Result<(), CliError> {
    let model = a.base.model.model()?;
    if a.compare {
        return compare(a, &model);
    }
    let options = CheckOptions {
        queue_arrivals: a.queue_arrivals,
        ..CheckOptions::default()
    };
    let c = choose(&model, &a.base.problem, options)?;
    let (generated, checked) = c.timings;
    if a.base.json {
        let mut v = ReportJson::of(&model, &algorithm_name(&c), &c.report, a.base.problem.m);
        if !c.candidates.is_empty() {
            v.candidates = Some(
                c.candidates
                    .iter()
                    .map(|(name, ms)| CandidateJson {
                        algorithm: name.clone(),
                        makespan: ms.clone(),
                    })
                    .collect(),
            );
        }
        if a.timings {
            v.timings = Some(TimingsJson {
                generate_s: generated.as_secs_f64(),
                check_s: checked.as_secs_f64(),
            });
        }
        output::print(&v)?;
    } else {
        print!("{}", report_text(&model, &algorithm_name(&c), &c.report));
        if !c.candidates.is_empty() {
            print!("{}", candidates_text(&c));
        }
        if a.timings {
            println!(
                "timings      generate {:.3} s, check {:.3} s (wall clock{})",
                generated.as_secs_f64(),
                checked.as_secs_f64(),
                if c.candidates.is_empty() {
                    ""
                } else {
                    ", the chosen candidate's"
                }
            );
        }
    }
    Ok(())
}

/// The collective `herald check --format goal` is told to check, if any.
fn goal_collective_arg(a: &CheckArgs, goal: &Goal) -> Result<Option<Collective>, CliError> {
    let n = goal.ranks.len() as u32;
    let inferred = || herald::sim::goal_collective(goal).map_err(CliError::usage);
    let root = |a: &CheckArgs| -> Result<u32, CliError> {
        match a.root {
            Some(r) => Ok(r),
            None => match inferred()? {
                Collective::Broadcast { root, .. } => Ok(root),
                _ => Ok(0),
            },
        }
    };
    let c = match a.collective {
        None if a.root.is_none() && a.blocks.is_none() => return Ok(None),
        None | Some(CollectiveArg::Broadcast) => {
            let blocks = match (a.blocks, inferred()) {
                (Some(b), _) => b,
                (None, Ok(Collective::Broadcast { blocks, .. })) => blocks,
                (None, _) => 1,
            };
            Collective::Broadcast {
                root: root(a)?,
                blocks,
            }
        }
        Some(CollectiveArg::Alltoall) => Collective::AllToAll {
            items: a.items.unwrap_or(1),
        },
        Some(CollectiveArg::Reduce) => Collective::Reduce {
            root: a.root.unwrap_or(0),
        },
        Some(CollectiveArg::Allreduce) => Collective::Allreduce,
        Some(CollectiveArg::Prefix) => Collective::Prefix,
    };
    if let Collective::Broadcast { root, .. } | Collective::Reduce { root } = c {
        if root >= n {
            return Err(CliError::Usage(format!("root {root} is not below n = {n}")));
        }
    }
    Ok(Some(c))
}

/// `herald check --format goal`: run the program under the model, check its sends.
fn check_goal_file(a: &CheckArgs, model: &Model, text: &str) -> Result<(), CliError> {
    let goal = Goal::parse(text).map_err(CliError::usage)?;
    let collective = goal_collective_arg(a, &goal)?;
    let options = CheckOptions {
        queue_arrivals: a.queue_arrivals,
        ..CheckOptions::default()
    };
    let result = check_goal(&goal, model, collective, options);
    let c = match result {
        Ok(c) => c,
        Err(
            e @ (herald::sim::GoalRunError::Stuck { .. }
            | herald::sim::GoalRunError::Unreceived { .. }),
        ) => return Err(CliError::Failed(e.to_string())),
        Err(e) => return Err(CliError::usage(e)),
    };
    let report = &c.report;
    let m = match report.collective() {
        Collective::Broadcast { blocks, .. } => blocks,
        _ => 1,
    };
    let name = a.file.display().to_string();
    let first = c.first_violation().map(|v| ViolationJson::of(report, v));
    let run_busy = c.run.busy_until();
    if a.json {
        let mut v = ReportJson::of(model, &name, report, m);
        v.goal = Some(GoalJson {
            ranks: goal.ranks.len(),
            operations: goal.op_count(),
            busy_until: report.format(run_busy),
            first_violation: first,
        });
        output::print(&v)?;
    } else {
        print!("{}", report_text(model, &name, report));
        println!(
            "GOAL run     {} ranks, {} operations; busy until {} (messages queued when the \
             receiver is busy, as LogGOPSim)",
            goal.ranks.len(),
            goal.op_count(),
            report.format(run_busy)
        );
        if let Some(v) = c.first_violation() {
            println!(
                "first        {} at {} on processor {}: {}",
                v.rule,
                report.format(v.at),
                v.processor,
                v.detail
            );
        }
    }
    Ok(())
}

/// `herald check`.
pub(crate) fn check(a: &CheckArgs) -> Result<(), CliError> {
    let model = a.model.model()?;
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", a.file.display())))?;
    let goal = match a.format {
        Some(format) => format == FileFormat::Goal,
        None => a.file.extension().is_some_and(|e| e == "goal"),
    };
    if goal {
        return check_goal_file(a, &model, &text);
    }
    if a.collective.is_some() || a.root.is_some() || a.blocks.is_some() || a.items.is_some() {
        return Err(CliError::Usage(
            "--collective/--root/--blocks/--items apply to GOAL files (the JSON names its \
             collective)"
                .into(),
        ));
    }
    let schedule = Schedule::from_json(&text).map_err(CliError::usage)?;
    let options = CheckOptions {
        queue_arrivals: a.queue_arrivals,
        ..CheckOptions::default()
    };
    let report = check_with(&schedule, &model, options).map_err(CliError::usage)?;
    let m = match schedule.collective() {
        Collective::Broadcast { blocks, .. } => blocks,
        _ => 1,
    };
    let name = a.file.display().to_string();
    if a.json {
        output::print(&ReportJson::of(&model, &name, &report, m))?;
    } else {
        print!("{}", report_text(&model, &name, &report));
    }
    Ok(())
}
