package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestFrontdoorStartRefusals(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("t"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{
			name: "installation variables are refused, one sorted line each",
			env: map[string]string{
				"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS":   "10",
				"DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE": "/etc/x.yaml",
				"DYNAMIC_CONFIG_AGENT_CPU_REQUEST":     "",
				"DYNAMIC_CONFIG_DECIDER_TARGET":        "127.0.0.1:9090",
			},
			want: "frontdoor: DYNAMIC_CONFIG_AGENT_CPU_REQUEST is an installation setting; set it on the decider\n" +
				"frontdoor: DYNAMIC_CONFIG_AGENT_WATCH_SECONDS is an installation setting; set it on the decider\n" +
				"frontdoor: DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE is an installation setting; set it on the decider\n",
		},
		{
			name: "the decider target is required",
			want: "frontdoor: --decider-target is required\n",
		},
		{
			name: "a cluster name that is not a DNS name is refused, from the variable too",
			args: []string{"--decider-target", "127.0.0.1:9090"},
			env:  map[string]string{"DYNAMIC_CONFIG_FRONTDOOR_CLUSTER_NAME": "West_1"},
			want: "frontdoor: --cluster-name is \"West_1\" is not a cluster name: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters\n",
		},
		{
			name: "an unknown failure behaviour is refused",
			args: []string{"--decider-target", "127.0.0.1:9090", "--on-decider-error", "ignore"},
			want: "frontdoor: --on-decider-error is \"ignore\": deny or allow\n",
		},
		{
			name: "an unknown validating failure behaviour is refused",
			args: []string{"--decider-target", "127.0.0.1:9090", "--on-decider-error-validate", "Allow"},
			want: "frontdoor: --on-decider-error-validate is \"Allow\": deny or allow\n",
		},
		{
			name: "a zero decider timeout is refused, naming the flag",
			args: []string{"--decider-target", "127.0.0.1:9090", "--decider-timeout", "0s"},
			want: "frontdoor: --decider-timeout is 0s: it must be positive\n",
		},
		{
			name: "a negative request limit from the environment is refused, naming the flag",
			args: []string{"--decider-target", "127.0.0.1:9090"},
			env:  map[string]string{"DYNAMIC_CONFIG_FRONTDOOR_MAX_REQUEST_BYTES": "-1"},
			want: "frontdoor: --max-request-bytes is -1: between 1 and 1073741823\n",
		},
		{
			name: "a decision cache of no entry is refused, naming the flag",
			args: []string{"--decider-target", "127.0.0.1:9090", "--decision-cache-max-entries", "0"},
			want: "frontdoor: --decision-cache-max-entries is 0: between 1 and 16777216\n",
		},
		{
			name: "a decision cache bound below 64 KiB from the environment is refused, naming the flag",
			args: []string{"--decider-target", "127.0.0.1:9090"},
			env:  map[string]string{"DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_MAX_BYTES": "4096"},
			want: "frontdoor: --decision-cache-max-bytes is 4096: at least 65536\n",
		},
		{
			name: "a negative stale bound is refused, naming what is accepted",
			args: []string{"--decider-target", "127.0.0.1:9090", "--decision-cache-stale-if-error", "-1s"},
			want: "frontdoor: --decision-cache-stale-if-error is -1s: 0 (never) or more\n",
		},
		{
			name: "without a certificate and without plaintext the front door does not start",
			args: []string{"--decider-target", "127.0.0.1:9090", "--tls-cert", "/nonexistent/tls.crt", "--tls-key", "/nonexistent/tls.key"},
			want: "frontdoor: no certificate at /nonexistent/tls.crt and /nonexistent/tls.key, and plaintext is off\n",
		},
		{
			name: "a client CA over plain HTTP is refused",
			args: []string{"--decider-target", "127.0.0.1:9090", "--client-ca", token,
				"--plaintext", "--tls-cert", "/nonexistent/tls.crt", "--tls-key", "/nonexistent/tls.key", "--log-level", "error"},
			want: "frontdoor: --client-ca needs the serving pair (TLS); it cannot be used over plain HTTP\n",
		},
		{
			name: "a token over plaintext to a remote decider is refused",
			args: []string{"--decider-target", "dns:///decider.example.svc:9090", "--decider-plaintext", "--decider-token-file", token,
				"--plaintext", "--tls-cert", "/nonexistent/tls.crt", "--tls-key", "/nonexistent/tls.key", "--log-level", "error"},
			want: "frontdoor: decider client: a bearer token is not sent over plaintext to dns:///decider.example.svc:9090; use TLS or a loopback target\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withFoundationEnv(t, c.env)
			var stderr bytes.Buffer
			if code := frontdoorMain(t.Context(), c.args, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if stderr.String() != c.want {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), c.want)
			}
		})
	}
}
