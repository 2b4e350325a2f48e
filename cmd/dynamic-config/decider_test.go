package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// foundationEmptyFile writes an empty installation document.
func foundationEmptyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDeciderStartRefusals(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("watchSeconds: \"-1\"\nendpoint: http://x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(t.TempDir(), "callers.yaml")
	if err := os.WriteFile(typo, []byte("callers:\n  - name: west\n    cluster: [west]\n    credentials:\n      - tokenSHA265: abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"without a TLS pair and without --plaintext the decider does not start", []string{"--installation", foundationEmptyFile(t)},
			"decider: no TLS pair at --tls-cert/--tls-key and --plaintext not set"},
		{"--tls-client-ca needs TLS", []string{"--plaintext", "--tls-client-ca", "ca.crt"},
			"decider: --tls-client-ca needs --tls-cert/--tls-key; it cannot be used with --plaintext"},
		{"a zero reload interval is refused, naming the flag", []string{"--plaintext", "--reload-interval", "0s"},
			"decider: --reload-interval is 0s: it must be positive"},
		{"a negative shutdown grace is refused, naming the flag", []string{"--plaintext", "--shutdown-grace", "-1s"},
			"decider: --shutdown-grace is -1s: it must be positive"},
		{"half a TLS pair is refused", []string{"--tls-cert", "tls.crt"},
			"decider: --tls-cert and --tls-key go together"},
		{"an invalid installation stops the decider with every problem", []string{"--plaintext", "--installation", bad, "--addr", "127.0.0.1:0", "--metrics-addr", ""},
			"dynamic-config: the installation is invalid (2 problems; document " + bad + "):"},
		{"a callers file with typos is refused at start with every problem", []string{"--plaintext", "--installation", foundationEmptyFile(t),
			"--callers", typo, "--cluster-name", "east", "--addr", "127.0.0.1:0", "--metrics-addr", ""},
			"decider: callers file " + typo + " has 3 problem(s):\n" +
				"  line 2: callers[0] (west).clusters: missing; list the clusters this caller may speak for\n" +
				"  line 3: callers[0] (west).cluster: unknown key; accepted: name, clusters, credentials\n" +
				"  line 5: callers[0] (west).credentials[0].tokenSHA265: unknown credential kind; accepted: tokenSHA256, uriSAN, dnsSAN\n"},
		{"--callers needs the decider's own cluster name", []string{"--plaintext", "--callers", typo},
			"decider: --callers needs --cluster-name: the decider's own cluster"},
		{"--callers excludes --auth-token-file", []string{"--plaintext", "--callers", typo, "--cluster-name", "east", "--auth-token-file", "t"},
			"decider: --callers and --auth-token-file exclude each other"},
		{"a cluster name that is not a DNS name is refused", []string{"--plaintext", "--cluster-name", "East_1"},
			`decider: --cluster-name is "East_1" is not a cluster name`},
		{"a missing explicit installation document stops the decider", []string{"--plaintext", "--installation", bad + ".missing", "--addr", "127.0.0.1:0", "--metrics-addr", ""},
			"the installation document does not exist"},
		{"a sample ratio above 1 is refused", []string{"--plaintext", "--trace-sample-ratio", "1.5"},
			"decider: --trace-sample-ratio is 1.5: a ratio from 0 to 1"},
		{"an OTLP endpoint that is not an http or https URL is refused", []string{"--plaintext", "--otlp-endpoint", "collector:4317",
			"--installation", foundationEmptyFile(t), "--addr", "127.0.0.1:0", "--metrics-addr", ""},
			`decider: --otlp-endpoint is "collector:4317": an http:// or https:// URL of an OTLP/HTTP receiver`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withFoundationEnv(t, nil)
			var stderr bytes.Buffer
			if code := deciderMain(t.Context(), c.args, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr %q, want %q", stderr.String(), c.want)
			}
		})
	}
}

// TestDeciderOverLoopback starts the real decider (real service, empty
// installation) and calls it with the front door's client.
func TestDeciderOverLoopback(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	d, err := startDecider(ctx, deciderSetup{
		logger:       slog.New(slog.NewJSONHandler(io.Discard, nil)),
		registry:     prometheus.NewRegistry(),
		installation: installationloader.Options{DocumentPath: foundationEmptyFile(t), DocumentExplicit: true},
		addr:         "127.0.0.1:0",
		server:       server.Config{Reflection: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.shutdown(time.Second)
	c, err := client.New(client.Config{Target: d.addr.String(), Plaintext: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	callCtx, callCancel := context.WithTimeout(ctx, 5*time.Second)
	defer callCancel()

	t.Run("health is SERVING once the installation is held", func(t *testing.T) {
		resp, err := healthpb.NewHealthClient(c.Conn()).Check(callCtx, &healthpb.HealthCheckRequest{Service: "dynamicconfig.decider.v1.DeciderService"})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health %v, %v", resp.GetStatus(), err)
		}
	})
	t.Run("Decide answers the example request under the empty installation's revision", func(t *testing.T) {
		resp, err := c.Decide(callCtx, &deciderv1.DecisionRequest{
			Purpose: deciderv1.Purpose_PURPOSE_MUTATE,
			Pod: &deciderv1.PodFacts{Namespace: "default", Name: "app", Operation: deciderv1.Operation_OPERATION_CREATE,
				ResourceKind: deciderv1.ResourceKind_RESOURCE_KIND_POD,
				Annotations: map[string]string{"dynamic-config.rs/inject": "true", "dynamic-config.rs/source": "consul",
					"dynamic-config.rs/endpoint": "http://consul:8500", "dynamic-config.rs/key": "myapp/config.json",
					"dynamic-config.rs/path": "/config/rendered.toml"},
				Containers: []*deciderv1.Container{{Name: "app"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		d := resp.GetDecision()
		if d.GetInstallationRevision() != installation.EmptyRevision {
			t.Errorf("revision %q", d.GetInstallationRevision())
		}
		if d.GetAuditAnnotations()["revision"] != installation.EmptyRevision {
			t.Errorf("audit annotations %v", d.GetAuditAnnotations())
		}
		if d.GetDecisionId() == "" || d.GetOutcome() == deciderv1.Outcome_OUTCOME_UNSPECIFIED {
			t.Errorf("decision id %q, outcome %v", d.GetDecisionId(), d.GetOutcome())
		}
	})
	t.Run("GetInstallation answers the revision and when it was loaded", func(t *testing.T) {
		resp, err := c.GetInstallation(callCtx, &deciderv1.GetInstallationRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetRevision() != installation.EmptyRevision || resp.GetLoadedAt() == nil {
			t.Errorf("revision %q, loaded_at %v", resp.GetRevision(), resp.GetLoadedAt())
		}
	})
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

// TestDeciderDrains pins a graceful stop (06 §7, 07 §1.1): health turns
// NOT_SERVING at once, /readyz answers 503 "not ready" while the calls in
// flight (here a health Watch stream) are drained, and the exit code is 0.
func TestDeciderDrains(t *testing.T) {
	withFoundationEnv(t, nil)
	grpcAddr, metricsAddr := freeLoopbackAddr(t), freeLoopbackAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		done <- deciderMain(ctx, []string{"--plaintext", "--installation", foundationEmptyFile(t),
			"--addr", grpcAddr, "--metrics-addr", metricsAddr, "--shutdown-grace", "3s", "--drain-delay", "1s", "--log-level", "error"}, &stderr)
	}()
	readyz := func() (int, string, error) {
		resp, err := http.Get("http://" + metricsAddr + "/readyz")
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if code, _, err := readyz(); err == nil && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never answered 200; stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	c, err := client.New(client.Config{Target: grpcAddr, Plaintext: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	watchCtx, stopWatch := context.WithTimeout(t.Context(), 10*time.Second)
	defer stopWatch()
	watch, err := healthpb.NewHealthClient(c.Conn()).Watch(watchCtx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if first, err := watch.Recv(); err != nil || first.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("first health update %v, %v", first.GetStatus(), err)
	}

	cancel() // SIGTERM
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
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the decider did not stop")
	}
}

func TestDeciderShutdownIsIdempotent(t *testing.T) {
	d, err := startDecider(t.Context(), deciderSetup{
		logger:       slog.New(slog.DiscardHandler),
		registry:     prometheus.NewRegistry(),
		installation: installationloader.Options{DocumentPath: foundationEmptyFile(t), DocumentExplicit: true},
		addr:         "127.0.0.1:0",
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() {
		d.shutdown(time.Second)
		// serve stops a decider that already stopped on its own (deferred)
		d.shutdown(time.Second)
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("a second shutdown of a stopped decider hangs")
	}
}
