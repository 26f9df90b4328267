#!/bin/sh
# The model alone: each of three profiles (old method) with the read share (share) and without
# it (halves), alternating, 8 and 16 ranks, posted sizes.
for r in 4 5 6; do
  for v in share halves; do
    p=K-oldm-$r.json; [ $v = halves ] && p=K-oldm-$r-halves.json
    for n in 16 8; do
      ./herald-oldm fidelity --profile $p --ranks $n --sizes 512,4096,16384,32768,65536 --slices 60 --top 3 --json > model/$v-n$n-$r.json 2> model/$v-n$n-$r.err
    done
  done
done
date -u +%H:%M:%S > model/done
