#!/usr/bin/env bash
# herald's test suite: formatting, lints, unit/integration/doc tests, the loom model check of the
# channel, and a compile check of the benches.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
if [ -f tests/loom_channel.rs ]; then
  RUSTFLAGS="--cfg herald_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom \
    cargo test --release --test loom_channel
fi
cargo bench --workspace --no-run
