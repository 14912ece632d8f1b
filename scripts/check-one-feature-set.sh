#!/usr/bin/env bash
# Checks that the builds the repository runs share one feature set, so that
# no dependency is compiled twice with different features:
#   - the services the e2e harness builds (e2e/src/binaries.rs) are a subset
#     of what the test suite (scripts/test.sh) builds, in the dev profile;
#   - the services the demo builds (scripts/demo.sh) are a subset of the
#     release build of the whole workspace (README).
# Cargo resolves features per selection of packages, so `-p a -p b` can turn
# on other features than `--workspace`; the workspace-hack crate (managed by
# cargo-hakari, see docs/ARCHITECTURE.md) pins one union for every selection.
# Compares cargo's unit graphs (resolution only, nothing is built; the flag
# is unstable, hence RUSTC_BOOTSTRAP).
set -euo pipefail
cd "$(dirname "$0")/.."

units() { RUSTC_BOOTSTRAP=1 cargo build --locked --unit-graph -Z unstable-options "$@"; }
# What e2e/src/binaries.rs (SERVICES) and scripts/demo.sh build.
e2e=(-p graph-builder -p policy-engine -p metadata-helper)
demo=("${e2e[@]}" -p cincinnati-cli)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
units "${e2e[@]}" >"$work/e2e.json"
units --workspace --all-targets >"$work/tests.json"
units --release "${demo[@]}" >"$work/demo.json"
units --release --workspace >"$work/release.json"

python3 - "$work" <<'PY'
import json, sys

def third_party_units(path):
    """(package, features, mode) of every unit cargo would build from crates.io."""
    units = json.load(open(path))["units"]
    return {(u["pkg_id"].split("#")[-1], ",".join(sorted(u["features"])), u["mode"])
            for u in units if not u["pkg_id"].startswith("path+")}

work = sys.argv[1]
failed = False
for part, whole, what in [("e2e", "tests", "the e2e harness's service build vs the test suite's"),
                          ("demo", "release", "the demo's release build vs the workspace's")]:
    extra = sorted(third_party_units(f"{work}/{part}.json") - third_party_units(f"{work}/{whole}.json"))
    if extra:
        failed = True
        print(f"{what}: {len(extra)} dependencies built with other features:")
        for package, features, mode in extra:
            print(f"  {package} [{features}] ({mode})")
    else:
        print(f"{what}: one feature set")
if failed:
    print("run `cargo hakari generate && cargo hakari manage-deps` (cargo install --locked cargo-hakari)")
    sys.exit(1)
PY
