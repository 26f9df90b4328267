//! `herald schedule`, `herald sim` and `herald check`.

use crate::CliError;
use herald::{
    check_goal, check_with, generate, Algorithm, CheckOptions, Collective, CostModel, FatTree,
    FatTreeCapacity, Goal, KPort, LogP, LongMessages, Model, OnePort, Postal, Ratio, Report,
    Request, Schedule, Send,
};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Which model, with its parameters.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ModelArgs {
    /// Cost model: postal, logp, oneport, kport or fattree.
    #[arg(long, default_value = "postal")]
    model: String,
    /// k-port: ports per direction K ≥ 1.
    #[arg(long)]
    ports: Option<u32>,
    /// Fat-tree channel capacity w(n): 1, log, sqrt or linear.
    #[arg(long)]
    w: Option<String>,
    /// Postal latency λ ≥ 1 (e.g. 5/2, 2.5, 3).
    #[arg(long)]
    lambda: Option<Ratio>,
    /// LogP latency L.
    #[arg(long = "L")]
    l: Option<Ratio>,
    /// LogP overhead o.
    #[arg(long = "o")]
    o: Option<Ratio>,
    /// LogP gap g.
    #[arg(long = "g")]
    g: Option<Ratio>,
    /// LogGP gap per byte G (default 0).
    #[arg(long = "G")]
    big_g: Option<Ratio>,
    /// LogGP: bytes per message (default 1; also the message size of `herald export`).
    #[arg(long = "msg-bytes", default_value_t = 1)]
    bytes: u64,
    /// LogP: time to combine a received partial value in reduce/allreduce/prefix (default 1).
    #[arg(long)]
    combine: Option<Ratio>,
    /// LogGP's rule for long messages: published (default; g + (s−1)G between messages, the
    /// receiver busy o + (s−1)G) or max-gap (herald's former max(g, (s−1)G), receiver busy o).
    #[arg(long = "long-messages")]
    long_messages: Option<LongMessages>,
}

impl ModelArgs {
    /// Whether no flat-model flag was given (`--model` left at postal, no parameters).
    pub(crate) fn is_unset(&self) -> bool {
        self.model == "postal"
            && self.ports.is_none()
            && self.w.is_none()
            && self.lambda.is_none()
            && self.l.is_none()
            && self.o.is_none()
            && self.g.is_none()
            && self.big_g.is_none()
            && self.bytes == 1
            && self.combine.is_none()
            && self.long_messages.is_none()
    }

    /// The model these flags describe.
    pub(crate) fn model(&self) -> Result<Model, CliError> {
        let need = |v: Option<Ratio>, flag: &str| {
            v.ok_or_else(|| CliError::Usage(format!("--model {} needs {flag}", self.model)))
        };
        let stray = |ok: bool, flag: &str| {
            if ok {
                Ok(())
            } else {
                Err(CliError::Usage(format!(
                    "{flag} does not apply to --model {}",
                    self.model
                )))
            }
        };
        if self.model != "kport" {
            stray(self.ports.is_none(), "--ports")?;
        }
        if self.model != "fattree" {
            stray(self.w.is_none(), "--w")?;
        }
        let plain = |this: &ModelArgs| {
            stray(this.lambda.is_none(), "--lambda")?;
            stray(
                this.l.is_none() && this.o.is_none() && this.g.is_none(),
                "--L/--o/--g",
            )?;
            stray(this.big_g.is_none() && this.bytes == 1, "--G/--msg-bytes")?;
            stray(this.long_messages.is_none(), "--long-messages")?;
            stray(this.combine.is_none(), "--combine")
        };
        match self.model.as_str() {
            "kport" => {
                plain(self)?;
                let k = self
                    .ports
                    .ok_or_else(|| CliError::Usage("--model kport needs --ports".into()))?;
                Ok(Model::from(KPort::new(k).map_err(CliError::usage)?))
            }
            "fattree" => {
                plain(self)?;
                let w = self
                    .w
                    .as_deref()
                    .ok_or_else(|| CliError::Usage("--model fattree needs --w".into()))?
                    .parse::<FatTreeCapacity>()
                    .map_err(CliError::usage)?;
                Ok(Model::from(FatTree::new(w)))
            }
            "postal" => {
                stray(
                    self.l.is_none() && self.o.is_none() && self.g.is_none(),
                    "--L/--o/--g",
                )?;
                stray(self.big_g.is_none() && self.bytes == 1, "--G/--msg-bytes")?;
                stray(self.long_messages.is_none(), "--long-messages")?;
                let postal =
                    Postal::new(need(self.lambda, "--lambda")?).map_err(CliError::usage)?;
                Ok(Model::from(postal))
            }
            "logp" => {
                stray(self.lambda.is_none(), "--lambda")?;
                let logp = LogP::new(
                    need(self.l, "--L")?,
                    need(self.o, "--o")?,
                    need(self.g, "--g")?,
                    self.big_g.unwrap_or(Ratio::ZERO),
                )
                .and_then(|m| m.with_bytes(self.bytes))
                .map_err(CliError::usage)?;
                let logp = logp
                    .with_combine(self.combine.unwrap_or(Ratio::ONE))
                    .with_long_messages(self.long_messages.unwrap_or_default());
                Ok(Model::from(logp))
            }
            "oneport" => {
                stray(self.lambda.is_none(), "--lambda")?;
                stray(
                    self.l.is_none() && self.o.is_none() && self.g.is_none(),
                    "--L/--o/--g",
                )?;
                stray(self.big_g.is_none() && self.bytes == 1, "--G/--msg-bytes")?;
                stray(self.long_messages.is_none(), "--long-messages")?;
                stray(self.combine.is_none(), "--combine")?;
                Ok(Model::from(OnePort))
            }
            other => Err(CliError::Usage(format!(
                "unknown model {other:?} (known: postal, logp, oneport, kport, fattree)"
            ))),
        }
    }
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
    /// Algorithm: optimal, auto, bcast, bp, binomial, binary, knomial, chain, star,
    /// scatter-allgather, repeat, pack, pipeline, dtree, greedy, fibonacci; reduce, allreduce,
    /// allreduce-paper, alltoall, summation.
    #[arg(long, default_value = "optimal")]
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
        Request {
            items: self.items,
            operands: self.operands,
            ..Request::broadcast(algorithm, self.n, self.m, self.root)
        }
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

/// Arguments of `herald sim`.
#[derive(Debug, clap::Args)]
pub(crate) struct SimArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    problem: ProblemArgs,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
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

/// Arguments of `herald check`.
#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    /// The schedule: JSON (see `herald schedule --json` for the form) or GOAL (LogGOPSim's).
    file: std::path::PathBuf,
    #[command(flatten)]
    model: ModelArgs,
    /// The file's format: json or goal (default: goal for a .goal file, else json).
    #[arg(long)]
    format: Option<String>,
    /// GOAL: the collective — broadcast, alltoall, reduce, allreduce or prefix (default: a
    /// broadcast from the only rank that receives nothing, tags as block numbers).
    #[arg(long)]
    collective: Option<String>,
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

/// Candidates for `--algo auto`: a handful, never every parameter value.
fn auto_candidates(model: &Model, m: u32) -> Result<Vec<Algorithm>, CliError> {
    if let Model::FatTree(_) = model {
        return Ok(vec![Algorithm::FatBroadcast, Algorithm::Pipelined]);
    }
    let timing = model
        .timing(model.time_base().map_err(CliError::usage)?)
        .map_err(CliError::usage)?;
    // DTREE's rule of thumb: degree ⌈λ⌉ + 1 with λ = latency / send step.
    let step = timing.send_step().max(1);
    let lambda = timing.latency.div_ceil(step);
    let best = (lambda + 1).clamp(2, 64) as u32;
    let mut out = vec![];
    if m == 1 {
        out.push(Algorithm::Optimal);
    }
    out.extend([
        Algorithm::Binomial,
        Algorithm::Binary,
        Algorithm::Chain,
        Algorithm::Star,
    ]);
    for r in [best.saturating_sub(1), best, best + 1] {
        if r >= 3 {
            out.push(Algorithm::Knomial { radix: r });
        }
    }
    if let Model::KPort(_) = model {
        out.extend([Algorithm::Rotation, Algorithm::KTree]);
    }
    if m > 1 {
        out.push(Algorithm::ScatterAllgather);
        out.extend([
            Algorithm::Pipeline,
            Algorithm::Greedy,
            Algorithm::Dtree { d: 2 },
            Algorithm::Dtree { d: best },
        ]);
    }
    Ok(out)
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
    let mut best: Option<Chosen> = None;
    let mut candidates = vec![];
    for algorithm in auto_candidates(model, p.m)? {
        let (schedule, report, timings) = match run(algorithm) {
            Ok(x) => x,
            Err(CliError::Usage(_)) => {
                candidates.push((algorithm.to_string(), None));
                continue;
            }
            Err(e) => return Err(e),
        };
        let legal = report.legal();
        candidates.push((
            algorithm.to_string(),
            legal.then(|| report.format(report.makespan())),
        ));
        let better = best
            .as_ref()
            .is_none_or(|b| report.makespan() < b.report.makespan());
        if legal && better {
            best = Some(Chosen {
                algorithm,
                schedule,
                report,
                candidates: vec![],
                timings,
            });
        }
    }
    let mut chosen = best.ok_or_else(|| CliError::Usage("no candidate applies".into()))?;
    chosen.candidates = candidates;
    Ok(chosen)
}

/// The model as JSON: name and exact parameters.
pub(crate) fn model_json(model: &Model) -> Value {
    let mut obj = serde_json::Map::new();
    obj.insert("name".into(), json!(model.name()));
    for (k, v) in model.params() {
        obj.insert(k.into(), json!(v.to_string()));
    }
    if let Model::LogP(l) = model {
        if l.bytes() != 1 {
            obj.insert("bytes".into(), json!(l.bytes()));
            obj.insert("long_messages".into(), json!(l.long_messages().name()));
        }
    }
    Value::Object(obj)
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

/// A send as JSON, time exact in `r`'s base.
fn send_json(r: &Report, s: &Send) -> Value {
    json!({"at": r.format(s.at), "from": s.from, "to": s.to, "what": s.what})
}

/// The check as JSON.
fn report_json(model: &Model, algorithm: &str, report: &Report, m: u32) -> Value {
    let violations: Vec<Value> = report
        .violations()
        .iter()
        .map(|v| {
            json!({"rule": v.rule.name(), "at": report.format(v.at), "processor": v.processor,
                   "send": v.send.as_ref().map(|s| send_json(report, s)), "detail": v.detail})
        })
        .collect();
    let makespan = report.makespan();
    json!({
        "model": model_json(model),
        "algorithm": algorithm,
        "collective": report.collective().name(),
        "n": report.n(),
        "m": m,
        "legal": report.legal(),
        "makespan": report.format(makespan),
        "makespan_f64": report.base().to_f64(makespan),
        "busy_until": report.format(report.busy_until()),
        "arrivals": if report.queued_arrivals() { "queued" } else { "strict" },
        "lower_bound": report.lower_bound().map(|t| report.format(t)),
        "gap": report.gap().map(|t| report.format(t)),
        "sends": report.sends(),
        "violation_count": report.violation_count(),
        "violations": violations,
    })
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
        let mut v = report_json(&model, &algorithm_name(&c), &c.report, a.problem.m);
        let base = c.report.base();
        let rows: Vec<Value> = c
            .schedule
            .sends_by_time()
            .iter()
            .map(|s| {
                let at = base
                    .convert(s.at, c.schedule.base())
                    .map_err(CliError::usage)?;
                Ok(json!({"at": base.format(at), "from": s.from, "to": s.to, "block": s.what}))
            })
            .collect::<Result<_, CliError>>()?;
        v["schedule"] = Value::Array(rows);
        println!("{v}");
        return Ok(());
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

/// Every algorithm `--compare` tries: each family once, with the parameters that matter most.
pub(crate) fn compare_candidates(model: &Model, m: u32) -> Result<Vec<Algorithm>, CliError> {
    if let Model::FatTree(_) = model {
        return Ok(vec![Algorithm::FatBroadcast, Algorithm::Pipelined]);
    }
    let mut out = vec![Algorithm::Optimal, Algorithm::Bcast, Algorithm::Bp];
    out.extend(
        auto_candidates(model, m)?
            .into_iter()
            .filter(|a| *a != Algorithm::Optimal),
    );
    let timing = model
        .timing(model.time_base().map_err(CliError::usage)?)
        .map_err(CliError::usage)?;
    let lambda_ceil = timing
        .latency
        .div_ceil(timing.send_step().max(1))
        .min(1 << 20) as u32;
    out.extend([
        Algorithm::ScatterAllgather,
        Algorithm::Repeat,
        Algorithm::Pack,
        Algorithm::Pipeline,
        Algorithm::Dtree { d: 2 },
        Algorithm::Dtree { d: lambda_ceil + 1 },
        Algorithm::Greedy,
        Algorithm::Fibonacci { d: None },
        Algorithm::KTree,
        Algorithm::Rotation,
    ]);
    let mut seen = std::collections::HashSet::new();
    out.retain(|a| seen.insert(*a));
    Ok(out)
}

/// `herald sim --compare`.
fn compare(a: &SimArgs, model: &Model) -> Result<(), CliError> {
    let p = &a.problem;
    let mut rows = vec![];
    let mut lower_bound = None;
    for algorithm in compare_candidates(model, p.m)? {
        let req = p.request(algorithm);
        let schedule = match generate(&req, model) {
            Ok(s) => s,
            Err(herald::ScheduleError::NotApplicable { .. }) => continue,
            Err(e) => return Err(CliError::usage(e)),
        };
        let report =
            check_with(&schedule, model, CheckOptions::default()).map_err(CliError::usage)?;
        lower_bound = lower_bound.or(report.lower_bound().map(|t| report.base().ratio(t)));
        rows.push((algorithm, report));
    }
    let lb = lower_bound.ok_or_else(|| CliError::Usage("no algorithm applies".into()))?;
    if a.json {
        let list: Vec<Value> = rows
            .iter()
            .map(|(alg, r)| report_json(model, &alg.to_string(), r, p.m))
            .collect();
        println!("{}", Value::Array(list));
        return Ok(());
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
    let model = a.model.model()?;
    if a.compare {
        return compare(a, &model);
    }
    let options = CheckOptions {
        queue_arrivals: a.queue_arrivals,
        ..CheckOptions::default()
    };
    let c = choose(&model, &a.problem, options)?;
    let (generated, checked) = c.timings;
    if a.json {
        let mut v = report_json(&model, &algorithm_name(&c), &c.report, a.problem.m);
        if !c.candidates.is_empty() {
            v["candidates"] = c
                .candidates
                .iter()
                .map(|(name, ms)| json!({"algorithm": name, "makespan": ms}))
                .collect();
        }
        if a.timings {
            v["timings"] = json!({
                "generate_s": generated.as_secs_f64(),
                "check_s": checked.as_secs_f64(),
            });
        }
        println!("{v}");
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
    let inferred = || herald::goal_collective(goal).map_err(CliError::usage);
    let root = |a: &CheckArgs| -> Result<u32, CliError> {
        match a.root {
            Some(r) => Ok(r),
            None => match inferred()? {
                Collective::Broadcast { root, .. } => Ok(root),
                _ => Ok(0),
            },
        }
    };
    let c = match a.collective.as_deref() {
        None if a.root.is_none() && a.blocks.is_none() => return Ok(None),
        None | Some("broadcast") => {
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
        Some("alltoall") => Collective::AllToAll {
            items: a.items.unwrap_or(1),
        },
        Some("reduce") => Collective::Reduce {
            root: a.root.unwrap_or(0),
        },
        Some("allreduce") => Collective::Allreduce,
        Some("prefix") => Collective::Prefix,
        Some(other) => {
            return Err(CliError::Usage(format!(
                "unknown collective {other:?} (known: broadcast, alltoall, reduce, allreduce, \
                 prefix)"
            )))
        }
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
        Err(e @ (herald::GoalRunError::Stuck { .. } | herald::GoalRunError::Unreceived { .. })) => {
            return Err(CliError::Failed(e.to_string()))
        }
        Err(e) => return Err(CliError::usage(e)),
    };
    let report = &c.report;
    let m = match report.collective() {
        Collective::Broadcast { blocks, .. } => blocks,
        _ => 1,
    };
    let name = a.file.display().to_string();
    let first = c.first_violation().map(|v| {
        json!({"rule": v.rule.name(), "at": report.format(v.at), "processor": v.processor,
               "send": v.send.as_ref().map(|s| send_json(report, s)), "detail": v.detail})
    });
    let run_busy = c.run.busy_until();
    if a.json {
        let mut v = report_json(model, &name, report, m);
        v["goal"] = json!({
            "ranks": goal.ranks.len(),
            "operations": goal.op_count(),
            "busy_until": report.format(run_busy),
            "first_violation": first,
        });
        println!("{v}");
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
    let goal = match a.format.as_deref() {
        Some("goal") => true,
        Some("json") => false,
        Some(other) => {
            return Err(CliError::Usage(format!(
                "unknown format {other:?} (known: json, goal)"
            )))
        }
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
        println!("{}", report_json(&model, &name, &report, m));
    } else {
        print!("{}", report_text(&model, &name, &report));
    }
    Ok(())
}
