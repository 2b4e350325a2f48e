# mk/knobs.mk — the typed knob IDs generated from the annotation registry
# (decider/core/registry/ids.go). Included by the root Makefile (`-include mk/*.mk`).

CI_TARGETS += check-knobs

.PHONY: knobs check-knobs

knobs: ## regenerate decider/core/registry/ids.go (one typed ID per registry row)
	$(GO) run ./cmd/knobgen -out decider/core/registry/ids.go

check-knobs: ## fail when decider/core/registry/ids.go differs from what the registry table generates
	$(GO) run ./cmd/knobgen -check -out decider/core/registry/ids.go
