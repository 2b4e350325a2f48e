package service

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutstate"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// BenchmarkDecide is one Decide as the gRPC server calls it (without the
// transport): request checks, conversions, the resolver, metrics and the
// JSON decision line — the decider's share of every pod write. The front
// door's requests ask for the plan view. Under a rollout (spec 10 §3) the
// candidate decides too and the two decisions are compared and counted:
// "shadow, same" a candidate deciding as the active (every decision
// same), "shadow, changed" one with another agent image (every decision
// changed: the differing workload's entry updated), "canary" the candidate
// answering; the target is at most one more DecidePlan (issue 41).
func BenchmarkDecide(b *testing.B) {
	cases := []struct {
		name    string
		rollout string
	}{
		{"no rollout", ""},
		{"shadow, same", "candidate:\n  environment:\n    DYNAMIC_CONFIG_AGENT_IMAGE: " + installation.BuiltInAgentImage + "\n"},
		{"shadow, changed", "candidate:\n  environment:\n    DYNAMIC_CONFIG_AGENT_IMAGE: " + newImage + "\n"},
		{"canary", "candidate:\n  environment:\n    DYNAMIC_CONFIG_AGENT_IMAGE: " + newImage + "\nstage: canary\ncanary: {percent: 100}\n"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			store := installationloader.NewStore(installation.Empty())
			m := metrics.NewDecider(prometheus.NewRegistry())
			svc := New(store, slog.New(slog.NewJSONHandler(io.Discard, nil)), m)
			if c.rollout != "" {
				svc.WithRollouts(rolloutstate.New(rolloutstate.Config{Rollouts: rolloutloader.NewStore(buildRollout(b, c.rollout)),
					Installation: store, Metrics: m.Rollout(), Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}))
			}
			req := &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: deploymentPod("shop", "web"), View: deciderv1.DecisionView_DECISION_VIEW_PLAN}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := svc.Decide(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
