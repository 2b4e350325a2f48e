package plan

import (
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// Warning codes of the silent cases (issue 20).
const (
	WarnStoreDefaultNotApplied = "store-default-not-applied"
	WarnNoServiceAccountToken  = "no-service-account-token"
	WarnGuaranteedBecomesBurst = "guaranteed-becomes-burstable"
)

// podWarnings are the warnings after rule 8 (issue 20), in order: the
// placement of a pod that must finish, the named renders' store defaults
// that do not apply, kubernetes auth without a token, and a Guaranteed pod
// the agents make Burstable.
func podWarnings(in *Input) []decision.Warning {
	var out []decision.Warning
	if code, text := placementWarning(in); text != "" {
		out = append(out, decision.Warning{Code: code, Message: text})
	}
	out = append(out, appStartsFirst(in)...)
	out = append(out, unreadableFiles(in)...)
	out = append(out, storeDefaultsNotApplied(in)...)
	out = append(out, tokenlessKubernetesAuth(in)...)
	if text := guaranteedBecomesBurstable(in); text != "" {
		out = append(out, decision.Warning{Code: WarnGuaranteedBecomesBurst, Message: text})
	}
	return out
}

// storeDefaultsNotApplied: a named render's store sets a pod-wide knob in
// its storeDefaults group, but pod-wide knobs come from the default render,
// whose store is another and whose value differs — one warning per render
// and knob, in render and registry order.
func storeDefaultsNotApplied(in *Input) []decision.Warning {
	inst := installationOf(in)
	defaultStore, _ := in.Default.Values.Get(registry.Source)
	var out []decision.Warning
	for i := range in.Named {
		r := &in.Named[i]
		store, _ := r.Values.Get(registry.Source)
		group := inst.Stores[store]
		if store == defaultStore || group == nil {
			continue
		}
		for _, id := range registry.All {
			row := id.Row()
			sv, ok := group.Knobs[row.Name]
			if row.Scope != registry.ScopePod || !ok {
				continue
			}
			podValue, set := lookup(&in.Default, id)
			// both are normalised (the loader's parse, the resolver's): a pin's
			// comparison of two parsed values is their equality
			if set && sv.Normalised == podValue {
				continue
			}
			where := "it is unset"
			if set {
				where = "it is " + podValue
			}
			out = append(out, renderWarning(WarnStoreDefaultNotApplied, r.Name,
				"storeDefaults."+store+" sets "+row.Name+"="+sv.Text+", which is not applied: "+row.Name+
					" is pod-wide and comes from the default render (store "+defaultStore+"), where "+where))
		}
	}
	return out
}

// tokenlessKubernetesAuth: a render logs in with auth kubernetes, reading
// the service account token at its default path, on a pod that sets
// automountServiceAccountToken: false (the plan mounts no token itself).
// An auth-token-path names another token and is not warned about.
func tokenlessKubernetesAuth(in *Input) []decision.Warning {
	if a := in.pod().AutomountServiceAccountToken; a == nil || *a {
		return nil
	}
	var out []decision.Warning
	renders := make([]*Render, 0, 1+len(in.Named))
	renders = append(renders, &in.Default)
	for i := range in.Named {
		renders = append(renders, &in.Named[i])
	}
	for _, r := range renders {
		auth, _ := r.Values.Get(registry.Auth)
		if auth != "kubernetes" || r.Values.Has(registry.AuthTokenPath) {
			continue
		}
		out = append(out, renderWarning(WarnNoServiceAccountToken, r.Name,
			"auth is kubernetes, but the pod sets automountServiceAccountToken: false: the agent finds no service account token to log in with; mount the token (automountServiceAccountToken: true) or point auth-token-path at one"))
	}
	return out
}

// guaranteedBecomesBurstable: the pod is Guaranteed and the agents' cpu and
// memory requests are not their limits, so the pod becomes Burstable ("" when
// the agents keep it Guaranteed, matchGuaranteed included).
func guaranteedBecomesBurstable(in *Input) string {
	if !in.pod().QoSGuaranteed {
		return ""
	}
	v := view{in: in, render: &in.Default, dir: sharedDir(in)}
	requests, limits := resources(&v)
	if guaranteedShape(requests, limits) {
		return ""
	}
	return "the pod is Guaranteed, but the agent's requests (" + quantities(requests) + ") are not its limits (" +
		quantities(limits) + "), so the pod becomes Burstable; the installation's matchGuaranteed: \"true\" gives the agents of Guaranteed pods requests equal to limits"
}

// quantities prints the cpu and memory of a requests or limits map: "cpu 10m, memory 32Mi".
func quantities(m map[string]string) string {
	parts := make([]string, 0, len(qosResources))
	for _, r := range qosResources {
		if q, ok := m[r]; ok {
			parts = append(parts, r+" "+q)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
