"""A/B of two builds' in-process benches (`herald-mpi bench --herald inproc --json`, files
DIR/{old,new}-I.json, the builds alternating): per (mode, bytes, collective, variant), the
median over the jobs of herald's row medians for each build, and the paired new/old of jobs I
whose rows of both builds are in one mode. Mode: far if the row's raw hop median and p10 are
above 0.12 µs, near if its p90 is at most that, else left out. Usage: inproc_ab.py DIR"""
import glob, json, os, re, statistics as st, sys
rows = {}
for f in glob.glob(os.path.join(sys.argv[1], "*-*.json")):
    b, i = re.match(r"(\w+)-(\d+)\.json", os.path.basename(f)).groups()
    for r in json.load(open(f))["rows"]:
        hop = r["raw_hop_us"]
        mode = ("far" if hop["median"] > 0.12 and hop["p10"] > 0.12
                else "near" if hop["p90"] <= 0.12 else None)
        if mode:
            k = (r["bytes"], r["collective"], r["variant"])
            rows.setdefault(k, {})[(b, int(i))] = (mode, r["herald_us"]["median"])
for k in sorted(rows):
    d = rows[k]
    for mode in ("near", "far"):
        old = [v for (b, _), (m, v) in d.items() if b == "old" and m == mode]
        new = [v for (b, _), (m, v) in d.items() if b == "new" and m == mode]
        pairs = [d[("new", i)][1] / d[("old", i)][1] for (b, i) in d if b == "old"
                 and ("new", i) in d and d[("old", i)][0] == mode and d[("new", i)][0] == mode]
        if old and new:
            p = f"paired {st.median(pairs):.3f} ({sum(x < 1 for x in pairs)} of {len(pairs)} lower)" if pairs else ""
            print(f"{mode} {k[0]:>5} {k[1]:>9} {k[2]:>8}: old {st.median(old):.3f} ({len(old)}) new {st.median(new):.3f} ({len(new)}) {p}")
