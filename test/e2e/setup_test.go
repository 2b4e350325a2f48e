package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// readTestdata returns testdata/<name>.
func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// seedInstallation is the nine-store installation of seed 000.
func seedInstallation(t *testing.T) string {
	t.Helper()
	return readTestdata(t, "seed-000-installation.yaml")
}

// consulAnnotations are the seed-000 consul pod's annotations (its endpoint
// restates the installation's pinned one, so it passes the pin).
func consulAnnotations() map[string]string {
	return map[string]string{
		"dynamic-config.rs/inject":   "true",
		"dynamic-config.rs/source":   "consul",
		"dynamic-config.rs/endpoint": "http://consul.infra.svc:8500",
		"dynamic-config.rs/key":      "myapp/config.json",
		"dynamic-config.rs/path":     "/config/rendered.toml",
	}
}

// withAnnotations is base with the overrides laid over it.
func withAnnotations(base map[string]string, overrides map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(overrides))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range overrides {
		out[k] = v
	}
	return out
}

// injectionSite is one namespace served by one `serve` process whose
// injection webhook is registered and already in effect.
type injectionSite struct {
	ns           string
	serve        *served
	installation string // the document's path (rewrite it to reload)
}

// newInjectionSite writes the installation, starts `serve` on it, registers
// the injection webhook for a fresh namespace and waits until a pod asking
// for injection is injected or refused there.
func newInjectionSite(t *testing.T, installation string, opts injection) *injectionSite {
	t.Helper()
	ns := newNamespace(t)
	path := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, path, installation)
	s := startServe(t, path)
	registerInjection(t, ns+"-inject", ns, s.door, opts)
	waitForEffect(t, "the injection webhook takes effect", pod(ns, "webhook-probe", consulAnnotations()), injectedOrRefused)
	return &injectionSite{ns: ns, serve: s, installation: path}
}
