package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// foundationEmptyFile writes an empty installation document.
func foundationEmptyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDeciderStartRefusals(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("watchSeconds: \"-1\"\nendpoint: http://x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(t.TempDir(), "callers.yaml")
	if err := os.WriteFile(typo, []byte("callers:\n  - name: west\n    cluster: [west]\n    credentials:\n      - tokenSHA265: abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"without a TLS pair and without --plaintext the decider does not start", []string{"--installation", foundationEmptyFile(t)},
			"decider: no TLS pair at --tls-cert/--tls-key and --plaintext not set"},
		{"--tls-client-ca needs TLS", []string{"--plaintext", "--tls-client-ca", "ca.crt"},
			"decider: --tls-client-ca needs --tls-cert/--tls-key; it cannot be used with --plaintext"},
		{"a zero reload interval is refused, naming the flag", []string{"--plaintext", "--reload-interval", "0s"},
			"decider: --reload-interval is 0s: it must be positive"},
		{"a negative shutdown grace is refused, naming the flag", []string{"--plaintext", "--shutdown-grace", "-1s"},
			"decider: --shutdown-grace is -1s: it must be positive"},
		{"half a TLS pair is refused", []string{"--tls-cert", "tls.crt"},
			"decider: --tls-cert and --tls-key go together"},
		{"an invalid installation stops the decider with every problem", []string{"--plaintext", "--installation", bad, "--addr", "127.0.0.1:0", "--metrics-addr", ""},
			"dynamic-config: the installation is invalid (2 problems; document " + bad + "):"},
		{"a callers file with typos is refused at start with every problem", []string{"--plaintext", "--installation", foundationEmptyFile(t),
			"--callers", typo, "--cluster-name", "east", "--addr", "127.0.0.1:0", "--metrics-addr", ""},
			"decider: callers file " + typo + " has 3 problem(s):\n" +
				"  line 2: callers[0] (west).clusters: missing; list the clusters this caller may speak for\n" +
				"  line 3: callers[0] (west).cluster: unknown key; accepted: name, clusters, credentials\n" +
				"  line 5: callers[0] (west).credentials[0].tokenSHA265: unknown credential kind; accepted: tokenSHA256, uriSAN, dnsSAN\n"},
		{"--callers needs the decider's own cluster name", []string{"--plaintext", "--callers", typo},
			"decider: --callers needs --cluster-name: the decider's own cluster"},
		{"--callers excludes --auth-token-file", []string{"--plaintext", "--callers", typo, "--cluster-name", "east", "--auth-token-file", "t"},
			"decider: --callers and --auth-token-file exclude each other"},
		{"a cluster name that is not a DNS name is refused", []string{"--plaintext", "--cluster-name", "East_1"},
			`decider: --cluster-name is "East_1" is not a cluster name`},
		{"a missing explicit installation document stops the decider", []string{"--plaintext", "--installation", bad + ".missing", "--addr", "127.0.0.1:0", "--metrics-addr", ""},
			"the installation document does not exist"},
		{"a sample ratio above 1 is refused", []string{"--plaintext", "--trace-sample-ratio", "1.5"},
			"decider: --trace-sample-ratio is 1.5: a ratio from 0 to 1"},
		{"an OTLP endpoint that is not an http or https URL is refused", []string{"--plaintext", "--otlp-endpoint", "collector:4317",
			"--installation", foundationEmptyFile(t), "--addr", "127.0.0.1:0", "--metrics-addr", ""},
			`decider: --otlp-endpoint is "collector:4317": an http:// or https:// URL of an OTLP/HTTP receiver`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withFoundationEnv(t, nil)
			var stderr bytes.Buffer
			if code := deciderMain(t.Context(), c.args, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr %q, want %q", stderr.String(), c.want)
			}
		})
	}
}

// freeLoopbackAddr returns a loopback address with a port free right now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}
