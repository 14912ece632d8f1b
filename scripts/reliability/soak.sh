#!/usr/bin/env bash
# Soak (see docs/reliability.md): an hour of constant load on engine B of a
# chain on the demo data, the graph changing every minute. Writes the
# per-window figures to docs/reliability-soak.csv and plots them into
# docs/reliability-soak.png (gnuplot, installed from Debian if missing).
#
#   scripts/reliability/soak.sh [--minutes 60] [--change-every 60] [--window 10] [--strict]
# Environment: SOAK_OUT (docs/reliability-soak; the .csv and .png paths without extension).
set -euo pipefail
source "$(dirname "$0")/common.sh"
install_debian gnuplot=gnuplot-nox
build_scenarios
out=${SOAK_OUT:-docs/reliability-soak}
status=0
"$BIN/reliability-soak" --csv "$out.csv" "$@" || status=$?
gnuplot -e "csv='$out.csv'; png='$out.png'" scripts/reliability/soak.gnuplot
echo "soak: plotted $out.png"
exit $status
