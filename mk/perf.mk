# mk/perf.mk — API compatibility and admission performance (issue 11).
# Included by the root Makefile (`-include mk/*.mk`).

CI_TARGETS += breaking bench-admission-smoke

# BREAKING_AGAINST is the commit whose proto/ the current one must stay
# wire- and source-compatible with (default: the previous commit).
BREAKING_AGAINST ?= HEAD~1
# BENCH_ARGS are extra flags for the load tool (e.g. BENCH_ARGS='-duration 5s -c 1,8').
BENCH_ARGS ?=

.PHONY: breaking bench-admission bench-admission-smoke bench-size

breaking: $(BUF) ## buf breaking: proto/ against $(BREAKING_AGAINST) (default the previous commit)
	@if ! git rev-parse --verify -q "$(BREAKING_AGAINST)^{commit}" >/dev/null; then \
		echo "breaking: $(BREAKING_AGAINST) is not a commit here (a shallow clone?); fetch more history or set BREAKING_AGAINST"; \
		exit 1; \
	fi
	@dir="$$(mktemp -d)"; trap 'rm -rf "$$dir"' EXIT; \
		git archive "$(BREAKING_AGAINST)" buf.yaml proto | tar -x -C "$$dir"; \
		echo "$(BUF) breaking --against $(BREAKING_AGAINST)"; \
		$(BUF) breaking --against "$$dir"

bench-admission: build ## the admission load tool: floor webhook vs decider+frontdoor vs serve, c=1/8/32 (~2 min)
	$(GO) run ./cmd/admission-load -binary $(DYNAMIC_CONFIG) $(BENCH_ARGS)

bench-admission-smoke: build ## the load tool in a few seconds (CI: it must run and see zero errors)
	$(GO) run ./cmd/admission-load -binary $(DYNAMIC_CONFIG) -smoke

bench-size: ## per-item cost over pod size (containers, env variables, annotations)
	$(GO) test ./cmd/dynamic-config/ -run '^$$' -bench 'BenchmarkPodSize' -benchmem -v | grep -v '^=== RUN'
