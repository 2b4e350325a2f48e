// Package installationsource is where an offline door's installation comes
// from (spec 07 §1.4–1.6): a document named or located as the decider
// locates its own, or chart values mapped as the chart maps them; and the
// rollout beside it (spec 10 §2: a rollout document, or the values'
// rollout.*), validated over the environment the decider would have.
// check-installation, inject, explain and diff read their installations
// here, so that every offline door reads one the same way.
package installationsource

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	chart "github.com/dynamic-config-admission/dynamic-config/charts/dynamic-config"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutloader"
)

// ErrDocumentAndValues is the usage error of --installation with --values.
var ErrDocumentAndValues = errors.New("--installation and --values cannot be used together: --values reads chart values instead of a document")

// Source names an installation.
type Source struct {
	// Document is the installation document (--installation); "" = the
	// decider's location: $DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE in Environ,
	// else installation.DefaultDocumentPath, which may be missing (the
	// empty document).
	Document string
	// Values is a chart values file (--values), instead of Document.
	Values string
	// Rollout is a rollout document (--rollout; "" = none, or with Values
	// the values' rollout.*).
	Rollout string
	// Environ is the process environment (KEY=value); nil = --no-env.
	Environ []string
}

// Check reports a combination that is a usage error.
func (s Source) Check() error {
	if s.Document != "" && s.Values != "" {
		return ErrDocumentAndValues
	}
	return nil
}

// Options locate the document as the decider does (spec 02 §1, 07 §1.4):
// Document, else DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE, else the default
// path, which may be missing (the empty document; shown as absent).
func (s Source) Options() installationloader.Options {
	opts := installationloader.Options{Environ: s.Environ, DocumentPath: installation.DefaultDocumentPath}
	located := installation.Trim(lookup(s.Environ, installation.DefaultsFileVariable))
	switch {
	case s.Document != "":
		opts.DocumentPath, opts.DocumentExplicit = s.Document, true
	case located != "":
		opts.DocumentPath, opts.DocumentExplicit = located, true
	}
	return opts
}

// Load loads and validates the installation. The error is
// ErrDocumentAndValues or an *installation.Problems naming every problem.
func (s Source) Load() (*installation.Installation, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	if s.Values != "" {
		return chart.Load(s.Values, s.Environ)
	}
	return installationloader.Load(s.Options())
}

// LoadRollout loads and validates the rollout beside the installation: the
// Rollout document over the environment of the decider (Environ, and with
// Values the chart's variables), or with Values and no Rollout the values'
// rollout.*. nil, nil when there is none; a named rollout document that
// does not exist is an error (the decider would take it as no rollout).
// The error is a *rollout.Problems naming every problem, or the file's.
func (s Source) LoadRollout() (*rollout.Rollout, error) {
	if s.Rollout == "" {
		if s.Values == "" {
			return nil, nil
		}
		return chart.LoadRollout(s.Values, s.Environ)
	}
	if _, err := os.Stat(s.Rollout); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: the rollout document does not exist", s.Rollout)
	}
	environ := s.Environ
	if s.Values != "" {
		var err error
		if environ, err = chart.Environ(s.Values, s.Environ); err != nil {
			return nil, err
		}
	}
	return rolloutloader.Load(rolloutloader.Options{Path: s.Rollout, Environ: environ})
}

// LoadWithRollout loads the installation and the rollout beside it; the
// error names every problem of both (errors.Join: one line each).
func (s Source) LoadWithRollout() (*installation.Installation, *rollout.Rollout, error) {
	inst, err := s.Load()
	r, rerr := s.LoadRollout()
	if err != nil || rerr != nil {
		return nil, nil, errors.Join(err, rerr)
	}
	return inst, r, nil
}

// NoDocument reports whether no installation document was found: the
// empty one is in force (NoDocumentHint says what that means for a refusal).
func (s Source) NoDocument(inst *installation.Installation) bool {
	return s.Values == "" && !inst.DocumentPresent
}

// NoDocumentHint is what an offline door adds to a refusal when no
// installation document was loaded: most refusals then mean a value the
// installation would have given.
func NoDocumentHint(cmd string) string {
	return fmt.Sprintf("%s: hint: no installation document was loaded (no --installation or --values, $%s unset, %s absent), "+
		"so only the pod's annotations and the DYNAMIC_CONFIG_* environment were used; "+
		"pass the installation the decider runs with --installation FILE, or the chart's values with --values FILE",
		cmd, installation.DefaultsFileVariable, installation.DefaultDocumentPath)
}

// lookup returns the (first) value of name in environ, "" when unset.
func lookup(environ []string, name string) string {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}
