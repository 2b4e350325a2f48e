package installation

import (
	"testing"
)

func TestEnvironmentBeatsTheDocumentPerSetting(t *testing.T) {
	doc := "watchSeconds: \"30\"\nfileMode: \"0640\"\nsource: vault\n"
	inst := mustLoad(t, doc, "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=10!", "DYNAMIC_CONFIG_AGENT_SOURCE=")
	t.Run("a set variable wins over the document key", func(t *testing.T) {
		v := inst.Fleet["watch-seconds"]
		if v.Text != "10" || v.Source != SourceEnvironment || !v.Pinned {
			t.Errorf("got %+v", v)
		}
	})
	t.Run("a document key no variable names is used", func(t *testing.T) {
		if v := inst.Fleet["file-mode"]; v.Text != "0640" || v.Source != SourceDocument || v.DocumentPath != "fileMode" {
			t.Errorf("got %+v", v)
		}
	})
	t.Run("a set but empty variable hides the document key", func(t *testing.T) {
		if v, ok := inst.Fleet["source"]; ok {
			t.Errorf("source still set: %+v", v)
		}
	})
	t.Run("a hidden document value is still validated, after the variable's own problems", func(t *testing.T) {
		assertLines(t, problemLines(t, "fileMode: abc\nsourceDeny: \"sandbox: got\"\n",
			"DYNAMIC_CONFIG_AGENT_FILE_MODE=9", "DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY="),
			[]string{
				`DYNAMIC_CONFIG_AGENT_FILE_MODE: file-mode is "9": octal, like "0640"`,
				`(hidden by DYNAMIC_CONFIG_AGENT_FILE_MODE) fileMode [DYNAMIC_CONFIG_AGENT_FILE_MODE]: file-mode is "abc": octal, like "0640"`,
				`(hidden by DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY) sourceDeny [DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY]: "got" is not a store this contract knows`,
			})
	})
	t.Run("a hidden envPolicy is validated after the variable's problems", func(t *testing.T) {
		assertLines(t, problemLines(t, "envPolicy: {rules: []}\n", "DYNAMIC_CONFIG_ENV_POLICY=[1]"),
			[]string{
				"DYNAMIC_CONFIG_ENV_POLICY: a map with targets and rules; this is a list",
				"(hidden by DYNAMIC_CONFIG_ENV_POLICY) envPolicy.rules: is empty: list at least one rule, or drop envPolicy",
			})
	})
}

func TestRevisionIsTheSameThroughEitherDoor(t *testing.T) {
	env := []string{
		"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=30 ?",
		"DYNAMIC_CONFIG_AGENT_FILE_MODE=0640",
		"DYNAMIC_CONFIG_AGENT_DEFAULTS_OVERRIDABLE=false",
		"DYNAMIC_CONFIG_AGENT_ENV=HTTPS_PROXY=http://egress.infra.svc:3128, RUST_LOG=info",
		"DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS=vault: overridable=false, endpoint=https://vault.vault.svc:8200, auth=kubernetes, watch-seconds=30?; consul: overridable=true, endpoint=http://consul.infra.svc:8500",
		"DYNAMIC_CONFIG_WEBHOOK_AGENT_ENV_ALLOW=payments: HTTPS_PROXY, AWS_*; *: RUST_LOG",
		"DYNAMIC_CONFIG_WEBHOOK_SOURCE_ALLOW=payments: vault, s3; *: consul",
		"DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY=sandbox: git",
		`DYNAMIC_CONFIG_ENV_POLICY={"rules": [{"environmentVariables": [{"name": "LOG_LEVEL", "value": "debug"}], "namespaces": ["payments"]}]}`,
	}
	doc := `watchSeconds: "30?"
fileMode: 0640
overridable: false
agentEnv: "HTTPS_PROXY=http://egress.infra.svc:3128, RUST_LOG=info"
storeDefaults:
  consul:
    overridable: true
    endpoint: http://consul.infra.svc:8500
  vault:
    overridable: "false"
    endpoint: https://vault.vault.svc:8200
    auth: kubernetes
    watch-seconds: 30?
agentEnvAllow:
  payments: [HTTPS_PROXY, "AWS_*"]
  "*": [RUST_LOG]
sourceAllow: "payments: vault, s3; *: consul"
sourceDeny:
  sandbox: git
envPolicy:
  rules:
    - environmentVariables:
        - name: LOG_LEVEL
          value: debug
      namespaces: [payments]
`
	fromEnv := mustLoad(t, "", env...)
	fromDoc := mustLoad(t, doc)
	if fromEnv.Revision != fromDoc.Revision {
		t.Errorf("revisions differ\n env: %s\n doc: %s", fromEnv.Canonical, fromDoc.Canonical)
	}
	t.Run("a listed env-policy value never enters the canonical form", func(t *testing.T) {
		if containsText(string(fromDoc.Canonical), `"debug"`) {
			t.Errorf("canonical holds the value: %s", fromDoc.Canonical)
		}
	})
	t.Run("a changed value changes the revision", func(t *testing.T) {
		other := mustLoad(t, "", append(env[1:], "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=30!")...)
		if other.Revision == fromEnv.Revision {
			t.Error("revision unchanged")
		}
	})
	t.Run("the gate's declaration order is part of the revision", func(t *testing.T) {
		a := mustLoad(t, "", "DYNAMIC_CONFIG_WEBHOOK_SOURCE_ALLOW=a: vault; b: s3")
		b := mustLoad(t, "", "DYNAMIC_CONFIG_WEBHOOK_SOURCE_ALLOW=b: s3; a: vault")
		if a.Revision == b.Revision {
			t.Error("order ignored")
		}
	})
}

func containsText(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
