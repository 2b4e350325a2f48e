package resolve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
)

// load builds an installation from a YAML document and environment lines,
// through the real installationloader.
func load(t testing.TB, doc string, env ...string) *installation.Installation {
	t.Helper()
	opts := installationloader.Options{Environ: append([]string{}, env...)}
	if doc != "" {
		p := filepath.Join(t.TempDir(), "installation.yaml")
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		opts.DocumentPath, opts.DocumentExplicit = p, true
	}
	inst, err := installationloader.Load(opts)
	if err != nil {
		t.Fatalf("installation does not load: %v", err)
	}
	return inst
}

// facts is a pod in namespace "default" with one container "app" and the
// given annotations (keys without the prefix get it).
func facts(kv ...string) *decision.Facts {
	f := &decision.Facts{
		Purpose:      decision.PurposeMutate,
		Operation:    decision.OperationCreate,
		Namespace:    "default",
		Name:         "demo",
		ResourceKind: decision.KindPod,
		Annotations:  map[string]string{},
		Containers:   []decision.Container{{Name: "app", HasCommand: true, Command: []string{"/app"}}},
	}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i]
		if !strings.HasPrefix(k, "dynamic-config.rs/") {
			k = "dynamic-config.rs/" + k
		}
		f.Annotations[k] = kv[i+1]
	}
	return f
}

// consulPod is a complete consul pod (example 1 of spec 03 §7) plus extra annotations.
func consulPod(extra ...string) *decision.Facts {
	return facts(append([]string{
		"inject", "true", "source", "consul", "endpoint", "http://consul:8500",
		"key", "myapp/config.json", "path", "/config/rendered.toml",
	}, extra...)...)
}

// agent returns the plan's agent container of that name.
func agent(t testing.TB, d decision.Decision, name string) decision.AgentContainer {
	t.Helper()
	if d.Plan == nil {
		t.Fatalf("no plan: outcome %v, refusals %+v", d.Outcome, d.Refusals)
	}
	for _, a := range d.Plan.Agents {
		if a.Container.Name == name {
			return a.Container
		}
	}
	t.Fatalf("no agent %q in the plan", name)
	return decision.AgentContainer{}
}

// value returns the resolved value of knob in render.
func resolved(t testing.TB, d decision.Decision, render, knob string) decision.ResolvedValue {
	t.Helper()
	for _, r := range d.Renders {
		if r.Name != render {
			continue
		}
		for _, v := range r.Values {
			if v.Knob == knob {
				return v
			}
		}
	}
	t.Fatalf("no value %q in render %q", knob, render)
	return decision.ResolvedValue{}
}

func mustInject(t testing.TB, d decision.Decision) {
	t.Helper()
	if d.Outcome != decision.OutcomeInject {
		t.Fatalf("outcome %v, want INJECT; refusals %+v", d.Outcome, d.Refusals)
	}
}

func mustRefuse(t testing.TB, d decision.Decision) decision.Refusal {
	t.Helper()
	if d.Outcome != decision.OutcomeRefuse || len(d.Refusals) != 1 {
		t.Fatalf("outcome %v, want one refusal; refusals %+v", d.Outcome, d.Refusals)
	}
	return d.Refusals[0]
}

func args(c decision.AgentContainer) string { return strings.Join(c.Args, " ") }

func i64(n int64) *int64 { return &n }
