"""Per library and build: rows at most the library's time, worst row, and herald's median and
p90 per size from 32 KiB (files LIB-BUILD-I.json). Usage: python3 held_stat.py DIR"""
import glob, json, sys

d = sys.argv[1]
for lib in "mo":
    tab = {}
    for b in ["new", "new2"]:
        for f in sorted(glob.glob(f"{d}/{lib}-{b}-*.json")):
            rows = json.load(open(f))["rows"]
            worst = max((r["ratio"], r["bytes"]) for r in rows)
            print(f.split("/")[-1], sum(r["ratio"] <= 1 for r in rows), "of", len(rows), "worst", worst)
            for r in rows:
                tab.setdefault(r["bytes"], {}).setdefault(b, []).append(
                    (r["herald_us"]["median"], r["herald_us"]["p90"]))
    for k in sorted(tab):
        if k >= 32768:
            fmt = lambda v: " ".join(f"{m:.1f}/{p:.1f}" for m, p in v)
            print(lib, k, "before (median/p90):", fmt(tab[k]["new"]), " after:", fmt(tab[k]["new2"]))
