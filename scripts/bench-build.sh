#!/usr/bin/env bash
# Measures a clean debug build of the whole workspace, all targets (what
# scripts/test.sh and CI compile): the wall time with the load average
# around it, and the slowest compilation units from `cargo build --timings`,
# which a busy machine distorts less than the total. See
# docs/benchmarks-build.md.
set -euo pipefail
cd "$(dirname "$0")/.."

target=$(mktemp -d)
trap 'rm -rf "$target"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
started=$SECONDS
CARGO_TARGET_DIR=$target cargo build --workspace --all-targets --timings --quiet
echo "wall: $((SECONDS - started)) s"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# The timing report embeds its units as JSON: `const UNIT_DATA = [...];`.
python3 - "$target/cargo-timings/cargo-timing.html" <<'PY'
import json, re, sys
html = open(sys.argv[1]).read()
units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S).group(1))
units.sort(key=lambda unit: unit["duration"], reverse=True)
print(f"{len(units)} units, {sum(unit['duration'] for unit in units):.0f} s summed")
for unit in units[:12]:
    print(f"{unit['duration']:7.1f} s  {unit['name']} {unit['version']} {unit.get('target', '').strip()}")
PY
