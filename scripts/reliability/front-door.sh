#!/usr/bin/env bash
# The services' front door (see docs/reliability.md): the RFC 9112
# conformance cases, a pipelining flood and a storm of silent sockets against
# an engine on the demo data, directly and behind HAProxy and nginx (Debian's,
# keeping backend connections alive). Correctness targets are always
# enforced; the flood's latency targets with --strict.
#
#   scripts/reliability/front-door.sh [--flood-seconds 30] [--sockets 10000]
#                                     [--reopen-every 5] [--storm-seconds 20] [--strict]
set -euo pipefail
source "$(dirname "$0")/common.sh"
install_debian haproxy=haproxy nginx=nginx
build_scenarios
"$BIN/reliability-front-door" "$@"
