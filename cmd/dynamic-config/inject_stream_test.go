package main

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// decodeOneJSONValue decodes out as jq and kubectl would: exactly one JSON
// value, then EOF.
func decodeOneJSONValue(t *testing.T, out string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Fatalf("stdout holds more than one JSON value (next: %v, %v)\n%s", extra, err, out)
	}
	return v
}

// listItemKinds are the kinds of a v1 List's items, in order.
func listItemKinds(t *testing.T, v map[string]any) []string {
	t.Helper()
	if v["apiVersion"] != "v1" || v["kind"] != "List" {
		t.Fatalf("not a v1 List: apiVersion %v, kind %v", v["apiVersion"], v["kind"])
	}
	items, ok := v["items"].([]any)
	if !ok {
		t.Fatalf("the List has no items array: %v", v)
	}
	kinds := make([]string, len(items))
	for i, item := range items {
		kinds[i], _ = item.(map[string]any)["kind"].(string)
	}
	return kinds
}

func TestInjectJSONOutputIsOneValueThatPipes(t *testing.T) {
	withFoundationEnv(t, nil)
	service := "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n"
	deploy := workloadYAML("apps/v1", "Deployment", "shop", "  selector:\n    matchLabels:\n      app: web\n")
	dir := t.TempDir()
	stream := explainWriteFile(t, dir, "stream.yaml", deploy+"---\n"+service)

	t.Run("-o json of a multi-document stream writes one v1 List of every object", func(t *testing.T) {
		stdout, stderr, code := injectRun(t, "", "-f", stream, "-o", "json")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if kinds := listItemKinds(t, decodeOneJSONValue(t, stdout)); strings.Join(kinds, ",") != "Deployment,Service" {
			t.Errorf("List items %v, want Deployment and Service", kinds)
		}
	})

	t.Run("-o json of one object writes the object itself, as kubectl does", func(t *testing.T) {
		stdout, stderr, code := injectRun(t, deploy, "-f", "-", "-o", "json")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if v := decodeOneJSONValue(t, stdout); v["kind"] != "Deployment" {
			t.Errorf("kind %v, want the Deployment itself", v["kind"])
		}
	})

	t.Run("a List document among several adds its items, not a nested List", func(t *testing.T) {
		list := `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},` +
			`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"b"}}]}`
		listDir := t.TempDir()
		explainWriteFile(t, listDir, "a.json", list)
		explainWriteFile(t, listDir, "b.yaml", service)
		stdout, stderr, code := injectRun(t, "", "-f", listDir, "-o", "json")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if kinds := listItemKinds(t, decodeOneJSONValue(t, stdout)); strings.Join(kinds, ",") != "ConfigMap,Secret,Service" {
			t.Errorf("List items %v, want ConfigMap, Secret, Service", kinds)
		}
	})

	t.Run("-f dir/ starting with a JSON file writes one JSON List without -o", func(t *testing.T) {
		mixed := t.TempDir()
		explainWriteFile(t, mixed, "a-service.json", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"api"},"spec":{"ports":[{"port":80}]}}`)
		explainWriteFile(t, mixed, "b-deploy.yaml", deploy)
		stdout, stderr, code := injectRun(t, "", "-f", mixed)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if kinds := listItemKinds(t, decodeOneJSONValue(t, stdout)); strings.Join(kinds, ",") != "Service,Deployment" {
			t.Errorf("List items %v, want Service and Deployment", kinds)
		}
	})

	t.Run("YAML output keeps --- between documents", func(t *testing.T) {
		stdout, stderr, code := injectRun(t, "", "-f", stream, "-o", "yaml")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if docs := splitYAML(stdout); len(docs) != 2 || !strings.Contains(stdout, "\n---\n") {
			t.Errorf("%d YAML documents, want 2 separated by ---:\n%s", len(docs), stdout)
		}
	})
}
