#!/bin/sh
# herald in process, old (base: the root's further lines word by word) and new (copied whole)
# alternating, two passes, 2 and 4 ranks.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for pass in 1 2; do
  for np in 2 4; do
    for v in base new; do
      mpirun.openmpi --oversubscribe -np $np /tmp/ps/hmpi-$v bench --herald inproc --collectives bcast --sizes 64,512,1024,4096,8192 --rounds 5 --target-ms 2 --json > $v-$np-$pass.json 2> $v-$np-$pass.err
    done
  done
done
date -u +%H:%M:%S > done
