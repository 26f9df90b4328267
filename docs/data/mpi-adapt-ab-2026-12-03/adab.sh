#!/usr/bin/env bash
# A/B: per job, a fresh quick 2-rank calibration, then bench --post auto and --post adapt on it
# (order alternating per job).
set -u
cd /work/main
out=$1; jobs=${JOBS:-8}; n=${N:-2}
mkdir -p $out
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bin=target/release/herald-mpi
run=(mpirun.openmpi --oversubscribe -np $n)
for j in $(seq 1 $jobs); do
  "${run[@]}" $bin calibrate --quick --out $out/p$j.json > $out/cal$j.txt 2>&1
  if [ $((j % 2)) = 1 ]; then order="auto adapt"; else order="adapt auto"; fi
  for m in $order; do
    "${run[@]}" $bin bench --profile $out/p$j.json --post $m --rounds 7 --target-ms 2 --json \
      --sizes 8,64,512,4K,32K,256K,1M,4M > $out/b$j-$m.json 2> $out/b$j-$m.err
  done
  echo "job $j done $(date +%T)"
done
