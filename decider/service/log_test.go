package service

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
)

// countingHandler takes every record and keeps none: what the decision
// line costs to build, without a handler's own encoding.
type countingHandler struct{ records int }

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(context.Context, slog.Record) error {
	h.records++
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// aFollower is a follower as the decision line sees it: its id.
type aFollower struct{ Follower }

func (aFollower) ID() string { return "west-decider-0" }

func TestTheDecisionLineAllocatesNoMoreForItsOptionalFields(t *testing.T) {
	h := &countingHandler{}
	logger := slog.New(h)
	f := &decision.Facts{Namespace: "default", GenerateName: "web-6d4cf56db6-", Purpose: decision.PurposeMutate}
	ctx := context.Background()
	allocs := func(d *decision.Decision, follower Follower, under rolloutLine) float64 {
		return testing.AllocsPerRun(200, func() {
			logDecision(ctx, logger, f, d, time.Millisecond, follower, "", "", under)
		})
	}
	plain := allocs(&decision.Decision{DecisionID: "id", Outcome: decision.OutcomeInject, InstallationRevision: "sha256:0"}, nil, rolloutLine{})
	// the store list and slog's record past its five inline attributes;
	// the attribute slice itself stays on the stack
	if plain > 2 {
		t.Errorf("a plain decision line allocates %v times; want at most 2 (the store list, the record's overflow)", plain)
	}
	canary := rolloutLine{on: true, route: rollout.RouteCanary, cmp: rollout.Comparison{Result: rollout.Changed}}
	cases := []struct {
		name     string
		d        *decision.Decision
		follower Follower
		under    rolloutLine
	}{
		{"a line under a rollout", &decision.Decision{DecisionID: "id", Outcome: decision.OutcomeInject}, nil, canary},
		{"a follower's line under a rollout that consulted classes",
			&decision.Decision{DecisionID: "id", Outcome: decision.OutcomeInject, ClassesRevision: "sha256:1"}, aFollower{}, canary},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := allocs(c.d, c.follower, c.under); got > plain {
				t.Errorf("the decision line allocates %v times; %v without its optional fields (they must fit the line's slice)", got, plain)
			}
		})
	}
	if h.records == 0 {
		t.Fatal("no decision line was written")
	}
}
