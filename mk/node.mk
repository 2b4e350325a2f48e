# mk/node.mk — `make e2e-node`: the real-node tier (issue 39; issue 40 item 2).
# Included by the root Makefile (`-include mk/*.mk`).
#
# A real single-node Kubernetes on this machine — containerd and runc from
# Debian's packages (installed when missing), the kubelet, kube-scheduler and
# kube-proxy built from the Go module proxy with the e2e tier's kube-apiserver
# (test/e2e/tools, one replace block; cached by version in E2E_TOOLS_DIR), a
# pause image and the stand-ins (test/e2e/node/{pause,standin,mkimages}),
# CoreDNS answering cluster.local only — then the product as users run it:
# `make image`'s tarball in containerd, the chart by `helm install` with its
# hooks, the agent really running, day-2 operations, every TLS mode switch by
# `helm upgrade`, `helm uninstall`. scripts/node/run.sh tears everything down
# whatever happens (and first what a killed run left) and prints the
# timeline, the times and the cluster's idle cost. Needs root.

NODE_WORK_DIR         ?= $(CURDIR)/test/e2e/.work/node
NODE_TIMEOUT          ?= 45m
# cert-manager's CRDs (its Go module's deploy/crds): the certManager TLS mode's
# Certificates are validated by the real schema; the issuer is the test's stand-in.
NODE_CERT_MANAGER_VERSION ?= v1.21.2
NODE_IMAGE_REPOSITORY := localhost/dynamic-config

CI_TARGETS += e2e-node

.PHONY: e2e-node e2e-node-deps e2e-node-tools e2e-node-down

e2e-node-deps: ## install containerd, runc, the CNI plugins, iptables and conntrack from Debian when missing (root)
	@scripts/node/deps.sh

e2e-node-tools: e2e-node-deps ## build the node's kubelet, kube-scheduler, kube-proxy and CoreDNS (with the e2e tools), cached by version
	@start=$$(date +%s); \
	K8S_VERSION=$(E2E_K8S_VERSION) BUILD_NODE=1 \
	BUILD_KUBECTL=$(if $(filter $(E2E_TOOLS_DIR)/kubectl,$(E2E_KUBECTL)),1,0) \
	test/e2e/tools/build.sh "$(E2E_TOOLS_DIR)" && \
	echo "e2e-node: tools ready in $(E2E_TOOLS_DIR) ($$(( $$(date +%s) - start ))s)"

e2e-node: e2e-node-tools chart-tools image ## the real-node tier: a node on this machine, the chart by helm with hooks, the agent running, TLS switches (root)
	@NODE_WORK_DIR="$(NODE_WORK_DIR)" NODE_TOOLS_DIR="$(E2E_TOOLS_DIR)" KUBECTL="$(E2E_KUBECTL)" \
	NODE_HELM="$(CHART_HELM)" NODE_CHART="$(CURDIR)/$(CHART_DIR)" NODE_TIMEOUT="$(NODE_TIMEOUT)" \
	NODE_IMAGE_TAR="$(IMAGE_TAR)" NODE_IMAGE_REPOSITORY="$(NODE_IMAGE_REPOSITORY)" NODE_IMAGE_TAG="$(IMAGE_TAG)" \
	NODE_CERT_MANAGER_VERSION="$(NODE_CERT_MANAGER_VERSION)" GO="$(GO)" \
	$(CHART_ENV) scripts/node/run.sh

e2e-node-down: ## tear down what a killed `make e2e-node` left on this machine (root)
	@NODE_WORK_DIR="$(NODE_WORK_DIR)" KUBE_PROXY="$(E2E_TOOLS_DIR)/kube-proxy" scripts/node/down.sh
