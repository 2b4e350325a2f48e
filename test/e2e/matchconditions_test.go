package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	admregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// corpusKeys are the annotation keys the generated maps draw from: the
// prefix exactly, near misses on every side of it, and unrelated keys.
var corpusKeys = []string{
	"dynamic-config.rs/inject",
	"dynamic-config.rs/source",
	"dynamic-config.rs/status",
	"dynamic-config.rs/x",
	"dynamic-config.rs/Inject",
	"dynamic-config.rs/a.b_c-d",
	"dynamic-config.rs",
	"dynamic-config.rs.example.com/inject",
	"dynamic-config.rsx/inject",
	"a.dynamic-config.rs/inject",
	"xdynamic-config.rs/inject",
	"dynamic-config-rs/inject",
	"dynamic_config.rs/inject",
	"example.com/dynamic-config.rs",
	"inject",
	"app.kubernetes.io/name",
	"kubernetes.io/description",
	"sidecar.istio.io/inject",
	"config.dynamic-config.io/inject",
	"team",
}

// annotationCorpus is the generated corpus: the edge cases (none, empty),
// every key alone, then seeded random maps of one to five keys.
func annotationCorpus() []map[string]string {
	corpus := []map[string]string{nil, {}}
	for _, k := range corpusKeys {
		corpus = append(corpus, map[string]string{k: "true"})
	}
	rng := rand.New(rand.NewPCG(12, 2026))
	for range 120 {
		m := map[string]string{}
		for range 1 + rng.IntN(5) {
			m[corpusKeys[rng.IntN(len(corpusKeys))]] = fmt.Sprintf("v%d", rng.IntN(100))
		}
		corpus = append(corpus, m)
	}
	return corpus
}

// TestTheMatchConditionAgreesWithTheFrontDoor (issue 12): for every
// annotation map of the corpus, the chart's CEL matchCondition — evaluated
// by the real kube-apiserver — selects the pod exactly when the front door's
// own "does it ask?" rule (spec 04 §6, A3) says it asks. The API server side
// is observed with a recording webhook registered with the chart's
// expression; the front door side by posting the same pod to a real front
// door whose decider is down: a pod that asks is refused as
// decider-unavailable, one that does not is allowed without a call.
func TestTheMatchConditionAgreesWithTheFrontDoor(t *testing.T) {
	expr := chartMatchExpression(t)
	t.Logf("the chart's expression: %s", expr)
	if base, err := os.ReadFile(filepath.Join(chartRenderDir(t), "kustomize-base.yaml")); err != nil {
		t.Fatal(err)
	} else if squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }; !bytes.Contains(base, []byte("asks-for-dynamic-config")) ||
		!strings.Contains(squeeze(string(base)), squeeze(expr)) { // kustomize folds the long line
		t.Errorf("the kustomize base does not carry the chart's matchCondition %q", expr)
	}

	ns := newNamespace(t)
	recorder := startSidecarWebhook(t)
	recorder.onlyAllows = true
	registerRecorder(t, recorder, ns, expr)
	waitForEffect(t, "the recording webhook takes effect", pod(ns, "probe", map[string]string{"dynamic-config.rs/inject": "true"}),
		func(kubectlResult) bool { return recorder.calls.Load() > 0 })

	_, door := startFrontdoor(t, "frontdoor-no-decider", "127.0.0.1:"+fmt.Sprint(freePort(t)), "--on-decider-error", "deny")
	doorClient := clientTrusting(t, door.caPEM)

	corpus := annotationCorpus()
	asking, disagreements := 0, 0
	for i, annotations := range corpus {
		p := pod(ns, fmt.Sprintf("corpus-%03d", i), annotations)
		before := recorder.calls.Load()
		r := createPod(p, true)
		selected := recorder.calls.Load() > before
		asks, err := frontDoorSaysAsks(doorClient, door.url, p)
		if err != nil {
			t.Fatalf("map %d %v: the front door: %v", i, keysOf(annotations), err)
		}
		if asks {
			asking++
		}
		if selected != asks {
			disagreements++
			t.Errorf("map %d keys %q: the API server's CEL selected it: %v; the front door says it asks: %v (create: HTTP %d %s)",
				i, keysOf(annotations), selected, asks, r.code, r.message())
		}
	}
	fmt.Printf("e2e matchConditions: %d annotation maps, %d ask, %d do not; CEL and the front door disagree on %d\n",
		len(corpus), asking, len(corpus)-asking, disagreements)
	if asking == 0 || asking == len(corpus) {
		t.Errorf("the corpus has %d asking maps of %d; want both kinds", asking, len(corpus))
	}

	t.Run("a DELETE (object null) is neither sent to the webhook nor refused by the expression", func(t *testing.T) {
		wantAdmitted(t, applyJSON(t, pod(ns, "to-delete", map[string]string{"team": "a"})))
		before := recorder.calls.Load()
		mustKubectl(t, nil, "delete", "pod", "-n", ns, "to-delete", "--wait=false")
		if recorder.calls.Load() != before {
			t.Errorf("the DELETE reached the webhook")
		}
	})
}

// registerRecorder routes pod CREATE and DELETE in ns to the recorder,
// filtered by expr, with failurePolicy Fail (an expression error refuses).
func registerRecorder(t *testing.T, w *sidecarWebhook, ns, expr string) {
	t.Helper()
	url := w.door.url + "/record"
	name := ns + "-record"
	cfg := &admregv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admregv1.MutatingWebhook{{
			Name:                    "record.e2e.example",
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr(admregv1.SideEffectClassNone),
			FailurePolicy:           ptr(admregv1.Fail),
			TimeoutSeconds:          ptr(int32(5)),
			ClientConfig:            admregv1.WebhookClientConfig{URL: &url, CABundle: w.door.caPEM},
			Rules: []admregv1.RuleWithOperations{{
				Operations: []admregv1.OperationType{admregv1.Create, admregv1.Delete},
				Rule: admregv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
					Scope: ptr(admregv1.NamespacedScope)},
			}},
			NamespaceSelector: onlyNamespace(ns),
			MatchConditions:   []admregv1.MatchCondition{{Name: "asks-for-dynamic-config", Expression: expr}},
		}},
	}
	applyConfiguration(t, "mutatingwebhookconfiguration", name, cfg)
}

// frontDoorSaysAsks posts p as a CREATE review to the front door's /mutate;
// its decider is down, so "asks" is a decider-unavailable refusal and "does
// not ask" an allow.
func frontDoorSaysAsks(c *http.Client, url string, p *corev1.Pod) (bool, error) {
	obj, err := json.Marshal(p)
	if err != nil {
		return false, err
	}
	review := map[string]any{
		"apiVersion": "admission.k8s.io/v1",
		"kind":       "AdmissionReview",
		"request": map[string]any{
			"uid":       "00000000-0000-0000-0000-000000000001",
			"kind":      map[string]string{"group": "", "version": "v1", "kind": "Pod"},
			"resource":  map[string]string{"group": "", "version": "v1", "resource": "pods"},
			"namespace": p.Namespace,
			"name":      p.Name,
			"operation": "CREATE",
			"userInfo":  map[string]any{"username": "e2e"},
			"object":    json.RawMessage(obj),
		},
	}
	body, _ := json.Marshal(review)
	resp, err := c.Post(url+"/mutate", "application/json", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Response struct {
			Allowed bool
			Status  struct{ Message string }
		}
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return false, fmt.Errorf("HTTP %d %s: %w", resp.StatusCode, b, err)
	}
	switch {
	case out.Response.Allowed:
		return false, nil
	case strings.HasPrefix(out.Response.Status.Message, unavailablePrefix):
		return true, nil
	default:
		return false, fmt.Errorf("neither an allow nor a decider-unavailable refusal: %s", b)
	}
}

func keysOf(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
