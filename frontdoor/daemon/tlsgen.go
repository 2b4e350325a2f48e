package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/selfrotate"
)

// generatedValidity is how long the certificates of GenerateLoopbackTLS live.
const generatedValidity = 365 * 24 * time.Hour

// GeneratedTLS names the files GenerateLoopbackTLS writes (serve --tls-generate DIR).
type GeneratedTLS struct {
	CA, Cert, Key string
}

// GenerateLoopbackTLS writes a throw-away CA (ca.crt) and a serving pair (tls.crt,
// tls.key) for 127.0.0.1, ::1 and localhost into dir, so a real
// kube-apiserver can call `serve` (spec 07 §1.3). The CA key is not kept.
// The CA is minted as selfRotate mints the front door's own.
func GenerateLoopbackTLS(dir string) (GeneratedTLS, error) {
	out := GeneratedTLS{
		CA:   filepath.Join(dir, "ca.crt"),
		Cert: filepath.Join(dir, "tls.crt"),
		Key:  filepath.Join(dir, "tls.key"),
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return out, fmt.Errorf("--tls-generate: %w", err)
	}
	now := time.Now()
	ca, err := selfrotate.NewAuthority("dynamic-config serve CA", now, generatedValidity)
	if err != nil {
		return out, fmt.Errorf("--tls-generate: %w", err)
	}
	certPEM, keyPEM, err := ca.Issue([]string{"localhost", "127.0.0.1", "::1"}, now, generatedValidity)
	if err != nil {
		return out, fmt.Errorf("--tls-generate: %w", err)
	}
	files := []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{out.CA, ca.CertPEM, 0o644},
		{out.Cert, certPEM, 0o644},
		{out.Key, keyPEM, 0o600},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return out, fmt.Errorf("--tls-generate: %w", err)
		}
	}
	return out, nil
}

// ServeTLSFiles resolves the TLS files of serve's front door from
// --tls-generate (generate: the directory GenerateLoopbackTLS writes the pair
// into) and --tls-cert/--tls-key; "", "" is plain HTTP.
func ServeTLSFiles(generate, cert, key string) (certFile, keyFile string, err error) {
	hasPair := cert != "" || key != ""
	switch {
	case generate != "" && hasPair:
		return "", "", errors.New("--tls-generate and --tls-cert/--tls-key exclude each other")
	case generate != "":
		gen, err := GenerateLoopbackTLS(generate)
		if err != nil {
			return "", "", err
		}
		return gen.Cert, gen.Key, nil
	case hasPair && (cert == "" || key == ""):
		return "", "", errors.New("--tls-cert and --tls-key go together")
	}
	return cert, key, nil
}
