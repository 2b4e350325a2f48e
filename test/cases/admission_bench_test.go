package cases

// BenchmarkAdmission measures one whole admission as the cluster pays for it
// on every pod write: an AdmissionReview POSTed over loopback HTTPS to the
// real front door (frontdoor/daemon, production metrics and an info-level
// JSON logger), which asks a real decider (decider/daemon) over loopback TCP
// gRPC and answers with the JSON Patch (test/loopback). Client, front door
// and decider share the process, so allocs/op counts all three.
//
// Every answer is compared byte for byte with the case's golden review.json
// (the uid sent is the golden one), and the first answer of each case is
// also checked for what it must mean (allowed, patch present, denied), so a
// broken door fails the benchmark instead of being timed.
//
//	go test ./test/cases/ -run '^$' -bench BenchmarkAdmission -benchmem

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	"github.com/dynamic-config-admission/dynamic-config/test/loopback"
)

// admissionBench is one pod admitted again and again.
type admissionBench struct {
	name string
	// golden is the corpus case whose pod, namespace and review.json are used.
	golden string
	// installation is what the decider holds while the case runs.
	installation func(tb testing.TB) *installation.Installation
	// means checks what the answer must mean, beyond matching the golden bytes.
	means func(r *review.Response) error
	// parallel adds a b.RunParallel run of the same case.
	parallel bool
}

func BenchmarkAdmission(b *testing.B) {
	door := loopback.Start(b)
	emptyInstallation := func(tb testing.TB) *installation.Installation {
		return loadBenchInstallation(tb, Named("canonical-1-consul-sidecar").Path("installation.yaml"))
	}
	embeddedInstallation := func(tb testing.TB) *installation.Installation {
		// what serve embeds
		return loadBenchInstallation(tb, filepath.Join(Dir(), "..", "..", "cmd", "dynamic-config", "default-installation.yaml"))
	}
	cases := []admissionBench{
		{
			name: "skip-without-rpc", golden: "skip-no-annotations", installation: emptyInstallation,
			means: func(r *review.Response) error {
				// No revision: the front door answered without asking the decider.
				if !r.Allowed || r.Patch != "" || r.Status != nil || r.AuditAnnotations["revision"] != "" {
					return fmt.Errorf("want allowed, no patch, no decider revision")
				}
				return nil
			},
		},
		{
			name: "inject-canonical-1", golden: "canonical-1-consul-sidecar", installation: emptyInstallation,
			means: wantInjected(installation.EmptyRevision), parallel: true,
		},
		{
			name: "inject-seed-000-default-installation", golden: "serve-default-minimal-pod", installation: embeddedInstallation,
			means: wantInjected(""),
		},
		{
			name: "refuse-malformed-watch-seconds", golden: "refuse-malformed-watch-seconds", installation: emptyInstallation,
			means: func(r *review.Response) error {
				want := `dynamic-config.rs/watch-seconds is "15s": whole seconds`
				if r.Allowed || r.Patch != "" || r.Status == nil || r.Status.Code != 400 ||
					r.Status.Reason != "DynamicConfigMalformed" || r.Status.Message != want {
					return fmt.Errorf("want denied 400 DynamicConfigMalformed %q", want)
				}
				return nil
			},
		},
	}
	for _, c := range cases {
		inst := c.installation(b)
		body, want := benchReview(b, c.golden)
		prepare := func(b *testing.B) {
			b.Helper()
			door.Use(inst, nil)
			got, err := door.Post(handler.PathMutate, body, nil)
			if err != nil {
				b.Fatal(err)
			}
			answer, err := review.DecodeAnswer(got)
			if err != nil {
				b.Fatalf("the front door answered %s: %v", got, err)
			}
			if err := c.means(answer); err != nil {
				b.Fatalf("%s: %v; got %s", c.name, err, got)
			}
			if !sameAnswer(got, want) {
				b.Fatalf("%s: the answer differs from the golden review\n got: %s\nwant: %s", c.name, got, want)
			}
		}
		b.Run(c.name, func(b *testing.B) {
			prepare(b)
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				got, err := door.Post(handler.PathMutate, body, &buf)
				if err != nil {
					b.Fatal(err)
				}
				if !sameAnswer(got, want) {
					b.Fatalf("the answer drifted from the golden review: %s", got)
				}
			}
		})
		if !c.parallel {
			continue
		}
		b.Run(c.name+"-parallel", func(b *testing.B) {
			prepare(b)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				var buf bytes.Buffer
				for pb.Next() {
					got, err := door.Post(handler.PathMutate, body, &buf)
					if err != nil {
						b.Error(err)
						return
					}
					if !sameAnswer(got, want) {
						b.Errorf("the answer drifted from the golden review: %s", got)
						return
					}
				}
			})
			if elapsed := time.Since(start); elapsed > 0 {
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
			}
		})
	}
}

// sameAnswer compares an answer with its golden review, where the decision
// id (a fresh UUID per decision, audit annotation decision-id) stands as
// <decision-id>; without a regular expression, so that the comparison costs
// the benchmark next to nothing.
func sameAnswer(got, want []byte) bool {
	const key, placeholder, uuidLen = `"decision-id":"`, "<decision-id>", 36
	i := bytes.Index(want, []byte(key+placeholder+`"`))
	if i < 0 {
		return bytes.Equal(got, want)
	}
	start := i + len(key)
	return len(got) == len(want)-len(placeholder)+uuidLen &&
		bytes.Equal(got[:start], want[:start]) &&
		bytes.Equal(got[start+uuidLen:], want[start+len(placeholder):]) &&
		DecisionIDPattern.Match(got[start:start+uuidLen])
}

// wantInjected checks an injection answer; revision "" accepts any sha256.
func wantInjected(revision string) func(r *review.Response) error {
	return func(r *review.Response) error {
		got := r.AuditAnnotations["revision"]
		if !r.Allowed || r.Patch == "" || r.PatchType != "JSONPatch" || r.Status != nil ||
			!strings.HasPrefix(got, "sha256:") || (revision != "" && got != revision) {
			return fmt.Errorf("want allowed with a JSONPatch and the decider's revision")
		}
		return nil
	}
}

// benchReview builds a golden case's AdmissionReview (uid "offline", as in
// the golden answer) and returns it with the expected answer.
func benchReview(tb testing.TB, golden string) (body, want []byte) {
	tb.Helper()
	dir := Named(golden).Dir
	ns, err := os.ReadFile(filepath.Join(dir, "namespace"))
	if err != nil {
		tb.Fatal(err)
	}
	y, err := os.ReadFile(filepath.Join(dir, "pod.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	pod, err := yaml.YAMLToJSON(y)
	if err != nil {
		tb.Fatalf("pod of case %s: %v", golden, err)
	}
	var meta struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(pod, &meta); err != nil {
		tb.Fatal(err)
	}
	body, err = engine.PodReview(engine.UID, pod, strings.TrimSpace(string(ns)), meta.Metadata.Name)
	if err != nil {
		tb.Fatal(err)
	}
	want, err = os.ReadFile(filepath.Join(dir, "review.json"))
	if err != nil {
		tb.Fatal(err)
	}
	return body, bytes.TrimSpace(want)
}

// loadBenchInstallation loads an installation document as the decider
// would, without the process environment.
func loadBenchInstallation(tb testing.TB, path string) *installation.Installation {
	tb.Helper()
	inst, err := installationloader.Load(installationloader.Options{DocumentPath: path, DocumentExplicit: true})
	if err != nil {
		tb.Fatalf("installation %s: %v", path, err)
	}
	return inst
}
