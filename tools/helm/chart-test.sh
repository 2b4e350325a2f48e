#!/usr/bin/env bash
# The chart checks behind `make chart-test` (mk/chart.mk).
#
#   chart-test.sh render|kustomize-base|all CHART_DIR RENDER_DIR WORK_DIR
#
# render          helm template (defaults; every feature on; the remote front door) and kustomize
#                 build (base; the example and remote overlays) into RENDER_DIR: chart-default.yaml,
#                 chart-all-features.yaml, chart-remote.yaml, kustomize-base.yaml,
#                 kustomize-overlay.yaml, kustomize-remote.yaml (and chart-crd-features.yaml, the
#                 Certificates, ServiceMonitors and PrometheusRule, which need their CRDs). `make e2e`
#                 validates them against its kube-apiserver (kubectl apply --dry-run=server
#                 --validate=strict, test/e2e/chart_manifests_test.go).
# kustomize-base  regenerates deploy/kustomize/base/dynamic-config.yaml from the chart.
# all             render, then helm-unittest, the kustomize checks and the two-doors test.
#
# Needs CHART_TOOLS_DIR (helm, kustomize, plugins/) and HELM_PLUGINS in the environment.
set -euo pipefail
mode=${1:?mode}
chart=${2:?chart dir}
render=${3:?render dir}
work=${4:?work dir}
root=$(pwd)
helm="$CHART_TOOLS_DIR/helm"
kustomize="$CHART_TOOLS_DIR/kustomize"
values="$chart/tests/values"
mkdir -p "$render" "$work"

chartcheck="$work/chartcheck"
(cd tools/helm && go build -o "$chartcheck" ./cmd/chartcheck)

template() { # out [helm args…]
  local out=$1; shift
  "$helm" template dynamic-config "$chart" --namespace dynamic-config "$@" > "$out" 2> "$out.stderr" || {
    cat "$out.stderr" >&2; return 1; }
}

do_render() {
  template "$render/chart-default.yaml"
  template "$render/chart-all-features.yaml" -f "$values/all-features.yaml"
  template "$render/chart-crd-features.yaml" -f "$values/crd-features.yaml" \
    --show-only templates/certificates.yaml --show-only templates/servicemonitors.yaml \
    --show-only templates/prometheusrule.yaml
  "$kustomize" build deploy/kustomize/base > "$render/kustomize-base.yaml"
  "$kustomize" build deploy/kustomize/overlays/example > "$render/kustomize-overlay.yaml"
  "$kustomize" build deploy/kustomize/overlays/remote > "$render/kustomize-remote.yaml"
  template "$render/chart-remote.yaml" -f "$values/remote-frontdoor.yaml"
  echo "chart-render: wrote $(cd "$render" && ls *.yaml | tr '\n' ' ')into $render"
}

do_kustomize_base() {
  template "$work/base-source.yaml"
  "$chartcheck" kustomize-base -f "$work/base-source.yaml" > deploy/kustomize/base/dynamic-config.yaml
  echo "chart-kustomize-base: wrote deploy/kustomize/base/dynamic-config.yaml"
}

fail() { echo "chart-test: FAIL: $*" >&2; exit 1; }

# check DOC ENV → prints the check-installation output; exit status in $check_rc
check_rc=0
check() {
  local doc=$1 envfile=$2 vars=()
  mapfile -t vars < "$envfile"
  check_rc=0
  env -i PATH="$PATH" "${vars[@]}" "$work/dynamic-config" check-installation --installation "$doc" > "$work/check.out" 2>&1 || check_rc=$?
}

revision() { sed -n 's/^installation is valid: \(sha256:[0-9a-f]*\)$/\1/p' "$work/check.out"; }

# the installation the decider would get from a rendered file: valid, and its revision
door_rendered() { # name rendered.yaml → sets $rev
  "$chartcheck" installation -f "$2" -doc "$work/$1.installation.yaml" -env "$work/$1.env"
  check "$work/$1.installation.yaml" "$work/$1.env"
  [[ $check_rc == 0 ]] || { cat "$work/check.out" >&2; fail "$1: check-installation exited $check_rc"; }
  rev=$(revision)
  [[ -n $rev ]] || fail "$1: no revision in the check-installation output"
}

door_values() { # values file → sets $rev (check-installation --values, the Go mapping)
  local rc=0
  "$work/dynamic-config" check-installation --no-env --values "$1" > "$work/check.out" 2>&1 || rc=$?
  [[ $rc == 0 ]] || { cat "$work/check.out" >&2; fail "check-installation --values $1 exited $rc"; }
  rev=$(revision)
}

do_all() {
  local start=$SECONDS
  do_render

  # helm-unittest: the suites under tests/ run with the schema; the ones under
  # tests/noschema/ with --skip-schema-validation (the fail messages the schema would
  # otherwise pre-empt, e.g. a number where a quoted string belongs).
  echo "== helm unittest"
  "$helm" unittest --strict -f 'tests/*_test.yaml' "$chart"
  "$helm" unittest --strict --skip-schema-validation -f 'tests/noschema/*_test.yaml' "$chart"

  echo "== tls"
  "$chartcheck" tls -f "$render/chart-default.yaml"
  "$chartcheck" tls -f "$render/chart-all-features.yaml"

  echo "== kustomize"
  template "$work/base-source.yaml"
  "$chartcheck" kustomize-base -f "$work/base-source.yaml" > "$work/base-expected.yaml"
  "$chartcheck" same -a "$render/kustomize-base.yaml" -b "$work/base-expected.yaml" -ignore-kind Namespace \
    || fail "deploy/kustomize/base differs from the chart's default render: run make chart-kustomize-base"
  cmp -s "$work/base-expected.yaml" deploy/kustomize/base/dynamic-config.yaml \
    || fail "deploy/kustomize/base/dynamic-config.yaml is stale: run make chart-kustomize-base"
  echo "kustomize: the base equals the chart's default render (no TLS Secrets, hooks, caBundle, Helm labels)"
  template "$work/remote-source.yaml" -f "$values/kustomize-remote.yaml"
  "$chartcheck" kustomize-base -f "$work/remote-source.yaml" > "$work/remote-expected.yaml"
  "$chartcheck" same -a "$render/kustomize-remote.yaml" -b "$work/remote-expected.yaml" -ignore-kind Namespace \
    || fail "deploy/kustomize/overlays/remote differs from the chart's frontdoor.remote render of tests/values/kustomize-remote.yaml"
  echo "kustomize: the remote overlay equals the chart's frontdoor.remote render (front door and webhook only)"
  if command -v kubectl >/dev/null 2>&1; then
    for dir in base overlays/example; do
      kubectl kustomize "deploy/kustomize/$dir" > "$work/kubectl-kustomize.yaml"
      "$chartcheck" same -a "$work/kubectl-kustomize.yaml" -b "$render/kustomize-$(basename "${dir/example/overlay}").yaml" \
        || fail "kubectl kustomize deploy/kustomize/$dir differs from kustomize build"
    done
    echo "kustomize: kubectl kustomize renders base and overlay the same"
  fi

  echo "== two doors"
  go build -o "$work/dynamic-config" ./cmd/dynamic-config
  local rev base_rev

  door_rendered chart-default "$render/chart-default.yaml"
  base_rev=$rev
  echo "chart, default values: valid, $base_rev"
  door_rendered kustomize-base "$render/kustomize-base.yaml"
  [[ $rev == "$base_rev" ]] || fail "kustomize base revision $rev != chart default revision $base_rev"
  echo "kustomize base: valid, the same revision"

  template "$work/seed-000.yaml" -f "$values/seed-000.yaml"
  door_rendered seed-000 "$work/seed-000.yaml"
  local seed_rev=$rev
  echo "chart, seed-000 nine-store values: valid, $seed_rev"

  door_rendered overlay "$render/kustomize-overlay.yaml"
  [[ $rev == "$seed_rev" ]] || fail "kustomize overlay revision $rev != chart seed-000 revision $seed_rev"
  echo "kustomize overlay (DYNAMIC_CONFIG_* on the decider): valid, the same revision"

  door_values "$values/seed-000.yaml"
  [[ $rev == "$seed_rev" ]] || fail "check-installation --values seed-000.yaml revision $rev != the chart's $seed_rev"
  echo "check-installation --values seed-000.yaml: valid, the same revision"

  template "$work/seed-000-maps.yaml" -f "$values/seed-000-maps.yaml"
  door_rendered seed-000-maps "$work/seed-000-maps.yaml"
  [[ $rev == "$seed_rev" ]] || fail "chart seed-000-maps revision $rev != seed-000 $seed_rev (the map forms must read as the strings)"
  door_values "$values/seed-000-maps.yaml"
  [[ $rev == "$seed_rev" ]] || fail "check-installation --values seed-000-maps.yaml revision $rev != $seed_rev"
  echo "map forms of perStore and the gates (chart and --values): the same revision"

  template "$work/all-features.yaml" -f "$values/all-features.yaml"
  door_rendered all-features "$work/all-features.yaml"
  local all_rev=$rev
  door_values "$values/all-features.yaml"
  [[ $rev == "$all_rev" ]] || fail "check-installation --values all-features.yaml revision $rev != the chart's $all_rev"
  echo "every feature on (chart and --values): valid, the same revision"

  # A mistyped installation is refused with every problem, through both doors.
  local want1='storeDefaults.vault [DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (vault)]: watch-seconds is "ten": whole seconds'
  local want2='sourceDeny [DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY]: "got" is not a store this contract knows'
  template "$work/seed-000-typo.yaml" -f "$values/seed-000-typo.yaml"
  "$chartcheck" installation -f "$work/seed-000-typo.yaml" -doc "$work/typo.installation.yaml" -env "$work/typo.env"
  check "$work/typo.installation.yaml" "$work/typo.env"
  [[ $check_rc == 2 ]] || { cat "$work/check.out" >&2; fail "typo: check-installation exited $check_rc, want 2"; }
  grep -qF "the installation is invalid (2 problems;" "$work/check.out" || { cat "$work/check.out" >&2; fail "typo: want 2 problems"; }
  grep -qF "$want1" "$work/check.out" || { cat "$work/check.out" >&2; fail "typo: missing: $want1"; }
  grep -qF "$want2" "$work/check.out" || { cat "$work/check.out" >&2; fail "typo: missing: $want2"; }
  local rc=0
  "$work/dynamic-config" check-installation --no-env --values "$values/seed-000-typo.yaml" > "$work/check.out" 2>&1 || rc=$?
  [[ $rc == 2 ]] && grep -qF "$want1" "$work/check.out" && grep -qF "$want2" "$work/check.out" \
    || { cat "$work/check.out" >&2; fail "typo: check-installation --values did not report both problems"; }
  echo "seed-000 with two typos: refused (exit 2) with both problems, rendered and --values"

  echo "chart-test: ok ($((SECONDS - start))s)"
}

case $mode in
  render) do_render ;;
  kustomize-base) do_kustomize_base ;;
  all) do_all ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
