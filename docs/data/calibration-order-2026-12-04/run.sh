#!/bin/bash
# Calibrations in the fixed order (fix) and shuffled (shuf) alternating, each followed by a 2-rank fidelity run.
cd /tmp/s/e48/cal
for r in 9 10 11; do
  for v in fix shuf; do
    if [ $v = shuf ]; then export HERALD_CAL_SHUFFLE=1; else unset HERALD_CAL_SHUFFLE; fi
    ../herald-cal calibrate --out K-$v-$r.json > K-$v-$r.txt 2>&1
    unset HERALD_CAL_SHUFFLE
    ../herald-cal fidelity --profile K-$v-$r.json --ranks 2 --slices 100 --top 3 --json > f-$v-$r.json 2> f-$v-$r.err
    date -u +%T >> times.txt
  done
done
echo done >> times.txt
