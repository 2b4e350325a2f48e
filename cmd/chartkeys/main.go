// Command chartkeys writes the fleet key list and the built-ins of the
// chart's templates/_installation.tpl from the installation table (the
// registry's fleet rows), the lists the chart renders the installation
// document with, and adds a fleet key values.yaml or values.schema.json
// lacks to agent.defaults (chart.FleetValues, chart.FleetSchema; the lines
// already there stay as written):
//
//	go run ./cmd/chartkeys            # rewrite the template, add missing fleet values (make docs)
//	go run ./cmd/chartkeys -check     # fail when one of the three is stale (make check-docs)
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	chart "github.com/dynamic-config-admission/dynamic-config/charts/dynamic-config"
)

func main() {
	dir := flag.String("chart", "charts/dynamic-config", "the chart's directory")
	check := flag.Bool("check", false, "fail when the template's lists differ from the installation table's, or a fleet key is not a chart value")
	flag.Parse()
	failed := false
	for _, f := range []struct {
		path   string
		update func([]byte) ([]byte, error)
	}{
		{"templates/_installation.tpl", chart.InstallationTemplate},
		{"values.yaml", chart.FleetValues},
		{"values.schema.json", chart.FleetSchema},
	} {
		if err := run(filepath.Join(*dir, f.path), f.update, staleText(filepath.Base(f.path)), *check); err != nil {
			fmt.Fprintln(os.Stderr, "chartkeys: "+err.Error())
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// staleText says what is stale in the chart file named name.
func staleText(name string) string {
	switch name {
	case "values.yaml":
		return "a fleet key of the installation table is not under agent.defaults"
	case "values.schema.json":
		return "a fleet key of the installation table is not in agent.defaults' properties"
	}
	return "the fleet keys or built-ins differ from the installation table's"
}

// run updates the file at path, or with check fails (naming what is stale)
// when the update would change it.
func run(path string, update func([]byte) ([]byte, error), stale string, check bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	updated, err := update(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case bytes.Equal(updated, data):
		return nil
	case check:
		return fmt.Errorf("%s: %s; run make docs and commit", path, stale)
	}
	return os.WriteFile(path, updated, 0o644)
}
