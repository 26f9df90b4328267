i=0
for v in new old old new new old old new; do
  i=$((i+1))
  /tmp/s/herald-$v calibrate --out P-$v-$i.json > cal-$v-$i.txt 2>&1
  /tmp/s/herald-$v fidelity --profile P-$v-$i.json --ranks 2 --slices 100 --top 3 --json > f-$v-$i.json 2>f-$v-$i.err
  /tmp/s/herald-$v fidelity --profile P-$v-$i.json --ranks 2 --sizes 48,112,176,240,304,368,432,496,512,560,624,688,752,816,880,944,1008,1072 --top 1 --slices 30 --json > c-$v-$i.json 2>c-$v-$i.err
  echo "$v $i $(date +%T)" >> progress
done
echo done >> progress
