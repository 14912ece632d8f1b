#!/usr/bin/env bash
# The freshness benchmark (see docs/benchmarks-freshness.md): builds the
# release binaries, then measures time to block and time to offer through a
# graph-builder -> engine -> engine chain on a local docker-registry, and
# what the chain costs while nothing changes. Extra arguments go to the
# benchmark (--changes N, --idle-secs S, --upstream-settings).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-test-deps.sh
target_dir="${CARGO_TARGET_DIR:-target}"
cargo build --release -p graph-builder -p policy-engine -p benchmarks
"$target_dir/release/bench-freshness" \
    --graph-builder "$target_dir/release/graph-builder" \
    --policy-engine "$target_dir/release/policy-engine" "$@"
