#!/usr/bin/env bash
# herald's main job: measure this machine, model it, let the planner choose, and run the choice
# for real, predicted against measured.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release -q -p herald-cli
h="${CARGO_TARGET_DIR:-target}/release/herald"
# The profile goes where `Planned::load` looks for it (HERALD_PROFILE overrides).
profile="${HERALD_PROFILE:-${XDG_CACHE_HOME:-$HOME/.cache}/herald/profile.json}"

echo "== 1. This machine (hwloc)"
$h topo | sed -n '1,12p'

echo
echo "== 2. Calibration (30-90 s): L, o_s, o_r, g, G and λ per level, with spreads and modes"
# Not --quick: every planned communicator reads this profile, and a few seconds' calibration
# can fall wholly in one of the host's latency modes (docs/mpi.md, "Sixty-second session").
$h calibrate --out "$profile"

echo
echo "== 3. The planner's choice for this machine: 2 ranks, 64 B and 1 MiB"
$h plan --profile "$profile" -n 2 --bytes 64 --top 3 | grep -v '^#   .* no rank pair meets here'
$h plan --profile "$profile" -n 2 --bytes 1048576 --top 3 | grep -v '^#'

echo
echo "== 4. What if: two sockets of 8 cores, this machine's measured costs inside a socket,"
echo "==    an assumed 2x for the levels this machine cannot measure (docs/hierarchy.md)"
$h plan --profile "$profile" --synthetic "pack:2 l3:1 core:8 pu:1" -n 16 --bytes 4096 --top 4 \
  | grep -v 'no rank pair meets here'

echo
echo "== 5. The chosen schedule for real: 2 pinned ranks, 4 KiB, every byte of every run verified"
$h run --profile "$profile" -n 2 --bytes 4096 --iters 5000 --verify

echo
echo "Next: 'herald bench hop|stream|bcast' compares herald with raw cache-line ping-pong, rtrb,"
echo "crossbeam, rayon and bus; 'herald fidelity --profile $profile' tabulates predicted against"
echo "measured times per latency mode; 'herald calibrate --quick' measures for a few seconds."
echo "Programs plan with this profile through Planned::load() (docs/runtime.md, docs/calibration.md)."
