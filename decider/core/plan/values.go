package plan

import (
	"path"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// view reads one render's values: its own per-render knobs from the render,
// pod-wide and default-only knobs from the default render.
type view struct {
	in     *Input
	render *Render
	// name is "" for the default render.
	name string
	// dir is the shared volume's mount path (the default path's directory).
	dir string
}

// isDefault reports whether the view is the default render's.
func (v *view) isDefault() bool { return v.name == "" }

// get returns the render's own value of a knob (built-in when unresolved).
func (v *view) get(knob registry.ID) (string, bool) {
	return lookup(v.render, knob)
}

// pod returns a pod-wide (or default-only) knob: always the default render's.
func (v *view) pod(knob registry.ID) (string, bool) {
	return lookup(&v.in.Default, knob)
}

// is reports whether the render's own knob is exactly "true".
func (v *view) is(knob registry.ID) bool {
	s, _ := v.get(knob)
	return s == "true"
}

// podIs reports whether the pod-wide knob is exactly "true".
func (v *view) podIs(knob registry.ID) bool {
	s, _ := v.pod(knob)
	return s == "true"
}

// lookup is the render's value of a knob; a knob the resolver handed over
// no value for falls back to the registry's built-in default (the resolver
// normally fills the built-in tier itself; the fallback keeps the agent
// shape complete).
func lookup(r *Render, knob registry.ID) (string, bool) {
	if s, ok := r.Values.Get(knob); ok {
		return s, true
	}
	b := knob.Row().BuiltIn
	return b, b != ""
}

// number is the render's own number knob as the resolver parsed it (the
// built-in's when unresolved); ok is false when there is none.
func (v *view) number(knob registry.ID) (uint64, bool) {
	return lookupNumber(v.render, knob)
}

// podNumber is a pod-wide number knob: always the default render's.
func (v *view) podNumber(knob registry.ID) (uint64, bool) {
	return lookupNumber(&v.in.Default, knob)
}

// lookupNumber is lookup's number: the value's number as its grammar parsed
// it, never parsed again here.
func lookupNumber(r *Render, knob registry.ID) (uint64, bool) {
	if r.Values.Has(knob) {
		return r.Values.Number(knob), true
	}
	b := knob.BuiltInValue()
	return b.Number, b.Text != ""
}

// installationOf returns the installation, the empty one when none was handed over.
func installationOf(in *Input) *installation.Installation {
	if in.Installation == nil {
		return installation.Empty()
	}
	return in.Installation
}

// agentImage is the installation's image, the built-in when it names none.
func agentImage(inst *installation.Installation) string {
	if inst.AgentImage == "" {
		return installation.BuiltInAgentImage
	}
	return inst.AgentImage
}

// sharedDir is the parent directory of the resolved default path.
func sharedDir(in *Input) string {
	p, _ := in.Default.Values.Get(registry.Path)
	return path.Dir(p)
}

// splitRef splits a "<name>/<key>" or "<name>" reference at its first "/";
// the key is defaultKey when the reference names none.
func splitRef(ref, defaultKey string) (name, key string) {
	if i := strings.IndexByte(ref, '/'); i >= 0 {
		return ref[:i], ref[i+1:]
	}
	return ref, defaultKey
}

// metricsPort is the render's resolved metrics port, 0 when none (the
// grammar holds it to 0–65535).
func metricsPort(v *view) int32 {
	n, _ := v.number(registry.MetricsPort)
	return int32(n)
}
