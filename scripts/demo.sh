#!/usr/bin/env bash
# Starts the service stack on the bundled default data (offline):
#   graph-builder            :8080 (Graph API), :8090 (graph-data), :9080 (status)
#   policy-engine "public"   :8081, status :9081, upstream: the graph-builder
#   policy-engine "cluster"  :8082, status :9082, upstream: the public engine,
#                            per-cluster policy: deploy/demo/policy.yaml
#   metadata-helper          :8083, status :9083, signatures: testdata/demo/signatures
#     (upstream's default ports are 8082/9082, which the cluster engine has here)
# then prints commands to try. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release -p graph-builder -p policy-engine -p metadata-helper -p cincinnati-cli
bin=target/release
prefix=/api/upgrades_info
pids=()
stop() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap stop EXIT INT TERM

"$bin/graph-builder" -c deploy/demo/graph-builder.toml &
pids+=($!)
"$bin/policy-engine" -v --service.port 8081 --status.port 9081 --service.path_prefix "$prefix" \
    --service.mandatory_client_parameters channel \
    --upstream.cincinnati.url "http://127.0.0.1:8080$prefix/graph" &
pids+=($!)
"$bin/policy-engine" -v --service.port 8082 --status.port 9082 --service.path_prefix "$prefix" \
    --service.mandatory_client_parameters channel \
    --upstream.cincinnati.url "http://127.0.0.1:8081$prefix/graph" \
    --cluster_policy.file deploy/demo/policy.yaml &
pids+=($!)

"$bin/metadata-helper" -v --service.port 8083 --status.port 9083 --service.path_prefix "$prefix" \
    --signatures.dir testdata/demo/signatures &
pids+=($!)

wait_ready() {
    for _ in $(seq 1 600); do
        if curl -fs -o /dev/null "$1"; then return 0; fi
        sleep 0.2
    done
    echo "demo: $1 did not become ready" >&2
    return 1
}
wait_ready http://127.0.0.1:9080/readiness
wait_ready http://127.0.0.1:9081/readyz
wait_ready http://127.0.0.1:9082/readyz
wait_ready http://127.0.0.1:9083/readyz

# A signed release: its digest names its directory in the signature tree.
# (sed, not head: head would close the pipe early, and pipefail would stop the script)
signed=$(find testdata/demo/signatures/sha256 -name signature-1 | sort | sed -n 1p)
digest=$(basename "$(dirname "$signed")")

cat <<EOT

The stack is up. Open the update graph explorer of the public engine (or of
the in-cluster one, on 8082, which asks the public one) at
  http://127.0.0.1:8081$prefix/?channel=stable-4.18&arch=amd64

or try:

  # the in-cluster engine (chained: cluster -> public -> graph-builder)
  curl -s 'http://127.0.0.1:8082$prefix/graph?channel=stable-4.18&arch=amd64' -H 'Accept: application/json' | head -c 600; echo
  # per-cluster policy (deploy/demo/policy.yaml): two clusters at 4.18.51 ask the
  # same question; 4.18.52 is rolling out to half the fleet, and only the first
  # cluster is inside (no id: the default, last in every rollout)
  updates='import json,sys; g=json.load(sys.stdin); v=[n["version"] for n in g["nodes"]]; print(sorted(v[t] for f, t in g["edges"] if v[f] == "4.18.51"))'
  curl -s 'http://127.0.0.1:8082$prefix/graph?channel=stable-4.18&arch=amd64&version=4.18.51&id=c0ffee00-0000-4a11-8b22-0123456789ab' -H 'Accept: application/json' | python3 -c "\$updates"
  curl -s 'http://127.0.0.1:8082$prefix/graph?channel=stable-4.18&arch=amd64&version=4.18.51&id=c0ffee00-0001-4a11-8b22-0123456789ab' -H 'Accept: application/json' | python3 -c "\$updates"
  # why: groups, rollout places, which rule removed which update, production's
  # own risk on 4.18.44 (status port only)
  curl -s 'http://127.0.0.1:9082$prefix/v1/explain-cluster?channel=stable-4.18&arch=amd64&version=4.18.40&id=5ca1ab1e-0000-4000-8000-00000000d0e5'; echo
  # the public engine, multi-arch releases, gzip
  curl -s --compressed 'http://127.0.0.1:8081$prefix/graph?channel=candidate-4.19&arch=multi' | head -c 600; echo
  # an error: a channel name that is not valid
  curl -s 'http://127.0.0.1:8081$prefix/graph?channel=Stable'; echo
  # the full graph and the graph-data in use
  curl -s 'http://127.0.0.1:8080$prefix/graph' | head -c 300; echo
  curl -s 'http://127.0.0.1:8090$prefix/graph-data' | tar tz | head
  # the command-line client (docs/cli.md): an update path, asking the in-cluster
  # engine one channel at a time as clusters do; why an update is not offered
  $bin/cincinnati --url http://127.0.0.1:8082$prefix/graph path --from 4.16.40 --to 4.18.40 --tier fast
  $bin/cincinnati --url http://127.0.0.1:8080$prefix/graph explain --channel stable-4.9 --from 4.9.37 --to 4.9.38 \\
      --graph-data http://127.0.0.1:8090$prefix/graph-data
  # a release signature, as a disconnected cluster's CVO fetches it (signature-1,
  # -2, ... until the first 404)
  curl -sI 'http://127.0.0.1:8083$prefix/signatures/sha256=$digest/signature-1'
  curl -s 'http://127.0.0.1:8083$prefix/signatures/sha256=$digest/signature-9'; echo
  # what it signs, checked with the demo key's public half as the CVO checks it
  $bin/cincinnati signatures verify --store http://127.0.0.1:8083$prefix/signatures \\
      --keyring testdata/demo/signing-key.asc --release sha256:$digest
  # status and metrics
  curl -s http://127.0.0.1:9080/status | head -c 800; echo
  curl -s http://127.0.0.1:9081/metrics | grep cincinnati_pe_
  curl -s http://127.0.0.1:9083/metrics | grep cincinnati_mh_signatures

Ctrl-C stops the stack.
EOT
wait
