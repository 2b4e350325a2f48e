package main

import (
	"fmt"
	"net/http"

	"github.com/dynamic-config-admission/dynamic-config/internal/opslistener"
)

// errPprofWithoutMetrics refuses --pprof without a metrics listener: the
// profiles are served there and nowhere else.
func errPprofWithoutMetrics(cmd string) error {
	return fmt.Errorf("%s: --pprof serves on the metrics listener; set --metrics-addr too", cmd)
}

// opsHandler is the metrics listener's handler, with net/http/pprof under
// /debug/pprof/ when --pprof is set.
func opsHandler(h http.Handler, pprof bool) http.Handler {
	if pprof {
		return opslistener.WithPprof(h)
	}
	return h
}
