package installation

import (
	"slices"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// The installation prints its per-store knob list in spec 02 §5.2's order;
// the registry says which knobs have a store tier. The two must name the same
// knobs.
func TestThePerStoreListsNameTheRegistrysKnobs(t *testing.T) {
	var store []string
	for _, r := range registry.Rows() {
		if slices.Contains(r.Tiers, registry.TierStore) {
			store = append(store, r.Name)
		}
	}
	perStore := slices.DeleteFunc(slices.Clone(StoreKnobs), func(k string) bool { return k == "overridable" })
	if got := slices.Sorted(slices.Values(perStore)); !slices.Equal(got, slices.Sorted(slices.Values(store))) {
		t.Errorf("StoreKnobs %v, the registry's rows with a store tier %v", got, store)
	}
}

// The store-shaped knobs come from the registry's rows; spec 02 §4 lists them.
func TestTheStoreShapedKnobsAreTheSpecs(t *testing.T) {
	spec := []string{"endpoint", "endpoint-secret", "key", "token-secret", "password-secret", "ca-configmap",
		"tls-secret", "ssh-secret", "aws-secret", "section", "auth", "auth-mount", "auth-role",
		"auth-username", "auth-token-path", "namespace", "ref", "api-url", "template", "template-configmap"}
	if got, want := slices.Sorted(slices.Values(StoreShapedKnobs)), slices.Sorted(slices.Values(spec)); !slices.Equal(got, want) {
		t.Errorf("StoreShapedKnobs %v, spec 02 §4's %v", got, want)
	}
}

// The spec words the unknown-knob message's list (02 §5.2).
func TestStoreKnobsAreInTheSpecsOrder(t *testing.T) {
	spec := "agent-cpu-request, agent-memory-request, agent-cpu-limit, agent-memory-limit, file-mode, watch-seconds, mode, volume-medium, native-sidecar, agent-run-as-user, agent-run-as-group, metrics-port, path, overridable, endpoint, endpoint-secret, key, token-secret, password-secret, ca-configmap, tls-secret, ssh-secret, aws-secret, section, auth, auth-mount, auth-role, auth-username, auth-token-path, namespace, ref, api-url, template, template-configmap"
	if storeKnobList != spec {
		t.Errorf("the unknown-knob message lists\n%s\nspec 02 §5.2 lists\n%s", storeKnobList, spec)
	}
}
