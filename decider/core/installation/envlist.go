package installation

import (
	"regexp"
	"slices"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

var upperSnake = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// ReservedAgentEnv are the names the injection sets itself on the agent
// (spec 02 §5.4): a fleet or pod agent environment may not set them.
var ReservedAgentEnv = []string{
	"DYNAMIC_CONFIG_AGENT_TOKEN", "DYNAMIC_CONFIG_AGENT_PASSWORD", "DYNAMIC_CONFIG_AGENT_ENDPOINT",
	"DYNAMIC_CONFIG_POD_NAME", "DYNAMIC_CONFIG_POD_UID",
}

// ParseEnvList parses a `NAME=value, …` list (spec 02 §5.4) with ctx as the
// subject of its messages (note: no colon after ctx). It returns the entries
// in declaration order and every problem.
func ParseEnvList(subject, text string) ([]EnvEntry, []string) {
	var entries []EnvEntry
	var problems []string
	seen := map[string]bool{}
	named := false
	for _, part := range strings.Split(text, ",") {
		entry := trim(part)
		if entry == "" {
			continue
		}
		named = true
		name, value, ok := strings.Cut(entry, "=")
		if !ok {
			problems = append(problems, subject+" holds "+redact.Quote(entry)+": comma-separated NAME=value pairs (a value itself cannot contain a comma)")
			continue
		}
		name = trim(name)
		if !upperSnake.MatchString(name) {
			problems = append(problems, subject+" names "+redact.Quote(name)+`: variable names are UPPER_SNAKE, like "RUST_LOG"`)
			continue
		}
		if seen[name] {
			problems = append(problems, subject+" sets "+name+" twice")
			continue
		}
		seen[name] = true
		if slices.Contains(ReservedAgentEnv, name) {
			problems = append(problems, subject+" sets "+name+", which the injection sets itself: drop it")
			continue
		}
		entries = append(entries, EnvEntry{Name: name, Value: value})
	}
	if !named {
		problems = append(problems, subject+" is present and names nothing: drop it or fill it")
	}
	return entries, problems
}

// FormatEnvList writes entries as the canonical `NAME=value, …` text.
func FormatEnvList(entries []EnvEntry) string {
	parts := make([]string, len(entries))
	for i, e := range entries {
		parts[i] = e.Name + "=" + e.Value
	}
	return strings.Join(parts, ", ")
}
