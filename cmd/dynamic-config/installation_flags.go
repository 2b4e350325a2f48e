package main

import (
	"flag"
	"os"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/doors/installationsource"
)

// processEnviron is the process environment the offline commands read
// (tests replace it).
var processEnviron = os.Environ

// installationFlags are the installation flags of the offline commands
// (check-installation, inject, explain; spec 07 §1.4–1.6): where the
// installation comes from is package installationsource's.
type installationFlags struct {
	installation, values string
	noEnv                bool
}

// register adds --installation, --values and --no-env to fs.
func (f *installationFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.installation, "installation", "",
		"installation document (.yaml, .yml, .json or .toml); default: $"+installation.DefaultsFileVariable+
			", else "+installation.DefaultDocumentPath+" (a missing default is the empty document)")
	fs.StringVar(&f.values, "values", "", "chart values file, mapped as the chart maps it (instead of --installation)")
	fs.BoolVar(&f.noEnv, "no-env", false, "ignore the process environment (DYNAMIC_CONFIG_* variables)")
}

// source is the installation the flags name, read with the process
// environment unless --no-env.
func (f *installationFlags) source() installationsource.Source {
	s := installationsource.Source{Document: f.installation, Values: f.values}
	if !f.noEnv {
		s.Environ = processEnviron()
	}
	return s
}
