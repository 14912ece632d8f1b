#!/usr/bin/env bash
# Refreshes the explorer page's screenshots in docs/ (explorer-channel.png,
# explorer-release.png, explorer-path.png): the browser test takes them on
# the demo data in headless Chromium (scripts/install-test-deps.sh installs
# it) and writes them where EXPLORER_SCREENSHOTS says. Also prints how long
# the page took to draw stable-4.18, with the load average: the figure
# docs/policy-engine.md quotes.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "screenshots: load average $(cut -d' ' -f1-3 /proc/loadavg)"
EXPLORER_SCREENSHOTS="$PWD/docs" cargo nextest run -p e2e --no-capture \
    -E 'test(the_page_draws_plans_and_explains_what_the_library_answers)' 2>&1 |
    grep -E 'drawn in|PASS|FAIL'
ls -l docs/explorer-*.png
