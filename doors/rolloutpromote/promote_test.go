package rolloutpromote

import (
	"errors"
	"os"
	"strings"
	"testing"

	chart "github.com/dynamic-config-admission/dynamic-config/charts/dynamic-config"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutloader"
	"github.com/dynamic-config-admission/dynamic-config/internal/testfile"
)

// valuesWithCandidate are chart values whose rollout stages a new agent
// tag, a pinned fleet default, a gate and a null that unsets one.
const valuesWithCandidate = `# the release's values
agent:
  tag: v0.3.0  # the agent in force
  defaults:
    watchSeconds: "30"
webhook:
  sourceDeny: vault
rollout:
  candidate:
    agent:
      tag: v0.4.0
      defaults:
        watchSeconds: "20!"
    webhook:
      sourceDeny: null
      sourceAllow: consul,vault
  stage: canary
  canary:
    percent: 5
`

func TestPromote(t *testing.T) {
	t.Run("promoted values make exactly the candidate's installation, the file keeps its comments and loses its rollout", func(t *testing.T) {
		path := testfile.Write(t, "values.yaml", valuesWithCandidate)
		before, err := chart.LoadRollout(path, nil)
		if err != nil || before == nil {
			t.Fatalf("the rollout: %v, %v", before, err)
		}
		out, done, err := Promote(Request{Values: path})
		if err != nil || out != nil {
			t.Fatalf("promote: %q, %v", out, err)
		}
		if !strings.Contains(done, before.Candidate.Revision) {
			t.Errorf("the line %q does not name the candidate's revision", done)
		}
		after, err := chart.Load(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if after.Revision != before.Candidate.Revision {
			t.Errorf("promoted revision %s, the candidate's %s", after.Revision, before.Candidate.Revision)
		}
		written, _ := os.ReadFile(path)
		for _, want := range []string{"# the release's values", "tag: v0.4.0", "watchSeconds: \"20!\"", "sourceAllow: consul,vault"} {
			if !strings.Contains(string(written), want) {
				t.Errorf("the promoted values lack %q:\n%s", want, written)
			}
		}
		if strings.Contains(string(written), "rollout") {
			t.Errorf("the rollout is still there:\n%s", written)
		}
		if r, err := chart.LoadRollout(path, nil); err != nil || r != nil {
			t.Errorf("the promoted values still render a rollout: %v, %v", r, err)
		}
	})
	t.Run("-o yaml writes the promoted values to stdout and leaves the file as it was", func(t *testing.T) {
		path := testfile.Write(t, "values.yaml", valuesWithCandidate)
		out, _, err := Promote(Request{Values: path, Output: "yaml"})
		if err != nil || !strings.Contains(string(out), "tag: v0.4.0") {
			t.Fatalf("promote: %s, %v", out, err)
		}
		if written, _ := os.ReadFile(path); string(written) != valuesWithCandidate {
			t.Error("the file was rewritten")
		}
	})
	t.Run("a rollout document's candidate becomes an installation document of the candidate's revision, its environment named", func(t *testing.T) {
		path := testfile.Write(t, "rollout.yaml", `candidate:
  # the consul store, watched more often
  storeDefaults:
    consul: "endpoint=http://consul.infra.svc:8500!, watch-seconds=20"
  environment:
    DYNAMIC_CONFIG_AGENT_IMAGE: ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.4.0
stage: shadow
`)
		ro, err := rolloutloader.Load(rolloutloader.Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := Promote(Request{Rollout: path})
		if err != nil {
			t.Fatal(err)
		}
		text := string(out)
		if !strings.Contains(text, "#   DYNAMIC_CONFIG_AGENT_IMAGE=ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.4.0\n") ||
			!strings.Contains(text, "# the consul store") || strings.Contains(text, "environment:") || strings.Contains(text, "stage") {
			t.Fatalf("the promoted document:\n%s", text)
		}
		doc := testfile.Write(t, "installation.yaml", text)
		inst, err := installationloader.Load(installationloader.Options{DocumentPath: doc, DocumentExplicit: true,
			Environ: []string{"DYNAMIC_CONFIG_AGENT_IMAGE=ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.4.0"}})
		if err != nil {
			t.Fatal(err)
		}
		if inst.Revision != ro.Candidate.Revision {
			t.Errorf("promoted revision %s, the candidate's %s", inst.Revision, ro.Candidate.Revision)
		}
	})
	t.Run("an invalid candidate is never promoted: every problem is named and the file is left alone", func(t *testing.T) {
		text := "rollout:\n  candidate:\n    webhook:\n      sourceAllow: \"cons ul\"\n  stage: sideways\n"
		path := testfile.Write(t, "values.yaml", text)
		_, _, err := Promote(Request{Values: path})
		var problems *rollout.Problems
		if !errors.As(err, &problems) || len(problems.Lines) < 2 {
			t.Fatalf("want every problem of the rollout, got %v", err)
		}
		if written, _ := os.ReadFile(path); string(written) != text {
			t.Error("the file was rewritten")
		}
	})
	t.Run("values without a candidate have nothing to promote", func(t *testing.T) {
		path := testfile.Write(t, "values.yaml", "agent:\n  tag: v0.3.0\n")
		if _, _, err := Promote(Request{Values: path}); !errors.Is(err, ErrNoCandidate) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("values and a rollout document together, or neither, are a usage error", func(t *testing.T) {
		for _, r := range []Request{{}, {Values: "v.yaml", Rollout: "r.yaml"}} {
			if _, _, err := Promote(r); err == nil || !strings.Contains(err.Error(), "one of them") {
				t.Errorf("%+v: %v", r, err)
			}
		}
	})
}
