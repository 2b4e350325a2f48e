// Command coredns is the real-node tier's cluster DNS (`make e2e-node`):
// CoreDNS built from the Go module proxy with only the plugins the tier's
// Corefile names — the kubernetes plugin answering cluster.local from the
// API server, and bind, health, ready, errors and cache. No forwarding
// plugin is compiled in, so nothing outside cluster.local can be resolved
// through it. It is never shipped.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

// The plugins in the order a server block runs them (CoreDNS's own
// plugin.cfg order for these six).
func init() {
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "cache", "kubernetes"}
}

func main() { coremain.Run() }
