#!/usr/bin/env bash
# Measures building and linking the test binaries (`cargo nextest run
# --workspace --no-run`) with everything else up to date, twice: after
# touching every integration-test source (each test binary recompiled from
# its incremental cache and linked again), and after also deleting those
# binaries' incremental caches (each compiled from scratch and linked).
# Prints each wall time with the load average around it (the machine is
# shared). See docs/benchmarks-build.md.
set -euo pipefail
cd "$(dirname "$0")/.."

target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
# The integration-test targets' crate names, as their incremental caches are named.
tests=$(cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
packages = json.load(sys.stdin)["packages"]
print(" ".join(sorted({t["name"].replace("-", "_") for p in packages for t in p["targets"] if "test" in t["kind"]})))')
mapfile -t sources < <(git ls-files '*/tests/*.rs')

build() { cargo nextest run --workspace --no-run >/dev/null 2>&1; }
measure() {
    local load_before started
    load_before=$(cut -d' ' -f1-3 /proc/loadavg)
    started=$(date +%s.%N)
    build
    printf '%-28s %6.1f s  (load average before: %s, after: %s)\n' "$1" \
        "$(echo "$(date +%s.%N) - $started" | bc)" "$load_before" "$(cut -d' ' -f1-3 /proc/loadavg)"
}

build
echo "integration-test binaries: $(git ls-files '*/tests/*.rs' '*/tests/*/main.rs' |
    grep -Ec '/tests/[^/]+\.rs$|/tests/[^/]+/main\.rs$')"
touch "${sources[@]}"
measure "relink (sources touched)"
touch "${sources[@]}"
for test in $tests; do rm -rf "$target"/debug/incremental/"$test"-*; done
measure "cold (caches deleted)"
