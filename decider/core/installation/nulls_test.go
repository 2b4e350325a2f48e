package installation

import "testing"

// A truncation can leave a map- or list-valued key with no value; that
// loads as an error naming the path, never as the setting unset.
func TestANullMapOrListValuedSettingIsALoadErrorNamingItsPath(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"storeDefaults with no value", "storeDefaults:\n",
			[]string{"storeDefaults: is empty (null); write {} or remove the key"}},
		{"storeDefaults written as JSON null", `{"storeDefaults": null}`,
			[]string{"storeDefaults: is empty (null); write {} or remove the key"}},
		{"a store group with no value", "storeDefaults:\n  vault:\n",
			[]string{"storeDefaults.vault: is empty (null); write {} or remove the key"}},
		{"envPolicy with no value", "envPolicy:\n",
			[]string{"envPolicy: is empty (null); write {} or remove the key"}},
		{"agentEnvAllow with no value", "agentEnvAllow:\n",
			[]string{"agentEnvAllow: is empty (null); write {} or remove the key"}},
		{"sourceAllow with no value", "sourceAllow: ~\n",
			[]string{"sourceAllow: is empty (null); write {} or remove the key"}},
		{"sourceDeny with no value", "sourceDeny: null\n",
			[]string{"sourceDeny: is empty (null); write {} or remove the key"}},
		{"a gate's namespace with no value", "sourceDeny:\n  billing:\n",
			[]string{"sourceDeny.billing: is empty (null); write [] or remove the key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertLines(t, problemLines(t, tt.doc), tt.want)
		})
	}
}

func TestEveryNullMapValuedSettingIsReportedAtOnce(t *testing.T) {
	got := problemLines(t, "storeDefaults:\nenvPolicy:\nagentEnvAllow:\nsourceAllow:\nsourceDeny:\n")
	if len(got) != 5 {
		t.Fatalf("want the five null settings reported together, got:\n%q", got)
	}
}

func TestAnEmptyMapStillLeavesTheSettingUnset(t *testing.T) {
	mustLoad(t, "storeDefaults: {}\nsourceAllow: {}\nsourceDeny: {}\nagentEnvAllow: {}\n")
}
