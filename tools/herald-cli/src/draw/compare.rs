//! Comparisons of every applicable algorithm: makespans as bars against the lower bound for one
//! problem, or as lines against `n` for a range of processor counts.

use super::chart::{self, key, page, polyline, Plot, Swatch};
use super::{colour, model_label, px, time_unit, Picture, Problem};
use crate::CliError;
use herald::{
    generate,
    schedule::ScheduleError,
    sim::{check_with, lower_bound, CheckOptions},
    Algorithm, Collective, CostModel, Model, Report, Request,
};
use svg::node::element::{Circle, Group, Rectangle, Text};

/// Most values of `n` a line chart evaluates.
const MAX_POINTS: u32 = 200;

/// Every algorithm to compare: the planner's candidates for `n` ranks and `m` blocks, the same
/// list as `herald sim --compare` (the registry's sweeps of the broadcast generators that apply).
fn candidates(model: &Model, n: u32, m: u32) -> Result<Vec<Algorithm>, CliError> {
    crate::sim::compare_candidates(model, n, m)
}

/// The algorithm's name, with what `optimal` is under this model.
pub(super) fn name(a: Algorithm, model: &Model) -> String {
    match (a, model) {
        (Algorithm::Optimal, Model::Postal(_)) => "optimal (bcast)".into(),
        (Algorithm::Optimal, Model::LogP(_)) => "optimal (bp)".into(),
        _ => a.to_string(),
    }
}

/// Generates and checks `a`; `None` if it does not apply.
fn evaluate(
    model: &Model,
    a: Algorithm,
    n: u32,
    m: u32,
    root: u32,
) -> Result<Option<Report>, CliError> {
    let schedule = match generate(&Request::broadcast(a, n, m, root), model) {
        Ok(s) => s,
        Err(ScheduleError::NotApplicable { .. }) => return Ok(None),
        Err(e) => return Err(CliError::usage(e)),
    };
    let report = check_with(&schedule, model, CheckOptions::default()).map_err(CliError::usage)?;
    Ok(Some(report))
}

/// One bar per applicable algorithm, best on top, with the lower bound as a dashed line.
pub(super) fn bars(model: &Model, p: &Problem) -> Result<Picture, CliError> {
    let mut rows: Vec<(String, Report)> = vec![];
    for a in candidates(model, p.n, p.m)? {
        if let Some(r) = evaluate(model, a, p.n, p.m, p.root)? {
            rows.push((name(a, model), r));
        }
    }
    let first = rows
        .first()
        .ok_or_else(|| CliError::Usage("no algorithm applies".into()))?;
    let lb = first.1.lower_bound().map(|t| {
        let r = &first.1;
        (r.base().to_f64(t), r.format(t))
    });
    let ms = |r: &Report| r.base().to_f64(r.makespan());
    // Best on top.
    rows.sort_by(|a, b| ms(&a.1).total_cmp(&ms(&b.1)));
    let longest = rows
        .iter()
        .map(|(s, _)| s.chars().count())
        .max()
        .unwrap_or(4);
    let max = rows
        .iter()
        .map(|(_, r)| ms(r))
        .fold(lb.as_ref().map_or(0.0, |l| l.0), f64::max);
    const ROW: f64 = 30.0;
    let left = 16.0 + (longest as f64 * 8.0 + 16.0).max(60.0);
    let (width, height) = (960.0, 150.0 + ROW * rows.len() as f64);
    let plot = Plot {
        left,
        top: 56.0,
        width: width - left - 24.0,
        height: ROW * rows.len() as f64,
        xs: (0.0, (max * 1.2).max(1e-9)),
        ys: (0.0, 1.0),
    };
    let blocks = if p.m > 1 {
        format!(", m = {} blocks", p.m)
    } else {
        String::new()
    };
    let title = format!(
        "Broadcast makespan by algorithm: {}, n = {}{blocks}",
        model_label(model),
        p.n
    );
    let x_title = format!("makespan ({})", time_unit(model));
    let mut doc = page(width, height, title).add(plot.axes(&x_title, None));
    let classes = [
        ("makespan", colour(0), false),
        ("makespan = lower bound", colour(2), true),
    ];
    let mut bars = Group::new().set("class", "bars");
    let mut labels = Group::new()
        .set("class", "names")
        .set("font-size", 13)
        .set("text-anchor", "end");
    let mut values = Group::new()
        .set("class", "values")
        .set("font-size", 12)
        .set("fill", "#333");
    for (i, (name, r)) in rows.iter().enumerate() {
        let y = plot.top + ROW * i as f64;
        let optimal = r.gap() == Some(0);
        let end = plot.x(ms(r));
        bars = bars.add(
            Rectangle::new()
                .set("x", px(plot.left))
                .set("y", px(y + 5.0))
                .set("width", px(end - plot.left))
                .set("height", ROW - 10.0)
                .set("fill", classes[usize::from(optimal)].1.as_str()),
        );
        labels = labels.add(
            Text::new(name.as_str())
                .set("x", px(plot.left - 8.0))
                .set("y", px(y + ROW / 2.0 + 4.5)),
        );
        let mut label = r.format(r.makespan());
        match r.gap() {
            Some(g) if g > 0 => label += &format!("  (+{})", r.format(g)),
            None if !r.legal() => label += "  (ILLEGAL)",
            _ => {}
        }
        values = values.add(
            Text::new(label)
                .set("x", px(end + 6.0))
                .set("y", px(y + ROW / 2.0 + 4.0)),
        );
    }
    doc = doc.add(bars).add(labels).add(values);
    let mut entries: Vec<(Swatch, Vec<String>)> = classes
        .iter()
        .filter(|(_, _, optimal)| rows.iter().any(|(_, r)| (r.gap() == Some(0)) == *optimal))
        .map(|(label, c, _)| (Swatch::Fill(c.clone()), vec![(*label).to_owned()]))
        .collect();
    if let Some((x, exact)) = lb {
        let at = plot.x(x);
        doc = doc.add(
            chart::line(at, plot.top, at, plot.bottom(), "#222")
                .set("stroke-width", 2)
                .set("stroke-dasharray", "6 4"),
        );
        entries.push((
            Swatch::Line("#222".into(), true),
            vec![format!("lower bound {exact}")],
        ));
    }
    let longest_entry = entries
        .iter()
        .flat_map(|(_, l)| l.iter().map(|t| t.chars().count()))
        .max()
        .unwrap_or(0);
    let key_x = plot.left + plot.width - 56.0 - longest_entry as f64 * 7.0;
    doc = doc.add(key(&entries, key_x, plot.top + 4.0, true));
    Ok(Picture {
        svg: doc.to_string(),
    })
}

/// The values of `n` to evaluate: all of `lo..=hi`, or [`MAX_POINTS`] evenly spaced.
fn sample(lo: u32, hi: u32) -> Vec<u32> {
    let count = hi - lo + 1;
    if count <= MAX_POINTS {
        return (lo..=hi).collect();
    }
    let mut ns: Vec<u32> = (0..MAX_POINTS)
        .map(|i| lo + ((u64::from(hi - lo) * u64::from(i)) / u64::from(MAX_POINTS - 1)) as u32)
        .collect();
    ns.dedup();
    ns
}

/// A line per algorithm: makespan against `n`, with the lower bound dashed.
pub(super) fn lines(model: &Model, p: &Problem, (lo, hi): (u32, u32)) -> Result<Picture, CliError> {
    if p.root >= lo {
        return Err(CliError::Usage(format!(
            "--root {} is not a processor for n = {lo}",
            p.root
        )));
    }
    let ns = sample(lo, hi);
    let base = model.time_base().map_err(CliError::usage)?;
    let collective = Collective::Broadcast {
        root: p.root,
        blocks: p.m,
    };
    let bound: Vec<f64> = ns
        .iter()
        .map(|&n| lower_bound(model, &collective, n, base).map(|t| base.to_f64(t)))
        .collect::<Result<_, _>>()
        .map_err(CliError::usage)?;
    // (label, makespan per n), identical series merged into one line "a = b".
    let mut series: Vec<(String, Vec<Option<f64>>)> = vec![];
    for a in candidates(model, hi, p.m)? {
        let mut values = Vec::with_capacity(ns.len());
        for &n in &ns {
            let r = match generate(&Request::broadcast(a, n, p.m, p.root), model) {
                Ok(s) => {
                    Some(check_with(&s, model, CheckOptions::default()).map_err(CliError::usage)?)
                }
                Err(_) => None, // not applicable (at this n)
            };
            values.push(r.map(|r| r.base().to_f64(r.makespan())));
        }
        if values.iter().all(Option::is_none) {
            continue;
        }
        let label = name(a, model);
        match series.iter_mut().find(|(_, v)| *v == values) {
            Some((l, _)) => *l = format!("{l} = {label}"),
            None => series.push((label, values)),
        }
    }
    if series.is_empty() {
        return Err(CliError::Usage("no algorithm applies".into()));
    }
    // Legend order: by the last value, largest first, like the lines at the right edge.
    let last = |v: &[Option<f64>]| v.iter().rev().flatten().next().copied().unwrap_or(0.0);
    series.sort_by(|a, b| last(&b.1).total_cmp(&last(&a.1)));
    // The lines far above the bound (chain, star) would squash the rest: cut them at 2.5 times
    // the bound, or at the lowest line's top if that is higher.
    let peak = |v: &[Option<f64>]| v.iter().flatten().copied().fold(0.0, f64::max);
    let lowest = series.iter().map(|(_, v)| peak(v)).fold(f64::MAX, f64::min);
    let all = series.iter().map(|(_, v)| peak(v)).fold(0.0, f64::max);
    let bound_top = bound.iter().copied().fold(0.0, f64::max);
    let top = all.min((2.5 * bound_top).max(lowest)).max(bound_top) * 1.05;
    let (width, height, legend_width) = (1100.0, 640.0, 260.0);
    let (x0, x1) = (f64::from(lo), f64::from(hi.max(lo + 1)));
    let plot = Plot {
        left: 88.0,
        top: 56.0,
        width: width - legend_width - 88.0 - 16.0,
        height: height - 56.0 - 64.0,
        xs: (x0, x1),
        ys: (0.0, top.max(1e-9)),
    };
    let blocks = if p.m > 1 {
        format!(", m = {} blocks", p.m)
    } else {
        String::new()
    };
    let title = format!(
        "Broadcast makespan against n: {}{blocks}",
        model_label(model)
    );
    let y_title = format!("makespan ({})", time_unit(model));
    let mut doc = page(width, height, title).add(plot.axes("processors n", Some(&y_title)));
    let dots = ns.len() <= 40;
    let mut lines = Group::new().set("class", "series");
    for (i, (_, values)) in series.iter().enumerate() {
        let c = colour(i);
        let points: Vec<Option<(f64, f64)>> = values
            .iter()
            .zip(&ns)
            .map(|(v, &n)| v.map(|v| (f64::from(n), v)))
            .collect();
        for run in clip(&points, top) {
            let run: Vec<(f64, f64)> = run.iter().map(|&(x, y)| (plot.x(x), plot.y(y))).collect();
            lines = lines.add(polyline(&run, &c, false));
            if dots {
                for &(x, y) in &run {
                    lines = lines.add(
                        Circle::new()
                            .set("cx", x)
                            .set("cy", y)
                            .set("r", 2)
                            .set("fill", c.as_str()),
                    );
                }
            }
        }
    }
    let bound: Vec<(f64, f64)> = ns
        .iter()
        .zip(&bound)
        .map(|(&n, &b)| (plot.x(f64::from(n)), plot.y(b)))
        .collect();
    doc = doc.add(lines).add(polyline(&bound, "#222", true));
    // The key, outside the plot.
    let mut entries: Vec<(Swatch, Vec<String>)> = vec![];
    for (i, (label, values)) in series.iter().enumerate() {
        let mut lines = wrap(label, 30);
        if peak(values) > top {
            match lines.last_mut() {
                Some(last) if last.chars().count() <= 12 => *last += " (leaves the chart)",
                _ => lines.push("(leaves the chart)".to_owned()),
            }
        }
        entries.push((Swatch::Line(colour(i), false), lines));
    }
    entries.push((
        Swatch::Line("#222".into(), true),
        vec!["lower bound".to_owned()],
    ));
    doc = doc.add(key(&entries, width - legend_width, 40.0, false));
    Ok(Picture {
        svg: doc.to_string(),
    })
}

/// The runs of `points` (`None`: no value) below `top`, cut where they cross it.
fn clip(points: &[Option<(f64, f64)>], top: f64) -> Vec<Vec<(f64, f64)>> {
    let cross =
        |(x0, y0): (f64, f64), (x1, y1): (f64, f64)| (x0 + (x1 - x0) * (top - y0) / (y1 - y0), top);
    let mut runs = vec![];
    let mut run: Vec<(f64, f64)> = vec![];
    let mut prev: Option<(f64, f64)> = None;
    for &p in points {
        match (prev, p) {
            (_, None) => runs.push(std::mem::take(&mut run)),
            (Some(a), Some(b)) if a.1 <= top && b.1 > top => {
                run.push(cross(a, b));
                runs.push(std::mem::take(&mut run));
            }
            (Some(a), Some(b)) if a.1 > top && b.1 <= top => run.extend([cross(a, b), b]),
            (_, Some(b)) if b.1 <= top => run.push(b),
            _ => {}
        }
        prev = p;
    }
    runs.push(run);
    runs.retain(|r| !r.is_empty());
    runs
}

/// `label` in lines of about `width` characters, broken after " = ".
fn wrap(label: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    for (i, part) in label.split(" = ").enumerate() {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 3 + part.chars().count() <= width => {
                *line += " = ";
                *line += part;
            }
            Some(line) if i > 0 => {
                *line += " =";
                lines.push(part.to_owned());
            }
            _ => lines.push(part.to_owned()),
        }
    }
    lines
}
