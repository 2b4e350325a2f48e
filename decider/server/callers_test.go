package server

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/decider/callers"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func digest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// callersDecider is the real service behind the server with a callers file,
// as `decider --callers --cluster-name east` runs it.
type callersDecider struct {
	addr string
	path string
	file *callers.File
	reg  *prometheus.Registry
	log  *syncBuffer
}

// rewrite writes the callers file and has the decider check it (what its
// watch does every second).
func (d *callersDecider) rewrite(t *testing.T, content string) {
	t.Helper()
	writeLater(t, d.path, content)
	d.file.Check()
}

func startCallersDecider(t *testing.T, file string, tc *tls.Config) *callersDecider {
	t.Helper()
	path := filepath.Join(t.TempDir(), "callers.yaml")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(log, nil))
	reg := prometheus.NewRegistry()
	m := metrics.NewDecider(reg)
	cf, err := callers.Open(path, callers.Options{ClientCertificates: tc != nil}, logger, m)
	if err != nil {
		t.Fatalf("callers.Open: %v", err)
	}
	inst, err := installationloader.Load(installationloader.Options{DocumentPath: filepath.Join(t.TempDir(), "absent.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	store := installationloader.NewStore(inst)
	srv, err := New(Config{TLS: tc, Callers: cf, Reflection: true, Logger: logger, Metrics: m}, store,
		service.New(store, logger, m).WithCluster("east"))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { srv.Shutdown(time.Second) })
	return &callersDecider{addr: lis.Addr().String(), path: path, file: cf, reg: reg, log: log}
}

const (
	eastToken = "east-token-0123456789"
	westToken = "west-token-9876543210"
	westNext  = "west-token-next-rotation"
)

func twoCallers() string {
	return `callers:
  - name: east-frontdoor
    clusters: [east]
    credentials:
      - tokenSHA256: ` + digest(eastToken) + `
  - name: west-frontdoor
    clusters: [west, west-canary]
    credentials:
      - tokenSHA256: ` + digest(westToken) + `
`
}

func decideAs(t *testing.T, conn *grpc.ClientConn, token, cluster string) (*deciderv1.Decision, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	resp, err := deciderv1.NewDeciderServiceClient(conn).Decide(ctx, &deciderv1.DecisionRequest{
		Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Cluster: cluster,
		Pod: &deciderv1.PodFacts{Namespace: "default", Name: "app", Operation: deciderv1.Operation_OPERATION_CREATE,
			Annotations: map[string]string{"dynamic-config.rs/inject": "true", "dynamic-config.rs/source": "consul",
				"dynamic-config.rs/endpoint": "http://consul:8500", "dynamic-config.rs/key": "k", "dynamic-config.rs/path": "/config/app.json"},
			Containers: []*deciderv1.Container{{Name: "app"}}},
	})
	return resp.GetDecision(), err
}

func TestCallersFile(t *testing.T) {
	d := startCallersDecider(t, twoCallers(), nil)
	conn := dial(t, d.addr, nil)

	t.Run("a caller naming its own cluster is decided for that cluster, and the decision names both", func(t *testing.T) {
		dec, err := decideAs(t, conn, westToken, "west")
		if err != nil {
			t.Fatal(err)
		}
		if dec.GetCluster() != "west" || dec.GetCaller() != "west-frontdoor" || dec.GetAuditAnnotations()["cluster"] != "west" {
			t.Errorf("cluster %q, caller %q, audit annotations %v; want west, west-frontdoor and cluster=west",
				dec.GetCluster(), dec.GetCaller(), dec.GetAuditAnnotations())
		}
	})
	t.Run("a caller naming no cluster is decided for the decider's own cluster", func(t *testing.T) {
		dec, err := decideAs(t, conn, eastToken, "")
		if err != nil || dec.GetCluster() != "east" || dec.GetAuditAnnotations()["cluster"] != "east" {
			t.Errorf("err %v, cluster %q; want east", err, dec.GetCluster())
		}
	})
	t.Run("a known caller naming a cluster it may not speak for is denied without a word about the others", func(t *testing.T) {
		for _, cluster := range []string{"east", ""} { // "" is the decider's own: east
			_, err := decideAs(t, conn, westToken, cluster)
			if status.Code(err) != codes.PermissionDenied {
				t.Fatalf("cluster %q: %v; want PermissionDenied", cluster, err)
			}
			msg := status.Convert(err).Message()
			for _, secret := range []string{"east", "west-canary", "frontdoor", eastToken} {
				if strings.Contains(msg, secret) {
					t.Errorf("the denial %q names %q", msg, secret)
				}
			}
		}
	})
	t.Run("an unknown or missing token is unauthenticated", func(t *testing.T) {
		for _, token := range []string{"", "not-a-caller", westToken + " "} {
			if _, err := decideAs(t, conn, token, "west"); status.Code(err) != codes.Unauthenticated {
				t.Errorf("token %q: %v; want Unauthenticated", token, err)
			}
		}
	})
	t.Run("a listed certificate never makes a malformed authorization header pass", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Basic "+westToken)
		_, err := deciderv1.NewDeciderServiceClient(conn).Decide(ctx, &deciderv1.DecisionRequest{
			Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Cluster: "west", Pod: &deciderv1.PodFacts{Name: "x"}})
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("%v; want Unauthenticated", err)
		}
	})
	t.Run("a cluster name that is not a DNS name is an invalid argument", func(t *testing.T) {
		if _, err := decideAs(t, conn, westToken, "West_1"); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%v; want InvalidArgument", err)
		}
	})
	t.Run("health and reflection need no caller credential", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Errorf("health: %v", err)
		}
	})
	t.Run("the caller metrics count per caller of the file and nothing else", func(t *testing.T) {
		if got := testutil.ToFloat64(mustCounter(t, d.reg, "dynamic_config_caller_denied_total", "west-frontdoor")); got != 2 {
			t.Errorf("denied{west-frontdoor} = %v, want 2", got)
		}
		n, err := testutil.GatherAndCount(d.reg, "dynamic_config_caller_decisions_total")
		if err != nil || n != 2 { // the two callers answered, one outcome each: series appear with their first use
			t.Errorf("caller decision series = %d (%v), want 2", n, err)
		}
	})
	t.Run("the decision log line names the caller and the cluster", func(t *testing.T) {
		if !strings.Contains(d.log.String(), `"cluster":"west","caller":"west-frontdoor"`) {
			t.Errorf("no decision line with cluster and caller:\n%s", d.log)
		}
	})
	t.Run("during a rotation both of a caller's tokens work; the removed one stops working after the reload", func(t *testing.T) {
		rotating := strings.Replace(twoCallers(), "      - tokenSHA256: "+digest(westToken)+"\n",
			"      - tokenSHA256: "+digest(westToken)+"\n      - tokenSHA256: "+digest(westNext)+"\n", 1)
		d.rewrite(t, rotating)
		for _, token := range []string{westToken, westNext} {
			if _, err := decideAs(t, conn, token, "west"); err != nil {
				t.Errorf("during the rotation, token %q: %v", token, err)
			}
		}
		d.rewrite(t, strings.Replace(twoCallers(), digest(westToken), digest(westNext), 1))
		if _, err := decideAs(t, conn, westNext, "west"); err != nil {
			t.Errorf("the new token after the rotation: %v", err)
		}
		if _, err := decideAs(t, conn, westToken, "west"); status.Code(err) != codes.Unauthenticated {
			t.Errorf("the old token after the rotation: %v; want Unauthenticated", err)
		}
	})
	t.Run("a reload with a typo keeps the callers in force and logs every problem", func(t *testing.T) {
		d.rewrite(t, "callers:\n  - nmae: x\n")
		if _, err := decideAs(t, conn, eastToken, "east"); err != nil {
			t.Errorf("after a rejected reload: %v", err)
		}
		if !strings.Contains(d.log.String(), "callers file reload rejected") || !strings.Contains(d.log.String(), "nmae") {
			t.Errorf("the rejected reload is not logged with its problems:\n%s", d.log)
		}
	})
}

func TestCallersByClientCertificate(t *testing.T) {
	pki := newTestPKI(t)
	d := startCallersDecider(t, `callers:
  - name: west-frontdoor
    clusters: [west]
    credentials:
      - uriSAN: spiffe://test.example/frontdoor
`, pki.serverTLS(true))

	t.Run("a client certificate whose URI SAN is listed identifies its caller", func(t *testing.T) {
		dec, err := decideAs(t, dial(t, d.addr, pki.clientCreds(true)), "", "west")
		if err != nil || dec.GetCaller() != "west-frontdoor" {
			t.Fatalf("err %v, caller %q; want west-frontdoor", err, dec.GetCaller())
		}
	})
	t.Run("the listed certificate with a token nobody holds is unauthenticated", func(t *testing.T) {
		if _, err := decideAs(t, dial(t, d.addr, pki.clientCreds(true)), "some-token", "west"); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%v; want Unauthenticated", err)
		}
	})
	t.Run("the certificate's caller naming another cluster is denied", func(t *testing.T) {
		if _, err := decideAs(t, dial(t, d.addr, pki.clientCreds(true)), "", "east"); status.Code(err) != codes.PermissionDenied {
			t.Errorf("%v; want PermissionDenied", err)
		}
	})
}

func TestCallersExcludeTheTokenFile(t *testing.T) {
	_, err := New(Config{Callers: &callers.File{}, TokenFile: "token"}, installationloader.NewStore(nil), &echoService{})
	if err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("New with both: %v; want the exclusion named", err)
	}
}

// writeLater replaces path atomically — a temporary file beside it,
// renamed over it, as the documentation says to write a watched file (a
// file written in place can be read half written; issue 38) — with a
// modification time that differs from the last write's, so the stat check
// sees the change.
func writeLater(t *testing.T, path, content string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	later := info.ModTime().Add(time.Second)
	if err := os.Chtimes(tmp, later, later); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func mustCounter(t *testing.T, reg *prometheus.Registry, name, caller string) prometheus.Collector {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "caller" && l.GetValue() == caller {
					return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "x", Help: "x"}, func() float64 { return m.GetCounter().GetValue() })
				}
			}
		}
	}
	t.Fatalf("no %s{caller=%q}", name, caller)
	return nil
}

// watchAs opens a revision watch as token for cluster and returns its
// first announcement or the error that ended it.
func watchAs(t *testing.T, conn *grpc.ClientConn, token, cluster string) (*deciderv1.WatchRevisionResponse, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	stream, err := deciderv1.NewDeciderServiceClient(conn).WatchRevision(ctx, &deciderv1.WatchRevisionRequest{Cluster: cluster})
	if err != nil {
		return nil, err
	}
	return stream.Recv()
}

func TestTheRevisionWatchIsAuthorizedAsDecideIs(t *testing.T) {
	d := startCallersDecider(t, twoCallers(), nil)
	conn := dial(t, d.addr, nil)
	cases := []struct {
		name, token, cluster string
		want                 codes.Code
	}{
		{"a caller for its own cluster is announced to", eastToken, "east", codes.OK},
		{"a caller naming no cluster is announced the decider's own", eastToken, "", codes.OK},
		{"a caller for a cluster it may not speak for is refused", westToken, "east", codes.PermissionDenied},
		{"an unknown token is refused", "nobody-knows-me-0123", "east", codes.Unauthenticated},
		{"no credential is refused", "", "east", codes.Unauthenticated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, decideErr := decideAs(t, conn, tc.token, tc.cluster)
			a, err := watchAs(t, conn, tc.token, tc.cluster)
			if status.Code(err) != tc.want || status.Code(decideErr) != tc.want {
				t.Fatalf("watch %v, Decide %v; want %v for both", err, decideErr, tc.want)
			}
			if tc.want == codes.OK && !strings.HasPrefix(a.GetInstallationRevision(), "sha256:") {
				t.Fatalf("announcement %v", a)
			}
		})
	}
}
