#!/bin/sh
# A/B of the measurement method (both builds carry the new model): oldm = the root writes the
# next payload right after its call returns; newm = after a barrier every rank reaches once
# its call returned. Each variant calibrates with its own build, then measures the grid.
for r in 1 2 3; do
  for v in oldm newm; do
    date -u +%H:%M:%S > $v-$r.start
    ./herald-$v calibrate --out K-$v-$r.json > K-$v-$r.txt 2>&1
    ./herald-$v fidelity --profile K-$v-$r.json --ranks 2 --slices 100 --top 3 --json > $v-n2-$r.json 2> $v-n2-$r.err
    for n in 4 5 8 16; do
      ./herald-$v fidelity --profile K-$v-$r.json --ranks $n --slices 60 --top 3 --json > $v-n$n-$r.json 2> $v-n$n-$r.err
    done
  done
done
date -u +%H:%M:%S > done
