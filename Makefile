# dynamic-config — build, generate, lint, test.
#
# Tools (buf, protoc-gen-go, protoc-gen-go-grpc, protoc-gen-go-vtproto,
# grpcurl) are pinned in the separate tools module tools/go.mod and built from
# the Go module proxy into ./bin on first use. Other areas add targets in mk/<area>.mk and append their
# CI target names to CI_TARGETS (e.g. `CI_TARGETS += chart-test`).

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GO        ?= go
BIN       := $(CURDIR)/bin
TOOLS_MOD := tools/go.mod
TOOLS_DEP := tools/go.mod tools/go.sum
VERSION   ?= $(shell scripts/version.sh)
LDFLAGS   := -X main.version=$(VERSION)
FUZZTIME  ?= 10s

BUF                := $(BIN)/buf
PROTOC_GEN_GO      := $(BIN)/protoc-gen-go
PROTOC_GEN_GO_GRPC := $(BIN)/protoc-gen-go-grpc
PROTOC_GEN_GO_VTPROTO := $(BIN)/protoc-gen-go-vtproto
GRPCURL            := $(BIN)/grpcurl
GOLANGCI_LINT      := $(BIN)/golangci-lint
LINT_TOOLS_DEP     := tools/lint/go.mod tools/lint/go.sum
DYNAMIC_CONFIG     := $(BIN)/dynamic-config

# CI_TARGETS collects the extra targets `make ci` runs after the core ones.
CI_TARGETS ?=

.PHONY: help
help: ## show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_.-]+:.*## / {printf "  %-22s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# --- tools -----------------------------------------------------------------

$(BUF): $(TOOLS_DEP)
	cd tools && $(GO) build -o $@ github.com/bufbuild/buf/cmd/buf
$(PROTOC_GEN_GO): $(TOOLS_DEP)
	cd tools && $(GO) build -o $@ google.golang.org/protobuf/cmd/protoc-gen-go
$(PROTOC_GEN_GO_GRPC): $(TOOLS_DEP)
	cd tools && $(GO) build -o $@ google.golang.org/grpc/cmd/protoc-gen-go-grpc
$(PROTOC_GEN_GO_VTPROTO): $(TOOLS_DEP)
	cd tools && $(GO) build -o $@ github.com/planetscale/vtprotobuf/cmd/protoc-gen-go-vtproto
$(GRPCURL): $(TOOLS_DEP)
	cd tools && $(GO) build -o $@ github.com/fullstorydev/grpcurl/cmd/grpcurl
# golangci-lint has a tools module of its own (tools/lint): its dependencies
# never meet buf's.
$(GOLANGCI_LINT): $(LINT_TOOLS_DEP)
	cd tools/lint && $(GO) build -o $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

.PHONY: tools
tools: $(BUF) $(PROTOC_GEN_GO) $(PROTOC_GEN_GO_GRPC) $(PROTOC_GEN_GO_VTPROTO) $(GRPCURL) $(GOLANGCI_LINT) ## build the pinned tools into ./bin

# --- build -----------------------------------------------------------------

.PHONY: build
build: ## build bin/dynamic-config
	$(GO) build -ldflags '$(LDFLAGS)' -o $(DYNAMIC_CONFIG) ./cmd/dynamic-config

# --- generate --------------------------------------------------------------

.PHONY: generate
generate: $(BUF) $(PROTOC_GEN_GO) $(PROTOC_GEN_GO_GRPC) $(PROTOC_GEN_GO_VTPROTO) ## regenerate gen/ from proto/ with buf
	PATH="$(BIN):$$PATH" $(BUF) generate

.PHONY: check-generate
check-generate: generate ## fail when gen/ differs from what proto/ generates
	@if ! git diff --quiet --exit-code -- gen/ || [ -n "$$(git ls-files --others --exclude-standard -- gen/)" ]; then \
		git status --short -- gen/; \
		echo "gen/ is out of date: run make generate and commit"; \
		exit 1; \
	fi

# --- lint ------------------------------------------------------------------

.PHONY: archdoc
archdoc: ## regenerate ARCHITECTURE.md's package table from go list (cmd/archdoc)
	$(GO) run ./cmd/archdoc

.PHONY: lint
lint: $(BUF) $(GOLANGCI_LINT) ## buf lint, buf format, gofmt, go vet, golangci-lint (layering, errcheck, staticcheck, revive; .golangci.yml)
	$(BUF) lint
	$(BUF) format --diff --exit-code
	@files="$$(git ls-files --cached --others --exclude-standard -- '*.go')"; \
		bad="$$(gofmt -l $$files)"; \
		if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi
	$(GO) vet ./...
	cd test/e2e && $(GO) vet ./...
	@# depguard sees direct imports; purecheck sees the whole closure: no
	@# package under decider/core/ depends, however deep, on I/O, logging,
	@# gRPC, watching or a YAML/TOML library (issue 22).
	$(GO) run ./cmd/purecheck
	@# ARCHITECTURE.md's package table is go list's (make archdoc).
	$(GO) run ./cmd/archdoc -check
	$(GOLANGCI_LINT) run --allow-parallel-runners ./...

# --- test ------------------------------------------------------------------

.PHONY: test
test: ## the fast tier: unit and in-process integration tests of the root module
	$(GO) test ./...

.PHONY: test-update
test-update: ## regenerate golden files (UPDATE_GOLDEN=1)
	UPDATE_GOLDEN=1 $(GO) test ./...

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME (default 10s)
	GO="$(GO)" FUZZTIME="$(FUZZTIME)" scripts/fuzz.sh

# --- run -------------------------------------------------------------------

.PHONY: run
run: ## serve on loopback with the embedded default installation (extra flags: ARGS=...)
	$(GO) run -ldflags '$(LDFLAGS)' ./cmd/dynamic-config serve $(ARGS)

.PHONY: grpcurl-check
grpcurl-check: $(GRPCURL) build ## list/describe/Decide against a real decider with grpcurl
	GRPCURL="$(GRPCURL)" DYNAMIC_CONFIG="$(DYNAMIC_CONFIG)" scripts/grpcurl-check.sh
	GRPCURL="$(GRPCURL)" DYNAMIC_CONFIG="$(DYNAMIC_CONFIG)" scripts/grpcurl-validate-check.sh

# --- ci --------------------------------------------------------------------

.PHONY: ci
ci: ## everything CI runs: check-generate lint test grpcurl-check, then $(CI_TARGETS)
	$(MAKE) --no-print-directory check-generate
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory test
	$(MAKE) --no-print-directory grpcurl-check
	@for t in $(CI_TARGETS); do echo "== make $$t"; $(MAKE) --no-print-directory $$t; done

-include mk/*.mk
