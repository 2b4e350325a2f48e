package registry

import (
	"strings"
	"testing"
)

func TestTheRegistryHasSixtySixKeysAndTwentyEightPerRender(t *testing.T) {
	if Len() != 66 {
		t.Fatalf("registry has %d keys, want 66", Len())
	}
	perRender := 0
	for i := range rows {
		if rows[i].PerRender {
			perRender++
		}
	}
	if perRender != 28 {
		t.Fatalf("registry has %d per-render keys, want 28", perRender)
	}
}

func TestTheRegistryOrderMatchesTheSpec(t *testing.T) {
	want := strings.Fields(`inject source endpoint endpoint-secret key path mode watch-seconds timeout agent-image
section auth auth-mount auth-role auth-username auth-token-path namespace ref api-url token-secret
password-secret ca-configmap tls-secret ssh-secret volume-medium native-sidecar agent-cpu-request
agent-memory-request agent-cpu-limit agent-memory-limit file-mode agent-run-as-user agent-run-as-group
agent-ephemeral-request agent-ephemeral-limit env-inject env-restart metrics-port readiness
inject-containers revoke-grace init-first notify-http on-drift tls-reload history require-ack events
class canary-configmap agent-run-as-same-user extra-secret tls-server-name tls-skip-verify
schema-configmap startup-policy on-delete max-document-bytes max-staleness meta dynamic
revoke-on-shutdown aws-secret agent-env template template-configmap`)
	for i, name := range want {
		if rows[i].Name != name {
			t.Fatalf("row %d is %q, want %q", i+1, rows[i].Name, name)
		}
	}
}

func TestNoKeyIsDeprecatedInThisVersion(t *testing.T) {
	for i := range rows {
		if rows[i].Deprecated() || rows[i].Replacement != "" {
			t.Errorf("row %q is deprecated", rows[i].Name)
		}
	}
}

func TestTheDeprecationMessageNamesTheReplacement(t *testing.T) {
	r := Row{Name: "old", DeprecatedSince: "v0.4.0", Replacement: "new"}
	if got, want := r.DeprecationMessage("dynamic-config.rs/old.cache"), "dynamic-config.rs/old.cache is deprecated since v0.4.0; use dynamic-config.rs/new"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	r.Replacement = ""
	if got, want := r.DeprecationMessage("dynamic-config.rs/old"), "dynamic-config.rs/old is deprecated since v0.4.0 and will be removed; it has no replacement"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEveryDefaultableKnobHasAGrammar(t *testing.T) {
	for i := range rows {
		r := &rows[i]
		if r.Defaultable() && r.Name != "source" && r.Name != "path" {
			if _, f := r.Check("x"); f == nil && !r.StoreShaped {
				// "x" must be refused by every non-string grammar
				t.Errorf("defaultable %q accepts %q", r.Name, "x")
			}
		}
	}
}

func TestTheTierAndScopeColumnsReadAsTheSpecTable(t *testing.T) {
	// The tiers and scope columns of spec 01 §2, row by row.
	want := []struct{ key, tiers, scope string }{
		{"inject", "—", "pod"},
		{"source", "F (default render only)", "each"},
		{"endpoint", "S", "each"},
		{"endpoint-secret", "S", "each"},
		{"key", "S", "each"},
		{"path", "S, F (default render only; no tier for named renders)", "each"},
		{"mode", "S, F", "pod"},
		{"watch-seconds", "S, F", "each"},
		{"timeout", "—", "each (watching agents)"},
		{"agent-image", "—", "default"},
		{"section", "S", "each"},
		{"auth", "S", "each"},
		{"auth-mount", "S", "each"},
		{"auth-role", "S", "each"},
		{"auth-username", "S", "each"},
		{"auth-token-path", "S", "each"},
		{"namespace", "S", "each"},
		{"ref", "S", "each"},
		{"api-url", "S", "each"},
		{"token-secret", "S", "each"},
		{"password-secret", "S", "each"},
		{"ca-configmap", "S", "each"},
		{"tls-secret", "S", "each"},
		{"ssh-secret", "S", "each"},
		{"volume-medium", "S, F", "pod"},
		{"native-sidecar", "S, F", "pod"},
		{"agent-cpu-request", "S, F", "pod"},
		{"agent-memory-request", "S, F", "pod"},
		{"agent-cpu-limit", "S, F", "pod"},
		{"agent-memory-limit", "S, F", "pod"},
		{"file-mode", "S, F", "each"},
		{"agent-run-as-user", "S, F", "pod"},
		{"agent-run-as-group", "S, F", "pod"},
		{"agent-ephemeral-request", "—", "default"},
		{"agent-ephemeral-limit", "—", "default"},
		{"env-inject", "—", "default"},
		{"env-restart", "—", "default"},
		{"metrics-port", "S, F (default render only; named renders: annotation only)", "each"},
		{"readiness", "—", "pod"},
		{"inject-containers", "—", "pod"},
		{"revoke-grace", "—", "default"},
		{"init-first", "—", "default"},
		{"notify-http", "—", "default"},
		{"on-drift", "—", "default"},
		{"tls-reload", "—", "each (watching agents)"},
		{"history", "—", "default"},
		{"require-ack", "—", "default"},
		{"events", "—", "default"},
		{"class", "—", "pod"},
		{"canary-configmap", "—", "default"},
		{"agent-run-as-same-user", "—", "pod"},
		{"extra-secret", "—", "default"},
		{"tls-server-name", "—", "each"},
		{"tls-skip-verify", "—", "each"},
		{"schema-configmap", "—", "default"},
		{"startup-policy", "—", "default"},
		{"on-delete", "—", "default"},
		{"max-document-bytes", "—", "default"},
		{"max-staleness", "—", "default"},
		{"meta", "—", "default"},
		{"dynamic", "—", "default"},
		{"revoke-on-shutdown", "—", "default"},
		{"aws-secret", "S", "pod (env on every agent)"},
		{"agent-env", "— (fleet `agentEnv` is a separate, ungated layer)", "pod"},
		{"template", "S", "each"},
		{"template-configmap", "S", "each"},
	}
	if len(want) != len(rows) {
		t.Fatalf("the spec table has %d rows, the registry %d", len(want), len(rows))
	}
	for i, w := range want {
		r := &rows[i]
		if r.Name != w.key {
			t.Fatalf("row %d is %q, want %q", i+1, r.Name, w.key)
		}
		if got := r.TierText(); got != w.tiers {
			t.Errorf("%s: tiers %q, want %q", w.key, got, w.tiers)
		}
		if got := r.ScopeText(); got != w.scope {
			t.Errorf("%s: scope %q, want %q", w.key, got, w.scope)
		}
	}
}

func TestTheTierColumnWritesTheNamedRenderLadderWhenItDiffers(t *testing.T) {
	tests := []struct {
		name string
		row  Row
		want string
	}{
		{"a pod-wide key shows its ladder", Row{Tiers: storeFlt}, "S, F"},
		{"a key without a tier is a dash", Row{}, "—"},
		{"a per-render key with the same ladder everywhere shows it once",
			Row{PerRender: true, Tiers: store, NamedTiers: store}, "S"},
		{"a per-render key without a named-render ladder is default render only",
			Row{PerRender: true, Tiers: fleetOnly}, "F (default render only)"},
		{"a per-render key with another named-render ladder names it",
			Row{PerRender: true, Tiers: storeFlt, NamedTiers: store}, "S, F (named renders: S)"},
		{"a note joins the parenthesis",
			Row{PerRender: true, Tiers: storeFlt, TierNote: "a note"}, "S, F (default render only; a note)"},
		{"a note on a key without a tier follows the dash", Row{TierNote: "a note"}, "— (a note)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.row.TierText(); got != tt.want {
				t.Fatalf("tiers %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTheDisplayNotesDoNotChangeTheLadders(t *testing.T) {
	tests := []struct {
		key         string
		tiers       []Tier
		namedTiers  []Tier
		scope       Scope
		defaultable bool
	}{
		{"path", storeFlt, nil, ScopeEach, true},
		{"metrics-port", storeFlt, nil, ScopeEach, true},
		{"agent-env", nil, nil, ScopePod, false},
		{"timeout", nil, nil, ScopeEach, false},
		{"tls-reload", nil, nil, ScopeEach, false},
		{"aws-secret", store, nil, ScopePod, true},
	}
	for _, tt := range tests {
		r := Lookup(tt.key)
		if !sameTiers(r.Tiers, tt.tiers) || !sameTiers(r.NamedTiers, tt.namedTiers) || r.Scope != tt.scope || r.Defaultable() != tt.defaultable {
			t.Errorf("%s: tiers %v, named tiers %v, scope %v, defaultable %v", tt.key, r.Tiers, r.NamedTiers, r.Scope, r.Defaultable())
		}
	}
}

func TestEveryOtherKeyClassifiesAsItsKindAndIsDocumented(t *testing.T) {
	kinds := map[Kind]bool{}
	for _, o := range OtherKeys() {
		t.Run(o.Form, func(t *testing.T) {
			example := strings.NewReplacer("<key>", "endpoint", "<name>", "cache").Replace(o.Form)
			if k := Classify(Prefix + example); k.Kind != o.Kind {
				t.Fatalf("Classify(%q) = %+v, want kind %d", Prefix+example, k, o.Kind)
			}
			if o.Grammar == "" || o.Doc == "" || len(o.Checks) == 0 {
				t.Fatalf("%q lacks documentation: %+v", o.Form, o)
			}
		})
		kinds[o.Kind] = true
	}
	for _, k := range []Kind{KindRendered, KindAlso, KindAlsoSection, KindStatus} {
		if !kinds[k] {
			t.Errorf("no other key of kind %d", k)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		key  string
		kind Kind
		row  string
		sfx  string
	}{
		{"a registry key", "dynamic-config.rs/endpoint", KindRegistry, "endpoint", ""},
		{"a per-render key with a suffix", "dynamic-config.rs/endpoint.cache", KindRendered, "endpoint", "cache"},
		{"a suffix of 32 characters", "dynamic-config.rs/key." + strings.Repeat("a", 32), KindRendered, "key", strings.Repeat("a", 32)},
		{"a suffix of 33 characters is unknown", "dynamic-config.rs/key." + strings.Repeat("a", 33), KindUnknown, "", ""},
		{"an empty suffix is unknown", "dynamic-config.rs/key.", KindUnknown, "", ""},
		{"an uppercase suffix is unknown", "dynamic-config.rs/key.Cache", KindUnknown, "", ""},
		{"a dotted suffix is unknown", "dynamic-config.rs/key.a.b", KindUnknown, "", ""},
		{"an underscore suffix is unknown", "dynamic-config.rs/key.a_b", KindUnknown, "", ""},
		{"a suffix on a pod-wide key is unknown", "dynamic-config.rs/mode.cache", KindUnknown, "", ""},
		{"inject.cache is unknown", "dynamic-config.rs/inject.cache", KindUnknown, "", ""},
		{"status.x is unknown", "dynamic-config.rs/status.x", KindUnknown, "", ""},
		{"the status mark", "dynamic-config.rs/status", KindStatus, "", ""},
		{"also with a name", "dynamic-config.rs/also.extra", KindAlso, "", "extra"},
		{"also-section with a name", "dynamic-config.rs/also-section.extra", KindAlsoSection, "", "extra"},
		{"also without a name is unknown", "dynamic-config.rs/also", KindUnknown, "", ""},
		{"a render name starting with a hyphen still classifies", "dynamic-config.rs/path.-x", KindRendered, "path", "-x"},
		{"a misspelt key is unknown", "dynamic-config.rs/endpiont", KindUnknown, "", ""},
		{"a key outside the prefix is unknown", "dynamic-config.io/endpoint", KindUnknown, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := Classify(tt.key)
			if k.Kind != tt.kind || k.Name != tt.sfx {
				t.Fatalf("Classify(%q) = %+v", tt.key, k)
			}
			if tt.row != "" && rows[k.Row].Name != tt.row {
				t.Fatalf("row %q, want %q", rows[k.Row].Name, tt.row)
			}
			if tt.row == "" && k.Row != -1 {
				t.Fatalf("row %d, want -1", k.Row)
			}
		})
	}
}

func TestRenderNamesStartAndEndWithALetterOrDigit(t *testing.T) {
	for _, ok := range []string{"a", "cache", "a-b", "0", "x9"} {
		if !ValidRenderName(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"-a", "a-", "-", "", "A"} {
		if ValidRenderName(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{"dynamic-config.rs/endpoint.cache", "dynamic-config.rs/also.x", "dynamic-config.rs/status", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		k := Classify(key)
		switch k.Kind {
		case KindRegistry:
			if Full(rows[k.Row].Name, "") != key {
				t.Fatalf("%q classified as %q", key, rows[k.Row].Name)
			}
		case KindRendered:
			if Full(rows[k.Row].Name, k.Name) != key || !rows[k.Row].PerRender {
				t.Fatalf("%q classified as %q.%q", key, rows[k.Row].Name, k.Name)
			}
		}
	})
}

func TestTheKeysWhoseGrammarRefusesEmptyAreExactlySpecOnesList(t *testing.T) {
	// spec 01 §1.2: every other key is refused at B7 with value.empty.
	own := map[string]bool{}
	for _, k := range strings.Fields(`native-sidecar init-first env-restart readiness tls-reload require-ack events
		agent-run-as-same-user tls-skip-verify meta dynamic revoke-on-shutdown
		source mode volume-medium on-drift startup-policy on-delete
		watch-seconds timeout metrics-port agent-run-as-user agent-run-as-group history revoke-grace max-document-bytes file-mode
		inject class inject-containers agent-env`) {
		own[k] = true
	}
	for i := range rows {
		if rows[i].OwnsEmpty != own[rows[i].Name] {
			t.Errorf("%s: OwnsEmpty %v, want %v", rows[i].Name, rows[i].OwnsEmpty, own[rows[i].Name])
		}
	}
}
