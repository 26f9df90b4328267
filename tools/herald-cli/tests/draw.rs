//! `herald draw`: the SVGs parse, trees have a node per processor, timelines an arrow per
//! send, PNGs decode at the SVG's size, bad flags exit 2 with one line.

mod common;

use common::herald;
use std::path::PathBuf;

/// The Fig. 1 problem of the postal paper: n = 14, λ = 5/2.
const FIG1: &[&str] = &["--model", "postal", "--lambda", "5/2", "-n", "14"];
/// A multi-block LogP problem.
const LOGP: &[&str] = &[
    "--model", "logp", "--L", "6", "--o", "2", "--g", "4", "-n", "16", "-m", "3", "--algo",
    "binomial",
];

/// `herald draw <problem> --view <view> <extra>`, SVG on stdout.
fn draw(problem: &[&str], view: &str, extra: &[&str]) -> String {
    let mut args = vec!["draw", "--view", view];
    args.extend_from_slice(problem);
    args.extend_from_slice(extra);
    let out = herald(&args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the SVG is UTF-8")
}

/// Elements whose class list contains `class`.
fn with_class<'a>(doc: &'a roxmltree::Document<'a>, class: &str) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| {
            n.attribute("class")
                .is_some_and(|c| c.split_whitespace().any(|c| c == class))
        })
        .collect()
}

/// The text of an element, whitespace trimmed.
fn text(node: roxmltree::Node<'_, '_>) -> String {
    node.descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect::<String>()
        .trim()
        .to_owned()
}

/// Every text in the document.
fn texts(doc: &roxmltree::Document<'_>) -> Vec<String> {
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(text)
        .collect()
}

/// The number of sends `herald schedule` reports for `problem`.
fn sends(problem: &[&str]) -> usize {
    let mut args = vec!["schedule", "--json"];
    args.extend_from_slice(problem);
    let out = herald(&args);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v["sends"].as_u64().expect("sends") as usize
}

/// Asserts exit code 2 with exactly one line on stderr and no panic.
fn bad_input(args: &[&str]) {
    let mut all = vec!["draw"];
    all.extend_from_slice(args);
    common::bad_input(&all);
}

/// A scratch file for this test binary.
fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("draw-{}-{name}", std::process::id()))
}

#[test]
fn fig1_tree_has_a_node_per_processor_with_its_receive_time() {
    let svg = draw(FIG1, "tree", &[]);
    let doc = roxmltree::Document::parse(&svg).expect("the SVG is XML");
    let nodes = with_class(&doc, "node");
    assert_eq!(nodes.len(), 14);
    // Bar-Noy & Kipnis, Fig. 1: the receive time of each processor.
    let expected = [
        (0, "0"),
        (9, "5/2"),
        (6, "7/2"),
        (4, "9/2"),
        (3, "11/2"),
        (2, "13/2"),
        (1, "15/2"),
        (12, "5"),
        (11, "6"),
        (10, "7"),
        (8, "6"),
        (7, "7"),
        (5, "7"),
        (13, "15/2"),
    ];
    for (p, time) in expected {
        let node = nodes
            .iter()
            .find(|n| n.attribute("id") == Some(&format!("p{p}")))
            .unwrap_or_else(|| panic!("node p{p}"));
        let label = node
            .descendants()
            .find(|n| n.attribute("class") == Some("time"))
            .expect("a time label");
        assert_eq!(text(label), time, "processor {p}");
    }
    assert_eq!(with_class(&doc, "edge").len(), 13);
    assert!(texts(&doc).iter().any(|t| t.contains("makespan 15/2")));
}

#[test]
fn multi_block_tree_says_it_is_block_0() {
    let svg = draw(LOGP, "tree", &[]);
    let doc = roxmltree::Document::parse(&svg).expect("XML");
    assert_eq!(with_class(&doc, "node").len(), 16);
    assert!(texts(&doc).iter().any(|t| t.contains("block 0 of m = 3")));
}

#[test]
fn timelines_have_an_arrow_per_send() {
    for problem in [FIG1, LOGP] {
        let svg = draw(problem, "timeline", &[]);
        let doc = roxmltree::Document::parse(&svg).expect("XML");
        let expected = sends(problem);
        assert_eq!(with_class(&doc, "msg").len(), expected, "{problem:?}");
        assert_eq!(with_class(&doc, "send").len(), expected);
        assert_eq!(with_class(&doc, "recv").len(), expected);
    }
    // Block numbers on the multi-block timeline.
    let doc_text = draw(LOGP, "timeline", &[]);
    let doc = roxmltree::Document::parse(&doc_text).expect("XML");
    let blocks = with_class(&doc, "blocks");
    let numbers: Vec<String> = blocks[0]
        .children()
        .filter(|n| n.is_element())
        .map(text)
        .collect();
    for b in ["0", "1", "2"] {
        assert!(numbers.iter().any(|t| t == b), "block {b}");
    }
}

#[test]
fn large_timelines_are_aggregated() {
    let svg = draw(
        &["--model", "postal", "--lambda", "5/2", "-n", "4096"],
        "timeline",
        &[],
    );
    let doc = roxmltree::Document::parse(&svg).expect("XML");
    assert!(with_class(&doc, "msg").is_empty());
    let all = texts(&doc);
    assert!(
        all.iter().any(|t| t.contains("processors informed")),
        "{all:?}"
    );
    assert!(all.iter().any(|t| t.contains("makespan")));
}

#[test]
fn compare_bars_name_every_applicable_algorithm() {
    let svg = draw(FIG1, "compare", &[]);
    let doc = roxmltree::Document::parse(&svg).expect("XML");
    let all = texts(&doc);
    for name in [
        "optimal (bcast)",
        "binomial",
        "chain",
        "star",
        "lower bound 15/2",
    ] {
        assert!(all.iter().any(|t| t == name), "{name}: {all:?}");
    }
    // B(P) is a LogP algorithm: not applicable under postal.
    assert!(!all.iter().any(|t| t.contains("bp")));
}

#[test]
fn compare_over_a_range_of_n_needs_no_n() {
    let svg = draw(
        &["--model", "logp", "--L", "6", "--o", "2", "--g", "4"],
        "compare",
        &["--n-range", "2..24"],
    );
    let doc = roxmltree::Document::parse(&svg).expect("XML");
    let all = texts(&doc);
    assert!(all.iter().any(|t| t == "processors n"), "{all:?}");
    assert!(all.iter().any(|t| t.starts_with("optimal (bp)")));
}

#[test]
fn png_decodes_at_the_svg_size() {
    let svg = draw(FIG1, "tree", &[]);
    let doc = roxmltree::Document::parse(&svg).expect("XML");
    let size = |a| {
        doc.root_element()
            .attribute(a)
            .and_then(|v| v.parse::<u32>().ok())
            .expect("integer width and height")
    };
    let (w, h) = (size("width"), size("height"));
    let path = scratch("fig1.png");
    let file = path.to_str().expect("UTF-8 path");
    let mut args = vec!["draw", "--view", "tree", "--out", file];
    args.extend_from_slice(FIG1);
    let out = herald(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&path).expect("the PNG exists"),
    ));
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a PNG frame");
    assert_eq!((info.width, info.height), (w, h));
    // Not blank: some pixels are dark (lines and text).
    assert!(buf
        .chunks(4)
        .any(|px| px[0] < 100 && px[1] < 100 && px[2] < 100));
    let _ = std::fs::remove_file(path);
}

#[test]
fn svg_out_file_is_the_stdout_svg() {
    let path = scratch("fig1.svg");
    let file = path.to_str().expect("UTF-8 path");
    let mut args = vec!["draw", "--view", "timeline", "--out", file];
    args.extend_from_slice(FIG1);
    let out = herald(&args);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    let written = std::fs::read_to_string(&path).expect("written");
    assert_eq!(written, draw(FIG1, "timeline", &[]));
    let _ = std::fs::remove_file(path);
}

#[test]
fn bad_flags_exit_2_with_one_line() {
    bad_input(&["--lambda", "5/2", "-n", "14", "--view", "nope"]);
    bad_input(&["--lambda", "5/2", "-n", "14", "--out", "x.txt"]);
    bad_input(&["--lambda", "5/2", "--view", "tree"]); // no -n
    bad_input(&["--lambda", "5/2", "-n", "14", "--n-range", "2..9"]); // not compare
    bad_input(&["--lambda", "5/2", "--view", "compare", "--n-range", "9..2"]);
    bad_input(&["--lambda", "5/2", "--view", "compare", "--n-range", "x"]);
    bad_input(&[
        "--lambda",
        "5/2",
        "--view",
        "compare",
        "--n-range",
        "2..9",
        "--root",
        "3",
    ]);
    bad_input(&["--lambda", "5/2", "-n", "14", "--algo", "nope"]);
    bad_input(&["--lambda", "5/2", "-n", "14", "-m", "3", "--algo", "bcast"]);
    bad_input(&["--model", "logp", "-n", "14"]);
    bad_input(&["--lambda", "5/2", "-n", "0"]);
}
