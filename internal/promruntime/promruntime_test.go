package promruntime

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestRegisteringTwiceIsNotAnErrorAndBothFamiliesAreGathered(t *testing.T) {
	reg := prometheus.NewRegistry()
	for i := range 2 {
		if err := Register(reg); err != nil {
			t.Fatalf("registration %d: %v", i+1, err)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var goSeen, processSeen bool
	for _, f := range families {
		goSeen = goSeen || strings.HasPrefix(f.GetName(), "go_")
		processSeen = processSeen || strings.HasPrefix(f.GetName(), "process_")
	}
	if !goSeen || !processSeen {
		t.Errorf("go_* gathered %v, process_* gathered %v", goSeen, processSeen)
	}
}
