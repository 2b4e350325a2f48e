# mk/docs.mk — the user documentation generated from the annotation registry
# (decider/registry). Included by the root Makefile (`-include mk/*.mk`).

CI_TARGETS += check-docs

.PHONY: docs check-docs

docs: ## regenerate docs/annotations.md from the annotation registry
	$(GO) run ./cmd/docgen -out docs/annotations.md

check-docs: ## fail when docs/annotations.md differs from what the registry generates
	$(GO) run ./cmd/docgen -check -out docs/annotations.md
