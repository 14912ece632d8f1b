#!/usr/bin/env bash
# Coverage-guided fuzzing (see docs/reliability.md): libFuzzer through
# cargo-fuzz on every parser of untrusted input (fuzz/fuzz_targets/), each
# for SECONDS (default 1800), from seed corpora made of testdata/ and the
# workspace's own image and signing tools, plus whatever earlier runs kept in
# fuzz/corpus/. Prints executions, corpus size and crashes per target; a
# crash's input is left in fuzz/artifacts/<target>/ and fails the run.
#
#   scripts/reliability/fuzz.sh [SECONDS] [TARGET ...]
#
# Runs on the stable toolchain without a sanitizer (the only toolchain a
# fresh machine has; our code forbids unsafe, so the findings are panics,
# overflows with debug assertions on, hangs and memory blow-ups). With a
# nightly toolchain, SANITIZER=address adds AddressSanitizer.
#
# Environment: SANITIZER (none); FUZZ_TARGET_DIR (fuzz/target; CI keeps it in
# a cache outside the clone, so the instrumented build is not redone each
# run). Release builds only: a debug build takes half the CPU time to build
# but runs the YAML and tarball targets at under ten inputs a second, too
# slow even to replay the seeds in CI's seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-1800}
shift || true

CARGO_FUZZ_VERSION=0.13.2
SANITIZER=${SANITIZER:-none}
toolchain=+stable
[[ $SANITIZER == none ]] || toolchain=+nightly
if [[ $(cargo fuzz --version 2>/dev/null) != "cargo-fuzz $CARGO_FUZZ_VERSION" ]]; then
    cargo install --quiet --locked "cargo-fuzz@$CARGO_FUZZ_VERSION"
fi
scripts/install-test-deps.sh # OpenSSL headers, for the services' crates

# The fuzz crate is a workspace of its own; start from the workspace's lock so
# both build the same versions.
cp Cargo.lock fuzz/Cargo.lock
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
cargo build --quiet -p reliability --bin reliability-fuzz-seeds
"$(cargo metadata --format-version 1 --no-deps --offline |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug/reliability-fuzz-seeds" "$seeds"

target_dir=$(realpath -m "${FUZZ_TARGET_DIR:-fuzz/target}")
build=(--sanitizer "$SANITIZER" --target-dir "$target_dir")
cd fuzz
cargo "$toolchain" fuzz build "${build[@]}"
targets=("$@")
((${#targets[@]})) || mapfile -t targets < <(cargo "$toolchain" fuzz list)

rows=() crashed=()
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target" "artifacts/$target"
    log=$seeds/$target.log
    status=ok
    # The libFuzzer binary itself: `cargo fuzz run` would check the build again
    # for every target.
    "$target_dir/x86_64-unknown-linux-gnu/release/$target" "corpus/$target" "$seeds/$target" \
        -artifact_prefix="artifacts/$target/" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1 ||
        status=CRASH
    executions=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    per_second=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    corpus=$(find "corpus/$target" -type f | wc -l)
    if [[ $status == CRASH ]]; then
        crashed+=("$target")
        status="**crash**: $(ls -t "artifacts/$target" 2>/dev/null | head -1)"
        grep -m1 -A8 -E "panicked|ERROR: libFuzzer" "$log" >&2 || tail -20 "$log" >&2
    fi
    rows+=("| \`$target\` | ${seconds} s | $executions | $per_second | $corpus | $status |")
    echo "fuzz: $target: $executions executions, $status"
done

echo
echo "## fuzz — $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), sanitizer $SANITIZER"
echo
echo "| target | time | executions | exec/s | corpus | result |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
if ((${#crashed[@]})); then
    echo "fuzz: CRASHES in ${crashed[*]}: reproduce with \`cd fuzz && cargo $toolchain fuzz run ${build[*]} <target> artifacts/<target>/<file>\`"
    exit 1
fi
