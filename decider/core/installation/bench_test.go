package installation

import "testing"

// BenchmarkGateMatches is the per-request gate check (every render, every agent-env name).
func BenchmarkGateMatches(b *testing.B) {
	groups, problems := ParseGate("agentEnvAllow", "CTX", "payments: HTTPS_PROXY, AWS_*; team-a: NO_PROXY; *: RUST_LOG, OTEL_*")
	if len(problems) > 0 {
		b.Fatal(problems)
	}
	g := Gate{Groups: groups}
	b.ReportAllocs()
	for b.Loop() {
		if !g.Matches("payments", "AWS_REGION") || g.Matches("default", "HTTPS_PROXY") {
			b.Fatal("wrong ruling")
		}
	}
}
