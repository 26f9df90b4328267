#!/usr/bin/env python3
"""Summary of repeated `herald fidelity --ranks 4 --sizes 4096` runs (one file per run in DIR):
per run and latency mode, knomial(3) in one block by single copy and posted (measured medians),
and the paired regret of the planner's pick. Modes by the mode's hop: far above 150 ns, near
40-150, fastest below 40. Usage: fidloop.py DIR."""
import glob, os, re, statistics, sys

rows = []
for f in glob.glob(os.path.join(sys.argv[1], "*.txt")):
    modes, cur = {}, None
    for line in open(f).read().splitlines():
        m = re.match(r"mode (\d+): raw hop (\d+) ns, (\d+)% of", line)
        if m:
            cur = int(m.group(1))
            modes[cur] = {"hop": int(m.group(2))}
            continue
        m = re.match(r"\s+4\s+4096\s+knomial\(3\) m=1 \(#\d+[,)].*?(direct|posted)\s+\S+ \S+\s+"
                     r"([\d.]+) (ns|µs)", line)
        if m and cur is not None:
            modes[cur][m.group(1)] = float(m.group(2)) * (1000 if m.group(3) == "µs" else 1)
        m = re.match(r"\s+(\d+)\s+4\s+4096\s+.*?\s([\d.-]+)%\s+([\d.-]+)%\s+([\d.-]+)% \((\d+)\)", line)
        if m:
            modes.setdefault(int(m.group(1)), {})["paired"] = float(m.group(4))
    for v in modes.values():
        if "direct" in v and "posted" in v and "paired" in v:
            kind = "far" if v["hop"] > 150 else ("near" if v["hop"] >= 40 else "fastest")
            rows.append((kind, v))
for kind in ("near", "far", "fastest"):
    r = [v for k, v in rows if k == kind]
    if not r:
        continue
    d, p, g = ([v[k] for v in r] for k in ("direct", "posted", "paired"))
    print(f"{kind}: {len(r)} (run, mode) entries; knomial(3) single copy median "
          f"{statistics.median(d):.0f} ns [{min(d):.0f}-{max(d):.0f}], posted "
          f"{statistics.median(p):.0f} [{min(p):.0f}-{max(p):.0f}]; posted faster in "
          f"{sum(a > b for a, b in zip(d, p))} of {len(r)}; paired regret of the planner's pick "
          f"median {statistics.median(g):.1f} % [{min(g):.1f}-{max(g):.1f}]")
