#!/bin/bash
# usage: batch.sh DIR PAIRS SIZES RANKS [PROFILE] [BINARY]
# Alternates `herald fidelity --timed auto` and `--timed never`, PAIRS times.
D=$1; N=$2; SZ=$3; RK=$4
P=${5:-/work/main/docs/data/sixty-third-2026-12-06/two-ranks-fresh/profile-0251.json}
B=${6:-/work/main/target/release/herald}
mkdir -p $D
for i in $(seq 1 $N); do
  for v in auto never; do
    HERALD_CHOICE_TRACE=1 timeout 600 $B fidelity --profile $P --force --ranks $RK --sizes $SZ --slices 20 --top 3 --timed $v --json > $D/$v-$i.json 2> $D/$v-$i.err
  done
done
echo done > $D/DONE
