package installation

import (
	"reflect"
	"testing"
)

func TestStoreDefaultsGrammarAcceptedForms(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		canon string // FormatStoreDefaults of the result
	}{
		{"one store with one pair", "consul: watch-seconds=10", "consul: watch-seconds=10"},
		{"items and pairs are trimmed", "  vault :  auth = kubernetes ,  key = secret/app  ", "vault: auth=kubernetes, key=secret/app"},
		{"empty groups and pairs are skipped", ";consul: watch-seconds=10,,; ;", "consul: watch-seconds=10"},
		{"groups print in the nine-store order", "s3: watch-seconds=60; consul: watch-seconds=10", "consul: watch-seconds=10; s3: watch-seconds=60"},
		{"a trailing ! pins and a trailing ? opens a value", "consul: endpoint=http://c:8500!, watch-seconds=10 ?", "consul: endpoint=http://c:8500!, watch-seconds=10?"},
		{"a value ending in ! keeps it behind an explicit marker", "consul: key=Hello!?", "consul: key=Hello!?"},
		{"the group flag is read apart from the values", "vault: overridable=false, auth=kubernetes", "vault: overridable=false, auth=kubernetes"},
		{"a value may hold = and :", "config-server: endpoint=http://cs:8888/a=b", "config-server: endpoint=http://cs:8888/a=b"},
		{"file-mode keeps its written text", "vault: file-mode=400", "vault: file-mode=400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			groups, problems := ParseStoreDefaults(tt.text)
			if len(problems) > 0 {
				t.Fatalf("unexpected problems: %q", problems)
			}
			if got := FormatStoreDefaults(groups); got != tt.canon {
				t.Errorf("got %q, want %q", got, tt.canon)
			}
		})
	}
}

func TestStoreDefaultsGrammarRefusals(t *testing.T) {
	const v = "DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS"
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"a group without a head", "watch-seconds=10",
			[]string{v + `: "watch-seconds=10" has no ` + "`store:`" + ` head; the form is "store: knob=value, knob=value; store: knob=value"`}},
		{"a URL is not mistaken for a head", "endpoint=http://x:1",
			[]string{v + `: "endpoint=http://x:1" has no ` + "`store:`" + ` head; the form is "store: knob=value, knob=value; store: knob=value"`}},
		{"an unknown store", "VAULT: auth=x", []string{v + `: "VAULT" is not a store this contract knows`}},
		{"the same store twice", "redis: key=a; redis: key=b", []string{v + `: redis appears twice`}},
		{"a pair without =", "redis: key", []string{v + `: "key" under redis is not key=value`}},
		{"an unknown knob", "redis: source=redis", []string{v + ` (redis): "source" is not a defaultable knob; the knobs are ` + storeKnobList}},
		{"the same knob twice", "redis: key=a, key=b", []string{v + ` (redis): key appears twice`}},
		{"an empty value", "redis: key=", []string{v + ` (redis): key is empty`}},
		{"a marker alone is empty", "redis: key= !", []string{v + ` (redis): key is empty`}},
		{"overridable is not a boolean", "redis: overridable=yes", []string{v + ` (redis): overridable is "yes": "true" or "false"`}},
		{"overridable takes no marker", "redis: overridable=false!", []string{v + ` (redis): overridable is "false!": "true" or "false"`}},
		{"a knob failing its annotation grammar", "vault: token-secret=vault-token",
			[]string{v + ` (vault): token-secret is "vault-token": the form is <secret-name>/<key>`}},
		{"run-as root shows a bare zero", "vault: agent-run-as-user=00",
			[]string{v + ` (vault): agent-run-as-user is 0: the agent stays nonroot in every configuration`}},
		{"URL userinfo is redacted", "redis: tls-secret=redis://u:pw@r:6379",
			[]string{v + ` (redis): tls-secret is "redis://…@r:6379": a Secret name, without "/"`}},
		{"a head with no pairs", "redis:", []string{v + `: the group for "redis" names nothing`}},
		{"a value that names no group", " ; ", []string{v + `: names nothing; leave it empty to set no per-store default`}},
		{"an error in one group does not hide the next", "vault: watch-seconds=x; s3: file-mode=9; git: mode=fast",
			[]string{
				v + ` (vault): watch-seconds is "x": whole seconds`,
				v + ` (s3): file-mode is "9": octal, like "0640"`,
				v + ` (git): mode is "fast": init, sidecar or both`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := ParseStoreDefaults(tt.text)
			if !reflect.DeepEqual(problems, tt.want) {
				t.Errorf("got  %q\nwant %q", problems, tt.want)
			}
		})
	}
}

func TestStoreDefaultsDocumentForms(t *testing.T) {
	t.Run("the map of maps, the map of strings and the grammar string read alike", func(t *testing.T) {
		forms := []string{
			"storeDefaults:\n  consul:\n    endpoint: http://c:8500!\n    watch-seconds: 10\n  vault:\n    overridable: false\n    auth: kubernetes\n",
			"storeDefaults:\n  consul: \"endpoint=http://c:8500!, watch-seconds=10\"\n  vault: \"overridable=false, auth=kubernetes\"\n",
			"storeDefaults: \"consul: endpoint=http://c:8500!, watch-seconds=10; vault: overridable=false, auth=kubernetes\"\n",
		}
		env := mustLoad(t, "", "DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS=vault: auth=kubernetes, overridable=false; consul: watch-seconds=10, endpoint=http://c:8500!")
		for _, doc := range forms {
			inst := mustLoad(t, doc)
			if inst.Revision != env.Revision {
				t.Errorf("document %q: revision %s, environment %s\n%s\n%s", doc, inst.Revision, env.Revision, inst.Canonical, env.Canonical)
			}
			if !inst.Stores["consul"].Knobs["endpoint"].Pinned || inst.Stores["vault"].Overridable == nil || *inst.Stores["vault"].Overridable {
				t.Errorf("document %q: markers or flags lost: %+v", doc, inst.Stores)
			}
		}
	})
	t.Run("the map form keeps the declaration order of knobs", func(t *testing.T) {
		inst := mustLoad(t, "storeDefaults:\n  git:\n    ref: main\n    key: a.yaml\n    auth: ssh-key\n")
		if got := inst.Stores["git"].Order; !reflect.DeepEqual(got, []string{"ref", "key", "auth"}) {
			t.Errorf("order %v", got)
		}
	})
	t.Run("a template with commas can be defaulted only in the map form", func(t *testing.T) {
		inst := mustLoad(t, "storeDefaults:\n  consul:\n    template: \"{{ .a }}, {{ .b }}; x\"\n")
		if got := inst.Stores["consul"].Knobs["template"].Text; got != "{{ .a }}, {{ .b }}; x" {
			t.Errorf("template %q", got)
		}
	})
	t.Run("wrong kinds and unknown stores name their document path", func(t *testing.T) {
		assertLines(t, problemLines(t, "storeDefaults: [a]\n"),
			[]string{"storeDefaults: a map of store to settings, or that grammar as one string; this is a list"})
		assertLines(t, problemLines(t, "storeDefaults:\n  vault: [a]\n  mongo: {key: a}\n  git:\n    ref: [main]\n    nope: x\n    watch-seconds: soon\n"),
			[]string{
				"storeDefaults.vault: a map of setting to value, or that grammar as one string; this is a list",
				`storeDefaults.mongo: "mongo" is not a store this contract knows`,
				"storeDefaults.git.ref: a setting is a word, a number or a boolean; this one is a list",
				`storeDefaults.git [DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (git)]: "nope" is not a defaultable knob; the knobs are ` + storeKnobList,
				`storeDefaults.git.watch-seconds [DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (git)]: watch-seconds is "soon": whole seconds`,
			})
	})
	t.Run("a per-store string in the map names the group in its context", func(t *testing.T) {
		assertLines(t, problemLines(t, "storeDefaults:\n  vault: \"token-secret=vault-token, auth\"\n"),
			[]string{
				`storeDefaults.vault [DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (vault)]: token-secret is "vault-token": the form is <secret-name>/<key>`,
				`storeDefaults.vault [DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (vault)]: "auth" under vault is not key=value`,
			})
	})
}
