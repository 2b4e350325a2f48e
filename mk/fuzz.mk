# mk/fuzz.mk — every native fuzz target, briefly, in CI (issue 17). Included by
# the root Makefile (`-include mk/*.mk`).
#
# `make fuzz` (root Makefile) explores for FUZZTIME per target; `make fuzz-ci`
# runs the same targets for FUZZ_CI_TIME each, so a regression a fuzzer finds
# in seconds fails CI. Twenty-four targets in fifteen packages (issue 23 added the
# callers- and classes-file parsers and the DNS-name checks; issue 38 the capped
# decoders: the front door's count before the decode, the codec's count on the
# wire): 24 × 3s of fuzzing plus one instrumented build per package, about
# 150s on two loaded cores
# (scripts/fuzz.sh prints the count and the time). The seed corpora are
# committed under <package>/testdata/fuzz/<target>/ (plain `go test` runs
# them too); a failing input lands there as well, to be committed with its fix.

FUZZ_CI_TIME ?= 3s

CI_TARGETS += fuzz-ci

.PHONY: fuzz-ci
fuzz-ci: ## every fuzz target for FUZZ_CI_TIME (default 3s): the CI's bounded fuzzing
	GO="$(GO)" FUZZTIME="$(FUZZ_CI_TIME)" FUZZMINIMIZETIME=5s scripts/fuzz.sh
