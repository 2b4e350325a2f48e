package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
)

// tracingShutdownGrace bounds the flush of the spans still queued at exit.
const tracingShutdownGrace = 5 * time.Second

// tracingFlags are the tracing flags of the long-running commands (decider,
// frontdoor, serve; docs/tracing.md). Tracing is off unless an endpoint is
// named here or by the standard OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT.
type tracingFlags struct {
	endpoint string
	ratio    float64
}

func (t *tracingFlags) register(f *flagSet) {
	f.stringVar(&t.endpoint, "otlp-endpoint", "DYNAMIC_CONFIG_OTLP_ENDPOINT", "",
		"send one trace per admission to this OTLP/HTTP receiver, e.g. http://otel-collector:4318 (empty = OTEL_EXPORTER_OTLP_ENDPOINT; neither = tracing off)")
	f.float64Var(&t.ratio, "trace-sample-ratio", "DYNAMIC_CONFIG_TRACE_SAMPLE_RATIO", 1,
		"ratio of new traces kept, 0 to 1; a request the API server's traceparent marks sampled is always kept (parent-based)")
}

// valid checks the sample ratio, printing the problem.
func (t *tracingFlags) valid(stderr io.Writer, cmd string) bool {
	if err := tracing.CheckSampleRatio(t.ratio); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return false
	}
	return true
}

// start turns tracing on as the flags and the environment say (nil: off)
// for the process named service.
func (t *tracingFlags) start(ctx context.Context, fs *flagSet, service string, logger *slog.Logger) (*tracing.Tracing, error) {
	tr, err := tracing.New(ctx, tracing.Config{
		Endpoint:       t.endpoint,
		SampleRatio:    t.ratio,
		SampleRatioSet: fs.isSet("trace-sample-ratio"),
		ServiceName:    service,
		ServiceVersion: binaryVersion(),
		Getenv: func(name string) string {
			v, _ := lookupEnvVar(name)
			return v
		},
		Logger: logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fs.name, err)
	}
	if tr.Enabled() {
		logger.Info("tracing on", "service", service, "sample_ratio", t.ratio)
	}
	return tr, nil
}

// stopTracing flushes the spans still queued.
func stopTracing(tr *tracing.Tracing, logger *slog.Logger) {
	if err := tr.Shutdown(tracingShutdownGrace); err != nil {
		logger.Warn("tracing: spans lost at exit", "error", err.Error())
	}
}
