#!/bin/bash
# usage: ab.sh OUT N bin1 bin2 ...
out=$1; n=$2; shift 2
: > $out
for i in $(seq $n); do
  for b in "$@"; do
    $b 3 | sed "s|^|$(basename $b) |" >> $out
  done
done
