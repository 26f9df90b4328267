#!/usr/bin/env python3
"""Rewrites Rust and Markdown files written against herald's old flat root API (before issue 21)
to the curated one: `use herald::{X, Y}` and `herald::X` become module paths
(`herald::model::KPort`, `herald::sim::Rule`, …) for every name the root no longer re-exports,
and `Send` (a schedule's send) becomes `schedule::Transfer`. Usage:
    python3 scripts/api-paths.py FILE…   (rewrites in place; prints the files it changed)
Run `cargo fmt` afterwards."""
import re
import sys

# The names the root keeps (src/lib.rs).
ROOT = set(
    "Ratio Ticks Model CostModel Postal LogP Hierarchy Profile Schedule Collective Algorithm "
    "Request generate check Report plan Plan PlanRequest TopologySource Team Program Network "
    "Comm CommRank CommOptions Signal calibrate".split()
)
# Module of every name the old root re-exported.
MODULES = {
    'calibrate': 'CalibrateError CalibrateOptions FitError LogGpFit Progress PrttPoint calibrate capacity_from_curve distribution find_modes fit_prtt utc_now'.split(),
    'model': 'Assumptions Capacity CostModel Distribution FatTree FatTreeCapacity Hier HierLevel Hierarchy HierarchyError KPort Level LevelCost LevelKind LevelProfile LevelSource LogP LongMessages MAX_PUS Mode Model ModelError Node OnePort PROFILE_SCHEMA Pick Postal Problem Profile ProfileError Timing TopologyLevel TopologySummary UniversalTree WholeParams default_profile_path host_name load_profile save_profile'.split(),
    'plan': 'Candidate Plan PlanError PlanRequest best_stage_tree candidate_model candidates hier_candidates oversubscribed_model plan plan_profile plan_runtime schedule_of'.split(),
    'runtime': 'Aborted Blocking CallInfo CollectiveError CollectiveKind Comm CommOptions CommRank Ctx DefaultSchedule Iteration Line MAX_BATCH MAX_COMM_RANKS Network Placement Planned PlannedLoadError PoisonCause Program ProgramError RankProgram RankTiming Receiver RecvError RuntimeError SendError Sender Signal Spread Team TeamBuilder TryRecvError TrySendError TrySendWithError channel'.split(),
    'schedule': 'Algorithm Collective Goal GoalDep GoalError GoalOp GoalRank Leaders Orders Request Schedule ScheduleBuilder ScheduleError ScheduleJsonError Send Summation default_leaders earliest_arrival generate leaders place split_depths stage_members'.split(),
    'sim': 'CheckError CheckOptions Evaluation GoalCheck GoalRun GoalRunError OPTIMUM_MAX_M OPTIMUM_MAX_N Operands Optimum OptimumError Report Rule Span ValueError Violation check check_goal check_with evaluate evaluate_fat_tree goal_collective goal_message_bytes lower_bound optimum replay run_goal'.split(),
    'time': 'Ratio Ticks TimeBase TimeError'.split(),
    'topology': 'MAX_RANKS MAX_SYNTHETIC_PUS MapError RankMap TopologyError TopologySource hwloc_machine hwloc_synthetic hwloc_xml parse_synthetic parse_xml read_xml sysfs_hierarchy sysfs_hierarchy_at'.split(),
}
MODULE_OF = {name: module for module, names in MODULES.items() for name in names}
RENAMED = {"Send": "Transfer"}


def target(name):
    return None if name in ROOT else MODULE_OF.get(name)


def split_items(body):
    body = re.sub(r"(///|//!|^\s*#\s)", " ", body, flags=re.M)
    items, depth, cur = [], 0, ""
    for ch in body:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    return [re.sub(r"\s+", " ", i).strip() for i in items if i.strip()]


def rewrite_group(mo):
    kept, groups = [], {}
    for item in split_items(mo.group(1)):
        head = item.split("::")[0].split(" as ")[0].strip()
        module = target(head)
        if module is None:
            kept.append(item)
        elif "::" in item or "{" in item:
            kept.append(f"{module}::{item}")
        else:
            groups.setdefault(module, []).append(item.replace(head, RENAMED.get(head, head), 1))
    for module, names in sorted(groups.items()):
        kept.append(f"{module}::{names[0]}" if len(names) == 1 else f"{module}::{{{', '.join(names)}}}")
    return f"use herald::{kept[0]};" if len(kept) == 1 else "use herald::{" + ", ".join(kept) + "};"


def rewrite_path(mo):
    module = target(mo.group(1))
    if module is None:
        return mo.group(0)
    return f"herald::{module}::{RENAMED.get(mo.group(1), mo.group(1))}"


for path in sys.argv[1:]:
    text = open(path, encoding="utf-8").read()
    new = re.sub(r"use herald::\{([^;]*?)\};", rewrite_group, text)
    new = re.sub(r"herald::([A-Za-z_]\w*)\b(?!::\{)", rewrite_path, new)
    if new != text:
        open(path, "w", encoding="utf-8").write(new)
        print(path)
