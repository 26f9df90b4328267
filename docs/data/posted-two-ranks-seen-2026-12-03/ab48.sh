#!/usr/bin/env bash
# Alternating pairs of `herald bench bcast --slices ${SLICES:-6} --json`, old and new binaries.
out=$1; pairs=${PAIRS:-10}; mkdir -p $out
for i in $(seq 1 $pairs); do
  if [ $((i % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for v in $order; do
    /tmp/s/bin48/herald-$v bench bcast --slices ${SLICES:-6} --json > $out/$v-$i.json 2>/dev/null
  done
done
