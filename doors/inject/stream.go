package inject

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
)

// listKind is the kind of the list object kubectl writes for several objects.
const listKind = "List"

// writeManifestStream writes the mutated documents as one stream that
// kubectl and jq read (issue 20): YAML documents separated by `---`, or in
// JSON the object itself when there is one, else one v1 List holding every
// object (a List document's items are its objects).
func writeManifestStream(w io.Writer, written []*Result, format string) error {
	if format == OutputJSON {
		return writeJSONStream(w, written)
	}
	docs := make([][]byte, 0, len(written))
	for _, r := range written {
		docs = append(docs, r.Mutated)
	}
	return manifest.WriteYAMLStream(w, docs, func(i int) string { return written[i].Doc.File + ": write YAML" })
}

// writeJSONStream writes one indented JSON value: the only document as it
// is, or a v1 List of every object.
func writeJSONStream(w io.Writer, written []*Result) error {
	var value []byte
	switch len(written) {
	case 0:
		return nil
	case 1:
		value = written[0].Mutated
	default:
		items := make([]json.RawMessage, 0, len(written))
		for _, r := range written {
			objects, err := streamObjects(r)
			if err != nil {
				return err
			}
			items = append(items, objects...)
		}
		list, err := json.Marshal(struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Items      []json.RawMessage `json:"items"`
		}{"v1", listKind, items})
		if err != nil {
			return err
		}
		value = list
	}
	return manifest.WriteIndentedJSON(w, value)
}

// streamObjects are the objects one document adds to a List: a List's
// items, else the document itself.
func streamObjects(r *Result) ([]json.RawMessage, error) {
	if r.Doc.Head.Kind != listKind {
		return []json.RawMessage{r.Mutated}, nil
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(r.Mutated, &list); err != nil {
		return nil, fmt.Errorf("%s: a List whose items are not objects: %w", r.Doc.Where(), err)
	}
	return list.Items, nil
}
