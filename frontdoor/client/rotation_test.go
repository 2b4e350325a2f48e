package client

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/dynamic-config-admission/dynamic-config/internal/certs/certstest"
)

// TestTheCAAndThePairAreTakenWhenTheyAppearAndReReadWhenTheyChange is the
// front door under tls.mode selfRotate: it starts before the CA leader has
// filled the mounted Secret (WaitForFiles), and the decider's CA is re-read
// at every handshake, so a rotated bundle is in force from the next connection.
func TestTheCAAndThePairAreTakenWhenTheyAppearAndReReadWhenTheyChange(t *testing.T) {
	server, err := certstest.Write(t.TempDir(), "server", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	serverCert, err := (&tlsPair{server.CertFile, server.KeyFile}).load()
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, &recordingService{auth: make(chan string, 16)}, grpc.Creds(credentials.NewTLS(mtlsServerConfig(serverCert, server.Pool()))))
	other, err := certstest.Write(t.TempDir(), "other", time.Hour)
	if err != nil {
		t.Fatal(err)
	}

	mounted := t.TempDir()
	caFile, certFile, keyFile := filepath.Join(mounted, "ca.crt"), filepath.Join(mounted, "tls.crt"), filepath.Join(mounted, "tls.key")
	cfg := Config{Target: addr, CAFile: caFile, ClientCertFile: certFile, ClientKeyFile: keyFile}
	if _, err := New(cfg); err == nil {
		t.Fatal("New without the files and without WaitForFiles: no error")
	}
	cfg.WaitForFiles = true
	write := func(files map[string][]byte) {
		t.Helper()
		for name, data := range files {
			if err := os.WriteFile(name, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	newClient := func() *Client {
		t.Helper()
		c, err := New(cfg)
		if err != nil {
			t.Fatalf("New with WaitForFiles: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	c := newClient()
	if err := call(t, c); err == nil {
		t.Fatal("a call before the files exist succeeded")
	}
	write(map[string][]byte{caFile: server.CAPEM, certFile: server.CertPEM, keyFile: server.KeyPEM})
	if err := eventuallyCall(t, c); err != nil {
		t.Fatalf("the files appeared, but the calls still fail: %v", err)
	}

	// a bundle without the server's CA: a new connection no longer trusts it
	write(map[string][]byte{caFile: other.CAPEM})
	if err := call(t, newClient()); err == nil {
		t.Fatal("a new connection after the CA file changed to another CA still trusts the server")
	}
	// the rotated bundle holds both: trusted again
	write(map[string][]byte{caFile: append(append([]byte{}, other.CAPEM...), server.CAPEM...)})
	if err := eventuallyCall(t, newClient()); err != nil {
		t.Fatalf("a bundle holding the server's CA again is not trusted: %v", err)
	}
}

// eventuallyCall retries a call for up to 10 s (a failed connection redials with a backoff).
func eventuallyCall(t *testing.T, c *Client) error {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := call(t, c)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
