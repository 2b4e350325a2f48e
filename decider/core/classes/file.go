package classes

import (
	"fmt"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/internal/textcut"
)

// FileError is an invalid --classes-file: every problem, one a line, each
// "FILE: document N (Kind ns/name): …" (spec 08 §2).
type FileError struct {
	Problems []string
}

func (e *FileError) Error() string { return strings.Join(e.Problems, "\n") }

// Document is one non-empty document of a --classes-file stream, decoded by
// the loader (decider/classloader.Parse): Object is the JSON object it holds
// (nil: the document is not an object), or Err says why the stream could not
// be decoded at this document (the last document the loader hands over).
type Document struct {
	Object map[string]any
	Err    error
}

// FromDocuments builds the set of the documents of file name, numbered from
// 1 in order (a v1 List's items count as documents of their own, numbered
// N.M). Any undecodable document or invalid object is a *FileError listing
// every problem. Decoding the text is the loader's (decider/classloader).
func FromDocuments(name string, docs []Document) (*Set, error) {
	var list []Class
	var problems []string
	seen := map[string]string{}
	add := func(where string, obj map[string]any) {
		c, ps := FromObject(obj)
		label := objectLabel(obj)
		for _, p := range ps {
			problems = append(problems, fmt.Sprintf("%s: %s (%s): %s", name, where, label, p))
		}
		if len(ps) > 0 {
			return
		}
		id := c.Kind + " " + c.ShortRef()
		if first, dup := seen[id]; dup {
			problems = append(problems, fmt.Sprintf("%s: %s (%s): the same class as %s", name, where, label, first))
			return
		}
		seen[id] = where
		list = append(list, c)
	}
	for i, doc := range docs {
		n := i + 1
		if doc.Err != nil {
			problems = append(problems, fmt.Sprintf("%s: document %d: %v", name, n, doc.Err))
			break
		}
		obj := doc.Object
		if obj == nil {
			problems = append(problems, fmt.Sprintf("%s: document %d: not an object", name, n))
			continue
		}
		if kind, _ := obj["kind"].(string); kind == "List" || strings.HasSuffix(kind, "List") && obj["items"] != nil {
			items, _ := obj["items"].([]any)
			for m, it := range items {
				o, ok := it.(map[string]any)
				if !ok {
					problems = append(problems, fmt.Sprintf("%s: document %d.%d: not an object", name, n, m+1))
					continue
				}
				add(fmt.Sprintf("document %d.%d", n, m+1), o)
			}
			continue
		}
		add(fmt.Sprintf("document %d", n), obj)
	}
	if len(problems) > 0 {
		return nil, &FileError{Problems: problems}
	}
	return NewSet(list), nil
}

// objectLabel is "Kind ns/name" as far as the object says.
func objectLabel(obj map[string]any) string {
	kind, _ := obj["kind"].(string)
	if kind == "" {
		kind = "no kind"
	}
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	switch {
	case name == "":
		name = "unnamed"
	case ns != "":
		name = ns + "/" + name
	}
	return textcut.Runes(kind+" "+name, textcut.MessageLimit) // unchecked names: any length
}
