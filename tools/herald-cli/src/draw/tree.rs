//! The broadcast tree of block 0, drawn with time running down the page.
//!
//! A node is a processor at the height of the time it receives block 0 (the root at 0); its
//! children are the processors it sends block 0 to, left to right in send order. Subtrees take
//! disjoint ranges of leaf columns and a parent sits over the middle of its children, so two
//! nodes share a column only if one descends from the other, and then they are at least one
//! latency apart. The postal paper's Fig. 1 (n = 14, λ = 5/2) is the reference picture.

use super::{nice_step, num, px, Drawn, Picture};
use crate::CliError;
use herald::Ticks;
use svg::node::element::{Circle, Group, Line, Text};

/// Width of a leaf column (px).
const COLUMN: f64 = 56.0;
/// Node radius (px).
const RADIUS: f64 = 13.0;
/// Space left of the first column, for the time axis (px).
const LEFT: f64 = 96.0;
/// Height of a title line (px).
const LINE: f64 = 19.0;
/// Space below the last node (px).
const BOTTOM: f64 = 56.0;

/// Block 0's tree: who informed whom, when.
struct Tree {
    /// When each processor holds block 0 (`None`: never).
    at: Vec<Option<Ticks>>,
    /// Each processor's children, in send order.
    children: Vec<Vec<u32>>,
    /// The roots of the drawing: the broadcast root, then every processor never informed.
    roots: Vec<u32>,
}

impl Tree {
    /// The tree of block 0's first arrivals.
    fn of(d: &Drawn) -> Tree {
        let n = d.n as usize;
        let mut at = vec![None; n];
        let mut children = vec![Vec::new(); n];
        at[d.root as usize] = Some(0);
        for s in d.sends.iter().filter(|s| s.what == 0) {
            let to = s.to as usize;
            if at[to].is_none() {
                at[to] = Some(s.at.saturating_add(d.timing.latency));
                children[s.from as usize].push(s.to);
            }
        }
        let roots = std::iter::once(d.root)
            .chain((0..d.n).filter(|&p| at[p as usize].is_none()))
            .collect();
        Tree {
            at,
            children,
            roots,
        }
    }

    /// The x of each node in leaf columns: leaves left to right, parents over the middle
    /// of their children. Returns the positions and the number of columns.
    fn columns(&self) -> (Vec<f64>, usize) {
        let mut x = vec![0.0; self.at.len()];
        let mut next = 0usize;
        for &root in &self.roots {
            // Post-order without recursion (a chain is n deep).
            let mut stack = vec![(root, false)];
            while let Some((p, done)) = stack.pop() {
                let kids = &self.children[p as usize];
                if kids.is_empty() {
                    x[p as usize] = next as f64;
                    next += 1;
                } else if done {
                    let first = x[kids[0] as usize];
                    let last = x[kids[kids.len() - 1] as usize];
                    x[p as usize] = (first + last) / 2.0;
                } else {
                    stack.push((p, true));
                    stack.extend(kids.iter().rev().map(|&k| (k, false)));
                }
            }
        }
        (x, next)
    }
}

/// Draws block 0's broadcast tree.
pub(super) fn draw(d: &Drawn) -> Result<Picture, CliError> {
    let tree = Tree::of(d);
    let (cols, count) = tree.columns();
    let latest = tree.at.iter().flatten().copied().max().unwrap_or(0);
    let never_y = d.units(latest) + d.units(d.timing.latency);
    let span = if tree.roots.len() > 1 {
        never_y
    } else {
        d.units(latest)
    };
    // Parent and child are a latency apart: keep that at least 48 px; fill ~400 px otherwise.
    let scale = (48.0 / d.units(d.timing.latency)).max((400.0 / span.max(1e-9)).min(60.0));
    let lines = titles(d);
    // Room for the title lines (about 7 px per character at 12 px), then time 0.
    let longest = lines.iter().map(|l| l.0.chars().count()).max().unwrap_or(0);
    let width = (LEFT + count as f64 * COLUMN + 40.0).max(longest as f64 * 6.5 + 32.0);
    // Centre the columns when the title is wider than the tree.
    let shift = (width - (LEFT + count as f64 * COLUMN + 40.0)) / 2.0;
    let top = 44.0 + LINE * lines.len() as f64;
    let height = top + span * scale + BOTTOM;
    let x_of = |p: u32| LEFT + shift + COLUMN / 2.0 + cols[p as usize] * COLUMN;
    let y_of = |p: u32| top + scale * tree.at[p as usize].map(|t| d.units(t)).unwrap_or(never_y);

    let mut doc = super::chart::blank(width, height).add(title_group(&lines));
    doc = doc.add(axis(d, top, span, scale, width));

    let mut edges = Group::new()
        .set("class", "edges")
        .set("stroke", "#8a8a8a")
        .set("stroke-width", 1.2);
    for p in 0..d.n {
        for &c in &tree.children[p as usize] {
            let (x1, y1, x2, y2) = (x_of(p), y_of(p), x_of(c), y_of(c));
            let (ux, uy) = unit(x1, y1, x2, y2);
            edges = edges.add(
                Line::new()
                    .set("class", "edge")
                    .set("x1", px(x1 + ux * RADIUS))
                    .set("y1", px(y1 + uy * RADIUS))
                    .set("x2", px(x2 - ux * RADIUS))
                    .set("y2", px(y2 - uy * RADIUS)),
            );
        }
    }
    doc = doc.add(edges);

    let label_size = if d.n > 1000 {
        8
    } else if d.n > 100 {
        10
    } else {
        12
    };
    let mut nodes = Group::new().set("class", "nodes");
    for p in 0..d.n {
        let (x, y) = (x_of(p), y_of(p));
        let time = match tree.at[p as usize] {
            Some(t) => d.exact(t),
            None => "never".to_owned(),
        };
        let fill = if p == d.root { "#dbe9f6" } else { "white" };
        let node = Group::new()
            .set("class", "node")
            .set("id", format!("p{p}"))
            .add(
                Circle::new()
                    .set("cx", px(x))
                    .set("cy", px(y))
                    .set("r", RADIUS)
                    .set("fill", fill)
                    .set("stroke", "#1f77b4")
                    .set("stroke-width", 1.5),
            )
            .add(
                Text::new(p.to_string())
                    .set("x", px(x))
                    .set("y", px(y + label_size as f64 * 0.36))
                    .set("text-anchor", "middle")
                    .set("font-size", label_size)
                    .set("font-weight", "bold"),
            )
            .add(
                Text::new(time)
                    .set("class", "time")
                    .set("x", px(x + RADIUS + 2.0))
                    .set("y", px(y - 4.0))
                    .set("font-size", 10)
                    .set("fill", "#b03030")
                    .set("stroke", "white")
                    .set("stroke-width", 3)
                    .set("paint-order", "stroke"),
            );
        nodes = nodes.add(node);
    }
    doc = doc.add(nodes);
    Ok(Picture {
        svg: doc.to_string(),
    })
}

/// The unit vector from `(x1, y1)` towards `(x2, y2)`.
fn unit(x1: f64, y1: f64, x2: f64, y2: f64) -> (f64, f64) {
    let len = (x2 - x1).hypot(y2 - y1).max(1e-9);
    ((x2 - x1) / len, (y2 - y1) / len)
}

/// The title and the lines under it: (text, font size, weight).
fn titles(d: &Drawn) -> Vec<(String, u32, &'static str)> {
    let mut lines = vec![
        (
            format!("Broadcast tree: {}, {}, n = {}", d.algo, d.model, d.n),
            16,
            "bold",
        ),
        (
            "node: a processor, in red the time it receives the message; \
             children left to right in send order"
                .to_owned(),
            12,
            "normal",
        ),
        (d.outcome(), 12, "normal"),
    ];
    if d.m > 1 {
        lines.push((
            format!(
                "the tree of block 0 of m = {} blocks (each block travels its own tree)",
                d.m
            ),
            12,
            "normal",
        ));
    }
    lines
}

/// The title lines as SVG text.
fn title_group(lines: &[(String, u32, &'static str)]) -> Group {
    let mut g = Group::new().set("class", "title");
    for (i, (text, size, weight)) in lines.iter().enumerate() {
        g = g.add(
            Text::new(text.clone())
                .set("x", 16)
                .set("y", 26.0 + LINE * i as f64)
                .set("font-size", *size)
                .set("font-weight", *weight),
        );
    }
    g
}

/// The time axis on the left, with faint lines across.
fn axis(d: &Drawn, top: f64, span: f64, scale: f64, width: f64) -> Group {
    let x = LEFT - 16.0;
    let bottom = top + span * scale;
    let mut g = Group::new().set("class", "axis").set("font-size", 11).add(
        Line::new()
            .set("x1", x)
            .set("y1", top)
            .set("x2", x)
            .set("y2", px(bottom))
            .set("stroke", "#444"),
    );
    let step = nice_step(span, (span * scale / 40.0).floor());
    let mut i = 0u32;
    loop {
        let t = f64::from(i) * step;
        if t > span + 1e-9 {
            break;
        }
        let y = px(top + t * scale);
        g = g
            .add(
                Line::new()
                    .set("x1", x)
                    .set("y1", y)
                    .set("x2", px(width - 20.0))
                    .set("y2", y)
                    .set("stroke", "#ececec"),
            )
            .add(
                Line::new()
                    .set("x1", x - 4.0)
                    .set("y1", y)
                    .set("x2", x)
                    .set("y2", y)
                    .set("stroke", "#444"),
            )
            .add(
                Text::new(num(t))
                    .set("x", x - 7.0)
                    .set("y", y + 4.0)
                    .set("text-anchor", "end"),
            );
        i += 1;
    }
    let mid = px((top + bottom) / 2.0);
    g.add(
        Text::new(format!("time ({})", d.unit))
            .set("x", 22)
            .set("y", mid)
            .set("text-anchor", "middle")
            .set("font-size", 12)
            .set("transform", format!("rotate(-90 22 {mid})")),
    )
}
