#!/usr/bin/env bash
# In-process herald at 4 ranks (Open MPI launcher), two builds alternating:
# BUILDS="old new" ROUNDS=10 bash ab4.sh OUTDIR; binaries /tmp/s/hm_<name>.
set -u
out="$1"; mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for i in $(seq 1 "${ROUNDS:-10}"); do
  for b in ${BUILDS:-old new}; do
    timeout 300 mpirun.openmpi --oversubscribe -np "${NP:-4}" "/tmp/s/hm_$b" bench --herald inproc \
      --rounds 7 --target-ms 2 --sizes "${SIZES:-512,4K}" --json > "$out/$b-$i.json" 2>/dev/null
  done
done
