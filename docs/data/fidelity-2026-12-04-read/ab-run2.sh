#!/bin/sh
# Rounds 4-6: 4 and 16 ranks only, the variants alternating, each calibrating afresh.
for r in 4 5 6; do
  for v in newm oldm; do
    date -u +%H:%M:%S > $v-$r.start
    ./herald-$v calibrate --out K-$v-$r.json > K-$v-$r.txt 2>&1
    for n in 4 16; do
      ./herald-$v fidelity --profile K-$v-$r.json --ranks $n --slices 60 --top 3 --json > $v-n$n-$r.json 2> $v-n$n-$r.err
    done
  done
done
date -u +%H:%M:%S > done2
