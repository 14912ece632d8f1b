#!/usr/bin/env bash
# Contract (see docs/reliability.md): schemathesis (PyPI, pinned, in a
# virtualenv under $RELIABILITY_CACHE) generates requests from each service's
# OpenAPI document and checks the answers against it: no 5xx, no status,
# content type, header or body outside the schema, no accepted request that
# the schema forbids. Only the policy-engine serves a document
# ({prefix}/openapi); the script asks the graph-builder too and says what it
# finds.
#
#   scripts/reliability/contract.sh [SECONDS]   (time budget, default 120)
set -euo pipefail
source "$(dirname "$0")/common.sh"
budget=${1:-120}

SCHEMATHESIS=schemathesis==4.32.5
cache=${RELIABILITY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cincinnati-reliability}
venv=$cache/${SCHEMATHESIS//=/-}
if [[ ! -x $venv/bin/schemathesis ]]; then
    python3 -c 'import ensurepip' 2>/dev/null || install_debian python3-venv=python3-venv
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$SCHEMATHESIS"
fi
build_scenarios

prefix=/api/upgrades_info
# Ports of this script only (the demo uses 8080-9082, the benchmark 18180-19181).
gb_api=18290 gb_public=18291 gb_status=19290 pe_api=18292 pe_status=19292
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

"$BIN/graph-builder" -c deploy/demo/graph-builder.toml --service.pause_secs 5 \
    --service.port $gb_api --service.public_port $gb_public --status.port $gb_status >"$work/gb.log" 2>&1 &
pids+=($!)
"$BIN/policy-engine" --service.port $pe_api --status.port $pe_status --service.path_prefix $prefix \
    --service.mandatory_client_parameters channel \
    --upstream.cincinnati.url "http://127.0.0.1:$gb_api$prefix/graph" >"$work/pe.log" 2>&1 &
pids+=($!)
for probe in "$gb_status/readiness" "$pe_status/readyz"; do
    for _ in $(seq 600); do
        curl -fs -o /dev/null "http://127.0.0.1:$probe" && break
        sleep 0.2
    done
    curl -fs -o /dev/null "http://127.0.0.1:$probe" || { tail -20 "$work"/*.log >&2; exit 1; }
done

for service in "graph-builder $gb_api" "graph-builder-public $gb_public" "policy-engine $pe_api"; do
    set -- $service
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$2$prefix/openapi")
    echo "contract: $1 {prefix}/openapi answers $code"
done

# The served schema's paths carry the prefix. Schemathesis exits non-zero
# on any failure; its summary names each check that failed and how to
# reproduce it.
echo "contract: policy-engine, $budget s of generated requests ($(cut -d' ' -f1-3 /proc/loadavg))"
# From the work directory: schemathesis keeps its example database in the
# current one.
cd "$work"
"$venv/bin/schemathesis" run "http://127.0.0.1:$pe_api$prefix/openapi" \
    --url "http://127.0.0.1:$pe_api" --checks all --max-time "$budget" \
    --workers 2 --request-timeout 10 --suppress-health-check too_slow --no-color
