#!/bin/bash
# Calibration K2, then three rounds of the full fidelity grid, shuffled order and rotating order alternating.
cd /tmp/s/e48/grid
date -u +%FT%TZ > started.txt
../herald-shuf calibrate --out K2.json > K2.txt 2>&1
for r in 1 2 3; do
  for v in shuf rot; do
    for n in 2 4 8 16; do
      s=60; [ $n = 2 ] && s=100
      ../herald-$v fidelity --profile K2.json --ranks $n --slices $s --top 3 --json > $v-n$n-$r.json 2> $v-n$n-$r.err
    done
    date -u +%FT%TZ >> started.txt
  done
done
echo done >> started.txt
