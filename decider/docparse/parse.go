// Package docparse reads document text — YAML, JSON and TOML by a file's
// extension — into doctree trees, the only form the installation model and
// the environment policy validate.
package docparse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
)

const asciiSpace = " \t\n\r\v\f"

// Blank reports whether data is empty or holds only whitespace and
// "#" comment lines: the empty document whatever the file's name.
func Blank(data []byte) bool {
	for _, line := range bytes.Split(data, []byte("\n")) {
		l := bytes.Trim(line, asciiSpace)
		if len(l) != 0 && l[0] != '#' {
			return false
		}
	}
	return true
}

// Document parses an installation document by the extension of path into
// its top-level map; nil for the empty document. problem is the shape problem
// of a document that does not parse or is not a map.
func Document(path string, data []byte) (root *doctree.Node, problem string) {
	return Named("installation document", path, data)
}

// Named is Document for another document of the same shape (the rollout
// document of spec 10 §2): noun names it in the problem ("rollout document").
func Named(noun, path string, data []byte) (root *doctree.Node, problem string) {
	n, problem := document(noun, path, data)
	return FromYAML(n), problem
}

// YAML is Named's document as yaml.v3 reads it: a YAML document with its
// comments, or a JSON or TOML one converted (nil for a blank document).
func YAML(noun, path string, data []byte) (root *yaml.Node, problem string) {
	return document(noun, path, data)
}

func document(noun, path string, data []byte) (*yaml.Node, string) {
	if Blank(data) {
		return nil, ""
	}
	var root *yaml.Node
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, path + ": the " + noun + " is not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")
		}
		root = unwrap(&doc)
	case ".json":
		n, err := jsonToNode(data)
		if err != nil {
			return nil, path + ": the " + noun + " is not valid JSON: " + err.Error()
		}
		root = n
	case ".toml":
		n, err := tomlToNode(data)
		if err != nil {
			return nil, path + ": the " + noun + " is not valid TOML: " + err.Error()
		}
		root = n
	default:
		return nil, path + ": the " + noun + "'s format comes from its extension: .yaml, .yml, .json or .toml"
	}
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, "the " + noun + " is a map of settings"
	}
	return root, ""
}

// jsonToNode reads one JSON value into a yaml.Node tree, keeping key order
// and the literal text of numbers (json.Number).
func jsonToNode(data []byte) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := jsonValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return n, nil
}

func jsonValue(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				if seen[k] {
					return nil, fmt.Errorf("key %s appears twice", strconv.Quote(k))
				}
				seen[k] = true
				v, err := jsonValue(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '[':
			n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			for dec.More() {
				v, err := jsonValue(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t, Style: yaml.DoubleQuotedStyle}, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(t), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(t)}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}
