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
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// BenchmarkDecide is one Decide as the gRPC server calls it (without the
// transport): request checks, conversions, the resolver, metrics and the
// JSON decision line — the decider's share of every pod write.
func BenchmarkDecide(b *testing.B) {
	svc := New(installationloader.NewStore(installation.Empty()), slog.New(slog.NewJSONHandler(io.Discard, nil)), metrics.NewDecider(prometheus.NewRegistry()))
	req := &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: consulPod()}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Decide(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
