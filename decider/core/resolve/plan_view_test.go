package resolve

import (
	"reflect"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// TestDecidePlanIsDecideWithoutValues holds DecidePlan to Decide: the same
// decision in every field, except that the renders carry no values.
func TestDecidePlanIsDecideWithoutValues(t *testing.T) {
	seed := load(t, seedInstallation)
	three := consulPod()
	for _, n := range []string{"alpha", "beta"} {
		three.Annotations["dynamic-config.rs/source."+n] = "redis"
		three.Annotations["dynamic-config.rs/endpoint."+n] = "redis://redis:6379"
		three.Annotations["dynamic-config.rs/key."+n] = "myapp/" + n + ".json"
		three.Annotations["dynamic-config.rs/path."+n] = "/config/" + n + ".json"
	}
	validate := consulPod()
	validate.Purpose = decision.PurposeValidate
	cases := []struct {
		name string
		inst *installation.Installation
		pod  *decision.Facts
	}{
		{"an injection under the empty installation", installation.Empty(), consulPod()},
		{"an injection with named renders", installation.Empty(), three},
		{"an injection leaning on the seed installation", seed,
			facts("inject", "true", "source", "vault", "key", "secret/myapp", "path", "/config/rendered.yaml")},
		{"a malformed refusal", installation.Empty(), consulPod("watch-seconds", "soon")},
		{"a pinned refusal", seed, facts("inject", "true", "source", "consul", "endpoint", "http://elsewhere:8500")},
		{"a skip", installation.Empty(), facts("inject", "false")},
		{"the validating path", seed, validate},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := Decide(c.inst, nil, c.pod)
			for i := range want.Renders {
				want.Renders[i].Values = nil
			}
			if got := DecidePlan(c.inst, nil, c.pod); !reflect.DeepEqual(got, want) {
				t.Errorf("DecidePlan differs from Decide without values:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}
