// Package manifest is what the offline doors (inject, explain) read and
// write: the documents of their -f files (documents.go), the pod each one
// holds — a Pod, or the pod template of a workload (workloads.go) — and the
// YAML stream or indented JSON value the doors write (stream.go).
package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/dynamic-config-admission/dynamic-config/internal/prose"
)

// Document is one document of an offline door's -f files, as JSON.
type Document struct {
	File  string // as given ("-" for stdin)
	Index int    // 1-based within its file
	JSON  bool   // the file was JSON (else YAML)
	Raw   []byte
	// Head is filled by DecodeHead.
	Head Head
}

// Head is what the doors read of an object before deciding it: its
// apiVersion, kind, name and namespace.
type Head struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// Where names the document in messages: "<file> document <n>".
func (d *Document) Where() string { return fmt.Sprintf("%s document %d", d.File, d.Index) }

// DecodeHead reads the document's apiVersion, kind, name and namespace; it
// fails when the document is not an object.
func (d *Document) DecodeHead() error { return json.Unmarshal(d.Raw, &d.Head) }

// NamespaceFrom is the namespace the document is decided in (spec 07 §1.4):
// --namespace, else its metadata.namespace, else default.
func (d *Document) NamespaceFrom(flag string) string {
	switch {
	case flag != "":
		return flag
	case d.Head.Metadata.Namespace != "":
		return d.Head.Metadata.Namespace
	}
	return "default"
}

// Extensions are the files -f DIR reads, as kubectl does.
var Extensions = []string{".yaml", ".yml", ".json"}

// ExpandDirectories replaces every directory of files by its manifest files
// (Extensions), in name order — with recursive (-R), those of its
// subdirectories too, each directory's files in name order and its
// subdirectories in turn, as kubectl -R reads them; "-" and plain files
// stay as they are. A directory without a manifest file is an error.
func ExpandDirectories(command string, files []string, recursive bool) ([]string, error) {
	var out []string
	for _, name := range files {
		info, err := os.Stat(name)
		if name == "-" || err != nil || !info.IsDir() {
			out = append(out, name) // read errors are reported by the reader
			continue
		}
		n := len(out)
		err = filepath.WalkDir(name, func(path string, e fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case e.IsDir() && path != name && !recursive:
				return filepath.SkipDir
			case !e.IsDir() && slices.Contains(Extensions, filepath.Ext(e.Name())):
				out = append(out, path) // WalkDir walks in lexical order
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: read %s: %w", command, name, err)
		}
		if len(out) == n && recursive {
			return nil, fmt.Errorf("%s: %s has no %s file", command, name, prose.Join(Extensions, "or"))
		} else if len(out) == n {
			return nil, fmt.Errorf("%s: %s has no %s file (-R reads its subdirectories too)", command, name, prose.Join(Extensions, "or"))
		}
	}
	return out, nil
}

// Read reads every YAML (---) or JSON document of the files (directories
// expanded, recursive with -R: ExpandDirectories) for the offline command; "-" reads stdin and empty documents are skipped.
// admit is the command's kind rule, applied to each document as it is read
// (nil admits every document); its error is returned as it is. The other
// errors name the command.
func Read(command string, files []string, recursive bool, stdin io.Reader, admit func(*Document) error) ([]*Document, error) {
	files, err := ExpandDirectories(command, files, recursive)
	if err != nil {
		return nil, err
	}
	var docs []*Document
	for _, name := range files {
		var data []byte
		var err error
		if name == "-" {
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: read %s: %w", command, name, err)
		}
		isJSON := bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))
		dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for n := 1; ; n++ {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("%s: %s document %d: %w", command, name, n, err)
			}
			if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
				n-- // an empty document (a leading or trailing ---)
				continue
			}
			doc := &Document{File: name, Index: n, JSON: isJSON, Raw: raw}
			if admit != nil {
				if err := admit(doc); err != nil {
					return nil, err
				}
			}
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no document to %s", command, command)
	}
	return docs, nil
}
