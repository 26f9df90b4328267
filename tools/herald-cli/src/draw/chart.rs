//! The pieces of a chart, in SVG: a plot area with linear axes, their ticks and titles, and a
//! key of swatches. The comparison charts and the aggregated timeline are built from these.

use super::{nice_step, num, px, FONT};
use svg::node::element::{Group, Line, Rectangle, Text};
use svg::Document;

/// A blank picture `width × height` px (whole pixels) with a white background.
pub(super) fn blank(width: f64, height: f64) -> Document {
    let (width, height) = (width.ceil(), height.ceil());
    Document::new()
        .set("width", width)
        .set("height", height)
        .set("viewBox", (0, 0, width, height))
        .set("font-family", FONT)
        .add(
            Rectangle::new()
                .set("width", "100%")
                .set("height", "100%")
                .set("fill", "white"),
        )
}

/// A blank picture with a centred title.
pub(super) fn page(width: f64, height: f64, title: String) -> Document {
    blank(width, height).add(
        Text::new(title)
            .set("class", "title")
            .set("x", px(width / 2.0))
            .set("y", 28)
            .set("font-size", 18)
            .set("text-anchor", "middle"),
    )
}

/// A plot area: data ranges mapped linearly onto a pixel rectangle (y grows upwards).
#[derive(Debug, Clone, Copy)]
pub(super) struct Plot {
    /// Left edge (px).
    pub(super) left: f64,
    /// Top edge (px).
    pub(super) top: f64,
    /// Width (px).
    pub(super) width: f64,
    /// Height (px).
    pub(super) height: f64,
    /// Data x at the left and right edges.
    pub(super) xs: (f64, f64),
    /// Data y at the bottom and top edges.
    pub(super) ys: (f64, f64),
}

impl Plot {
    /// The pixel x of data `x`.
    pub(super) fn x(&self, x: f64) -> f64 {
        px(self.left + (x - self.xs.0) / (self.xs.1 - self.xs.0) * self.width)
    }

    /// The pixel y of data `y`.
    pub(super) fn y(&self, y: f64) -> f64 {
        px(self.top + self.height - (y - self.ys.0) / (self.ys.1 - self.ys.0) * self.height)
    }

    /// The bottom edge (px).
    pub(super) fn bottom(&self) -> f64 {
        self.top + self.height
    }

    /// The frame: faint grid lines at nice steps, the x axis with tick labels and `x_title`
    /// under it, and (with `y_title`) the y axis with tick labels and its title rotated.
    pub(super) fn axes(&self, x_title: &str, y_title: Option<&str>) -> Group {
        let dark = "#444";
        let mut g = Group::new()
            .set("class", "axis")
            .set("font-size", 13)
            .add(line(
                self.left,
                self.bottom(),
                self.left + self.width,
                self.bottom(),
                dark,
            ));
        for x in ticks(self.xs, self.width / 90.0) {
            let at = self.x(x);
            g = g
                .add(line(at, self.top, at, self.bottom(), "#ececec"))
                .add(line(at, self.bottom(), at, self.bottom() + 5.0, dark))
                .add(
                    Text::new(num(x))
                        .set("x", at)
                        .set("y", px(self.bottom() + 20.0))
                        .set("text-anchor", "middle"),
                );
        }
        g = g.add(
            Text::new(x_title)
                .set("x", px(self.left + self.width / 2.0))
                .set("y", px(self.bottom() + 40.0))
                .set("text-anchor", "middle")
                .set("font-size", 15),
        );
        let Some(y_title) = y_title else {
            return g;
        };
        g = g.add(line(self.left, self.top, self.left, self.bottom(), dark));
        for y in ticks(self.ys, self.height / 50.0) {
            let at = self.y(y);
            g = g
                .add(line(self.left, at, self.left + self.width, at, "#ececec"))
                .add(line(self.left - 5.0, at, self.left, at, dark))
                .add(
                    Text::new(num(y))
                        .set("x", px(self.left - 8.0))
                        .set("y", px(at + 4.0))
                        .set("text-anchor", "end"),
                );
        }
        let (cx, cy) = (px(self.left - 46.0), px(self.top + self.height / 2.0));
        g.add(
            Text::new(y_title)
                .set("x", cx)
                .set("y", cy)
                .set("text-anchor", "middle")
                .set("font-size", 15)
                .set("transform", format!("rotate(-90 {cx} {cy})")),
        )
    }
}

/// The tick values at a nice step in `range`, about `count` of them.
fn ticks((lo, hi): (f64, f64), count: f64) -> Vec<f64> {
    let step = nice_step(hi - lo, count.floor());
    let first = (lo / step).ceil() as i64;
    (first..)
        .map(|i| i as f64 * step)
        .take_while(|&v| v <= hi + step * 1e-9)
        .collect()
}

/// A line from `(x1, y1)` to `(x2, y2)` in `stroke`.
pub(super) fn line(x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str) -> Line {
    Line::new()
        .set("x1", px(x1))
        .set("y1", px(y1))
        .set("x2", px(x2))
        .set("y2", px(y2))
        .set("stroke", stroke)
}

/// A polyline through `points` (px) in `stroke`, 2 px wide, dashed if asked.
pub(super) fn polyline(
    points: &[(f64, f64)],
    stroke: &str,
    dashed: bool,
) -> svg::node::element::Polyline {
    let pts: Vec<String> = points.iter().map(|(x, y)| format!("{x},{y}")).collect();
    let l = svg::node::element::Polyline::new()
        .set("points", pts.join(" "))
        .set("fill", "none")
        .set("stroke", stroke)
        .set("stroke-width", 2);
    if dashed {
        l.set("stroke-dasharray", "6 4")
    } else {
        l
    }
}

/// What a key entry shows beside its text.
#[derive(Debug, Clone)]
pub(super) enum Swatch {
    /// A filled box.
    Fill(String),
    /// A line, dashed or solid.
    Line(String, bool),
}

/// A key: one swatch per entry, its text lines beside it, top-left corner at `(x, y)`, on a
/// white box with a light border when `boxed`.
pub(super) fn key(entries: &[(Swatch, Vec<String>)], x: f64, y: f64, boxed: bool) -> Group {
    const LINE: f64 = 17.0;
    let mut g = Group::new().set("class", "key").set("font-size", 13);
    let lines: usize = entries.iter().map(|(_, l)| l.len()).sum();
    let height = lines as f64 * LINE + entries.len() as f64 * 6.0 + 8.0;
    let longest = entries
        .iter()
        .flat_map(|(_, l)| l.iter().map(|t| t.chars().count()))
        .max()
        .unwrap_or(0);
    if boxed {
        g = g.add(
            Rectangle::new()
                .set("x", px(x))
                .set("y", px(y))
                .set("width", px(48.0 + longest as f64 * 7.0))
                .set("height", px(height))
                .set("fill", "white")
                .set("fill-opacity", 0.9)
                .set("stroke", "#bbb"),
        );
    }
    let mut at = y + 4.0 + LINE / 2.0;
    for (swatch, text) in entries {
        g = match swatch {
            Swatch::Fill(c) => g.add(
                Rectangle::new()
                    .set("x", px(x + 8.0))
                    .set("y", px(at - 5.0))
                    .set("width", 22)
                    .set("height", 10)
                    .set("fill", c.as_str()),
            ),
            Swatch::Line(c, dashed) => {
                let l = line(x + 8.0, at, x + 30.0, at, c).set("stroke-width", 2);
                g.add(if *dashed {
                    l.set("stroke-dasharray", "6 4")
                } else {
                    l
                })
            }
        };
        for t in text {
            g = g.add(
                Text::new(t.as_str())
                    .set("x", px(x + 38.0))
                    .set("y", px(at + 4.5)),
            );
            at += LINE;
        }
        at += 6.0;
    }
    g
}
