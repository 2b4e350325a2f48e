package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// withFoundationEnv replaces the process environment the flag sets read.
func withFoundationEnv(t *testing.T, env map[string]string) {
	t.Helper()
	old := lookupEnvVar
	lookupEnvVar = func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
	t.Cleanup(func() { lookupEnvVar = old })
}

func TestFlagPrecedence(t *testing.T) {
	type result struct {
		addr       string
		plaintext  bool
		grace      time.Duration
		reflection bool
	}
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want result
	}{
		{"the default applies when neither flag nor variable is given", nil, nil,
			result{"0.0.0.0:9090", false, 30 * time.Second, true}},
		{"a variable wins over the default", nil,
			map[string]string{"DYNAMIC_CONFIG_DECIDER_ADDR": "127.0.0.1:1", "DYNAMIC_CONFIG_DECIDER_PLAINTEXT": "1", "DYNAMIC_CONFIG_DECIDER_SHUTDOWN_GRACE": "5s"},
			result{"127.0.0.1:1", true, 5 * time.Second, true}},
		{"a flag wins over its variable", []string{"--addr", "127.0.0.1:2", "--plaintext=false", "--shutdown-grace", "7s"},
			map[string]string{"DYNAMIC_CONFIG_DECIDER_ADDR": "127.0.0.1:1", "DYNAMIC_CONFIG_DECIDER_PLAINTEXT": "true", "DYNAMIC_CONFIG_DECIDER_SHUTDOWN_GRACE": "5s"},
			result{"127.0.0.1:2", false, 7 * time.Second, true}},
		{"an empty variable leaves a bool and a duration at their defaults", nil,
			map[string]string{"DYNAMIC_CONFIG_DECIDER_PLAINTEXT": "", "DYNAMIC_CONFIG_DECIDER_SHUTDOWN_GRACE": ""},
			result{"0.0.0.0:9090", false, 30 * time.Second, true}},
		{"an empty variable sets a string flag empty", nil,
			map[string]string{"DYNAMIC_CONFIG_DECIDER_ADDR": ""},
			result{"", false, 30 * time.Second, true}},
		{"--reflection=false turns reflection off", []string{"--reflection=false"}, nil,
			result{"0.0.0.0:9090", false, 30 * time.Second, false}},
		{"DYNAMIC_CONFIG_DECIDER_REFLECTION=false turns reflection off", nil,
			map[string]string{"DYNAMIC_CONFIG_DECIDER_REFLECTION": "false"},
			result{"0.0.0.0:9090", false, 30 * time.Second, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withFoundationEnv(t, c.env)
			var stderr bytes.Buffer
			fs := newFlagSet("decider", &stderr)
			var f deciderFlags
			f.register(fs)
			if err := fs.parse(c.args); err != nil {
				t.Fatalf("parse: %v (%s)", err, stderr.String())
			}
			got := result{f.addr, f.plaintext, f.shutdownGrace, f.reflection}
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestFlagErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"an invalid bool variable names the variable and what it accepts", nil,
			map[string]string{"DYNAMIC_CONFIG_DECIDER_PLAINTEXT": "yes"},
			`decider: DYNAMIC_CONFIG_DECIDER_PLAINTEXT is "yes": want 1, true, 0 or false`},
		{"an invalid duration variable names the variable and what it accepts", nil,
			map[string]string{"DYNAMIC_CONFIG_DECIDER_RELOAD_INTERVAL": "10"},
			`decider: DYNAMIC_CONFIG_DECIDER_RELOAD_INTERVAL is "10": want a duration such as 10s`},
		{"an invalid number variable names the variable and what it accepts", nil,
			map[string]string{"DYNAMIC_CONFIG_DECIDER_MAX_RECV_BYTES": "8MiB"},
			`decider: DYNAMIC_CONFIG_DECIDER_MAX_RECV_BYTES is "8MiB": want a whole number`},
		{"a stray argument is a usage error", []string{"extra"}, nil,
			`decider: unexpected argument "extra"`},
		{"an unknown log level is a usage error", []string{"--log-level", "trace"}, nil,
			`decider: --log-level is "trace": debug, info, warn or error`},
		{"an unknown log format is a usage error", nil, map[string]string{"DYNAMIC_CONFIG_LOG_FORMAT": "xml"},
			`decider: --log-format is "xml": json or text`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withFoundationEnv(t, c.env)
			var stderr bytes.Buffer
			code := deciderMain(t.Context(), c.args, &stderr)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr %q, want it to contain %q", stderr.String(), c.want)
			}
		})
	}
}
