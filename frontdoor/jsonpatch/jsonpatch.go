// Package jsonpatch is the project's small RFC 6902 applier: add, remove and
// replace, with array indexes and "-" (append). It exists for the offline
// door (inject) and for tests that re-admit a patched pod; the front door
// itself never applies patches and never computes them with a library
// (spec 03 §4.1).
package jsonpatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
)

// Op is one JSON Patch operation.
type Op struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Apply applies the JSON Patch document patch (a JSON array of operations) to
// the JSON document doc and returns the result as compact JSON with HTML
// escaping off. The operations are applied in order; the first failing
// operation stops the whole patch and nothing is returned.
func Apply(doc, patch []byte) ([]byte, error) {
	var ops []Op
	if err := json.Unmarshal(patch, &ops); err != nil {
		return nil, fmt.Errorf("decode patch: %w", err)
	}
	root, err := decode(doc)
	if err != nil {
		return nil, fmt.Errorf("decode document: %w", err)
	}
	root, err = ApplyOps(root, ops)
	if err != nil {
		return nil, err
	}
	return review.Marshal(root)
}

// ApplyOps applies ops to a document decoded into plain Go values
// (map[string]any, []any, json.Number, string, bool, nil) and returns the new
// root. The input tree may be modified.
func ApplyOps(root any, ops []Op) (any, error) {
	for i, op := range ops {
		var err error
		root, err = applyOne(root, op)
		if err != nil {
			return nil, fmt.Errorf("patch operation %d (%s %s): %w", i, op.Op, op.Path, err)
		}
	}
	return root, nil
}

// Decode reads a JSON document into plain Go values, keeping numbers as
// json.Number so that they survive a round trip unchanged.
func Decode(doc []byte) (any, error) { return decode(doc) }

func decode(doc []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func applyOne(root any, op Op) (any, error) {
	tokens, err := ParsePointer(op.Path)
	if err != nil {
		return nil, err
	}
	switch op.Op {
	case "add", "replace":
		if op.Value == nil {
			return nil, errors.New("missing value")
		}
		value, err := decode(op.Value)
		if err != nil {
			return nil, fmt.Errorf("decode value: %w", err)
		}
		return set(root, tokens, value, op.Op == "replace")
	case "remove":
		if len(tokens) == 0 {
			return nil, errors.New("cannot remove the whole document")
		}
		return remove(root, tokens)
	default:
		return nil, fmt.Errorf("unsupported operation %q (add, remove and replace are supported)", op.Op)
	}
}

// ParsePointer splits an RFC 6901 JSON Pointer into its unescaped reference
// tokens. "" is the whole document.
func ParsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("path %q is not a JSON Pointer: it must start with \"/\"", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, part := range parts {
		if !strings.Contains(part, "~") {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(part); j++ {
			if part[j] != '~' {
				b.WriteByte(part[j])
				continue
			}
			if j+1 >= len(part) || (part[j+1] != '0' && part[j+1] != '1') {
				return nil, fmt.Errorf("path %q has an invalid escape: \"~\" must be followed by 0 or 1", p)
			}
			if part[j+1] == '0' {
				b.WriteByte('~')
			} else {
				b.WriteByte('/')
			}
			j++
		}
		parts[i] = b.String()
	}
	return parts, nil
}

// EscapeToken escapes one reference token for a JSON Pointer: "~" → "~0",
// then "/" → "~1".
func EscapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// set implements add (replace=false) and replace (replace=true) at tokens
// below node and returns the new node.
func set(node any, tokens []string, value any, replace bool) (any, error) {
	if len(tokens) == 0 {
		return value, nil
	}
	tok, rest := tokens[0], tokens[1:]
	switch n := node.(type) {
	case map[string]any:
		if len(rest) == 0 {
			if _, ok := n[tok]; replace && !ok {
				return nil, fmt.Errorf("member %q does not exist", tok)
			}
			n[tok] = value
			return n, nil
		}
		child, ok := n[tok]
		if !ok {
			return nil, fmt.Errorf("member %q does not exist", tok)
		}
		updated, err := set(child, rest, value, replace)
		if err != nil {
			return nil, err
		}
		n[tok] = updated
		return n, nil
	case []any:
		if len(rest) == 0 {
			if tok == "-" {
				if replace {
					return nil, errors.New(`"-" cannot be replaced`)
				}
				return append(n, value), nil
			}
			limit := len(n) - 1
			if !replace {
				limit = len(n) // add may insert at the end
			}
			i, err := index(tok, limit)
			if err != nil {
				return nil, err
			}
			if replace {
				n[i] = value
				return n, nil
			}
			n = append(n, nil)
			copy(n[i+1:], n[i:])
			n[i] = value
			return n, nil
		}
		i, err := index(tok, len(n)-1)
		if err != nil {
			return nil, err
		}
		updated, err := set(n[i], rest, value, replace)
		if err != nil {
			return nil, err
		}
		n[i] = updated
		return n, nil
	default:
		return nil, fmt.Errorf("cannot descend into %s with %q", kind(node), tok)
	}
}

func remove(node any, tokens []string) (any, error) {
	tok, rest := tokens[0], tokens[1:]
	switch n := node.(type) {
	case map[string]any:
		child, ok := n[tok]
		if !ok {
			return nil, fmt.Errorf("member %q does not exist", tok)
		}
		if len(rest) == 0 {
			delete(n, tok)
			return n, nil
		}
		updated, err := remove(child, rest)
		if err != nil {
			return nil, err
		}
		n[tok] = updated
		return n, nil
	case []any:
		i, err := index(tok, len(n)-1)
		if err != nil {
			return nil, err
		}
		if len(rest) == 0 {
			return append(n[:i], n[i+1:]...), nil
		}
		updated, err := remove(n[i], rest)
		if err != nil {
			return nil, err
		}
		n[i] = updated
		return n, nil
	default:
		return nil, fmt.Errorf("cannot descend into %s with %q", kind(node), tok)
	}
}

// index parses an array index token (decimal, no leading zeros) and checks
// 0 <= i <= limit.
func index(tok string, limit int) (int, error) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') || strings.TrimLeft(tok, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not an array index", tok)
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i > limit {
		return 0, fmt.Errorf("array index %s is out of range", tok)
	}
	return i, nil
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	default:
		return fmt.Sprintf("%T", v)
	}
}
