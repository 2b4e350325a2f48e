package docparse

// TOML documents: read with go-toml's parser into the same tree as YAML.

import (
	"fmt"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
	yaml "go.yaml.in/yaml/v3"
)

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
