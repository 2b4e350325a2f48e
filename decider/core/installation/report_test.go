package installation

import (
	"errors"
	"strings"
	"testing"
)

func TestEveryProblemIsReportedInTheContractOrder(t *testing.T) {
	doc := `tokenSecret: x
fileMode: abc
watchSeconds: [1]
agentEnv: "A=1, lower=2, A=3"
overridable: "no"
storeDefaults:
  vault: "endpoint=https://v, endpoint-secret=a/b, token-secret=vault-token, mode=x!"
  s4: "x=1"
  git:
    aws-secret: creds
    agent-memory-request: 128Mi
sourceDeny: "sandbox: got; x:"
agentEnvAllow: {payments: [HTTPS_PROXY, "lower"]}
envPolicy: {rules: [{reject: nope, environmentVariables: []}]}
endpoint: http://x
`
	env := []string{
		"DYNAMIC_CONFIG_AGENT_FILE_MODE=0600",
		"DYNAMIC_CONFIG_AGENT_MEMORY_REQUEST=100Mi",
		"DYNAMIC_CONFIG_AGENT_KEY=k",
		"DYNAMIC_CONFIG_WEBHOOK_MWC=x",
		"DYNAMIC_CONFIG_WEBHOOK_CLASSES=yes",
		"DYNAMIC_CONFIG_AGENT_PULL_SECRET=a/b",
	}
	keys := strings.Join(documentKeys, ", ")
	want := []string{
		// document shape, in document order
		`tokenSecret: "tokenSecret" is not an installation setting; token-secret is a per-store knob — set it under storeDefaults.<store>; the ones there are: ` + keys,
		`endpoint: "endpoint" is not an installation setting; endpoint is a per-store knob — set it under storeDefaults.<store>; the ones there are: ` + keys,
		// per setting, table order; a hidden value after the variable's own problems
		`(hidden by DYNAMIC_CONFIG_AGENT_FILE_MODE) fileMode [DYNAMIC_CONFIG_AGENT_FILE_MODE]: file-mode is "abc": octal, like "0640"`,
		`watchSeconds: a setting is a word, a number or a boolean; this one is a list`,
		`agentEnv [DYNAMIC_CONFIG_AGENT_ENV] names "lower": variable names are UPPER_SNAKE, like "RUST_LOG"`,
		`agentEnv [DYNAMIC_CONFIG_AGENT_ENV] sets A twice`,
		`overridable [DYNAMIC_CONFIG_AGENT_DEFAULTS_OVERRIDABLE]: overridable is "no": "true" or "false"`,
		`storeDefaults.vault [DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (vault)]: token-secret is "vault-token": the form is <secret-name>/<key>`,
		`storeDefaults.vault [DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (vault)]: mode is "x": init, sidecar or both`,
		`storeDefaults.s4: "s4" is not a store this contract knows`,
		`agentEnvAllow.payments [DYNAMIC_CONFIG_WEBHOOK_AGENT_ENV_ALLOW]: "lower" is not a variable name (UPPER_SNAKE, an optional trailing "*")`,
		`sourceDeny [DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY]: "got" is not a store this contract knows`,
		`sourceDeny [DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY]: the group for "x" names nothing`,
		`DYNAMIC_CONFIG_WEBHOOK_CLASSES is "yes": "true" or "false"`,
		`DYNAMIC_CONFIG_AGENT_PULL_SECRET is "a/b": a Secret name`,
		// cross checks
		`storeDefaults.vault [DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (vault)]: endpoint and endpoint-secret are both set: one address, one place`,
		`storeDefaults.git [DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (git)]: aws-secret is the s3 source's flag; this group is git's`,
		`DYNAMIC_CONFIG_AGENT_MEMORY_REQUEST: agent-memory-request "100Mi" is above agent-memory-limit "64Mi" (from the built-in default): a request cannot exceed its limit`,
		`storeDefaults.git [DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (git)]: agent-memory-request "128Mi" is above agent-memory-limit "64Mi" (from the built-in default): a request cannot exceed its limit`,
		// environment scan, sorted
		`DYNAMIC_CONFIG_AGENT_KEY: "DYNAMIC_CONFIG_AGENT_KEY" is not an installation setting; key is a per-store knob — set it in DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (agent.defaults.perStore)`,
		`DYNAMIC_CONFIG_WEBHOOK_MWC: selfRotate TLS belongs to the front door (tls.mode: selfRotate, frontdoor --self-rotate); it is not an installation setting`,
		// envPolicy by path
		`envPolicy.rules[0].reject: "nope": anyIn, anyNotIn, allAreUsed or notAllAreUsed`,
		`envPolicy.rules[0].environmentVariables: is required and may not be empty`,
	}
	_, err := loadYAML(t, doc, env...)
	var p *Problems
	if !errors.As(err, &p) {
		t.Fatalf("got %v", err)
	}
	assertLines(t, p.Lines, want)
	if !strings.HasPrefix(p.Error(), "dynamic-config: the installation is invalid (23 problems; document ") {
		t.Errorf("header %q", p.Header())
	}
	if !strings.HasPrefix(p.AttemptedRevision, "sha256:") {
		t.Errorf("attempted revision %q", p.AttemptedRevision)
	}
}

func TestReportHeader(t *testing.T) {
	tests := []struct {
		name string
		p    Problems
		want string
	}{
		{"one problem, no document", Problems{Lines: []string{"x"}}, "dynamic-config: the installation is invalid (1 problem; document none):\n  x"},
		{"two problems with a document", Problems{DocumentPath: "/etc/dynamic-config/installation.yaml", Lines: []string{"a", "b"}},
			"dynamic-config: the installation is invalid (2 problems; document /etc/dynamic-config/installation.yaml):\n  a\n  b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Error(); got != tt.want {
				t.Errorf("got %q", got)
			}
		})
	}
}

func TestCrossChecks(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{"a group holding both template halves", []string{"DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS=consul: template=x, template-configmap=t"},
			[]string{"DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (consul): template and template-configmap are both set: one template, one place"}},
		{"aws-secret belongs to s3", []string{"DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS=s3: aws-secret=minio-cred; redis: aws-secret=x"},
			[]string{"DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (redis): aws-secret is the s3 source's flag; this group is redis's"}},
		{"a fleet request above the fleet limit", []string{"DYNAMIC_CONFIG_AGENT_CPU_REQUEST=1", "DYNAMIC_CONFIG_AGENT_CPU_LIMIT=500m"},
			[]string{`DYNAMIC_CONFIG_AGENT_CPU_REQUEST: agent-cpu-request "1" is above agent-cpu-limit "500m" (from the fleet default): a request cannot exceed its limit`}},
		{"a fleet limit below the built-in request names the request's variable", []string{"DYNAMIC_CONFIG_AGENT_MEMORY_LIMIT=16Mi"},
			[]string{`DYNAMIC_CONFIG_AGENT_MEMORY_REQUEST: agent-memory-request "32Mi" is above agent-memory-limit "16Mi" (from the fleet default): a request cannot exceed its limit`}},
		{"a store request above the fleet limit", []string{"DYNAMIC_CONFIG_AGENT_MEMORY_LIMIT=96Mi", "DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS=git: agent-memory-request=128Mi"},
			[]string{`DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (git): agent-memory-request "128Mi" is above agent-memory-limit "96Mi" (from the fleet default): a request cannot exceed its limit`}},
		{"a store limit below the fleet request", []string{"DYNAMIC_CONFIG_AGENT_CPU_REQUEST=200m", "DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS=etcd: agent-cpu-limit=100m"},
			[]string{`DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (etcd): agent-cpu-request "200m" is above agent-cpu-limit "100m" (from the store default for "etcd"): a request cannot exceed its limit`}},
		{"a store group raising its own limit passes", []string{"DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS=git: agent-memory-request=100Mi, agent-memory-limit=128Mi"}, nil},
		{"no CPU limit means nothing to exceed", []string{"DYNAMIC_CONFIG_AGENT_CPU_REQUEST=4"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadYAML(t, "", tt.env...)
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			assertLines(t, problemLines(t, "", tt.env...), tt.want)
		})
	}
}

func TestAttemptedRevisionNamesTheAttempt(t *testing.T) {
	attempted := func(doc string) string {
		_, err := loadYAML(t, doc)
		var p *Problems
		if !errors.As(err, &p) {
			t.Fatalf("got %v", err)
		}
		return p.AttemptedRevision
	}
	a, b := attempted("watchSeconds: soon\n"), attempted("watchSeconds: later\n")
	if a == b || a == EmptyRevision || !strings.HasPrefix(a, "sha256:") {
		t.Errorf("two broken edits: %s %s", a, b)
	}
	if attempted("envPolicy: {rules: [{environmentVariables: [{name: A, value: secret1}], mode: x}]}\n") !=
		attempted("envPolicy: {rules: [{environmentVariables: [{name: A, value: secret2}], mode: x}]}\n") {
		t.Error("a listed env-policy value entered the attempted revision")
	}
}
