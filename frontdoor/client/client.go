// Package client dials the decider for the front door (spec 07 §2):
// grpc.NewClient with round_robin over every resolved address, client-side
// health checking (a NOT_SERVING replica leaves the pick list), a retry of
// Decide on UNAVAILABLE, keepalive pings, fail-fast calls, and TLS, mTLS, a
// bearer token or plaintext.
package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	// The client-side health checking function registers itself on import;
	// without it healthCheckConfig below is silently ignored.
	_ "google.golang.org/grpc/health"
	"google.golang.org/grpc/resolver"
	"google.golang.org/protobuf/proto"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
)

// serviceConfig spreads calls over every address the resolver returns (the
// chart's headless Service with a dns:/// target), watches each replica's
// health for the DeciderService (a draining decider turns NOT_SERVING and
// leaves the pick list before it stops), and retries Decide — it has no
// side effects — on UNAVAILABLE, so a call caught by a replica that died
// goes to another one within the same deadline.
const serviceConfig = `{
  "loadBalancingConfig": [{"round_robin": {}}],
  "healthCheckConfig": {"serviceName": "` + deciderService + `"},
  "methodConfig": [{
    "name": [{"service": "` + deciderService + `", "method": "Decide"}],
    "retryPolicy": {
      "maxAttempts": 3,
      "initialBackoff": "0.01s",
      "maxBackoff": "0.1s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }]
}`

const deciderService = "dynamicconfig.decider.v1.DeciderService"

// KeepaliveTime is the ping interval on an idle connection. It must stay at
// or above the decider's server.KeepaliveMinTime, or the decider answers
// the pings with a too_many_pings GOAWAY.
const KeepaliveTime = 30 * time.Second

// flowWindow is the fixed HTTP/2 flow-control window of each stream and
// connection: far above any decision the decider sends.
const flowWindow = 1 << 20

// Config says how to reach the decider.
type Config struct {
	// Target is the gRPC target, e.g. dns:///dynamic-config-decider.dynamic-config.svc:9090.
	Target string
	// Plaintext dials without TLS (loopback and tests).
	Plaintext bool
	// CAFile verifies the decider's certificate; empty = the system roots.
	CAFile string
	// ClientCertFile and ClientKeyFile are the client pair for mTLS
	// (re-read when they change).
	ClientCertFile, ClientKeyFile string
	// ServerName is the name to verify; empty = the target's host.
	ServerName string
	// TokenFile holds the bearer token sent with every call (re-read when it
	// changes). With Plaintext it is refused unless the target is loopback.
	TokenFile string
	// Resolver, when set, resolves the target's scheme instead of the
	// registered ones (tests: a manual resolver standing in for DNS).
	Resolver resolver.Builder
	// MaxMessageBytes bounds every message sent and received: the budget of
	// --max-request-bytes (msgbudget.Bytes; 0 = the default budget), the
	// same number the decider holds to, so that no answer the decider sends
	// is refused here for its size.
	MaxMessageBytes int
	// WaitForFiles lets CAFile and the client pair be missing at New: the
	// handshakes fail until they appear (tls.mode selfRotate issues them).
	WaitForFiles bool
	// Tracing, when on, sends the admission's trace context with every call
	// and times each attempt in a client span (otelgrpc; health checks left
	// out). nil = off: no stats handler at all.
	Tracing *tracing.Tracing
}

// Client is a connection to the decider.
type Client struct {
	deciderv1.DeciderServiceClient
	conn *grpc.ClientConn
}

// New builds the client; the connection is made lazily on the first call.
func New(cfg Config) (*Client, error) {
	if cfg.Target == "" {
		return nil, errors.New("decider client: the target is empty")
	}
	budget := cfg.MaxMessageBytes
	if budget <= 0 {
		budget = msgbudget.Bytes(0)
	}
	opts := append([]grpc.DialOption{
		grpc.WithDefaultServiceConfig(serviceConfig),
		grpc.WithResolvers(staticBuilder{}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(budget), grpc.MaxCallSendMsgSize(budget)),
		grpc.WithChainUnaryInterceptor(budgetGuard(budget)),
		// Fixed flow-control windows turn off the BDP estimator, whose pings
		// otherwise cross the connection with almost every call.
		grpc.WithInitialWindowSize(flowWindow),
		grpc.WithInitialConnWindowSize(flowWindow),
	}, wanOptions()...)
	if cfg.Resolver != nil {
		opts = append(opts, grpc.WithResolvers(cfg.Resolver))
	}
	if h := cfg.Tracing.ClientHandler(); h != nil {
		opts = append(opts, grpc.WithStatsHandler(h))
	}

	loopback := isLoopbackTarget(cfg.Target)
	if cfg.Plaintext {
		if cfg.ClientCertFile != "" || cfg.ClientKeyFile != "" || cfg.CAFile != "" {
			return nil, errors.New("decider client: TLS files are set but the connection is plaintext")
		}
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	} else {
		creds, err := clientTLS(cfg)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.WithTransportCredentials(creds))
	}

	if cfg.TokenFile != "" {
		if cfg.Plaintext && !loopback {
			return nil, fmt.Errorf("decider client: a bearer token is not sent over plaintext to %s; use TLS or a loopback target", cfg.Target)
		}
		token, err := newBearerToken(cfg.TokenFile, !cfg.Plaintext)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.WithPerRPCCredentials(token))
	}

	conn, err := grpc.NewClient(cfg.Target, opts...)
	if err != nil {
		return nil, fmt.Errorf("decider client: %w", err)
	}
	return &Client{DeciderServiceClient: deciderv1.NewDeciderServiceClient(conn), conn: conn}, nil
}

// Close closes the connection; calls in flight fail with Canceled, so the
// caller drains its requests first.
func (c *Client) Close() error { return c.conn.Close() }

// Conn is the underlying connection (for the health service and tests).
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// messageSize is proto.Size of m, from the generated SizeVT (no reflection)
// when m has it.
func messageSize(m any) (int, bool) {
	switch m := m.(type) {
	case interface{ SizeVT() int }:
		return m.SizeVT(), true
	case proto.Message:
		return proto.Size(m), true
	default:
		return 0, false
	}
}

// budgetGuard refuses a question above the budget before grpc-go does, with
// a typed error (*msgbudget.OverBudgetError) the handler recognises without
// reading gRPC's text.
func budgetGuard(budget int) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if n, ok := messageSize(req); ok && n > budget {
			return &msgbudget.OverBudgetError{Size: n, Budget: budget}
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}
