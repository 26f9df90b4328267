for i in 1 2 3 4 5 6; do
  /tmp/s/herald-new3 calibrate --out P-$i.json > cal-$i.txt 2>&1
  /tmp/s/herald-new3 fidelity --profile P-$i.json --ranks 2 --slices 100 --top 3 --json > f-$i.json 2>/dev/null
  echo "$i $(date +%T)" >> progress
done
echo done >> progress
