package main

import (
	"net"
	"os"
	"strings"
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
