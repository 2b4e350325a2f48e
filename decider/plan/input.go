// Package plan builds the semantic mutation plan (spec 03 §2–3) and the
// mutating-path warnings (spec 03 §6.1) from values the resolver has already
// resolved and validated. It never refuses: every check ran before it.
package plan

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/installation"
)

// Input is everything the plan builder needs, handed over by the resolver.
type Input struct {
	// Facts are the pod's facts (containers, volumes, pull secrets, …); the
	// plan reads the app containers (names, command, args) and the pull secrets.
	Facts *decision.Facts
	// Installation supplies the agent image and the pull secret.
	Installation *installation.Installation
	// Default is the default render. Pod-wide and default-only knobs live in
	// its Values too (mode, native-sidecar, volume-medium, agent-*-request,
	// agent-*-limit, agent-run-as-user/group, readiness, inject-containers,
	// env-inject, env-restart, init-first, agent-image, aws-secret, extra-secret,
	// schema-configmap, canary-configmap, dynamic, revoke-on-shutdown, …).
	Default Render
	// Named are the named renders, sorted by name.
	Named []Render
	// AgentEnv is the merged fleet + pod agent environment (spec 02 §8), in order.
	AgentEnv []installation.EnvEntry
	// Also are the also.<name> extra renderings, sorted by name.
	Also []Also
}

// Render is one render's effective values: knob spelling (no prefix, no
// suffix) → normalised value. A knob that resolved to nothing is absent.
// Normalised means: file-mode as "0<oct>", numbers in plain decimal, booleans
// "true"/"false", quantities and strings as written.
//
// What the plan reads (spec 03 §2–3):
//   - Values hold the value of ANY tier (annotation, per-store, fleet,
//     built-in, pod spec). A built-in the resolver leaves out is filled by the
//     plan itself (mode sidecar, watch-seconds 15, volume-medium memory,
//     agent-cpu-request 10m, agent-memory-request 32Mi, agent-memory-limit
//     64Mi, agent-run-as-user/group 65532, readiness, tls-reload and
//     revoke-on-shutdown true, every other boolean false).
//   - References stay as written: token-secret, password-secret and
//     endpoint-secret "<secret>/<key>"; ca-configmap, ssh-secret,
//     template-configmap, schema-configmap, canary-configmap "<name>" or
//     "<name>/<key>"; tls-secret, extra-secret, aws-secret a plain name.
//   - agent-run-as-user holds the inherited UID when agent-run-as-same-user
//     is "true" (tier POD_SPEC).
//   - agent-image, when present, is the default render's image (the pod's
//     allowed value, or the installation's); absent, the installation image
//     is used. Named renders always get the installation image.
//   - inject-containers is the annotation as written (the plan splits it).
//   - revoke-grace may keep its trailing "s"; metrics-port "0" means no port.
//   - A pair resolves as a level: at most one of template/template-configmap
//     and of endpoint/endpoint-secret is present.
type Render struct {
	// Name is "" for the default render.
	Name string
	// Values maps a knob to its effective value.
	Values map[string]string
}

// Also is one also.<name> extra rendering of the default document.
type Also struct {
	Name    string
	Path    string
	Section string // "" when no also-section.<name>
}
