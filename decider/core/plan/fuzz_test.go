package plan

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// knobChoices are the knobs the fuzzer switches on and off, each with a
// value the resolver could hand over.
var knobChoices = []struct{ knob, value string }{
	{"mode", "both"}, {"native-sidecar", "true"}, {"init-first", "true"}, {"volume-medium", "disk"},
	{"ca-configmap", "ca/x.pem"}, {"ssh-secret", "ssh"}, {"tls-secret", "tls"}, {"template-configmap", "tpl"},
	{"schema-configmap", "schema"}, {"canary-configmap", "canary"}, {"extra-secret", "extra"},
	{"token-secret", "t/k"}, {"aws-secret", "aws"}, {"events", "true"}, {"metrics-port", "9110"},
	{"readiness", "false"}, {"file-mode", "0644"}, {"history", "5"}, {"dynamic", "true"},
	{"revoke-on-shutdown", "false"}, {"watch-seconds", "1"}, {"env-inject", "app"}, {"env-restart", "true"},
	{"inject-containers", "app"}, {"timeout", "9"}, {"tls-reload", "false"},
}

// FuzzBuild checks the plan's invariants over arbitrary knob combinations:
// no panic, unique agent and volume names, every agent mount names a plan
// volume, no empty argument, and a deterministic result.
func FuzzBuild(f *testing.F) {
	f.Add(uint32(0), uint8(0))
	f.Add(^uint32(0), uint8(3))
	f.Add(uint32(0x2aa5), uint8(1))
	f.Fuzz(func(t *testing.T, mask uint32, namedCount uint8) {
		def := consul()
		for i, c := range knobChoices {
			if mask&(1<<i) != 0 {
				def[c.knob] = c.value
			}
		}
		var named []Render
		for i := 0; i < int(namedCount%4); i++ {
			n := string(rune('a' + i))
			knobs := map[string]string{"source": "redis", "key": "k", "path": "/config/" + n + ".json"}
			for j, c := range knobChoices {
				if mask&(1<<((j+i+1)%32)) != 0 && c.knob != "mode" {
					knobs[c.knob] = c.value
				}
			}
			named = append(named, Render{Name: n, Values: values(knobs)})
		}
		in := input(def, named...)
		in.Facts = &decision.Facts{Containers: []decision.Container{
			{Name: "app", HasCommand: true, Command: []string{"/app"}}, {Name: "side"},
		}}
		p := Build(in)

		volumes := map[string]bool{}
		for _, v := range p.Volumes {
			if volumes[v.Name] {
				t.Fatalf("volume %q twice", v.Name)
			}
			volumes[v.Name] = true
		}
		agents := map[string]bool{}
		for _, a := range p.Agents {
			c := a.Container
			if agents[c.Name] {
				t.Fatalf("agent %q twice", c.Name)
			}
			agents[c.Name] = true
			for _, m := range c.VolumeMounts {
				if !volumes[m.Name] {
					t.Fatalf("agent %q mounts %q, which the plan does not add", c.Name, m.Name)
				}
			}
			for i, arg := range c.Args {
				if arg == "" {
					t.Fatalf("agent %q has an empty argument at %d: %q", c.Name, i, c.Args)
				}
			}
			if !strings.HasPrefix(c.Name, "dynamic-config-") || c.Image == "" {
				t.Fatalf("agent %+v", c)
			}
		}
		if len(p.Agents) == 0 {
			t.Fatal("no agent")
		}
		equal(t, "second build", Build(in), p)
		equal(t, "second warnings", Warnings(in), Warnings(in))
	})
}
