package whatif

import (
	"encoding/json"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
)

// valueAt is a differing path's value in one admission (--show-values), as
// compact JSON ("" when absent): a plan path is read from the pod the patch
// made — containers[NAME] and initContainers[NAME] by name, then fields,
// args[--flag] the flag's arguments, env[NAME] and volumeMounts[NAME] by
// name, a map's key — and outcome, refusals[…] and warnings[…] from the
// answer. The values are the pod's own and the installation's: what the
// command prints is for the one who runs it, never a log.
func valueAt(a *engine.Admitted, path string) string {
	switch {
	case path == "outcome" || path == "skipReason":
		return outcome(a)
	case strings.HasPrefix(path, "refusals["):
		if a.Refused() && a.Answer.Status != nil {
			return a.Answer.Status.Message
		}
		return ""
	case strings.HasPrefix(path, "warnings["):
		return strings.Join(a.Answer.Warnings, "; ")
	case a.Mutated == nil:
		return ""
	}
	var pod map[string]any
	if json.Unmarshal(a.Mutated, &pod) != nil {
		return ""
	}
	at := pod["spec"]
	if strings.HasPrefix(path, "metadata.") {
		at, path = pod["metadata"], strings.TrimPrefix(path, "metadata.")
	}
	for _, seg := range segments(path) {
		if at = step(at, seg); at == nil {
			return ""
		}
	}
	out, _ := json.Marshal(at)
	return string(out)
}

// outcome names what the answer did: refused, injected or not.
func outcome(a *engine.Admitted) string {
	switch {
	case a.Refused():
		return "refused"
	case string(a.Patch) != "[]":
		return "injected"
	}
	return "not injected"
}

// segment is one step of a path: a field and, in brackets, a selector.
type segment struct{ field, selector string }

// segments splits containers[a.b].args[--x] at the dots outside brackets.
func segments(path string) []segment {
	var out []segment
	depth, start := 0, 0
	for i := 0; i <= len(path); i++ {
		switch {
		case i < len(path) && path[i] == '[':
			depth++
		case i < len(path) && path[i] == ']':
			depth--
		case i == len(path) || (path[i] == '.' && depth == 0):
			field, sel, _ := strings.Cut(path[start:i], "[")
			out = append(out, segment{field, strings.TrimSuffix(sel, "]")})
			start = i + 1
		}
	}
	return out
}

// step takes one segment from at (nil when absent).
func step(at any, s segment) any {
	m, ok := at.(map[string]any)
	if !ok {
		return nil
	}
	v := m[s.field]
	if s.field == "containers" && byName(v, s.selector) == nil {
		v = m["initContainers"] // an agent placed as a native sidecar
	}
	if s.selector == "" {
		return v
	}
	switch v := v.(type) {
	case map[string]any:
		return v[s.selector]
	case []any:
		if s.field == "args" {
			return flagArgs(v, s.selector)
		}
		return byName(v, s.selector)
	}
	return nil
}

// byName is the element of a list of objects whose name is name.
func byName(list any, name string) any {
	items, _ := list.([]any)
	for _, item := range items {
		if m, ok := item.(map[string]any); ok && m["name"] == name {
			return m
		}
	}
	return nil
}

// flagArgs are the arguments of flag: --flag=v, or --flag and the
// arguments up to the next flag.
func flagArgs(args []any, flag string) any {
	var out []any
	for i := 0; i < len(args); i++ {
		s, _ := args[i].(string)
		if s != flag && !strings.HasPrefix(s, flag+"=") {
			continue
		}
		out = append(out, s)
		for i+1 < len(args) {
			next, _ := args[i+1].(string)
			if strings.HasPrefix(next, "-") {
				break
			}
			out = append(out, next)
			i++
		}
	}
	if out == nil {
		return nil
	}
	return out
}
