#!/usr/bin/env bash
# Refreshes the explorer page's screenshots in docs/: explorer-channel.png,
# explorer-release.png, explorer-path.png and explorer-phased.png (a release
# phasing into a small channel) at 1600x1000, explorer-phone.png
# at 390x844 (a phone, twice the pixels). The browser test takes them on the
# demo data in headless Chromium (scripts/install-test-deps.sh installs it)
# and writes them where EXPLORER_SCREENSHOTS says, each once the page marks
# itself ready (<body data-state="ready">: everything asked of it drawn and
# answered), not after a fixed time. Also prints how long the page took to
# draw stable-4.18 at each size, with the load average: the figures
# docs/policy-engine.md quotes.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "screenshots: load average $(cut -d' ' -f1-3 /proc/loadavg)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! EXPLORER_SCREENSHOTS="$PWD/docs" cargo nextest run -p e2e --no-capture \
    -E 'test(the_page_draws_plans_and_explains_what_the_library_answers) | test(the_fleet_view_on_the_status_port) | test(a_phased_update_is_drawn_apart_from_an_offered_one)' >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "screenshots: the browser test failed (above); docs/ may hold some new screenshots" >&2
    exit 1
fi
grep -E 'releases, the drawing|PASS' "$log"
ls -l docs/explorer-channel.png docs/explorer-release.png docs/explorer-path.png docs/explorer-phased.png docs/explorer-phone.png \
    docs/explorer-fleet.png docs/explorer-fleet-phone.png
