#!/usr/bin/env bash
# The figures of docs/mpi.md: for Open MPI and MPICH at 2, 4 and 8 ranks, an MPI calibration,
# herald over MPI against MPI_Bcast/MPI_Allreduce, and herald in process against them; JSON and
# Markdown tables in OUT (default target/mpi-figures). Run on a quiet machine: about 10 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-target/mpi-figures}"
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPICC=mpicc.openmpi cargo build --release -q -p herald-mpi
MPICC=mpicc.mpich CARGO_TARGET_DIR=target/mpich cargo build --release -q -p herald-mpi
for lib in openmpi mpich; do
  if [ "$lib" = openmpi ]; then
    bin=target/release/herald-mpi; run=(mpirun.openmpi --oversubscribe)
  else
    bin=target/mpich/release/herald-mpi; run=(mpirun.mpich)
  fi
  for n in 2 4 8; do
    "${run[@]}" -np "$n" "$bin" calibrate --out "$out/mpi-$lib-$n.json" > "$out/calibrate-$lib-$n.txt"
    "${run[@]}" -np "$n" "$bin" bench --profile "$out/mpi-$lib-$n.json" --json > "$out/bench-$lib-$n.json"
    "${run[@]}" -np "$n" "$bin" bench --herald inproc --json > "$out/inproc-$lib-$n.json"
  done
done
target/release/herald-mpi table "$out"/bench-*.json "$out"/inproc-*.json | tee "$out/tables.md"
