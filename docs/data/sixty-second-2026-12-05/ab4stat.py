#!/usr/bin/env python3
"""Medians of herald's in-process times per build, (n, bytes, collective, variant) and mode
(near: the row's raw hop median at most 0.12 µs, else far), from ab4.sh's OUTDIR/<build>-<i>.json,
and the paired ratio (builds of one round) per row. Usage: ab4stat.py OUTDIR old new."""
import glob, json, os, statistics, sys
root, builds = sys.argv[1], sys.argv[2:]
t = {}
for b in builds:
    for f in glob.glob(os.path.join(root, f"{b}-*.json")):
        i = int(f.rsplit("-", 1)[1].split(".")[0])
        try:
            rows = json.load(open(f))["rows"]
        except Exception:
            continue
        for r in rows:
            mode = "far" if r["raw_hop_us"]["median"] > 0.12 else "near"
            k = (r["n"], r["bytes"], r["collective"], r["variant"])
            t.setdefault(k, {}).setdefault(b, {})[i] = (r["herald_us"]["median"], mode)
for k in sorted(t):
    line = [f"{k[0]} {k[1]:>7} {k[2]:9} {k[3]:8}"]
    for mode in ("near", "far"):
        meds = []
        for b in builds:
            v = [x for x, m in t[k].get(b, {}).values() if m == mode]
            meds.append(f"{b} {statistics.median(v):8.3f} ({len(v):2})" if v else f"{b}      -    ")
        a, c = t[k].get(builds[0], {}), t[k].get(builds[-1], {})
        pr = [c[i][0] / a[i][0] for i in a if i in c and a[i][1] == mode and c[i][1] == mode]
        pair = f"paired {statistics.median(pr):.3f} ({sum(x < 1 for x in pr)}/{len(pr)} lower)" if pr else ""
        line.append(f"{mode}: " + " ".join(meds) + " " + pair)
    print(" | ".join(line))
