# BUILDS="old new" bash ab5.sh SECONDS: like ab.sh, with the raw hop (hoptest, one line per
# direction) read before and after each run; one line per run: build, hop before, hop after,
# then the slice API's medians at 8 B, 4 KiB, 32 KiB, 256 KiB, 1 MiB, 4 MiB.
end=$(( $(date +%s) + $1 ))
while [ "$(date +%s)" -lt "$end" ]; do
  for b in $BUILDS; do
    h1=$(/tmp/s/hoptest/target/release/hoptest 1 | awk '{print $2}')
    r=$(/tmp/s/art_$b 2 5 | awk -F'|' 'NR==4||NR==8||NR==11||NR==13||NR==14||NR==15{printf "%s ", $5}')
    h2=$(/tmp/s/hoptest/target/release/hoptest 1 | awk '{print $2}')
    echo "$b $h1 $h2 $r"
  done
done
