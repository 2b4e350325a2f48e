package docparse

import (
	"errors"
	"io"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
)

// Text decodes text holding one YAML or JSON document — the value of an
// environment variable such as DYNAMIC_CONFIG_ENV_POLICY — into a tree. The
// error says why the text is not one document: the parser's message without
// its "yaml: " prefix, or "more than one document". It is the
// envpolicy.DecodeText the loader hands the installation model.
func Text(text string) (*doctree.Node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&doc); err != nil {
		return nil, textError{err}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, textError{err}
		}
		return nil, errors.New("more than one document")
	}
	return FromYAML(&doc), nil
}

// textError is the parser's error, shown without its "yaml: " prefix.
type textError struct{ err error }

func (e textError) Error() string { return strings.TrimPrefix(e.err.Error(), "yaml: ") }
func (e textError) Unwrap() error { return e.err }
