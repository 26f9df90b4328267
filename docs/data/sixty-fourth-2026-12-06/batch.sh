#!/bin/bash
# usage: batch.sh DIR PAIRS SIZES RANKS
D=$1; N=$2; SZ=$3; RK=$4
P=/work/main/docs/data/sixty-third-2026-12-06/two-ranks-fresh/profile-0251.json
cd /work/main
for i in $(seq 1 $N); do
  for v in auto never; do
    HERALD_CHOICE_TRACE=1 timeout 600 target/release/herald fidelity --profile $P --force --ranks $RK --sizes $SZ --slices 20 --top 3 --timed $v --json > $D/$v-$i.json 2> $D/$v-$i.err
  done
done
echo done > $D/DONE
