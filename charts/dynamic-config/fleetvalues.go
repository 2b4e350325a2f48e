package chart

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// A fleet default is a chart value: agent.defaults.<name> in values.yaml and
// in the strict values.schema.json. Both files are hand-written — each value
// has its comment, and its schema the value's own pattern — but a fleet key
// the table gains is added to both by `make docs` (FleetValues,
// FleetSchema: an empty default and a string schema named by the row's
// grammar), and `make check-docs` fails while one is missing. Lines already
// there are never rewritten.

// The starts of the lines both files are anchored at: agent.defaults.perStore,
// the map value that closes the scalar fleet defaults in each.
const (
	perStoreValueLine  = "    perStore:"
	perStoreSchemaLine = `            "perStore": {`
	// valuesCommentColumn is where values.yaml's agent.defaults comments start.
	valuesCommentColumn = 29
)

// missingFleetKeys are the table's fleet keys has does not report present,
// in the table's order, each with the row that owns it.
func missingFleetKeys(has func(value string) bool) []fleetRow {
	var out []fleetRow
	for _, id := range registry.Fleet() {
		r := id.Row()
		value, ok := strings.CutPrefix(r.Setting.ChartValue, defaultsPrefix)
		if ok && value != perStoreValue && !has(value) {
			out = append(out, fleetRow{value: value, row: r})
		}
	}
	return out
}

// fleetRow is a fleet key's chart value and its registry row.
type fleetRow struct {
	value string
	row   *registry.Row
}

// FleetValues is values (values.yaml) with every fleet key it lacks added
// under agent.defaults, before perStore: `<name>: ""` (not set) and the
// row's documentation as its comment.
func FleetValues(values []byte) ([]byte, error) {
	root, err := parseValues(values)
	if err != nil {
		return nil, err
	}
	defaults := lookupPath(root, "agent", "defaults")
	if defaults == nil {
		return nil, fmt.Errorf("no agent.defaults map")
	}
	missing := missingFleetKeys(func(v string) bool { return lookupPath(defaults, v) != nil })
	if len(missing) == 0 {
		return values, nil
	}
	var add strings.Builder
	for _, m := range missing {
		line := "    " + m.value + `: ""`
		add.WriteString(line + strings.Repeat(" ", max(valuesCommentColumn-len(line), 1)) + "# " + m.row.Doc + "\n")
	}
	return insertBefore(values, perStoreValueLine, add.String())
}

// FleetSchema is schema (values.schema.json) with every fleet key it lacks
// added to agent.defaults' properties, before perStore: a string described
// by the row's grammar (tighten it by hand to the value's pattern).
func FleetSchema(schema []byte) ([]byte, error) {
	var doc struct {
		Properties struct {
			Agent struct {
				Properties struct {
					Defaults struct {
						Properties map[string]json.RawMessage `json:"properties"`
					} `json:"defaults"`
				} `json:"properties"`
			} `json:"agent"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &doc); err != nil {
		return nil, err
	}
	have := doc.Properties.Agent.Properties.Defaults.Properties
	missing := missingFleetKeys(func(v string) bool { _, ok := have[v]; return ok })
	if len(missing) == 0 {
		return schema, nil
	}
	var add strings.Builder
	for _, m := range missing {
		desc, err := jsonString(fmt.Sprintf(`%s (%s; a trailing "!" pins, "?" opens)`, m.value, m.row.GrammarText))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&add, "            %q: {\n              \"type\": \"string\",\n              \"description\": %s\n            },\n", m.value, desc)
	}
	return insertBefore(schema, perStoreSchemaLine, add.String())
}

// insertBefore inserts text before the one line of data that starts with
// anchor.
func insertBefore(data []byte, anchor, text string) ([]byte, error) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	at := -1
	for i, l := range lines {
		if bytes.HasPrefix(l, []byte(anchor)) {
			if at >= 0 {
				return nil, fmt.Errorf("more than one line %q", anchor)
			}
			at = i
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("no line %q", anchor)
	}
	var out bytes.Buffer
	for i, l := range lines {
		if i == at {
			out.WriteString(text)
		}
		out.Write(l)
	}
	return out.Bytes(), nil
}

// jsonString is s as a JSON string, without HTML escaping (the schema's own
// style).
func jsonString(s string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
