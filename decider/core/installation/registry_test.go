package installation

import (
	"slices"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// The installation prints its per-store knob lists in spec 02's order; the
// registry says which knobs are store-shaped and which have a store tier.
// The two must name the same knobs.
func TestThePerStoreListsNameTheRegistrysKnobs(t *testing.T) {
	var shaped, store []string
	for _, r := range registry.Rows() {
		if r.StoreShaped {
			shaped = append(shaped, r.Name)
		}
		if slices.Contains(r.Tiers, registry.TierStore) {
			store = append(store, r.Name)
		}
	}
	if got := slices.Sorted(slices.Values(StoreShapedKnobs)); !slices.Equal(got, slices.Sorted(slices.Values(shaped))) {
		t.Errorf("StoreShapedKnobs %v, the registry's store-shaped rows %v", got, shaped)
	}
	perStore := slices.DeleteFunc(slices.Clone(StoreKnobs), func(k string) bool { return k == "overridable" })
	if got := slices.Sorted(slices.Values(perStore)); !slices.Equal(got, slices.Sorted(slices.Values(store))) {
		t.Errorf("StoreKnobs %v, the registry's rows with a store tier %v", got, store)
	}
}
