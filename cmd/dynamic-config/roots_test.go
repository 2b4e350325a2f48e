package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The roots test runs the binary as a separate process, because a process
// loads its system roots once: this test binary itself re-executed (its
// package main links the same imports as the binary), or the binary named
// by DYNAMIC_CONFIG_ROOTS_BINARY (make publish-check points it at the
// binary of the published image).
const (
	rootsBinaryEnv = "DYNAMIC_CONFIG_ROOTS_BINARY"
	reexecArgsEnv  = "DYNAMIC_CONFIG_TEST_REEXEC_ARGS"
)

// TestMain runs the command line instead of the tests when the roots test
// re-executes this binary.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(reexecArgsEnv); ok {
		var argv []string
		if err := json.Unmarshal([]byte(args), &argv); err != nil {
			panic(err)
		}
		os.Exit(run(argv, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestTheHTTPSClientsVerifyAgainstPublicRootsWhenTheSystemHasNone: the
// image is the binary on an empty base, so it has no system roots; an
// https:// remote decider, leader or OTLP endpoint given without a CA must
// still be verified against the public roots (issue 40 item 5, the bundle
// of golang.org/x/crypto/x509roots/fallback). Each client runs in a process
// whose system roots are emptied (SSL_CERT_FILE an empty file, SSL_CERT_DIR
// an empty directory) against a TLS server whose certificate names a root
// of that bundle as its issuer.
//
// What this proves, and what not: nobody here holds a public root's key,
// so the server's certificate is signed by a key of its own and no
// handshake can succeed. Go's verifier tries every trusted root whose name
// matches the issuer and, when the signature does not verify, names that
// root in the error ("while trying to verify candidate authority
// certificate …"); a root that is not trusted is never tried, and the
// error is the bare "certificate signed by unknown authority". So the
// hint shows that the client verified the chain against that public root,
// which only the bundle compiled into the binary can have provided. It
// does not show a successful handshake with a certificate a public CA
// issued.
func TestTheHTTPSClientsVerifyAgainstPublicRootsWhenTheSystemHasNone(t *testing.T) {
	root := publicRoot(t)
	server := newRootNamingServer(t, root)
	// The error is quoted once by gRPC and again in a JSON log line:
	// compared without backslashes.
	want := `while trying to verify candidate authority certificate "` + root.Subject.CommonName + `"`

	review, err := os.ReadFile("../../examples/review-inject.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args func() []string
		// poke is what makes the client connect, in a long-running
		// process; nil: the command connects and exits by itself.
		poke func(t *testing.T, out *foundationStderr, args []string)
		line string // the log line that carries the error
	}{
		{
			name: "a remote decider (the front door's gRPC client, here through fleet-status)",
			args: func() []string {
				return []string{"fleet-status", "--decider-target", "static:///" + server, "--decider-server-name", "127.0.0.1", "--timeout", "5s"}
			},
			line: "unreachable",
		},
		{
			name: "the leader of a follower decider",
			args: func() []string {
				return []string{"decider", "--addr", freeLoopbackAddr(t), "--metrics-addr", "", "--plaintext", "--drain-delay", "0",
					"--log-format", "json", "--follow", server, "--leader-server-name", "127.0.0.1", "--follower-id", "roots-test"}
			},
			poke: func(t *testing.T, out *foundationStderr, _ []string) { waitForText(t, out, "leader unreachable") },
			line: "leader unreachable",
		},
		{
			name: "an https:// OTLP endpoint",
			args: func() []string {
				return []string{"frontdoor", "--addr", freeLoopbackAddr(t), "--plaintext", "--tls-cert", "/nonexistent/tls.crt", "--tls-key", "/nonexistent/tls.key",
					"--decider-target", freeLoopbackAddr(t), "--decider-plaintext", "--drain-delay", "0", "--log-format", "json",
					"--otlp-endpoint", "https://" + server + "/v1/traces"}
			},
			poke: func(t *testing.T, out *foundationStderr, args []string) {
				waitForText(t, out, "frontdoor listening")
				resp, err := http.Post("http://"+args[2]+"/mutate", "application/json", bytes.NewReader(review))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			},
			line: "spans not exported",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := c.args()
			out := runWithoutSystemRoots(t, args, c.poke)
			var found string
			for l := range strings.SplitSeq(out, "\n") {
				if strings.Contains(l, c.line) {
					found = l
					break
				}
			}
			if found == "" {
				t.Fatalf("no %q line; the output:\n%s", c.line, out)
			}
			if !strings.Contains(strings.ReplaceAll(found, `\`, ""), want) {
				t.Errorf("the client did not try the public root %q: it is not among the roots the binary trusts without system roots:\n%s",
					root.Subject.CommonName, found)
			}
		})
	}
}

// publicRoot is a root of the fallback bundle without constraints: ISRG
// Root X1 (Let's Encrypt) when it is there.
func publicRoot(t *testing.T) *x509.Certificate {
	t.Helper()
	var first *x509.Certificate
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		c, err := x509.ParseCertificate(r.Certificate)
		if err != nil {
			t.Fatal(err)
		}
		if c.Subject.CommonName == "ISRG Root X1" {
			return c
		}
		if first == nil && c.Subject.CommonName != "" {
			first = c
		}
	}
	if first == nil {
		t.Fatal("the fallback bundle has no unconstrained root")
	}
	return first
}

// newRootNamingServer serves TLS on 127.0.0.1 with a certificate for
// 127.0.0.1 whose issuer is root (its name and key id) but which is signed
// by a key of its own. It returns host:port.
func newRootNamingServer(t *testing.T, root *x509.Certificate) string {
	t.Helper()
	leafKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	impostor, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(40),
		Subject:      pkix.Name{CommonName: "roots-test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	issuer := &x509.Certificate{Subject: root.Subject, SubjectKeyId: root.SubjectKeyId}
	der, err := x509.CreateCertificate(rand.Reader, template, issuer, &leafKey.PublicKey, impostor)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: leafKey}},
		NextProtos:   []string{"h2", "http/1.1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				_ = conn.(*tls.Conn).HandshakeContext(context.Background())
				conn.Close()
			}()
		}
	}()
	return lis.Addr().String()
}

// runWithoutSystemRoots runs the binary with args in an environment with
// no system roots and returns what it wrote. poke (nil for a command that
// exits by itself) drives a long-running one, which is then stopped with
// SIGTERM (a clean stop flushes the spans it holds).
func runWithoutSystemRoots(t *testing.T, args []string, poke func(*testing.T, *foundationStderr, []string)) string {
	t.Helper()
	dir := t.TempDir()
	emptyFile, emptyDir := filepath.Join(dir, "no-roots.pem"), filepath.Join(dir, "no-roots.d")
	if err := os.WriteFile(emptyFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "SSL_CERT_FILE=" + emptyFile, "SSL_CERT_DIR=" + emptyDir}
	var cmd *exec.Cmd
	if bin := os.Getenv(rootsBinaryEnv); bin != "" {
		cmd = exec.Command(bin, args...)
	} else {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(self)
		argv, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, reexecArgsEnv+"="+string(argv))
	}
	cmd.Env = env
	out := &foundationStderr{}
	cmd.Stdout, cmd.Stderr = out, out
	if poke == nil {
		_ = cmd.Run() // fleet-status exits 1 on an unreachable replica
		return out.String()
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	poke(t, out, args)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%v did not stop on SIGTERM:\n%s", args, out.String())
	}
	return out.String()
}

// waitForText waits until out holds text.
func waitForText(t *testing.T, out *foundationStderr, text string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(out.String(), text) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %q:\n%s", text, out.String())
}
