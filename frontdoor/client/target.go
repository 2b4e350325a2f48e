package client

import (
	"net"
	"strings"
)

// isLoopbackTarget reports whether a gRPC target names this host only: a
// unix socket, localhost, or a loopback IP, with or without a scheme
// (dns:///, passthrough:///) and a port.
func isLoopbackTarget(target string) bool {
	if strings.HasPrefix(target, "unix:") || strings.HasPrefix(target, "unix-abstract:") {
		return true
	}
	if rest, ok := strings.CutPrefix(target, StaticScheme+":///"); ok {
		addrs, err := StaticAddresses(rest)
		if err != nil {
			return false
		}
		for _, a := range addrs {
			if !isLoopbackTarget(a) {
				return false
			}
		}
		return true
	}
	endpoint := target
	if i := strings.Index(endpoint, "://"); i >= 0 {
		endpoint = endpoint[i+len("://"):]
		// scheme://[authority]/endpoint
		if slash := strings.Index(endpoint, "/"); slash >= 0 {
			endpoint = endpoint[slash+1:]
		}
	}
	host := endpoint
	if h, _, err := net.SplitHostPort(endpoint); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
