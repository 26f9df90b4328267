//! The timeline: a row per processor, time to the right.
//!
//! A send starting at `t` keeps its sender busy during `[t, t + send_busy)` (a bar in the upper
//! half of the sender's row) and its receiver during `[t + latency − recv_busy, t + latency)`
//! (a lighter bar in the lower half of the receiver's row); an arrow (class `msg`) runs from the
//! send's start to the moment its data is available. Bars and arrows are coloured by block.
//! Above [`AGGREGATE_ABOVE`] processors the rows would be unreadable, and the picture is instead
//! the number of informed processors over time.

use super::chart::{self, key, page, polyline, Plot, Swatch};
use super::{colour, nice_step, num, px, Drawn, Picture, MAKESPAN_COLOUR};
use crate::CliError;
use herald::Ticks;
use svg::node::element::{Definitions, Group, Line, Marker, Path, Rectangle, Text};

/// Above this many processors the timeline is aggregated.
pub(super) const AGGREGATE_ABOVE: u32 = 256;

/// Space left of the rows, for their labels (px).
const LEFT: f64 = 64.0;
/// Space above the rows: title, legend, makespan labels (px).
const TOP: f64 = 120.0;
/// Space below the rows: time axis and its title (px).
const BOTTOM: f64 = 56.0;
/// Space right of the rows (px).
const RIGHT: f64 = 28.0;

/// Draws the timeline (aggregated for many processors).
pub(super) fn draw(d: &Drawn) -> Result<Picture, CliError> {
    if d.n > AGGREGATE_ABOVE {
        aggregated(d)
    } else {
        Ok(rows(d))
    }
}

/// Pixel geometry of the row picture.
struct Frame {
    /// Pixels per unit of time.
    scale: f64,
    /// Row height (px).
    row: f64,
    /// Width of the time span drawn (px).
    plot: f64,
    /// The time span drawn (units).
    span: f64,
}

impl Frame {
    /// x of time `t` (units).
    fn x(&self, t: f64) -> f64 {
        px(LEFT + t * self.scale)
    }

    /// Top of processor `p`'s row.
    fn top(&self, p: u32) -> f64 {
        TOP + f64::from(p) * self.row
    }
}

/// One row per processor.
fn rows(d: &Drawn) -> Picture {
    let lb = d.report.lower_bound().unwrap_or(0);
    let end = d.report.makespan().max(lb);
    let span = d.units(end).max(d.units(d.timing.latency)) * 1.04;
    let scale = (920.0 / span).min(160.0);
    let f = Frame {
        scale,
        row: (560.0 / f64::from(d.n)).clamp(7.0, 26.0),
        plot: span * scale,
        span,
    };
    let width = (LEFT + f.plot + RIGHT).max(720.0).ceil();
    let height = (TOP + f64::from(d.n) * f.row + BOTTOM).ceil();
    let multi = d.m > 1;
    let block_colour = |b: u32| {
        if multi {
            colour(b as usize)
        } else {
            colour(0)
        }
    };

    let mut defs = Definitions::new();
    for b in 0..d.m.min(super::PALETTE.len() as u32) {
        defs = defs.add(
            Marker::new()
                .set("id", format!("arrow{b}"))
                .set("viewBox", "0 0 10 10")
                .set("refX", 9)
                .set("refY", 5)
                .set("markerWidth", 7)
                .set("markerHeight", 7)
                .set("orient", "auto")
                .add(
                    Path::new()
                        .set("d", "M 0 1 L 10 5 L 0 9 z")
                        .set("fill", block_colour(b)),
                ),
        );
    }
    let mut doc = chart::blank(width, height)
        .add(defs)
        .add(titles(d))
        .add(legend(d))
        .add(row_backgrounds(d, &f))
        .add(time_axis(d, &f));

    let y_send = |p: u32| f.top(p) + f.row * 0.1;
    let y_recv = |p: u32| f.top(p) + f.row * 0.5;
    let bar_h = f.row * 0.4;
    let t = d.timing;
    let mut sends = Group::new().set("class", "sends");
    let mut recvs = Group::new().set("class", "recvs");
    let mut labels = Group::new()
        .set("class", "blocks")
        .set("font-size", px((f.row * 0.38).min(11.0)))
        .set("text-anchor", "middle")
        .set("fill", "white");
    let label_fits = multi && f.row >= 14.0;
    for s in &d.sends {
        let c = block_colour(s.what);
        let x0 = f.x(d.units(s.at));
        let w = px(d.units(t.send_busy) * scale);
        sends = sends.add(
            Rectangle::new()
                .set("class", "send")
                .set("x", x0)
                .set("y", px(y_send(s.from)))
                .set("width", w.max(1.0))
                .set("height", px(bar_h))
                .set("fill", c.clone())
                .set("stroke", "white")
                .set("stroke-width", 0.75),
        );
        let arrive = s.at.saturating_add(t.latency);
        let r0 = f.x(d.units(arrive.saturating_sub(t.recv_busy)));
        recvs = recvs.add(
            Rectangle::new()
                .set("class", "recv")
                .set("x", r0)
                .set("y", px(y_recv(s.to)))
                .set("width", px(d.units(t.recv_busy) * scale).max(1.0))
                .set("height", px(bar_h))
                .set("fill", c.clone())
                .set("fill-opacity", 0.3)
                .set("stroke", c),
        );
        let digits = s.what.to_string();
        if label_fits && w >= 7.0 * digits.len() as f64 + 2.0 {
            labels = labels.add(
                Text::new(digits)
                    .set("x", px(x0 + w / 2.0))
                    .set("y", px(y_send(s.from) + bar_h * 0.82)),
            );
        }
    }
    let mut arrows = Group::new()
        .set("class", "msgs")
        .set("stroke-width", 1)
        .set("stroke-opacity", 0.75);
    for s in &d.sends {
        let arrive = s.at.saturating_add(t.latency);
        let marker = if multi {
            s.what as usize % super::PALETTE.len()
        } else {
            0
        };
        arrows = arrows.add(
            Line::new()
                .set("class", "msg")
                .set("x1", f.x(d.units(s.at)))
                .set("y1", px(y_send(s.from) + bar_h / 2.0))
                .set("x2", f.x(d.units(arrive)))
                .set("y2", px(y_recv(s.to) + bar_h / 2.0))
                .set("stroke", block_colour(s.what))
                .set("marker-end", format!("url(#arrow{marker})")),
        );
    }
    doc = doc
        .add(recvs)
        .add(sends)
        .add(labels)
        .add(arrows)
        .add(bounds(d, &f));
    Picture {
        svg: doc.to_string(),
    }
}

/// Title and subtitle.
fn titles(d: &Drawn) -> Group {
    let blocks = if d.m > 1 {
        format!(", m = {} blocks", d.m)
    } else {
        String::new()
    };
    Group::new()
        .set("class", "title")
        .add(
            Text::new(format!(
                "Timeline: {}, {}, n = {}{blocks}",
                d.algo, d.model, d.n
            ))
            .set("x", 16)
            .set("y", 26)
            .set("font-size", 16)
            .set("font-weight", "bold"),
        )
        .add(
            Text::new(d.outcome())
                .set("x", 16)
                .set("y", 46)
                .set("font-size", 12),
        )
}

/// The key: bars, arrows, makespan and lower bound.
fn legend(d: &Drawn) -> Group {
    let y = 70.0;
    let mut g = Group::new().set("class", "legend").set("font-size", 11);
    let mut x = 16.0;
    let mut item = |g: Group, swatch: Group, text: String, width: f64| {
        let g = g
            .add(swatch.set("transform", format!("translate({x} {y})")))
            .add(Text::new(text).set("x", x + 30.0).set("y", y + 4.0));
        x += width;
        g
    };
    let blue = super::colour(0);
    let bar = || {
        Rectangle::new()
            .set("y", -6)
            .set("width", 24)
            .set("height", 10)
            .set("fill", blue.clone())
    };
    g = item(g, Group::new().add(bar()), "sender busy".into(), 120.0);
    g = item(
        g,
        Group::new().add(bar().set("fill-opacity", 0.3).set("stroke", blue.clone())),
        "receiver busy".into(),
        130.0,
    );
    g = item(
        g,
        Group::new().add(chart::line(0.0, 0.0, 24.0, 0.0, &blue).set("marker-end", "url(#arrow0)")),
        "message: send start → data available".into(),
        270.0,
    );
    g = item(
        g,
        Group::new()
            .add(chart::line(12.0, -7.0, 12.0, 7.0, MAKESPAN_COLOUR).set("stroke-width", 2)),
        "makespan".into(),
        100.0,
    );
    g = item(
        g,
        Group::new().add(
            chart::line(12.0, -7.0, 12.0, 7.0, "#222")
                .set("stroke-dasharray", "4 3")
                .set("stroke-width", 1.5),
        ),
        "lower bound".into(),
        110.0,
    );
    if d.m > 1 {
        g = g.add(
            Text::new("colour and number: block")
                .set("x", 16)
                .set("y", y + 22.0),
        );
    }
    g
}

/// Row labels and alternate shading.
fn row_backgrounds(d: &Drawn, f: &Frame) -> Group {
    let every = (12.0 / f.row).ceil().max(1.0) as u32;
    let mut g = Group::new()
        .set("class", "rows")
        .set("font-size", px((f.row * 0.6).clamp(8.0, 11.0)))
        .set("text-anchor", "end");
    for p in 0..d.n {
        if p % 2 == 1 {
            g = g.add(
                Rectangle::new()
                    .set("x", LEFT)
                    .set("y", px(f.top(p)))
                    .set("width", px(f.plot))
                    .set("height", px(f.row))
                    .set("fill", "#f3f3f3"),
            );
        }
        if p % every == 0 {
            g = g.add(
                Text::new(format!("P{p}"))
                    .set("x", LEFT - 6.0)
                    .set("y", px(f.top(p) + f.row / 2.0 + 4.0)),
            );
        }
    }
    g
}

/// The time axis under the rows, with faint vertical lines.
fn time_axis(d: &Drawn, f: &Frame) -> Group {
    let bottom = f.top(d.n);
    let mut g = Group::new().set("class", "axis").set("font-size", 11).add(
        Line::new()
            .set("x1", LEFT)
            .set("y1", px(bottom))
            .set("x2", px(LEFT + f.plot))
            .set("y2", px(bottom))
            .set("stroke", "#444"),
    );
    let step = nice_step(f.span, (f.plot / 70.0).floor());
    let mut i = 0u32;
    while f64::from(i) * step <= f.span + 1e-9 {
        let t = f64::from(i) * step;
        let x = f.x(t);
        g = g
            .add(
                Line::new()
                    .set("x1", x)
                    .set("y1", TOP)
                    .set("x2", x)
                    .set("y2", px(bottom))
                    .set("stroke", "#e2e2e2"),
            )
            .add(
                Line::new()
                    .set("x1", x)
                    .set("y1", px(bottom))
                    .set("x2", x)
                    .set("y2", px(bottom + 4.0))
                    .set("stroke", "#444"),
            )
            .add(
                Text::new(num(t))
                    .set("x", x)
                    .set("y", px(bottom + 17.0))
                    .set("text-anchor", "middle"),
            );
        i += 1;
    }
    g.add(
        Text::new(format!("time ({})", d.unit))
            .set("x", px(LEFT + f.plot / 2.0))
            .set("y", px(bottom + 40.0))
            .set("text-anchor", "middle")
            .set("font-size", 12),
    )
}

/// The makespan and lower-bound lines, labelled above the rows.
fn bounds(d: &Drawn, f: &Frame) -> Group {
    let ms = d.report.makespan();
    let lb = d.report.lower_bound();
    let bottom = f.top(d.n);
    let mut g = Group::new().set("class", "bounds").set("font-size", 11);
    let mark = |g: Group, t: Ticks, stroke: &str, dash: Option<&str>, label: String, y: f64| {
        let x = f.x(d.units(t));
        let mut line = Line::new()
            .set("x1", x)
            .set("y1", px(TOP - 4.0 - (TOP - 4.0 - y)))
            .set("x2", x)
            .set("y2", px(bottom))
            .set("stroke", stroke)
            .set("stroke-width", 1.5);
        if let Some(dash) = dash {
            line = line.set("stroke-dasharray", dash);
        }
        g.add(line).add(
            Text::new(label)
                .set("x", px(x - 4.0))
                .set("y", px(y + 4.0))
                .set("text-anchor", "end")
                .set("fill", stroke),
        )
    };
    // (time, colour, dash, label), drawn with labels stacked upwards from TOP − 10.
    let marks = match lb {
        Some(lb) if lb == ms => vec![(
            ms,
            MAKESPAN_COLOUR,
            None,
            format!("makespan = lower bound = {}", d.exact(ms)),
        )],
        Some(lb) => vec![
            (
                lb,
                "#222",
                Some("5 3"),
                format!("lower bound {}", d.exact(lb)),
            ),
            (
                ms,
                MAKESPAN_COLOUR,
                None,
                format!("makespan {}", d.exact(ms)),
            ),
        ],
        None => vec![(
            ms,
            MAKESPAN_COLOUR,
            None,
            format!("makespan {}", d.exact(ms)),
        )],
    };
    for (i, (t, stroke, dash, label)) in marks.into_iter().enumerate() {
        g = mark(g, t, stroke, dash, label, TOP - 10.0 - 14.0 * i as f64);
    }
    g
}

/// Informed processors over time, for many processors.
fn aggregated(d: &Drawn) -> Result<Picture, CliError> {
    let n = d.n as usize;
    // When each processor first holds block 0, and when it holds every block.
    let mut first = vec![Ticks::MAX; n];
    first[d.root as usize] = 0;
    for s in d.sends.iter().filter(|s| s.what == 0) {
        let at = s.at.saturating_add(d.timing.latency);
        first[s.to as usize] = first[s.to as usize].min(at);
    }
    let complete: Vec<Ticks> = match d.report.completion() {
        Some(c) => c.to_vec(),
        None => first.clone(),
    };
    let ms = d.report.makespan();
    let lb = d.report.lower_bound();
    let end = d.units(ms.max(lb.unwrap_or(0))) * 1.04;
    let (width, height) = (1000.0, 620.0);
    let blocks = if d.m > 1 {
        format!(", m = {}", d.m)
    } else {
        String::new()
    };
    let title = format!(
        "Timeline: {}, {}, n = {}{blocks} (aggregated above {} processors)",
        d.algo, d.model, d.n, AGGREGATE_ABOVE
    );
    let plot = Plot {
        left: 88.0,
        top: 56.0,
        width: width - 88.0 - 24.0,
        height: height - 56.0 - 64.0,
        xs: (0.0, end.max(1e-9)),
        ys: (0.0, f64::from(d.n) * 1.05),
    };
    let x_title = format!("time ({})", d.unit);
    let mut doc = page(width, height, title).add(plot.axes(&x_title, Some("processors")));
    let mut marks = vec![];
    match lb {
        Some(lb) if lb == ms => marks.push((
            ms,
            MAKESPAN_COLOUR,
            false,
            format!("makespan = lower bound = {}", d.exact(ms)),
        )),
        Some(lb) => {
            marks.push((
                ms,
                MAKESPAN_COLOUR,
                false,
                format!("makespan {}", d.exact(ms)),
            ));
            marks.push((lb, "#222", true, format!("lower bound {}", d.exact(lb))));
        }
        None => marks.push((
            ms,
            MAKESPAN_COLOUR,
            false,
            format!("makespan {}", d.exact(ms)),
        )),
    }
    let mut entries = vec![];
    for (t, c, dashed, label) in marks {
        let x = plot.x(d.units(t));
        let line = chart::line(x, plot.top, x, plot.bottom(), c).set("stroke-width", 2);
        doc = doc.add(if dashed {
            line.set("stroke-dasharray", "6 4")
        } else {
            line
        });
        entries.push((Swatch::Line(c.to_owned(), dashed), vec![label]));
    }
    let mut curves = vec![(
        complete,
        if d.m > 1 {
            format!("processors holding all {} blocks", d.m)
        } else {
            "processors informed".to_owned()
        },
    )];
    if d.m > 1 {
        curves.push((first, "processors holding block 0".to_owned()));
    }
    let mut lines = Group::new().set("class", "informed");
    for (i, (times, label)) in curves.into_iter().enumerate() {
        let c = colour(i);
        let points: Vec<(f64, f64)> = steps(d, times, end)
            .into_iter()
            .map(|(x, y)| (plot.x(x), plot.y(y)))
            .collect();
        lines = lines.add(polyline(&points, &c, false));
        entries.push((Swatch::Line(c, false), vec![label]));
    }
    doc = doc
        .add(lines)
        .add(key(&entries, plot.left + 12.0, plot.top + 8.0, true));
    Ok(Picture {
        svg: doc.to_string(),
    })
}

/// The step curve "how many processors have reached their time by t".
fn steps(d: &Drawn, mut times: Vec<Ticks>, end: f64) -> Vec<(f64, f64)> {
    times.retain(|&t| t != Ticks::MAX);
    times.sort_unstable();
    let mut points = vec![(0.0, 0.0)];
    let mut count = 0usize;
    let mut i = 0;
    while i < times.len() {
        let t = times[i];
        while i < times.len() && times[i] == t {
            i += 1;
        }
        let x = d.units(t);
        points.push((x, count as f64));
        count = i;
        points.push((x, count as f64));
    }
    points.push((end, count as f64));
    points
}
