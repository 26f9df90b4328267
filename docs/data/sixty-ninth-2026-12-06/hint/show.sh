#!/bin/bash
# herald_ns and herald_over_xcopy of `herald bench bcast` files, per size: hintshow.sh FILES...
for f in "$@"; do
  echo "$f $(awk '/^[0-9]+[KMB]/{s=$1} /^  (herald_ns|herald_over_xcopy)/{printf "%s%s %s  ", s, $1, $2}' "$f")"
done
