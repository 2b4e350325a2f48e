package loopback_test

// BenchmarkPodSize measures how an admission's cost grows with the pod
// (issue 11: linear in pod size), through the same real HTTPS front door and
// gRPC decider as BenchmarkAdmission:
//
//   - containers: 1, 10, 100 app containers, /mutate, injected;
//   - env: 10, 100, 1000, 5000 environment variables, /validate with an
//     environment-variable policy whose rules look at every variable;
//   - annotations: 10, 100, 1000 annotations besides the dynamic-config.rs/
//     ones, /mutate, injected.
//
// Each size reports ns/item, the cost of one more item: (ns/op − ns/op of
// the shape's smallest size) / (items − smallest items); the smallest size
// reports ns/op divided by its items. The parent logs the largest size's
// ns/item against the second size's (linear means ≈ 1×; the target is
// ≤ 1.5×).
//
//	go test ./test/loopback/ -run '^$' -bench BenchmarkPodSize -benchmem   # make bench-size

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	"github.com/dynamic-config-admission/dynamic-config/test/loopback"
)

// sizePolicy is an environment-variable policy that reads every variable:
// an enforced denylist nothing matches, a warned allowlist everything
// misses, an audited denylist by value.
const sizePolicy = `envPolicy:
  targets: [pods, workloads]
  rules:
    - reject: anyIn
      environmentVariables:
        - name: SECRET_TOKEN
        - name: AWS_SECRET_ACCESS_KEY
    - reject: anyNotIn
      environmentVariables:
        - name: LOG_LEVEL
      mode: warn
    - reject: anyIn
      environmentVariables:
        - name: DEBUG
          value: "true"
      mode: audit
`

// sizeAnnotations are the dynamic-config.rs/ annotations of an injected
// pod under the empty installation (canonical example 1).
var sizeAnnotations = map[string]string{
	"dynamic-config.rs/inject":   "true",
	"dynamic-config.rs/source":   "consul",
	"dynamic-config.rs/endpoint": "http://consul:8500",
	"dynamic-config.rs/key":      "myapp/config.json",
	"dynamic-config.rs/path":     "/config/rendered.toml",
}

type sizeShape struct {
	name  string
	path  string
	sizes []int
	pod   func(n int) map[string]any
	// patched says whether the answer carries a patch.
	patched bool
}

func sizeContainer(i, env int) map[string]any {
	c := map[string]any{"name": fmt.Sprintf("app-%d", i), "image": "registry.example/app:1"}
	if env > 0 {
		vars := make([]any, env)
		for j := range vars {
			vars[j] = map[string]any{"name": fmt.Sprintf("APP_SETTING_%d", j), "value": fmt.Sprintf("value-%d", j)}
		}
		c["env"] = vars
	}
	return c
}

func sizePod(annotations map[string]string, containers ...map[string]any) map[string]any {
	list := make([]any, len(containers))
	for i, c := range containers {
		list[i] = c
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "app", "namespace": "default", "annotations": annotations},
		"spec":     map[string]any{"containers": list},
	}
}

func BenchmarkPodSize(b *testing.B) {
	door := loopback.Start(b)
	dir := b.TempDir()
	policyFile := filepath.Join(dir, "installation.yaml")
	if err := os.WriteFile(policyFile, []byte(sizePolicy), 0o600); err != nil {
		b.Fatal(err)
	}
	inst, err := installationloader.Load(installationloader.Options{DocumentPath: policyFile, DocumentExplicit: true})
	if err != nil {
		b.Fatal(err)
	}
	door.Use(inst, nil)

	shapes := []sizeShape{
		{name: "containers", path: handler.PathMutate, sizes: []int{1, 10, 100}, patched: true,
			pod: func(n int) map[string]any {
				cs := make([]map[string]any, n)
				for i := range cs {
					cs[i] = sizeContainer(i, 0)
				}
				return sizePod(sizeAnnotations, cs...)
			}},
		{name: "env", path: handler.PathValidate, sizes: []int{10, 100, 1000, 5000},
			pod: func(n int) map[string]any {
				return sizePod(map[string]string{"team": "shop"}, sizeContainer(0, n))
			}},
		{name: "annotations", path: handler.PathMutate, sizes: []int{10, 100, 1000}, patched: true,
			pod: func(n int) map[string]any {
				a := make(map[string]string, n+len(sizeAnnotations))
				for k, v := range sizeAnnotations {
					a[k] = v
				}
				for i := range n {
					a[fmt.Sprintf("example.com/annotation-%d", i)] = fmt.Sprintf("value-%d", i)
				}
				return sizePod(a, sizeContainer(0, 0))
			}},
	}
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			perItem := map[int]float64{}
			var base struct {
				n    int
				nsOp float64
			}
			for _, n := range s.sizes {
				body := sizeReview(b, s.pod(n))
				b.Run(fmt.Sprintf("%s=%d", s.name, n), func(b *testing.B) {
					first, err := door.Post(s.path, body, nil)
					if err != nil {
						b.Fatal(err)
					}
					if err := sizeAnswerMeans(first, s.patched); err != nil {
						b.Fatalf("%v: %.300s", err, first)
					}
					var buf bytes.Buffer
					b.ReportAllocs()
					for b.Loop() {
						if _, err := door.Post(s.path, body, &buf); err != nil {
							b.Fatal(err)
						}
					}
					nsOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
					if base.n == 0 {
						base.n, base.nsOp = n, nsOp
						perItem[n] = nsOp / float64(n)
					} else {
						perItem[n] = (nsOp - base.nsOp) / float64(n-base.n)
					}
					b.ReportMetric(perItem[n], "ns/item")
				})
			}
			if len(s.sizes) > 2 {
				second, largest := s.sizes[1], s.sizes[len(s.sizes)-1]
				if perItem[second] > 0 && perItem[largest] > 0 {
					b.Logf("%s: one more item costs %.0f ns at %d and %.0f ns at %d: %.2f× (target ≤ 1.5×)",
						s.name, perItem[second], second, perItem[largest], largest, perItem[largest]/perItem[second])
				}
			}
		})
	}
}

func sizeReview(tb testing.TB, pod map[string]any) []byte {
	tb.Helper()
	raw, err := json.Marshal(pod)
	if err != nil {
		tb.Fatal(err)
	}
	body, err := engine.PodReview(engine.UID, raw, "default", "app")
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

func sizeAnswerMeans(body []byte, patched bool) error {
	r, err := review.DecodeAnswer(body)
	if err != nil {
		return err
	}
	switch {
	case !r.Allowed:
		return fmt.Errorf("want allowed, got denied")
	case patched && r.Patch == "":
		return fmt.Errorf("want a patch")
	case !patched && r.Patch != "":
		return fmt.Errorf("want no patch")
	case !strings.HasPrefix(r.AuditAnnotations["revision"], "sha256:"):
		return fmt.Errorf("want the decider's revision")
	}
	return nil
}
