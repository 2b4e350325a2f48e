// Package jsonpatch applies RFC 6902 patches for the offline door (inject)
// and for tests that re-admit a patched pod, with evanphx/json-patch (v4),
// the engine the API server applies a mutating webhook's patch with, so that
// what inject prints is what the cluster stores (the RFC 6901 pointer helpers
// are frontdoor/jsonpointer's). The front door itself never applies patches
// and never computes them with a library (spec 03 §4.1).
package jsonpatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	evanphx "gopkg.in/evanphx/json-patch.v4"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonout"
)

// Op is one JSON Patch operation.
type Op struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Apply applies the JSON Patch document patch (a JSON array of operations) to
// the JSON document doc as the API server does, and returns the result as
// compact JSON with HTML escaping off and numbers as written. The first
// failing operation stops the whole patch and nothing is returned.
func Apply(doc, patch []byte) ([]byte, error) {
	p, err := evanphx.DecodePatch(patch)
	if err != nil {
		return nil, fmt.Errorf("decode patch: %w", err)
	}
	if _, err := decode(doc); err != nil {
		return nil, fmt.Errorf("decode document: %w", err)
	}
	patched, err := p.Apply(doc)
	if err != nil {
		return nil, fmt.Errorf("apply patch: %w", err)
	}
	root, err := decode(patched)
	if err != nil {
		return nil, fmt.Errorf("decode the patched document: %w", err)
	}
	return jsonout.Marshal(root)
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
