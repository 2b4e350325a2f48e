package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/dynamic-config-admission/dynamic-config/decider/installation"
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
	os.WriteFile(bad, []byte("watchSeconds: \"-1\"\nendpoint: http://x\n"), 0o600)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"without a TLS pair and without --plaintext the decider does not start", []string{"--installation", foundationEmptyFile(t)},
			"decider: no TLS pair at --tls-cert/--tls-key and --plaintext not set"},
		{"--tls-client-ca needs TLS", []string{"--plaintext", "--tls-client-ca", "ca.crt"},
			"decider: --tls-client-ca needs --tls-cert/--tls-key; it cannot be used with --plaintext"},
		{"half a TLS pair is refused", []string{"--tls-cert", "tls.crt"},
			"decider: --tls-cert and --tls-key go together"},
		{"an invalid installation stops the decider with every problem", []string{"--plaintext", "--installation", bad, "--addr", "127.0.0.1:0", "--metrics-addr", ""},
			"dynamic-config: the installation is invalid (2 problems; document " + bad + "):"},
		{"a missing explicit installation document stops the decider", []string{"--plaintext", "--installation", bad + ".missing", "--addr", "127.0.0.1:0", "--metrics-addr", ""},
			"the installation document does not exist"},
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

func TestDeciderStopsGracefully(t *testing.T) {
	withFoundationEnv(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		done <- deciderMain(ctx, []string{"--plaintext", "--installation", foundationEmptyFile(t),
			"--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--log-level", "error"}, &stderr)
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d after SIGTERM, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the decider did not stop")
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
		installation: installation.Options{DocumentPath: foundationEmptyFile(t), DocumentExplicit: true},
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
