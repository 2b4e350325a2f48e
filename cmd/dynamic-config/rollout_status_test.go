package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	deciderd "github.com/dynamic-config-admission/dynamic-config/decider/daemon"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// rolloutReplica starts a decider over the empty installation and the
// rollout document text, and has it decide n pods of Deployment web.
func rolloutReplica(t *testing.T, text string, n int) *deciderd.Decider {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rollout.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := deciderd.Start(t.Context(), deciderd.Config{
		Installation: deciderd.Installation{Load: installationloader.Options{DocumentPath: foundationEmptyFile(t), DocumentExplicit: true},
			ReloadInterval: time.Hour, Rollout: path},
		Addr: "127.0.0.1:0", Cluster: "east",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Shutdown(time.Second) })
	c, err := client.New(client.Config{Target: d.Addr().String(), Plaintext: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range n {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		_, err := c.Decide(ctx, &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: &deciderv1.PodFacts{
			Namespace: "shop", GenerateName: "web-5d8f9c7b6-", Operation: deciderv1.Operation_OPERATION_CREATE,
			ResourceKind: deciderv1.ResourceKind_RESOURCE_KIND_POD, Labels: map[string]string{"pod-template-hash": "5d8f9c7b6"},
			Controller:  &deciderv1.ControllerRef{Kind: "ReplicaSet", Name: "web-5d8f9c7b6"},
			Annotations: map[string]string{"dynamic-config.rs/inject": "true", "dynamic-config.rs/source": "consul", "dynamic-config.rs/endpoint": "http://consul:8500", "dynamic-config.rs/key": "app/config.json", "dynamic-config.rs/path": "/config/app.json"},
			Containers:  []*deciderv1.Container{{Name: "app"}}}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func rolloutStatus(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	withFoundationEnv(t, nil)
	var out, errOut bytes.Buffer
	code := run(append([]string{"rollout", "status"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRolloutStatusExitsZeroOnlyWhenTheCandidateIsReady(t *testing.T) {
	imageChange := "candidate:\n  environment:\n    DYNAMIC_CONFIG_AGENT_IMAGE: ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.4.0\nstage: canary\ncanary: {percent: 100}\n"
	changing := rolloutReplica(t, imageChange, 3)
	denying := rolloutReplica(t, "candidate:\n  sourceDeny:\n    '*': [consul]\nstage: canary\ncanary: {percent: 100}\n", 1)
	target := func(d *deciderd.Decider) []string {
		return []string{"--decider-target", "static:///" + d.Addr().String(), "--decider-plaintext"}
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
	}{
		{"three changed decisions meet a bar of two at once: ready", append(target(changing), "--min-decisions", "2", "--soak", "0s"), exitOK,
			[]string{"stage: canary", "changed 3", "east/shop/Deployment/web  changed  3", "containers[dynamic-config-agent].image", "verdict: ready"}, ""},
		{"under the default bar: not-ready, with why", target(changing), exitRefused,
			[]string{"verdict: not-ready", "3 decisions compared; --min-decisions is 100", "--soak is 1h0m0s"}, ""},
		{"a candidate that newly refused the first canary pod: halted", append(target(denying), "--min-decisions", "0", "--soak", "0s"), exitRefused,
			[]string{"verdict: halted", "halted the rollout at", "the candidate newly refused east/shop/Deployment/web (refusals[gate.source-deny])", "newly-refused"}, ""},
		{"a missing target is a usage error", nil, exitUsage, nil, "rollout status: --decider-target is required"},
		{"an unknown output is a usage error", append(target(changing), "-o", "yaml"), exitUsage, nil, `rollout status: -o is "yaml": text or json`},
		{"a negative soak is a usage error", append(target(changing), "--soak", "-1s"), exitUsage, nil, "--soak is -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := rolloutStatus(t, tt.args...)
			ok := code == tt.code && strings.Contains(errOut, tt.stderr)
			for _, want := range tt.stdout {
				ok = ok && strings.Contains(out, want)
			}
			if !ok {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
		})
	}
	t.Run("-o json is one value with the verdict and the reasons", func(t *testing.T) {
		code, out, errOut := rolloutStatus(t, append(target(denying), "-o", "json")...)
		var v struct {
			Verdict  string   `json:"verdict"`
			Reasons  []string `json:"reasons"`
			Compared uint64   `json:"compared"`
		}
		dec := json.NewDecoder(strings.NewReader(out))
		if err := dec.Decode(&v); err != nil || dec.More() || code != exitRefused || v.Verdict != "halted" || v.Compared != 1 || len(v.Reasons) == 0 {
			t.Errorf("exit %d, %v %+v\n%s\n%s", code, err, v, out, errOut)
		}
	})
}
