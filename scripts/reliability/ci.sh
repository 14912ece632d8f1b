#!/usr/bin/env bash
# The short version of every reliability scenario, for CI (.ci/run): seconds
# each, on the debug build the tests use, so that a regression fails the
# build. The full runs are by hand (docs/reliability.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PROFILE=debug
started=$SECONDS
timings=()
run() { # name command...
    local name=$1 began=$SECONDS
    shift
    echo "reliability-ci: $name"
    "$@"
    timings+=("$name $((SECONDS - began)) s")
}

soak=$(mktemp -d)
trap 'rm -rf "$soak"' EXIT
run supply-chain scripts/reliability/supply-chain.sh
# The instrumented build outlives the clone, as check-deploy's tools do.
cache=${RELIABILITY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cincinnati-reliability}
run fuzz env FUZZ_TARGET_DIR="$cache/fuzz-target" scripts/reliability/fuzz.sh "${FUZZ_SECONDS:-10}"
run chaos scripts/reliability/chaos.sh --seconds 15
run bad-upstreams scripts/reliability/bad-upstreams.sh --hold 2
run storm scripts/reliability/storm.sh --idle 1000 --beyond 100 --slowloris 100 --channels 100 --ids 2000 --seconds 5 --settle 2
run contract scripts/reliability/contract.sh 15
run front-door scripts/reliability/front-door.sh --flood-seconds 5 --sockets 1000 --reopen-every 2 --storm-seconds 5
run bodies scripts/reliability/bodies.sh --connections 1000 --status-connections 300 --seconds 5
run rollouts scripts/reliability/rollouts.sh --real 30 --halt-real 300 --minted 3 --mint-tries 20000 --rate-fakes 20 --rate-cap 5 --stuck-fakes 50 --silent-fakes 20 --halt-seconds 1 --made-up 60 --stuck-answer-ms 5000 --flood-seconds 2 --flood-round 200 --new-per-hour 200
run soak env SOAK_OUT="$soak/soak" scripts/reliability/soak.sh --minutes 1 --change-every 15 --window 5
echo "reliability-ci: every scenario passed in $((SECONDS - started)) s (${timings[*]})"
