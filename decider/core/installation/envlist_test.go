package installation

import (
	"reflect"
	"testing"
)

func TestEnvListGrammar(t *testing.T) {
	const c = "DYNAMIC_CONFIG_AGENT_ENV"
	tests := []struct {
		name     string
		text     string
		entries  []EnvEntry
		problems []string
	}{
		{"the seed's fleet environment", "HTTPS_PROXY=http://egress.infra.svc:3128, RUST_LOG=info",
			[]EnvEntry{{"HTTPS_PROXY", "http://egress.infra.svc:3128"}, {"RUST_LOG", "info"}}, nil},
		{"entries are trimmed, the value after = is kept as-is", " A = x y ,B=", []EnvEntry{{"A", " x y"}, {"B", ""}}, nil},
		{"a value may hold =", "OPTS=a=b", []EnvEntry{{"OPTS", "a=b"}}, nil},
		{"empty entries are skipped", ",A=1,,", []EnvEntry{{"A", "1"}}, nil},
		{"an entry without =", "A=1, B", []EnvEntry{{"A", "1"}},
			[]string{c + ` holds "B": comma-separated NAME=value pairs (a value itself cannot contain a comma)`}},
		{"an entry with a URL password is redacted", "http://u:p@proxy:3128",
			nil, []string{c + ` holds "http://…@proxy:3128": comma-separated NAME=value pairs (a value itself cannot contain a comma)`}},
		{"a name that is not UPPER_SNAKE", "rust_log=info", nil,
			[]string{c + ` names "rust_log": variable names are UPPER_SNAKE, like "RUST_LOG"`}},
		{"a repeated name", "A=1, A=2", []EnvEntry{{"A", "1"}}, []string{c + ` sets A twice`}},
		{"nothing left", " , ", nil, []string{c + ` is present and names nothing: drop it or fill it`}},
		{"a name the injection sets itself", "DYNAMIC_CONFIG_AGENT_TOKEN=x", nil,
			[]string{c + ` sets DYNAMIC_CONFIG_AGENT_TOKEN, which the injection sets itself: drop it`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, problems := ParseEnvList(c, tt.text)
			if !reflect.DeepEqual(entries, tt.entries) || !reflect.DeepEqual(problems, tt.problems) {
				t.Errorf("got %q %q\nwant %q %q", entries, problems, tt.entries, tt.problems)
			}
		})
	}
	t.Run("the document form names its path and variable with no colon", func(t *testing.T) {
		assertLines(t, problemLines(t, "agentEnv: \"a=1\"\n"),
			[]string{`agentEnv [DYNAMIC_CONFIG_AGENT_ENV] names "a": variable names are UPPER_SNAKE, like "RUST_LOG"`})
	})
}
