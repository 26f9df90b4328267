#!/bin/bash
# The final code: one calibration (K3), then three rounds of the full fidelity grid.
cd /tmp/s/e48/final
date -u +%FT%TZ > times.txt
./herald calibrate --out K3.json > K3.txt 2>&1
for r in 1 2 3; do
  for n in 2 4 8 16; do
    s=60; [ $n = 2 ] && s=100
    ./herald fidelity --profile K3.json --ranks $n --slices $s --top 3 --json > shuf-n$n-$r.json 2> shuf-n$n-$r.err
  done
  date -u +%FT%TZ >> times.txt
done
echo done >> times.txt
