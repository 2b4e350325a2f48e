package daemon

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
)

// EmbeddedInstallation is where a decider started by serve reads its
// installation (spec 07 §1.3): the named document, else embedded — the
// binary's own document — written to a private temporary file, so that it
// is read, validated and watched as any other. cleanup removes the file.
func EmbeddedInstallation(document string, embedded []byte, environ []string) (opts installationloader.Options, cleanup func(), err error) {
	opts = installationloader.Options{DocumentPath: document, DocumentExplicit: true, Environ: environ}
	if document != "" {
		return opts, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "dynamic-config-serve-")
	if err != nil {
		return opts, nil, fmt.Errorf("embedded installation: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	opts.DocumentPath = filepath.Join(dir, "default-installation.yaml")
	if err := os.WriteFile(opts.DocumentPath, embedded, 0o600); err != nil {
		cleanup()
		return opts, nil, fmt.Errorf("embedded installation: %w", err)
	}
	return opts, cleanup, nil
}
