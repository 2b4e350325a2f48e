// Package rolloutloader reads the rollout document (spec 10 §2) from its
// file into the model (decider/core/rollout), holds the rollout in force
// (Store) and keeps it in step with the file (Watch), as
// decider/installationloader does for the installation. The model
// validates; the loader does the I/O.
//
// Load is also the offline check of a rollout file (check-installation
// --rollout): it validates the candidate over the environment it is given,
// with the code that validates the active installation.
package rolloutloader

import (
	"errors"
	"io/fs"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

// Options say where a rollout comes from.
type Options struct {
	// Path is the rollout document ("" = no rollout). A missing file is no
	// rollout, never an error: the chart renders the document only while a
	// rollout is configured, and Watch picks it up when it appears.
	Path string
	// Environ is the active installation's environment (KEY=value; nil =
	// --no-env): the candidate's environment is candidate.environment laid
	// over it.
	Environ []string
}

// Load reads and validates the rollout document: the rollout, nil when
// there is none (no path, a missing file, a blank document or one without
// keys), or a *rollout.Problems naming every problem. The document is read
// stable (internal/stablefile): never while it changes.
func Load(opts Options) (*rollout.Rollout, error) {
	if opts.Path == "" {
		return nil, nil
	}
	s, err := stablefile.ReadStable(opts.Path, 0)
	return build(opts, s.Data, err)
}

// LoadSettled is Load for a decider that puts the rollout in force (and, as
// a leader, sends it to its followers): the document must also have settled
// (internal/stablefile), so that one rewritten in place is never put in
// force as a prefix — as the installation's (issue 38).
func LoadSettled(opts Options) (*rollout.Rollout, error) {
	if opts.Path == "" {
		return nil, nil
	}
	s, err := stablefile.ReadSettled(opts.Path, 0, stablefile.DefaultSettle)
	return build(opts, s.Data, err)
}

// build validates the rollout of opts with the document as read (data, or
// the read's error).
func build(opts Options, data []byte, err error) (*rollout.Rollout, error) {
	return rollout.Build(readDocument(opts.Path, data, err), opts.Environ, docparse.Text)
}

// readDocument parses the rollout document at path as read.
func readDocument(path string, data []byte, err error) installation.Document {
	d := installation.Document{Path: path}
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			d.Problems = append(d.Problems, path+": the rollout document cannot be read: "+installationloader.PathErrorText(err))
			d.Unread = true
		}
		return d
	}
	d.Present = true
	d.Blank = docparse.Blank(data)
	root, problem := docparse.Named("rollout document", path, data)
	if problem != "" {
		d.Problems = append(d.Problems, problem)
		d.Unread = true
		return d
	}
	d.Root = root
	return d
}
