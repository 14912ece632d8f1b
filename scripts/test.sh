#!/usr/bin/env bash
# Runs every test of the workspace on a fresh machine: installs what the tests
# need (the local registry server, cargo-nextest), then runs the suite, then
# fails if the suite left a process running.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-test-deps.sh
if ! cargo nextest --version >/dev/null 2>&1; then
    cargo install --locked cargo-nextest
fi

# No process a test starts may outlive the suite (registries, PostgreSQL,
# Alertmanager, Prometheus, chromedriver and Chromium, the services). What
# runs now is noted (pid and start time, so nothing that ran before counts);
# every process the suite starts inherits a marker of this run; afterwards a
# process that carries the marker, or was orphaned in this session, fails
# the run, named and killed (process-testkit/src/leftovers.rs). It prints
# nothing when nothing is left, so the suite's summary closes the log.
leftover_processes() { cargo run --quiet --locked -p process-testkit --bin leftover-processes -- "$@"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
leftover_processes snapshot "$work/before"
marker="$$-$(date +%s%N)"

status=0
CINCINNATI_TEST_RUN=$marker cargo nextest run --workspace --all-targets --no-fail-fast "$@" || status=$?
leftover_processes check "$work/before" "$marker" || status=$?
exit "$status"
