package classloader

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

// Parse reads a YAML (---) or JSON stream of class objects read from file
// name into a set (classes.FromDocuments: a v1 List's items count as
// documents of their own). Empty documents are skipped. An undecodable
// document or any invalid object is a *classes.FileError listing every
// problem. Reading the file is the caller's.
func Parse(name string, data []byte) (*classes.Set, error) {
	return classes.FromDocuments(name, Documents(data))
}

// Documents decodes a YAML (---) or JSON stream into its non-empty
// documents; decoding stops at the first undecodable one, which is the last
// document, with its Err.
func Documents(data []byte) []classes.Document {
	var docs []classes.Document
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if !errors.Is(err, io.EOF) {
				docs = append(docs, classes.Document{Err: err})
			}
			return docs
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			obj = nil // not an object (or not one encoding/json can hold)
		}
		docs = append(docs, classes.Document{Object: obj})
	}
}

// ReadFile reads a --classes-file once it has settled — the same content at
// two reads one settle interval apart, or unwritten for that long
// (internal/stablefile): a file being rewritten in place is never read as
// the prefix a read caught (issue 38) — and parses it (Parse).
func ReadFile(path string) (*classes.Set, error) {
	s, err := stablefile.ReadSettled(path, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("classes file: %w", err)
	}
	return Parse(path, s.Data)
}
