package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// WriteYAMLStream writes JSON documents as one YAML stream, the documents
// separated by `---` (what kubectl reads). A document that does not convert
// fails with what(i) in front of the error.
func WriteYAMLStream(w io.Writer, docs [][]byte, what func(i int) string) error {
	for i, doc := range docs {
		y, err := yaml.JSONToYAML(doc)
		if err != nil {
			return fmt.Errorf("%s: %w", what(i), err)
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(y); err != nil {
			return err
		}
	}
	return nil
}

// WriteIndentedJSON writes one JSON value indented by two spaces, with a
// final newline (what jq and kubectl read).
func WriteIndentedJSON(w io.Writer, value []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, value, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}
