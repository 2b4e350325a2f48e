package envpolicy

import (
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// benchPolicy is a realistic policy: four rules over a dozen names.
func benchPolicy() *Policy {
	return &Policy{Rules: []Rule{
		{Reject: RejectAnyIn, Mode: ModeEnforce, Variables: names("HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY")},
		{Reject: RejectAnyIn, Mode: ModeWarn, Variables: []Variable{{Name: "LOG_LEVEL", Value: "trace", HasValue: true}}, Namespaces: []string{"payments", "*"}},
		{Reject: RejectNotAllAreUsed, Mode: ModeEnforce, Variables: names("DB_USER", "DB_PASSWORD")},
		{Reject: RejectAnyNotIn, Mode: ModeAudit, Variables: names("OTEL_SERVICE_NAME", "SERVICE_NAME")},
	}}
}

// benchPod is an injected pod: two app containers, an agent, an init agent.
func benchPod() *decision.Facts {
	return &decision.Facts{
		ResourceKind: decision.KindPod, Namespace: "payments",
		Containers: []decision.Container{
			{Name: "app", Env: []decision.EnvVar{lit("PORT", "8080"), lit("LOG_LEVEL", "info"), from("DB_USER"), from("DB_PASSWORD"), lit("OTEL_SERVICE_NAME", "app")}},
			{Name: "proxy", Env: []decision.EnvVar{lit("UPSTREAM", "127.0.0.1:8080")}},
			{Name: "dynamic-config-agent", Env: []decision.EnvVar{from("DYNAMIC_CONFIG_POD_NAME"), from("DYNAMIC_CONFIG_POD_UID"), from("DYNAMIC_CONFIG_AGENT_TOKEN")}},
		},
		InitContainers: []decision.Container{
			{Name: "dynamic-config-init", Env: []decision.EnvVar{from("DYNAMIC_CONFIG_POD_NAME"), from("DYNAMIC_CONFIG_AGENT_TOKEN")}},
		},
	}
}

func BenchmarkDecideAllowed(b *testing.B) {
	p, f := benchPolicy(), benchPod()
	b.ReportAllocs()
	for b.Loop() {
		if d := Decide(p, testRevision, f); d.Outcome != decision.OutcomeAllow {
			b.Fatal(d.Outcome)
		}
	}
}

func BenchmarkDecideRefused(b *testing.B) {
	p, f := benchPolicy(), benchPod()
	f.Containers[1].Env = append(f.Containers[1].Env, lit("HTTPS_PROXY", "http://proxy:3128"))
	b.ReportAllocs()
	for b.Loop() {
		if d := Decide(p, testRevision, f); d.Outcome != decision.OutcomeRefuse {
			b.Fatal(d.Outcome)
		}
	}
}

func BenchmarkParseVariable(b *testing.B) {
	text := seedNotAllAreUsed
	b.ReportAllocs()
	for b.Loop() {
		if _, problems := parseVariable(text); problems != nil {
			b.Fatal(problems)
		}
	}
}
