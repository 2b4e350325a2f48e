package daemon

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
)

// EmbeddedInstallation is where a decider started by serve reads its
// installation (spec 07 §1.3): the named document, else embedded — the
// binary's own document — written to a private temporary file
// (installationloader.WriteTemp), so that it is read, validated and watched
// as any other. cleanup removes the file.
func EmbeddedInstallation(document string, embedded []byte, environ []string) (opts installationloader.Options, cleanup func(), err error) {
	opts = installationloader.Options{DocumentPath: document, DocumentExplicit: true, Environ: environ}
	if document != "" {
		return opts, func() {}, nil
	}
	opts.DocumentPath, cleanup, err = installationloader.WriteTemp(embedded)
	return opts, cleanup, err
}
