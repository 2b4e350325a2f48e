package client

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/certs/certstest"
)

func TestIsLoopbackTarget(t *testing.T) {
	cases := []struct {
		target string
		want   bool
	}{
		{"127.0.0.1:9090", true},
		{"127.1.2.3:9090", true},
		{"[::1]:9090", true},
		{"localhost:9090", true},
		{"dns:///localhost:9090", true},
		{"passthrough:///127.0.0.1:9090", true},
		{"dns://8.8.8.8/127.0.0.1:9090", true},
		{"unix:///run/decider.sock", true},
		{"dns:///dynamic-config-decider.dynamic-config.svc:9090", false},
		{"10.0.0.1:9090", false},
		{"[2001:db8::1]:9090", false},
		{"localhost.example.com:9090", false},
		{"dns:///127.0.0.1.nip.io:9090", false},
		{"static:///127.0.0.1:9090,[::1]:9091", true},
		{"static:///127.0.0.1:9090,10.0.0.1:9090", false},
		{"static:///127.0.0.1", false},
	}
	for _, c := range cases {
		name := c.target + " is not loopback"
		if c.want {
			name = c.target + " is loopback"
		}
		t.Run(name, func(t *testing.T) {
			if got := isLoopbackTarget(c.target); got != c.want {
				t.Errorf("isLoopbackTarget(%q) = %v", c.target, got)
			}
		})
	}
}

func writeToken(t *testing.T, token string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestNewRefusals(t *testing.T) {
	token := writeToken(t, "tok\n")
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"an empty target is refused", Config{Plaintext: true}, "target is empty"},
		{"a token over plaintext to a remote target is refused",
			Config{Target: "dns:///decider.example.svc:9090", Plaintext: true, TokenFile: token}, "not sent over plaintext"},
		{"a missing token file is refused", Config{Target: "127.0.0.1:1", Plaintext: true, TokenFile: filepath.Join(t.TempDir(), "none")}, "token file"},
		{"an empty token file is refused", Config{Target: "127.0.0.1:1", Plaintext: true, TokenFile: writeToken(t, " \n")}, "is empty"},
		{"a client certificate without its key is refused", Config{Target: "x:1", ClientCertFile: "c.crt"}, "go together"},
		{"TLS files with plaintext are refused", Config{Target: "127.0.0.1:1", Plaintext: true, CAFile: "ca.crt"}, "plaintext"},
		{"a CA file that holds no certificate is refused", Config{Target: "x:1", CAFile: token}, "no PEM certificate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New: %v, want an error containing %q", err, c.want)
			}
		})
	}
	t.Run("a token over plaintext to a loopback target is allowed", func(t *testing.T) {
		c, err := New(Config{Target: "127.0.0.1:9090", Plaintext: true, TokenFile: token})
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	})
}

// recordingService records the authorization metadata of each call.
type recordingService struct {
	deciderv1.UnimplementedDeciderServiceServer
	auth chan string
}

func (s *recordingService) GetInstallation(ctx context.Context, _ *deciderv1.GetInstallationRequest) (*deciderv1.GetInstallationResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	s.auth <- strings.Join(md.Get("authorization"), ",")
	return &deciderv1.GetInstallationResponse{Revision: "sha256:test"}, nil
}

// serve runs svc on loopback with opts until the test ends.
func serve(t *testing.T, svc deciderv1.DeciderServiceServer, opts ...grpc.ServerOption) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	deciderv1.RegisterDeciderServiceServer(srv, svc)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

func call(t *testing.T, c *Client) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.GetInstallation(ctx, &deciderv1.GetInstallationRequest{})
	return err
}

func TestBearerTokenIsSentAndReread(t *testing.T) {
	old := tokenRecheck
	tokenRecheck = 0
	t.Cleanup(func() { tokenRecheck = old })
	svc := &recordingService{auth: make(chan string, 4)}
	addr := serve(t, svc)
	path := writeToken(t, "first-token\n")
	c, err := New(Config{Target: addr, Plaintext: true, TokenFile: path})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	t.Run("every call carries the token as a bearer", func(t *testing.T) {
		if err := call(t, c); err != nil {
			t.Fatal(err)
		}
		if got := <-svc.auth; got != "Bearer first-token" {
			t.Errorf("authorization %q", got)
		}
	})
	t.Run("a rotated token file is sent without a restart, once it has settled", func(t *testing.T) {
		if err := os.WriteFile(path, []byte("second-token-longer"), 0o600); err != nil {
			t.Fatal(err)
		}
		// The rotation is in force once the file stayed the same for a
		// settle interval (issue 38): a call before then sends the last token.
		deadline := time.Now().Add(5 * time.Second)
		for {
			if err := call(t, c); err != nil {
				t.Fatal(err)
			}
			got := <-svc.auth
			if got == "Bearer second-token-longer" {
				break
			}
			if got != "Bearer first-token" || time.Now().After(deadline) {
				t.Fatalf("authorization %q", got)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	server, err := certstest.Write(dir, "server", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	serverCert, err := (&tlsPair{server.CertFile, server.KeyFile}).load()
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, &recordingService{auth: make(chan string, 4)}, grpc.Creds(credentials.NewTLS(mtlsServerConfig(serverCert, server.Pool()))))

	t.Run("a client with the CA and a client pair is served", func(t *testing.T) {
		c, err := New(Config{Target: addr, CAFile: server.CAFile, ClientCertFile: server.CertFile, ClientKeyFile: server.KeyFile})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := call(t, c); err != nil {
			t.Errorf("call: %v", err)
		}
	})
	t.Run("a client without a client pair fails fast with Unavailable", func(t *testing.T) {
		c, err := New(Config{Target: addr, CAFile: server.CAFile})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := call(t, c); status.Code(err) != codes.Unavailable {
			t.Errorf("call: %v, want Unavailable", err)
		}
	})
	t.Run("a client that does not trust the server's CA fails", func(t *testing.T) {
		other, err := certstest.Write(t.TempDir(), "other", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(Config{Target: addr, CAFile: other.CAFile, ClientCertFile: server.CertFile, ClientKeyFile: server.KeyFile})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := call(t, c); status.Code(err) != codes.Unavailable {
			t.Errorf("call: %v, want Unavailable", err)
		}
	})
	t.Run("a wrong server name fails verification", func(t *testing.T) {
		c, err := New(Config{Target: addr, CAFile: server.CAFile, ClientCertFile: server.CertFile, ClientKeyFile: server.KeyFile, ServerName: "decider.example"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := call(t, c); status.Code(err) != codes.Unavailable {
			t.Errorf("call: %v, want Unavailable", err)
		}
	})
}
