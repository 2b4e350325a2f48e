package daemon

import (
	"errors"
	"net"
	"strings"
)

// ServeTLSFiles resolves the TLS files of a front door that serve runs
// (spec 07 §1.3): the pair cert and key name, or the pair generate (a
// directory, GenerateLoopbackTLS) writes; "" = plain HTTP. The error is the
// flags' conflict, or the generation's.
func ServeTLSFiles(cert, key, generate string) (certFile, keyFile string, err error) {
	hasPair := cert != "" || key != ""
	switch {
	case generate != "" && hasPair:
		return "", "", errors.New("--tls-generate and --tls-cert/--tls-key exclude each other")
	case generate != "":
		gen, err := GenerateLoopbackTLS(generate)
		if err != nil {
			return "", "", err
		}
		return gen.Cert, gen.Key, nil
	case hasPair && (cert == "" || key == ""):
		return "", "", errors.New("--tls-cert and --tls-key go together")
	}
	return cert, key, nil
}

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
