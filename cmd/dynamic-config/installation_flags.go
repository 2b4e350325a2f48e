package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	chart "github.com/dynamic-config-admission/dynamic-config/charts/dynamic-config"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
)

// processEnviron is the process environment the offline commands read
// (tests replace it).
var processEnviron = os.Environ

// errInstallationAndValues is the usage error for --installation with --values.
var errInstallationAndValues = errors.New("--installation and --values cannot be used together: --values reads chart values instead of a document")

// installationFlags are the installation flags of the offline commands
// (check-installation, inject, explain; spec 07 §1.4–1.6).
type installationFlags struct {
	installation string
	values       string
	noEnv        bool
}

// register adds --installation, --values and --no-env to fs.
func (f *installationFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.installation, "installation", "",
		"installation document (.yaml, .yml, .json or .toml); default: $"+installation.DefaultsFileVariable+
			", else "+installation.DefaultDocumentPath+" (a missing default is the empty document)")
	fs.StringVar(&f.values, "values", "", "chart values file, mapped as the chart maps it (instead of --installation)")
	fs.BoolVar(&f.noEnv, "no-env", false, "ignore the process environment (DYNAMIC_CONFIG_* variables)")
}

// usageError reports a flag combination that is a usage error (exit 2).
func (f *installationFlags) usageError() error {
	if f.installation != "" && f.values != "" {
		return errInstallationAndValues
	}
	return nil
}

// environ is the environment the installation is read with: nil with --no-env.
func (f *installationFlags) environ() []string {
	if f.noEnv {
		return nil
	}
	return processEnviron()
}

// options resolves the document as the decider does (spec 02 §1, 07 §1.4):
// --installation, else DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE (not with
// --no-env), else the default path, which may be missing (the empty
// document; shown as absent). serve's embedded document is never used here.
func (f *installationFlags) options() installationloader.Options {
	env := f.environ()
	opts := installationloader.Options{Environ: env, DocumentPath: installation.DefaultDocumentPath}
	located := strings.Trim(lookupEnv(env, installation.DefaultsFileVariable), " \t\n\r\v\f")
	switch {
	case f.installation != "":
		opts.DocumentPath, opts.DocumentExplicit = f.installation, true
	case located != "":
		opts.DocumentPath, opts.DocumentExplicit = located, true
	}
	return opts
}

// load loads and validates the installation the flags name. The error is a
// usage error (errInstallationAndValues) or an *installation.Problems; both
// exit 2.
func (f *installationFlags) load() (*installation.Installation, error) {
	if err := f.usageError(); err != nil {
		return nil, err
	}
	if f.values != "" {
		return chart.Load(f.values, f.environ())
	}
	return installationloader.Load(f.options())
}

// lookupEnv returns the (first) value of name in environ, "" when unset.
func lookupEnv(environ []string, name string) string {
	for _, kv := range environ {
		if len(kv) > len(name) && kv[len(name)] == '=' && kv[:len(name)] == name {
			return kv[len(name)+1:]
		}
	}
	return ""
}

// noInstallationHint is what an offline door adds to a refusal when no
// installation document was loaded: most refusals then mean a value the
// installation would have given.
func noInstallationHint(cmd string) string {
	return fmt.Sprintf("%s: hint: no installation document was loaded (no --installation or --values, $%s unset, %s absent), "+
		"so only the pod's annotations and the DYNAMIC_CONFIG_* environment were used; "+
		"pass the installation the decider runs with --installation FILE, or the chart's values with --values FILE",
		cmd, installation.DefaultsFileVariable, installation.DefaultDocumentPath)
}
