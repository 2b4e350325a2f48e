// Command chartkeys writes the fleet key list and the built-ins of the
// chart's templates/_installation.tpl from the installation table (the
// registry's fleet rows), the lists the chart renders the installation
// document with:
//
//	go run ./cmd/chartkeys            # rewrite charts/dynamic-config/templates/_installation.tpl
//	go run ./cmd/chartkeys -check     # fail when the template's lists are stale (make check-docs)
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	chart "github.com/dynamic-config-admission/dynamic-config/charts/dynamic-config"
)

func main() {
	path := flag.String("template", "charts/dynamic-config/templates/_installation.tpl", "the chart's installation template")
	check := flag.Bool("check", false, "fail when the template's lists differ from the installation table's")
	flag.Parse()
	if err := run(*path, *check); err != nil {
		fmt.Fprintln(os.Stderr, "chartkeys: "+err.Error())
		os.Exit(1)
	}
}

func run(path string, check bool) error {
	tpl, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	updated, err := chart.InstallationTemplate(tpl)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case !check:
		return os.WriteFile(path, updated, 0o644)
	case !bytes.Equal(updated, tpl):
		return fmt.Errorf("%s: the fleet keys or built-ins differ from the installation table's; run make docs and commit", path)
	}
	return nil
}
