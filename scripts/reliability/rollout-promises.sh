#!/usr/bin/env bash
# Rollout promises, long (see docs/reliability.md): the model-based test of
# policy-engine/tests/api/rollout_promises.rs (two engines sharing a store,
# operators and Alertmanager changing rollouts, restarts, the store going
# away), on a long seeded run on SQLite and on PostgreSQL. The suite runs a
# short one (16 steps, a fixed seed); a failing run prints its seed, and
# the same STEPS and SEED replay it.
#
#   scripts/reliability/rollout-promises.sh [STEPS] [SEED]   (default 400, a random seed)
set -euo pipefail
cd "$(dirname "$0")/../.."
steps=${1:-400}
seed=${2:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}
echo "rollout-promises: $steps steps, seed $seed"
started=$SECONDS
ROLLOUT_PROMISES_STEPS=$steps ROLLOUT_PROMISES_SEED=$seed \
    cargo test --quiet -p policy-engine --test api -- rollout_promises --nocapture
echo "rollout-promises: $steps steps on each store held every promise in $((SECONDS - started)) s (seed $seed)"
