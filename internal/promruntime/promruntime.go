// Package promruntime registers the Go runtime and process collectors
// (go_*, process_*) that both processes' /metrics carry (spec 07 §5).
package promruntime

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Register registers the Go runtime and process collectors with reg.
// Finding them already registered (serve runs both components on one
// registry) is not an error.
func Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if !errors.As(err, &already) {
				return err
			}
		}
	}
	return nil
}
