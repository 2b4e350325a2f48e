package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// TestAnswersAreChecked holds the generator to counting a wrong answer as
// an error: the smoke run in CI fails on them.
func TestAnswersAreChecked(t *testing.T) {
	reqs, err := requests(false)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*request{}
	for i := range reqs {
		byName[reqs[i].name] = &reqs[i]
	}
	answer := func(r *request, body string) string {
		u := strings.TrimPrefix(string(r.must[0]), `"uid":`)
		return `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{` + body + `,"uid":` + u + `}}`
	}
	cases := []struct {
		name, pod, body string
		ok              bool
	}{
		{"a patched answer to an injected pod passes", "seed-000-minimal", `"allowed":true,"patch":"W10=","patchType":"JSONPatch"`, true},
		{"an unpatched answer to an injected pod fails", "seed-000-minimal", `"allowed":true`, false},
		{"a plain pod allowed as it is passes", "plain", `"allowed":true`, true},
		{"a patched plain pod fails", "plain", `"allowed":true,"patch":"W10=","patchType":"JSONPatch"`, false},
		{"the refused pod denied 400 passes", "refused-watch-seconds", `"allowed":false,"status":{"code":400,"message":"m","reason":"DynamicConfigMalformed"}`, true},
		{"the refused pod allowed fails", "refused-watch-seconds", `"allowed":true`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := byName[c.pod]
			if got := r.check([]byte(answer(r, c.body))); (got == "") != c.ok {
				t.Errorf("check = %q, want ok=%v", got, c.ok)
			}
		})
	}
	t.Run("an answer with another uid fails", func(t *testing.T) {
		r := byName["plain"]
		if r.check([]byte(`{"response":{"allowed":true,"uid":"other"}}`)) == "" {
			t.Error("a foreign uid passed")
		}
	})
}

func TestCPUSecondsReadsThisProcess(t *testing.T) {
	// Burn a little CPU so the counter is not zero at the tick resolution.
	deadline := 0
	for i := 0; i < 50_000_000; i++ {
		deadline += i % 7
	}
	got, err := cpuSeconds(os.Getpid())
	if err != nil || got <= 0 || deadline < 0 {
		t.Errorf("cpuSeconds = %v, %v; want a positive number of seconds", got, err)
	}
}

func TestSoleListenerFindsTheLoopbackListener(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	addrs, ok := soleListener("listen")(os.Getpid())
	if !ok || addrs["listen"] != lis.Addr().String() {
		t.Errorf("soleListener = %v, %v; want %s", addrs, ok, lis.Addr())
	}
}

func TestEverySeedRequestIsANewQuestionAndTheRepeatMixOneQuestion(t *testing.T) {
	m, err := mixes(false)
	if err != nil {
		t.Fatal(err)
	}
	seed := m[mixSeed]
	for _, r := range seed.reqs {
		if r.counterAt <= 0 || string(r.body[r.counterAt-1:r.counterAt+counterDigits]) != counterZeros {
			t.Fatalf("%s: no counter label in its body", r.name)
		}
	}
	// The caller writes each request's own number into the label.
	var mu sync.Mutex
	labels := map[string]bool{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		i := bytes.Index(body, []byte(`"`+counterLabel+`":"`))
		mu.Lock()
		labels[string(body[i:i+len(counterLabel)+4+len(counterZeros)])] = true
		mu.Unlock()
		http.Error(w, "recorded", http.StatusTeapot)
	}))
	defer srv.Close()
	do, done := httpsCaller(srv.URL, srv.Client().Transport.(*http.Transport).TLSClientConfig, seed, 2)
	for i := range 20 {
		do(context.Background(), i%2, i)
	}
	done()
	if len(labels) != 20 {
		t.Fatalf("20 seed requests carried %d distinct counter labels: %v", len(labels), labels)
	}
	if len(m[mixRepeat].reqs) != repeatUIDs || len(m[mixFleet].reqs) != fleetTemplates {
		t.Fatalf("%d repeat requests, %d fleet templates", len(m[mixRepeat].reqs), len(m[mixFleet].reqs))
	}
	for _, r := range m[mixRepeat].reqs {
		if r.counterAt != 0 || !strings.Contains(string(r.body), `"generateName":"shop-7d4f8b9c-"`) {
			t.Fatalf("a repeat request is not the ReplicaSet's pod: %s", r.body)
		}
	}
}

func TestTheFleetMixIsZipfDistributed(t *testing.T) {
	m, err := mixes(false)
	if err != nil {
		t.Fatal(err)
	}
	pick := m[mixFleet].picker(2)
	counts := make([]int, fleetTemplates)
	for i := range 100_000 {
		counts[pick(i%2, i)]++
	}
	if counts[0] < 10*counts[50] || counts[0] < 15_000 {
		t.Fatalf("the most popular template drew %d, the 51st %d: not Zipf-like", counts[0], counts[50])
	}
	seen := 0
	for _, n := range counts {
		if n > 0 {
			seen++
		}
	}
	if seen < fleetTemplates/2 {
		t.Fatalf("only %d of %d templates drawn in 100 000 requests", seen, fleetTemplates)
	}
}
