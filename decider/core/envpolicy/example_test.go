package envpolicy_test

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
)

const revision = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"

// A policy from DYNAMIC_CONFIG_ENV_POLICY judging a Deployment's pod
// template: the first failing enforce rule refuses; the warn rule before it
// is returned with the refusal.
func ExampleDecide() {
	policy, problems := envpolicy.ParseVariable(`
rules:
  - reject: anyIn
    mode: warn
    environmentVariables: [{name: DEBUG}]
  - reject: anyIn
    namespaces: [payments]
    environmentVariables:
      - name: HTTPS_PROXY
      - name: LOG_LEVEL
        value: trace
`, docparse.Text)
	if problems != nil {
		fmt.Println(problems)
		return
	}
	facts := &decision.Facts{
		ResourceKind: decision.KindDeployment,
		Namespace:    "payments",
		Containers: []decision.Container{{Name: "app", Env: []decision.EnvVar{
			{Name: "DEBUG", Value: "1"},
			{Name: "LOG_LEVEL", Value: "trace"},
		}}},
	}
	d := envpolicy.Decide(policy, revision, facts)
	r := d.Refusals[0]
	fmt.Println(r.Slug, r.HTTPCode, r.Check, r.Key)
	fmt.Println(r.Message)
	fmt.Println(d.Warnings[0].Message)
	// Output:
	// DynamicConfigEnvPolicy 403 env-policy.rule envPolicy.rules[1]
	// envPolicy.rules[1] (anyIn) rejects this Deployment in namespace "payments": it sets LOG_LEVEL (with the listed value), which this rule forbids
	// envPolicy.rules[0] (anyIn, warn) would reject this Deployment in namespace "payments": it sets DEBUG, which this rule forbids
}

// An audit rule never refuses; its finding becomes an audit annotation next
// to the revision.
func ExampleDecide_audit() {
	policy, _ := envpolicy.ParseVariable(`{"rules": [{"reject": "anyNotIn", "mode": "audit",
  "environmentVariables": [{"name": "OTEL_SERVICE_NAME"}]}]}`, docparse.Text)
	d := envpolicy.Decide(policy, revision, &decision.Facts{
		ResourceKind: decision.KindPod, Namespace: "default",
		Containers: []decision.Container{{Name: "app"}},
	})
	fmt.Println(d.Outcome == decision.OutcomeAllow)
	fmt.Println(d.AuditAnnotations["env-policy-rule-0"])
	// Output:
	// true
	// would reject: it sets none of OTEL_SERVICE_NAME; at least one of them is required
}

// Every problem of the document's envPolicy is reported with its path.
func ExampleParseDocument() {
	var doc yaml.Node
	_ = yaml.Unmarshal([]byte(`
envPolicy:
  targets: [pods, deployments]
  rules:
    - reject: noneIn
      environmentVariables:
        - name: HTTPS-PROXY
`), &doc)
	envPolicyNode := doc.Content[0].Content[1]
	_, problems := envpolicy.ParseDocument(docparse.FromYAML(envPolicyNode), "envPolicy")
	for _, p := range problems {
		fmt.Println(p)
	}
	// Output:
	// envPolicy.targets[1]: "deployments": "pods" or "workloads"
	// envPolicy.rules[0].reject: "noneIn": anyIn, anyNotIn, allAreUsed or notAllAreUsed
	// envPolicy.rules[0].environmentVariables[0].name: "HTTPS-PROXY" is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)
}

// The canonical form enters the revision: defaults filled, keys sorted, a
// listed value only as its SHA-256.
func ExampleCanonical() {
	policy, _ := envpolicy.ParseVariable(`rules: [{environmentVariables: [{name: LOG_LEVEL, value: debug}]}]`, docparse.Text)
	fmt.Println(string(envpolicy.Canonical(policy)))
	// Output:
	// {"rules":[{"environmentVariables":[{"name":"LOG_LEVEL","value":"0b8e9e995d8d77f1e4770f0f79665aee6f3f70247b3735422daba73df4c3096f"}],"mode":"enforce","reject":"anyIn"}],"targets":["pods","workloads"]}
}
