#!/usr/bin/env bash
# Issue 18's MPI row at 4 and 8 ranks: in-process herald against Open MPI and MPICH, jobs of the
# two libraries alternating, each job's rows carrying the raw hop (its latency mode).
# Usage: PAIRS=1 NS="4 8" bash inproc48.sh OUTDIR   (from the repository's root; builds first:
# MPICC=mpicc.openmpi cargo build --release -p herald-mpi and the MPICH build in target/mpich)
set -u
out="$1"; pairs="${PAIRS:-1}"; ns="${NS:-4 8}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
b=(bench --herald inproc --rounds 7 --target-ms 2 --sizes 8,64,512,4K,32K,256K,1M,4M --json)
for n in $ns; do
  for p in $(seq 1 "$pairs"); do
    d="$out/$n-$p"; mkdir -p "$d"
    for lib in openmpi mpich; do
      if [ "$lib" = openmpi ]; then run=(mpirun.openmpi --oversubscribe); bin=target/release/herald-mpi
      else run=(mpirun.mpich); bin=target/mpich/release/herald-mpi; fi
      s=$(date +%s)
      timeout "${LIMIT:-1500}" "${run[@]}" -np "$n" "$bin" "${b[@]}" > "$d/inproc-$lib-$n.json" 2> "$d/inproc-$lib-$n.err"
      echo "$n ranks pair $p $lib rc=$? $(( $(date +%s) - s )) s $(date -u +%H:%M:%S)"
    done
  done
done
