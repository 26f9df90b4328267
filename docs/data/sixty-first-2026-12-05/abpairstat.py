"""Summarises abpair.sh output: per build, the medians over runs of each size's herald_ns,
flag_ns, raw_ns and herald/flag, split by the raw hop (the bench's raw_ns at 48 B) into modes:
near below 120 ns, far from 120 ns; and the paired ratio new/old of herald/flag per round where
both runs of a round are in the same mode. Usage: python3 abpairstat.py out.txt old new"""
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
builds = sys.argv[2:]
mode = lambda r: "near" if r["48B"]["raw_ns"] < 120 else "far"
for m in ("near", "far"):
    for b in builds:
        rs = [r for r in rows if r["build"] == b and mode(r) == m]
        if not rs:
            continue
        cells = []
        for size in ("48B", "64B", "4KiB"):
            med = lambda k: st.median(r[size][k] for r in rs)
            cells.append(f"{size} herald {med('herald_ns'):.1f} flag {med('flag_ns'):.1f} raw {med('raw_ns'):.1f} h/f {med('herald_over_flag'):.3f}")
        print(f"{m} {b} {len(rs)} runs: " + "; ".join(cells))
    if len(builds) == 2:
        a, b = builds
        by = {}
        for r in rows:
            by.setdefault(r["round"], {})[r["build"]] = r
        for size in ("48B", "64B", "4KiB"):
            q = [p[b][size]["herald_over_flag"] / p[a][size]["herald_over_flag"]
                 for p in by.values() if a in p and b in p and mode(p[a]) == m and mode(p[b]) == m]
            if q:
                lower = sum(x < 1 for x in q)
                print(f"  {m} {size}: paired {b}/{a} of herald/flag median {st.median(q):.3f} ({lower} of {len(q)} lower)")
