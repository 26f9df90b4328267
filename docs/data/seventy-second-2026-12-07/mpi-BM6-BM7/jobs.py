"""Each 2-rank job's rows in the far mode (raw hop above 0.15 µs), its lost rows, and the
256 KiB and 1 MiB `barrier` broadcasts: python3 jobs.py [DIR]."""
import glob, json, sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
for f in sorted(glob.glob(f"{root}/*/bench-*.json")):
    d = json.load(open(f))
    rows = d["rows"]
    far = sum(r["raw_hop_us"]["median"] > 0.15 for r in rows)
    lost = [(r["collective"], r["bytes"], r["variant"], r["ratio"]) for r in rows if r["ratio"] > 1]
    bar = {r["bytes"]: r["ratio"] for r in rows
           if r["collective"] == "bcast" and r["variant"] == "barrier" and r["bytes"] in (262144, 1048576)}
    print(f.split("/")[-2], d["date"], f"far rows {far} of {len(rows)}", f"lost {lost}",
          f"barrier 256 KiB {bar[262144]:.2f}, 1 MiB {bar[1048576]:.2f}")
