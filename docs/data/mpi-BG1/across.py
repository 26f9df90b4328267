#!/usr/bin/env python3
"""Issue 18's measure across libraries: for each (n, bytes, collective, variant) of the
in-process benches of an Open MPI job and an MPICH job, herald's slower median of the two
jobs against the faster library's median. Usage: across.py OPENMPI_DIR MPICH_DIR."""
import json, sys, os, glob

def rows(d, lib):
    out = {}
    for f in sorted(glob.glob(os.path.join(d, f"inproc-{lib}-*.json"))):
        for r in json.load(open(f))["rows"]:
            out[(r["n"], r["bytes"], r["collective"], r["variant"])] = r
    return out

o, m = rows(sys.argv[1], "openmpi"), rows(sys.argv[2], "mpich")
won, total, losses = {}, {}, []
for k in sorted(set(o) & set(m)):
    h = max(o[k]["herald_us"]["median"], m[k]["herald_us"]["median"])
    lib = min(o[k]["mpi_us"]["median"], m[k]["mpi_us"]["median"])
    n = k[0]
    total[n] = total.get(n, 0) + 1
    if h <= lib:
        won[n] = won.get(n, 0) + 1
    else:
        losses.append((k, h, lib, o[k]["herald_us"]["median"], m[k]["herald_us"]["median"],
                       o[k]["mpi_us"]["median"], m[k]["mpi_us"]["median"]))
for n in sorted(total):
    print(f"{n} ranks: {won.get(n, 0)} of {total[n]} rows at least as fast as the faster library")
for k, h, lib, ho, hm, lo, lm in losses:
    print(f"  lost: n={k[0]} {k[1]} B {k[2]} {k[3]}: herald {h:.3f} µs (openmpi job {ho:.3f}, "
          f"mpich job {hm:.3f}) vs {lib:.3f} (openmpi {lo:.3f}, mpich {lm:.3f}) = {h/lib:.2f}")
