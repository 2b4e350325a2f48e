package registry

import (
	"strings"
	"testing"
)

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

// TestTheRegistryReadsAsSpecOnesTable holds the registry to spec 01 §2's
// table, row by row: the key (registry order), the R column, the tiers and
// the scope. It is the one place the key count is pinned (spec 01 §2: 66
// keys, 28 per-render): a new key is a new line here.
func TestTheRegistryReadsAsSpecOnesTable(t *testing.T) {
	want := []struct{ key, r, e, tiers, scope string }{
		{"inject", "", "E", "—", "pod"},
		{"source", "R", "E", "F (default render only)", "each"},
		{"endpoint", "R", "", "S", "each"},
		{"endpoint-secret", "R", "", "S", "each"},
		{"key", "R", "", "S", "each"},
		{"path", "R", "", "S, F (default render only; no tier for named renders)", "each"},
		{"mode", "", "E", "S, F", "pod"},
		{"watch-seconds", "R", "E", "S, F", "each"},
		{"timeout", "R", "E", "—", "each (watching agents)"},
		{"agent-image", "", "", "—", "default"},
		{"section", "R", "", "S", "each"},
		{"auth", "R", "", "S", "each"},
		{"auth-mount", "R", "", "S", "each"},
		{"auth-role", "R", "", "S", "each"},
		{"auth-username", "R", "", "S", "each"},
		{"auth-token-path", "R", "", "S", "each"},
		{"namespace", "R", "", "S", "each"},
		{"ref", "R", "", "S", "each"},
		{"api-url", "R", "", "S", "each"},
		{"token-secret", "R", "", "S", "each"},
		{"password-secret", "R", "", "S", "each"},
		{"ca-configmap", "R", "", "S", "each"},
		{"tls-secret", "R", "", "S", "each"},
		{"ssh-secret", "R", "", "S", "each"},
		{"volume-medium", "", "E", "S, F", "pod"},
		{"native-sidecar", "", "E", "S, F", "pod"},
		{"agent-cpu-request", "", "", "S, F", "pod"},
		{"agent-memory-request", "", "", "S, F", "pod"},
		{"agent-cpu-limit", "", "", "S, F", "pod"},
		{"agent-memory-limit", "", "", "S, F", "pod"},
		{"file-mode", "R", "E", "S, F", "each"},
		{"agent-run-as-user", "", "E", "S, F", "pod"},
		{"agent-run-as-group", "", "E", "S, F", "pod"},
		{"agent-ephemeral-request", "", "", "—", "default"},
		{"agent-ephemeral-limit", "", "", "—", "default"},
		{"env-inject", "", "", "—", "default"},
		{"env-restart", "", "E", "—", "default"},
		{"metrics-port", "R", "E", "S, F (default render only; named renders: annotation only)", "each"},
		{"readiness", "", "E", "—", "pod"},
		{"inject-containers", "", "E", "—", "pod"},
		{"revoke-grace", "", "E", "—", "default"},
		{"init-first", "", "E", "—", "default"},
		{"notify-http", "", "", "—", "default"},
		{"on-drift", "", "E", "—", "default"},
		{"tls-reload", "R", "E", "—", "each (watching agents)"},
		{"history", "", "E", "—", "default"},
		{"require-ack", "", "E", "—", "default"},
		{"events", "", "E", "—", "default"},
		{"class", "", "E", "—", "pod"},
		{"canary-configmap", "", "", "—", "default"},
		{"agent-run-as-same-user", "", "E", "—", "pod"},
		{"extra-secret", "", "", "—", "default"},
		{"tls-server-name", "R", "", "—", "each"},
		{"tls-skip-verify", "R", "E", "—", "each"},
		{"schema-configmap", "", "", "—", "default"},
		{"startup-policy", "", "E", "—", "default"},
		{"on-delete", "", "E", "—", "default"},
		{"max-document-bytes", "", "E", "—", "default"},
		{"max-staleness", "", "", "—", "default"},
		{"meta", "", "E", "—", "default"},
		{"dynamic", "", "E", "—", "default"},
		{"revoke-on-shutdown", "", "E", "—", "default"},
		{"aws-secret", "", "", "S", "pod (env on every agent)"},
		{"agent-env", "", "E", "— (fleet `agentEnv` is a separate, ungated layer)", "pod"},
		{"template", "R", "", "S", "each"},
		{"template-configmap", "R", "", "S", "each"},
	}
	if len(want) != len(rows) {
		t.Fatalf("the spec table has %d rows, the registry %d", len(want), len(rows))
	}
	for i, w := range want {
		r := &rows[i]
		if r.Name != w.key {
			t.Fatalf("row %d is %q, want %q", i+1, r.Name, w.key)
		}
		if got := r.PerRender; got != (w.r == "R") {
			t.Errorf("%s: per-render %v, want %q", w.key, got, w.r)
		}
		if got := r.OwnsEmpty; got != (w.e == "E") {
			t.Errorf("%s: owns empty %v, want %q", w.key, got, w.e)
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
			if o.Grammar == "" || o.Doc == "" || len(o.Checks) == 0 && o.Kind != KindRevisionStamp {
				t.Fatalf("%q lacks documentation: %+v", o.Form, o)
			}
		})
		kinds[o.Kind] = true
	}
	for _, k := range []Kind{KindRendered, KindAlso, KindAlsoSection, KindStatus, KindRevisionStamp} {
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
		{"the revision stamp", "dynamic-config.rs/revision", KindRevisionStamp, "", ""},
		{"revision.x is unknown", "dynamic-config.rs/revision.x", KindUnknown, "", ""},
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
