#!/usr/bin/env bash
# Rollouts under attack (see docs/reliability.md#rollouts-under-attack):
# issue 36's attacks on rollout control, replayed by an outsider with only
# the public port, against engines of the demo data with a SQLite fleet
# store holding a real fleet's past, a policy file and rollout control:
# minted ids trying to become canaries and open the gate, fakes trying to
# halt a rollout (stuck, silent) and to starve a rate, 600 made-up
# architectures and channels against /v1/fleet/stuck and the probes, a
# random-id flood against the store's bounds, and a pause on a full store
# (a tmpfs filled up: run as root). Every target is enforced.
#
#   scripts/reliability/rollouts.sh [--real 500] [--halt-real 10000] [--minted 20]
#       [--mint-tries 5000000] [--rate-fakes 2000] [--rate-cap 20]
#       [--stuck-fakes 1000] [--silent-fakes 100] [--halt-seconds 15]
#       [--made-up 600] [--stuck-answer-ms 1000] [--flood-seconds 60]
#       [--flood-round 5000] [--new-per-hour 20000] [--only gates,flood,full-store]
set -euo pipefail
source "$(dirname "$0")/common.sh"
build_scenarios
"$BIN/reliability-rollouts" "$@"
