#!/usr/bin/env bash
# herald's test suite: formatting, lints, unit/integration/doc tests, the loom model checks, Miri
# where it is installed, a compile check of the benches, and herald-mpi against Open MPI and MPICH.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's start, with the seconds since this script began (a fresh-clone run took 28 to 40
# minutes on the development VM; these lines tell where the time goes).
stage() { echo "scripts/test.sh: [$(date -u +%H:%M:%S), +${SECONDS} s] $*"; }
stage "set-up"
bash scripts/setup.sh
# Every build below starts from nothing, so incremental compilation's bookkeeping (on by default
# in the dev and test profiles, for herald's own crates) only costs: `cargo test --workspace
# --no-run` after cleaning herald's four crates took 4 min 58 s without it against 5 min 51 s
# with it (seventy-sixth session; user time 9 min 7 s against 10 min 20 s).
export CARGO_INCREMENTAL=0
# herald-mpi (a workspace member, outside the default members) builds against Open MPI here; its
# tests start ranks with mpirun.openmpi (-np 2, and -np 4 on more ranks than CPUs).
export MPICC="${MPICC:-mpicc.openmpi}"
stage "fmt"
cargo fmt --all -- --check
stage "clippy"
cargo clippy --workspace --all-targets -- -D warnings
# The API docs build without a warning (broken, private or ambiguous intra-doc links).
stage "doc"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
stage "cargo test --workspace"
cargo test --workspace
# Without the default `hwloc` feature: the sysfs and XML readers are the only topology sources.
# Everything compiles and passes clippy; the tests that differ by feature (the library's unit
# tests, the topology tests) run again.
stage "without the hwloc feature"
cargo clippy -p herald --no-default-features --all-targets -- -D warnings
cargo test -p herald --no-default-features --lib --test topology
# loom: the channel (tests/loom_channel.rs), the executor's wake protocol, the single-copy
# handshake, the posted broadcasts and small allreduces, and the run-time choice's boards (the
# `loom_` unit tests in src/runtime), and herald-mpi's posted broadcasts and allreduces in a
# shared window (the protocol, on loom's atomics). Both commands name both packages, so cargo
# resolves the dependencies' features once and builds herald once: with herald-mpi alone in a
# third command, its features (bytemuck's `min_const_generics`, syn's `full`) rebuilt herald and
# the dependencies it shares (serde, rayon, hwlocality, loom). Three commands took 139 + 155 +
# 121 s from nothing, these two 127 + 209 s (seventy-sixth session).
stage "loom: tests/loom_channel.rs"
RUSTFLAGS="--cfg herald_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom \
  cargo test --release -p herald -p herald-mpi --test loom_channel
stage "loom: the loom_ models of the herald and herald-mpi libraries"
RUSTFLAGS="--cfg herald_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom \
  cargo test --release -p herald -p herald-mpi --lib loom_
# Miri on the channel and the runtime's failure paths, where a nightly toolchain with Miri is
# installed (`rustup component add --toolchain nightly miri`).
stage "Miri"
if [ -n "${HERALD_SKIP_MIRI:-}" ]; then
  echo "scripts/test.sh: Miri skipped: HERALD_SKIP_MIRI is set (for development runs; .ci/run never sets it)"
elif cargo +nightly miri --version >/dev/null 2>&1; then
  # Miri interprets one thread at a time, so the tests run as two shards side by side, one per
  # CPU. Shard 1 takes the channel's and the baton's tests and the named failure-path tests;
  # shard 2 every other failure-path test (a new test lands there by itself) and the posted
  # broadcast's. Each test run alone under Miri on the development VM (seventy-sixth session):
  # channel 85 s, baton 23, the named five 66 + 129 + 69 + 23 + 24; shard 2's failure-path
  # tests 85 + 28 + 4 + 70 + 18 + 25 + 73 and posted_broadcast's few_calls 112. So about 419 s
  # against 415 (with three named tests it was 372 against 462).
  miri=(cargo +nightly miri test -p herald --no-default-features)
  slow=(lender_panic_waits_for_its_readers no_false_mismatch_however_far_the_root_runs_ahead
    network_iterate_survives_panicking_closures abort_poisons_until_rebuilt
    allreduce_slice_panics_never_expose_a_freed_buffer)
  "${miri[@]}" --test channel --test baton --test failure_paths --test posted_broadcast --no-run
  shard1=target/miri-shard1.log
  (
    "${miri[@]}" --test channel --test baton &&
      "${miri[@]}" --test failure_paths -- --exact "${slow[@]}"
  ) >"$shard1" 2>&1 &
  shard1_pid=$!
  skips=()
  for t in "${slow[@]}"; do skips+=(--skip "$t"); done
  shard2=0
  "${miri[@]}" --test failure_paths -- --exact "${skips[@]}" || shard2=$?
  if [ "$shard2" = 0 ]; then
    "${miri[@]}" --test posted_broadcast few_calls || shard2=$?
  fi
  shard1_rc=0
  wait "$shard1_pid" || shard1_rc=$?
  echo "scripts/test.sh: Miri shard 1 (channel, baton; ${slow[*]}):"
  cat "$shard1"
  if [ "$shard1_rc" != 0 ] || [ "$shard2" != 0 ]; then
    echo "scripts/test.sh: Miri failed (shard 1 exit $shard1_rc, shard 2 exit $shard2)"
    exit 1
  fi
else
  echo "scripts/test.sh: Miri skipped: no nightly toolchain with Miri here (cargo +nightly miri --version fails)"
fi
# The benches compile and link (in the test profile, whose dependencies the tests above built:
# the bench profile's LTO build took 3 min 40 s from scratch, this about 30 s).
stage "benches compile"
cargo test --workspace --benches --no-run
# herald-mpi against MPICH: the multi-rank self-test on 2 and 4 ranks, with MPICH's launcher.
# HERALD_MPI_MPICH=0 skips. mpi-sys does not rebuild when MPICC changes, so MPICH needs a build of
# its own: here mpi-sys alone is cleaned and the workspace's test build (the same packages, so the
# same features) relinks it, rsmpi and herald-mpi against MPICH, reusing every other crate the
# cargo test stage built; mpi-sys is cleaned again on the way out (trap), so the next build links
# Open MPI again. A target directory of its own (as README.md shows for users) built everything
# again at opt-level 0: 83 s, and the self-tests of that build took 23 and 82 s, against 7 and 46 s
# for a test-profile build at opt-level 2; this stage took 107 s in all against 188 (seventy-seventh
# session, before the test profile went to opt-level 1).
stage "herald-mpi against MPICH"
if [ "${HERALD_MPI_MPICH:-1}" != 0 ]; then
  trap 'cargo clean -q -p mpi-sys' EXIT
  cargo clean -q -p mpi-sys
  MPICC=mpicc.mpich cargo test -q --workspace --no-run
  mpich_bin=target/debug/herald-mpi
  if ! "$mpich_bin" library | grep -q MPICH; then
    echo "scripts/test.sh: $mpich_bin is not linked to MPICH: $("$mpich_bin" library)"
    exit 1
  fi
  for np in 2 4; do
    timeout 600 mpirun.mpich -np "$np" "$mpich_bin" selftest
  done
fi
stage "done"
