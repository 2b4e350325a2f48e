package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
)

// answer is what a corpus pod's admission must mean.
type answer int

const (
	// patched: allowed with a JSON Patch (the agent is injected).
	patched answer = iota
	// allowedAsIs: allowed, no patch (no dynamic-config.rs/ annotation: no RPC).
	allowedAsIs
	// denied: refused.
	denied
)

// corpusPod is one pod of the load corpus, under the seed-000 installation
// that `serve` embeds (cmd/dynamic-config/default-installation.yaml).
type corpusPod struct {
	name string
	pod  string
	want answer
}

// corpus is the small mix every target is driven with, round robin: three
// seed-000 pods that get the agent, a plain pod, and a refused pod.
var corpus = []corpusPod{
	{"seed-000-minimal", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"app","namespace":"default",` +
		`"annotations":{"dynamic-config.rs/inject":"true"}},` +
		`"spec":{"containers":[{"name":"app","image":"registry.example/app:1"}]}}`, patched},
	{"seed-000-consul", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"shop","namespace":"shop",` +
		`"labels":{"app":"shop","tier":"web"},"annotations":{"dynamic-config.rs/inject":"true","dynamic-config.rs/source":"consul",` +
		`"dynamic-config.rs/key":"shop/config.json","dynamic-config.rs/path":"/config/shop.toml","dynamic-config.rs/watch-seconds":"30",` +
		`"prometheus.io/scrape":"true"}},"spec":{"containers":[{"name":"shop","image":"registry.example/shop:2",` +
		`"ports":[{"containerPort":8080,"name":"http"}],"env":[{"name":"LOG_LEVEL","value":"info"},{"name":"PORT","value":"8080"}],` +
		`"resources":{"requests":{"cpu":"100m","memory":"128Mi"}}},{"name":"proxy","image":"registry.example/proxy:1"}]}}`, patched},
	{"seed-000-vault", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"billing","namespace":"billing",` +
		`"annotations":{"dynamic-config.rs/inject":"true","dynamic-config.rs/source":"vault","dynamic-config.rs/key":"secret/data/billing"}},` +
		`"spec":{"containers":[{"name":"billing","image":"registry.example/billing:7"}]}}`, patched},
	{"plain", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"plain","namespace":"default","labels":{"app":"plain"}},` +
		`"spec":{"containers":[{"name":"app","image":"registry.example/app:1"}]}}`, allowedAsIs},
	{"refused-watch-seconds", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"app","namespace":"default",` +
		`"annotations":{"dynamic-config.rs/inject":"true","dynamic-config.rs/watch-seconds":"15s"}},` +
		`"spec":{"containers":[{"name":"app","image":"registry.example/app:1"}]}}`, denied},
}

// request is one corpus pod as an AdmissionReview body, with the bytes its
// answer must contain.
type request struct {
	name string
	body []byte
	// counterAt, when above 0, is where body holds counterDigits zeros that
	// every request overwrites with its own number: a label value that makes
	// each request a question the front door has not asked before.
	counterAt int
	// must lists byte strings every answer contains; mustNot those none does.
	must, mustNot [][]byte
}

// The label that makes every request of the seed mix a new question
// (issue 43: with the decision cache, a repeated question is answered
// without the decider; the seed mix measures the decider's path, as before
// the cache). No rule reads labels: the answers are the pods' own.
const (
	counterLabel  = "load-request"
	counterDigits = 10
	counterZeros  = "n0000000000"
)

// requests builds the review bodies of the seed mix, each request a new
// question (counterLabel). The floor answers every review allowed, so its
// check is only the uid and allowed; the dynamic-config targets must also
// mean what the pod wants.
func requests(floor bool) ([]request, error) {
	out := make([]request, len(corpus))
	for i, p := range corpus {
		pod, err := withLabel(p.pod, counterLabel, counterZeros)
		if err != nil {
			return nil, fmt.Errorf("corpus pod %s: %w", p.name, err)
		}
		r, err := reviewOf(p.name, fmt.Sprintf("load-%d-%s", i, p.name), pod, p.want, floor)
		if err != nil {
			return nil, err
		}
		r.counterAt = bytes.Index(r.body, []byte(counterZeros)) + 1
		out[i] = r
	}
	return out, nil
}

// withLabel is pod (JSON) with one more label.
func withLabel(pod, key, value string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(pod), &m); err != nil {
		return nil, err
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		return nil, fmt.Errorf("no metadata")
	}
	labels, _ := meta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	labels[key] = value
	meta["labels"] = labels
	return json.Marshal(m)
}

// reviewOf is the CREATE review of pod (JSON) with uid and the checks of
// what its answer must mean (only the uid and allowed for the floor).
func reviewOf(name, uid string, pod []byte, want answer, floor bool) (request, error) {
	var meta struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(pod, &meta); err != nil {
		return request{}, fmt.Errorf("corpus pod %s: %w", name, err)
	}
	body, err := json.Marshal(review.Review{APIVersion: review.APIVersion, Kind: review.Kind, Request: &review.Request{
		UID:       uid,
		Kind:      review.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource:  review.GroupVersionResource{Version: "v1", Resource: "pods"},
		Name:      meta.Metadata.Name,
		Namespace: meta.Metadata.Namespace,
		Operation: "CREATE",
		UserInfo:  review.UserInfo{Username: "system:serviceaccount:kube-system:replicaset-controller"},
		Object:    json.RawMessage(pod),
	}})
	if err != nil {
		return request{}, err
	}
	r := request{name: name, body: body, must: [][]byte{[]byte(`"uid":"` + uid + `"`)}}
	if floor {
		want = allowedAsIs
	}
	switch want {
	case patched:
		r.must = append(r.must, []byte(`"allowed":true`), []byte(`"patchType":"JSONPatch"`))
	case allowedAsIs:
		r.must = append(r.must, []byte(`"allowed":true`))
		r.mustNot = append(r.mustNot, []byte(`"patch"`))
	case denied:
		r.must = append(r.must, []byte(`"allowed":false`), []byte(`"code":400`))
	}
	return r, nil
}

// check says what is wrong with an answer to r ("" = nothing).
func (r *request) check(body []byte) string {
	for _, m := range r.must {
		if !bytes.Contains(body, m) {
			return fmt.Sprintf("the answer to %s lacks %s", r.name, m)
		}
	}
	for _, m := range r.mustNot {
		if bytes.Contains(body, m) {
			return fmt.Sprintf("the answer to %s carries %s", r.name, m)
		}
	}
	return ""
}
