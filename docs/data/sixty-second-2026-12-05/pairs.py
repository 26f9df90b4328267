#!/usr/bin/env python3
"""Issue 18's MPI row per job pair: DIR/<n>-<pair>/inproc-{openmpi,mpich}-<n>.json (inproc48.sh).
Per pair and row: herald's time in each job against that job's library, and herald's slower
time of the two jobs against the faster library of the pair (the fifty-second session's
measure). Prints the counts and every loss. Usage: pairs.py DIR."""
import glob, json, os, sys
root = sys.argv[1]
for d in sorted(glob.glob(os.path.join(root, "*-*"))):
    if not os.path.isdir(d):
        continue
    jobs = {}
    for f in glob.glob(os.path.join(d, "inproc-*.json")):
        try:
            jobs[os.path.basename(f).split("-")[1]] = {
                (r["bytes"], r["collective"], r["variant"]): r for r in json.load(open(f))["rows"]}
        except (ValueError, KeyError):
            print(f"{d}: {f} unreadable")
    own = [(lib, k, r) for lib, rows in jobs.items() for k, r in rows.items()]
    lost_own = [(lib, k, r) for lib, k, r in own if r["ratio"] > 1]
    print(f"{os.path.basename(d)}: against the job's own library {len(own) - len(lost_own)} of {len(own)}")
    for lib, k, r in lost_own:
        print(f"  lost ({lib}): {k[0]} B {k[1]} {k[2]}: herald {r['herald_us']['median']:.3f} µs "
              f"vs {r['mpi_us']['median']:.3f} = {r['ratio']:.2f} (hop {r['raw_hop_us']['median']:.3f} µs)")
    if len(jobs) == 2:
        keys = set.intersection(*(set(v) for v in jobs.values()))
        lost = []
        for k in sorted(keys):
            h = max(j[k]["herald_us"]["median"] for j in jobs.values())
            lib, m = min(((l, j[k]["mpi_us"]["median"]) for l, j in jobs.items()), key=lambda x: x[1])
            if h > m:
                lost.append((k, h, lib, m))
        print(f"  herald's slower time against the faster library: {len(keys) - len(lost)} of {len(keys)}")
        for k, h, lib, m in lost:
            print(f"    lost: {k[0]} B {k[1]} {k[2]}: herald {h:.3f} µs vs {lib} {m:.3f} = {h / m:.2f}")
