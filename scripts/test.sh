#!/usr/bin/env bash
# Runs every test of the workspace on a fresh machine: installs what the tests
# need (the local registry server, cargo-nextest), then runs the suite.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-test-deps.sh
if ! cargo nextest --version >/dev/null 2>&1; then
    cargo install --locked cargo-nextest
fi

cargo nextest run --workspace --all-targets --no-fail-fast "$@"
