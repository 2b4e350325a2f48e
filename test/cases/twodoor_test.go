package cases

// The two-door test (spec 07 §7.2): every case goes through
//   (a) the offline door: doors/inject over doors/engine, written as
//       `dynamic-config inject -o review` writes it (cmd/dynamic-config runs
//       the command itself over the corpus), and
//   (b) the cluster door: the HTTPS front door (frontdoor/daemon, generated
//       certificate) talking gRPC over loopback TCP to a decider
//       (decider/daemon) — test/loopback,
// and both answers must equal the golden review (the uid aside: the cluster
// door is sent another uid, which must be echoed). Every injected pod is
// admitted again and must be skipped with zero ops. UPDATE_GOLDEN=1 rewrites
// review.json from the offline door's answer.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
	"github.com/dynamic-config-admission/dynamic-config/doors/inject"
	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpatch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/test/loopback"
)

// offlineReview is the offline door's answer for the case's pod.yaml, as
// `inject -o review` prints it, and whether it was refused.
func offlineReview(t *testing.T, c Case, inst *installation.Installation, cls *classes.Set, namespace string) ([]byte, bool) {
	t.Helper()
	docs, err := manifest.Read("inject", []string{c.Path("pod.yaml")}, false, nil, inject.Admit)
	if err != nil {
		t.Fatal(err)
	}
	results, err := inject.Documents(inst, cls, docs, namespace, "")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := inject.WriteOutput(&out, results, "review"); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), results[0].Refused()
}

func TestTwoDoors(t *testing.T) {
	all := All(t)
	cluster := loopback.Start(t)
	for _, c := range all {
		t.Run(c.Name, func(t *testing.T) {
			namespace, pod := c.Pod(t)
			inst, cls := c.Installation(t), c.Classes(t)

			// (a) the offline door
			body, refused := offlineReview(t, c, inst, cls, namespace)
			offline, err := review.DecodeAnswer(body)
			if err != nil {
				t.Fatalf("inject -o review wrote %q: %v", body, err)
			}
			if refused == offline.Allowed {
				t.Fatalf("refused=%v for allowed=%v", refused, offline.Allowed)
			}
			if offline.UID != engine.UID {
				t.Fatalf("inject answered uid %q", offline.UID)
			}
			offlineBody := StableDecisionID(t, body)
			if Updating() {
				if err := os.WriteFile(c.Path("review.json"), offlineBody, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := c.Golden(t)
			if !bytes.Equal(offlineBody, want) {
				t.Fatalf("inject -o review differs from %s\n got: %s\nwant: %s", c.Path("review.json"), body, want)
			}

			// (b) the cluster door, over HTTPS and loopback gRPC
			cluster.Use(inst, cls)
			got, err := engine.AdmitThrough(cluster.Door, inst.EnvPolicy, "two-door", pod, namespace, PodName(t, pod))
			if err != nil {
				t.Fatal(err)
			}
			if got.Answer.UID != "two-door" {
				t.Fatalf("the front door echoed uid %q", got.Answer.UID)
			}
			got.Answer.UID = engine.UID
			if clusterBody := StableDecisionID(t, append(review.Encode(got.Answer), '\n')); !bytes.Equal(clusterBody, want) {
				t.Fatalf("the cluster door differs from the offline door\ncluster: %s\noffline: %s", clusterBody, want)
			}

			// The canonical examples, byte for byte.
			if canon, ok := Canonical[c.Name]; ok {
				raw, err := base64.StdEncoding.DecodeString(offline.Patch)
				if err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(raw)
				if len(raw) != canon.Bytes || hex.EncodeToString(sum[:]) != canon.SHA256 || len(offline.Warnings) != 0 {
					t.Fatalf("canonical patch: %d bytes, sha256 %x, %d warnings; want %d bytes, %s, none\n%s",
						len(raw), sum, len(offline.Warnings), canon.Bytes, canon.SHA256, raw)
				}
			}

			// Idempotency: the patched pod, admitted again, is skipped with zero ops.
			if offline.Patch != "" {
				_, mutated, err := engine.ApplyAnswerPatch(pod, offline.Patch)
				if err != nil {
					t.Fatal(err)
				}
				again := readmit(t, inst, cls, mutated, namespace)
				if again.Answer.Patch != "" || !again.Answer.Allowed ||
					again.Mutate.GetSkipReason() != deciderv1.SkipReason_SKIP_REASON_ALREADY_INJECTED {
					t.Fatalf("the patched pod was not skipped as already injected: %s (decision %v)", review.Encode(again.Answer), again.Mutate)
				}
			}
		})
	}
}

func readmit(t *testing.T, inst *installation.Installation, cls *classes.Set, pod []byte, namespace string) *engine.Admitted {
	t.Helper()
	e, err := engine.New(inst, cls)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	a, err := e.AdmitPod(pod, namespace, PodName(t, pod))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestReinvocation: our patch is applied, another mutating webhook then adds
// a container (the API server reinvokes us under reinvocationPolicy
// IfNeeded), and we are called again — nothing may be added twice.
func TestReinvocation(t *testing.T) {
	for _, c := range All(t) {
		t.Run(c.Name, func(t *testing.T) {
			namespace, pod := c.Pod(t)
			inst, cls := c.Installation(t), c.Classes(t)
			first := readmit(t, inst, cls, pod, namespace)
			if first.Answer.Patch == "" {
				t.Skip("the case injects nothing")
			}
			// Another webhook adds a sidecar and a volume after us.
			other := `[{"op":"add","path":"/spec/containers/-","value":{"name":"mesh-proxy","image":"proxy:1"}},` +
				`{"op":"add","path":"/spec/volumes/-","value":{"name":"mesh-certs","emptyDir":{}}}]`
			reinvoked, err := jsonpatch.Apply(first.Mutated, []byte(other))
			if err != nil {
				t.Fatal(err)
			}
			second := readmit(t, inst, cls, reinvoked, namespace)
			if !second.Answer.Allowed || second.Answer.Patch != "" || string(second.Patch) != "[]" {
				t.Fatalf("the reinvocation patched again: %s", review.Encode(second.Answer))
			}
			var final struct {
				Spec struct {
					Containers, InitContainers, Volumes []struct {
						Name string `json:"name"`
					}
				} `json:"spec"`
			}
			if err := json.Unmarshal(second.Mutated, &final); err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, list := range [][]struct {
				Name string `json:"name"`
			}{final.Spec.Containers, final.Spec.InitContainers, final.Spec.Volumes} {
				for _, x := range list {
					seen[x.Name]++
				}
			}
			for name, n := range seen {
				if n > 1 {
					t.Fatalf("%s appears %d times", name, n)
				}
			}
		})
	}
}
