#!/bin/sh
# The root's further lines written by one copy (new) against word by word (base), alternating.
for r in 1 2 3 4; do
  for v in base new; do
    REPS=100 /tmp/ps-$v/target/release/ps 10 > h-$v-$r.txt 2>&1
  done
done
for r in $(seq 1 15); do
  if [ $((r % 2)) = 0 ]; then o="base wnew"; else o="wnew base"; fi
  for v in $o; do
    /tmp/ps/herald-$v bench bcast --slices 6 --json > b-$v-$r.json 2> b-$v-$r.err
  done
done
date -u +%H:%M:%S > done
