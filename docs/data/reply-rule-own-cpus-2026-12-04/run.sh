#!/bin/bash
# usage: run.sh ROUNDS SLICES LEN OUT
vs="${VS:-a45fcea 15cc4c0 cc889b3 5db8b4f 35f9604}"
for i in $(seq 1 $1); do
  for r in $(echo $vs | tr ' ' '\n' | shuf); do
    echo "$i $r $(./t-$r/release/ab $2 $3 $i)"
  done
done > $4
