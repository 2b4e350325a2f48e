// Package plan builds the semantic mutation plan (spec 03 §2–3) and the
// mutating-path warnings (spec 03 §6.1) from values the resolver has already
// resolved and validated. It never refuses: every check ran before it.
package plan

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// Input is everything the plan builder needs, handed over by the resolver.
type Input struct {
	// Facts are the pod's facts (containers, volumes, pull secrets, …); the
	// plan reads the app containers (names, command, args) and the pull secrets.
	Facts *decision.Facts
	// Installation supplies the agent image and the pull secret.
	Installation *installation.Installation
	// Default is the default render. Pod-wide and default-only knobs (the
	// registry's scope pod and default) live in its Values too.
	Default Render
	// Named are the named renders, sorted by name.
	Named []Render
	// AgentEnv is the merged fleet + pod agent environment (spec 02 §8), in order.
	AgentEnv []installation.EnvEntry
	// Also are the also.<name> extra renderings, sorted by name.
	Also []Also
	// PlacementExplicit tells that native-sidecar was chosen for this pod:
	// written by the pod (an annotation, or a class it named) or pinned by
	// the installation. A pod that must finish (restartPolicy Never or
	// OnFailure) gets native sidecars only when it is false (issue 20).
	PlacementExplicit bool
	// RunAsUserPin names the installation value that pins
	// agent-run-as-user ("" when it is not pinned): the unreadable-file
	// warning says which pin keeps the pod from the fix (issue 40).
	RunAsUserPin string
}

// pod is the pod's facts: a nil Facts reads as a pod with nothing in it.
func (in *Input) pod() *decision.Facts {
	if in.Facts == nil {
		return &noFacts
	}
	return in.Facts
}

// noFacts is the pod of an Input without Facts; nothing writes to it.
var noFacts decision.Facts

// Render is one render's effective values, one typed slot per knob
// (registry.Values): a knob that resolved to nothing is unset. What the plan
// reads (spec 03 §2–3):
//   - Values hold the value of ANY tier (annotation, per-store, fleet,
//     built-in, pod spec); a built-in the resolver leaves out is the
//     registry row's (lookup).
//   - References stay as written ("<secret>/<key>", "<name>" or
//     "<name>/<key>", plain Secret names).
//   - agent-run-as-user holds the inherited UID when agent-run-as-same-user
//     is "true" (tier POD_SPEC).
//   - agent-image, when set, is the default render's image; unset, the
//     installation image is used. Named renders always get the installation image.
//   - inject-containers is the annotation as written (the plan splits it).
//   - revoke-grace may keep its trailing "s"; metrics-port "0" means no port.
//   - A pair resolves as a level: at most one half of template/template-configmap
//     and of endpoint/endpoint-secret is set.
type Render struct {
	// Name is "" for the default render.
	Name string
	// Values are the render's effective values by knob.
	Values registry.Values
	// FileModePin names the installation value that pins the render's
	// file-mode ("" when it is not pinned), as RunAsUserPin.
	FileModePin string
}

// Also is one also.<name> extra rendering of the default document.
type Also struct {
	Name    string
	Path    string
	Section string // "" when no also-section.<name>
}
