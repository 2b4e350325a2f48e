package installation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
	yaml "go.yaml.in/yaml/v3"
)

// document is the installation document as read: its path, whether it
// exists, and its top-level map (nil for the empty document).
type document struct {
	path    string
	present bool
	blank   bool // present, and empty, whitespace or comments only
	unread  bool // it could not be read or parsed (or was refused as blank)
	root    *yaml.Node
}

// readDocument reads and parses the document at path (spec 02 §1, §5.3).
// Problems go to the shape section of the report.
// With refuseBlank a blank document is a problem (a reload, 02 §11).
func readDocument(path string, explicit, refuseBlank bool, rep *report) document {
	d := document{path: path}
	if path == "" {
		return d
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if explicit {
				rep.shape = append(rep.shape, path+": the installation document does not exist")
				d.unread = true
			}
			return d
		}
		rep.shape = append(rep.shape, path+": the installation document cannot be read: "+unwrapPathError(err))
		d.unread = true
		return d
	}
	d.present = true
	d.blank = blankDocument(data)
	if d.blank && refuseBlank {
		rep.shape = append(rep.shape, BlankDocumentProblem)
		d.unread = true
		return d
	}
	root, problem := parseDocument(path, data)
	if problem != "" {
		rep.shape = append(rep.shape, problem)
		d.unread = true
		return d
	}
	d.root = root
	return d
}

func unwrapPathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// blankDocument reports whether data is empty or holds only whitespace and
// "#" comment lines: the empty document whatever the file's name.
func blankDocument(data []byte) bool {
	for _, line := range bytes.Split(data, []byte("\n")) {
		l := bytes.Trim(line, asciiSpace)
		if len(l) != 0 && l[0] != '#' {
			return false
		}
	}
	return true
}

// parseDocument parses data by the extension of path into a mapping node;
// nil for the empty document. problem is a shape problem.
func parseDocument(path string, data []byte) (*yaml.Node, string) {
	if blankDocument(data) {
		return nil, ""
	}
	var root *yaml.Node
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, path + ": the installation document is not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")
		}
		root = resolve(&doc)
	case ".json":
		n, err := jsonToNode(data)
		if err != nil {
			return nil, path + ": the installation document is not valid JSON: " + err.Error()
		}
		root = n
	case ".toml":
		n, err := tomlToNode(data)
		if err != nil {
			return nil, path + ": the installation document is not valid TOML: " + err.Error()
		}
		root = n
	default:
		return nil, path + ": the installation document's format comes from its extension: .yaml, .yml, .json or .toml"
	}
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, "the installation document is a map of settings"
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

// tomlToNode reads a TOML document into a yaml.Node tree in document order.
// Numbers are rendered with strconv.FormatInt / FormatFloat('g', -1) (spec
// 02 §5.3: TOML does not keep the literal text).
func tomlToNode(data []byte) (*yaml.Node, error) {
	var check map[string]any
	if err := toml.Unmarshal(data, &check); err != nil {
		return nil, err
	}
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	current := root
	p := unstable.Parser{}
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			current = tomlDescend(root, tomlKey(e.Key()), false)
		case unstable.ArrayTable:
			current = tomlDescend(root, tomlKey(e.Key()), true)
		case unstable.KeyValue:
			keys := tomlKey(e.Key())
			parent := tomlDescend(current, keys[:len(keys)-1], false)
			v, err := tomlValue(e.Value())
			if err != nil {
				return nil, err
			}
			parent.Content = append(parent.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: keys[len(keys)-1]}, v)
		}
	}
	if err := p.Error(); err != nil {
		return nil, err
	}
	return root, nil
}

func tomlKey(it unstable.Iterator) []string {
	var keys []string
	for it.Next() {
		keys = append(keys, string(it.Node().Data))
	}
	return keys
}

// tomlDescend walks (creating) the tables named by keys under m. For an
// array table the last key's list gets a new map, which is returned.
func tomlDescend(m *yaml.Node, keys []string, array bool) *yaml.Node {
	for i, k := range keys {
		var child *yaml.Node
		for j := 0; j+1 < len(m.Content); j += 2 {
			if m.Content[j].Value == k {
				child = m.Content[j+1]
			}
		}
		last := i == len(keys)-1
		if child == nil {
			if last && array {
				child = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			} else {
				child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, child)
		}
		if child.Kind == yaml.SequenceNode {
			if last && array {
				item := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				child.Content = append(child.Content, item)
				return item
			}
			if len(child.Content) == 0 {
				return child
			}
			child = child.Content[len(child.Content)-1]
		}
		m = child
	}
	return m
}

func tomlValue(n *unstable.Node) (*yaml.Node, error) {
	switch n.Kind {
	case unstable.String:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(n.Data), Style: yaml.DoubleQuotedStyle}, nil
	case unstable.Bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: string(n.Data)}, nil
	case unstable.Integer:
		i, err := tomlInt(string(n.Data))
		if err != nil {
			return nil, err
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(i, 10)}, nil
	case unstable.Float:
		f, err := tomlFloat(string(n.Data))
		if err != nil {
			return nil, err
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(f, 'g', -1, 64)}, nil
	case unstable.LocalDate, unstable.LocalTime, unstable.LocalDateTime, unstable.DateTime:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(n.Data)}, nil
	case unstable.Array:
		out := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		it := n.Children()
		for it.Next() {
			v, err := tomlValue(it.Node())
			if err != nil {
				return nil, err
			}
			out.Content = append(out.Content, v)
		}
		return out, nil
	case unstable.InlineTable:
		out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		it := n.Children()
		for it.Next() {
			kv := it.Node()
			keys := tomlKey(kv.Key())
			parent := tomlDescend(out, keys[:len(keys)-1], false)
			v, err := tomlValue(kv.Value())
			if err != nil {
				return nil, err
			}
			parent.Content = append(parent.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: keys[len(keys)-1]}, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported TOML value %s", n.Kind)
}

func tomlInt(s string) (int64, error) {
	s = strings.ReplaceAll(s, "_", "")
	neg := false
	switch {
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	}
	base := 10
	switch {
	case strings.HasPrefix(s, "0x"):
		base, s = 16, s[2:]
	case strings.HasPrefix(s, "0o"):
		base, s = 8, s[2:]
	case strings.HasPrefix(s, "0b"):
		base, s = 2, s[2:]
	}
	if neg {
		s = "-" + s
	}
	return strconv.ParseInt(s, base, 64)
}

func tomlFloat(s string) (float64, error) {
	return strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
}
