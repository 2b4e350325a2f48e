package daemon

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// writeDocument writes an installation document into the test's directory.
func writeDocument(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "installation.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// loading is the Installation of a document named explicitly, read without
// the process environment.
func loading(path string) Installation {
	return Installation{Load: installationloader.Options{DocumentPath: path, DocumentExplicit: true}}
}

// dial connects a plain gRPC client to addr (the decider never imports the
// front door's client; a NOT_SERVING decider is called all the same).
func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// askingPod is a Decide request of a pod that asks for a consul agent.
func askingPod() *deciderv1.DecisionRequest {
	return &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE,
		Pod: &deciderv1.PodFacts{Namespace: "default", Name: "app", Operation: deciderv1.Operation_OPERATION_CREATE,
			ResourceKind: deciderv1.ResourceKind_RESOURCE_KIND_POD,
			Annotations: map[string]string{"dynamic-config.rs/inject": "true", "dynamic-config.rs/source": "consul",
				"dynamic-config.rs/endpoint": "http://consul:8500", "dynamic-config.rs/key": "myapp/config.json",
				"dynamic-config.rs/path": "/config/rendered.toml"},
			Containers: []*deciderv1.Container{{Name: "app"}}}}
}

// freeLoopbackAddr returns a loopback address with a port free right now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// TestADeciderStartsWithoutACommandLine starts the decider from a Config
// (real service, the empty installation, a loopback port) and calls it.
func TestADeciderStartsWithoutACommandLine(t *testing.T) {
	d, err := Start(t.Context(), Config{
		Installation: loading(writeDocument(t, "")),
		Addr:         "127.0.0.1:0",
		Reflection:   true,
		Logger:       slog.New(slog.NewJSONHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Shutdown(time.Second)
	conn := dial(t, d.Addr().String())
	c := deciderv1.NewDeciderServiceClient(conn)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()

	t.Run("it is ready, and health is SERVING, once the installation is held", func(t *testing.T) {
		if !d.Ready() {
			t.Error("not ready")
		}
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "dynamicconfig.decider.v1.DeciderService"})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health %v, %v", resp.GetStatus(), err)
		}
	})
	t.Run("Decide answers under the empty installation's revision", func(t *testing.T) {
		resp, err := c.Decide(ctx, askingPod())
		if err != nil {
			t.Fatal(err)
		}
		dec := resp.GetDecision()
		if dec.GetInstallationRevision() != installation.EmptyRevision || dec.GetAuditAnnotations()["revision"] != installation.EmptyRevision {
			t.Errorf("revision %q, audit annotations %v", dec.GetInstallationRevision(), dec.GetAuditAnnotations())
		}
		if dec.GetDecisionId() == "" || dec.GetOutcome() != deciderv1.Outcome_OUTCOME_INJECT {
			t.Errorf("decision id %q, outcome %v", dec.GetDecisionId(), dec.GetOutcome())
		}
	})
	t.Run("GetInstallation answers the revision, when it was loaded and the leader's role", func(t *testing.T) {
		resp, err := c.GetInstallation(ctx, &deciderv1.GetInstallationRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetRevision() != installation.EmptyRevision || resp.GetLoadedAt() == nil || resp.GetRole() != deciderv1.DeciderRole_DECIDER_ROLE_LEADER {
			t.Errorf("revision %q, loaded_at %v, role %v", resp.GetRevision(), resp.GetLoadedAt(), resp.GetRole())
		}
	})
	t.Run("the store holds what it decides from", func(t *testing.T) {
		if d.Store().Current().Revision != installation.EmptyRevision {
			t.Errorf("store revision %q", d.Store().Current().Revision)
		}
	})
}

// TestAGivenInstallationIsServedOnTheListenerGiven: the offline doors'
// decider (doors/engine) — an installation loaded already, on a listener the
// caller bound — is served as it is, without a file to watch.
func TestAGivenInstallationIsServedOnTheListenerGiven(t *testing.T) {
	inst, err := installationloader.Load(loading(writeDocument(t, "watchSeconds: \"45\"\n")).Load)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Start(t.Context(), Config{Installation: Installation{Given: inst}, Listener: lis})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Shutdown(time.Second)
	if d.Addr().String() != lis.Addr().String() {
		t.Errorf("the decider serves %s, not the listener given (%s)", d.Addr(), lis.Addr())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	resp, err := deciderv1.NewDeciderServiceClient(dial(t, lis.Addr().String())).Decide(ctx, askingPod())
	if err != nil || resp.GetDecision().GetInstallationRevision() != inst.Revision {
		t.Fatalf("Decide: %v, revision %q; want %s", err, resp.GetDecision().GetInstallationRevision(), inst.Revision)
	}
}

// TestRunDrains pins a graceful stop (06 §7, 07 §1.1): when Run's context
// ends, health turns NOT_SERVING at once, /readyz answers 503 "not ready"
// while the calls in flight (here a health Watch stream) are drained, and
// Run returns nil.
func TestRunDrains(t *testing.T) {
	metricsAddr := freeLoopbackAddr(t)
	d, err := Start(t.Context(), Config{
		Installation:  loading(writeDocument(t, "")),
		Addr:          "127.0.0.1:0",
		MetricsAddr:   metricsAddr,
		ShutdownGrace: 3 * time.Second,
		DrainDelay:    time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.MetricsAddr().String() != metricsAddr {
		t.Fatalf("metrics on %s, want %s", d.MetricsAddr(), metricsAddr)
	}
	runCtx, stop := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(runCtx) }()
	readyz := func() (int, string, error) {
		resp, err := http.Get("http://" + metricsAddr + "/readyz")
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), nil
	}
	if code, body, err := readyz(); err != nil || code != http.StatusOK || body != "ok" {
		t.Fatalf("/readyz = %d %q (%v) before the stop", code, body, err)
	}
	watchCtx, stopWatch := context.WithTimeout(t.Context(), 10*time.Second)
	defer stopWatch()
	watch, err := healthpb.NewHealthClient(dial(t, d.Addr().String())).Watch(watchCtx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if first, err := watch.Recv(); err != nil || first.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("first health update %v, %v", first.GetStatus(), err)
	}

	stop() // SIGTERM
	t.Run("health turns NOT_SERVING when the graceful stop starts", func(t *testing.T) {
		next, err := watch.Recv()
		if err != nil || next.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Errorf("health update %v, %v; want NOT_SERVING", next.GetStatus(), err)
		}
	})
	t.Run("readyz answers 503 not ready while the decider drains", func(t *testing.T) {
		code, body, err := readyz()
		if err != nil || code != http.StatusServiceUnavailable || body != "not ready" {
			t.Errorf("/readyz = %d %q (%v); want 503 \"not ready\"", code, body, err)
		}
	})
	stopWatch()
	select {
	case err := <-ran:
		if err != nil {
			t.Errorf("Run: %v, want nil after a graceful stop", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the decider did not stop")
	}
	if _, _, err := readyz(); err == nil {
		t.Error("the metrics listener still answers after Run returned")
	}
}

func TestShutdownIsIdempotent(t *testing.T) {
	d, err := Start(t.Context(), Config{Installation: loading(writeDocument(t, "")), Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() {
		d.Shutdown(time.Second)
		// serve stops a decider that already stopped on its own (deferred)
		d.Shutdown(time.Second)
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("a second shutdown of a stopped decider hangs")
	}
	select {
	case <-d.Done():
	default:
		t.Error("Done is open after Shutdown")
	}
}

// TestStartRefusesWhatCannotServe: a Config that cannot serve is an error,
// the decider's own words, before anything listens.
func TestStartRefusesWhatCannotServe(t *testing.T) {
	bad := writeDocument(t, "watchSeconds: \"-1\"\nendpoint: http://x\n")
	typo := filepath.Join(t.TempDir(), "callers.yaml")
	if err := os.WriteFile(typo, []byte("callers:\n  - name: west\n    cluster: [west]\n    credentials:\n      - tokenSHA265: abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	empty := writeDocument(t, "")
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"an invalid installation, with every problem", Config{Installation: loading(bad)},
			"dynamic-config: the installation is invalid (2 problems; document " + bad + "):"},
		{"a missing explicit document", Config{Installation: loading(bad + ".missing")},
			"the installation document does not exist"},
		{"a callers file with typos, with every problem", Config{Installation: loading(empty), Callers: typo, Cluster: "east"},
			"decider: callers file " + typo + " has 3 problem(s):\n"},
		{"a serving pair that does not load", Config{Installation: loading(empty), TLS: TLS{CertFile: bad, KeyFile: bad}},
			"decider: TLS pair: "},
		{"a classes file with a kubeconfig", Config{Installation: loading(empty), Classes: Classes{File: bad, Kubeconfig: bad}},
			"--classes-file and --kubeconfig exclude each other"},
		{"a metrics address in use", Config{Installation: loading(empty), Addr: "127.0.0.1:0", MetricsAddr: busy.Addr().String()},
			"decider: metrics listener: listen tcp " + busy.Addr().String()},
		{"a gRPC address in use", Config{Installation: loading(empty), Addr: busy.Addr().String()},
			"decider: listen tcp " + busy.Addr().String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Start(t.Context(), tt.cfg)
			if err == nil {
				d.Shutdown(0)
				t.Fatalf("started; want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want %q", err, tt.want)
			}
		})
	}
}

// TestAnInvalidEnvPolicyStopsStartWithEveryProblem: an invalid policy, in
// the document or in DYNAMIC_CONFIG_ENV_POLICY, stops the decider before it
// listens, with every problem listed (spec 05 §2.2, 02 §7.3).
func TestAnInvalidEnvPolicyStopsStartWithEveryProblem(t *testing.T) {
	const variable = "DYNAMIC_CONFIG_ENV_POLICY"
	tests := []struct {
		name     string
		document string
		variable string // "" = unset
		problems []string
	}{
		{
			name: "a document policy with six problems lists all six",
			document: "envPolicy:\n  targets: [pods, pods]\n  rules:\n" +
				"    - reject: noneIn\n      environmentVariables:\n        - name: 1BAD\n      mode: block\n" +
				"    - environmentVariables: []\n      namespaces: [Payments]\n",
			problems: []string{
				`envPolicy.targets[1]: "pods" appears twice`,
				`envPolicy.rules[0].reject: "noneIn": anyIn, anyNotIn, allAreUsed or notAllAreUsed`,
				`envPolicy.rules[0].environmentVariables[0].name: "1BAD" is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)`,
				`envPolicy.rules[0].mode: "block": enforce, warn or audit`,
				`envPolicy.rules[1].environmentVariables: is required and may not be empty`,
				`envPolicy.rules[1].namespaces[0]: "Payments" is not a namespace (lowercase RFC 1123) or "*"`,
			},
		},
		{
			name:     "a DYNAMIC_CONFIG_ENV_POLICY with four problems lists all four",
			variable: `{"targets": [], "rules": [{"reject": "noneIn", "environmentVariables": [{"name": "1BAD"}], "mode": "block"}]}`,
			problems: []string{
				`DYNAMIC_CONFIG_ENV_POLICY: targets: is empty: drop it to target both, or list "pods" and/or "workloads"`,
				`DYNAMIC_CONFIG_ENV_POLICY: rules[0].reject: "noneIn": anyIn, anyNotIn, allAreUsed or notAllAreUsed`,
				`DYNAMIC_CONFIG_ENV_POLICY: rules[0].environmentVariables[0].name: "1BAD" is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)`,
				`DYNAMIC_CONFIG_ENV_POLICY: rules[0].mode: "block": enforce, warn or audit`,
			},
		},
		{
			name:     "a document policy hidden by a valid DYNAMIC_CONFIG_ENV_POLICY still stops the decider",
			document: "envPolicy:\n  rules: []\n",
			variable: `{"rules": [{"environmentVariables": [{"name": "HTTPS_PROXY"}]}]}`,
			problems: []string{
				`(hidden by DYNAMIC_CONFIG_ENV_POLICY) envPolicy.rules: is empty: list at least one rule, or drop envPolicy`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := writeDocument(t, tt.document)
			load := loading(doc)
			if tt.variable != "" {
				load.Load.Environ = []string{variable + "=" + tt.variable}
			}
			var log strings.Builder
			d, err := Start(t.Context(), Config{Installation: load, Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if err == nil {
				d.Shutdown(0)
				t.Fatal("the decider started")
			}
			noun := "problems"
			if len(tt.problems) == 1 {
				noun = "problem"
			}
			want := "dynamic-config: the installation is invalid (" + strconv.Itoa(len(tt.problems)) + " " + noun + "; document " + doc + "):\n  " +
				strings.Join(tt.problems, "\n  ")
			if err.Error() != want {
				t.Errorf("error:\n%s\nwant:\n%s", err, want)
			}
			if log.Len() != 0 {
				t.Errorf("the decider logged before it refused:\n%s", log.String())
			}
		})
	}
}

// lockedLog is a log destination the decider's loops may write to while
// the test reads it.
type lockedLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestNothingOfTheDeciderRunsAfterShutdown: serve removes the document it
// wrote once the decider is shut down; a watch still running then refused
// the "reload" of a document that no longer exists (an ERROR line at exit,
// found by scripts/cli-compare.sh as a line in one run of two binaries).
func TestNothingOfTheDeciderRunsAfterShutdown(t *testing.T) {
	doc := writeDocument(t, "")
	load := loading(doc)
	load.ReloadInterval = 10 * time.Millisecond
	var log lockedLog
	d, err := Start(t.Context(), Config{Installation: load, Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	d.Shutdown(time.Second)
	if err := os.Remove(doc); err != nil {
		t.Fatal(err)
	}
	// ten reload intervals and more than a settle: a running watch would
	// have seen the document gone by now
	time.Sleep(300 * time.Millisecond)
	if got := log.String(); strings.Contains(got, "reload") {
		t.Errorf("the installation watch ran after Shutdown:\n%s", got)
	}
}
