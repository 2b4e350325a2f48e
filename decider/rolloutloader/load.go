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
	"os"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
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
// keys), or a *rollout.Problems naming every problem.
func Load(opts Options) (*rollout.Rollout, error) {
	if opts.Path == "" {
		return nil, nil
	}
	return rollout.Build(readDocument(opts.Path), opts.Environ, docparse.Text)
}

// readDocument reads and parses the rollout document at path.
func readDocument(path string) installation.Document {
	d := installation.Document{Path: path}
	data, err := os.ReadFile(path)
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
