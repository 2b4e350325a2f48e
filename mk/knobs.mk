# mk/knobs.mk — the typed knob IDs generated from the annotation registry
# (decider/registry/ids.go). Included by the root Makefile (`-include mk/*.mk`).

CI_TARGETS += check-knobs

.PHONY: knobs check-knobs

knobs: ## regenerate decider/registry/ids.go (one typed ID per registry row)
	$(GO) run ./cmd/knobgen -out decider/registry/ids.go

check-knobs: ## fail when decider/registry/ids.go differs from what the registry table generates
	$(GO) run ./cmd/knobgen -check -out decider/registry/ids.go
