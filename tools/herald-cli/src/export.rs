//! `herald export`: a generated schedule as GOAL (LogGOPSim's format) or JSON.

use crate::sim::FileFormat;
use crate::sim::{ModelArgs, ProblemArgs};
use crate::CliError;
use herald::{model::LongMessages, schedule::Goal, CostModel, Model, Ratio, Report, Schedule};

/// Arguments of `herald export`.
#[derive(Debug, clap::Args)]
pub(crate) struct ExportArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    problem: ProblemArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FileFormat::Goal)]
    format: FileFormat,
    /// Write to this file instead of standard output.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

/// Runs `herald export`.
pub(crate) fn run(a: &ExportArgs) -> Result<(), CliError> {
    let model = a.model.model()?;
    let (name, schedule, report) = crate::sim::generate_checked(&model, &a.problem)?;
    let text = match a.format {
        FileFormat::Goal => {
            let file = a
                .out
                .as_ref()
                .map_or("FILE.goal".to_owned(), |p| p.display().to_string());
            goal_text(&model, &name, &schedule, &report, &file)?
        }
        FileFormat::Json => format!("{}\n", schedule.to_json()),
    };
    match &a.out {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", path.display()))),
        None => crate::print_out(&text),
    }
}

/// LogGOPSim's parameters for `model`, in GOAL time units (`scale` per model unit):
/// `(L, o, g, G, bytes)`; `None` for models LogGOPSim does not simulate.
fn loggopsim_params(model: &Model, scale: u64) -> Option<([Ratio; 4], u64)> {
    let s = |r: Ratio| Ratio::new(r.numer() * scale, r.denom()).ok();
    Some(match model {
        Model::LogP(l) => (
            [s(l.l())?, s(l.o())?, s(l.g())?, s(l.message_big_g())?],
            l.bytes(),
        ),
        // postal λ: LogGP with L = λ, o = 0, g = 1 (one send and one receive per unit)
        Model::Postal(p) => (
            [s(p.lambda())?, Ratio::ZERO, s(Ratio::ONE)?, Ratio::ZERO],
            1,
        ),
        Model::OnePort(_) => (
            [s(Ratio::ONE)?, Ratio::ZERO, s(Ratio::ONE)?, Ratio::ZERO],
            1,
        ),
        _ => return None,
    })
}

/// The GOAL text with the parameters, the scaling and LogGOPSim's command line as comments.
fn goal_text(
    model: &Model,
    algorithm: &str,
    schedule: &Schedule,
    report: &Report,
    file: &str,
) -> Result<String, CliError> {
    let base = model.time_base().map_err(CliError::usage)?;
    let timing = model.timing(base).map_err(CliError::usage)?;
    let scale = base.ticks_per_unit();
    let Some((params, bytes)) = loggopsim_params(model, scale) else {
        return Err(CliError::Usage(format!(
            "GOAL export takes --model postal, oneport or logp, not {}",
            model.name()
        )));
    };
    let mut goal: Goal = schedule.to_goal(&timing, bytes).map_err(CliError::usage)?;
    let c = schedule.collective();
    let mut notes = vec![format!(
        "herald {} export: {algorithm} {} on n = {}{}",
        env!("CARGO_PKG_VERSION"),
        c.name(),
        schedule.n(),
        match c {
            herald::Collective::Broadcast { root, blocks } =>
                format!(", m = {blocks}, root {root}"),
            herald::Collective::Reduce { root } => format!(", root {root}"),
            herald::Collective::AllToAll { items } => format!(", {items} item(s) per rank"),
            _ => String::new(),
        }
    )];
    let params_text: Vec<String> = model
        .params()
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let mut model_line = format!("model: {} {}", model.name(), params_text.join(" "));
    if let Model::LogP(l) = model {
        model_line += &format!(
            ", {}-byte messages, long messages: {}, combine {}",
            l.bytes(),
            l.long_messages(),
            l.combine()
        );
    }
    notes.push(model_line);
    notes.push(if scale == 1 {
        "time unit: 1 GOAL time unit = 1 model time unit".to_owned()
    } else {
        format!(
            "time unit: 1 GOAL time unit = 1/{scale} model time unit (every parameter ×{scale}, \
             so LogGOPSim's integers hold it)"
        )
    });
    let whole: Option<Vec<u64>> = params
        .iter()
        .map(|r| (r.denom() == 1 && r.numer() <= i32::MAX as u64).then_some(r.numer()))
        .collect();
    let s_flag = bytes.max(65_535);
    match whole {
        Some(p) if s_flag <= i32::MAX as u64 => notes.push(format!(
            "LogGOPSim: txt2bin -i {file} -o {file}.bin && LogGOPSim -f {file}.bin -L {} -o {} \
             -g {} -G {} -O 0 -S {s_flag}",
            p[0], p[1], p[2], p[3]
        )),
        _ => notes.push(
            "LogGOPSim: parameters or the message size exceed its 32-bit integers; \
             no command line"
                .to_owned(),
        ),
    }
    if let Model::LogP(l) = model {
        let long = l.message_big_g() != Ratio::ZERO && l.bytes() > 1;
        match l.long_messages() {
            LongMessages::MaxGap if long => notes.push(
                "note: LogGOPSim simulates LogGP as published; this model's max-gap rule for \
                 long messages differs (docs/errata.md)"
                    .to_owned(),
            ),
            LongMessages::ReceiverCopies { above } if long && l.bytes() > above => notes.push(
                "note: LogGOPSim simulates LogGP as published; this model's receiver-copies rule \
                 spaces a sender's long messages only g apart"
                    .to_owned(),
            ),
            _ => {}
        }
    }
    let ticks = |t: herald::Ticks| -> String {
        let units = report.base().format(t);
        let (num, tpu) = (
            u128::from(t) * u128::from(scale),
            u128::from(report.base().ticks_per_unit()),
        );
        if num % tpu == 0 {
            format!("{units} (= {} GOAL units)", num / tpu)
        } else {
            units
        }
    };
    notes.push(format!(
        "herald: {}, makespan {} (last first arrival), busy until {} (the last send or receive \
         ends: what LogGOPSim reports as the maximum finishing time)",
        if report.legal() { "legal" } else { "ILLEGAL" },
        ticks(report.makespan()),
        ticks(report.busy_until())
    ));
    notes.push(if timing.shared_cpu {
        "each rank's operations are chained (requires) in the order herald's rules put them on \
         its CPU"
            .to_owned()
    } else {
        "each rank's sends are chained (requires) in send order; a forward requires the \
         receive of its block"
            .to_owned()
    });
    goal.comments = notes;
    Ok(goal.to_text())
}
