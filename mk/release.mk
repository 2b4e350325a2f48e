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
#                       oci://REGISTRY/charts/dynamic-config; PUBLISH_INSECURE=1 for a
#                       plain-HTTP registry. Each image carries a CycloneDX SBOM of its
#                       binary (cyclonedx-gomod, pinned in tools/go.mod) as an OCI 1.1
#                       artifact whose subject is that image (the referrers API).
#                       Credentials: ~/.docker/config.json (docker login) for the
#                       image, `helm registry login` for the chart
#   make publish-check  make publish against a registry started in-process on 127.0.0.1,
#                       then pull both back and check platforms, digests and the chart
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

CI_TARGETS += image-check version-check publish-check

ifneq ($(filter publish,$(MAKECMDGOALS)),)
ifeq ($(REGISTRY),)
$(error publish: set REGISTRY=host:port/path (e.g. registry.example.com/team))
endif
endif

.PHONY: print-version image image-check version-check chart-package publish publish-check

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

publish: chart-package ## push the multi-arch image index and the chart to REGISTRY (host:port/path); PUBLISH_INSECURE=1 for plain HTTP
	$(foreach p,$(PUBLISH_PLATFORMS),CGO_ENABLED=0 GOOS=$(word 1,$(subst /, ,$(p))) GOARCH=$(word 2,$(subst /, ,$(p))) \
		$(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o $(PUBLISH_DIR)/$(subst /,-,$(p))/dynamic-config ./cmd/dynamic-config && \
		(cd tools && $(GO) tool cyclonedx-gomod bin -json -version $(VERSION) \
			-output $(PUBLISH_DIR)/$(subst /,-,$(p))/$(SBOM_FILE) $(PUBLISH_DIR)/$(subst /,-,$(p))/dynamic-config) &&) true
	cd tools && $(GO) run ./ociimage push $(foreach p,$(PUBLISH_PLATFORMS),--binary $(p)=$(PUBLISH_DIR)/$(subst /,-,$(p))/dynamic-config \
		--sbom $(p)=$(PUBLISH_DIR)/$(subst /,-,$(p))/$(SBOM_FILE)) \
		--version $(VERSION) --revision $(REVISION) --ref $(REGISTRY)/dynamic-config:$(IMAGE_TAG) $(if $(PUBLISH_INSECURE),--insecure)
	$(CHART_ENV) HELM_REGISTRY_CONFIG=$(HELM_REGISTRY_CONFIG) $(CHART_HELM) push $(CHART_PACKAGE_DIR)/dynamic-config-$(patsubst v%,%,$(VERSION)).tgz oci://$(REGISTRY)/charts \
		$(if $(PUBLISH_INSECURE),--plain-http)

publish-check: chart-tools ## make publish into an in-process registry; pull back and check both platforms, the digests and the chart
	cd tools && PUBLISH_CHECK=1 PUBLISH_VERSION=$(VERSION) PUBLISH_REVISION=$(REVISION) PUBLISH_DIR=$(abspath $(PUBLISH_DIR)) \
		HELM="$(CHART_ENV) $(CHART_HELM)" $(GO) test -count=1 -timeout 30m -run TestPublish ./ociimage/

.PHONY: release-tag
release-tag: ## tag the release commit vX.Y.Z (docs/releasing.md); refuses on any other commit
	tag="$$(scripts/version.sh --tag)" && git tag -a "$$tag" -m "dynamic-config $$tag" && echo "tagged $$tag"
