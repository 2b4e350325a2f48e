# mk/e2e.mk — `make e2e`: the end-to-end tests against a real kube-apiserver
# (spec 07 §7.2). Included by the root Makefile (`-include mk/*.mk`).
#
# The kube-apiserver (k8s.io/kubernetes, staging modules pinned by replace)
# and the embedded etcd are built from test/e2e/tools — a module of their
# own, so k8s.io/kubernetes never enters the product's go.mod — into a cache
# directory keyed by the Kubernetes version; a binary that exists is not
# rebuilt. A cold build takes several minutes on two cores; warm, nothing.

E2E_K8S_VERSION ?= v1.35.4
E2E_TOOLS_DIR   ?= $(HOME)/.cache/dynamic-config-e2e/$(E2E_K8S_VERSION)
E2E_WORK_DIR    ?= $(CURDIR)/test/e2e/.work
E2E_TIMEOUT     ?= 25m
E2E_RUN         ?= .
# kubectl from PATH; on a machine without one, built with the tools.
E2E_KUBECTL     ?= $(or $(shell command -v kubectl 2>/dev/null),$(E2E_TOOLS_DIR)/kubectl)

CI_TARGETS += e2e

.PHONY: e2e e2e-tools

e2e-tools: ## build kube-apiserver, kube-controller-manager, the embedded etcd (and kubectl if missing), cached by version
	@start=$$(date +%s); \
	K8S_VERSION=$(E2E_K8S_VERSION) \
	BUILD_KUBECTL=$(if $(filter $(E2E_TOOLS_DIR)/kubectl,$(E2E_KUBECTL)),1,0) \
	test/e2e/tools/build.sh "$(E2E_TOOLS_DIR)" && \
	echo "e2e: tools ready in $(E2E_TOOLS_DIR) ($$(( $$(date +%s) - start ))s)"

# chart-render (mk/chart.mk) first: TestTheChartAndKustomizeManifestsPassStrictServerValidation
# validates the rendered manifests against the harness's apiserver (issue 8), and the rollout test
# evaluates the rendered DynamicConfigRolloutHalted rule with promtool (built as chart-alerts does,
# cached by version; issue 41).
e2e: e2e-tools chart-render ## end-to-end scenarios through a real kube-apiserver and kubectl
	$(if $(strip $(E2E_WORK_DIR)),,$(error E2E_WORK_DIR is empty))
	@set -e; start=$$(date +%s); \
	rm -rf "$(E2E_WORK_DIR)/run"; mkdir -p "$(E2E_WORK_DIR)/bin"; \
	tools/promtool/build.sh "$(PROMTOOL_DIR)"; \
	$(GO) build -o "$(E2E_WORK_DIR)/bin/dynamic-config" ./cmd/dynamic-config; \
	echo "e2e: dynamic-config built ($$(( $$(date +%s) - start ))s)"; \
	cd test/e2e; \
	export E2E_KUBE_APISERVER="$(E2E_TOOLS_DIR)/kube-apiserver" \
	       E2E_KUBE_CONTROLLER_MANAGER="$(E2E_TOOLS_DIR)/kube-controller-manager" \
	       E2E_ETCD="$(E2E_TOOLS_DIR)/etcd" \
	       E2E_DYNAMIC_CONFIG="$(E2E_WORK_DIR)/bin/dynamic-config" \
	       E2E_KUBECTL="$(E2E_KUBECTL)" \
	       E2E_CHART_RENDER_DIR="$(CHART_RENDER_DIR)" \
	       E2E_PROMTOOL="$(PROMTOOL)" \
	       E2E_WORK_DIR="$(E2E_WORK_DIR)/run"; \
	status=0; $(GO) test -count=1 -v -timeout $(E2E_TIMEOUT) -run '$(E2E_RUN)' . || status=$$?; \
	echo "e2e: finished in $$(( $$(date +%s) - start ))s (logs: $(E2E_WORK_DIR)/run)"; \
	exit $$status
