# mk/docs.mk — the user documentation generated from the annotation registry
# (decider/core/registry), and the chart's fleet keys (_installation.tpl's list, and
# agent.defaults in values.yaml and values.schema.json, which the README table reads).
# Included by the root Makefile (`-include mk/*.mk`).

CI_TARGETS += check-docs

.PHONY: docs check-docs

docs: ## regenerate docs/annotations.md from the annotation registry, the chart README's Parameters table from values.schema.json, and the chart's fleet keys (template list, values, schema) from the installation table
	$(GO) run ./cmd/docgen -out docs/annotations.md
	$(GO) run ./cmd/chartkeys
	$(GO) run ./cmd/chartdoc

check-docs: ## fail when docs/annotations.md, the chart README's Parameters table or the chart's fleet key list is stale
	$(GO) run ./cmd/docgen -check -out docs/annotations.md
	$(GO) run ./cmd/chartkeys -check
	$(GO) run ./cmd/chartdoc -check
