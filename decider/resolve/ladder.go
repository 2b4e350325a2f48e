package resolve

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/registry"
)

// rows is the registry, looked up once.
var rows = registry.Rows()

// Registry positions of the knobs the steps name, resolved once at init.
var (
	iInject            = registry.MustIndex("inject")
	iSource            = registry.MustIndex("source")
	iEndpoint          = registry.MustIndex("endpoint")
	iEndpointSecret    = registry.MustIndex("endpoint-secret")
	iKey               = registry.MustIndex("key")
	iPath              = registry.MustIndex("path")
	iMode              = registry.MustIndex("mode")
	iWatchSeconds      = registry.MustIndex("watch-seconds")
	iTimeout           = registry.MustIndex("timeout")
	iAgentImage        = registry.MustIndex("agent-image")
	iSection           = registry.MustIndex("section")
	iAuth              = registry.MustIndex("auth")
	iAuthMount         = registry.MustIndex("auth-mount")
	iAuthRole          = registry.MustIndex("auth-role")
	iAuthUsername      = registry.MustIndex("auth-username")
	iAuthTokenPath     = registry.MustIndex("auth-token-path")
	iNamespace         = registry.MustIndex("namespace")
	iRef               = registry.MustIndex("ref")
	iAPIURL            = registry.MustIndex("api-url")
	iTokenSecret       = registry.MustIndex("token-secret")
	iPasswordSecret    = registry.MustIndex("password-secret")
	iCAConfigMap       = registry.MustIndex("ca-configmap")
	iTLSSecret         = registry.MustIndex("tls-secret")
	iSSHSecret         = registry.MustIndex("ssh-secret")
	iVolumeMedium      = registry.MustIndex("volume-medium")
	iNativeSidecar     = registry.MustIndex("native-sidecar")
	iCPURequest        = registry.MustIndex("agent-cpu-request")
	iMemoryRequest     = registry.MustIndex("agent-memory-request")
	iCPULimit          = registry.MustIndex("agent-cpu-limit")
	iMemoryLimit       = registry.MustIndex("agent-memory-limit")
	iFileMode          = registry.MustIndex("file-mode")
	iRunAsUser         = registry.MustIndex("agent-run-as-user")
	iRunAsGroup        = registry.MustIndex("agent-run-as-group")
	iEphemeralRequest  = registry.MustIndex("agent-ephemeral-request")
	iEphemeralLimit    = registry.MustIndex("agent-ephemeral-limit")
	iEnvInject         = registry.MustIndex("env-inject")
	iEnvRestart        = registry.MustIndex("env-restart")
	iMetricsPort       = registry.MustIndex("metrics-port")
	iReadiness         = registry.MustIndex("readiness")
	iInjectContainers  = registry.MustIndex("inject-containers")
	iRevokeGrace       = registry.MustIndex("revoke-grace")
	iInitFirst         = registry.MustIndex("init-first")
	iNotifyHTTP        = registry.MustIndex("notify-http")
	iOnDrift           = registry.MustIndex("on-drift")
	iTLSReload         = registry.MustIndex("tls-reload")
	iHistory           = registry.MustIndex("history")
	iRequireAck        = registry.MustIndex("require-ack")
	iEvents            = registry.MustIndex("events")
	iClass             = registry.MustIndex("class")
	iCanaryConfigMap   = registry.MustIndex("canary-configmap")
	iSameUser          = registry.MustIndex("agent-run-as-same-user")
	iExtraSecret       = registry.MustIndex("extra-secret")
	iTLSSkipVerify     = registry.MustIndex("tls-skip-verify")
	iSchemaConfigMap   = registry.MustIndex("schema-configmap")
	iStartupPolicy     = registry.MustIndex("startup-policy")
	iOnDelete          = registry.MustIndex("on-delete")
	iMaxDocumentBytes  = registry.MustIndex("max-document-bytes")
	iMeta              = registry.MustIndex("meta")
	iDynamic           = registry.MustIndex("dynamic")
	iRevokeOnShutdown  = registry.MustIndex("revoke-on-shutdown")
	iAWSSecret         = registry.MustIndex("aws-secret")
	iAgentEnv          = registry.MustIndex("agent-env")
	iTemplate          = registry.MustIndex("template")
	iTemplateConfigMap = registry.MustIndex("template-configmap")
)

// pairOf maps each half of an either-or pair to the other half, -1 otherwise.
var pairOf [numKeys]int

// perRender lists the per-render keys in registry order.
var perRender []int

func init() {
	if registry.Len() != numKeys {
		panic("resolve: the registry does not hold 66 keys")
	}
	for i := range rows {
		pairOf[i] = -1
		if rows[i].Pair != "" {
			pairOf[i] = registry.MustIndex(rows[i].Pair)
		}
		if rows[i].PerRender {
			perRender = append(perRender, i)
		}
	}
}

// noteMuted is the provenance note of a pair half the pod's answer muted.
const noteMuted = "pair answered by the pod: installation halves muted"

// tiersFor is the installation ladder of knob i for render r.
func tiersFor(r *render, i int) []registry.Tier {
	if r.name == "" {
		return rows[i].Tiers
	}
	return rows[i].NamedTiers
}

// silent returns the installation value the ladder of knob i would supply to
// render r if the pod were silent, or nil: the render store's group, then the
// fleet, as the row's tiers say. The supplying tier also decides the pin.
func (s *state) silent(r *render, i int) (installation.Value, decision.Tier, string, bool) {
	for _, t := range tiersFor(r, i) {
		switch t {
		case registry.TierStore:
			if g := s.inst.Stores[r.source]; g != nil {
				if v, ok := g.Knobs[rows[i].Name]; ok {
					return v, decision.TierStoreDefault, g.Store, true
				}
			}
		case registry.TierFleet:
			if v, ok := s.inst.Fleet[rows[i].Name]; ok {
				return v, decision.TierFleetDefault, "", true
			}
		}
	}
	return installation.Value{}, decision.TierNone, "", false
}

// resolveRender walks every knob's ladder for render r: annotation >
// installation tiers (per-store group of the render's store, fleet) >
// built-in. Either-or pairs resolve as a level: when the pod answers either
// half, both installation halves are muted. The source resolves first: it
// names the store the per-store rung reads.
func (s *state) resolveRender(r *render) {
	r.vals[iSource] = s.ladder(r, iSource)
	if r.vals[iSource].set {
		r.source = r.vals[iSource].text
	}
	keys := perRender
	if r.name == "" {
		keys = allKeys
	}
	for _, i := range keys {
		if i != iSource {
			r.vals[i] = s.ladder(r, i)
		}
	}
}

var allKeys = func() []int {
	k := make([]int, numKeys)
	for i := range k {
		k[i] = i
	}
	return k
}()

// ladder resolves knob i for render r.
func (s *state) ladder(r *render, i int) value {
	if a := &r.ann[i]; a.set {
		if a.class != "" {
			return value{text: a.value, set: true, tier: decision.TierClass}
		}
		return value{text: a.value, set: true, tier: decision.TierAnnotation}
	}
	if p := pairOf[i]; p >= 0 && r.ann[p].set {
		v := value{tier: decision.TierNone}
		if _, _, _, ok := s.silent(r, i); ok {
			v.note = noteMuted
		}
		return v
	}
	if iv, tier, store, ok := s.silent(r, i); ok {
		return value{text: iv.Text, set: true, tier: tier, fromInst: true, store: store}
	}
	if b := s.builtIn(i); b != "" {
		return value{text: b, set: true, tier: decision.TierBuiltIn}
	}
	return value{tier: decision.TierNone}
}

// supplier is the installation value that answered knob i of render r (a
// value with fromInst set): the ladder's installation rung, looked up again.
func (s *state) supplier(r *render, i int) installation.Value {
	iv, _, _, _ := s.silent(r, i)
	return iv
}

// builtIn is knob i's built-in value; the agent image is the installation's.
func (s *state) builtIn(i int) string {
	if i == iAgentImage {
		if s.inst.AgentImage != "" {
			return s.inst.AgentImage
		}
		return installation.BuiltInAgentImage
	}
	return rows[i].BuiltIn
}

// fromPod reports whether a tier is the pod's own writing: an annotation,
// or a class the pod named (everything after B3 sees a class-filled value as
// if the pod had written it, spec 08 §3 step 6).
func fromPod(t decision.Tier) bool { return t == decision.TierAnnotation || t == decision.TierClass }

// key is the key of knob i for render r: as the pod wrote it, else its spelling.
func key(r *render, i int) string {
	if r.ann[i].set {
		return r.ann[i].key
	}
	return registry.Full(rows[i].Name, r.name)
}
