#!/bin/sh
# Alternating: the new model (K6, with the read share) and the old (K6old, the same profile
# without it), 16 and 8 ranks, three rounds.
for r in 1 2 3; do
  for n in 16 8; do
    for v in new old; do
      p=../data/K6.json; [ $v = old ] && p=../data/K6old.json
      date -u +%H:%M:%S > $v-n$n-$r.start
      ./herald-new fidelity --profile $p --force --ranks $n --slices 60 --top 3 --json > $v-n$n-$r.json 2> $v-n$n-$r.err
    done
  done
done
date -u +%H:%M:%S > done
