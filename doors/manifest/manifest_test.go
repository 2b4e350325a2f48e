package manifest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckKindPatchesPodsAndWorkloadsAndPassesTheRestThrough(t *testing.T) {
	tests := []struct {
		name, apiVersion, kind string
		patched                bool
		wantErr                string
	}{
		{"a Pod is patched", "v1", "Pod", true, ""},
		{"a CronJob is patched", "batch/v1", "CronJob", true, ""},
		{"a Service passes through", "v1", "Service", false, ""},
		{"a document without a kind is refused", "v1", "", false, "a document without a kind"},
		{"a workload of another apiVersion is refused", "extensions/v1beta1", "Deployment", false, `a Deployment of apiVersion "extensions/v1beta1" (want apps/v1)`},
		{"a List of another apiVersion is refused", "v2", "List", false, `a List of apiVersion "v2" (want v1)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patched, err := CheckKind(tt.apiVersion, tt.kind)
			if patched != tt.patched || (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
				t.Errorf("got %v, %v; want %v, %q", patched, err, tt.patched, tt.wantErr)
			}
		})
	}
}

func TestPodTargetsFindEveryPodOfADocument(t *testing.T) {
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},
		"spec":{"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app"}]}}}}`
	list := `{"apiVersion":"v1","kind":"List","items":[
		{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[]}},
		{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}}]}`
	tests := []struct {
		name, raw, namespace string
		want                 []PodTarget // Pod: only whether one is decided
		wantErr              string
	}{
		{"a workload's pod is its template, in the workload's namespace", deployment, "",
			[]PodTarget{{Pointer: "/spec/template", Label: "Deployment/web", Pod: []byte{}, Namespace: "shop"}}, ""},
		{"--namespace wins over the workload's", deployment, "team-a",
			[]PodTarget{{Pointer: "/spec/template", Label: "Deployment/web", Pod: []byte{}, Namespace: "team-a"}}, ""},
		{"a List's items are located one by one, what inject does not patch passes through", list, "",
			[]PodTarget{{Pointer: "/items/0", Label: "List item 1 Pod/a", Pod: []byte{}, Namespace: "default", Name: "a"}, {Label: "List item 2 Service/s"}}, ""},
		{"a workload without a pod spec is refused", `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"template":{}}}`, "",
			nil, "f document 1: Job/j: the pod template has no spec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := &Document{File: "f", Index: 1, Raw: []byte(tt.raw)}
			if err := doc.DecodeHead(); err != nil {
				t.Fatal(err)
			}
			got, err := PodTargets(doc, tt.namespace)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("got %+v, %v", got, err)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Pointer != w.Pointer || g.Label != w.Label || g.Namespace != w.Namespace || g.Name != w.Name || (g.Pod == nil) != (w.Pod == nil) {
					t.Errorf("target %d: got %+v, want %+v", i, g, w)
				}
				if g.Pod != nil {
					var head Head
					if err := json.Unmarshal(g.Pod, &head); err != nil || head.APIVersion != "v1" || head.Kind != "Pod" {
						t.Errorf("target %d decides %s, not a v1 Pod", i, g.Pod)
					}
				}
			}
		})
	}
}

func TestRebasePatchMovesEveryOpToThePodsPlace(t *testing.T) {
	ops, err := RebasePatch([]byte(`[{"op":"add","path":"/spec/containers/-","value":{}}]`), "/spec/template")
	if err != nil || len(ops) != 1 || ops[0].Path != "/spec/template/spec/containers/-" {
		t.Errorf("got %+v, %v", ops, err)
	}
	if _, err := RebasePatch([]byte(`[{"op":"add","path":"spec","value":{}}]`), "/spec/template"); err == nil {
		t.Error("a path outside the pod was moved")
	}
}

func TestReadTakesFilesDirectoriesAndStdin(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("b.yaml", "---\nkind: Pod\n---\nkind: Service\n---\n")
	write("a.json", `{"kind":"Deployment"}`)
	write("notes.txt", "not a manifest")
	empty := t.TempDir()
	tests := []struct {
		name    string
		files   []string
		stdin   string
		want    []string // where, kind
		wantErr string
	}{
		{"a directory is its manifest files in name order, empty documents skipped", []string{dir}, "",
			[]string{filepath.Join(dir, "a.json") + " document 1 json", filepath.Join(dir, "b.yaml") + " document 1 yaml", filepath.Join(dir, "b.yaml") + " document 2 yaml"}, ""},
		{"- is stdin", []string{"-"}, "kind: Pod\n", []string{"- document 1 yaml"}, ""},
		{"a directory without a manifest file is refused", []string{empty}, "", nil, "inject: " + empty + " has no .yaml, .yml or .json file (-R reads its subdirectories too)"},
		{"nothing to read is refused", []string{"-"}, "---\n", nil, "inject: no document to inject"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Read("inject", tt.files, false, strings.NewReader(tt.stdin), nil)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range docs {
				format := "yaml"
				if d.JSON {
					format = "json"
				}
				got = append(got, d.Where()+" "+format)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestWriteYAMLStreamSeparatesDocuments(t *testing.T) {
	tests := []struct {
		name    string
		docs    []string
		want    string
		wantErr string
	}{
		{"one document is written alone", []string{`{"kind":"Pod"}`}, "kind: Pod\n", ""},
		{"documents are separated by ---", []string{`{"kind":"Pod"}`, `{"kind":"Service","metadata":{"name":"s"}}`},
			"kind: Pod\n---\nkind: Service\nmetadata:\n  name: s\n", ""},
		{"a document that is not JSON is named", []string{`{"kind":"Pod"}`, `{`}, "", "document 2: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := make([][]byte, 0, len(tt.docs))
			for _, d := range tt.docs {
				docs = append(docs, []byte(d))
			}
			var out bytes.Buffer
			err := WriteYAMLStream(&out, docs, func(i int) string { return "document " + string(rune('1'+i)) })
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want %q…", err, tt.wantErr)
				}
				return
			}
			if err != nil || out.String() != tt.want {
				t.Errorf("got %q, %v; want %q", out.String(), err, tt.want)
			}
		})
	}
}

func TestWriteIndentedJSONIndentsByTwoSpacesAndEndsTheLine(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{"an object is indented", `{"kind":"List","items":[{"kind":"Pod"}]}`, "{\n  \"kind\": \"List\",\n  \"items\": [\n    {\n      \"kind\": \"Pod\"\n    }\n  ]\n}\n"},
		{"a scalar stands on its line", `true`, "true\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := WriteIndentedJSON(&out, []byte(tt.value)); err != nil || out.String() != tt.want {
				t.Errorf("got %q, %v; want %q", out.String(), err, tt.want)
			}
		})
	}
	if err := WriteIndentedJSON(&bytes.Buffer{}, []byte("{")); err == nil {
		t.Error("a value that is not JSON was written")
	}
}
