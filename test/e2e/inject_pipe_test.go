package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pipeStream is a helm-style stream: a Deployment, a Service and a Job whose
// pod must finish, each asking for a consul agent.
const pipeStream = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
      annotations:
        dynamic-config.rs/inject: "true"
        dynamic-config.rs/source: "consul"
        dynamic-config.rs/endpoint: "http://consul:8500"
        dynamic-config.rs/key: "web/config.json"
        dynamic-config.rs/path: "/config/web.json"
    spec:
      containers:
      - name: web
        image: registry.example/web:1
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - port: 80
---
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    metadata:
      annotations:
        dynamic-config.rs/inject: "true"
        dynamic-config.rs/source: "consul"
        dynamic-config.rs/endpoint: "http://consul:8500"
        dynamic-config.rs/key: "web/config.json"
        dynamic-config.rs/path: "/config/web.json"
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: registry.example/migrate:1
`

// TestInjectOutputPipesIntoKubectlApply: `inject -o json` of a multi-object
// stream, and the YAML output, go straight into `kubectl apply
// --dry-run=server --validate=strict -f -` and every object is accepted
// (issue 20, item 3): the JSON is one v1 List, not documents joined by ---.
func TestInjectOutputPipesIntoKubectlApply(t *testing.T) {
	ns := newNamespace(t)
	dir := t.TempDir()
	installation := filepath.Join(dir, "installation.yaml")
	if err := os.WriteFile(installation, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "yaml"} {
		t.Run("-o "+format+" is accepted whole by a strict server-side dry-run", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, theCluster.product, "inject", "-f", "-", "--installation", installation,
				"--no-env", "-n", ns, "-o", format)
			cmd.Stdin = strings.NewReader(pipeStream)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("inject: %v\n%s", err, stderr.String())
			}
			r := mustKubectl(t, stdout.Bytes(), "apply", "-n", ns, "--dry-run=server", "--validate=strict", "-f", "-")
			for _, want := range []string{"deployment.apps/web created (server dry run)", "service/web created (server dry run)",
				"job.batch/migrate created (server dry run)"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("kubectl apply did not print %q:\n%s\ninput:\n%s", want, r.stdout, stdout.String())
				}
			}
		})
	}
}
