# mk/release.mk — the image and the release version (issue 15).
# Included by the root Makefile (`-include mk/*.mk`).
#
#   make image          the container image as an OCI tarball, without a Docker engine
#                       (tools/ociimage, go-containerregistry): IMAGE_TAR
#   make image-check    make image, then open the tarball and check it (config, user,
#                       entrypoint, labels, and the extracted binary runs `version`)
#   make version-check  scripts/version.sh's rules in a scratch repository (version-test.sh);
#                       the binary, the image and the packaged chart carry the same
#                       version; on a release tag, Chart.yaml and CHANGELOG.md name it
#
# VERSION (Makefile) comes from scripts/version.sh; docker build takes the same:
#   docker build --build-arg VERSION=$(make -s print-version) --build-arg REVISION=$(git rev-parse HEAD) .

IMAGE_DIR      := $(BIN)/image
IMAGE_BINARY   := $(IMAGE_DIR)/dynamic-config
IMAGE_TAR      ?= $(BIN)/dynamic-config-image.tar
IMAGE_ARCH     ?= $(shell $(GO) env GOARCH)
REVISION       ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
CHART_PACKAGE_DIR := $(BIN)/chart

CI_TARGETS += image-check version-check

.PHONY: print-version image image-check version-check chart-package

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
