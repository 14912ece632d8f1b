#!/usr/bin/env bash
# A security review's attacks on request bodies (see docs/reliability.md):
# clients holding bodies on an engine's public port (9,000 by default), and
# clients posting 1 MiB alerts without a token to its status port (800),
# the engine's resident set sampled during each. With --before REV, an
# engine built from REV is attacked side by side with this one: REV's
# policy-engine is built once, in release, from `git archive REV`, into a
# cache outside the clone.
#
#   scripts/reliability/bodies.sh [--before REV] [--connections 9000]
#                                 [--status-connections 800] [--seconds 15]
set -euo pipefail
source "$(dirname "$0")/common.sh"
args=()
before=
while (($#)); do
    case $1 in
        --before)
            before=$2
            shift 2
            ;;
        *)
            args+=("$1")
            shift
            ;;
    esac
done
build_scenarios
if [[ -n $before ]]; then
    commit=$(git rev-parse --verify "$before^{commit}")
    cache=${RELIABILITY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cincinnati-reliability}/before-$commit
    if [[ ! -x $cache/bin/policy-engine ]]; then
        rm -rf "$cache/src"
        mkdir -p "$cache/src" "$cache/bin"
        git archive "$commit" | tar -x -C "$cache/src"
        # No .git in the archive: the commit is given, as image builds give it.
        (cd "$cache/src" && GIT_COMMIT=$commit cargo build --quiet --release --locked \
            -p policy-engine --target-dir "$cache/target")
        cp "$cache/target/release/policy-engine" "$cache/bin/"
    fi
    args+=(--before-bin "$cache/bin")
fi
"$BIN/reliability-bodies" "${args[@]}"
