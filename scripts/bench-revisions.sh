#!/usr/bin/env bash
# The revision benchmark (see docs/benchmarks-revisions.md): builds the
# release binaries, then, at 1, 3 and 10 times today's graph-data, measures
# a graph-builder and an engine starting, serving every answer, and taking
# revisions of one blocked edge each. Extra arguments go to the benchmark
# (--scales 1,3,10, --revisions N, --settle-secs S, --perf DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ " $* " == *" --perf "* ]] && ! command -v perf >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends linux-perf >/dev/null
fi
target_dir="${CARGO_TARGET_DIR:-target}"
cargo build --release -p graph-builder -p policy-engine -p benchmarks
"$target_dir/release/bench-revisions" \
    --graph-builder "$target_dir/release/graph-builder" \
    --policy-engine "$target_dir/release/policy-engine" "$@"
