package chart

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
	"github.com/dynamic-config-admission/dynamic-config/internal/suggest"
)

// The chart's schema refuses a value it does not name wherever it closes an
// object (additionalProperties false), and `helm install` with it; --values
// says so first, naming the value's path and, within two edits, the one it
// may mean (issue 40): "agent.defaults.fileMod is not a chart value: did you
// mean agent.defaults.fileMode?".

// fleetPath is where the fleet defaults are: the installation document's
// top level, whose own check names an unknown key.
const fleetPath = "agent.defaults."

// schemaNode is the part of a JSON schema the check reads.
type schemaNode struct {
	Ref                  string                 `json:"$ref"`
	Properties           map[string]*schemaNode `json:"properties"`
	AdditionalProperties json.RawMessage        `json:"additionalProperties"`
}

// valuesSchema is the chart's schema, root and definitions.
type valuesSchema struct {
	schemaNode
	Definitions map[string]*schemaNode `json:"definitions"`
}

// closed reports whether n names every key its object may hold.
func (n *schemaNode) closed() bool {
	return n.Properties != nil && strings.TrimSpace(string(n.AdditionalProperties)) == "false"
}

// unknownValues are the problems of the user's values (over) that the
// schema does not name, in document order.
func unknownValues(over *doctree.Node) []string {
	var s valuesSchema
	if over == nil || json.Unmarshal(Schema, &s) != nil {
		return nil // embedded at build time; the chart tests keep it JSON
	}
	var out []string
	var walk func(n *schemaNode, v *doctree.Node, path string)
	walk = func(n *schemaNode, v *doctree.Node, path string) {
		for depth := 0; n != nil && n.Ref != "" && depth < 8; depth++ {
			n = s.Definitions[strings.TrimPrefix(n.Ref, "#/definitions/")]
		}
		if n == nil || !n.closed() || v == nil || v.Kind != doctree.Mapping {
			return
		}
		for _, p := range doctree.Pairs(v) {
			child, ok := n.Properties[p.Key]
			if ok {
				walk(child, p.Value, path+p.Key+".")
				continue
			}
			line := path + p.Key + " is not a chart value"
			names := make([]string, 0, len(n.Properties))
			for name := range n.Properties {
				names = append(names, name)
			}
			slices.Sort(names)
			switch meant, ok := suggest.Closest(p.Key, names); {
			case ok:
				line += ": did you mean " + path + meant + "?"
			case path == fleetPath:
				continue // the installation's own message names it (a per-store knob…)
			default:
				line += " (the chart's values.schema.json refuses it; its values are in values.yaml)"
			}
			out = append(out, line)
		}
	}
	walk(&s.schemaNode, over, "")
	return out
}
