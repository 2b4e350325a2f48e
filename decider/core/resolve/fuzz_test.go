package resolve

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// fuzzFacts turns "key=value" lines into a pod's facts.
func fuzzFacts(lines, ns string, uid int64, mode uint8) *decision.Facts {
	f := facts()
	f.Namespace = ns
	for _, line := range strings.Split(lines, "\n") {
		k, v, _ := strings.Cut(line, "=")
		if !strings.HasPrefix(k, "dynamic-config.rs/") {
			k = "dynamic-config.rs/" + k
		}
		f.Annotations[k] = v
	}
	if mode&1 != 0 {
		f.RunAsUser = &uid
	}
	if mode&2 != 0 {
		f.VolumeNames = []string{"dynamic-config-ca"}
	}
	if mode&4 != 0 {
		f.Containers = append(f.Containers, decision.Container{Name: "side", VolumeMountPaths: []string{"/config"}})
	}
	if mode&8 != 0 {
		f.TerminationGracePeriodSeconds = &uid
	}
	return f
}

func FuzzDecide(f *testing.F) {
	insts := []*installation.Installation{installation.Empty(), load(f, exampleA), load(f, exampleB), load(f, gateDoc)}
	seeds := []string{
		"inject=true\nsource=consul\nendpoint=http://consul:8500\nkey=k\npath=/config/a.toml",
		"inject=true",
		"inject=true\nsource.cache=redis\nendpoint.cache=r://x\nkey.cache=k\npath.cache=/config/c.json\nmode=both",
		"inject=true\nagent-env=RUST_LOG=debug, HTTPS_PROXY=x\nsource=vault",
		"inject=true\nalso.x=/config/x.json\nalso-section.x=db\nfile-mode=0o640\nagent-run-as-same-user=true",
		"status=injected\nclass=x",
	}
	for i, s := range seeds {
		f.Add(s, "default", int64(1000), uint8(i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, lines, ns string, uid int64, mode, which uint8) {
		inst := insts[int(which)%len(insts)]
		d := Decide(inst, nil, fuzzFacts(lines, ns, uid, mode))
		again := Decide(inst, nil, fuzzFacts(lines, ns, uid, mode))
		if !reflect.DeepEqual(d, again) {
			t.Fatalf("not deterministic")
		}
		if d.AuditAnnotations["revision"] != inst.Revision || d.InstallationRevision != inst.Revision {
			t.Fatalf("revision missing")
		}
		switch d.Outcome {
		case decision.OutcomeRefuse:
			if len(d.Refusals) != 1 {
				t.Fatalf("%d refusals", len(d.Refusals))
			}
			r := d.Refusals[0]
			if r.Slug == "" || r.Check == "" || r.Message == "" || r.HTTPCode == 0 || r.Reason == decision.ReasonUnspecified {
				t.Fatalf("incomplete refusal %+v", r)
			}
		case decision.OutcomeInject:
			if d.Plan == nil {
				t.Fatalf("inject without a plan")
			}
			seen := map[string]bool{}
			for _, a := range d.Plan.Agents {
				if seen[a.Container.Name] {
					t.Fatalf("container %q twice", a.Container.Name)
				}
				seen[a.Container.Name] = true
			}
		case decision.OutcomeSkip:
			if d.SkipReason == decision.SkipUnspecified {
				t.Fatalf("skip without a reason")
			}
		default:
			t.Fatalf("outcome %v", d.Outcome)
		}
		for i, r := range d.Renders {
			if i == 0 && r.Name != "" || i > 0 && (r.Name == "" || i > 1 && d.Renders[i-1].Name >= r.Name) {
				t.Fatalf("render order %v", r.Name)
			}
			if r.Validated != (d.Outcome == decision.OutcomeInject) {
				t.Fatalf("render %q validated %v on %v", r.Name, r.Validated, d.Outcome)
			}
			for _, v := range r.Values {
				if v.Tier == decision.TierUnspecified || v.Set == (v.Tier == decision.TierNone) {
					t.Fatalf("render %q knob %s: tier %v set %v", r.Name, v.Knob, v.Tier, v.Set)
				}
			}
		}
		if !slices.IsSortedFunc(d.Renders[min(1, len(d.Renders)):], func(a, b decision.Render) int { return strings.Compare(a.Name, b.Name) }) {
			t.Fatalf("named renders not sorted")
		}
	})
}
