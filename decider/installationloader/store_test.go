package installationloader

import (
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

func TestStoreRevisionIsTheInstallationInForceOrEmpty(t *testing.T) {
	store := NewStore(nil)
	if got := store.Revision(); got != "" {
		t.Fatalf("an empty store's Revision() = %q, want \"\"", got)
	}
	first := &installation.Installation{Revision: "sha256:first"}
	store.Swap(first)
	if got := store.Revision(); got != first.Revision {
		t.Fatalf("after the first swap Revision() = %q, want %q", got, first.Revision)
	}
	second := &installation.Installation{Revision: "sha256:second"}
	store.Swap(second)
	if got := store.Revision(); got != second.Revision {
		t.Fatalf("after the second swap Revision() = %q, want %q", got, second.Revision)
	}
}
