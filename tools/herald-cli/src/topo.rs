//! `herald topo`: the machine's (or a synthetic / XML) hierarchy and its rank-to-core maps.

use crate::output::{self, TopoJson, TopoLevelJson};
use crate::CliError;
use herald::{model::LevelKind, topology::RankMap, Hierarchy, TopologySource};
use std::path::PathBuf;

/// Arguments of `herald topo`.
#[derive(Debug, clap::Args)]
pub(crate) struct TopoArgs {
    /// A synthetic topology instead of this machine, e.g. "pack:2 numa:2 l3:4 core:8 pu:2".
    #[arg(long, value_name = "S")]
    synthetic: Option<String>,
    /// An hwloc XML topology (as written by `lstopo file.xml`) instead of this machine.
    #[arg(long, value_name = "F")]
    xml: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Rank map to show: compact, scatter or list:i,j,… (OS CPU indices); default: compact and
    /// scatter.
    #[arg(long, value_name = "MAP")]
    map: Option<String>,
    /// Number of ranks to map (default: one per PU); more ranks than PUs wrap around.
    #[arg(short = 'n', value_name = "N")]
    n: Option<usize>,
}

/// Runs `herald topo`.
pub(crate) fn run(args: &TopoArgs) -> Result<(), CliError> {
    let source = TopologySource::from_options(args.synthetic.as_deref(), args.xml.as_deref())
        .map_err(CliError::usage)?;
    let maps = match &args.map {
        Some(m) => vec![m.parse::<RankMap>().map_err(CliError::usage)?],
        None => vec![RankMap::Compact, RankMap::Scatter],
    };
    let h = source.load().map_err(CliError::usage)?;
    let ranks = args.n.unwrap_or(h.pu_count());
    let mut mapped = Vec::with_capacity(maps.len());
    for m in maps {
        let cpus = m.cpus(&h, ranks).map_err(CliError::usage)?;
        mapped.push((m.to_string(), cpus));
    }
    if args.json {
        output::print_pretty(&to_json(&source, &h, ranks, &mapped))?;
    } else {
        print!("{}", to_text(&source, &h, ranks, &mapped));
    }
    Ok(())
}

fn to_json(
    source: &TopologySource,
    h: &Hierarchy,
    ranks: usize,
    maps: &[(String, Vec<usize>)],
) -> TopoJson {
    TopoJson {
        source: source.to_string(),
        cpu: machine_cpu(source),
        packages: h.count(LevelKind::Package),
        numa_nodes: h.count(LevelKind::Numa),
        cores: h.count(LevelKind::Core),
        pus: h.pu_count(),
        levels: h
            .levels()
            .iter()
            .map(|l| TopoLevelJson {
                name: l.name(),
                count: l.len(),
                pus_per_node: l.pus_per_node(),
            })
            .collect(),
        os_indices: h.os_indices().to_vec(),
        ranks,
        maps: maps.iter().cloned().collect(),
    }
}

fn to_text(
    source: &TopologySource,
    h: &Hierarchy,
    ranks: usize,
    maps: &[(String, Vec<usize>)],
) -> String {
    let mut out = format!("topology of {source}: {} PUs\n", h.pu_count());
    if let Some(cpu) = machine_cpu(source) {
        out += &format!("  cpu: {cpu}\n");
    }
    for (depth, level) in h.levels().iter().enumerate() {
        let per_node = match level.pus_per_node() {
            Some(1) => "1 PU each".to_owned(),
            Some(p) => format!("{p} PUs each"),
            None => {
                let sizes = level.nodes().iter().map(|n| n.pu_count());
                let (lo, hi) = (sizes.clone().min().unwrap_or(0), sizes.max().unwrap_or(0));
                format!("{lo}..{hi} PUs each")
            }
        };
        let name = format!("{:indent$}{}", "", level.name(), indent = 2 * depth);
        out += &format!("  {name:<20} {:>6} × {per_node}\n", level.len());
    }
    out += &format!(
        "  PU OS indices (logical order): {}\n",
        list(h.os_indices())
    );
    out += &format!("rank → CPU maps ({ranks} ranks):\n");
    for (name, cpus) in maps {
        out += &format!("  {name:<8} {}\n", list(cpus));
    }
    out
}

/// The processor, where the topology is this machine's and the system names it.
fn machine_cpu(source: &TopologySource) -> Option<herald::model::CpuIdentity> {
    matches!(source, TopologySource::Machine)
        .then(herald::model::this_cpu)
        .flatten()
}

/// `0 1 2 …`, shortened in the middle beyond 64 entries.
fn list(values: &[usize]) -> String {
    let show = |v: &[usize]| v.iter().map(usize::to_string).collect::<Vec<_>>().join(" ");
    if values.len() <= 64 {
        show(values)
    } else {
        format!(
            "{} … {} ({} in all)",
            show(&values[..32]),
            show(&values[values.len() - 8..]),
            values.len()
        )
    }
}
