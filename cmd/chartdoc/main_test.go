package main

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func node(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

func TestTheTableHasOneRowPerLeafWithTypeDefaultAndDescription(t *testing.T) {
	schema := node(t, `{
  "definitions": {"labels": {"type": "object", "description": "pod labels"}},
  "properties": {
    "tls": {"type": "object", "properties": {
      "mode": {"type": "string", "enum": ["", "selfRotate"], "description": "the | mode"}}},
    "labels": {"$ref": "#/definitions/labels"},
    "watch": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}}`)
	values := node(t, "tls:\n  mode: selfRotate   # comment\nlabels: {a: b}\n")
	got, err := Table(schema, values)
	if err != nil {
		t.Fatal(err)
	}
	want := "| parameter | type | default | description |\n|---|---|---|---|\n" +
		"| `tls.mode` | \"\", selfRotate | `\"selfRotate\"` | the \\| mode |\n" +
		"| `labels` | object | `{a: b}` | pod labels |\n" +
		"| `watch` | integer or string | — |  |\n"
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestSpliceNeedsBothMarkersAndReplacesOnlyBetweenThem(t *testing.T) {
	if _, err := Splice([]byte("# README\n"), "x"); err == nil {
		t.Error("a README without markers was accepted")
	}
	readme := "intro\n" + beginMarker + "\nold table\n" + endMarker + "\noutro\n"
	got, err := Splice([]byte(readme), "new table\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "intro\n" + beginMarker + "\nnew table\n" + endMarker + "\noutro\n"; string(got) != want {
		t.Errorf("spliced:\n%s", got)
	}
	if !strings.Contains(string(got), "outro") {
		t.Error("text after the table was lost")
	}
}
