# mk/perf.mk — API compatibility and admission performance (issue 11).
# Included by the root Makefile (`-include mk/*.mk`).

CI_TARGETS += breaking bench-admission-smoke

# BREAKING_AGAINST is the commit whose proto/ the current one must stay
# wire- and source-compatible with (default: the previous commit).
BREAKING_AGAINST ?= HEAD~1
# BENCH_ARGS are extra flags for the load tool (e.g. BENCH_ARGS='-duration 5s -c 1,8').
BENCH_ARGS ?=

.PHONY: breaking bench-admission bench-admission-smoke bench-admission-compare bench-memory bench-size

breaking: $(BUF) ## buf breaking: proto/ against $(BREAKING_AGAINST) (default the previous commit)
	@if ! git rev-parse --verify -q "$(BREAKING_AGAINST)^{commit}" >/dev/null; then \
		echo "breaking: $(BREAKING_AGAINST) is not a commit here (a shallow clone?); fetch more history or set BREAKING_AGAINST"; \
		exit 1; \
	fi
	@dir="$$(mktemp -d)"; trap 'rm -rf "$$dir"' EXIT; \
		git archive "$(BREAKING_AGAINST)" buf.yaml proto | tar -x -C "$$dir"; \
		echo "$(BUF) breaking --against $(BREAKING_AGAINST)"; \
		$(BUF) breaking --against "$$dir"

bench-admission: build ## the admission load tool: floor webhook vs decider+frontdoor (without and with a rollout) vs serve, c=1/8/32 (~3 min)
	$(GO) run ./cmd/admission-load -binary $(DYNAMIC_CONFIG) $(BENCH_ARGS)

# BASE is the revision bench-admission-compare measures the working tree against.
BASE ?=

bench-admission-compare: build ## two-process CPU per admission, this tree against BASE=<ref>, alternated over 5 pairs in one run (~2 min)
	@if [ -z "$(BASE)" ] || ! git rev-parse --verify -q "$(BASE)^{commit}" >/dev/null; then \
		echo "bench-admission-compare: BASE=<ref> must name a commit here (BASE='$(BASE)')"; exit 2; \
	fi
	@dir="$$(mktemp -d)"; trap 'rm -rf "$$dir"' EXIT; \
		git archive "$(BASE)" | tar -x -C "$$dir" && \
		echo "building $(BASE) ($$(git rev-parse --short "$(BASE)")) into $$dir" && \
		(cd "$$dir" && $(GO) build -ldflags '$(LDFLAGS)' -o "$$dir/bin/dynamic-config" ./cmd/dynamic-config) && \
		$(GO) run ./cmd/admission-load -binary $(DYNAMIC_CONFIG) -base-binary "$$dir/bin/dynamic-config" $(BENCH_ARGS)

bench-memory: build ## RSS and start-up to SERVING: decider (seed, 1 000 classes, 1 MiB document), front door idle and after c=32 (~30 s)
	$(GO) run ./cmd/admission-load -binary $(DYNAMIC_CONFIG) -memory $(BENCH_ARGS)

bench-admission-smoke: build ## the load tool in a few seconds (CI: it must run and see zero errors)
	$(GO) run ./cmd/admission-load -binary $(DYNAMIC_CONFIG) -smoke

bench-size: ## per-item cost over pod size (containers, env variables, annotations)
	$(GO) test ./test/loopback/ -run '^$$' -bench 'BenchmarkPodSize' -benchmem -v | grep -v '^=== RUN'
