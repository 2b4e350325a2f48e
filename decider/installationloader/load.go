// Package installationloader reads the installation from where it lives — the process
// environment and the document file — into the model (decider/core/installation),
// holds the one in force (Store) and keeps it in step with the file (Watch).
// The model validates; the loader does the I/O.
package installationloader

import (
	"errors"
	"io/fs"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

// Options say where an installation comes from.
type Options struct {
	// DocumentPath is the installation document ("" = none: the empty document).
	DocumentPath string
	// DocumentExplicit is true when the path was named by the flag or by
	// DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE: a missing file is then an error
	// (spec 02 §1). The default path may be missing (the empty document).
	DocumentExplicit bool
	// Environ is the process environment (KEY=value); nil = --no-env.
	Environ []string
	// RefuseBlankDocument refuses a blank document (empty, whitespace or
	// comments only) with installation.BlankDocumentProblem instead of
	// reading it as the empty document. Watch sets it on a reload when the
	// installation in force came from a document that was not blank (02
	// §11): a truncated file never swaps in the empty installation; `{}`
	// still does.
	RefuseBlankDocument bool
}

// Load reads the environment and the document, validates the whole
// installation (spec 02 §7) and returns it, or a *installation.Problems
// naming every problem in the order of spec 02 §7.3. The document is read
// stable (internal/stablefile): never while it changes.
func Load(opts Options) (*installation.Installation, error) {
	return build(opts, readStable(opts.DocumentPath))
}

// LoadSettled is Load for a decider that puts the installation in force
// (and, as a leader, publishes it to its followers): the document must also
// have settled — the same content at two reads one settle interval apart,
// or unwritten for that long — so that a document being rewritten in place
// is never put in force as a prefix (issue 38).
func LoadSettled(opts Options) (*installation.Installation, error) {
	if opts.DocumentPath == "" {
		return Load(opts)
	}
	s, err := stablefile.ReadSettled(opts.DocumentPath, 0, stablefile.DefaultSettle)
	return build(opts, documentRead{data: s.Data, err: err})
}

// documentRead is the document as read: its bytes, or the read's error.
type documentRead struct {
	data []byte
	err  error
}

// readStable reads the document at path stable ("" reads nothing).
func readStable(path string) documentRead {
	if path == "" {
		return documentRead{}
	}
	s, err := stablefile.ReadStable(path, 0)
	return documentRead{data: s.Data, err: err}
}

// build validates the installation of opts with the document as read.
func build(opts Options, doc documentRead) (*installation.Installation, error) {
	return installation.Build(readDocument(opts.DocumentPath, doc, opts.DocumentExplicit, opts.RefuseBlankDocument), opts.Environ, docparse.Text)
}

// readDocument parses the document at path as read (spec 02 §1, §5.3).
// Problems go to the shape section of the report. With refuseBlank a blank
// document is a problem (a reload, 02 §11).
func readDocument(path string, read documentRead, explicit, refuseBlank bool) installation.Document {
	d := installation.Document{Path: path}
	if path == "" {
		return d
	}
	data, err := read.data, read.err
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if explicit {
				d.Problems = append(d.Problems, path+": the installation document does not exist")
				d.Unread = true
			}
			return d
		}
		d.Problems = append(d.Problems, path+": the installation document cannot be read: "+PathErrorText(err))
		d.Unread = true
		return d
	}
	d.Present = true
	d.Blank = docparse.Blank(data)
	if d.Blank && refuseBlank {
		d.Problems = append(d.Problems, installation.BlankDocumentProblem)
		d.Unread = true
		return d
	}
	root, problem := docparse.Document(path, data)
	if problem != "" {
		d.Problems = append(d.Problems, problem)
		d.Unread = true
		return d
	}
	d.Root = root
	return d
}

// PathErrorText is a file error without the path the message already names.
func PathErrorText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
