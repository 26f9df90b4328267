"""herald in process against the faster of the two libraries, per row: herald's median over its
jobs (and its slowest job) against the faster library's median over its jobs. Files
o{N}-*.json (Open MPI jobs) and m{N}-*.json (MPICH jobs). Usage: python3 across.py DIR N..."""
import glob, json, statistics as st, sys

d = sys.argv[1]
for n in sys.argv[2:]:
    h, lib = {}, {}
    for f in sorted(glob.glob(f"{d}/[om]{n}-*.json")):
        rows = json.load(open(f))["rows"]
        print(f.split("/")[-1], sum(r["ratio"] <= 1 for r in rows), "of", len(rows),
              "at most its own library's time;",
              [(r["collective"], r["bytes"], r["variant"], round(r["ratio"], 3)) for r in rows if r["ratio"] > 1])
        for r in rows:
            k = (r["collective"], r["bytes"], r["variant"])
            h.setdefault(k, []).append(r["herald_us"]["median"])
            lib.setdefault(k, {}).setdefault(f.split("/")[-1][0], []).append(r["mpi_us"]["median"])
    med = worst = 0
    lost = []
    for k in h:
        fast = min(st.median(v) for v in lib[k].values())
        med += st.median(h[k]) <= fast
        worst += max(h[k]) <= fast
        if st.median(h[k]) > fast:
            lost.append((k, round(st.median(h[k]), 3), round(fast, 3)))
    print(f"{n} ranks: {len(h)} rows; herald's median at most the faster library's: {med}; herald's slowest job: {worst}; lost: {lost}")
