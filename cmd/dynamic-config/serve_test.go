package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	frontdoord "github.com/dynamic-config-admission/dynamic-config/frontdoor/daemon"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func TestServeBindsLoopbackOnly(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"a wildcard front door address is refused", []string{"--addr", "0.0.0.0:8080"}},
		{"a routable decider address is refused", []string{"--decider-addr", "10.0.0.1:9090"}},
		{"a metrics address without a host is refused", []string{"--metrics-addr", ":9092"}},
		{"an IPv6 wildcard is refused", []string{"--addr", "[::]:8080"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withFoundationEnv(t, nil)
			var stderr bytes.Buffer
			if code := serveMain(t.Context(), c.args, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			want := "serve binds loopback addresses only; run decider and frontdoor separately for anything else\n"
			if stderr.String() != want {
				t.Errorf("stderr %q, want %q", stderr.String(), want)
			}
		})
	}
}

// foundationServe runs serve with args (plus loopback port-0 listeners and
// an addr file) until the test ends and returns the addr-file entries.
func foundationServe(t *testing.T, args ...string) map[string]string {
	t.Helper()
	withFoundationEnv(t, nil)
	addrFile := filepath.Join(t.TempDir(), "addr")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	stderr := &foundationStderr{}
	go func() {
		done <- serveMain(ctx, append([]string{"--addr", "127.0.0.1:0", "--decider-addr", "127.0.0.1:0",
			"--addr-file", addrFile, "--log-level", "warn"}, args...), stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != exitOK {
				t.Errorf("serve exited %d after cancel:\n%s", code, stderr.String())
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(addrFile); err == nil {
			entries := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				k, v, _ := strings.Cut(line, "=")
				entries[k] = v
			}
			return entries
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("serve exited %d:\n%s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no addr file:\n%s", stderr.String())
	return nil
}

// foundationStderr is a goroutine-safe stderr for a running subcommand.
type foundationStderr struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *foundationStderr) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *foundationStderr) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// foundationAdmission is the part of an AdmissionReview answer the tests read.
type foundationAdmission struct {
	Response struct {
		UID              string            `json:"uid"`
		Allowed          bool              `json:"allowed"`
		Patch            string            `json:"patch"`
		PatchType        string            `json:"patchType"`
		AuditAnnotations map[string]string `json:"auditAnnotations"`
	} `json:"response"`
}

func foundationPostReview(t *testing.T, c *http.Client, url string) foundationAdmission {
	t.Helper()
	body, err := os.ReadFile("../../examples/review-inject.json")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Post(url+"/mutate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var out foundationAdmission
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestServeInjectsTheSingleLineOfIntent(t *testing.T) {
	addrs := foundationServe(t)
	t.Run("the addr file names both listeners", func(t *testing.T) {
		if !strings.HasPrefix(addrs["frontdoor"], "http://127.0.0.1:") || !strings.HasPrefix(addrs["decider"], "127.0.0.1:") {
			t.Errorf("addr file %v", addrs)
		}
	})
	t.Run("the README example review is injected by the embedded installation", func(t *testing.T) {
		out := foundationPostReview(t, http.DefaultClient, addrs["frontdoor"])
		r := out.Response
		if r.UID != "705ab4f5-6393-11e8-b7cc-42010a800002" || !r.Allowed || r.PatchType != "JSONPatch" {
			t.Fatalf("response %+v", r)
		}
		if !strings.HasPrefix(r.AuditAnnotations["revision"], "sha256:") {
			t.Errorf("audit annotations %v", r.AuditAnnotations)
		}
		patch, err := base64.StdEncoding.DecodeString(r.Patch)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"dynamic-config-agent"`, `"--endpoint","http://consul.infra.svc:8500"`, `"--key","myapp/config.json"`, `"--out","/config/rendered.json"`} {
			if !strings.Contains(string(patch), want) {
				t.Errorf("patch lacks %s:\n%s", want, patch)
			}
		}
	})
	t.Run("the decider answers the seed's single line of intent over gRPC", func(t *testing.T) {
		c, err := client.New(client.Config{Target: addrs["decider"], Plaintext: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var req deciderv1.DecisionRequest
		if err := protojson.Unmarshal([]byte(`{"purpose": "PURPOSE_MUTATE",
			"pod": {"namespace": "default", "name": "app", "operation": "OPERATION_CREATE",
			"resourceKind": "RESOURCE_KIND_POD", "annotations": {"dynamic-config.rs/inject": "true"},
			"containers": [{"name": "app"}]}}`), &req); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := c.Decide(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		d := resp.GetDecision()
		if d.GetOutcome() != deciderv1.Outcome_OUTCOME_INJECT {
			t.Fatalf("outcome %v", d.GetOutcome())
		}
		values := map[string]*deciderv1.ResolvedValue{}
		for _, v := range d.GetRenders()[0].GetValues() {
			values[v.GetKnob()] = v
		}
		want := []struct {
			knob, value string
			tier        deciderv1.Tier
			pinned      bool
		}{
			{"source", "consul", deciderv1.Tier_TIER_FLEET_DEFAULT, false},
			{"path", "/config/rendered.json", deciderv1.Tier_TIER_FLEET_DEFAULT, false},
			{"endpoint", "http://consul.infra.svc:8500", deciderv1.Tier_TIER_STORE_DEFAULT, true},
			{"key", "myapp/config.json", deciderv1.Tier_TIER_STORE_DEFAULT, false},
			{"watch-seconds", "10", deciderv1.Tier_TIER_STORE_DEFAULT, false},
			{"file-mode", "0640", deciderv1.Tier_TIER_FLEET_DEFAULT, false},
		}
		for _, w := range want {
			v := values[w.knob]
			if v.GetValue() != w.value || v.GetTier() != w.tier || v.GetPinned() != w.pinned {
				t.Errorf("%s = %q %v pinned=%v, want %q %v pinned=%v", w.knob, v.GetValue(), v.GetTier(), v.GetPinned(), w.value, w.tier, w.pinned)
			}
		}
		args := strings.Join(d.GetPlan().GetAgents()[0].GetContainer().GetArgs(), " ")
		wantArgs := "--source consul --endpoint http://consul.infra.svc:8500 --key myapp/config.json --out /config/rendered.json --file-mode 0640 --watch 10"
		if args != wantArgs {
			t.Errorf("args %q\nwant %q", args, wantArgs)
		}
	})
}

func TestServeGeneratesTLS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	addrs := foundationServe(t, "--tls-generate", dir)
	if !strings.HasPrefix(addrs["frontdoor"], "https://127.0.0.1:") {
		t.Fatalf("front door %q is not https", addrs["frontdoor"])
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}, Timeout: 10 * time.Second}
	t.Run("the front door answers over TLS verified by the generated CA", func(t *testing.T) {
		if out := foundationPostReview(t, c, addrs["frontdoor"]); !out.Response.Allowed {
			t.Errorf("response %+v", out.Response)
		}
	})
}

func TestServeRefusesAZeroReloadInterval(t *testing.T) {
	withFoundationEnv(t, map[string]string{"DYNAMIC_CONFIG_DECIDER_RELOAD_INTERVAL": "0s"})
	var stderr bytes.Buffer
	if code := serveMain(t.Context(), nil, &stderr); code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	if want := "serve: --reload-interval is 0s: it must be positive\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

func TestServeLoopbackAddresses(t *testing.T) {
	cases := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"127.1.2.3:0", true},
		{"[::1]:9090", true},
		{"localhost:8080", true},
		{"LOCALHOST:8080", true},
		{"0.0.0.0:8080", false},
		{"[::]:8080", false},
		{":8080", false},
		{"10.0.0.1:9090", false},
		{"localhost.example.com:8080", false},
		{"127.0.0.1", false},
	}
	for _, c := range cases {
		name := c.addr + " is refused"
		if c.want {
			name = c.addr + " is a loopback address"
		}
		t.Run(name, func(t *testing.T) {
			if got := frontdoord.IsLoopbackAddr(c.addr); got != c.want {
				t.Errorf("isLoopbackAddr(%q) = %v, want %v", c.addr, got, c.want)
			}
		})
	}
}

func TestServeReportsTheMetricsPortItBound(t *testing.T) {
	withFoundationEnv(t, nil)
	addrFile := filepath.Join(t.TempDir(), "addr")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	stderr := &foundationStderr{}
	go func() {
		done <- serveMain(ctx, []string{"--addr", "127.0.0.1:0", "--decider-addr", "127.0.0.1:0",
			"--metrics-addr", "127.0.0.1:0", "--addr-file", addrFile, "--log-format", "text"}, stderr)
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	}()
	var entries map[string]string
	for deadline := time.Now().Add(10 * time.Second); entries == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if data, err := os.ReadFile(addrFile); err == nil {
			entries = map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				k, v, _ := strings.Cut(line, "=")
				entries[k] = v
			}
		}
	}
	metricsAddr := entries["metrics"]
	t.Run("the addr file names the bound metrics address", func(t *testing.T) {
		if !strings.HasPrefix(metricsAddr, "127.0.0.1:") || strings.HasSuffix(metricsAddr, ":0") {
			t.Fatalf("addr file %v: want metrics=127.0.0.1:<port>", entries)
		}
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET /metrics at the written address: %s", resp.Status)
		}
	})
	t.Run("the log names the bound metrics address", func(t *testing.T) {
		if !strings.Contains(stderr.String(), "metrics="+metricsAddr) {
			t.Errorf("no log line names metrics=%s:\n%s", metricsAddr, stderr.String())
		}
	})
}

// bigPodReview is a review of a pod asking for injection whose
// dynamic-config.rs/key carries n bytes (the decider repeats it in its
// answer: the resolved value and the agent's --key argument).
func bigPodReview(t *testing.T, n int, extra map[string]string) []byte {
	t.Helper()
	annotations := map[string]string{"dynamic-config.rs/inject": "true", "dynamic-config.rs/key": strings.Repeat("k", n)}
	for k, v := range extra {
		annotations[k] = v
	}
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "big", "namespace": "default", "annotations": annotations},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "app"}}}}
	body, err := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{"uid": "big", "kind": map[string]any{"group": "", "version": "v1", "kind": "Pod"},
			"namespace": "default", "operation": "CREATE", "object": pod}})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// Issue 17, defect 1: through the real wiring (decider and front door over
// gRPC, both ends holding the budget of --max-request-bytes), a pod whose
// answer is above grpc-go's 4 MiB default is decided, and so is a pod just
// under the body limit — never a decider outage, not even under
// --on-decider-error=allow. (An answer above the budget, refused as
// malformed on either end, is tested at the boundary by
// TestAnAnswerAboveTheMessageBudgetIsAMalformedRefusal and
// TestAMessageAboveTheBudgetIsAMalformedRefusalNotADeciderError.)
func TestServeDecidesEveryPodWithinTheBodyLimit(t *testing.T) {
	decided := func(t *testing.T, code int, answer *review.Response) {
		t.Helper()
		if code != http.StatusOK || answer == nil || !answer.Allowed || answer.Patch == "" || answer.AuditAnnotations["decider-unavailable"] != "" {
			t.Fatalf("HTTP %d, answer %+v", code, answer)
		}
	}
	t.Run("a pod whose answer is above grpc-go's 4 MiB default is injected at the default budget", func(t *testing.T) {
		addrs := foundationServe(t, "--on-decider-error", "allow")
		code, answer := postTo(t, addrs["frontdoor"], bigPodReview(t, 4500000, nil))
		decided(t, code, answer)
	})
	t.Run("a pod just under the body limit is injected", func(t *testing.T) {
		const limit = 64 << 10 // --max-request-bytes: a 128 KiB budget
		addrs := foundationServe(t, "--on-decider-error", "allow", "--max-request-bytes", strconv.Itoa(limit))
		body := bigPodReview(t, limit-900, nil)
		if len(body) > limit {
			t.Fatalf("the review is %d bytes, above the body limit", len(body))
		}
		code, answer := postTo(t, addrs["frontdoor"], body)
		decided(t, code, answer)
	})
}

// postTo posts an AdmissionReview body to frontdoor's /mutate and returns
// the HTTP status and, on 200, the answer.
func postTo(t *testing.T, frontdoor string, body []byte) (int, *review.Response) {
	t.Helper()
	resp, err := http.Post(frontdoor+"/mutate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	answer, err := review.DecodeAnswer(raw)
	if err != nil {
		t.Fatalf("%v: %.300s", err, raw)
	}
	return resp.StatusCode, answer
}

// `make run ARGS="--rollout rollout.yaml"` (issue 41): serve's decider takes
// the rollout beside the embedded installation; the candidate is the
// embedded document with another agent image.
func TestServeDecidesUnderARolloutDocument(t *testing.T) {
	var candidate strings.Builder
	candidate.WriteString("candidate:\n")
	for _, line := range strings.Split(strings.TrimSpace(string(defaultInstallation)), "\n") {
		candidate.WriteString("  " + line + "\n")
	}
	candidate.WriteString("  environment:\n    DYNAMIC_CONFIG_AGENT_IMAGE: ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.4.0\nstage: canary\ncanary: {percent: 100}\n")
	doc := filepath.Join(t.TempDir(), "rollout.yaml")
	if err := os.WriteFile(doc, []byte(candidate.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	addrs := foundationServe(t, "--rollout", doc)
	out := foundationPostReview(t, http.DefaultClient, addrs["frontdoor"])
	patch, err := base64.StdEncoding.DecodeString(out.Response.Patch)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(patch), "dynamic-config-agent:v0.4.0") || out.Response.AuditAnnotations["rollout"] != "canary" {
		t.Errorf("a canary of every workload: audit %v, patch %s", out.Response.AuditAnnotations, patch)
	}
}
