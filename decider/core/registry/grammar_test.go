package registry

import (
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/knob"
)

// TestCheck holds each row to its grammar: the value checks of spec 01 §3.
func TestCheck(t *testing.T) {
	tests := []struct {
		name       string
		knob       string
		value      string
		normalised string
		check      string // "" = accepted
		message    string // Message("K") when refused
	}{
		{"watch-seconds accepts zero", "watch-seconds", "0", "0", "", ""},
		{"watch-seconds drops leading zeros", "watch-seconds", "015", "15", "", ""},
		{"watch-seconds accepts the largest 64-bit value", "watch-seconds", "18446744073709551615", "18446744073709551615", "", ""},
		{"watch-seconds refuses a value above 64 bits", "watch-seconds", "18446744073709551616", "", "watch-seconds.value", `K is "18446744073709551616": whole seconds`},
		{"watch-seconds refuses a sign", "watch-seconds", "+5", "", "watch-seconds.value", `K is "+5": whole seconds`},
		{"watch-seconds refuses whitespace", "watch-seconds", " 5", "", "watch-seconds.value", `K is " 5": whole seconds`},
		{"watch-seconds refuses letters", "watch-seconds", "abc", "", "watch-seconds.value", `K is "abc": whole seconds`},
		{"watch-seconds refuses empty with its own message", "watch-seconds", "", "", "watch-seconds.value", `K is "": whole seconds`},
		{"timeout refuses zero", "timeout", "00", "", "timeout.zero", `K is "00": a zero timeout is no deadline at all; give whole seconds above 0, like "30"`},
		{"timeout refuses a unit", "timeout", "30s", "", "timeout.value", `K is "30s": whole seconds, like "30"`},
		{"metrics-port accepts zero", "metrics-port", "0", "0", "", ""},
		{"metrics-port accepts 65535", "metrics-port", "65535", "65535", "", ""},
		{"metrics-port refuses 65536", "metrics-port", "65536", "", "metrics-port.value", `K is "65536": a port number`},
		{"run-as refuses root with a bare zero", "agent-run-as-user", "000", "", "run-as.root", `K is 0: the agent stays nonroot in every configuration`},
		{"run-as refuses a value above the API limit", "agent-run-as-group", "2147483648", "", "run-as.value", `K is "2147483648": a numeric UID/GID`},
		{"run-as accepts the API limit", "agent-run-as-user", "2147483647", "2147483647", "", ""},
		{"run-as refuses a negative number", "agent-run-as-user", "-1", "", "run-as.value", `K is "-1": a numeric UID/GID`},
		{"history refuses zero", "history", "0", "", "history.zero", `K is "0": a count of at least 1 — drop the annotation to keep no history`},
		{"history refuses eleven", "history", "11", "", "history.max", `K is "11": at most 10`},
		{"history refuses text", "history", "three", "", "history.value", `K is "three": a count, like "3"`},
		{"revoke-grace accepts a trailing s", "revoke-grace", "10s", "10", "", ""},
		{"revoke-grace refuses a lone s", "revoke-grace", "s", "", "revoke-grace.value", `K is "s": whole seconds, like "10s"`},
		{"revoke-grace refuses zero seconds", "revoke-grace", "0s", "", "revoke-grace.zero", `K is "0s": zero leaves no time to revoke anything; give whole seconds above 0, like "10s"`},
		{"max-document-bytes refuses zero", "max-document-bytes", "0", "", "max-document-bytes.value", `K is "0": a byte count above 0, like "8388608"`},
		{"file-mode normalises three digits", "file-mode", "640", "0640", "", ""},
		{"file-mode normalises the 0o prefix", "file-mode", "0o400", "0400", "", ""},
		{"file-mode normalises extra leading zeros", "file-mode", "000644", "0644", "", ""},
		{"file-mode refuses an uppercase prefix", "file-mode", "0O640", "", "file-mode.value", `K is "0O640": octal, like "0640"`},
		{"file-mode refuses a bare prefix", "file-mode", "0o", "", "file-mode.value", `K is "0o": octal, like "0640"`},
		{"file-mode refuses 8", "file-mode", "0680", "", "file-mode.value", `K is "0680": octal, like "0640"`},
		{"file-mode refuses above 0777", "file-mode", "1777", "", "file-mode.range", `K is "1777": at most 0777 — permission bits only`},
		{"file-mode refuses a value too large to hold", "file-mode", "77777777777777777777777777", "", "file-mode.range", `K is "77777777777777777777777777": at most 0777 — permission bits only`},
		{"file-mode refuses a mode without owner read", "file-mode", "0200", "", "file-mode.owner-read", `K is "0200": the owner must at least read it (0400 set)`},
		{"file-mode refuses zero", "file-mode", "0", "", "file-mode.owner-read", `K is "0": the owner must at least read it (0400 set)`},
		{"mode accepts both", "mode", "both", "both", "", ""},
		{"mode is case-sensitive", "mode", "Sidecar", "", "mode.value", `K is "Sidecar": init, sidecar or both`},
		{"volume-medium refuses tmpfs", "volume-medium", "tmpfs", "", "volume-medium.value", `K is "tmpfs": memory (default) or disk`},
		{"a boolean refuses True", "native-sidecar", "True", "", "bool.value", `K is "True": "true" or "false"`},
		{"a boolean refuses 1", "tls-reload", "1", "", "bool.value", `K is "1": "true" or "false"`},
		{"inject has its own check id", "inject", "yes", "", "inject.value", `K is "yes": "true" or "false"`},
		{"source names the nine stores", "source", "mongo", "", "source.value", `K is "mongo": one of consul, vault, config-server, firestore, git, redis, etcd, nats, s3`},
		{"on-drift refuses ignore", "on-drift", "ignore", "", "on-drift.value", `K is "ignore": "warn", "repair" or "fail"`},
		{"startup-policy refuses fresh", "startup-policy", "fresh", "", "startup-policy.value", `K is "fresh": "allow-cached", "require-fresh" or "best-effort"`},
		{"on-delete refuses keep", "on-delete", "keep", "", "on-delete.value", `K is "keep": "retain", "remove" or "fail"`},
		{"a quantity accepts 50m", "agent-cpu-request", "50m", "50m", "", ""},
		{"a quantity accepts 64Mi", "agent-memory-limit", "64Mi", "64Mi", "", ""},
		{"a quantity refuses a leading dot", "agent-cpu-limit", ".5", "", "quantity.value", `K is ".5": a Kubernetes quantity, like "50m" or "64Mi"`},
		{"a quantity refuses a sign", "agent-cpu-limit", "1e+3", "", "quantity.value", `K is "1e+3": a Kubernetes quantity, like "50m" or "64Mi"`},
		{"a quantity refuses an unknown suffix", "agent-memory-request", "64MB", "", "quantity.value", `K is "64MB": a Kubernetes quantity, like "50m" or "64Mi"`},
		{"a secret reference needs a slash", "token-secret", "vault-token", "", "secret-ref.form", `K is "vault-token": the form is <secret-name>/<key>`},
		{"a secret reference needs a name", "endpoint-secret", "/url", "", "secret-ref.form", `K is "/url": the form is <secret-name>/<key>`},
		{"a secret reference needs a key", "password-secret", "pw/", "", "secret-ref.form", `K is "pw/": the form is <secret-name>/<key>`},
		{"a secret reference splits at the first slash", "token-secret", "t/a/b", "t/a/b", "", ""},
		{"a configmap reference accepts a bare name", "ca-configmap", "vault-ca", "vault-ca", "", ""},
		{"a configmap reference refuses an empty key", "template-configmap", "tpl/", "", "object-ref.form", `K is "tpl/": the form is <configmap-name> or <configmap-name>/<key>`},
		{"an ssh secret reference names a secret", "ssh-secret", "/key", "", "object-ref.form", `K is "/key": the form is <secret-name> or <secret-name>/<key>`},
		{"a secret name refuses a slash", "aws-secret", "aws/creds", "", "secret-name.form", `K is "aws/creds": a Secret name, without "/"`},
		{"a path accepts a file in its own directory", "path", "/config/app.toml", "/config/app.toml", "", ""},
		{"a path refuses a relative path", "path", "config/app.toml", "", "path.shape", `K is "config/app.toml": an absolute file path in a directory of its own, like "/config/app.toml"`},
		{"a path refuses a file in the root", "path", "/app.toml", "", "path.shape", `K is "/app.toml": an absolute file path in a directory of its own, like "/config/app.toml"`},
		{"a path refuses a trailing slash", "path", "/config/", "", "path.shape", `K is "/config/": an absolute file path in a directory of its own, like "/config/app.toml"`},
		{"a path refuses an unclean path", "path", "/config/../x/app.toml", "", "path.shape", `K is "/config/../x/app.toml": an absolute file path in a directory of its own, like "/config/app.toml"`},
		{"a path refuses the agent's tree", "path", "/etc/dynamic-config/app.toml", "", "path.reserved", `K is "/etc/dynamic-config/app.toml": /etc/dynamic-config and everything under it is where the agent mounts its own files — choose another directory`},
		{"a path next to the agent's tree passes", "path", "/etc/dynamic-configs/app.toml", "/etc/dynamic-configs/app.toml", "", ""},
		{"a plain string refuses empty", "endpoint", "", "", "value.empty", `K is empty: give it a value or drop it`},
		{"a plain string accepts anything else", "endpoint", " x ", " x ", "", ""},
		{"notify-http accepts localhost with a port", "notify-http", "http://LocalHost:8080/reload", "http://LocalHost:8080/reload", "", ""},
		{"notify-http accepts ipv6 loopback", "notify-http", "http://[::1]/x", "http://[::1]/x", "", ""},
		{"notify-http refuses https", "notify-http", "https://localhost/x", "", "notify-http.url", `K is "https://localhost/x": an http:// URL on the pod itself — host localhost, 127.0.0.1 or [::1]`},
		{"notify-http refuses an upper-case scheme, though net/url lower-cases it", "notify-http", "HTTP://localhost/x", "", "notify-http.url", `K is "HTTP://localhost/x": an http:// URL on the pod itself — host localhost, 127.0.0.1 or [::1]`},
		{"notify-http refuses another host", "notify-http", "http://example.com/x", "", "notify-http.url", `K is "http://example.com/x": an http:// URL on the pod itself — host localhost, 127.0.0.1 or [::1]`},
		{"notify-http refuses port zero", "notify-http", "http://127.0.0.1:0/", "", "notify-http.url", `K is "http://127.0.0.1:0/": an http:// URL on the pod itself — host localhost, 127.0.0.1 or [::1]`},
		{"notify-http refuses userinfo and redacts it", "notify-http", "http://u:p@localhost/", "", "notify-http.url", `K is "http://…@localhost/": an http:// URL on the pod itself — host localhost, 127.0.0.1 or [::1]`},
		{"notify-http refuses a longer host name", "notify-http", "http://localhost.evil/", "", "notify-http.url", `K is "http://localhost.evil/": an http:// URL on the pod itself — host localhost, 127.0.0.1 or [::1]`},
		{"a knob judged by its own steps accepts anything here", "class", "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, f := Lookup(tt.knob).Check(tt.value)
			if tt.check == "" {
				if f != nil {
					t.Fatalf("Check(%q, %q) refused: %s", tt.knob, tt.value, f.Message("K"))
				}
				if got != tt.normalised {
					t.Fatalf("Check(%q, %q) = %q, want %q", tt.knob, tt.value, got, tt.normalised)
				}
				return
			}
			if f == nil {
				t.Fatalf("Check(%q, %q) accepted %q, want %s", tt.knob, tt.value, got, tt.check)
			}
			if f.Check != tt.check {
				t.Errorf("check = %q, want %q", f.Check, tt.check)
			}
			if m := f.Message("K"); m != tt.message {
				t.Errorf("message = %q\n want %q", m, tt.message)
			}
		})
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		name string
		knob string
		a, b string
		want bool
	}{
		{"parsed numbers ignore leading zeros", "watch-seconds", "030", "30", true},
		{"parsed numbers differ by value", "watch-seconds", "30", "31", false},
		{"file-mode compares normalised octal", "file-mode", "0640", "0o640", true},
		{"file-mode 640 equals 0640", "file-mode", "640", "0640", true},
		{"quantities compare raw", "agent-memory-limit", "64Mi", "67108864", false},
		{"store-shaped knobs compare raw", "endpoint", "http://a", "http://a/", false},
		{"equal raw strings are equal", "endpoint", "http://a", "http://a", true},
		{"an unparsable side compares raw", "metrics-port", "x", "0", false},
		{"run-as compares parsed", "agent-run-as-user", "01000", "1000", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Lookup(tt.knob).Equal(tt.a, tt.b); got != tt.want {
				t.Fatalf("Equal(%q, %q, %q) = %v, want %v", tt.knob, tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{"0640", "0o7", "15", "", "/a/b", "50m", "http://localhost:1/"} {
		f.Add("file-mode", s)
		f.Add("watch-seconds", s)
		f.Add("path", s)
		f.Add("agent-cpu-request", s)
		f.Add("notify-http", s)
	}
	f.Fuzz(func(t *testing.T, k, v string) {
		r := Lookup(k)
		if r == nil {
			return
		}
		n, fl := r.Check(v)
		if fl != nil {
			if fl.Check == "" || fl.Expectation == "" || fl.Shown == "" {
				t.Fatalf("incomplete failure %+v", fl)
			}
			return
		}
		// a normalised value is accepted again and equal to itself
		n2, fl2 := r.Check(n)
		if fl2 != nil || n2 != n {
			t.Fatalf("normalised %q of %q does not round-trip: %q %v", n, v, n2, fl2)
		}
		if !r.Equal(v, n) && r.Grammar.Compare() == knob.ByParsed {
			t.Fatalf("Equal(%q, %q, %q) is false", k, v, n)
		}
	})
}
