#!/usr/bin/env python3
"""Issue 18's measure across libraries, per latency mode of the host. Reads the in-process
benches (`herald-mpi bench --herald inproc --json`, rows with `raw_hop_us`) of any number of
jobs, `DIR/*/inproc-{openmpi,mpich}-N.json`; puts each row in the mode its raw hop shows (far:
median above FAR_US and p10 above FAR_US too; near: p90 at most FAR_US; else mixed, left out);
then per (n, bytes, collective, variant, mode) compares herald's median over the jobs' row
medians (both libraries' jobs) with each library's median over its jobs' row medians, and
counts the rows where herald is at least as fast as the faster library.
Usage: across_modes.py DIR [FAR_US]."""
import glob, json, os, statistics, sys

root = sys.argv[1]
far_us = float(sys.argv[2]) if len(sys.argv) > 2 else 0.12
herald, lib, mixed = {}, {}, 0
for f in sorted(glob.glob(os.path.join(root, "*", "inproc-*-*.json"))):
    name = os.path.basename(f).split("-")[1]
    for r in json.load(open(f))["rows"]:
        hop = r.get("raw_hop_us")
        if hop is None:
            continue
        if hop["median"] > far_us and hop["p10"] > far_us:
            mode = "far"
        elif hop["p90"] <= far_us:
            mode = "near"
        else:
            mixed += 1
            continue
        k = (mode, r["n"], r["bytes"], r["collective"], r["variant"])
        herald.setdefault(k, []).append(r["herald_us"]["median"])
        lib.setdefault(k, {}).setdefault(name, []).append(r["mpi_us"]["median"])
print(f"rows left out (mode changed within the row): {mixed}")
for mode in ("near", "far"):
    keys = sorted(k for k in herald if k[0] == mode and len(lib[k]) == 2)
    one = sorted(k for k in herald if k[0] == mode and len(lib[k]) == 1)
    won = 0
    lost = []
    for k in keys:
        h = statistics.median(herald[k])
        best_name, best = min(((n, statistics.median(v)) for n, v in lib[k].items()),
                              key=lambda x: x[1])
        if h <= best:
            won += 1
        else:
            lost.append((k, h, best_name, best, len(herald[k])))
    print(f"{mode}: {won} of {len(keys)} rows at least as fast as the faster library "
          f"({len(one)} rows seen in this mode with one library only)")
    for k, h, n, b, c in lost:
        print(f"  lost: n={k[1]} {k[2]} B {k[3]} {k[4]}: herald {h:.3f} µs ({c} jobs) "
              f"vs {n} {b:.3f} = {h / b:.2f}")
