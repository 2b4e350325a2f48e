package client

import (
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/keepalive"
)

// Keepalive and reconnection for a decider reached over a WAN path (a
// remote front door, docs/multi-cluster.md), harmless in-cluster:
//
//   - a ping every KeepaliveTime on an idle connection keeps NAT and
//     load-balancer idle timers (commonly 60–350 s) from silently dropping
//     it; the decider tolerates pings down to 10 s;
//   - a ping not answered within keepaliveTimeout closes the connection, so
//     a dead path is noticed in under a minute rather than at the next
//     admission's deadline;
//   - reconnection backs off to at most reconnectMaxDelay (gRPC's default
//     is 120 s), so a front door is back within seconds of the decider.
const (
	keepaliveTimeout  = 10 * time.Second
	reconnectMaxDelay = 5 * time.Second
	connectTimeout    = 5 * time.Second
)

// wanOptions are the dial options above.
func wanOptions() []grpc.DialOption {
	b := backoff.DefaultConfig
	b.MaxDelay = reconnectMaxDelay
	return []grpc.DialOption{
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: KeepaliveTime, Timeout: keepaliveTimeout, PermitWithoutStream: true}),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: b, MinConnectTimeout: connectTimeout}),
	}
}
