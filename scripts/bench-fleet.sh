#!/usr/bin/env bash
# The fleet benchmark (issue 29; run by hand, see docs/benchmarks-fleet.md):
# a synthetic fleet of 1,000,000 clusters recorded in the fleet store and
# asked the fleet questions, on a SQLite file and on a throw-away PostgreSQL;
# release policy-engines recording its update checks as the clusters'
# cluster-version operators send them, every 2 to 4 minutes, then at the
# peak every 2 (no store, SQLite, PostgreSQL, two engines on one PostgreSQL,
# side by side); two engines sharing one PostgreSQL count each cluster
# once. About 30 minutes on the 2-core machine with 1,000,000 clusters.
#
#   scripts/bench-fleet.sh                       # everything, 1,000,000 clusters
#   scripts/bench-fleet.sh --clusters 100000     # a quick run (about 5 minutes)
#   scripts/bench-fleet.sh --parts store --explain
#
# Arguments go to the benchmark binary (benchmarks/src/bin/bench-fleet.rs;
# --help lists them: --rate, --seconds, --rounds, --stores, --parts, ...;
# --rate 5556,8333 replaces the cadence's mean and peak with those rates;
# --database-nice 10 runs PostgreSQL below the engines, as if on its own cores).
# Needs Debian's postgresql server (scripts/install-test-deps.sh installs
# it). Builds release binaries in CARGO_TARGET_DIR (default target-bench).
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target-bench}
if ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
    echo "bench-fleet: needs the PostgreSQL server (scripts/install-test-deps.sh)" >&2
    exit 1
fi
cargo build --release -q -p policy-engine -p release-set-generator -p benchmarks \
    --bin policy-engine --bin release-set-generator --bin bench-fleet
bin=$CARGO_TARGET_DIR/release

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The graph the demo graph-builder serves (5,743 releases, the 2026
# graph-data applied): what an engine in front of a graph-builder filters.
"$bin/release-set-generator" --apply-graph-data -o "$work/graph.json" 2>/dev/null

echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); $(uname -r)"
echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- fleet-store policy-engine || echo ' (fleet-store or policy-engine changed)')"
"$bin/bench-fleet" --engine "$bin/policy-engine" --graph "$work/graph.json" "$@"
