package plan

import (
	"encoding/json"
	"maps"
	"reflect"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// consul is a minimal default render's values (canonical example 1).
func consul() map[string]string {
	return map[string]string{
		"source":   "consul",
		"endpoint": "http://consul:8500",
		"key":      "myapp/config.json",
		"path":     "/config/rendered.toml",
	}
}

// with returns base overlaid with extra; an extra value "" deletes the knob.
func with(base map[string]string, extra map[string]string) map[string]string {
	out := maps.Clone(base)
	for k, v := range extra {
		if v == "" {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// values is the typed hand-over of knob name → value (the resolver's
// registry.Values), failing the build of the test on an unknown name.
func values(m map[string]string) registry.Values {
	var v registry.Values
	for name, text := range m {
		id, ok := registry.ByName(name)
		if !ok {
			panic("no registry key " + name)
		}
		v.Set(id, text)
	}
	return v
}

// oneApp is a pod with one container "app".
func oneApp() *decision.Facts {
	return &decision.Facts{Containers: []decision.Container{{Name: "app"}}}
}

// input builds an Input over the empty installation.
func input(def map[string]string, named ...Render) *Input {
	return &Input{
		Facts:        oneApp(),
		Installation: installation.Empty(),
		Default:      Render{Values: values(def)},
		Named:        named,
	}
}

// agent returns the plan's agent container of that name, failing when absent.
func agent(t *testing.T, p *decision.Plan, name string) decision.AgentContainer {
	t.Helper()
	for _, a := range p.Agents {
		if a.Container.Name == name {
			return a.Container
		}
	}
	t.Fatalf("no agent %q in plan; agents: %v", name, agentNames(p))
	return decision.AgentContainer{}
}

func agentNames(p *decision.Plan) []string {
	var names []string
	for _, a := range p.Agents {
		names = append(names, a.Container.Name)
	}
	return names
}

// equal fails with both values as JSON when they differ.
func equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("%s:\n got  %s\n want %s", what, g, w)
	}
}

func str(s string) *string { return &s }

// restricted is the restricted security context with the given ids.
func restricted(uid, gid int64) decision.SecurityContext {
	return decision.SecurityContext{
		RunAsNonRoot:             true,
		RunAsUser:                uid,
		RunAsGroup:               gid,
		AllowPrivilegeEscalation: false,
		CapabilitiesDrop:         []string{"ALL"},
		ReadOnlyRootFilesystem:   true,
		SeccompProfileType:       "RuntimeDefault",
	}
}
