#!/usr/bin/env bash
# The chart checks behind `make chart-test` (mk/chart.mk).
#
#   chart-test.sh render|kustomize-base|all CHART_DIR RENDER_DIR WORK_DIR
#
# render          helm template (defaults; every feature on; the remote front door) and kustomize
#                 build (base; the example and remote overlays) into RENDER_DIR: chart-default.yaml,
#                 chart-all-features.yaml, chart-remote.yaml, kustomize-base.yaml,
#                 kustomize-overlay.yaml, kustomize-remote.yaml, kustomize-follower.yaml, chart-self-rotate.yaml,
#                 kustomize-self-signed.yaml, kustomize-cert-manager.yaml (and chart-crd-features.yaml,
#                 the Certificates, ServiceMonitors and PrometheusRule, which need their CRDs). `make e2e`
#                 validates them against its kube-apiserver (kubectl apply --dry-run=server
#                 --validate=strict, test/e2e/chart_manifests_test.go).
# kustomize-base  regenerates deploy/kustomize/base/dynamic-config.yaml from the chart.
# all             render, then helm-unittest, the kustomize checks and the two-doors test.
# alerts          the PrometheusRule and the Grafana dashboard through Prometheus's own checker:
#                 `promtool check rules` on the rendered rules and on every dashboard query, and
#                 `promtool test rules` on tests/promtool/alerts.yaml (a firing and a quiet case
#                 for every alert, or chartcheck fails naming it). Needs PROMTOOL.
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
  "$kustomize" build deploy/kustomize/overlays/follower > "$render/kustomize-follower.yaml"
  "$kustomize" build deploy/kustomize/overlays/rollout > "$render/kustomize-rollout.yaml"
  template "$render/chart-remote.yaml" -f "$values/remote-frontdoor.yaml"
  template "$render/chart-self-rotate.yaml" -f "$values/all-features.yaml" --set tls.mode=selfRotate
  # issue 21: the install proof's hook and webhook for TestTheInstallProof (e2e), in a namespace
  # of its own and with a short timeout, so its failing case ends quickly.
  template "$render/chart-install-proof.yaml" --namespace e2e-install-proof --set installProof.timeout=20s \
    --show-only templates/install-proof-hook.yaml --show-only templates/mutatingwebhookconfiguration.yaml
  "$kustomize" build deploy/kustomize/overlays/self-signed > "$render/kustomize-self-signed.yaml"
  "$kustomize" build deploy/kustomize/overlays/cert-manager > "$render/kustomize-cert-manager.yaml"
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

  echo "== crds"
  # Helm installs a chart's crds/ once and never upgrades it: the CRDs are templates (issue 20).
  [[ ! -e $chart/crds ]] || fail "$chart/crds exists: helm never upgrades it; CRDs belong in files/crds (templates/class-crds.yaml)"
  [[ $(grep -c '^kind: CustomResourceDefinition$' "$render/chart-default.yaml") == "$(ls "$chart"/files/crds/*.yaml | wc -l)" ]] \
    || fail "the default render does not carry every CRD of files/crds"
  echo "crds: rendered from templates (helm upgrade applies them), none in crds/"

  echo "== selfRotate: GitOps-stable"
  # Under tls.mode selfRotate every key is made in the cluster (issue 20): two renders are
  # byte-identical and hold no key material.
  local sr
  for sr in "--set tls.mode=selfRotate" "-f $values/all-features.yaml --set tls.mode=selfRotate"; do
    # shellcheck disable=SC2086 # the arguments are split on purpose
    template "$work/self-rotate-1.yaml" $sr
    # shellcheck disable=SC2086
    template "$work/self-rotate-2.yaml" $sr
    cmp -s "$work/self-rotate-1.yaml" "$work/self-rotate-2.yaml" \
      || { diff "$work/self-rotate-1.yaml" "$work/self-rotate-2.yaml" | head -20 >&2; fail "helm template $sr: two renders differ"; }
    if grep -nE 'PRIVATE KEY|^ *tls\.key:|^ *ca\.key:|LS0tLS1CRUdJTi' "$work/self-rotate-1.yaml" >&2; then
      fail "helm template $sr renders key or certificate material"
    fi
  done
  echo "selfRotate: two renders byte-identical, no key or certificate (defaults and every feature)"

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
  template "$work/follower-source.yaml" -f "$values/kustomize-follower.yaml"
  "$chartcheck" kustomize-base -f "$work/follower-source.yaml" > "$work/follower-expected.yaml"
  "$chartcheck" same -a "$render/kustomize-follower.yaml" -b "$work/follower-expected.yaml" -ignore-kind Namespace \
    || fail "deploy/kustomize/overlays/follower differs from the chart's decider.follow render of tests/values/kustomize-follower.yaml"
  echo "kustomize: the follower overlay equals the chart's decider.follow render (no installation, a following decider)"
  if command -v kubectl >/dev/null 2>&1; then
    for dir in base overlays/example; do
      kubectl kustomize "deploy/kustomize/$dir" > "$work/kubectl-kustomize.yaml"
      "$chartcheck" same -a "$work/kubectl-kustomize.yaml" -b "$render/kustomize-$(basename "${dir/example/overlay}").yaml" \
        || fail "kubectl kustomize deploy/kustomize/$dir differs from kustomize build"
    done
    echo "kustomize: kubectl kustomize renders base and overlay the same"
  fi

  echo "== helm warnings"
  # Helm prints "warning: destination for … is a table. Ignoring non-table value" when a
  # default of one type meets a value of another; the map forms and the number forms must
  # render without any warning.
  local i=0 args
  for args in "--set agent.defaults.watchSeconds=30" "-f $values/seed-000-maps.yaml" \
      "-f $values/all-features.yaml" "-f $values/crd-features.yaml" "--set tls.mode=selfRotate" \
      "--set-json frontdoor.inherit.env={\"global\":false} --set-json webhook.sourceDeny={\"sandbox\":[\"git\"]}" \
      "--set-json agent.defaults.perStore={\"git\":{\"watch-seconds\":120}} --set agent.defaults.cpuLimit=2"; do
    i=$((i + 1))
    # shellcheck disable=SC2086 # the arguments are split on purpose
    template "$work/warnings-$i.yaml" $args
    if [[ -s "$work/warnings-$i.yaml.stderr" ]]; then
      cat "$work/warnings-$i.yaml.stderr" >&2
      fail "helm template $args wrote to stderr"
    fi
  done
  echo "helm template: $i renders (numbers, map forms, every feature, selfRotate) without a warning"

  echo "== kustomize cert-manager"
  template "$work/cm-certificates.yaml" --set webhook.certManager.enabled=true \
    --set webhook.certManager.issuerRef.name=dynamic-config-ca --set webhook.certManager.issuerRef.kind=Issuer \
    --show-only templates/certificates.yaml
  # The one intended difference: the chart's certManager mode writes Secrets of names of its own
  # (so `helm upgrade` can switch modes); the kustomize base mounts the spec's three names.
  sed -i 's/^\(  secretName: .*\)-cert-manager-tls$/\1-tls/' "$work/cm-certificates.yaml"
  "$chartcheck" kustomize-base -f "$work/cm-certificates.yaml" > "$work/cm-certificates-expected.yaml"
  "$chartcheck" same -a deploy/kustomize/components/cert-manager/certificates.yaml -b "$work/cm-certificates-expected.yaml" \
    || fail "deploy/kustomize/components/cert-manager/certificates.yaml differs from the chart's webhook.certManager Certificates"
  awk '/^<!-- recipe: overlays\/cert-manager\/kustomization.yaml -->$/ {on=1; next} on && /^```yaml$/ {copy=1; next} copy && /^```$/ {exit} copy' \
    deploy/kustomize/README.md > "$work/recipe.yaml"
  cmp -s "$work/recipe.yaml" deploy/kustomize/overlays/cert-manager/kustomization.yaml \
    || fail "the README's cert-manager recipe differs from deploy/kustomize/overlays/cert-manager/kustomization.yaml"
  grep -q "cert-manager.io/inject-ca-from: dynamic-config/dynamic-config-frontdoor" "$render/kustomize-self-signed.yaml" \
    || fail "the self-signed overlay's webhook configuration lacks the CA-injection annotation"
  echo "kustomize: the cert-manager component's Certificates equal the chart's; the README recipe is overlays/cert-manager"

  echo "== two doors"
  go build -o "$work/dynamic-config" ./cmd/dynamic-config
  local rev base_rev

  door_rendered chart-default "$render/chart-default.yaml"
  base_rev=$rev
  echo "chart, default values: valid, $base_rev"
  door_rendered kustomize-base "$render/kustomize-base.yaml"
  [[ $rev == "$base_rev" ]] || fail "kustomize base revision $rev != chart default revision $base_rev"
  echo "kustomize base: valid, the same revision"
  # issue 41 item 8: the rollout overlay adds a candidate as the chart's rollout.* does; the
  # decider's own validation (check-installation --rollout) gives the same candidate revision.
  "$chartcheck" installation -f "$render/kustomize-rollout.yaml" -doc "$work/rollout.installation.yaml" \
    -env "$work/rollout.env" -rollout "$work/rollout.rollout.yaml"
  local kust_candidate chart_candidate rollout_vars=()
  mapfile -t rollout_vars < "$work/rollout.env"
  kust_candidate=$(env -i PATH="$PATH" "${rollout_vars[@]}" "$work/dynamic-config" check-installation \
    --installation "$work/rollout.installation.yaml" --rollout "$work/rollout.rollout.yaml" | sed -n 's/^rollout is valid: candidate //p')
  chart_candidate=$("$work/dynamic-config" check-installation --no-env --values "$values/kustomize-rollout.yaml" | sed -n 's/^rollout is valid: candidate //p')
  [[ -n $kust_candidate && $kust_candidate == "$chart_candidate" ]] \
    || fail "deploy/kustomize/overlays/rollout's candidate ($kust_candidate) is not the chart's rollout.* candidate of tests/values/kustomize-rollout.yaml ($chart_candidate)"
  echo "kustomize: the rollout overlay's candidate is the chart's rollout.* candidate ($kust_candidate)"

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

  # NOTES.txt's example pod is injected under the chart's defaults (issue 20).
  # helm template skips NOTES.txt: render a copy of the chart whose NOTES.txt is a template
  rm -rf "$work/notes-chart" && cp -r "$chart" "$work/notes-chart"
  { echo '{{- define "notes.text" -}}'; cat "$chart/templates/NOTES.txt"; echo '{{- end -}}'; } > "$work/notes-chart/templates/_notes.tpl"
  rm "$work/notes-chart/templates/NOTES.txt"
  printf '%s\n' 'apiVersion: v1' 'kind: ConfigMap' 'metadata: {name: notes}' 'data:' '  notes: |' \
    '    {{- include "notes.text" . | nindent 4 }}' > "$work/notes-chart/templates/notes.yaml"
  "$helm" template dynamic-config "$work/notes-chart" --namespace dynamic-config --show-only templates/notes.yaml > "$work/notes.out" 2> "$work/notes.stderr" \
    || { cat "$work/notes.stderr" >&2; fail "rendering NOTES.txt failed"; }
  awk '/^    apiVersion: v1$/ {pod=1} pod && /^ *$/ {exit} pod {print substr($0, 5)}' "$work/notes.out" > "$work/notes-pod.yaml"
  grep -q '^kind: Pod$' "$work/notes-pod.yaml" || { cat "$work/notes.out" >&2; fail "NOTES.txt has no example pod"; }
  printf '{}\n' > "$work/notes-values.yaml"
  rc=0
  "$work/dynamic-config" inject --no-env --values "$work/notes-values.yaml" -f "$work/notes-pod.yaml" -o patch > "$work/notes.patch" 2> "$work/notes.inject" || rc=$?
  [[ $rc == 0 ]] && grep -q ': injected (1 agent container(s))' "$work/notes.inject" \
    || { cat "$work/notes-pod.yaml" "$work/notes.inject" >&2; fail "NOTES.txt's example pod is not injected under the chart defaults (exit $rc)"; }
  echo "NOTES.txt: its example pod is injected under the chart's defaults (inject --values)"

  echo "chart-test: ok ($((SECONDS - start))s)"
}

do_alerts() {
  local promtool=${PROMTOOL:?PROMTOOL: the promtool binary}
  template "$work/alerts-render.yaml" -f "$values/crd-features.yaml" --show-only templates/prometheusrule.yaml
  cp "$chart/tests/promtool/alerts.yaml" "$work/alerts.yaml"
  "$chartcheck" rules -f "$work/alerts-render.yaml" -o "$work/rules-rendered.yaml" -unit "$work/rules.yaml" -tests "$work/alerts.yaml"
  "$promtool" check rules "$work/rules-rendered.yaml"
  "$chartcheck" dashboard-rules -f "$chart/dashboards/dynamic-config.json" -o "$work/dashboard-rules.yaml"
  "$promtool" check rules "$work/dashboard-rules.yaml"
  (cd "$work" && "$promtool" test rules alerts.yaml)
  echo "chart-alerts: ok"
}

case $mode in
  alerts) do_alerts ;;
  render) do_render ;;
  kustomize-base) do_kustomize_base ;;
  all) do_all ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
