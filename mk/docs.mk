# mk/docs.mk — the user documentation generated from the annotation registry
# (decider/core/registry). Included by the root Makefile (`-include mk/*.mk`).

CI_TARGETS += check-docs

.PHONY: docs check-docs

docs: ## regenerate docs/annotations.md from the annotation registry and the chart README's Parameters table from values.schema.json
	$(GO) run ./cmd/docgen -out docs/annotations.md
	$(GO) run ./cmd/chartdoc

check-docs: ## fail when docs/annotations.md or the chart README's Parameters table is stale
	$(GO) run ./cmd/docgen -check -out docs/annotations.md
	$(GO) run ./cmd/chartdoc -check
