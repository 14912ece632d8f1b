# Sourced by the load benchmarks that put nginx beside a service: wrk and
# nginx from Debian, and a work directory whose servers stop, and whose
# files go, when the benchmark exits.

# The load every such benchmark puts on its servers, each overridable: how
# long, over how many connections and wrk threads, and the servers' workers.
DURATION=${DURATION:-20s}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
WORKERS=${WORKERS:-2}

# Installs wrk and nginx (Debian) if either is missing.
bench_needs_wrk_and_nginx() {
    if ! command -v wrk >/dev/null || ! command -v nginx >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends wrk nginx-light >/dev/null
    fi
}

# Sets `work` to a fresh directory and `pids` to the servers to stop (add
# each one started), both cleaned up on exit.
bench_workdir() {
    work=$(mktemp -d)
    chmod 755 "$work" # nginx workers run unprivileged
    pids=()
    trap bench_cleanup EXIT
}

bench_cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
