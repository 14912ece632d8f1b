#!/usr/bin/env bash
# Times every `cincinnati` command on the demo graph (5,743 releases, 63,257
# updates, the 2026 graph-data) from start to exit: reading and parsing the
# saved full graph, answering, printing. The target is under 100 ms each.
# Prints wall time (min and mean) and CPU time (user + system, mean): on a
# busy machine the CPU time is the fairer figure of a command's own work.
# Extra arguments go to hyperfine (e.g. --runs 50). Needs Debian's hyperfine
# and jq (and python3 for the URL phase).
#
# Then the commands that ask a service, against a URL (issue 39): the same
# demo graph served over http:// by python3's static file server, so the
# figures are the command's own (asking, reading 6.3 MB, answering), not a
# service's. With BEFORE=path/to/an/older/cincinnati, each command is timed
# with both binaries side by side.
#
#   scripts/bench-cli.sh
#   BEFORE=/tmp/cli-before/cincinnati scripts/bench-cli.sh --runs 20
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in hyperfine jq; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "bench-cli: needs $tool (apt-get install $tool)" >&2
        exit 1
    fi
done
cargo build --release -p cincinnati-cli -p release-set-generator
bin=target/release
work=$(mktemp -d)
server=
trap 'if [ -n "$server" ]; then kill "$server"; fi; rm -rf "$work"' EXIT

# The graph the demo graph-builder serves, and the same with a graph-data
# change: a new risk on updates into 4.18.30.
"$bin/release-set-generator" --apply-graph-data -o "$work/demo-graph.json" 2>/dev/null
cp -r testdata/graph-data "$work/graph-data"
cat > "$work/graph-data/blocked-edges/4.18.30-BenchRisk.yaml" <<'YAML'
to: 4.18.30
from: 4[.]18[.]2[0-7][+]
url: https://issues.example.com/BENCH-1
name: BenchRisk
message: A risk the benchmark adds.
matchingRules:
- type: Always
YAML
"$bin/release-set-generator" --graph-data "$work/graph-data" --apply-graph-data -o "$work/changed-graph.json" 2>/dev/null

c="$bin/cincinnati --graph $work/demo-graph.json -o json"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine --warmup 3 --shell=none --ignore-failure \
    --export-json "$work/results.json" "$@" \
    -n "updates" "$c updates --channel stable-4.18 --version 4.18.20 --include-not-recommended" \
    -n "path" "$c path --from 4.16.40 --to 4.18.40 --tier fast --all" \
    -n "path, none: where it breaks, plan with risks" "$c path --from 4.14.60 --to 4.16.50 --tier eus" \
    -n "explain" "$c explain --channel stable-4.16 --from 4.16.30 --to 4.16.32" \
    -n "explain --graph-data DIR" "$c explain --channel stable-4.16 --from 4.16.30 --to 4.16.32 --graph-data testdata/graph-data" \
    -n "channels" "$c channels" \
    -n "render (stable-4.18, DOT)" "$bin/cincinnati --graph $work/demo-graph.json render --channel stable-4.18" \
    -n "diff" "$c diff $work/demo-graph.json $work/changed-graph.json" \
    -n "graph-data check" "$bin/cincinnati -o json graph-data check testdata/graph-data" \
    -n "graph-data preview" "$c graph-data preview $work/graph-data --releases testdata/demo/releases.json.gz"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| command | wall min | wall mean | CPU mean (user + system) |"
echo "|---|---:|---:|---:|"
jq -r '.results[] | "| \(.command) | \(.min * 1000 | round) ms | \(.mean * 1000 | round) ms | \((.user + .system) * 1000 | round) ms |"' \
    "$work/results.json"

# Against a URL: python3 answers every /graph?… with the saved demo graph.
mkdir "$work/served"
cp "$work/demo-graph.json" "$work/served/graph"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/served" >/dev/null 2>&1 &
server=$!
until curl -sf -o /dev/null "http://127.0.0.1:$port/graph"; do sleep 0.1; done
url_commands=(
    "updates" "--url http://127.0.0.1:$port/graph -o json updates --channel stable-4.18 --version 4.18.20 --include-not-recommended"
    "path" "--url http://127.0.0.1:$port/graph -o json path --from 4.16.40 --to 4.18.40 --tier fast --all"
    "channels" "--url http://127.0.0.1:$port/graph -o json channels"
)
runs=()
for ((i = 0; i < ${#url_commands[@]}; i += 2)); do
    name=${url_commands[i]} arguments=${url_commands[i + 1]}
    if [ -n "${BEFORE:-}" ]; then
        runs+=(-n "before: $name (URL)" "$BEFORE $arguments")
    fi
    runs+=(-n "$name (URL)" "$bin/cincinnati $arguments")
done
echo
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine --warmup 3 --shell=none --export-json "$work/url.json" "$@" "${runs[@]}"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| command, against http:// | wall min | wall mean | CPU mean (user + system) |"
echo "|---|---:|---:|---:|"
jq -r '.results[] | "| \(.command) | \(.min * 1000 | round) ms | \(.mean * 1000 | round) ms | \((.user + .system) * 1000 | round) ms |"' \
    "$work/url.json"
