#!/usr/bin/env bash
# herald's main job: the postal paper's example and a check of two million-processor broadcasts.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release -q -p herald-cli
h="${CARGO_TARGET_DIR:-target}/release/herald"
echo "== Bar-Noy & Kipnis, Fig. 1: BCAST on 14 processors, λ = 5/2"
$h schedule --model postal --lambda 5/2 -n 14
echo
echo "== BCAST on 2^20 processors, λ = 5/2 (generated and checked)"
time $h sim --model postal --lambda 5/2 -n 1048576
echo
echo "== LogP B(P) on 2^20 processors, L = 10, o = 1, g = 1"
time $h sim --model logp --L 10 --o 1 --g 1 -n 1048576
