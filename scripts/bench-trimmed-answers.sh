#!/usr/bin/env bash
# Trimmed answers against whole channels (issue 39; run by hand, see
# docs/benchmarks-policy-engine.md, "Trimmed answers"):
#
#   scripts/bench-trimmed-answers.sh
#
# nginx serves the demo's full graph (5,743 releases, the 2026 graph-data
# applied) to two release policy-engines side by side: one with the default
# filters (every check downloads its whole channel), one with
# `version-prune` keeping `updates` (a check downloads its own release, its
# updates and their risks). wrk loads both with the same checks, as the
# cluster-version operator sends them (`channel`, `arch`, `version`, gzip),
# the version rotating over every release of CHANNEL. Each engine first
# answers every version once (every trimmed answer prepared); its RSS is
# read then and after the load. Prints requests/s, p99, bytes per check
# (gzip) and server CPU per request of both, with the load average.
#
# Environment: CHANNEL (stable-4.18), DURATION (20s), CONNECTIONS (64),
# THREADS (2), WORKERS (2), ENGINE (a policy-engine binary instead of this
# tree's release build).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh

CHANNEL=${CHANNEL:-stable-4.18}
PREFIX=/api/upgrades_info
UPSTREAM_PORT=18190 WHOLE_PORT=18191 WHOLE_STATUS=19191 TRIMMED_PORT=18192 TRIMMED_STATUS=19192
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target-pe}

bench_needs_wrk_and_nginx
cargo build --release -q -p release-set-generator --bin release-set-generator
[ -n "${ENGINE:-}" ] || cargo build --release -q -p policy-engine --bin policy-engine
ENGINE=${ENGINE:-$CARGO_TARGET_DIR/release/policy-engine}

bench_workdir

mkdir -p "$work/upstream"
"$CARGO_TARGET_DIR/release/release-set-generator" --apply-graph-data -o "$work/upstream/graph" 2>/dev/null
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
daemon off;
events { worker_connections 1024; }
http {
    access_log off;
    types { application/json json; }
    default_type application/json;
    server {
        listen 127.0.0.1:$UPSTREAM_PORT;
        location = /graph { root $work/upstream; try_files /graph =404; }
    }
}
CONF
nginx -c "$work/nginx.conf" &
pids+=($!)

# The trimming engine's filters: the defaults, then version-prune.
cat >"$work/trimmed.toml" <<TOML
[[policy]]
name = "channel-filter"
[[policy]]
name = "arch-filter"
[[policy]]
name = "version-prune"
keep = "updates"
TOML

start_engine() { # port status-port [flags]
    local port=$1 status=$2
    shift 2
    "$ENGINE" --service.port "$port" --status.port "$status" --service.path_prefix "$PREFIX" \
        --service.workers "$WORKERS" --upstream.cincinnati.url "http://127.0.0.1:$UPSTREAM_PORT/graph" "$@" &
    pids+=($!)
    for _ in $(seq 300); do
        curl -sf "http://127.0.0.1:$status/readyz" >/dev/null && return 0
        sleep 0.1
    done
    echo "the engine on port $port did not get ready" >&2
    exit 1
}
start_engine $WHOLE_PORT $WHOLE_STATUS
whole_pid=${pids[-1]}
start_engine $TRIMMED_PORT $TRIMMED_STATUS -c "$work/trimmed.toml"
trimmed_pid=${pids[-1]}

# The channel's versions (for amd64), from the whole engine's answer.
curl -sf -H 'Accept: application/json' \
    "http://127.0.0.1:$WHOLE_PORT$PREFIX/graph?channel=$CHANNEL&arch=amd64" >"$work/channel.json"
python3 - "$work/channel.json" "$work/versions" <<'PY'
import json, sys
versions = [node["version"] for node in json.load(open(sys.argv[1]))["nodes"]]
open(sys.argv[2], "w").writelines(v + "\n" for v in versions)
print("%d releases in the channel" % len(versions))
PY
# Every check, each version in turn, as the CVO sends it.
{
    echo 'local versions = {}'
    while read -r version; do echo "versions[#versions + 1] = \"$version\""; done <"$work/versions"
    cat <<LUA
local n = 0
request = function()
    n = n + 1
    local version = versions[n % #versions + 1]
    return wrk.format("GET", "$PREFIX/graph?channel=$CHANNEL&arch=amd64&version=" .. version)
end
LUA
} >"$work/checks.lua"

rss_mib() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# Every answer prepared first: each version asked once, gzip.
for port in $WHOLE_PORT $TRIMMED_PORT; do
    while read -r version; do
        curl -sf -o /dev/null -H 'Accept: application/json' -H 'Accept-Encoding: gzip' \
            "http://127.0.0.1:$port$PREFIX/graph?channel=$CHANNEL&arch=amd64&version=$version"
    done <"$work/versions"
done
# Bytes per check (gzip), over every version.
python3 - "$work/versions" "$WHOLE_PORT" "$TRIMMED_PORT" "$PREFIX" "$CHANNEL" <<'PY'
import statistics, sys, urllib.request
versions = open(sys.argv[1]).read().split()
for name, port in (("whole", sys.argv[2]), ("trimmed", sys.argv[3])):
    sizes = []
    for version in versions:
        request = urllib.request.Request(
            "http://127.0.0.1:%s%s/graph?channel=%s&arch=amd64&version=%s" % (port, sys.argv[4], sys.argv[5], version),
            headers={"Accept": "application/json", "Accept-Encoding": "gzip"})
        sizes.append(len(urllib.request.urlopen(request).read()))
    sizes.sort()
    print("%s: bytes per check (gzip) median %d, 90th percentile %d, max %d, mean %.0f" % (
        name, statistics.median(sizes), sizes[int(len(sizes) * 0.9)], sizes[-1], statistics.mean(sizes)))
PY
echo "RSS with every answer prepared: whole $(rss_mib "$whole_pid") MiB, trimmed $(rss_mib "$trimmed_pid") MiB"

load() { # name port pid
    local before requests
    echo "== $1 (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    before=$(cpu_ticks "$3")
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$work/checks.lua" \
        -H 'Accept: application/json' -H 'Accept-Encoding: gzip' "http://127.0.0.1:$2" >"$work/load.wrk"
    grep -E 'Requests/sec|Transfer/sec|^ +(50|99)%|Non-2xx|Socket errors' "$work/load.wrk"
    requests=$(awk '/requests in/ { print $1 }' "$work/load.wrk")
    echo "server CPU per request: $(python3 -c "print(f'{($(cpu_ticks "$3") - $before) / $(getconf CLK_TCK) * 1e6 / $requests:.1f}')") µs; RSS after: $(rss_mib "$3") MiB"
}
# Alternating rounds: the machine's load moves during a run.
for round in 1 2; do
    load "whole channels, round $round" $WHOLE_PORT "$whole_pid"
    load "trimmed answers, round $round" $TRIMMED_PORT "$trimmed_pid"
done
