package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inject on a tree of manifests (issue 40 item 9): -R reads the
// subdirectories as kubectl -R does, and -o patch on a stream of several
// documents labels each patch with its document, one JSON object a line.
func TestInjectReadsATreeAndLabelsEachPatchOfAStream(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) string {
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// injectRun's installation pins the consul endpoint
	pinned := func(ns string) string {
		return strings.Replace(explainJob(ns), "http://consul:8500", "http://consul.infra.svc:8500", 1)
	}
	job := write("apps/batch/job.yaml", pinned("shop"))
	stream := write("apps/web.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80}]}\n---\n"+pinned("web"))

	t.Run("without -R a directory of directories has nothing to read, and says -R would", func(t *testing.T) {
		_, stderr, code := injectRun(t, "", "-f", dir, "-o", "patch")
		if code != exitUsage || !strings.Contains(stderr, dir+" has no .yaml, .yml or .json file (-R reads its subdirectories too)") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("-R reads every file of the tree, in lexical order, each patch labelled", func(t *testing.T) {
		stdout, stderr, code := injectRun(t, "", "-R", "-f", dir, "-o", "patch")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		type labelled struct {
			Document, Kind, Namespace, Name string
			Patch                           []map[string]any
		}
		var got []labelled
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var l labelled
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			got = append(got, l)
		}
		want := []labelled{
			{Document: job + " document 1", Kind: "Job", Namespace: "shop", Name: "once"},
			{Document: stream + " document 1", Kind: "Service", Namespace: "shop", Name: "web"},
			{Document: stream + " document 2", Kind: "Job", Namespace: "web", Name: "once"},
		}
		if len(got) != len(want) {
			t.Fatalf("%d patches, want %d:\n%s", len(got), len(want), stdout)
		}
		for i, w := range want {
			g := got[i]
			if g.Document != w.Document || g.Kind != w.Kind || g.Namespace != w.Namespace || g.Name != w.Name || (len(g.Patch) == 0) != (w.Kind == "Service") {
				t.Errorf("patch %d is %+v, want %+v with %s patch", i+1, g, w, map[bool]string{true: "an empty", false: "a"}[w.Kind == "Service"])
			}
		}
	})
	t.Run("one document's patch stays bare, for kubectl patch --type json", func(t *testing.T) {
		stdout, _, code := injectRun(t, "", "-f", job, "-o", "patch")
		if code != exitOK || !strings.HasPrefix(stdout, `[{"op":"add"`) {
			t.Errorf("exit %d, stdout %s", code, stdout)
		}
	})
}
