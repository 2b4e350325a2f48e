package server

import (
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// Bounds the transport holds before any credential is checked (issue 23):
// an anonymous peer can make the decider hold no more than these.
const (
	// MaxHeaderListBytes bounds a call's whole header block. A
	// DeciderService call carries a handful of pseudo-headers, content-type,
	// te, grpc-timeout, user-agent, a trace context and one bearer token of
	// a few hundred bytes (a projected ServiceAccount token is about 1 KiB):
	// well under 4 KiB. grpc-go's default of 16 MiB let one anonymous call
	// hold 16 MiB before its token was looked at.
	MaxHeaderListBytes = 32 << 10
	// MaxConcurrentStreams bounds the calls in flight on one connection; a
	// front door opens one connection per decider and queues calls above it.
	MaxConcurrentStreams = 128
	// DefaultConnectionTimeout bounds a new connection's TLS and HTTP/2
	// handshake (grpc-go's default is 120 s).
	DefaultConnectionTimeout = 10 * time.Second
	// DefaultMaxConnectionIdle closes a connection that carried no call for
	// this long (a front door reconnects on its next call).
	DefaultMaxConnectionIdle = time.Minute
)

// transportBounds are the server options of those bounds; connTimeout
// and idle of 0 take the defaults.
func transportBounds(connTimeout, idle, age, ageGrace time.Duration) []grpc.ServerOption {
	if connTimeout <= 0 {
		connTimeout = DefaultConnectionTimeout
	}
	if idle <= 0 {
		idle = DefaultMaxConnectionIdle
	}
	return []grpc.ServerOption{
		grpc.MaxHeaderListSize(MaxHeaderListBytes),
		grpc.MaxConcurrentStreams(MaxConcurrentStreams),
		grpc.ConnectionTimeout(connTimeout),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{
			MinTime:             KeepaliveMinTime,
			PermitWithoutStream: true,
		}),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle:     idle,
			MaxConnectionAge:      age,
			MaxConnectionAgeGrace: ageGrace,
		}),
	}
}
