package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/internal/certs/certstest"
)

// foundationFreePort returns a loopback port that was free a moment ago.
func foundationFreePort(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	return strconv.Itoa(lis.Addr().(*net.TCPAddr).Port)
}

// foundationRun runs a long-running subcommand until the test ends and
// checks that it stops with exit 0.
func foundationRun(t *testing.T, name string, main func(context.Context, []string, io.Writer) int, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	stderr := &foundationStderr{}
	go func() { done <- main(ctx, args, stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != exitOK {
				t.Errorf("%s exited %d:\n%s", name, code, stderr.String())
			}
		case <-time.After(15 * time.Second):
			t.Errorf("%s did not stop", name)
		}
	})
}

// foundationWaitOK polls url until it answers 200.
func foundationWaitOK(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never answered 200", url)
}

// TestFrontdoorReachesAnMTLSDecider runs the two production subcommands the
// way the chart does (mTLS between them) and sends the README's review.
func TestFrontdoorReachesAnMTLSDecider(t *testing.T) {
	withFoundationEnv(t, nil)
	dir := t.TempDir()
	pki, err := certstest.Write(dir, "leaf", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	empty := foundationEmptyFile(t)
	deciderAddr := "127.0.0.1:" + foundationFreePort(t)
	deciderMetrics := "127.0.0.1:" + foundationFreePort(t)
	frontdoorAddr := "127.0.0.1:" + foundationFreePort(t)

	foundationRun(t, "decider", deciderMain, "--addr", deciderAddr, "--metrics-addr", deciderMetrics,
		"--installation", empty, "--tls-cert", pki.CertFile, "--tls-key", pki.KeyFile, "--tls-client-ca", pki.CAFile,
		"--log-level", "error")
	foundationWaitOK(t, "http://"+deciderMetrics+"/readyz")

	frontdoorMetrics := "127.0.0.1:" + foundationFreePort(t)
	foundationRun(t, "frontdoor", frontdoorMain, "--addr", frontdoorAddr, "--metrics-addr", frontdoorMetrics, "--plaintext",
		"--tls-cert", dir+"/none.crt", "--tls-key", dir+"/none.key",
		"--decider-target", "dns:///"+deciderAddr, "--decider-ca", pki.CAFile,
		"--decider-client-cert", pki.CertFile, "--decider-client-key", pki.KeyFile, "--log-level", "error")
	foundationWaitOK(t, "http://"+frontdoorAddr+"/readyz")

	body, err := os.ReadFile("../../examples/review-inject.json")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+frontdoorAddr+"/mutate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out foundationAdmission
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	t.Run("the answer echoes the review's uid", func(t *testing.T) {
		if out.Response.UID != "705ab4f5-6393-11e8-b7cc-42010a800002" {
			t.Errorf("uid %q", out.Response.UID)
		}
	})
	t.Run("the answer carries the decider's revision, so the decider answered over mTLS", func(t *testing.T) {
		if got := out.Response.AuditAnnotations["revision"]; got != installation.EmptyRevision {
			t.Errorf("revision %q, want %q (audit annotations %v)", got, installation.EmptyRevision, out.Response.AuditAnnotations)
		}
	})
	t.Run("the front door counts every webhook request by code, a garbage POST included", func(t *testing.T) {
		garbage, err := http.Post("http://"+frontdoorAddr+"/mutate", "application/json", strings.NewReader("not a review"))
		if err != nil {
			t.Fatal(err)
		}
		garbage.Body.Close()
		resp, err := http.Get("http://" + frontdoorMetrics + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		metrics, _ := io.ReadAll(resp.Body)
		for _, want := range []string{
			`dynamic_config_webhook_requests_total{code="200",webhook="mutate"} 1`,
			fmt.Sprintf(`dynamic_config_webhook_requests_total{code="%d",webhook="mutate"} 1`, garbage.StatusCode),
			`dynamic_config_webhook_requests_in_flight{webhook="mutate"} 0`,
		} {
			if garbage.StatusCode == http.StatusOK || !bytes.Contains(metrics, []byte(want+"\n")) {
				t.Errorf("garbage POST answered %d; metrics lack %s:\n%s", garbage.StatusCode, want, metrics)
			}
		}
	})
	t.Run("the decider exports its own serving certificate's expiry", func(t *testing.T) {
		resp, err := http.Get("http://" + deciderMetrics + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		metrics, _ := io.ReadAll(resp.Body)
		want := `dynamic_config_certificate_expiration_timestamp_seconds{certificate="decider-serving"} ` + strconv.FormatFloat(float64(pki.NotAfter.Unix()), 'g', -1, 64)
		if !bytes.Contains(metrics, []byte(want)) {
			t.Errorf("metrics lack %s:\n%s", want, metrics)
		}
	})
	t.Run("the decider's metrics listener exports decisions", func(t *testing.T) {
		resp, err := http.Get("http://" + deciderMetrics + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		metrics, _ := io.ReadAll(resp.Body)
		if !bytes.Contains(metrics, []byte(`grpc_server_handled_total{grpc_code="OK",grpc_method="Decide"`)) ||
			!bytes.Contains(metrics, []byte(`dynamic_config_installation_info{revision="`+installation.EmptyRevision+`"} 1`)) {
			t.Errorf("metrics lack the decision or the installation info:\n%s", metrics)
		}
	})
}
