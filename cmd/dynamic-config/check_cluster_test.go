package main

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/clustercheck"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/plan"
)

func TestCheckClusterRefusesBadUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an unknown output format", []string{"-o", "yaml"}, `-o is "yaml": text or json`},
		{"probe-only with no-probe", []string{"--probe-only", "--no-probe"}, "exclude each other"},
		{"an annotation without a value", []string{"--probe-annotation", "dynamic-config.rs/inject"}, "want KEY=VALUE"},
		{"a zero probe timeout", []string{"--probe-timeout", "0s"}, "--probe-timeout is 0s: it must be positive"},
		{"an empty namespace", []string{"-n", ""}, "--namespace is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut strings.Builder
			code := run(append([]string{"check-cluster"}, tt.args...), nil, &out, &errOut)
			if code != exitUsage || !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut.String(), exitUsage, tt.want)
			}
		})
	}
}

// The install proof recognises an injected pod by the names the decider's
// plan writes; clustercheck spells them itself (it imports neither side).
func TestTheInstallProofKnowsTheInjectedPodsNames(t *testing.T) {
	for _, tt := range []struct{ name, proof, plan string }{
		{"the status annotation", clustercheck.StatusAnnotation, plan.StatusAnnotationKey},
		{"the status value", clustercheck.StatusInjected, plan.StatusAnnotationValue},
		{"the watching agent", clustercheck.AgentContainer, plan.WatchingAgentName},
		{"the init agent", clustercheck.InitContainer, plan.InitAgentName},
	} {
		if tt.proof != tt.plan {
			t.Errorf("%s: clustercheck says %q, the plan writes %q", tt.name, tt.proof, tt.plan)
		}
	}
}
