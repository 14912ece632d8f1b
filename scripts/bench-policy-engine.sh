#!/usr/bin/env bash
# Load benchmark of the policy-engine (run by hand; see
# docs/benchmarks-policy-engine.md).
#
#   scripts/bench-policy-engine.sh [GRAPH.json]
#
# GRAPH.json is the upstream graph-builder graph to serve (default: a
# synthetic present-day-sized graph, generated). nginx serves it as the
# upstream; a release build of the policy-engine filters it. It asks the
# fresh engine for every (channel, arch) once and reports its memory; then
# wrk loads {prefix}/graph?channel=$CHANNEL&arch=amd64 with 64 keep-alive
# connections, without and with gzip, then loads nginx serving the engine's
# own answer bytes for comparison; then a connection storm (STORM clients
# that each fetch the answer with gzip and keep the connection) against the
# engine and nginx: memory before, with the connections idle, and a minute
# after they closed. Installs wrk and nginx (Debian) if missing.
#
# Environment: CHANNEL (stable-4.18), DURATION (20s), CONNECTIONS (64),
# THREADS (2), WORKERS (engine and nginx workers, 2), PREFIX (/api/upgrades_info),
# STORM (connections of the storm, 10000; 0 skips it), SETTLE (seconds after
# the storm at which memory is measured again, 60), ENGINE (a policy-engine
# binary to measure instead of building this tree's, e.g. an older commit's).
#
# The plain loads (the default MODE) print each engine / nginx ratio of
# requests/s themselves, per encoding, the engine and nginx loaded one
# after the other: ROUNDS (1) times, alternating. BASELINE (a second
# policy-engine binary, e.g. the commit before a change) is started beside
# the engine with the same settings and loaded in every round too, so that
# before and after meet the same machine. PIN=1 runs the servers (engines
# and nginx) on core 0 and wrk on core 1 (taskset), rather than all of them
# sharing both cores.
#
# MODE=cluster-policy measures per-cluster policy instead: requests carry
# IDS (100,000) distinct random cluster ids, with gzip, against the engine
# without a policy, then against a second engine with a policy of 20
# groups (deferral rings and pins; release creation times are added to the
# graph), 5 rollouts in flight on the channel's newest releases, and a
# lookup service answering each id's group after LOOKUP_LATENCY_MS (5).
# Reports requests/s, p99 and the server's CPU per request of both, the
# lookups the engine sent, and both engines' RSS after the loads. Each
# engine is loaded for WARMUP (40s) first, unmeasured: the first seconds
# compute the answers of every policy class and meet every id for the
# first time (a lookup each), and 40 s meet every one of 100,000 ids, as
# an engine serving a fleet has (a cluster asks every few minutes; its
# groups are kept for the lookup TTL, an hour); WARMUP=0s measures the
# cold start instead.
#
# CONTROL=1 (with MODE=cluster-policy) puts the policy engine's rollouts
# under run-time control: a fleet store (a SQLite file, recording every
# check too) and a token file; before the load, the oldest rollout is
# paused and the next one's progress held through {prefix}/v1/rollouts,
# the third is gated by a rate (max_offered_per_period) and the fourth by
# canaries, judged every 5 s, so every answer is made with run-time state
# read from the store (every rollouts.refresh_ms, off the request path).
#
# PHASED=1 (with MODE=cluster-policy) measures graph-data's phased rollouts
# (schema 2.0.0, issue 38) instead of a policy: two engines without a
# policy, with identical settings, each behind its own nginx upstream: one
# is given the graph as-is, the other a copy in which CHANNEL's
# PHASED_RELEASES (3) newest versions (every arch) are phasing into it, as
# the graph-builder publishes a rollout under way: CHANNEL taken out of
# their release.channels and their release.phased_rollouts set (patch P2D,
# default P14D; the newest started a day ago, each older one 4 days before
# the next), so the windows run during the benchmark and the ids fall in
# several sets of passed gates, each its own answer. Both engines are
# warmed up and loaded with the same ids; the script prints both loads and
# the ratios phased / unphased (instructions per request too, with
# CALLGRIND), then asks each engine for one id of every gate set and once
# without an id, and prints the distinct answers (ETags) each gave, its
# answer-cache counters and its RSS: memory with every bucket answered.
#
# CALLGRIND=DIR runs the engines under valgrind's callgrind, counting
# instructions only during the measured loads, and prints the engine's
# instructions per request: unlike requests/s and CPU time, the count does
# not follow the machine's load, so two commits compare on a shared
# machine (run with small IDS, WARMUP, CONNECTIONS; an engine under
# callgrind serves a few hundred requests a second). The profiles stay in
# DIR for callgrind_annotate.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh

CHANNEL=${CHANNEL:-stable-4.18}
PREFIX=${PREFIX:-/api/upgrades_info}
STORM=${STORM:-10000}
SETTLE=${SETTLE:-60}
MODE=${MODE:-default}
IDS=${IDS:-100000}
LOOKUP_LATENCY_MS=${LOOKUP_LATENCY_MS:-5}
WARMUP=${WARMUP:-40s}
CONTROL=${CONTROL:-0}
CALLGRIND=${CALLGRIND:-}
ROUNDS=${ROUNDS:-1}
BASELINE=${BASELINE:-}
PIN=${PIN:-0}
PHASED=${PHASED:-0}
PHASED_RELEASES=${PHASED_RELEASES:-3}
# Environment for the engine (e.g. mimalloc options, for experiments); the
# engine applies its own allocator settings (policy-engine/src/allocator.rs).
ALLOCATOR_ENV=${ALLOCATOR_ENV:-}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target-pe}
UPSTREAM_PORT=18180 ENGINE_PORT=18181 STATUS_PORT=19181 NGINX_ANSWER_PORT=18182
LOOKUP_PORT=18183 POLICY_ENGINE_PORT=18184 POLICY_STATUS_PORT=19184
PHASED_UPSTREAM_PORT=18185 PHASED_ENGINE_PORT=18186 PHASED_STATUS_PORT=19186
BASELINE_PORT=18187 BASELINE_STATUS_PORT=19187
if [ "$PHASED" = 1 ] && [ "$MODE" != cluster-policy ]; then
    echo "PHASED=1 loads with cluster ids: run it with MODE=cluster-policy" >&2
    exit 2
fi

bench_needs_wrk_and_nginx
graph=${1:-}
[ -n "$graph" ] || cargo build --release -q -p policy-engine --example synthetic-graph
[ -n "${ENGINE:-}" ] || cargo build --release -q -p policy-engine --bin policy-engine
ENGINE=${ENGINE:-$CARGO_TARGET_DIR/release/policy-engine}
# Readiness waits, in tenths of a second: an engine under callgrind takes
# a minute to read its graph.
ready_tries=100
# PIN=1: servers on core 0, the load generator on core 1.
server_pin=() client_pin=()
if [ "$PIN" = 1 ]; then
    server_pin=(taskset -c 0) client_pin=(taskset -c 1)
fi
engine_command=("${server_pin[@]}" "$ENGINE")
if [ -n "$CALLGRIND" ]; then
    command -v valgrind >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends valgrind >/dev/null
    mkdir -p "$CALLGRIND"
    # The allocator settings set here: an engine re-executing itself under
    # valgrind would execute valgrind's tool.
    engine_command=("${server_pin[@]}" env MIMALLOC_PURGE_DELAY=0 MIMALLOC_ARENA_EAGER_COMMIT=0 valgrind -q --tool=callgrind
        --instr-atstart=no "--callgrind-out-file=$CALLGRIND/callgrind.%p" "$ENGINE")
    ready_tries=1200
fi
cargo build --release -q -p benchmarks --bin connection-storm --bin lookup-service
# The storm's connections, for the engine, nginx and the storm itself.
ulimit -n $((STORM + 4096))

bench_workdir

if [ -z "$graph" ]; then
    graph=$work/synthetic.json
    "$CARGO_TARGET_DIR/release/examples/synthetic-graph" "$graph"
fi
mkdir -p "$work/upstream" "$work/answer"
cp "$graph" "$work/upstream/graph"
if [ "$MODE" = cluster-policy ]; then
    # Deferral rings need release ages: images "built" 0 to 59 days ago.
    python3 - "$work/upstream/graph" <<'PY'
import datetime, hashlib, json, sys
graph = json.load(open(sys.argv[1]))
now = datetime.datetime.now(datetime.timezone.utc)
for node in graph["nodes"]:
    days = int(hashlib.sha256(node["version"].encode()).hexdigest()[:8], 16) % 60
    created = (now - datetime.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    node.setdefault("metadata", {})["io.openshift.upgrades.graph.release.created"] = created
json.dump(graph, open(sys.argv[1], "w"))
PY
fi
if [ "$PHASED" = 1 ]; then
    # The phased copy, as the graph-builder publishes releases phasing into
    # a channel (docs/operations.md, "How the full graph carries a phased
    # rollout"). Also written: one id of every set of gates the load's ids
    # fall in (the "buckets"), to check afterwards that each was answered.
    mkdir -p "$work/phased"
    python3 - "$work/upstream/graph" "$work/phased/graph" "$work/phased/buckets" \
        "$CHANNEL" "$PHASED_RELEASES" "$IDS" <<'PY'
import datetime, hashlib, json, sys
source, target, buckets_file, channel, count, ids = sys.argv[1:]
CHANNELS = "io.openshift.upgrades.graph.release.channels"
PHASED = "io.openshift.upgrades.graph.release.phased_rollouts"
PATCH, DEFAULT = datetime.timedelta(days=2), datetime.timedelta(days=14)
graph = json.load(open(source))

def channels(node):
    return node.get("metadata", {}).get(CHANNELS, "").split(",")

def without_build(version):
    return version.split("+")[0]

def key(version):  # 4.18.0-rc.1 before 4.18.0; the channel's newest last
    core, _, pre = without_build(version).partition("-")
    return [int(part) for part in core.split(".")], pre == "", pre

members = [node for node in graph["nodes"] if channel in channels(node)]
newest = sorted({without_build(node["version"]) for node in members}, key=key)[-int(count):]
# Staggered starts, as successive z-streams phase: the newest a day ago,
# each older one 4 days earlier (1, 5, 9 days ago): the newest's patch
# window and every P14D window are under way.
now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
starts = {version: now - datetime.timedelta(days=1 + 4 * age) for age, version in enumerate(reversed(newest))}
for node in members:
    start = starts.get(without_build(node["version"]))
    if start is None:
        continue
    metadata = node["metadata"]
    metadata[CHANNELS] = ",".join(listed for listed in channels(node) if listed != channel)
    rollout = {"start": start.strftime("%Y-%m-%dT%H:%M:%SZ"), "patch": "P2D", "default": "P14D"}
    metadata[PHASED] = json.dumps({channel: rollout}, separators=(",", ":"))
json.dump(graph, open(target, "w"))

# A cluster at place p (SHA-256 of its id, rollout_model::ClusterId::place)
# has passed a window's gate once start + p × duration <= now, that is
# p <= (now - start) / duration: the windows under way cut [0, 1) at those
# fractions, and each interval is one set of passed gates, one answer.
cuts = sorted({(now - start) / duration for start in starts.values() for duration in (PATCH, DEFAULT)
               if 0 < (now - start) / duration < 1})
edges = [0.0] + cuts + [1.0]
def place(id):
    return int(hashlib.sha256(id.encode()).hexdigest()[:16], 16) / 2**64
# The same ids as the load's (ids.lua); of each bucket, the id nearest its
# middle, so it stays in it while the windows move on during the run.
chosen = {}
for number in range(int(ids)):
    id = "%08x-5d2c-4a7e-9b1f-0123456789ab" % number
    p = place(id)
    bucket = sum(cut < p for cut in cuts)
    middle = (edges[bucket] + edges[bucket + 1]) / 2
    if bucket not in chosen or abs(p - middle) < abs(place(chosen[bucket]) - middle):
        chosen[bucket] = id
with open(buckets_file, "w") as out:
    out.writelines(id + "\n" for _, id in sorted(chosen.items()))
phased_nodes = sum(without_build(node["version"]) in starts for node in members)
print("phased copy: %s phasing in %s (%d releases, every arch), started %s; the ids' gate sets: %d (cut at %s)" % (
    ", ".join(newest), channel, phased_nodes,
    ", ".join("%s %s" % (version, starts[version].strftime("%Y-%m-%dT%H:%MZ")) for version in newest),
    len(chosen), ", ".join("%.3f" % cut for cut in cuts)))
PY
fi

# One nginx serves the upstream graph and, on a second port, the engine's
# answer bytes (plain and precompressed), so both servers are loaded with
# the same bytes and headers; on a third, the phased copy (PHASED=1).
cat >"$work/nginx.conf" <<CONF
worker_processes $WORKERS;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
daemon off;
worker_rlimit_nofile $((STORM + 4096));
events { worker_connections $((STORM + 4096)); }
http {
    access_log off;
    keepalive_requests 1000000;
    types { application/json json; }
    default_type application/json;
    server {
        listen 127.0.0.1:$UPSTREAM_PORT;
        location = /graph { root $work/upstream; try_files /graph =404; }
    }
    server {
        listen 127.0.0.1:$NGINX_ANSWER_PORT;
        gzip_static on;
        location = /graph { root $work/answer; try_files /answer.json =404; }
    }
    # PHASED=1: the phased copy of the graph, the phased engine's upstream.
    server {
        listen 127.0.0.1:$PHASED_UPSTREAM_PORT;
        location = /graph { root $work/phased; try_files /graph =404; }
    }
}
CONF
"${server_pin[@]}" nginx -c "$work/nginx.conf" &
pids+=($!)

# An engine (binary $1, as engine_command runs it) on ports $2 (service)
# and $3 (status) before the upstream on port $4, with more flags after;
# its pid in $launched. As it runs anywhere: the engine applies its
# allocator settings itself.
start_engine() {
    local binary=$1 port=$2 status=$3 upstream=$4
    shift 4
    env $ALLOCATOR_ENV "${engine_command[@]/#$ENGINE/$binary}" \
        --service.port "$port" --status.port "$status" \
        --service.path_prefix "$PREFIX" --service.workers "$WORKERS" \
        --upstream.cincinnati.url "http://127.0.0.1:$upstream/graph" "$@" &
    launched=$!
    pids+=("$launched")
}

start_engine "$ENGINE" $ENGINE_PORT $STATUS_PORT $UPSTREAM_PORT
engine=$launched

wait_ready() { # status-port
    for _ in $(seq $ready_tries); do
        curl -sf "http://127.0.0.1:$1/readyz" >/dev/null && return 0
        sleep 0.1
    done
    echo "the engine of status port $1 did not get ready" >&2
    exit 1
}
wait_ready $STATUS_PORT

url="http://127.0.0.1:$ENGINE_PORT$PREFIX/graph?channel=$CHANNEL&arch=amd64"
computed=$(curl -sf -H 'Accept: application/json' "$url" -o "$work/answer/answer.json" -w '%{time_total}')
cached=$(curl -sf -H 'Accept: application/json' "$url" -o /dev/null -w '%{time_total}')
echo "first answer (filtered, serialised, gzipped): ${computed}s; second (cached): ${cached}s"
gzip -9 -k -c "$work/answer/answer.json" >"$work/answer/answer.json.gz"
python3 - "$work/answer/answer.json" "$graph" "$work/pairs" <<'PY'
import json, os, sys
g = json.load(open(sys.argv[1]))
print("answer: %d nodes, %d edges, %d conditional edges, %d bytes" % (
    len(g["nodes"]), len(g["edges"]),
    sum(len(c["edges"]) for c in g["conditionalEdges"]), os.path.getsize(sys.argv[1])))
full = json.load(open(sys.argv[2]))
keys = {(c, m.get("io.openshift.upgrades.graph.release.arch"))
        for n in full["nodes"] for m in [n.get("metadata", {})]
        for c in m.get("io.openshift.upgrades.graph.release.channels", "").split(",") if c}
print("upstream: %d releases; %d (channel, arch) pairs exist" % (len(full["nodes"]), len(keys)))
with open(sys.argv[3], "w") as pairs:
    pairs.writelines("channel=%s&arch=%s\n" % key for key in sorted(keys))
PY

# CPU time (user + system, clock ticks) of processes and their children: on
# a shared machine, CPU per request says more than requests/s.
cpu_ticks() {
    local pid total=0
    for pid in "$@" $(pgrep -P "$(echo "$@" | tr ' ' ,)" || true); do
        total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
    done
    echo $total
}
# load() also leaves its figures in measured_rps, measured_p99,
# measured_cpu_us and measured_instructions (empty without CALLGRIND), for
# the comparison PHASED=1 prints.
# The machine's CPU ticks: stolen by the hypervisor, and all of them
# (/proc/stat's cpu line: user ... steal are its first eight figures).
machine_ticks() {
    awk '$1 == "cpu" { total = 0; for (i = 2; i <= 9; i++) total += $i; print $9, total }' /proc/stat
}
load() { # name url server-pid [extra wrk args]
    local name=$1 target=$2 server=$3 before machine_before
    shift 3
    # The load average beside each figure: on a shared machine, what it
    # was measured under; on a virtual one, the CPU time the hypervisor
    # gave other guests meanwhile (steal), which the load average misses.
    echo "== $name (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    before=$(cpu_ticks "$server")
    machine_before=$(machine_ticks)
    # nginx is never under callgrind; an engine is once its profile exists.
    local counted=0
    [ -n "$CALLGRIND" ] && [ -e "$CALLGRIND/callgrind.$server" ] && counted=1
    [ $counted = 0 ] || callgrind_control -i on "$server" >/dev/null
    "${client_pin[@]}" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -H 'Accept: application/json' "$@" "$target" \
        >"$work/load.wrk"
    grep -E 'Requests/sec|Transfer/sec|^ +(50|99)%|Non-2xx|Socket errors' "$work/load.wrk"
    echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); CPU stolen during the load: $(echo "$machine_before $(machine_ticks)" |
        awk '{ printf "%.0f%%", ($3 - $1) * 100 / (($4 - $2) > 0 ? $4 - $2 : 1) }')"
    local requests
    requests=$(awk '/requests in/ { print $1 }' "$work/load.wrk")
    measured_rps=$(awk '/Requests\/sec/ { print $2 }' "$work/load.wrk")
    measured_p99=$(awk '$1 == "99%" { print $2 }' "$work/load.wrk")
    measured_cpu_us=$(python3 -c "print(f'{($(cpu_ticks "$server") - $before) / $(getconf CLK_TCK) * 1e6 / $requests:.1f}')")
    measured_instructions=
    echo "server CPU per request: $measured_cpu_us µs"
    if [ $counted = 1 ]; then
        callgrind_control -d "$server" >/dev/null
        callgrind_control -i off "$server" >/dev/null
        local dump instructions
        dump=$(ls -t "$CALLGRIND/callgrind.$server".* | head -1)
        # The dump's own total: callgrind_annotate's PROGRAM TOTALS is the
        # file's summary line, wrong in every dump after the first.
        instructions=$(awk '$1 == "totals:" { print $2 }' "$dump")
        measured_instructions=$((instructions / requests))
        echo "instructions per request (callgrind, $requests requests, background rounds included): $measured_instructions ($dump)"
    fi
}

if [ "$MODE" = cluster-policy ]; then
    # Each request: a random one of IDS cluster ids.
    cat >"$work/ids.lua" <<LUA
math.randomseed(os.time() + tonumber(tostring({}):sub(-6), 16))
request = function()
  local id = string.format("%08x-5d2c-4a7e-9b1f-0123456789ab", math.random(0, $IDS - 1))
  return wrk.format(nil, wrk.path .. "&id=" .. id)
end
LUA
    ids=(-s "$work/ids.lua" -H 'Accept-Encoding: gzip')
fi
warm_up() { # url... (unmeasured; see WARMUP)
    local target
    [ "$WARMUP" != 0s ] || return 0
    for target in "$@"; do
        "${client_pin[@]}" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -H 'Accept: application/json' "${ids[@]}" "$target" >/dev/null
    done
}
# An engine's RSS now and at its peak.
memory() { awk '/^VmRSS/ { rss = $2 } /^VmHWM/ { hwm = $2 } END { printf "%.1f MiB (peak %.1f MiB)", rss / 1024, hwm / 1024 }' "/proc/$1/status"; }

if [ "$MODE" = cluster-policy ] && [ "$PHASED" = 1 ]; then
    # The phased engine: the first one's settings, the phased copy as its
    # upstream; asked once without an id, as the first was above.
    start_engine "$ENGINE" $PHASED_ENGINE_PORT $PHASED_STATUS_PORT $PHASED_UPSTREAM_PORT
    phased_engine=$launched
    wait_ready $PHASED_STATUS_PORT
    phased_url="http://127.0.0.1:$PHASED_ENGINE_PORT$PREFIX/graph?channel=$CHANNEL&arch=amd64"
    curl -sf -H 'Accept: application/json' "$phased_url" -o /dev/null
    warm_up "$url" "$phased_url"
    load "unphased, $IDS cluster ids, gzip" "$url" "$engine" "${ids[@]}"
    unphased=("$measured_rps" "$measured_p99" "$measured_cpu_us" "${measured_instructions:--}")
    load "$CHANNEL phasing its $PHASED_RELEASES newest, $IDS cluster ids, gzip" "$phased_url" "$phased_engine" "${ids[@]}"
    phased=("$measured_rps" "$measured_p99" "$measured_cpu_us" "${measured_instructions:--}")
    echo "== phased / unphased"
    python3 - "${unphased[@]}" "${phased[@]}" <<'PY'
import sys
unphased, phased = sys.argv[1:5], sys.argv[5:9]
rows = [("requests/s", 0, float), ("p99", 1, None), ("CPU per request, µs", 2, float),
        ("instructions per request", 3, int)]
print("%-26s %12s %12s %16s" % ("", "unphased", "phased", "phased/unphased"))
for name, column, number in rows:
    u, p = unphased[column], phased[column]
    ratio = "%.0f%%" % (100 * number(p) / number(u)) if number and u != "-" and p != "-" else ""
    print("%-26s %12s %12s %16s" % (name, u, p, ratio))
if unphased[3] != "-" and phased[3] != "-":
    # The target (>= 90% of unphased throughput) judged by instructions,
    # which do not follow the machine's load.
    print("throughput at equal instructions (unphased / phased instructions): %.1f%%"
          % (100 * int(unphased[3]) / int(phased[3])))
PY
    # Every bucket answered: one id of each set of gates the ids fall in
    # (written with the phased copy) and a request without an id, asked of
    # both engines; distinct ETags are distinct answers. The unphased
    # engine has one answer for all.
    distinct_answers() { # engine-url
        local id
        { echo; sed 's/^/\&id=/' "$work/phased/buckets"; } | while read -r id; do
            curl -sf -o /dev/null -D - -H 'Accept: application/json' -H 'Accept-Encoding: gzip' "$1$id" \
                | tr -d '\r' | awk 'tolower($1) == "etag:" { print $2 }'
        done | sort -u | wc -l
    }
    buckets=$(wc -l <"$work/phased/buckets")
    echo "== every bucket answered: the ids' $buckets gate sets and a request without an id"
    echo "distinct answers (ETags): unphased $(distinct_answers "$url"), phased $(distinct_answers "$phased_url")" \
        "(expected 1 and $((buckets + 1)))"
    # Memory with every bucket answered, and the answer caches: misses are
    # the answers computed (kept unless evicted), for every request the
    # script and the loads made.
    echo "RSS after the loads: unphased $(memory "$engine"); phased $(memory "$phased_engine")"
    cache_metrics() { # status-port
        curl -s "http://127.0.0.1:$1/metrics" \
            | awk '$1 ~ /^cincinnati_pe_(graph_cache_(hits|misses|evictions)_total|identity_cache_bytes)$/ { sub("cincinnati_pe_", "", $1); printf "%s %s; ", $1, $2 }'
    }
    echo "answer cache, unphased: $(cache_metrics $STATUS_PORT)"
    echo "answer cache, phased: $(cache_metrics $PHASED_STATUS_PORT)"
    exit 0
fi

if [ "$MODE" = cluster-policy ]; then
    # 20 groups: rings of 0 to 28 days, every fifth pinned below the five
    # newest releases; 5 rollouts of those releases, 10% to 50% in. Clusters
    # get their group from the lookup service only (one group each).
    python3 - "$work/answer/answer.json" "$work/policy.yaml" "$CONTROL" <<'PY'
import datetime, json, sys
answer = json.load(open(sys.argv[1]))
# With run-time control, the third rollout has a rate and the fourth canaries.
gates = {2: ", max_offered_per_period: {clusters: 5000, period_hours: 24}", 3: ", canary: {clusters: 5}"}
if sys.argv[3] != "1":
    gates = {}
key = lambda version: [int(part) if part.isdigit() else 0 for part in version.replace("-", ".").split(".")]
versions = sorted((node["version"] for node in answer["nodes"]), key=key)
newest, pin = versions[-5:], versions[-6]
start = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
with open(sys.argv[2], "w") as out:
    out.write("groups:\n")
    for group in range(20):
        pinned = f", max_version: {pin}" if group % 5 == 4 else ""
        out.write(f"  g{group:02}: {{deferral_days: {(group % 5) * 7}{pinned}}}\n")
    out.write("rollouts:\n")
    for position, target in enumerate(newest):
        gated = gates.get(position, "")
        out.write(f"  - {{target: {target}, start: {start}, duration_hours: 720, starting_percentage: {10 * (position + 1)}{gated}}}\n")
PY
    "$CARGO_TARGET_DIR/release/lookup-service" --port $LOOKUP_PORT --latency-ms "$LOOKUP_LATENCY_MS" --groups 20 &
    pids+=($!)
    control=()
    if [ "$CONTROL" = 1 ]; then
        echo "bench bench-token-0123456789" >"$work/tokens"
        control=(--fleet.store "sqlite://$work/fleet.db" --rollouts.token_file "$work/tokens"
            --rollouts.halt_check_secs 5)
    fi
    start_engine "$ENGINE" $POLICY_ENGINE_PORT $POLICY_STATUS_PORT $UPSTREAM_PORT \
        --cluster_policy.file "$work/policy.yaml" \
        --cluster_policy.lookup_url "http://127.0.0.1:$LOOKUP_PORT/groups" "${control[@]}"
    policy_engine=$launched
    wait_ready $POLICY_STATUS_PORT
    if [ "$CONTROL" = 1 ]; then
        rollouts="http://127.0.0.1:$POLICY_STATUS_PORT$PREFIX/v1/rollouts"
        targets=($(curl -sf -H 'Authorization: Bearer bench-token-0123456789' "$rollouts" |
            python3 -c 'import json, sys; print(" ".join(r["target"] for r in json.load(sys.stdin)["rollouts"]))'))
        curl -sf -o /dev/null -X POST -H 'Authorization: Bearer bench-token-0123456789' \
            "$rollouts/${targets[0]}/pause?reason=benchmark"
        curl -sf -o /dev/null -X PUT -H 'Authorization: Bearer bench-token-0123456789' \
            "$rollouts/${targets[1]}/progress?reason=benchmark&percent=35"
        echo "rollouts under run-time control: ${targets[0]} paused, ${targets[1]} held at 35%," \
            "${targets[2]} gated by a rate, ${targets[3]} by canaries"
    fi
    policy_url="http://127.0.0.1:$POLICY_ENGINE_PORT$PREFIX/graph?channel=$CHANNEL&arch=amd64"
    warm_up "$url" "$policy_url"
    lookups() { curl -s "http://127.0.0.1:$POLICY_STATUS_PORT/metrics" | awk '$1 == "cincinnati_pe_cluster_lookups_total" { print $2 }'; }
    load "no policy, $IDS cluster ids, gzip" "$url" "$engine" "${ids[@]}"
    before=$(lookups)
    policy_label="cluster policy"
    [ "$CONTROL" = 1 ] && policy_label="cluster policy, rollouts under run-time control, checks recorded"
    load "$policy_label, $IDS cluster ids, gzip" "$policy_url" "$policy_engine" "${ids[@]}"
    echo "lookups during the measured load: $(($(lookups) - before))"
    if [ "$CONTROL" = 1 ]; then
        # What each rollout's gates say: `gates` (a sentence, engines before
        # the rollout model) or, from the rollout model on, `said`.
        curl -sf -H 'Authorization: Bearer bench-token-0123456789' "$rollouts" | python3 -c '
import json, sys
for rollout in json.load(sys.stdin)["rollouts"]:
    said = rollout.get("gates") or rollout.get("said")
    if said:
        print(rollout["target"] + ": " + said)'
    fi
    # Memory with every class answered and every id met (the lookups'
    # groups cached), after the load.
    echo "RSS after the loads: no policy $(memory "$engine"); cluster policy $(memory "$policy_engine")"
    echo "== the policy engine's lookups and answers"
    curl -s "http://127.0.0.1:$POLICY_STATUS_PORT/metrics" \
        | grep -E '^cincinnati_pe_(cluster_lookups_total|cluster_lookup_errors_total|cluster_lookup_fallbacks_total|graph_cache_(hits|misses|evictions)_total) '
    exit 0
fi

rss() { grep VmRSS "/proc/$1/status" | awk '{printf "%.1f MiB", $2 / 1024}'; }
# On the engine as started, before any load: what it holds for its answers.
echo "== every (channel, arch) asked once, with gzip as the cluster-version operator asks"
echo "policy-engine RSS before: $(rss $engine)"
started=$(date +%s.%N)
sed "s|^|http://127.0.0.1:$ENGINE_PORT$PREFIX/graph?|" "$work/pairs" \
    | xargs -P 2 -n 1 curl -s -o /dev/null --compressed -H 'Accept: application/json'
echo "computed in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $started }") s; RSS with every answer computed: $(rss $engine); 10 s later: $(sleep 10; rss $engine)"

nginx_master=$(cat "$work/nginx.pid")
nginx_url="http://127.0.0.1:$NGINX_ANSWER_PORT/graph"
# BASELINE: the other engine, with the same settings and upstream, its
# answer computed before the loads as the first engine's was.
if [ -n "$BASELINE" ]; then
    start_engine "$BASELINE" $BASELINE_PORT $BASELINE_STATUS_PORT $UPSTREAM_PORT
    baseline=$launched
    wait_ready $BASELINE_STATUS_PORT
    baseline_url="http://127.0.0.1:$BASELINE_PORT$PREFIX/graph?channel=$CHANNEL&arch=amd64"
    cmp -s <(curl -sf -H 'Accept: application/json' "$baseline_url") "$work/answer/answer.json" \
        || echo "note: the baseline's answer differs from the engine's (nginx serves the engine's)"
fi
# Each server's requests/s over nginx's, loaded one after the other with
# the same bytes, per encoding and round; all of them again at the end.
ratios=()
for round in $(seq "$ROUNDS"); do
    [ "$ROUNDS" = 1 ] || echo "==== round $round of $ROUNDS"
    for encoding in identity gzip; do
        gzip_header=()
        [ $encoding = identity ] || gzip_header=(-H 'Accept-Encoding: gzip')
        load "policy-engine, $encoding" "$url" "$engine" "${gzip_header[@]}"
        engine_rps=$measured_rps
        if [ -n "$BASELINE" ]; then
            load "baseline policy-engine, $encoding" "$baseline_url" "$baseline" "${gzip_header[@]}"
            baseline_rps=$measured_rps
        fi
        load "nginx, same bytes, $encoding" "$nginx_url" "$nginx_master" "${gzip_header[@]}"
        ratio=$(python3 -c "print(f'{$engine_rps / $measured_rps:.2f}')")
        line="round $round, $encoding: policy-engine / nginx $engine_rps / $measured_rps = $ratio"
        if [ -n "$BASELINE" ]; then
            line+="; baseline / nginx $baseline_rps / $measured_rps = $(python3 -c "print(f'{$baseline_rps / $measured_rps:.2f}')")"
        fi
        echo "$line"
        ratios+=("$line")
    done
done
echo "== requests/s over nginx's (same bytes, loaded one after the other)"
printf '%s\n' "${ratios[@]}"
echo "== policy-engine peak RSS: $(grep VmHWM /proc/$engine/status | awk '{printf "%.1f MiB", $2 / 1024}'), now $(rss $engine)"


if [ "$STORM" -gt 0 ]; then
    storm() { # name url pid...
        local name=$1 target=$2
        shift 2
        echo "== connection storm: $STORM clients of $name, each fetching the answer with gzip and keeping the connection"
        "$CARGO_TARGET_DIR/release/connection-storm" --url "$target" --connections "$STORM" --gzip \
            --settle-secs "$SETTLE" $(printf -- '--pid %s ' "$@")
    }
    storm policy-engine "$url" "$engine"
    storm nginx "http://127.0.0.1:$NGINX_ANSWER_PORT/graph" $(pgrep -P "$(cat "$work/nginx.pid")")
fi
