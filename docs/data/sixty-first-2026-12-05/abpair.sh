#!/bin/bash
# Alternates `herald bench bcast` of two builds (binaries /tmp/s/herald_<name>), ROUNDS rounds each,
# and prints one JSON line per run: build, round, and the 48 B, 64 B and 4 KiB rows.
# Usage: BUILDS="old new" ROUNDS=20 SLICES=10 bash abpair.sh > out.txt
BUILDS=${BUILDS:-"old new"}
ROUNDS=${ROUNDS:-20}
SLICES=${SLICES:-10}
for r in $(seq "$ROUNDS"); do
  for b in $BUILDS; do
    out=$(/tmp/s/herald_"$b" bench bcast --slices "$SLICES" --json 2>/dev/null)
    python3 -c '
import json,sys
d=json.loads(sys.argv[3])
row={"build":sys.argv[1],"round":int(sys.argv[2])}
for size in ("48B","64B","4KiB"):
    x=d[size]
    row[size]={k:x[k] for k in ("raw_ns","herald_ns","flag_ns","xcopy_ns","herald_over_flag","herald_over_xcopy")}
print(json.dumps(row))' "$b" "$r" "$out"
  done
done
