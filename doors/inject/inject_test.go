package inject

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
)

const asks = `"annotations":{"dynamic-config.rs/inject":"true","dynamic-config.rs/source":"consul","dynamic-config.rs/endpoint":"http://consul:8500","dynamic-config.rs/key":"app/config.json","dynamic-config.rs/path":"/config/app.json"}`

func documents(t *testing.T, raws ...string) []*manifest.Document {
	t.Helper()
	var docs []*manifest.Document
	for i, raw := range raws {
		d := &manifest.Document{File: "in.json", Index: i + 1, JSON: true, Raw: []byte(raw)}
		if err := Admit(d); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

func TestDocumentsPatchEveryPodInItsPlace(t *testing.T) {
	inst, err := installation.Build(installation.Document{}, nil, docparse.Text)
	if err != nil {
		t.Fatal(err)
	}
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"metadata":{` + asks + `},"spec":{"containers":[{"name":"app","image":"app:1"}]}}}}`
	service := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"}}`
	refused := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bad","annotations":{"dynamic-config.rs/inject":"true"}},"spec":{"containers":[{"name":"app","image":"app:1"}]}}`
	results, err := Documents(inst, nil, documents(t, deployment, service, refused), "", "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		r       *Result
		refused bool
		line    string // WriteLine's first line, verbose
		check   func(t *testing.T, r *Result)
	}{
		{"a workload's template is patched where it stands in the manifest", results[0], false,
			"in.json: Deployment/web: injected (1 agent container(s))",
			func(t *testing.T, r *Result) {
				var d struct {
					Spec struct {
						Template struct {
							Spec struct {
								Containers []struct{ Name string } `json:"containers"`
							} `json:"spec"`
						} `json:"template"`
					} `json:"spec"`
				}
				if err := json.Unmarshal(r.Mutated, &d); err != nil || len(d.Spec.Template.Spec.Containers) != 2 {
					t.Errorf("mutated %s", r.Mutated)
				}
				if !strings.Contains(string(r.Patch), `"path":"/spec/template/spec/containers/-"`) {
					t.Errorf("patch %s", r.Patch)
				}
			}},
		{"an object inject does not patch is written as it came", results[1], false,
			"in.json: Service/web: passed through unchanged (inject patches " + manifest.Kinds + ")",
			func(t *testing.T, r *Result) {
				if string(r.Mutated) != service || string(r.Patch) != "[]" {
					t.Errorf("mutated %s, patch %s", r.Mutated, r.Patch)
				}
			}},
		{"a refused pod leaves its document unwritten", results[2], true, "in.json: refused (", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.r.Refused() != tt.refused {
				t.Fatalf("refused %v, want %v", tt.r.Refused(), tt.refused)
			}
			var line bytes.Buffer
			WriteLine(&line, tt.r.Doc.File, tt.r.Targets[0], true)
			if !strings.HasPrefix(line.String(), tt.line) {
				t.Errorf("line %q, want it to begin %q", line.String(), tt.line)
			}
			if tt.check != nil {
				tt.check(t, tt.r)
			}
		})
	}

	t.Run("the stream is one JSON List of the written objects", func(t *testing.T) {
		var out bytes.Buffer
		if err := WriteOutput(&out, results, ""); err != nil {
			t.Fatal(err)
		}
		var list struct {
			Kind  string
			Items []struct{ Kind string }
		}
		if err := json.Unmarshal(out.Bytes(), &list); err != nil || list.Kind != "List" || len(list.Items) != 2 ||
			list.Items[0].Kind != "Deployment" || list.Items[1].Kind != "Service" {
			t.Errorf("got %s", out.String())
		}
	})
	t.Run("-o review writes every answer, the refused one too", func(t *testing.T) {
		var out bytes.Buffer
		if err := WriteOutput(&out, results, OutputReview); err != nil {
			t.Fatal(err)
		}
		var answers []struct{ Response struct{ Allowed bool } }
		if err := json.Unmarshal(out.Bytes(), &answers); err != nil || len(answers) != 2 || !answers[0].Response.Allowed || answers[1].Response.Allowed {
			t.Errorf("got %s", out.String())
		}
	})
}
