#!/usr/bin/env bash
# Chaos (see docs/reliability.md): 64 connections load engine B of a chain
# (registry → graph-builder → engine A → engine B) for 60 s while the
# registry is killed and restarted twice, the graph-builder once and
# engine A once. Prints requests, non-2xx, socket errors, the smallest graph
# served and each fault's recovery time; fails when an enforced target is
# missed.
#
#   scripts/reliability/chaos.sh [--seconds 60] [--connections 64] [--strict]
set -euo pipefail
source "$(dirname "$0")/common.sh"
build_scenarios
"$BIN/reliability-chaos" "$@"
