package server

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"log/slog"
	"math/big"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// echoService is a test-only DeciderService: Decide answers SKIP with the
// installation's revision, or panics when the pod is named "panic".
type echoService struct {
	deciderv1.UnimplementedDeciderServiceServer
	store *installationloader.Store
}

func (s *echoService) Decide(_ context.Context, req *deciderv1.DecisionRequest) (*deciderv1.DecisionResponse, error) {
	if req.GetPod().GetName() == "panic" {
		panic("test panic with dynamic-config.rs/endpoint=http://user:secret@consul:8500")
	}
	return &deciderv1.DecisionResponse{Decision: &deciderv1.Decision{
		Outcome:              deciderv1.Outcome_OUTCOME_SKIP,
		InstallationRevision: s.store.Current().Revision,
	}}, nil
}

func (s *echoService) GetInstallation(context.Context, *deciderv1.GetInstallationRequest) (*deciderv1.GetInstallationResponse, error) {
	inst := s.store.Current()
	return &deciderv1.GetInstallationResponse{Revision: inst.Revision, LoadedAt: timestamppb.New(inst.LoadedAt)}, nil
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// running is a server under test listening on loopback TCP.
type running struct {
	srv      *Server
	store    *installationloader.Store
	addr     string
	log      *syncBuffer
	registry *prometheus.Registry
}

// start serves cfg on 127.0.0.1:0 with the echo service until the test ends.
// A nil inst starts with no installation held.
func start(t *testing.T, cfg Config, inst *installation.Installation) *running {
	t.Helper()
	log := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewJSONHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := prometheus.NewRegistry()
	cfg.Metrics = metrics.NewDecider(reg)
	store := installationloader.NewStore(inst)
	srv, err := New(cfg, store, &echoService{store: store})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Shutdown(time.Second)
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &running{srv: srv, store: store, addr: lis.Addr().String(), log: log, registry: reg}
}

// dial connects to addr with creds (nil = plaintext) until the test ends.
func dial(t *testing.T, addr string, creds credentials.TransportCredentials, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	conn, err := grpc.NewClient(addr, append(opts, grpc.WithTransportCredentials(creds))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// testPKI is a CA with a server leaf for 127.0.0.1 and a client leaf.
type testPKI struct {
	pool           *x509.CertPool
	server, client tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(-time.Minute)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: now, NotAfter: now.Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(serial int64, usage x509.ExtKeyUsage) tls.Certificate {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "localhost"},
			NotBefore: now, NotAfter: now.Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		}
		if usage == x509.ExtKeyUsageClientAuth {
			tmpl.URIs = []*url.URL{{Scheme: "spiffe", Host: "test.example", Path: "/frontdoor"}} // a caller identity
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &testPKI{pool: pool, server: leaf(2, x509.ExtKeyUsageServerAuth), client: leaf(3, x509.ExtKeyUsageClientAuth)}
}

// serverTLS is the server side; mutual requires and verifies client certificates.
func (p *testPKI) serverTLS(mutual bool) *tls.Config {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{p.server}}
	if mutual {
		tc.ClientAuth, tc.ClientCAs = tls.RequireAndVerifyClientCert, p.pool
	}
	return tc
}

// clientCreds trusts the CA and presents the client leaf when withCert.
func (p *testPKI) clientCreds(withCert bool) credentials.TransportCredentials {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: p.pool}
	if withCert {
		tc.Certificates = []tls.Certificate{p.client}
	}
	return credentials.NewTLS(tc)
}
