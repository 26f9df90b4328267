# BUILDS="old new" bash ab.sh SECONDS: runs /tmp/s/art_$b 2 5 (copies of allreduce_timing built from each version) in turn; one line per run: build, 8B, 4K, 32K, 256K, 1M, 4M (slice API medians)
end=$(( $(date +%s) + $1 ))
while [ $(date +%s) -lt $end ]; do
  for b in $BUILDS; do
    echo "$b $(/tmp/s/art_$b 2 5 | awk -F'|' 'NR==4||NR==8||NR==11||NR==13||NR==14||NR==15{printf "%s ", $5}')"
  done
done
