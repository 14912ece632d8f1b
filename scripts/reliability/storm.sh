#!/usr/bin/env bash
# Connection storms and slow clients (see docs/reliability.md) against engine
# B of a chain on the demo data: 10,000 idle keep-alive connections plus 64
# active ones (B's connection limit), 1,000 more beyond the limit, 1,000
# slowloris connections, 100,000 made-up channel names, 100,000 made-up
# cluster ids recorded in B's fleet store. Prints p99, refusals, RSS before,
# during and after, and what the store kept; every target is enforced
# (issue 13's memory targets included).
#
#   scripts/reliability/storm.sh [--idle 10000] [--beyond 1000] [--slowloris 1000]
#                                [--channels 100000] [--ids 100000] [--seconds 20] [--settle 60]
set -euo pipefail
source "$(dirname "$0")/common.sh"
build_scenarios
"$BIN/reliability-storm" "$@"
