package daemon

import (
	"errors"
	"net"
	"strings"
)

// ErrNotLoopback is serve's refusal of a listen address that is not loopback.
var ErrNotLoopback = errors.New("serve binds loopback addresses only; run decider and frontdoor separately for anything else")

// IsLoopbackAddr reports whether a listen address is loopback-only:
// 127.0.0.0/8, ::1 or localhost, with a port (serve binds nothing else).
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
