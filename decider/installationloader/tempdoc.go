package installationloader

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteTemp writes doc (serve's embedded installation document) to a
// private temporary file for the loader to read and returns its path and
// what removes it.
func WriteTemp(doc []byte) (path string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "dynamic-config-serve-")
	if err != nil {
		return "", nil, fmt.Errorf("embedded installation: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, "default-installation.yaml")
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("embedded installation: %w", err)
	}
	return path, cleanup, nil
}
