package main

// serve's announcement of the bound addresses, and the wait.

import (
	"context"
	"fmt"
	"log/slog"

	deciderd "github.com/dynamic-config-admission/dynamic-config/decider/daemon"
	frontdoord "github.com/dynamic-config-admission/dynamic-config/frontdoor/daemon"
	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

// announce writes the bound addresses to --addr-file and logs them.
func (s *serveFlags) announce(logger *slog.Logger, fd *frontdoord.Frontdoor, d *deciderd.Decider, metricsAddr string) error {
	if s.addrFile != "" {
		content := "frontdoor=" + fd.URL() + "\ndecider=" + d.Addr().String() + "\n"
		if metricsAddr != "" {
			content += "metrics=" + metricsAddr + "\n"
		}
		if err := stablefile.WriteAtomic(s.addrFile, []byte(content)); err != nil {
			return fmt.Errorf("serve: --addr-file: %v", err)
		}
	}
	serving := []any{"frontdoor", fd.URL(), "decider", d.Addr().String()}
	if metricsAddr != "" {
		serving = append(serving, "metrics", metricsAddr)
	}
	logger.Info("serving", append(serving, "revision", d.Store().Revision())...)
	return nil
}

// waitServing serves until ctx ends (exit 0) or a component stops on its
// own (exit 1; the front door logs its own failure).
func waitServing(ctx context.Context, logger *slog.Logger, fd *frontdoord.Frontdoor, d *deciderd.Decider, metricsErr <-chan error) int {
	select {
	case <-ctx.Done():
		logger.Info("shutting down")
		<-fd.Done()
		return exitOK
	case <-fd.Done():
		if fd.Err() == nil {
			return exitOK
		}
	case <-d.Done():
		logger.Error("decider stopped", "error", fmt.Sprint(d.Err()))
	case err := <-metricsErr:
		logger.Error("metrics listener stopped", "error", fmt.Sprint(err))
	}
	return exitRefused
}
