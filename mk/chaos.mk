# mk/chaos.mk — issue 38's chaos tier against the real binary. Included by
# the root Makefile (`-include mk/*.mk`).
#
# test/chaos starts bin/dynamic-config as deciders and front doors on
# loopback: the installation document and the callers file rewritten in
# place under load (no decision from a partial file), an anonymous flood of
# a callers-file decider and the 50 000-container pod against a front door,
# and the largest reviews the caps allow — each process in a memory cgroup
# of its chart limit (cgroup v1 at /sys/fs/cgroup/memory, as root; the tests
# say so and skip where there is none). Without DYNAMIC_CONFIG_CHAOS_BINARY
# the package skips, so `make test` stays fast. About a minute.
#
# CHAOS_BINARY measures another build (the figures of an earlier commit),
# CHAOS_MEMORY_LIMIT replaces the chart's limits (e.g. 4Gi, to measure what
# a binary the chart's limit would kill takes), CHAOS_RUN selects tests.

CHAOS_BINARY       ?= $(DYNAMIC_CONFIG)
CHAOS_MEMORY_LIMIT ?=
CHAOS_RUN          ?= .

CI_TARGETS += chaos

.PHONY: chaos
chaos: build ## in-place rewrites under load, a flood and the largest pods against the binary in memory cgroups of the chart's limits (~1 min)
	DYNAMIC_CONFIG_CHAOS_BINARY=$(CHAOS_BINARY) DYNAMIC_CONFIG_CHAOS_MEMORY_LIMIT=$(CHAOS_MEMORY_LIMIT) \
		$(GO) test -count=1 -v -timeout 15m -run '$(CHAOS_RUN)' ./test/chaos/
