# Sourced by the scenario scripts of scripts/reliability/: installs what the
# scenarios need (Debian's wrk, the registry the e2e stack runs), builds the
# services and the scenario binaries, and points the scenarios at them.
#
# Environment: PROFILE (release; CI uses debug, the build the tests made).

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
PROFILE=${PROFILE:-release}

# Installs Debian packages by command name, only those missing.
install_debian() { # command=package ...
    local missing=() pair
    for pair in "$@"; do
        command -v "${pair%%=*}" >/dev/null || missing+=("${pair#*=}")
    done
    if ((${#missing[@]})); then
        local sudo
        sudo=$([[ $(id -u) -eq 0 ]] || echo sudo)
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

# Builds the services and the scenario binaries; sets BIN to their directory.
build_scenarios() {
    scripts/install-test-deps.sh
    install_debian wrk=wrk
    local flag=()
    [[ $PROFILE == release ]] && flag=(--release)
    cargo build --quiet "${flag[@]}" -p graph-builder -p policy-engine -p reliability
    local target_dir
    target_dir=$(cargo metadata --format-version 1 --no-deps --offline |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    BIN=$target_dir/$PROFILE
    export E2E_BIN_DIR=$BIN
    # Every connection of a storm is a descriptor, in the scenario and in the engine.
    ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
}
