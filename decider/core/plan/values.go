package plan

import (
	"path"
	"strconv"
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

// decimal prints a strict decimal number without leading zeros ("015" → "15").
func decimal(s string) string {
	t := strings.TrimLeft(s, "0")
	if t == "" && s != "" {
		return "0"
	}
	return t
}

// seconds prints whole seconds with an optional trailing "s" as a plain number.
func seconds(s string) string {
	return decimal(strings.TrimSuffix(s, "s"))
}

// octalMode parses a file mode ("0640", "640", "0o640") and returns its bits
// and its normalised spelling: "0" + the octal digits without extra zeros.
func octalMode(s string) (uint64, string, bool) {
	digits := strings.TrimPrefix(s, "0o")
	n, err := strconv.ParseUint(digits, 8, 64)
	if err != nil {
		return 0, s, false
	}
	return n, "0" + strconv.FormatUint(n, 8), true
}

// unsigned parses a strict decimal; a value too large saturates (ok stays true).
func unsigned(s string) (uint64, bool) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err == nil {
		return n, true
	}
	if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange {
		return ^uint64(0), true
	}
	return 0, false
}

// metricsPort is the render's resolved metrics port, 0 when none.
func metricsPort(v *view) int32 {
	s, ok := v.get(registry.MetricsPort)
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0
	}
	return int32(n)
}

// int64Value parses a resolved decimal knob as int64 (0 when unparsable).
func int64Value(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}
