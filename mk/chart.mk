# mk/chart.mk — the Helm chart and the kustomize tree (spec 07 §6, §7.1).
# Included by the root Makefile (`-include mk/*.mk`).
#
# helm, the helm-unittest plugin and kustomize are built from the Go module proxy (versions
# pinned in tools/helm/go.mod) into CHART_TOOLS_DIR, once per version; a cold build of helm
# takes a few minutes on two cores, a warm one nothing.
#
#   make chart-lint            helm lint (defaults, every feature on, the remote front door) with --strict
#   make chart-test            helm-unittest suites, the rendered manifests, the kustomize
#                              checks and the two-doors test (chart values == kustomize
#                              variables == check-installation --values; a typo fails)
#   make chart-render          only the rendered manifests, into CHART_RENDER_DIR
#                              (`make e2e` validates them strictly against its real
#                              kube-apiserver: test/e2e/chart_manifests_test.go)
#   make chart-kustomize-base  regenerate deploy/kustomize/base/dynamic-config.yaml
#   make chart-test-update     regenerate the helm-unittest snapshots
#   make chart-alerts          the PrometheusRule and the dashboard through promtool: check rules,
#                              and `promtool test rules` (a firing and a quiet case per alert);
#                              promtool is built from the module proxy (tools/promtool/go.mod)

CHART_DIR        ?= charts/dynamic-config
CHART_TOOLS_DIR  ?= $(HOME)/.cache/dynamic-config-chart/$(shell sed -n 's/^\s*helm.sh\/helm\/v3 \(v[^ ]*\).*/helm-\1/p' tools/helm/go.mod)
CHART_RENDER_DIR ?= $(CURDIR)/.cache/chart-render
CHART_WORK_DIR   ?= $(CURDIR)/.cache/chart-test
CHART_HELM       := $(CHART_TOOLS_DIR)/helm
CHART_ENV        := HELM_PLUGINS=$(CHART_TOOLS_DIR)/plugins HELM_CACHE_HOME=$(CHART_WORK_DIR)/helm-cache \
                    HELM_CONFIG_HOME=$(CHART_WORK_DIR)/helm-config HELM_DATA_HOME=$(CHART_WORK_DIR)/helm-data

PROMTOOL_DIR     ?= $(HOME)/.cache/dynamic-config-promtool
PROMTOOL         := $(PROMTOOL_DIR)/promtool

CI_TARGETS += chart-lint chart-test chart-alerts

.PHONY: chart-tools chart-lint chart-test chart-render chart-kustomize-base chart-test-update chart-alerts

chart-tools: ## build helm, helm-unittest (as a helm plugin) and kustomize, cached by version
	@start=$$(date +%s); tools/helm/build.sh "$(CHART_TOOLS_DIR)" && \
	echo "chart-tools: ready in $(CHART_TOOLS_DIR) ($$(( $$(date +%s) - start ))s)"

chart-lint: chart-tools ## helm lint --strict, with the default values, every feature on, the remote front door and a rollout; refused values fail it
	$(CHART_ENV) $(CHART_HELM) lint --strict $(CHART_DIR)
	$(CHART_ENV) $(CHART_HELM) lint --strict $(CHART_DIR) -f $(CHART_DIR)/tests/values/all-features.yaml
	$(CHART_ENV) $(CHART_HELM) lint --strict $(CHART_DIR) -f $(CHART_DIR)/tests/values/remote-frontdoor.yaml
	HELM="$(CHART_ENV) $(CHART_HELM)" tools/helm/lint-refused.sh $(CHART_DIR)
	$(CHART_ENV) $(CHART_HELM) lint --strict $(CHART_DIR) -f $(CHART_DIR)/tests/values/kustomize-rollout.yaml

chart-render: chart-tools ## render the chart (defaults, every feature) and the kustomize tree into CHART_RENDER_DIR
	@$(CHART_ENV) CHART_TOOLS_DIR="$(CHART_TOOLS_DIR)" tools/helm/chart-test.sh render "$(CHART_DIR)" "$(CHART_RENDER_DIR)" "$(CHART_WORK_DIR)"

chart-test: chart-tools ## helm-unittest, the kustomize checks and the two-doors test
	@$(CHART_ENV) CHART_TOOLS_DIR="$(CHART_TOOLS_DIR)" tools/helm/chart-test.sh all "$(CHART_DIR)" "$(CHART_RENDER_DIR)" "$(CHART_WORK_DIR)"

chart-test-update: chart-tools ## regenerate the helm-unittest snapshots
	$(CHART_ENV) $(CHART_HELM) unittest --update-snapshot $(CHART_DIR)

chart-kustomize-base: chart-tools ## regenerate deploy/kustomize/base/dynamic-config.yaml from the chart
	@$(CHART_ENV) CHART_TOOLS_DIR="$(CHART_TOOLS_DIR)" tools/helm/chart-test.sh kustomize-base "$(CHART_DIR)" "$(CHART_RENDER_DIR)" "$(CHART_WORK_DIR)"

chart-alerts: chart-tools ## promtool check rules (alerts, dashboard queries) and promtool test rules on tests/promtool/alerts.yaml
	@tools/promtool/build.sh "$(PROMTOOL_DIR)"
	@$(CHART_ENV) CHART_TOOLS_DIR="$(CHART_TOOLS_DIR)" PROMTOOL="$(PROMTOOL)" tools/helm/chart-test.sh alerts "$(CHART_DIR)" "$(CHART_RENDER_DIR)" "$(CHART_WORK_DIR)"
