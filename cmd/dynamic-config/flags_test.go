package main

import (
	"bytes"
	"flag"
	"io"
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
			got := result{f.cfg.Addr, f.plaintext, f.cfg.ShutdownGrace, f.cfg.Reflection}
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
			map[string]string{"DYNAMIC_CONFIG_DECIDER_MAX_REQUEST_BYTES": "7MiB"},
			`decider: DYNAMIC_CONFIG_DECIDER_MAX_REQUEST_BYTES is "7MiB": want a whole number`},
		{"a stray argument is a usage error", []string{"extra"}, nil,
			`decider: unexpected argument "extra"`},
		{"an unknown log level is a usage error", []string{"--log-level", "trace"}, nil,
			`decider: --log-level is "trace": debug, info, warn or error`},
		{"an unknown log format is a usage error", nil, map[string]string{"DYNAMIC_CONFIG_LOG_FORMAT": "xml"},
			`decider: --log-format is "xml": json or text`},
		{"the removed --max-recv-bytes is refused, naming its replacement", []string{"--max-recv-bytes", "8388608"}, nil,
			`decider: --max-recv-bytes is replaced by --max-request-bytes`},
		{"the removed variable DYNAMIC_CONFIG_DECIDER_MAX_RECV_BYTES is refused too", nil,
			map[string]string{"DYNAMIC_CONFIG_DECIDER_MAX_RECV_BYTES": "8388608"},
			`decider: --max-recv-bytes is replaced by --max-request-bytes`},
		{"a --max-request-bytes whose budget would not fit gRPC's sizes is refused", []string{"--max-request-bytes", "1073741824"}, nil,
			`decider: --max-request-bytes is 1073741824: between 1 and 1073741823`},
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

// TestFlagTablesMatchTheSpec pins every flag of the long-running subcommands
// to spec 07 §1 and §1.1–1.3: its name, its environment variable ("" = none)
// and its default, and that there is no other flag.
func TestFlagTablesMatchTheSpec(t *testing.T) {
	type row struct{ flag, variable, def string }
	global := func(format string) []row {
		return []row{
			{"log-level", "DYNAMIC_CONFIG_LOG_LEVEL", "info"},
			{"log-format", "DYNAMIC_CONFIG_LOG_FORMAT", format},
		}
	}
	tables := []struct {
		name     string
		register func(*flagSet)
		rows     []row
	}{
		{"decider", func(fs *flagSet) { new(deciderFlags).register(fs) }, append(global("json"),
			row{"addr", "DYNAMIC_CONFIG_DECIDER_ADDR", "0.0.0.0:9090"},
			row{"metrics-addr", "DYNAMIC_CONFIG_DECIDER_METRICS_ADDR", "0.0.0.0:9092"},
			row{"installation", "DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE", "/etc/dynamic-config/installation.yaml"},
			row{"rollout", "DYNAMIC_CONFIG_DECIDER_ROLLOUT_FILE", ""}, // spec 10 §2 (issue 41, docs/spec-changes.md)
			row{"tls-cert", "DYNAMIC_CONFIG_DECIDER_TLS_CERT", ""},
			row{"tls-key", "DYNAMIC_CONFIG_DECIDER_TLS_KEY", ""},
			row{"tls-client-ca", "DYNAMIC_CONFIG_DECIDER_TLS_CLIENT_CA", ""},
			row{"plaintext", "DYNAMIC_CONFIG_DECIDER_PLAINTEXT", "false"},
			row{"auth-token-file", "DYNAMIC_CONFIG_DECIDER_TOKEN_FILE", ""},
			row{"callers", "DYNAMIC_CONFIG_DECIDER_CALLERS_FILE", ""},      // issue 13, docs/spec-changes.md
			row{"cluster-name", "DYNAMIC_CONFIG_DECIDER_CLUSTER_NAME", ""}, // issue 13
			row{"reflection", "DYNAMIC_CONFIG_DECIDER_REFLECTION", "true"},
			row{"reload-interval", "DYNAMIC_CONFIG_DECIDER_RELOAD_INTERVAL", "10s"},
			row{"max-request-bytes", "DYNAMIC_CONFIG_DECIDER_MAX_REQUEST_BYTES", "7340032"},
			row{"max-recv-bytes", "DYNAMIC_CONFIG_DECIDER_MAX_RECV_BYTES", "0"},
			row{"shutdown-grace", "DYNAMIC_CONFIG_DECIDER_SHUTDOWN_GRACE", "30s"},
			row{"drain-delay", "DYNAMIC_CONFIG_DECIDER_DRAIN_DELAY", "5s"},
			row{"max-connection-age", "DYNAMIC_CONFIG_DECIDER_MAX_CONNECTION_AGE", "2m0s"},
			row{"max-connection-age-grace", "DYNAMIC_CONFIG_DECIDER_MAX_CONNECTION_AGE_GRACE", "10s"},
			row{"classes", "", "false"}, // spec 08 §2 (DYNAMIC_CONFIG_WEBHOOK_CLASSES is the installation's classesEnabled)
			row{"kubeconfig", "", ""},   // spec 08 §2
			row{"classes-file", "", ""}, // spec 08 §2
			row{"pprof", "DYNAMIC_CONFIG_DECIDER_PPROF", "false"},
			row{"tls-wait", "DYNAMIC_CONFIG_DECIDER_TLS_WAIT", "false"}, // issue 20: tls.mode selfRotate
			// spec 09 §1: the follower flags
			row{"follow", "DYNAMIC_CONFIG_DECIDER_FOLLOW", ""},
			row{"leader-plaintext", "DYNAMIC_CONFIG_DECIDER_LEADER_PLAINTEXT", "false"},
			row{"leader-ca", "DYNAMIC_CONFIG_DECIDER_LEADER_CA", ""},
			row{"leader-server-name", "DYNAMIC_CONFIG_DECIDER_LEADER_SERVER_NAME", ""},
			row{"leader-client-cert", "DYNAMIC_CONFIG_DECIDER_LEADER_CLIENT_CERT", ""},
			row{"leader-client-key", "DYNAMIC_CONFIG_DECIDER_LEADER_CLIENT_KEY", ""},
			row{"leader-token-file", "DYNAMIC_CONFIG_DECIDER_LEADER_TOKEN_FILE", ""},
			row{"follower-id", "DYNAMIC_CONFIG_DECIDER_FOLLOWER_ID", ""},
			row{"state-dir", "DYNAMIC_CONFIG_DECIDER_STATE_DIR", ""},
			row{"max-stale", "DYNAMIC_CONFIG_DECIDER_MAX_STALE", "0s"},
			// tracing (issue 21, docs/spec-changes.md, docs/tracing.md)
			row{"otlp-endpoint", "DYNAMIC_CONFIG_OTLP_ENDPOINT", ""},
			row{"trace-sample-ratio", "DYNAMIC_CONFIG_TRACE_SAMPLE_RATIO", "1"},
		)},
		{"frontdoor", func(fs *flagSet) { new(frontdoorFlags).register(fs) }, append(global("json"),
			row{"addr", "DYNAMIC_CONFIG_WEBHOOK_ADDR", "0.0.0.0:8443"},
			row{"metrics-addr", "DYNAMIC_CONFIG_WEBHOOK_METRICS_ADDR", ""},
			row{"tls-cert", "DYNAMIC_CONFIG_WEBHOOK_TLS_CERT", "/tls/tls.crt"},
			row{"tls-key", "DYNAMIC_CONFIG_WEBHOOK_TLS_KEY", "/tls/tls.key"},
			row{"client-ca", "DYNAMIC_CONFIG_WEBHOOK_CLIENT_CA", ""},
			row{"plaintext", "DYNAMIC_CONFIG_WEBHOOK_PLAINTEXT", "false"},
			row{"decider-target", "DYNAMIC_CONFIG_DECIDER_TARGET", ""},
			row{"decider-timeout", "DYNAMIC_CONFIG_DECIDER_TIMEOUT", "2s"},
			row{"decider-ca", "DYNAMIC_CONFIG_DECIDER_CA", ""},
			row{"decider-client-cert", "DYNAMIC_CONFIG_DECIDER_CLIENT_CERT", ""},
			row{"decider-client-key", "DYNAMIC_CONFIG_DECIDER_CLIENT_KEY", ""},
			row{"decider-server-name", "DYNAMIC_CONFIG_DECIDER_SERVER_NAME", ""},
			row{"decider-plaintext", "DYNAMIC_CONFIG_DECIDER_PLAINTEXT", "false"},
			row{"decider-token-file", "DYNAMIC_CONFIG_DECIDER_TOKEN_FILE", ""},
			row{"cluster-name", "DYNAMIC_CONFIG_FRONTDOOR_CLUSTER_NAME", ""}, // issue 13, docs/spec-changes.md
			row{"on-decider-error", "DYNAMIC_CONFIG_ON_DECIDER_ERROR", "deny"},
			row{"on-decider-error-validate", "DYNAMIC_CONFIG_ON_DECIDER_ERROR_VALIDATE", ""},
			row{"max-request-bytes", "DYNAMIC_CONFIG_FRONTDOOR_MAX_REQUEST_BYTES", "7340032"},
			row{"cert-reload-interval", "DYNAMIC_CONFIG_FRONTDOOR_CERT_RELOAD_INTERVAL", "10s"},
			row{"shutdown-grace", "DYNAMIC_CONFIG_FRONTDOOR_SHUTDOWN_GRACE", "30s"},
			row{"drain-delay", "DYNAMIC_CONFIG_FRONTDOOR_DRAIN_DELAY", "5s"},
			row{"pprof", "DYNAMIC_CONFIG_FRONTDOOR_PPROF", "false"},
			// the decision cache (issue 43, docs/spec-changes.md)
			row{"decision-cache", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE", "true"},
			row{"decision-cache-max-entries", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_MAX_ENTRIES", "4096"},
			row{"decision-cache-max-bytes", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_MAX_BYTES", "16777216"},
			row{"decision-cache-stale-if-error", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_STALE_IF_ERROR", "5m0s"},
			// tls.mode selfRotate (issue 15, docs/spec-changes.md)
			row{"self-rotate", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE", "false"},
			row{"kubeconfig", "DYNAMIC_CONFIG_WEBHOOK_KUBECONFIG", ""},
			row{"self-rotate-namespace", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_NAMESPACE", ""},
			row{"self-rotate-secret", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_SECRET", "dynamic-config-frontdoor-ca"},
			row{"self-rotate-lease", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_LEASE", "dynamic-config-frontdoor-ca"},
			row{"self-rotate-hosts", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_HOSTS", ""},
			row{"self-rotate-mutating-webhook", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_MUTATING_WEBHOOK", "dynamic-config"},
			row{"self-rotate-validating-webhook", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_VALIDATING_WEBHOOK", "dynamic-config-env-policy"},
			row{"self-rotate-ca-validity", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CA_VALIDITY", "8760h0m0s"},
			row{"self-rotate-cert-validity", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CERT_VALIDITY", "168h0m0s"},
			row{"self-rotate-interval", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_INTERVAL", "1m0s"},
			// the mTLS pairs from the rotating CA (issue 20, docs/spec-changes.md)
			row{"self-rotate-decider-secret", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_DECIDER_SECRET", ""},
			row{"self-rotate-decider-hosts", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_DECIDER_HOSTS", ""},
			row{"self-rotate-client-secret", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CLIENT_SECRET", ""},
			row{"self-rotate-client-name", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CLIENT_NAME", "dynamic-config-frontdoor-client"},
			row{"self-rotate-handover", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_HANDOVER", "5m0s"},
			// tracing (issue 21, docs/spec-changes.md, docs/tracing.md)
			row{"otlp-endpoint", "DYNAMIC_CONFIG_OTLP_ENDPOINT", ""},
			row{"trace-sample-ratio", "DYNAMIC_CONFIG_TRACE_SAMPLE_RATIO", "1"},
		)},
		{"serve", func(fs *flagSet) { new(serveFlags).register(fs) }, append(global("text"),
			row{"addr", "", "127.0.0.1:8080"},
			row{"decider-addr", "", "127.0.0.1:9090"},
			row{"metrics-addr", "", ""},
			row{"installation", "DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE", ""},
			row{"rollout", "DYNAMIC_CONFIG_DECIDER_ROLLOUT_FILE", ""}, // spec 10 §2 (issue 41)
			row{"reload-interval", "DYNAMIC_CONFIG_DECIDER_RELOAD_INTERVAL", "10s"},
			row{"tls-cert", "", ""},
			row{"tls-key", "", ""},
			row{"tls-generate", "", ""},
			row{"client-ca", "", ""},
			row{"addr-file", "", ""},
			row{"max-request-bytes", "", "7340032"},
			row{"on-decider-error", "DYNAMIC_CONFIG_ON_DECIDER_ERROR", "deny"},
			row{"on-decider-error-validate", "DYNAMIC_CONFIG_ON_DECIDER_ERROR_VALIDATE", ""},
			row{"classes-file", "", ""}, // spec 08 §2
			row{"pprof", "", "false"},
			// the decision cache (issue 43, docs/spec-changes.md)
			row{"decision-cache", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE", "true"},
			row{"decision-cache-max-entries", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_MAX_ENTRIES", "4096"},
			row{"decision-cache-max-bytes", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_MAX_BYTES", "16777216"},
			row{"decision-cache-stale-if-error", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_STALE_IF_ERROR", "5m0s"},
			// tracing (issue 21, docs/spec-changes.md, docs/tracing.md)
			row{"otlp-endpoint", "DYNAMIC_CONFIG_OTLP_ENDPOINT", ""},
			row{"trace-sample-ratio", "DYNAMIC_CONFIG_TRACE_SAMPLE_RATIO", "1"},
		)},
	}
	for _, table := range tables {
		fs := newFlagSet(table.name, io.Discard)
		table.register(fs)
		variables := map[string]string{}
		for _, b := range fs.env {
			variables[b.flag] = b.variable
		}
		for _, r := range table.rows {
			t.Run(table.name+" --"+r.flag+" reads "+orNone(r.variable)+" and defaults to "+orNone(r.def), func(t *testing.T) {
				fl := fs.Lookup(r.flag)
				if fl == nil {
					t.Fatalf("%s has no --%s", table.name, r.flag)
				}
				if fl.DefValue != r.def {
					t.Errorf("default %q, want %q", fl.DefValue, r.def)
				}
				if variables[r.flag] != r.variable {
					t.Errorf("variable %q, want %q", variables[r.flag], r.variable)
				}
			})
		}
		t.Run(table.name+" has no flag beyond the spec's table", func(t *testing.T) {
			known := map[string]bool{}
			for _, r := range table.rows {
				known[r.flag] = true
			}
			fs.VisitAll(func(fl *flag.Flag) {
				if !known[fl.Name] {
					t.Errorf("--%s is not in spec 07 §1", fl.Name)
				}
			})
		})
	}
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}
