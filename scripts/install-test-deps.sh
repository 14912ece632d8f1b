#!/usr/bin/env bash
# Installs the system packages that building and testing the workspace need
# and cargo cannot provide. Idempotent: installs only what is missing.
#   docker-registry        distribution's registry server, which
#                          registry-testkit starts for every registry test
#   pkg-config, libssl-dev OpenSSL headers for native-tls and openssl, the one TLS stack
set -euo pipefail

missing=()
command -v docker-registry >/dev/null 2>&1 || missing+=(docker-registry)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists openssl; then
    missing+=(libssl-dev)
fi

if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install-test-deps: missing ${missing[*]}; installing them needs root" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"

command -v docker-registry >/dev/null
pkg-config --exists openssl
