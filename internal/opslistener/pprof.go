package opslistener

import (
	"net/http"
	"net/http/pprof"
	"strings"
)

// PprofPrefix is where WithPprof serves the runtime profiles.
const PprofPrefix = "/debug/pprof/"

// WithPprof serves net/http/pprof's profiles under /debug/pprof/ and every
// other path with next. It is mounted only on a plain metrics listener, and
// only when --pprof is set: profiles show code paths and timings, never
// request contents, but they are not for the admission listener.
func WithPprof(next http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(PprofPrefix, pprof.Index) // heap, allocs, goroutine, mutex, block, …
	mux.HandleFunc(PprofPrefix+"cmdline", pprof.Cmdline)
	mux.HandleFunc(PprofPrefix+"profile", pprof.Profile)
	mux.HandleFunc(PprofPrefix+"symbol", pprof.Symbol)
	mux.HandleFunc(PprofPrefix+"trace", pprof.Trace)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, PprofPrefix) {
			mux.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
