//! `herald topo`: output shape, rank maps, exit code 2 with one line on stderr for bad input.

mod common;

use common::{herald, run_json};

fn data(name: &str) -> String {
    format!("{}/../../tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// [`common::bad_input`], and nothing on stdout.
fn bad_input(args: &[&str]) {
    let out = common::bad_input(args);
    assert!(out.stdout.is_empty(), "{args:?}");
}

#[test]
fn smoke() {
    let out = herald(&["topo"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("machine") && text.contains("pu") && text.contains("compact"),
        "{text}"
    );
    // This machine's processor, as the system names it.
    let cpu = herald::model::this_cpu();
    assert_eq!(
        text.lines().nth(1).and_then(|l| l.strip_prefix("  cpu: ")),
        cpu.as_ref().map(ToString::to_string).as_deref(),
        "{text}"
    );
    let v = run_json(&["topo", "--json"]);
    assert_eq!(
        v.get("cpu").cloned(),
        cpu.map(|c| serde_json::to_value(c).unwrap())
    );
}

#[test]
fn synthetic_json() {
    let v = run_json(&[
        "topo",
        "--synthetic",
        "pack:2 numa:2 l3:4 core:8 pu:2",
        "--json",
        "-n",
        "4",
    ]);
    assert_eq!(v["packages"], 2);
    // A synthetic machine names no processor.
    assert!(v.get("cpu").is_none());
    assert_eq!(v["cores"], 128);
    assert_eq!(v["pus"], 256);
    let levels: Vec<(String, u64)> = v["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap().to_owned(),
                l["count"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("machine", 1),
        ("package", 2),
        ("numa", 4),
        ("l3", 16),
        ("core", 128),
        ("pu", 256),
    ];
    assert_eq!(levels, expected.map(|(n, c)| (n.to_owned(), c)));
    assert_eq!(v["maps"]["compact"], serde_json::json!([0, 1, 2, 3]));
    assert_eq!(v["maps"]["scatter"], serde_json::json!([0, 128, 64, 192]));
}

#[test]
fn xml_and_list_map() {
    let xml = data("two-socket-smt.xml");
    let v = run_json(&[
        "topo",
        "--xml",
        &xml,
        "--json",
        "--map",
        "list:0,2,1,3",
        "-n",
        "6",
    ]);
    assert_eq!(v["packages"], 2);
    assert_eq!(v["pus"], 16);
    assert_eq!(
        v["maps"]["list:0,2,1,3"],
        serde_json::json!([0, 2, 1, 3, 0, 2])
    );
    let v = run_json(&[
        "topo", "--xml", &xml, "--json", "--map", "scatter", "-n", "4",
    ]);
    assert_eq!(v["maps"]["scatter"], serde_json::json!([0, 4, 2, 6]));
}

#[test]
fn bad_input_exits_2() {
    bad_input(&["topo", "--synthetic", "pack:2 core:2"]);
    bad_input(&["topo", "--synthetic", "memcache:2 pu:1"]); // aborts inside hwloc if unchecked
    bad_input(&["topo", "--synthetic", ""]);
    bad_input(&["topo", "--xml", &data("no-such-file.xml")]);
    bad_input(&["topo", "--xml", &data("malformed-truncated.xml")]);
    bad_input(&["topo", "--xml", &data("malformed-cpuset.xml")]);
    bad_input(&["topo", "--xml", &data("inconsistent-cpuset.xml")]);
    bad_input(&[
        "topo",
        "--synthetic",
        "pu:2",
        "--xml",
        &data("two-socket-smt.xml"),
    ]);
    bad_input(&["topo", "--synthetic", "pu:2", "--map", "spread"]);
    bad_input(&["topo", "--synthetic", "pu:2", "--map", "list:0,5"]);
    bad_input(&["topo", "--synthetic", "pu:2", "-n", "99999999999"]);
}
