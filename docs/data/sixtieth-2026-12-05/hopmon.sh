# The monitor behind hopmon.txt (sixtieth session): the scratch hop test of the fifty-ninth
# session (docs/data/fifty-ninth-2026-12-05/hoptest.rs.txt, built as /tmp/s/hoptest) around
# one run of `allreduce_timing 2 3` (copied to /tmp/s/art_new), for 150 s.
end=$(( $(date +%s) + 150 ))
while [ "$(date +%s)" -lt "$end" ]; do
  h=$(/tmp/s/hoptest/target/release/hoptest 1 | awk '{print $2, $4}')
  a=$(/tmp/s/art_new 2 3 | awk -F'|' 'NR==4||NR==8||NR==14{printf "%s ", $5}')
  h2=$(/tmp/s/hoptest/target/release/hoptest 1 | awk '{print $2, $4}')
  echo "$(date +%T) hop(crossed shared1) $h | allreduce 8B 4K 1M $a | hop $h2"
done
