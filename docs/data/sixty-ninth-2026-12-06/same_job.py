"""herald in process against the faster of the two libraries, per row, in the faster library's
own jobs: herald's median over those jobs against that library's median over them (the two
measured in the same runs, under the same load). Files o{N}-*.json (Open MPI) and m{N}-*.json
(MPICH). Usage: python3 same_job.py DIR N..."""
import glob, json, statistics as st, sys

d = sys.argv[1]
for n in sys.argv[2:]:
    per = {}  # row -> lib -> (herald medians, library medians)
    for f in sorted(glob.glob(f"{d}/[om]{n}-*.json")):
        lib = f.split("/")[-1][0]
        for r in json.load(open(f))["rows"]:
            k = (r["collective"], r["bytes"], r["variant"])
            h, m = per.setdefault(k, {}).setdefault(lib, ([], []))
            h.append(r["herald_us"]["median"])
            m.append(r["mpi_us"]["median"])
    won, lost = 0, []
    for k, libs in per.items():
        lib = min(libs, key=lambda l: st.median(libs[l][1]))
        h, m = (st.median(v) for v in libs[lib])
        if h <= m:
            won += 1
        else:
            lost.append((k, lib, round(h, 3), round(m, 3)))
    print(f"{n} ranks: {len(per)} rows; herald at most the faster library in that library's jobs: {won}; lost: {lost}")
