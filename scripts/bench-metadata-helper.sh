#!/usr/bin/env bash
# Load benchmark of the metadata-helper against nginx serving the same files
# (run by hand; see docs/benchmarks-metadata-helper.md).
#
#   scripts/bench-metadata-helper.sh
#
# Writes a signature tree the size of the 2026 OpenShift mirror's (DIGESTS
# digests, one to three signatures each, of real signatures' size), starts a
# release build of the metadata-helper on it (directory source) and nginx on
# the same files, and loads each with wrk: CONNECTIONS keep-alive
# connections, every request a random existing signature. Reports
# requests/s, p99, CPU per request (the measure that holds on a busy
# machine), the helper's start-up time and memory (RSS after start-up
# and after the load, peak), and the ratio to nginx, with the load average.
# Installs wrk and nginx (Debian) if missing.
#
# Environment: DIGESTS (6000), DURATION (20s), CONNECTIONS (64), THREADS (2),
# WORKERS (nginx workers, 2; the helper takes one per core), PREFIX
# (/api/upgrades_info), HELPER (a metadata-helper binary to measure instead
# of building this tree's).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh

DIGESTS=${DIGESTS:-6000}
PREFIX=${PREFIX:-/api/upgrades_info}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target-mh}
HELPER_PORT=18282 STATUS_PORT=19282 NGINX_PORT=18283

bench_needs_wrk_and_nginx
[ -n "${HELPER:-}" ] || cargo build --release -q -p metadata-helper --bin metadata-helper
HELPER=${HELPER:-$CARGO_TARGET_DIR/release/metadata-helper}

bench_workdir

# The tree, and the request paths wrk picks from (one per signature).
python3 - "$work/signatures" "$work/paths" "$DIGESTS" "$PREFIX" <<'PY'
import hashlib, os, random, sys
root, paths, digests, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rng = random.Random(2026)
with open(paths, "w") as out:
    for number in range(digests):
        hex_digest = hashlib.sha256(b"release %d" % number).hexdigest()
        directory = os.path.join(root, "sha256", hex_digest)
        os.makedirs(directory)
        for index in range(1, 1 + rng.randint(1, 3)):
            # Real signatures (RSA-4096, compressed) are 500 to 900 bytes.
            with open(os.path.join(directory, f"signature-{index}"), "wb") as file:
                file.write(rng.randbytes(rng.randint(500, 900)))
            out.write(f"{prefix}/signatures/sha256={hex_digest}/signature-{index}\n")
PY
echo "tree: $DIGESTS digests, $(wc -l <"$work/paths") signatures, $(du -sh "$work/signatures" | cut -f1) on disk"

cat >"$work/random-path.lua" <<LUA
local paths = {}
for line in io.lines("$work/paths") do paths[#paths + 1] = line end
math.randomseed(2026)
request = function()
    return wrk.format("GET", paths[math.random(#paths)])
end
LUA

# nginx as one would set it up to serve the tree: the same URL layout,
# sendfile, ETag (its default, weak-size-mtime style), no access log.
cat >"$work/nginx.conf" <<CONF
worker_processes $WORKERS;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
daemon off;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    keepalive_requests 1000000;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        # Quoted: nginx would read the braces of {64} as a block.
        location ~ "^$PREFIX/signatures/(sha256)=([0-9a-f]{64})/(signature-[1-9][0-9]*)\$" {
            alias $work/signatures/\$1/\$2/\$3;
        }
    }
}
CONF
nginx -c "$work/nginx.conf" &
nginx=$!
pids+=($nginx)

started=$(date +%s.%N)
"$HELPER" --signatures.dir "$work/signatures" --service.path_prefix "$PREFIX" \
    --service.port $HELPER_PORT --status.port $STATUS_PORT >"$work/helper.log" 2>&1 &
helper=$!
pids+=($helper)
for _ in $(seq 200); do
    curl -sf "http://127.0.0.1:$STATUS_PORT/readyz" >/dev/null && break
    sleep 0.05
done
# Ready, and this run's helper (not another one left on the port).
curl -sf "http://127.0.0.1:$STATUS_PORT/readyz" >/dev/null && kill -0 $helper 2>/dev/null ||
    { cat "$work/helper.log" >&2; exit 1; }
ready=$(date +%s.%N)
rss() { awk -v key="$1:" '$1 == key { printf "%.1f MiB", $2 / 1024 }' "/proc/$helper/status"; }
echo "helper ready in $(python3 -c "print(f'{$ready - $started:.2f}')")s (scan of the tree included), RSS $(rss VmRSS)"

first=$(head -1 "$work/paths")
for port in $HELPER_PORT $NGINX_PORT; do
    curl -sf "http://127.0.0.1:$port$first" | cmp - "$work/signatures/$(echo "$first" | sed -E 's|.*/signatures/(sha256)=([0-9a-f]+)/|\1/\2/|')" ||
        { echo "port $port does not serve the tree" >&2; exit 1; }
done

# CPU time (user + system, clock ticks) of processes and their children:
# on a shared machine, CPU per request says more than requests/s.
cpu_ticks() {
    local pid total=0
    for pid in "$@" $(pgrep -P "$(echo "$@" | tr ' ' ,)" || true); do
        total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
    done
    echo $total
}
load() { # name port pid
    echo "== $1: $(uptime | sed 's/.*load average/load average/')"
    local before
    before=$(cpu_ticks "$3")
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$work/random-path.lua" \
        "http://127.0.0.1:$2" | tee "$work/$1.wrk"
    echo $(($(cpu_ticks "$3") - before)) >"$work/$1.ticks"
}
load helper $HELPER_PORT $helper
load nginx $NGINX_PORT $nginx

rate() { awk '/^Requests\/sec/ { print $2 }' "$work/$1.wrk"; }
p99() { awk '$1 == "99%" { print $2 }' "$work/$1.wrk"; }
errors() { grep -E 'Non-2xx|Socket errors' "$work/$1.wrk" || true; }
# Microseconds of the server's CPU per request answered.
cpu_per_request() {
    python3 -c "print(f'{$(cat "$work/$1.ticks") / $(getconf CLK_TCK) * 1e6 / $(awk '/requests in/ { print $1 }' "$work/$1.wrk"):.1f}')"
}
echo
echo "summary ($DIGESTS digests, $CONNECTIONS connections, $DURATION, $(uptime | sed 's/.*load average/load average/'))"
printf '  %-16s %12s req/s  p99 %8s  CPU %6s µs/request  %s\n' metadata-helper "$(rate helper)" "$(p99 helper)" "$(cpu_per_request helper)" "$(errors helper)"
printf '  %-16s %12s req/s  p99 %8s  CPU %6s µs/request  %s\n' nginx "$(rate nginx)" "$(p99 nginx)" "$(cpu_per_request nginx)" "$(errors nginx)"
echo "  ratio helper/nginx: $(python3 -c "print(f'{$(rate helper) / $(rate nginx):.2f}')") (requests/s), $(python3 -c "print(f'{$(cpu_per_request nginx) / $(cpu_per_request helper):.2f}')") (requests per CPU second)"
echo "  helper RSS after the load: $(rss VmRSS) (peak $(rss VmHWM))"
