#!/usr/bin/env bash
# The figures of docs/mpi.md: for Open MPI and MPICH at 2, 4 and 8 ranks, an MPI calibration,
# herald over MPI against MPI_Bcast/MPI_Allreduce, and herald in process against them; JSON and
# Markdown tables in OUT (default target/mpi-figures).
#
# Knobs (environment): LIBS (default "openmpi mpich"), NS ("2 4 8"), INPROC_NS (the rank
# counts of the in-process bench, " " for none; default NS: MPICH's 8-rank in-process bench takes over 20
# minutes, its collectives taking milliseconds with 8 processes on 2 CPUs), SIZES (default
# 8,64,512,4K,32K,256K,1M,4M — 8 B … 4 MiB by factors of 8; empty: every power of two),
# ROUNDS (7), TARGET_MS (2), CALIBRATE (--quick; empty for the full 30 to 90 s calibration).
# With the defaults a (library, N) takes about a minute on a quiet 2-core machine; MPICH's
# 8-rank bench over MPI took 18 minutes in the sixty-seventh session.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-target/mpi-figures}"
mkdir -p "$out"
tgt="${CARGO_TARGET_DIR:-target}"
libs="${LIBS:-openmpi mpich}"
ns="${NS:-2 4 8}"
inproc_ns="${INPROC_NS:-$ns}"
sizes="${SIZES-8,64,512,4K,32K,256K,1M,4M}"
rounds="${ROUNDS:-7}"
target_ms="${TARGET_MS:-2}"
calibrate="${CALIBRATE---quick}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bench=(--rounds "$rounds" --target-ms "$target_ms" --json)
if [ -n "$sizes" ]; then bench+=(--sizes "$sizes"); fi
for lib in $libs; do
  if [ "$lib" = openmpi ]; then
    MPICC=mpicc.openmpi cargo build --release -q -p herald-mpi
    bin="$tgt/release/herald-mpi"; run=(mpirun.openmpi --oversubscribe)
  else
    MPICC=mpicc.mpich CARGO_TARGET_DIR="$tgt/mpich" cargo build --release -q -p herald-mpi
    bin="$tgt/mpich/release/herald-mpi"; run=(mpirun.mpich)
  fi
  for n in $ns; do
    # shellcheck disable=SC2086 # $calibrate is a list of flags
    "${run[@]}" -np "$n" "$bin" calibrate $calibrate --out "$out/mpi-$lib-$n.json" \
      > "$out/calibrate-$lib-$n.txt"
    "${run[@]}" -np "$n" "$bin" bench --profile "$out/mpi-$lib-$n.json" "${bench[@]}" \
      > "$out/bench-$lib-$n.json"
  done
  for n in $inproc_ns; do
    "${run[@]}" -np "$n" "$bin" bench --herald inproc "${bench[@]}" > "$out/inproc-$lib-$n.json"
  done
done
# the tables of the files this run and earlier ones left (none in process where INPROC_NS is " ")
shopt -s nullglob
"$tgt/release/herald-mpi" table "$out"/bench-*.json "$out"/inproc-*.json | tee "$out/tables.md"
