package client

import (
	"fmt"
	"net"
	"strings"

	"google.golang.org/grpc/resolver"
)

// StaticScheme is the target scheme that names a fixed list of decider
// replicas: static:///host:port,host:port,… (fleet-status, tests, and a
// front door pointed at deciders outside a cluster DNS).
const StaticScheme = "static"

// staticBuilder resolves static:/// targets to their listed addresses, once.
type staticBuilder struct{}

func (staticBuilder) Scheme() string { return StaticScheme }

func (staticBuilder) Build(target resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	addrs, err := StaticAddresses(target.Endpoint())
	if err != nil {
		return nil, err
	}
	state := resolver.State{}
	for _, a := range addrs {
		state.Endpoints = append(state.Endpoints, resolver.Endpoint{Addresses: []resolver.Address{{Addr: a}}})
	}
	if err := cc.UpdateState(state); err != nil {
		return nil, fmt.Errorf("static resolver: %w", err)
	}
	return staticResolver{}, nil
}

type staticResolver struct{}

func (staticResolver) ResolveNow(resolver.ResolveNowOptions) {}
func (staticResolver) Close()                                {}

// StaticAddresses parses the endpoint of a static:/// target: one or more
// host:port, comma-separated. An empty entry or one without a port is
// refused, naming it.
func StaticAddresses(endpoint string) ([]string, error) {
	if strings.TrimSpace(endpoint) == "" {
		return nil, fmt.Errorf("a static:/// target lists no address; want static:///host:port,host:port")
	}
	var out []string
	for _, part := range strings.Split(endpoint, ",") {
		addr := strings.TrimSpace(part)
		if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
			return nil, fmt.Errorf("the static:/// target entry %q is not host:port", addr)
		}
		out = append(out, addr)
	}
	return out, nil
}
