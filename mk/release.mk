# mk/release.mk — the image and the release version (issue 15).
# Included by the root Makefile (`-include mk/*.mk`).
#
#   make image          the container image as an OCI tarball, without a Docker engine
#                       (tools/ociimage, go-containerregistry): IMAGE_TAR
#   make image-check    make image, then open the tarball and check it (config, user,
#                       entrypoint, labels, and the extracted binary runs `version`)
#   make version-check  scripts/version.sh's rules in a scratch repository (version-test.sh);
#                       the binary, the image and the packaged chart carry the same
#                       version; on a release commit, Chart.yaml names it (docs/releasing.md)
#   make publish REGISTRY=host:port/path
#                       push the multi-arch image index (PUBLISH_PLATFORMS) as
#                       REGISTRY/dynamic-config:TAG and the chart as
#                       oci://REGISTRY/charts/dynamic-config, its values.yaml naming that
#                       image (image.repository), so `helm install oci://…` needs no --set.
#                       MIRROR_AGENT=1: make mirror-agent first, and the chart's agent.image
#                       is the mirror. COSIGN_KEY=cosign.key: sign the index and the chart
#                       (cosign's signature layout; password in COSIGN_PASSWORD).
#                       PUBLISH_INSECURE=1 for plain-HTTP registries. Each image carries a
#                       CycloneDX SBOM of its binary with the modules' licences
#                       (cyclonedx-gomod, pinned in tools/go.mod) as an OCI 1.1 artifact
#                       whose subject is that image (the referrers API). Credentials:
#                       ~/.docker/config.json (docker login) for the images,
#                       `helm registry login` for the chart
#   make mirror-agent REGISTRY=host:port/path [MIRROR_AGENT_FROM=repository]
#                       copy the chart's agent image to REGISTRY/dynamic-config-agent:<tag>
#                       (go-containerregistry: every platform, the same digest, its cosign
#                       signatures), for clusters that cannot pull from the agent's registry
#   make cosign-key-pair  cosign.key and cosign.pub for COSIGN_KEY
#   make publish-check  make publish MIRROR_AGENT=1 COSIGN_KEY=… between two registries started
#                       in-process on 127.0.0.1 (a source holding a stand-in agent image, and
#                       the destination); pull everything back, render the chart from the
#                       registry with no --set and no --version, verify the signatures with
#                       cosign's own code (tools/cosign); then the published binary of this
#                       machine's platform verifies https:// peers against the public roots it
#                       carries, with no system roots (issue 40 item 5)
#
# VERSION (Makefile) comes from scripts/version.sh; docker build takes the same:
#   docker build --build-arg VERSION=$(make -s print-version) --build-arg REVISION=$(git rev-parse HEAD) .

IMAGE_DIR      := $(BIN)/image
IMAGE_BINARY   := $(IMAGE_DIR)/dynamic-config
IMAGE_TAR      ?= $(BIN)/dynamic-config-image.tar
IMAGE_ARCH     ?= $(shell $(GO) env GOARCH)
REVISION       ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
CHART_PACKAGE_DIR := $(BIN)/chart

PUBLISH_PLATFORMS ?= linux/amd64 linux/arm64
PUBLISH_DIR       := $(BIN)/publish
PUBLISH_INSECURE  ?=
SBOM_FILE         := dynamic-config.cdx.json
# helm push reads the credentials `helm registry login` wrote (CHART_ENV moves helm's other homes)
HELM_REGISTRY_CONFIG ?= $(HOME)/.config/helm/registry/config.json
IMAGE_TAG         := $(subst +,_,$(VERSION))
CHART_VERSION     := $(patsubst v%,%,$(VERSION))
# make publish MIRROR_AGENT=1: mirror-agent first, and the chart injects the mirror
MIRROR_AGENT      ?=
# the repository mirror-agent copies the chart's agent tag or digest from (default: agent.image)
MIRROR_AGENT_FROM ?=
# make publish COSIGN_KEY=cosign.key: sign the image index and the chart (password in COSIGN_PASSWORD)
COSIGN_KEY        ?=
COSIGN_VERIFY     := $(BIN)/cosign-verify

CI_TARGETS += image-check version-check publish-check

ifneq ($(filter publish mirror-agent,$(MAKECMDGOALS)),)
ifeq ($(REGISTRY),)
$(error $(filter publish mirror-agent,$(MAKECMDGOALS)): set REGISTRY=host:port/path (e.g. registry.example.com/team))
endif
endif

.PHONY: print-version image image-check version-check chart-package publish publish-check mirror-agent cosign-key-pair

print-version: ## print the project version (scripts/version.sh)
	@echo $(VERSION)

image: ## build the image as an OCI tarball (no Docker engine): $(IMAGE_TAR)
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath \
		-ldflags '-s -w $(LDFLAGS)' -o $(IMAGE_BINARY) ./cmd/dynamic-config
	cd tools && $(GO) run ./ociimage --binary $(IMAGE_BINARY) --version $(VERSION) \
		--revision $(REVISION) --arch $(IMAGE_ARCH) --out $(IMAGE_TAR)

image-check: image ## build the image, then check the tarball and run its binary
	cd tools && IMAGE_TAR=$(IMAGE_TAR) IMAGE_VERSION=$(VERSION) IMAGE_REVISION=$(REVISION) \
		$(GO) test -count=1 ./ociimage/

chart-package: chart-tools ## package the chart with version and appVersion = the project version, into bin/chart
	rm -rf $(CHART_PACKAGE_DIR)
	$(CHART_ENV) $(CHART_HELM) package $(CHART_DIR) --version $(patsubst v%,%,$(VERSION)) \
		--app-version $(patsubst v%,%,$(VERSION)) -d $(CHART_PACKAGE_DIR)

version-check: build chart-package ## version.sh's rules hold; the binary, the image tag and the packaged chart agree on the version
	scripts/version-test.sh
	VERSION="$(VERSION)" DYNAMIC_CONFIG="$(DYNAMIC_CONFIG)" HELM="$(CHART_ENV) $(CHART_HELM)" \
		CHART_DIR="$(CHART_DIR)" CHART_PACKAGE_DIR="$(CHART_PACKAGE_DIR)" scripts/version-check.sh

publish: chart-tools $(if $(MIRROR_AGENT),mirror-agent) ## push the image index and the chart naming it to REGISTRY (host:port/path); MIRROR_AGENT=1 COSIGN_KEY=… PUBLISH_INSECURE=1
	$(foreach p,$(PUBLISH_PLATFORMS),CGO_ENABLED=0 GOOS=$(word 1,$(subst /, ,$(p))) GOARCH=$(word 2,$(subst /, ,$(p))) \
		$(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o $(PUBLISH_DIR)/$(subst /,-,$(p))/dynamic-config ./cmd/dynamic-config && \
		(cd tools && $(GO) tool cyclonedx-gomod bin -json -licenses -assert-licenses -version $(VERSION) \
			-output $(PUBLISH_DIR)/$(subst /,-,$(p))/$(SBOM_FILE) $(PUBLISH_DIR)/$(subst /,-,$(p))/dynamic-config) &&) true
	cd tools && $(GO) run ./ociimage push $(foreach p,$(PUBLISH_PLATFORMS),--binary $(p)=$(PUBLISH_DIR)/$(subst /,-,$(p))/dynamic-config \
		--sbom $(p)=$(PUBLISH_DIR)/$(subst /,-,$(p))/$(SBOM_FILE)) \
		--version $(VERSION) --revision $(REVISION) --ref $(REGISTRY)/dynamic-config:$(IMAGE_TAG) $(if $(PUBLISH_INSECURE),--insecure)
	cd tools && $(GO) run ./ociimage chart-values --chart $(abspath $(CHART_DIR)) --out $(abspath $(PUBLISH_DIR))/chart \
		--set image.repository=$(REGISTRY)/dynamic-config $(if $(MIRROR_AGENT),--set agent.image=$(REGISTRY)/dynamic-config-agent)
	rm -rf $(PUBLISH_DIR)/chart-package
	$(CHART_ENV) $(CHART_HELM) package $(PUBLISH_DIR)/chart/$(notdir $(CHART_DIR)) --version $(CHART_VERSION) \
		--app-version $(CHART_VERSION) -d $(PUBLISH_DIR)/chart-package
	$(CHART_ENV) HELM_REGISTRY_CONFIG=$(HELM_REGISTRY_CONFIG) $(CHART_HELM) push $(PUBLISH_DIR)/chart-package/dynamic-config-$(CHART_VERSION).tgz oci://$(REGISTRY)/charts \
		$(if $(PUBLISH_INSECURE),--plain-http)
	$(if $(COSIGN_KEY),cd tools && $(GO) run ./ociimage sign --key $(abspath $(COSIGN_KEY)) $(if $(PUBLISH_INSECURE),--insecure) \
		$(REGISTRY)/dynamic-config:$(IMAGE_TAG) $(REGISTRY)/charts/dynamic-config:$(subst +,_,$(CHART_VERSION)))

mirror-agent: ## copy the chart's agent image (every platform, its digest and cosign signatures) to REGISTRY/dynamic-config-agent
	cd tools && $(GO) run ./ociimage mirror --chart $(abspath $(CHART_DIR)) --to $(REGISTRY) \
		$(if $(MIRROR_AGENT_FROM),--from-repository $(MIRROR_AGENT_FROM)) $(if $(PUBLISH_INSECURE),--insecure)

cosign-key-pair: ## write cosign.key (encrypted with COSIGN_PASSWORD) and cosign.pub, for make publish COSIGN_KEY=cosign.key
	cd tools && $(GO) run ./ociimage generate-key-pair --output-key-prefix $(abspath cosign)

$(COSIGN_VERIFY): tools/cosign/go.mod tools/cosign/go.sum tools/cosign/main.go
	cd tools/cosign && $(GO) build -o $(abspath $@) .

publish-check: chart-tools $(COSIGN_VERIFY) ## make publish (image, agent mirror, signatures) into in-process registries; install the chart with no --set; verify with cosign's code; the published binary's CA roots
	cd tools && PUBLISH_CHECK=1 PUBLISH_VERSION=$(VERSION) PUBLISH_REVISION=$(REVISION) PUBLISH_DIR=$(abspath $(PUBLISH_DIR)) \
		HELM="$(CHART_ENV) $(CHART_HELM)" COSIGN_VERIFY=$(abspath $(COSIGN_VERIFY)) \
		$(GO) test -count=1 -timeout 30m -run TestPublish ./ociimage/
	DYNAMIC_CONFIG_ROOTS_BINARY=$(abspath $(PUBLISH_DIR))/linux-$(shell $(GO) env GOARCH)/dynamic-config \
		$(GO) test -count=1 -run TestTheHTTPSClientsVerifyAgainstPublicRootsWhenTheSystemHasNone ./cmd/dynamic-config/

.PHONY: release-tag
release-tag: ## tag the release commit vX.Y.Z (docs/releasing.md); refuses on any other commit
	tag="$$(scripts/version.sh --tag)" && git tag -a "$$tag" -m "dynamic-config $$tag" && echo "tagged $$tag"
