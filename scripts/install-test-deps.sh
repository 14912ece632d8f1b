#!/usr/bin/env bash
# Installs what building and testing the workspace need and cargo's build
# cannot provide. Idempotent: installs only what is missing.
#   docker-registry        distribution's registry server, which
#                          registry-testkit starts for every registry test
#   postgresql             the PostgreSQL server (initdb, postgres), which
#                          postgres-testkit starts for every PostgreSQL test (as
#                          the `postgres` user it creates, under root; with
#                          util-linux's setpriv, always installed)
#   pkg-config, libssl-dev OpenSSL headers for native-tls and openssl, the one TLS stack
#   prometheus-alertmanager, prometheus  Alertmanager and Prometheus, which
#                          prometheus-testkit starts for the tests of the
#                          policy-engine's Alertmanager webhook and halt queries
#   graphviz               `dot`, which must accept what `cincinnati render` draws
#   chromium, chromium-driver  the headless browser and its WebDriver server the
#                          update graph explorer's browser tests drive
#   cargo-deny (pinned)    the supply-chain check (scripts/reliability/supply-chain.sh)
set -euo pipefail

CARGO_DENY_VERSION=0.20.2

# Debian installs each major version's server programs in /usr/lib/postgresql/N/bin.
has_postgresql_server() {
    compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

install_system_packages() {
    local missing=()
    command -v docker-registry >/dev/null 2>&1 || missing+=(docker-registry)
    has_postgresql_server || missing+=(postgresql)
    command -v prometheus-alertmanager >/dev/null 2>&1 || command -v alertmanager >/dev/null 2>&1 ||
        missing+=(prometheus-alertmanager)
    command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
    command -v dot >/dev/null 2>&1 || missing+=(graphviz)
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists openssl; then
        missing+=(libssl-dev)
    fi
    ((${#missing[@]})) || return 0

    if [ "$(id -u)" -ne 0 ]; then
        echo "install-test-deps: missing ${missing[*]}; installing them needs root" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
    command -v docker-registry >/dev/null
    has_postgresql_server
    command -v prometheus-alertmanager >/dev/null || command -v alertmanager >/dev/null
    command -v prometheus >/dev/null
    command -v dot >/dev/null
    command -v chromium >/dev/null
    command -v chromedriver >/dev/null
    pkg-config --exists openssl
}

# Built from crates.io with its own lockfile (--locked): minutes, once per
# machine; ~/.cargo/bin outlives the clone.
install_cargo_deny() {
    [[ $(cargo deny --version 2>/dev/null) == "cargo-deny $CARGO_DENY_VERSION" ]] && return 0
    echo "install-test-deps: building cargo-deny $CARGO_DENY_VERSION (once per machine)"
    cargo install --quiet --locked "cargo-deny@$CARGO_DENY_VERSION"
}

install_system_packages
install_cargo_deny
