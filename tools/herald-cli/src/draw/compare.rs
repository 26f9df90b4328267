//! Comparisons of every applicable algorithm, drawn with plotters: makespans as bars against
//! the lower bound for one problem, or as lines against `n` for a range of processor counts.

use super::{draw_error, model_label, num, rgb, swatch_gap, time_unit, Picture, Problem, FONT};
use crate::CliError;
use herald::{
    generate,
    schedule::ScheduleError,
    sim::{check_with, lower_bound, CheckOptions},
    Algorithm, Collective, CostModel, Model, Report, Request,
};
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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
    // Worst at the bottom (segment 0), best on top.
    rows.sort_by(|a, b| ms(&b.1).total_cmp(&ms(&a.1)));
    let k = rows.len() as i32;
    let longest = rows
        .iter()
        .map(|(s, _)| s.chars().count())
        .max()
        .unwrap_or(4);
    let max = rows
        .iter()
        .map(|(_, r)| ms(r))
        .fold(lb.as_ref().map_or(0.0, |l| l.0), f64::max);
    let (width, height) = (960u32, 150 + 30 * k as u32);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let blocks = if p.m > 1 {
            format!(", m = {} blocks", p.m)
        } else {
            String::new()
        };
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "Broadcast makespan by algorithm: {}, n = {}{blocks}",
                    model_label(model),
                    p.n
                ),
                (FONT, 18),
            )
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size((longest as u32 * 8 + 16).max(60))
            // An integer range is inclusive here: segments 0 ..= k − 1.
            .build_cartesian_2d(0f64..(max * 1.2).max(1e-9), (0..k - 1).into_segmented())
            .map_err(draw_error)?;
        let names: Vec<String> = rows.iter().map(|(s, _)| s.clone()).collect();
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(rows.len())
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => names.get(*i as usize).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .x_label_formatter(&|v| num(*v))
            .x_desc(format!("makespan ({})", time_unit(model)))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 15))
            .light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
            .max_light_lines(2)
            .draw()
            .map_err(draw_error)?;
        let at_bound = |r: &Report| r.gap() == Some(0);
        let classes: [(&str, RGBColor, bool); 2] = [
            ("makespan", rgb(0), false),
            ("makespan = lower bound", rgb(2), true),
        ];
        for (label, c, optimal) in classes {
            let data: Vec<(i32, f64)> = rows
                .iter()
                .enumerate()
                .filter(|(_, (_, r))| at_bound(r) == optimal)
                .map(|(i, (_, r))| (i as i32, ms(r)))
                .collect();
            if data.is_empty() {
                continue;
            }
            chart
                .draw_series(
                    Histogram::horizontal(&chart)
                        .style(c.filled())
                        .margin(5)
                        .data(data),
                )
                .map_err(draw_error)?
                .label(label)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 18, y + 5)], c.filled()));
        }
        let text = (FONT, 12)
            .into_font()
            .color(&RGBColor(0x33, 0x33, 0x33))
            .pos(Pos::new(HPos::Left, VPos::Center));
        chart
            .draw_series(rows.iter().enumerate().map(|(i, (_, r))| {
                let mut label = r.format(r.makespan());
                match r.gap() {
                    Some(g) if g > 0 => label += &format!("  (+{})", r.format(g)),
                    None if !r.legal() => label += "  (ILLEGAL)",
                    _ => {}
                }
                EmptyElement::at((ms(r), SegmentValue::CenterOf(i as i32)))
                    + Text::new(label, (6, 0), text.clone())
            }))
            .map_err(draw_error)?;
        if let Some((x, exact)) = lb {
            let dark = RGBColor(0x22, 0x22, 0x22);
            chart
                .draw_series(DashedLineSeries::new(
                    [(x, SegmentValue::Exact(0)), (x, SegmentValue::Last)],
                    6,
                    4,
                    dark.stroke_width(2),
                ))
                .map_err(draw_error)?
                .label(format!("lower bound {exact}"))
                .legend(move |(x, y)| {
                    let (a, b) = swatch_gap(true);
                    let style = dark.stroke_width(2);
                    EmptyElement::at((x, y))
                        + PathElement::new([(0, 0), (a, 0)], style)
                        + PathElement::new([(b, 0), (18, 0)], style)
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font((FONT, 13))
            .background_style(WHITE.mix(0.9))
            .border_style(RGBColor(0xbb, 0xbb, 0xbb))
            .draw()
            .map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    Ok(Picture { svg })
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
    let (width, height) = (1100u32, 640u32);
    let legend_width = 260u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let blocks = if p.m > 1 {
            format!(", m = {} blocks", p.m)
        } else {
            String::new()
        };
        let root = root
            .titled(
                &format!(
                    "Broadcast makespan against n: {}{blocks}",
                    model_label(model)
                ),
                (FONT, 18),
            )
            .map_err(draw_error)?;
        let (plot, key) = root.split_horizontally(width - legend_width);
        let (x0, x1) = (f64::from(lo), f64::from(hi.max(lo + 1)));
        let mut chart = ChartBuilder::on(&plot)
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d(x0..x1, 0f64..top.max(1e-9))
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_label_formatter(&|v| num(*v))
            .y_label_formatter(&|v| num(*v))
            .x_desc("processors n")
            .y_desc(format!("makespan ({})", time_unit(model)))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 15))
            .light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
            .max_light_lines(2)
            .draw()
            .map_err(draw_error)?;
        let dots = ns.len() <= 40;
        for (i, (_, values)) in series.iter().enumerate() {
            let c = rgb(i);
            let points: Vec<Option<(f64, f64)>> = values
                .iter()
                .zip(&ns)
                .map(|(v, &n)| v.map(|v| (f64::from(n), v)))
                .collect();
            for run in clip(&points, top) {
                let line = LineSeries::new(run, c.stroke_width(2));
                let line = if dots { line.point_size(2) } else { line };
                chart.draw_series(line).map_err(draw_error)?;
            }
        }
        let dark = RGBColor(0x22, 0x22, 0x22);
        chart
            .draw_series(DashedLineSeries::new(
                ns.iter().zip(&bound).map(|(&n, &b)| (f64::from(n), b)),
                6,
                4,
                dark.stroke_width(2),
            ))
            .map_err(draw_error)?;
        // The key, outside the plot.
        let font = (FONT, 13)
            .into_text_style(&key)
            .pos(Pos::new(HPos::Left, VPos::Center));
        let mut y = 40;
        let mut entry =
            |style: ShapeStyle, lines: Vec<String>, dashed: bool| -> Result<(), CliError> {
                if dashed {
                    for x in [8, 20] {
                        key.draw(&PathElement::new([(x, y), (x + 8, y)], style))
                            .map_err(draw_error)?;
                    }
                } else {
                    key.draw(&PathElement::new([(8, y), (32, y)], style))
                        .map_err(draw_error)?;
                }
                for line in lines {
                    key.draw(&Text::new(line, (40, y), font.clone()))
                        .map_err(draw_error)?;
                    y += 17;
                }
                y += 6;
                Ok(())
            };
        for (i, (label, values)) in series.iter().enumerate() {
            let mut lines = wrap(label, 30);
            if peak(values) > top {
                match lines.last_mut() {
                    Some(last) if last.chars().count() <= 12 => *last += " (leaves the chart)",
                    _ => lines.push("(leaves the chart)".to_owned()),
                }
            }
            entry(rgb(i).stroke_width(2), lines, false)?;
        }
        entry(dark.stroke_width(2), vec!["lower bound".to_owned()], true)?;
        root.present().map_err(draw_error)?;
    }
    Ok(Picture { svg })
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
