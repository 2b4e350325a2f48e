package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestDiffExitCodes runs `dynamic-config diff` on the examples/ manifests
// (issue 41's Done-when): an agent-image change lists each workload once
// and exits 1, the same document exits 0, a usage error exits 2.
func TestDiffExitCodes(t *testing.T) {
	withEnviron(t)
	const ex = "../../examples/"
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // each once
		stderr string
	}{
		{"an agent-image change lists each injected workload once and exits 1",
			[]string{"--installation", ex + "installation.yaml", "--rollout", ex + "rollout.yaml", "-f", ex + "manifests"}, 1,
			[]string{"/shop/Deployment/web ", "/shop/StatefulSet/cache ", "/team-a-dev/CronJob/report ", "4 workload(s) compared (1 same, 3 changed)"}, ""},
		{"the same chart values' rollout, the manifests on stdin",
			[]string{"--values", ex + "values.yaml", "-f", "-"}, 1, []string{"/shop/Deployment/web ", "1 workload(s) compared (1 changed)"}, ""},
		{"the same document exits 0",
			[]string{"--installation", ex + "installation.yaml", "--candidate", ex + "installation.yaml", "-f", ex + "manifests"}, 0,
			[]string{"4 workload(s) compared (4 same)"}, ""},
		{"neither -f nor --from-cluster is a usage error", []string{"--candidate", ex + "installation.yaml"}, 2, nil, "diff: give the manifests with -f"},
		{"a candidate that does not load is exit 2", []string{"--candidate", "/nonexistent.yaml", "-f", ex + "manifests"}, 2, nil, "/nonexistent.yaml"},
		{"an unknown output is a usage error", []string{"--candidate", ex + "installation.yaml", "-f", ex + "manifests", "-o", "yaml"}, 2, nil, `-o is "yaml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			web := ""
			if slices.Contains(tt.args, "-") {
				data, err := os.ReadFile(ex + "manifests/web.yaml")
				if err != nil {
					t.Fatal(err)
				}
				web = string(data)
			}
			var out, errOut bytes.Buffer
			code := run(append([]string{"diff"}, tt.args...), strings.NewReader(web), &out, &errOut)
			if code != tt.code || !strings.Contains(errOut.String(), tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, errOut.String(), tt.code, tt.stderr)
			}
			for _, want := range tt.stdout {
				if n := strings.Count(out.String(), want); n != 1 {
					t.Errorf("%q %d times in:\n%s", want, n, out.String())
				}
			}
		})
	}
	t.Run("-o json is one JSON value", func(t *testing.T) {
		var out, errOut bytes.Buffer
		code := run([]string{"diff", "--installation", ex + "installation.yaml", "--rollout", ex + "rollout.yaml", "-f", ex + "manifests", "-o", "json"},
			strings.NewReader(""), &out, &errOut)
		var v map[string]any
		dec := json.NewDecoder(&out)
		if err := dec.Decode(&v); code != 1 || err != nil || dec.More() || len(v["differing"].([]any)) != 3 {
			t.Errorf("exit %d, %v, %v; stderr %s", code, err, v, errOut.String())
		}
	})
}
