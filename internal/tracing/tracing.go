// Package tracing is the OpenTelemetry tracing both processes share (issue
// 21, docs/tracing.md): one trace per admission, from the front door's
// request (continuing the API server's W3C traceparent) over the gRPC hop
// (otelgrpc stats handlers) into the decider's resolve and plan.
//
// Tracing is off unless an OTLP endpoint is named (--otlp-endpoint or the
// standard OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT). Off is a nil *Tracing:
// every method works on it and does nothing, so the hot path pays no
// allocation, no context wrapping and no interface conversion for it.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc/filters"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/stats"

	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// ScopeName is the instrumentation scope of the project's own spans.
const ScopeName = "github.com/dynamic-config-admission/dynamic-config"

// Span attribute keys (docs/tracing.md). Values are ids, slugs, names and
// counts; never an annotation value or a message.
const (
	AttrWebhook    = "dynamic_config.webhook"
	AttrUID        = "dynamic_config.uid"
	AttrKind       = "dynamic_config.kind"
	AttrNamespace  = "dynamic_config.namespace"
	AttrOperation  = "dynamic_config.operation"
	AttrOutcome    = "dynamic_config.outcome"
	AttrReason     = "dynamic_config.reason"
	AttrCheck      = "dynamic_config.check"
	AttrRevision   = "dynamic_config.revision"
	AttrDecisionID = "dynamic_config.decision_id"
	AttrPatchOps   = "dynamic_config.patch_ops"
	AttrPurpose    = "dynamic_config.purpose"
	AttrCluster    = "dynamic_config.cluster"
	// AttrDecisionSource is "cache" or "stale-cache" on the decide span of
	// an answer from the front door's decision cache (issue 43).
	AttrDecisionSource = "dynamic_config.decision_source"
)

// Config says whether and where spans are exported.
type Config struct {
	// Endpoint is --otlp-endpoint: the URL of an OTLP/HTTP receiver
	// (http:// plaintext, https:// TLS); /v1/traces is appended unless the
	// URL has a path of its own. Empty: the OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
	// (as it is) or OTEL_EXPORTER_OTLP_ENDPOINT (a base URL) variable, and
	// without either tracing is off.
	Endpoint string
	// SampleRatio is the ratio of new traces kept (0–1); a request whose
	// parent was sampled (the API server's traceparent) follows its parent.
	SampleRatio float64
	// SampleRatioSet: SampleRatio was given (flag or its variable); when it
	// was not, an OTEL_TRACES_SAMPLER variable chooses the sampler instead.
	SampleRatioSet bool
	// ServiceName and ServiceVersion name the process (OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES override them).
	ServiceName, ServiceVersion string
	// Getenv reads the process environment (nil = none set).
	Getenv func(string) string
	// Logger receives export failures (nil = discard).
	Logger *slog.Logger
	// Exporter, when set, replaces the OTLP exporter and turns tracing on
	// (tests); spans are sent synchronously.
	Exporter sdktrace.SpanExporter
}

// Tracing is the process's tracer provider and propagator. A nil *Tracing
// is tracing off.
type Tracing struct {
	provider   *sdktrace.TracerProvider
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
}

// Enabled reports whether the configuration turns tracing on.
func (c Config) Enabled() bool {
	getenv := c.getenv()
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return false
	}
	return c.Exporter != nil || c.Endpoint != "" ||
		getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

func (c Config) getenv() func(string) string {
	if c.Getenv == nil {
		return func(string) string { return "" }
	}
	return c.Getenv
}

// CheckSampleRatio checks a --trace-sample-ratio value.
func CheckSampleRatio(r float64) error {
	if r < 0 || r > 1 || math.IsNaN(r) {
		return fmt.Errorf("--trace-sample-ratio is %s: a ratio from 0 to 1", strconv.FormatFloat(r, 'g', -1, 64))
	}
	return nil
}

// New starts tracing as cfg says; it returns nil (off) when no endpoint is
// named. The exporter connects lazily: an unreachable collector costs
// dropped spans and a logged warning, never an admission.
func New(ctx context.Context, cfg Config) (*Tracing, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	if err := CheckSampleRatio(cfg.SampleRatio); err != nil {
		return nil, err
	}
	getenv := cfg.getenv()
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", cfg.ServiceName), attribute.String("service.version", cfg.ServiceVersion)),
		resource.WithFromEnv())
	if err != nil && res == nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if cfg.SampleRatioSet || getenv("OTEL_TRACES_SAMPLER") == "" {
		opts = append(opts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.SampleRatio))))
	}
	if cfg.Exporter != nil {
		opts = append(opts, sdktrace.WithSyncer(cfg.Exporter))
	} else {
		endpoint, err := exportEndpoint(cfg.Endpoint, getenv)
		if err != nil {
			return nil, err
		}
		client, err := newOTLPHTTP(endpoint, getenv)
		if err != nil {
			return nil, err
		}
		exp, err := otlptrace.New(ctx, client)
		if err != nil {
			return nil, fmt.Errorf("tracing: the OTLP exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("tracing: spans not exported", "error", redact.URL(err.Error()))
	}))
	tp := sdktrace.NewTracerProvider(opts...)
	return &Tracing{
		provider:   tp,
		tracer:     tp.Tracer(ScopeName),
		propagator: propagation.TraceContext{},
	}, nil
}

// Enabled reports whether t traces (t != nil).
func (t *Tracing) Enabled() bool { return t != nil }

// Shutdown flushes the spans still queued and stops the exporter, within
// grace.
func (t *Tracing) Shutdown(grace time.Duration) error {
	if t == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := t.provider.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("tracing: shutdown: %w", err)
	}
	return nil
}

// Start starts a span named name as a child of ctx's span. Off, it returns
// ctx as it is and a Span that does nothing.
func (t *Tracing) Start(ctx context.Context, name string) (context.Context, Span) {
	if t == nil {
		return ctx, Span{}
	}
	ctx, s := t.tracer.Start(ctx, name)
	return ctx, Span{s}
}

// StartServer starts the server span of an HTTP request: the child of the
// caller's W3C traceparent when the request carries one (the API server
// with APIServerTracing), else a root span. Off, it returns ctx as it is.
func (t *Tracing) StartServer(ctx context.Context, h http.Header, name string) (context.Context, Span) {
	if t == nil {
		return ctx, Span{}
	}
	ctx = t.propagator.Extract(ctx, propagation.HeaderCarrier(h))
	ctx, s := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
	return ctx, Span{s}
}

// grpcFilter leaves out of the traces what is not an admission's: health
// checks (every replica's client-side health watch), reflection, the
// leader's long-lived follower streams and the front doors' long-lived
// revision watches.
var grpcFilter = filters.Not(filters.Any(
	filters.HealthCheck(),
	filters.ServicePrefix("grpc.reflection."),
	filters.ServiceName("dynamicconfig.decider.v1.InstallationSyncService"),
	filters.FullMethodName("/dynamicconfig.decider.v1.DeciderService/WatchRevision"),
))

func (t *Tracing) grpcOptions() []otelgrpc.Option {
	return []otelgrpc.Option{
		otelgrpc.WithTracerProvider(t.provider),
		otelgrpc.WithPropagators(t.propagator),
		otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()), // the metrics are Prometheus's (spec 07 §5)
		otelgrpc.WithFilter(grpcFilter),
	}
}

// ServerHandler is the decider's gRPC stats handler: it continues the
// front door's trace from the call's metadata. Off: nil (no handler).
func (t *Tracing) ServerHandler() stats.Handler {
	if t == nil {
		return nil
	}
	return otelgrpc.NewServerHandler(t.grpcOptions()...)
}

// ClientHandler is the front door's gRPC stats handler: it sends the
// admission's trace context with every call. Off: nil (no handler).
func (t *Tracing) ClientHandler() stats.Handler {
	if t == nil {
		return nil
	}
	return otelgrpc.NewClientHandler(t.grpcOptions()...)
}

// Span is one span, or nothing when tracing is off (the zero Span).
type Span struct {
	s trace.Span
}

// Recording reports whether attributes set on the span are kept: build
// attribute lists only when it does.
func (s Span) Recording() bool { return s.s != nil && s.s.IsRecording() }

// End ends the span.
func (s Span) End() {
	if s.s != nil {
		s.s.End()
	}
}

// SetAttributes sets attributes on a recording span.
func (s Span) SetAttributes(kv ...attribute.KeyValue) {
	if s.s != nil {
		s.s.SetAttributes(kv...)
	}
}

// Fail marks the span failed with a fixed description (an outcome or a
// code, never a message that could quote a value).
func (s Span) Fail(description string) {
	if s.s != nil {
		s.s.SetStatus(codes.Error, description)
	}
}

// IDs are the trace and span ids of ctx's span in hex, "" when ctx carries
// none (tracing off).
func IDs(ctx context.Context) (traceID, spanID string) {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return "", ""
	}
	return sc.TraceID().String(), sc.SpanID().String()
}

// IDs are the trace and span ids of s, "" when it is the zero Span.
func (s Span) IDs() (traceID, spanID string) {
	if s.s == nil {
		return "", ""
	}
	sc := s.s.SpanContext()
	if !sc.IsValid() {
		return "", ""
	}
	return sc.TraceID().String(), sc.SpanID().String()
}

// HeaderTraceID is the trace id of a request's W3C traceparent header
// (version 00: "00-<32 hex>-<16 hex>-<2 hex>"), "" when there is none or
// it is malformed. It reads the header without allocating (a substring of
// the value), for the admission line when tracing is off.
func HeaderTraceID(h http.Header) string {
	v := h["Traceparent"]
	if len(v) != 1 {
		return ""
	}
	p := v[0]
	if len(p) < 55 || p[2] != '-' || p[35] != '-' || p[52] != '-' || p[0] == 'f' {
		return ""
	}
	id := p[3:35]
	zero := true
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return ""
		}
		zero = zero && c == '0'
	}
	if zero {
		return ""
	}
	return id
}

// FromContext is ctx's span (the zero Span when there is none).
func FromContext(ctx context.Context) Span {
	s := trace.SpanFromContext(ctx)
	if !s.SpanContext().IsValid() {
		return Span{}
	}
	return Span{s}
}
