package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// call is one call the interceptors see: unary when stream is nil.
type call struct {
	fullMethod string
	stream     *grpc.StreamServerInfo
	recv, sent int // stream messages that went through
	recvErr    bool
	err        error
}

// fakeStream hands out recv messages, then io.EOF (or an error).
type fakeStream struct {
	grpc.ServerStream
	recv    int
	recvErr bool
}

func (f *fakeStream) Context() context.Context { return context.Background() }
func (f *fakeStream) SendMsg(any) error        { return nil }
func (f *fakeStream) RecvMsg(any) error {
	if f.recv == 0 {
		if f.recvErr {
			return status.Error(codes.Canceled, "gone")
		}
		return io.EOF
	}
	f.recv--
	return nil
}

// run passes the calls through a unary and a stream interceptor.
func run(unary grpc.UnaryServerInterceptor, stream grpc.StreamServerInterceptor, calls []call) {
	for _, c := range calls {
		if c.stream == nil {
			info := &grpc.UnaryServerInfo{FullMethod: c.fullMethod}
			_, _ = unary(context.Background(), "req", info, func(context.Context, any) (any, error) { return "resp", c.err })
			continue
		}
		info := *c.stream
		info.FullMethod = c.fullMethod
		fs := &fakeStream{recv: c.recv, recvErr: c.recvErr}
		_ = stream(nil, fs, &info, func(_ any, ss grpc.ServerStream) error {
			for ss.RecvMsg(nil) == nil {
			}
			for range c.sent {
				_ = ss.SendMsg(nil)
			}
			return c.err
		})
	}
}

// exposition is every series of the collector with its count (a counter's
// value, a histogram's sample count, bucket counts left out: they hold times),
// one line per series, sorted, with each family's help and type.
func exposition(t *testing.T, c prometheus.Collector) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range families {
		lines = append(lines, fmt.Sprintf("# %s %s %s", f.GetName(), f.GetType(), f.GetHelp()))
		for _, m := range f.GetMetric() {
			lines = append(lines, fmt.Sprintf("%s%s %v", f.GetName(), labels(m), count(m)))
			if h := m.GetHistogram(); h != nil {
				lines = append(lines, fmt.Sprintf("%s%s buckets %d", f.GetName(), labels(m), len(h.GetBucket())))
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func labels(m *dto.Metric) string {
	var b strings.Builder
	for _, l := range m.GetLabel() {
		fmt.Fprintf(&b, "{%s=%q}", l.GetName(), l.GetValue())
	}
	return b.String()
}

func count(m *dto.Metric) any {
	if h := m.GetHistogram(); h != nil {
		return h.GetSampleCount()
	}
	return m.GetCounter().GetValue()
}

func TestTheGRPCServerMetricsCountEveryCallAsTheMiddlewareProviderDoes(t *testing.T) {
	const decide = "/dynamicconfig.decider.v1.DeciderService/Decide"
	serverStream := &grpc.StreamServerInfo{IsServerStream: true}
	cases := []struct {
		name  string
		calls []call
	}{
		{"no call exports no series", nil},
		{"one good unary call", []call{{fullMethod: decide}}},
		{"good and failed unary calls count by code", []call{
			{fullMethod: decide}, {fullMethod: decide, err: status.Error(codes.Unauthenticated, "no")},
			{fullMethod: decide, err: status.Error(codes.Unauthenticated, "no")}, {fullMethod: decide},
		}},
		{"a failed first call exports no OK series", []call{{fullMethod: decide, err: status.Error(codes.InvalidArgument, "bad")}}},
		{"a bare context error counts as its code", []call{
			{fullMethod: decide, err: context.DeadlineExceeded}, {fullMethod: decide, err: context.Canceled},
		}},
		{"an error that is no status counts as Unknown", []call{{fullMethod: decide, err: errors.New("boom")}}},
		{"two methods keep their own series", []call{
			{fullMethod: decide}, {fullMethod: "/grpc.health.v1.Health/Check"},
		}},
		{"a method name without a service is unknown/unknown", []call{{fullMethod: "nonsense"}}},
		{"stream calls count every message through", []call{
			{fullMethod: "/dynamicconfig.decider.v1.FollowerService/Follow", stream: serverStream, recv: 1, sent: 3},
			{fullMethod: "/dynamicconfig.decider.v1.FollowerService/Follow", stream: serverStream, recv: 2, recvErr: true, err: status.Error(codes.Canceled, "gone")},
		}},
		{"client and bidi streams are typed as such", []call{
			{fullMethod: "/p.S/Up", stream: &grpc.StreamServerInfo{IsClientStream: true}, recv: 4},
			{fullMethod: "/p.S/Chat", stream: &grpc.StreamServerInfo{IsClientStream: true, IsServerStream: true}, recv: 1, sent: 1},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			provider := grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram())
			run(provider.UnaryServerInterceptor(), provider.StreamServerInterceptor(), tc.calls)
			ours := NewGRPCServer()
			run(ours.UnaryServerInterceptor(), ours.StreamServerInterceptor(), tc.calls)
			want, got := exposition(t, provider), exposition(t, ours)
			if got != want {
				t.Fatalf("the series differ from the provider's:\n--- ours\n%s\n--- provider\n%s", got, want)
			}
			if len(tc.calls) > 0 && !strings.Contains(got, "grpc_server_handled_total{") {
				t.Fatalf("no handled series:\n%s", got)
			}
		})
	}
}

func BenchmarkTheUnaryInterceptor(b *testing.B) {
	info := &grpc.UnaryServerInfo{FullMethod: "/dynamicconfig.decider.v1.DeciderService/Decide"}
	handler := func(context.Context, any) (any, error) { return "resp", nil }
	for _, c := range []struct {
		name        string
		interceptor grpc.UnaryServerInterceptor
	}{
		{"provider", grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram()).UnaryServerInterceptor()},
		{"ours", NewGRPCServer().UnaryServerInterceptor()},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = c.interceptor(context.Background(), "req", info, handler)
			}
		})
	}
}
