package resolve

import (
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

func BenchmarkDecide(b *testing.B) {
	three := consulPod()
	for _, n := range []string{"alpha", "beta", "gamma"} {
		three.Annotations["dynamic-config.rs/source."+n] = "redis"
		three.Annotations["dynamic-config.rs/endpoint."+n] = "redis://redis:6379"
		three.Annotations["dynamic-config.rs/key."+n] = "myapp/" + n + ".json"
		three.Annotations["dynamic-config.rs/path."+n] = "/config/" + n + ".json"
	}
	pods := []struct {
		name string
		pod  *decision.Facts
		want decision.Outcome
	}{
		{"minimal consul", consulPod(), decision.OutcomeInject},
		{"vault with CA", facts("inject", "true", "source", "vault", "endpoint", "https://vault.vault:8200",
			"key", "secret/myapp", "path", "/config/rendered.yaml", "auth", "kubernetes", "auth-role", "myapp",
			"ca-configmap", "vault-ca"), decision.OutcomeInject},
		{"three named renders", three, decision.OutcomeInject},
		{"a refusal", consulPod("watch-seconds", "soon"), decision.OutcomeRefuse},
	}
	for _, p := range pods {
		benchDecide(b, p.name, installation.Empty(), p.pod, p.want)
	}
	// The installation answering most knobs: its provenance is looked up per request.
	seedPod := facts("inject", "true", "source", "vault", "key", "secret/myapp", "path", "/config/rendered.yaml")
	benchDecide(b, "vault leaning on the seed installation", load(b, seedInstallation), seedPod, decision.OutcomeInject)
	// What the front door's DECISION_VIEW_PLAN runs: no per-value provenance.
	b.Run("plan view of the seed pod", func(b *testing.B) {
		inst := load(b, seedInstallation)
		if d := DecidePlan(inst, nil, seedPod); d.Outcome != decision.OutcomeInject {
			b.Fatalf("outcome %v: %+v", d.Outcome, d.Refusals)
		}
		b.ReportAllocs()
		for b.Loop() {
			DecidePlan(inst, nil, seedPod)
		}
	})
}

func benchDecide(b *testing.B, name string, inst *installation.Installation, pod *decision.Facts, want decision.Outcome) {
	b.Run(name, func(b *testing.B) {
		if d := Decide(inst, nil, pod); d.Outcome != want {
			b.Fatalf("outcome %v, want %v: %+v", d.Outcome, want, d.Refusals)
		}
		b.ReportAllocs()
		for b.Loop() {
			Decide(inst, nil, pod)
		}
	})
}
