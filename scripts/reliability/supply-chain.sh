#!/usr/bin/env bash
# Supply chain (see docs/reliability.md): `cargo deny check` against
# deny.toml — advisories, licences, duplicate major versions, sources.
#
# cargo-deny (pinned) comes from scripts/install-test-deps.sh. Licences, bans
# and sources need nothing from the network and always gate. Advisories need
# RustSec's database, a git repository on GitHub: it is fetched when it can
# be, and a copy fetched earlier is used (with its date) when it cannot. On a
# machine that reaches neither (one that reaches only package registries),
# the advisory check is skipped and the script says so loudly, last, rather
# than failing for want of network or passing as if it had run.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-test-deps.sh

databases=${CARGO_HOME:-$HOME/.cargo}/advisory-dbs
checks=(bans licenses sources)
advisories="advisories: checked against RustSec's database, fetched now"
if ! timeout 120 cargo deny fetch db >/dev/null 2>&1; then
    earlier=$(compgen -G "$databases/advisory-db-*/crates" | head -1 || true)
    if [[ -n $earlier ]]; then
        fetched=$(git -C "${earlier%/crates}" log -1 --format=%cs 2>/dev/null || echo "an unknown date")
        advisories="advisories: the database could not be fetched; checked against the copy of $fetched"
    else
        advisories=""
    fi
fi
[[ -n $advisories ]] && checks+=(advisories)

# Offline: the database was fetched above, and the other checks need nothing
# from the network.
cargo deny --offline --locked check --show-stats "${checks[@]}"

if [[ -n $advisories ]]; then
    echo "supply-chain: $advisories"
else
    cat >&2 <<'WARNING'
supply-chain: ************************************************************
supply-chain: ADVISORIES NOT CHECKED: RustSec's advisory database
supply-chain: (https://github.com/RustSec/advisory-db) cannot be fetched
supply-chain: from this machine and no earlier copy exists. Licences, bans
supply-chain: and sources passed; known vulnerabilities were NOT looked for.
supply-chain: Run `cargo deny check advisories` where GitHub is reachable.
supply-chain: ************************************************************
WARNING
fi
