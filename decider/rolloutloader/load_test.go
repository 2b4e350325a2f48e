package rolloutloader

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/internal/testfile"
)

func TestARolloutFileLoadsInEachFormat(t *testing.T) {
	tests := []struct{ name, content string }{
		{"rollout.yaml", "candidate:\n  watchSeconds: 20\nstage: canary\ncanary:\n  percent: 12.5\n"},
		{"rollout.json", `{"candidate": {"watchSeconds": 20}, "stage": "canary", "canary": {"percent": 12.5}}`},
		{"rollout.toml", "stage = \"canary\"\n[candidate]\nwatchSeconds = 20\n[canary]\npercent = 12.5\n"},
	}
	var id string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Load(Options{Path: testfile.Write(t, tt.name, tt.content)})
			if err != nil || r == nil {
				t.Fatalf("Load = %v, %v", r, err)
			}
			if r.Slice.Buckets != 1250 || r.Stage != rollout.StageCanary {
				t.Errorf("slice %d buckets, stage %s", r.Slice.Buckets, r.Stage)
			}
			if id == "" {
				id = r.ID
			} else if r.ID != id {
				t.Errorf("the same rollout in %s is %s, not %s", tt.name, r.ID, id)
			}
		})
	}
}

func TestAMissingRolloutFileIsNoRollout(t *testing.T) {
	for _, opts := range []Options{{}, {Path: filepath.Join(t.TempDir(), "rollout.yaml")}} {
		if r, err := Load(opts); r != nil || err != nil {
			t.Errorf("Load(%+v) = %v, %v; want no rollout", opts, r, err)
		}
	}
}

func TestARolloutFileThatIsNoDocumentIsAProblem(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"rollout.yaml", "candidate: [\n", "the rollout document is not valid YAML"},
		{"rollout.txt", "candidate: {}\n", "the rollout document's format comes from its extension"},
		{"rollout.yaml", "- candidate\n", "the rollout document is a map of settings"},
	}
	for _, tt := range tests {
		_, err := Load(Options{Path: testfile.Write(t, tt.name, tt.content)})
		var p *rollout.Problems
		if !errors.As(err, &p) || len(p.Lines) != 1 || !strings.Contains(p.Lines[0], tt.want) {
			t.Errorf("%s %q: %v; want the one problem %q", tt.name, tt.content, err, tt.want)
		}
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "rollout.yaml"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(Options{Path: filepath.Join(dir, "rollout.yaml")}); err == nil || !strings.Contains(err.Error(), "the rollout document cannot be read") {
		t.Errorf("a directory: %v", err)
	}
}

func TestTheOfflineCheckValidatesTheCandidateOverTheEnvironmentItIsGiven(t *testing.T) {
	path := testfile.Write(t, "rollout.yaml", "candidate:\n  storeDefaults:\n    consul: \"watch-seconds=20\"\n")
	if _, err := Load(Options{Path: path}); err != nil {
		t.Fatalf("without an environment: %v", err)
	}
	_, err := Load(Options{Path: path, Environ: []string{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=often"}})
	if err == nil || !strings.Contains(err.Error(), "candidate: DYNAMIC_CONFIG_AGENT_WATCH_SECONDS") {
		t.Errorf("a bad variable of the active's environment is the candidate's problem too: %v", err)
	}
}
