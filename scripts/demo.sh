#!/usr/bin/env bash
# Starts the service stack on the bundled default data (offline):
#   graph-builder            :8080 (Graph API), :8090 (graph-data), :9080 (status);
#                            graph-data: testdata/graph-data with the overlay
#                            testdata/graph-data-phased (schema 2.0.0, stable-4.20
#                            phases 4.20.33 in), assembled in a temporary copy
#   policy-engine "public"   :8081, status :9081, upstream: the graph-builder
#   policy-engine "cluster"  :8082, status :9082, upstream: the public engine,
#                            per-cluster policy: deploy/demo/policy.yaml, rollout
#                            control with the tokens of deploy/demo/tokens
#   metadata-helper          :8083, status :9083, signatures: testdata/demo/signatures
#     (upstream's default ports are 8082/9082, which the cluster engine has here)
# then prints commands to try. Ctrl-C stops everything.
#
# scripts/demo.sh --check (CI runs it): the same stack and the same printed
# commands, then runs every command exactly as printed, as a person's shell
# runs it (no pipefail), checks that each exits and answers as the demo says,
# that the services' logs (in a temporary directory) are plain text, that
# the commands recorded no update check (operators' questions are not the
# clusters'), and stops everything.
#
# Environment: PROFILE (release; debug runs the build the tests make, as CI
# does: no release build).
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
case "${1:-}" in
    --check) check=true ;;
    "") ;;
    *)
        echo "usage: scripts/demo.sh [--check]" >&2
        exit 2
        ;;
esac
profile=${PROFILE:-release}
case $profile in
    release) build=(--release) ;;
    debug) build=() ;;
    *)
        echo "demo: PROFILE is release or debug, not $profile" >&2
        exit 2
        ;;
esac
started=$SECONDS

ports=(8080 8081 8082 8083 8090 9080 9081 9082 9083)
for port in "${ports[@]}"; do
    # A port in use would leave a new service dead and the old one answering.
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        echo "demo: port $port is in use (another demo running?)" >&2
        exit 1
    fi
done

cargo build "${build[@]}" -p graph-builder -p policy-engine -p metadata-helper -p cincinnati-cli
bin=${CARGO_TARGET_DIR:-target}/$profile
prefix=/api/upgrades_info
pids=()
# The services log to the terminal; in a check, to files (shown on failure).
logs=
$check && logs=$(mktemp -d)
fleet=
graph_data=
stop() {
    kill "${pids[@]}" 2>/dev/null || true
    wait 2>/dev/null || true
    [[ -z $logs ]] || rm -rf "$logs"
    [[ -z $fleet ]] || rm -rf "$fleet"
    [[ -z $graph_data ]] || rm -rf "$graph_data"
}
trap stop EXIT
trap 'exit 130' INT TERM
service() { # name command...
    local name=$1
    shift
    if [[ -n $logs ]]; then
        "$@" 2>"$logs/$name.log" &
    else
        "$@" &
    fi
    pids+=($!)
}

# The bundled graph-data stays as published (schema 1.1.0); the demo serves
# a copy with one channel phased (schema 2.0.0): the overlay's files replace
# the copy's.
graph_data=$(mktemp -d)
cp -R testdata/graph-data "$graph_data/graph-data"
cp -R testdata/graph-data-phased/. "$graph_data/graph-data/"
sed "s|\"testdata/graph-data\"|\"$graph_data/graph-data\"|" deploy/demo/graph-builder.toml >"$graph_data/graph-builder.toml"
service graph-builder "$bin/graph-builder" -c "$graph_data/graph-builder.toml"
service public-engine "$bin/policy-engine" -v --service.port 8081 --status.port 9081 --service.path_prefix "$prefix" \
    --service.mandatory_client_parameters channel \
    --upstream.cincinnati.url "http://127.0.0.1:8080$prefix/graph"
# The in-cluster engine records its clusters' update checks (docs/fleet.md)
# in a SQLite file that lives as long as the demo.
fleet=$(mktemp -d)
service cluster-engine "$bin/policy-engine" -v --service.port 8082 --status.port 9082 --service.path_prefix "$prefix" \
    --service.mandatory_client_parameters channel \
    --upstream.cincinnati.url "http://127.0.0.1:8081$prefix/graph" \
    --cluster_policy.file deploy/demo/policy.yaml \
    --fleet.store "sqlite://$fleet/fleet.db" \
    --rollouts.token_file deploy/demo/tokens
service metadata-helper "$bin/metadata-helper" -v --service.port 8083 --status.port 9083 --service.path_prefix "$prefix" \
    --signatures.dir testdata/demo/signatures

wait_ready() {
    for _ in $(seq 1 600); do
        if curl -fs -o /dev/null "$1"; then return 0; fi
        for pid in "${pids[@]}"; do
            if ! kill -0 "$pid" 2>/dev/null; then
                echo "demo: a service stopped before $1 was ready" >&2
                return 1
            fi
        done
        sleep 0.2
    done
    echo "demo: $1 did not become ready" >&2
    return 1
}
wait_ready http://127.0.0.1:9080/readiness
wait_ready http://127.0.0.1:9081/readyz
wait_ready http://127.0.0.1:9082/readyz
wait_ready http://127.0.0.1:9083/readyz
ready=$((SECONDS - started))

# A signed release: its digest names its directory in the signature tree.
# (sed, not head: head would close the pipe early, and pipefail would stop the script)
signed=$(find testdata/demo/signatures/sha256 -name signature-1 | sort | sed -n 1p)
digest=$(basename "$(dirname "$signed")")

# The rollout of 4.18.52 (deploy/demo/policy.yaml) as it stands, from the
# engine's explanation for a cluster: how far the rollout has gone, the
# cluster's place in it, and whether it is offered 4.18.52 (inside: its
# place is below the progress).
rollout() { # id -> "<progress>% <place>% <inside: yes|no>"
    curl -fs "http://127.0.0.1:9082$prefix/v1/explain-cluster?channel=stable-4.18&arch=amd64&version=4.18.51&id=$1" |
        python3 -c 'import json, sys
e = json.load(sys.stdin)
r = next(r for r in e["rollouts"] if r["target"] == "4.18.52")
print("%.1f%% %.1f%% %s" % (r["progress"], e["placePercent"], "yes" if r["offered"] else "no"))'
}
# A few simulated clusters, so the fleet view is not empty: 60 clusters ask
# the in-cluster engine as the CVO does, on 4.18.40, 4.18.45 and 4.18.51;
# those on 4.18.51 the rollout offers 4.18.52 to take it and ask again.
simulate_fleet() {
    python3 - "http://127.0.0.1:8082$prefix/graph" <<'PY'
import json, sys, urllib.request
url = sys.argv[1]
def ask(n, version):
    id = "dec0de00-%04x-4a11-8b22-0123456789ab" % n
    query = "?channel=stable-4.18&arch=amd64&version=%s&id=%s" % (version, id)
    request = urllib.request.Request(url + query, headers={"Accept": "application/json"})
    with urllib.request.urlopen(request) as answer:
        graph = json.load(answer)
    versions = [node["version"] for node in graph["nodes"]]
    return {versions[b] for a, b in graph["edges"] if versions[a] == version}
checks = 0
for n in range(60):
    version = ("4.18.40", "4.18.45", "4.18.51")[n % 3]
    offered = ask(n, version)
    checks += 1
    if version == "4.18.51" and "4.18.52" in offered:
        ask(n, "4.18.52")
        checks += 1
print(checks)
PY
}
checks=$(simulate_fleet) || { echo "demo: the simulated clusters were not answered" >&2; exit 1; }
# Written within a second (fleet.flush_interval_ms); wait for all of them.
for _ in $(seq 1 100); do
    written=$(curl -fs http://127.0.0.1:9082/status | python3 -c 'import json, sys; print(json.load(sys.stdin)["fleet"]["recorder"]["written"])')
    [[ $written -ge $checks ]] && break
    sleep 0.1
done

first=c0ffee00-0000-4a11-8b22-0123456789ab
second=c0ffee00-0001-4a11-8b22-0123456789ab
no_figures() { echo "demo: the in-cluster engine did not explain the rollout of 4.18.52" >&2; exit 1; }
read -r progress first_place first_inside < <(rollout "$first") || no_figures
read -r _ second_place second_inside < <(rollout "$second") || no_figures

# Each example: what it shows (comments), the command as printed, and, for
# the check, the exit code it must end with and a regex its output (stdout
# and stderr) must match.
commands=() codes=() claims=()
note() { printf '  # %s\n' "$@"; }
example() { # exit-code output-regex command
    codes+=("$1")
    claims+=("$2")
    commands+=("$3")
    printf '  %s\n' "$3"
}

explorer="http://127.0.0.1:8081$prefix/?channel=stable-4.18&arch=amd64"
cat <<EOT

The stack is up. Open the update graph explorer of the public engine (or of
the in-cluster one, on 8082, which asks the public one) at
  $explorer

or try:

EOT
note "the in-cluster engine (chained: cluster -> public -> graph-builder)"
example 0 '^\{"version":1,"nodes":\[\{"version":"4\..*stable-4\.18' \
    "curl -s 'http://127.0.0.1:8082$prefix/graph?channel=stable-4.18&arch=amd64' -H 'Accept: application/json' | head -c 600; echo"
cli="$bin/cincinnati --url http://127.0.0.1:8082$prefix/graph"
note "per-cluster policy (deploy/demo/policy.yaml): two clusters at 4.18.51 ask as" \
    "the CVO asks. 4.18.52 is rolling out, now to $progress of the fleet: a cluster" \
    "is offered it once the rollout passes its place, here $first_place and $second_place" \
    "(no id: the default, last in every rollout)"
for cluster in "$first $first_inside" "$second $second_inside"; do
    read -r id inside <<<"$cluster"
    if [[ $inside == yes ]]; then
        example 0 '^  4\.18\.52  ' "$cli updates --channel stable-4.18 --version 4.18.51 --id $id"
    else
        # 4.18.52 is 4.18.51's only update in stable-4.18.
        example 1 '^No recommended updates' "$cli updates --channel stable-4.18 --version 4.18.51 --id $id"
    fi
done
note "why: groups, rollout places, which rule removed which update, production's" \
    "own risk on 4.18.44 (status port only)"
example 0 '"groups":\["production"\].*"max_version":"4\.18\.45"' \
    "curl -s 'http://127.0.0.1:9082$prefix/v1/explain-cluster?channel=stable-4.18&arch=amd64&version=4.18.40&id=5ca1ab1e-0000-4000-8000-00000000d0e5'; echo"
token() { awk -v name="$1" '$1 == name {print $2}' deploy/demo/tokens; }
note "the fleet view (docs/fleet.md, status port only, with a token of" \
    "deploy/demo/tokens): what the in-cluster engine's clusters run, and how the" \
    "rollout of 4.18.52 moves them"
example 0 '"kind":"FleetVersions".*"version":"4\.18\.52"' \
    "curl -s -H 'Authorization: Bearer $(token ops)' 'http://127.0.0.1:9082$prefix/v1/fleet/versions'; echo"
example 0 '"target":"4\.18\.52".*"arrived":[1-9]' \
    "curl -s -H 'Authorization: Bearer $(token ops)' 'http://127.0.0.1:9082$prefix/v1/fleet/rollouts'; echo"
example 0 '4\.18\.52' "$cli fleet --token-file deploy/demo/tokens rollouts"
note "rollout control (docs/policy-engine.md#rollouts-under-run-time-control): an" \
    "incident on 4.18.52. Pause it: nobody new is offered it; explain says why to a" \
    "cluster outside; resume where it stopped; the history says who did what"
example 0 'paused at [0-9.]+% by ops' \
    "$cli rollout --token-file deploy/demo/tokens pause 4.18.52 --reason 'storage alarms on 4.18.52'"
example 1 'paused at [0-9.]+% by ops' \
    "$cli explain --channel stable-4.18 --from 4.18.51 --to 4.18.52 --id $second"
example 0 '4\.18\.52: ' \
    "$cli rollout --token-file deploy/demo/tokens resume 4.18.52 --reason 'firmware 7.2 shipped'"
note "Alertmanager's webhook pauses it too (a token of scope pause), once however" \
    "often the alert is sent"
example 0 '"outcome":"paused"' \
    "curl -s -X POST -H 'Authorization: Bearer $(token alertmanager)' -H 'Content-Type: application/json' \\
      'http://127.0.0.1:9082$prefix/v1/alerts/alertmanager' -d '{\"version\": \"4\", \"alerts\": [{
        \"status\": \"firing\", \"fingerprint\": \"3f2a9c1d0b7e4a55\",
        \"labels\": {\"alertname\": \"UpdatedClustersDegraded\", \"rollout_target\": \"4.18.52\"},
        \"annotations\": {\"summary\": \"5 clusters on 4.18.52 report degraded operators\"}}]}'; echo"
example 0 'resume +4\.18\.52 +ops|4\.18\.52 +resume +ops' "$cli rollout --token-file deploy/demo/tokens history 4.18.52"
# Places (rollout-model/src/place.rs): 7.03% for this id, 71.29% for $second.
phased_early=c0ffee00-0004-4a11-8b22-0123456789ab
note "graph-data's phased rollout (testdata/graph-data-phased, schema 2.0.0): stable-4.20" \
    "phases 4.20.33 in over ten years from 2025-01-01, and the public engine offers it" \
    "to each cluster from its own moment, start + place x P10Y. Of two clusters at" \
    "4.20.32, one is offered it already (place 7.03%), the other not before 2032 (71.29%);" \
    "the gauge is the share of clusters offered each phased update"
example 0 'offered to this cluster from 2025-[^ ]+ \(phased rollout of 4\.20\.33 in stable-4\.20, P10Y from 2025-01-01' \
    "$bin/cincinnati --url http://127.0.0.1:8081$prefix/graph explain --channel stable-4.20 --from 4.20.32 --to 4.20.33 --id $phased_early"
example 1 'is to be offered to this cluster from 2032-[^ ]+ \(phased rollout of 4\.20\.33 in stable-4\.20, P10Y' \
    "$bin/cincinnati --url http://127.0.0.1:8081$prefix/graph explain --channel stable-4.20 --from 4.20.32 --to 4.20.33 --id $second"
example 0 '^cincinnati_pe_phased_update_rollout\{channel="stable-4\.20",from="4\.20\.32",to="4\.20\.33"\} 0\.[0-9]' \
    "curl -s http://127.0.0.1:9081/metrics | grep phased_update_rollout"
note "the public engine, multi-arch releases, gzip"
example 0 '^\{"version":1,"nodes":\[.*candidate-4\.19.*"multi"' \
    "curl -s --compressed 'http://127.0.0.1:8081$prefix/graph?channel=candidate-4.19&arch=multi' | head -c 600; echo"
note "an error: a channel name that is not valid"
example 0 '^\{"kind":"invalid_params","value":"invalid client parameters: channel .Stable.' \
    "curl -s 'http://127.0.0.1:8081$prefix/graph?channel=Stable'; echo"
note "the full graph and the graph-data in use"
example 0 '^\{"nodes":\[\{"version":"[^"]+\+amd64"' "curl -s 'http://127.0.0.1:8080$prefix/graph' | head -c 300; echo"
example 0 '^channels/$' "curl -s 'http://127.0.0.1:8090$prefix/graph-data' | tar tz | head"
note "the command-line client (docs/cli.md): an update path, asking the in-cluster" \
    "engine one channel at a time as clusters do; why an update is not offered"
example 0 '4\.16\.40 → 4\.18\.40 on fast \(amd64\): [0-9]+ updates' \
    "$cli path --from 4.16.40 --to 4.18.40 --tier fast"
example 1 'blocked-edges/4\.9\.38\.yaml' \
    "$bin/cincinnati --url http://127.0.0.1:8080$prefix/graph explain --channel stable-4.9 --from 4.9.37 --to 4.9.38 \\
      --graph-data http://127.0.0.1:8090$prefix/graph-data"
note "a release signature, as a disconnected cluster's CVO fetches it (signature-1," \
    "-2, ... until the first 404)"
example 0 '^HTTP/1\.1 200 OK' "curl -sI 'http://127.0.0.1:8083$prefix/signatures/sha256=$digest/signature-1'"
example 0 '^\{"kind":"does_not_exist"' "curl -s 'http://127.0.0.1:8083$prefix/signatures/sha256=$digest/signature-9'; echo"
note "what it signs, checked with the demo key's public half as the CVO checks it"
example 0 "^Release sha256:$digest: verified" \
    "$bin/cincinnati signatures verify --store http://127.0.0.1:8083$prefix/signatures \\
      --keyring testdata/demo/signing-key.asc --release sha256:$digest"
note "status and metrics"
example 0 '^\{"graph":\{' "curl -s http://127.0.0.1:9080/status | head -c 800; echo"
example 0 '^cincinnati_pe_' "curl -s http://127.0.0.1:9081/metrics | grep cincinnati_pe_"
example 0 '^cincinnati_mh_signatures_digests [1-9]' "curl -s http://127.0.0.1:9083/metrics | grep cincinnati_mh_signatures"

if ! $check; then
    printf '\nCtrl-C stops the stack.\n'
    wait
    exit
fi

# The check: every command as printed, in a shell of its own.
printf '\ndemo check: the stack was ready in %d s; running the %d commands as printed\n' \
    "$ready" "${#commands[@]}"
failures=0
failed() { # what output
    echo "demo check: FAILED: $1" >&2
    printf '%s\n' "$2" | sed -n 1,40p | sed 's/^/    /' >&2
    failures=$((failures + 1))
}
# Update checks the in-cluster engine took to record (the simulated
# clusters'): the commands below are operators' questions, never recorded.
recorded() { curl -fs http://127.0.0.1:9082/metrics | awk '$1 == "cincinnati_pe_fleet_checks_total{outcome=\"queued\"}" {print $2}'; }
recorded_before=$(recorded)
page=$(curl -s -w '%{http_code}' "$explorer")
[[ $page == *"<html"*200 ]] || failed "the explorer page $explorer" "${page: -200}"
for i in "${!commands[@]}"; do
    command=${commands[$i]}
    set +e
    output=$(timeout 120 bash -c "$command" 2>&1)
    code=$?
    set -e
    if [[ $code != "${codes[$i]}" ]]; then
        failed "exit $code instead of ${codes[$i]}: $command" "$output"
    elif ! grep -Eq -- "${claims[$i]}" <<<"$output"; then
        failed "no line matches /${claims[$i]}/: $command" "$output"
    else
        echo "demo check: ok (exit $code): ${command%%$'\n'*}"
    fi
done
recorded_after=$(recorded)
if [[ $recorded_after != "$recorded_before" ]]; then
    failed "the commands recorded update checks ($recorded_before before, $recorded_after after)" ""
fi
for log in "$logs"/*.log; do
    if grep -q $'\x1b' "$log"; then
        failed "$(basename "$log") has terminal colour codes though written to a file" "$(sed -n 1,3p "$log")"
    fi
done
if ((failures)); then
    for log in "$logs"/*.log; do
        echo "--- $(basename "$log") (last lines)" >&2
        tail -n 20 "$log" >&2
    done
    echo "demo check: $failures of $((${#commands[@]} + 1)) checks failed" >&2
    exit 1
fi
echo "demo check: the explorer page and all ${#commands[@]} commands answered as printed, logs plain;" \
    "$((SECONDS - started)) s in all ($profile build)"
