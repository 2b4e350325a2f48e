package rollout

import (
	"errors"
	"strings"
	"testing"
)

func TestARolloutSentToAFollowerLoadsBackToTheSameRollout(t *testing.T) {
	for _, doc := range []string{
		"candidate: {}\n",
		"candidate:\n  watchSeconds: 20\n  environment:\n    DYNAMIC_CONFIG_AGENT_IMAGE: registry.example/agent:v2\nstage: canary\ncanary: {percent: 0.5, namespaces: [a, b], clusters: [east]}\nguard: {newRefusals: serve}\n",
		"candidate:\n  envPolicy:\n    rules:\n      - reject: anyIn\n        environmentVariables:\n          - {name: HTTPS_PROXY, value: http://proxy.example}\n        mode: enforce\nstage: canary\ncanary: {namespaces: [a]}\n",
	} {
		r := mustBuild(t, doc, "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=30")
		back, err := FromTransport(r.Transport())
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if back.ID != r.ID || back.Candidate.Revision != r.Candidate.Revision {
			t.Errorf("%s: back as %s (candidate %s), sent %s (candidate %s)", doc, back.ID, back.Candidate.Revision, r.ID, r.Candidate.Revision)
		}
	}
}

func TestAFollowerRefusesARolloutThatIsNotTheOneNamed(t *testing.T) {
	r := mustBuild(t, "candidate: {watchSeconds: 20}\nstage: canary\ncanary: {percent: 5}\n")
	tests := []struct {
		name string
		edit func(*Transport)
		want string
	}{
		{"another id", func(tr *Transport) { tr.ID = "sha256:00" }, "rollout id mismatch"},
		{"another candidate revision", func(tr *Transport) { tr.Candidate.Revision = "sha256:00" }, "revision mismatch"},
		{"a percentage above 100", func(tr *Transport) { tr.Buckets = 10_001 }, "canary.percent"},
		{"a namespace that is no name", func(tr *Transport) { tr.Namespaces = []string{"A B"} }, "canary.namespaces[0]"},
		{"an empty slice in canary", func(tr *Transport) { tr.Buckets = 0 }, "the slice is empty"},
		{"an unknown stage", func(tr *Transport) { tr.Stage = 7 }, `stage is "7"`},
		{"a candidate that is no installation", func(tr *Transport) { tr.Candidate.Canonical = []byte(`{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS":"soon"}`) }, "candidate: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := r.Transport()
			tt.edit(&tr)
			_, err := FromTransport(tr)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one naming %q", err, tt.want)
			}
		})
	}
	tr := r.Transport()
	tr.ID = "sha256:00"
	if _, err := FromTransport(tr); !errors.Is(err, ErrIDMismatch) {
		t.Errorf("err = %v, want ErrIDMismatch", err)
	}
}
