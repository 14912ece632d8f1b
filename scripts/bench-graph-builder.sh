#!/usr/bin/env bash
# The graph-builder scrape benchmark (see README, "Benchmarks"): builds the
# release binaries, then pushes a present-day-sized release set to a local
# docker-registry and measures the graph-builder scraping it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-test-deps.sh
cargo build --release -p graph-builder -p benchmarks
target/release/bench-graph-builder --graph-builder target/release/graph-builder "$@"
