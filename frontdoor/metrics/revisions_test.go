package metrics

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// exportedRevisions gathers the revision series: revision → value.
func exportedRevisions(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "dynamic_config_decider_revision_last_answer_timestamp_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	return out
}

func TestTheRevisionsThatAnsweredStayBounded(t *testing.T) {
	cases := []struct {
		name    string
		answers []string
		want    []string
	}{
		{"a fleet in agreement exports one revision", []string{"sha256:a", "sha256:a", "sha256:a"}, []string{"sha256:a"}},
		{"two revisions during a rollout are both exported", []string{"sha256:a", "sha256:b", "sha256:a"}, []string{"sha256:a", "sha256:b"}},
		{"an empty revision is not a series", []string{"", "sha256:a"}, []string{"sha256:a"}},
		{"a fifth revision drops the one that answered longest ago",
			[]string{"sha256:a", "sha256:b", "sha256:c", "sha256:a", "sha256:d", "sha256:e"},
			[]string{"sha256:a", "sha256:c", "sha256:d", "sha256:e"}},
		{"a hundred revisions leave the four most recent",
			hundredRevisions(), []string{"sha256:96", "sha256:97", "sha256:98", "sha256:99"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m := NewFrontdoor(reg)
			clock := time.Unix(1800000000, 0)
			m.revisions.now = func() time.Time { clock = clock.Add(time.Second); return clock }
			for _, rev := range c.answers {
				m.RevisionAnswered(rev)
			}
			got := exportedRevisions(t, reg)
			var names []string
			for rev := range got {
				names = append(names, rev)
			}
			sort.Strings(names)
			if !slices.Equal(names, c.want) {
				t.Errorf("exported revisions %v, want %v", names, c.want)
			}
			if len(c.answers) > 0 {
				last := c.answers[len(c.answers)-1]
				if v := got[last]; v != float64(clock.Unix()) {
					t.Errorf("the last answer of %s is at %v, want %d", last, v, clock.Unix())
				}
			}
		})
	}
}

func hundredRevisions() []string {
	out := make([]string, 100)
	for i := range out {
		out[i] = fmt.Sprintf("sha256:%02d", i)
	}
	return out
}
