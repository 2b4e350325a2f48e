package metrics

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// GRPCServer is the gRPC server metric set: the series the go-grpc-middleware
// Prometheus provider exports (grpc_server_started_total,
// grpc_server_handled_total, grpc_server_msg_received_total,
// grpc_server_msg_sent_total, grpc_server_handling_seconds with the default
// buckets), same names, help, labels and counting rules, so dashboards and
// alerts read them unchanged. It is its own because its interceptors look a
// method's series up once and keep them: the provider resolved five label
// sets and allocated a reporter on every call, on the path every admission
// takes.
type GRPCServer struct {
	started, handled, received, sent *prometheus.CounterVec
	handling                         *prometheus.HistogramVec

	methods sync.Map // methodKey → *methodSeries
}

// methodKey names one method of one call type (a method is served as one
// type; the type is in the key because it is a label).
type methodKey struct {
	fullMethod string
	typ        string
}

// methodSeries are one method's series. Each is resolved once, when it is
// first counted, so a series appears exactly when the provider's would
// (grpc_server_msg_sent_total only after a call that sent, a code's
// handled series only after a call that ended with it); OK, every call but
// a failed one, is kept, the other codes are looked up when they happen.
type methodSeries struct {
	labels                  [3]string // grpc_type, grpc_service, grpc_method
	started, received, sent lazy[prometheus.Counter]
	handling                lazy[prometheus.Observer]
	handledOK               lazy[prometheus.Counter]
	handled                 *prometheus.CounterVec
}

// lazy is one series, resolved from its vector on first use.
type lazy[T any] struct {
	once    sync.Once
	series  T
	resolve func() T
}

func (l *lazy[T]) get() T {
	l.once.Do(func() { l.series = l.resolve() })
	return l.series
}

// The call types, as the provider spells them (the grpc_type label).
const (
	typeUnary        = "unary"
	typeClientStream = "client_stream"
	typeServerStream = "server_stream"
	typeBidiStream   = "bidi_stream"
)

// NewGRPCServer creates the gRPC server metric set (not registered).
func NewGRPCServer() *GRPCServer {
	labels := []string{"grpc_type", "grpc_service", "grpc_method"}
	withCode := []string{"grpc_type", "grpc_service", "grpc_method", "grpc_code"}
	return &GRPCServer{
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_started_total",
			Help: "Total number of RPCs started on the server.",
		}, labels),
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_handled_total",
			Help: "Total number of RPCs completed on the server, regardless of success or failure.",
		}, withCode),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_msg_received_total",
			Help: "Total number of RPC stream messages received on the server.",
		}, labels),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_msg_sent_total",
			Help: "Total number of gRPC stream messages sent by the server.",
		}, labels),
		handling: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "grpc_server_handling_seconds",
			Help:    "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
			Buckets: prometheus.DefBuckets,
		}, labels),
	}
}

// Describe implements prometheus.Collector.
func (g *GRPCServer) Describe(ch chan<- *prometheus.Desc) {
	g.started.Describe(ch)
	g.handled.Describe(ch)
	g.received.Describe(ch)
	g.sent.Describe(ch)
	g.handling.Describe(ch)
}

// Collect implements prometheus.Collector.
func (g *GRPCServer) Collect(ch chan<- prometheus.Metric) {
	g.started.Collect(ch)
	g.handled.Collect(ch)
	g.received.Collect(ch)
	g.sent.Collect(ch)
	g.handling.Collect(ch)
}

// series returns the method's series, resolving them on its first call.
func (g *GRPCServer) series(fullMethod, typ string) *methodSeries {
	key := methodKey{fullMethod, typ}
	if s, ok := g.methods.Load(key); ok {
		return s.(*methodSeries)
	}
	service, method := splitFullMethod(fullMethod)
	s := &methodSeries{labels: [3]string{typ, service, method}, handled: g.handled}
	l := s.labels[:]
	s.started.resolve = func() prometheus.Counter { return g.started.WithLabelValues(l...) }
	s.received.resolve = func() prometheus.Counter { return g.received.WithLabelValues(l...) }
	s.sent.resolve = func() prometheus.Counter { return g.sent.WithLabelValues(l...) }
	s.handling.resolve = func() prometheus.Observer { return g.handling.WithLabelValues(l...) }
	s.handledOK.resolve = func() prometheus.Counter { return s.handledBy(codes.OK) }
	actual, _ := g.methods.LoadOrStore(key, s)
	return actual.(*methodSeries)
}

// done counts a finished call: handled by its code, and its handling time.
func (s *methodSeries) done(err error, elapsed time.Duration) {
	if code := codeOf(err); code == codes.OK {
		s.handledOK.get().Inc()
	} else {
		s.handledBy(code).Inc()
	}
	s.handling.get().Observe(elapsed.Seconds())
}

func (s *methodSeries) handledBy(code codes.Code) prometheus.Counter {
	return s.handled.WithLabelValues(s.labels[0], s.labels[1], s.labels[2], code.String())
}

// UnaryServerInterceptor counts unary calls as the provider does: started,
// one message received, one sent when the handler succeeded, handled by code
// and the handling time.
func (g *GRPCServer) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		s := g.series(info.FullMethod, typeUnary)
		s.started.get().Inc()
		s.received.get().Inc()
		resp, err := handler(ctx, req)
		if err == nil {
			s.sent.get().Inc()
		}
		s.done(err, time.Since(start))
		return resp, err
	}
}

// StreamServerInterceptor counts streaming calls as the provider does:
// started, every message received or sent without error, handled by code
// and the handling time.
func (g *GRPCServer) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		start := time.Now()
		s := g.series(info.FullMethod, streamType(info))
		s.started.get().Inc()
		err := handler(srv, &countedStream{ServerStream: ss, s: s})
		s.done(err, time.Since(start))
		return err
	}
}

// countedStream counts a stream's messages.
type countedStream struct {
	grpc.ServerStream
	s *methodSeries
}

// SendMsg implements grpc.ServerStream.
func (c *countedStream) SendMsg(m any) error {
	err := c.ServerStream.SendMsg(m)
	if err == nil {
		c.s.sent.get().Inc()
	}
	return err
}

// RecvMsg implements grpc.ServerStream.
func (c *countedStream) RecvMsg(m any) error {
	err := c.ServerStream.RecvMsg(m)
	if err == nil {
		c.s.received.get().Inc()
	}
	return err
}

func streamType(info *grpc.StreamServerInfo) string {
	switch {
	case info.IsClientStream && !info.IsServerStream:
		return typeClientStream
	case !info.IsClientStream && info.IsServerStream:
		return typeServerStream
	}
	return typeBidiStream
}

// codeOf is the call's code as the provider reads it: the status's, or
// the context error's for a bare context error.
func codeOf(err error) codes.Code {
	s, ok := status.FromError(err)
	if !ok {
		s = status.FromContextError(err)
	}
	return s.Code()
}

// splitFullMethod splits "/package.Service/Method" as the provider does.
func splitFullMethod(fullMethod string) (service, method string) {
	fullMethod = strings.TrimPrefix(fullMethod, "/")
	if i := strings.Index(fullMethod, "/"); i >= 0 {
		return fullMethod[:i], fullMethod[i+1:]
	}
	return "unknown", "unknown"
}
