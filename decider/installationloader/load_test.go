package installationloader

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

func TestDocumentFormats(t *testing.T) {
	yamlDoc := "watchSeconds: 30\nfileMode: 0640\nnativeSidecar: true\nstoreDefaults:\n  vault:\n    file-mode: \"0400\"\n    auth: kubernetes\nsourceAllow:\n  payments: [vault, s3]\n  \"*\": [consul]\nenvPolicy:\n  rules:\n    - environmentVariables: [{name: HTTPS_PROXY}]\n"
	jsonDoc := `{"watchSeconds": 30, "fileMode": "0640", "nativeSidecar": true,
	  "storeDefaults": {"vault": {"file-mode": "0400", "auth": "kubernetes"}},
	  "sourceAllow": {"payments": ["vault", "s3"], "*": ["consul"]},
	  "envPolicy": {"rules": [{"environmentVariables": [{"name": "HTTPS_PROXY"}]}]}}`
	tomlDoc := "watchSeconds = 30\nfileMode = \"0640\"\nnativeSidecar = true\n[storeDefaults.vault]\nfile-mode = \"0400\"\nauth = \"kubernetes\"\n[sourceAllow]\npayments = [\"vault\", \"s3\"]\n\"*\" = [\"consul\"]\n[[envPolicy.rules]]\nenvironmentVariables = [{name = \"HTTPS_PROXY\"}]\n"
	var revisions []string
	for _, f := range []struct{ name, content string }{{"i.yaml", yamlDoc}, {"i.yml", yamlDoc}, {"i.json", jsonDoc}, {"i.toml", tomlDoc}} {
		t.Run("a "+filepath.Ext(f.name)+" document is read by its extension", func(t *testing.T) {
			inst, err := Load(Options{DocumentPath: writeDoc(t, f.name, f.content), DocumentExplicit: true})
			if err != nil {
				t.Fatal(err)
			}
			if inst.Fleet["file-mode"].Text != "0640" || inst.Fleet["watch-seconds"].Text != "30" || inst.EnvPolicy == nil {
				t.Errorf("%s: %s", f.name, inst.Canonical)
			}
			revisions = append(revisions, inst.Revision)
		})
	}
	t.Run("the three formats give one revision", func(t *testing.T) {
		for _, r := range revisions[1:] {
			if r != revisions[0] {
				t.Errorf("revisions differ: %q", revisions)
			}
		}
	})
	t.Run("a YAML number keeps its literal text", func(t *testing.T) {
		if inst := mustLoad(t, "fileMode: 0640\nwatchSeconds: 030\n"); inst.Fleet["file-mode"].Text != "0640" || inst.Fleet["watch-seconds"].Text != "030" {
			t.Errorf("got %s", inst.Canonical)
		}
		assertLines(t, problemLines(t, "watchSeconds: 0x1F\n"),
			[]string{`watchSeconds [DYNAMIC_CONFIG_AGENT_WATCH_SECONDS]: watch-seconds is "0x1F": whole seconds`})
	})
	t.Run("TOML numbers are rendered as Go formats them", func(t *testing.T) {
		inst, err := Load(Options{DocumentPath: writeDoc(t, "i.toml", "watchSeconds = 1_000\nmetricsPort = 0x10\n"), DocumentExplicit: true})
		if err != nil {
			t.Fatal(err)
		}
		if inst.Fleet["watch-seconds"].Text != "1000" || inst.Fleet["metrics-port"].Text != "16" {
			t.Errorf("got %s", inst.Canonical)
		}
	})
}

func TestDocumentShapeProblems(t *testing.T) {
	keys := strings.Join(installation.DocumentKeys(), ", ")
	tests := []struct {
		name    string
		file    string
		content string
		want    []string
	}{
		{"an unknown extension", "installation.conf", "a: b", []string{"%s: the installation document's format comes from its extension: .yaml, .yml, .json or .toml"}},
		{"the top level is a list", "i.yaml", "- a\n", []string{"the installation document is a map of settings"}},
		{"the top level is a word", "i.json", `"x"`, []string{"the installation document is a map of settings"}},
		{"unknown keys in document order, store-shaped ones with the hint", "i.yaml", "endpoint: x\nwatchseconds: 3\nendpointSecret: a/b\napi_url: x\n",
			[]string{
				`endpoint: "endpoint" is not an installation setting; endpoint is a per-store knob — set it under storeDefaults.<store>; the ones there are: ` + keys,
				`watchseconds: "watchseconds" is not an installation setting; the ones there are: ` + keys,
				`endpointSecret: "endpointSecret" is not an installation setting; endpoint-secret is a per-store knob — set it under storeDefaults.<store>; the ones there are: ` + keys,
				`api_url: "api_url" is not an installation setting; api-url is a per-store knob — set it under storeDefaults.<store>; the ones there are: ` + keys,
			}},
		{"a setting that is a map", "i.yaml", "mode: {a: b}\nsource: [consul]\n", []string{
			"mode: a setting is a word, a number or a boolean; this one is a map",
			"source: a setting is a word, a number or a boolean; this one is a list",
		}},
		{"invalid YAML", "i.yaml", "a: [\n", []string{"%s: the installation document is not valid YAML: line 1: did not find expected node content"}},
		{"invalid JSON", "i.json", `{"a": }`, []string{"%s: the installation document is not valid JSON: invalid character '}' looking for beginning of value"}},
		{"a setting written twice in YAML is reported, not decided by the last one", "i.yaml", "watchSeconds: \"1\"\nmode: init\nwatchSeconds: \"2\"\n",
			[]string{`watchSeconds: "watchSeconds" appears twice`}},
		{"a repeated JSON key", "i.json", `{"mode": "init", "mode": "both"}`, []string{`%s: the installation document is not valid JSON: key "mode" appears twice`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeDoc(t, tt.file, tt.content)
			_, err := Load(Options{DocumentPath: p, DocumentExplicit: true})
			var probs *installation.Problems
			if !errors.As(err, &probs) {
				t.Fatalf("got %v", err)
			}
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = strings.ReplaceAll(w, "%s", p)
			}
			assertLines(t, probs.Lines, want)
		})
	}
}

func TestEmptyAndMissingDocuments(t *testing.T) {
	for _, content := range []string{"", "  \n\t\n", "# only a comment\n   # another\n"} {
		t.Run("a blank file is the empty installation whatever its name", func(t *testing.T) {
			for _, name := range []string{"i.yaml", "i.json", "null-device"} {
				inst, err := Load(Options{DocumentPath: writeDoc(t, name, content), DocumentExplicit: true})
				if err != nil || inst.Revision != installation.EmptyRevision || !inst.DocumentPresent {
					t.Errorf("%s %q: %v %+v", name, content, err, inst)
				}
			}
		})
	}
	t.Run("an empty map is the empty installation", func(t *testing.T) {
		if inst := mustLoad(t, "{}\n"); inst.Revision != installation.EmptyRevision {
			t.Errorf("revision %s", inst.Revision)
		}
	})
	t.Run("the empty installation's canonical form is {}", func(t *testing.T) {
		inst, err := Load(Options{})
		if err != nil || string(inst.Canonical) != "{}" || inst.Revision != installation.EmptyRevision || installation.Revision([]byte("{}")) != installation.EmptyRevision {
			t.Errorf("%v %s %s", err, inst.Canonical, inst.Revision)
		}
	})
	t.Run("a null scalar is unset", func(t *testing.T) {
		if inst := mustLoad(t, "fileMode: null\nmode: ~\n"); inst.Revision != installation.EmptyRevision {
			t.Errorf("canonical %s", inst.Canonical)
		}
	})
	t.Run("a null map-valued setting is refused, every one at once (issue 23)", func(t *testing.T) {
		assertLines(t, problemLines(t, "storeDefaults: ~\nsourceDeny:\nenvPolicy: null\n"), []string{
			"storeDefaults: is empty (null); write {} or remove the key",
			"sourceDeny: is empty (null); write {} or remove the key",
			"envPolicy: is empty (null); write {} or remove the key",
		})
	})
	t.Run("a missing default path is the empty document", func(t *testing.T) {
		inst, err := Load(Options{DocumentPath: filepath.Join(t.TempDir(), "installation.yaml")})
		if err != nil || inst.DocumentPresent || inst.Revision != installation.EmptyRevision {
			t.Errorf("%v %+v", err, inst)
		}
	})
	t.Run("a missing explicit path is an error", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "installation.yaml")
		_, err := Load(Options{DocumentPath: p, DocumentExplicit: true})
		if err == nil || err.Error() != "dynamic-config: the installation is invalid (1 problem; document "+p+"):\n  "+p+": the installation document does not exist" {
			t.Errorf("got %v", err)
		}
	})
}
