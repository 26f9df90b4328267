#!/usr/bin/env bash
# In-process herald at NP ranks (Open MPI launcher), one binary, two profiles alternating
# (HERALD_PROFILE): PROFILES="a=/path/a.json b=/path/b.json" ROUNDS=10 bash abprof.sh OUTDIR.
set -u
out="$1"; mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for i in $(seq 1 "${ROUNDS:-10}"); do
  for pp in $PROFILES; do
    name="${pp%%=*}"; path="${pp#*=}"
    HERALD_PROFILE="$path" timeout 300 mpirun.openmpi --oversubscribe -np "${NP:-4}" \
      "${BIN:-target/release/herald-mpi}" bench --herald inproc --rounds 7 --target-ms 2 \
      --sizes "${SIZES:-4K}" --json > "$out/$name-$i.json" 2>/dev/null
  done
done
