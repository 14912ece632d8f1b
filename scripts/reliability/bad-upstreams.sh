#!/usr/bin/env bash
# Bad upstreams (see docs/reliability.md): an engine whose upstream turns to
# garbage, a 1 GiB body, one byte a second, a redirect loop, 500s, a graph
# with a cycle and one with a dangling edge, and one whose HTTPS upstream
# starts presenting an untrusted certificate. Clients must keep the last
# good graph; /status and metrics must show each problem.
#
#   scripts/reliability/bad-upstreams.sh [--hold 10] [--strict]
set -euo pipefail
source "$(dirname "$0")/common.sh"
install_debian openssl=openssl
build_scenarios

# A CA the run trusts (and nothing else: SSL_CERT_FILE replaces the system
# store for every process of the run), a server certificate it signed, and a
# self-signed one it does not trust.
certificates=$(mktemp -d)
trap 'rm -rf "$certificates"' EXIT
(
    cd "$certificates"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=reliability-ca \
        -addext basicConstraints=critical,CA:TRUE -keyout ca.key -out ca.pem 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout good.key -out good.csr 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >good.ext
    openssl x509 -req -in good.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
        -extfile good.ext -out good.pem 2>/dev/null
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 -keyout rogue.key -out rogue.pem 2>/dev/null
)
export SSL_CERT_FILE=$certificates/ca.pem
unset SSL_CERT_DIR
"$BIN/reliability-bad-upstreams" --tls-certificates "$certificates" "$@"
