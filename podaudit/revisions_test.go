package podaudit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// stamped is an injected pod carrying stamp ("" = no stamp), created at.
func stamped(name, stamp string, at time.Time) *metav1.PartialObjectMetadata {
	ann := map[string]string{InjectKey: "true", StatusKey: StatusInjected}
	if stamp != "" {
		ann[RevisionStampKey] = stamp
	}
	p := fakePod("apps", name, ann)
	p.CreationTimestamp = metav1.NewTime(at)
	return p
}

func TestInjectedPodsAreCountedByTheirRevisionStamp(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	many := func(n int) []metav1.Object {
		var pods []metav1.Object
		for i := range n {
			// revision i has i+1 pods; the oldest pod of each is created at t0+i h
			for j := range i + 1 {
				pods = append(pods, stamped(fmt.Sprintf("p-%d-%d", i, j), fmt.Sprintf("%012x", i), t0.Add(time.Duration(i)*time.Hour+time.Duration(j)*time.Minute)))
			}
		}
		return pods
	}
	tests := []struct {
		name string
		pods []metav1.Object
		max  int
		want map[string]RevisionCount
	}{
		{"pods are counted by stamp with their oldest creation", []metav1.Object{
			stamped("a", "aaaaaaaaaaaa", t0.Add(time.Hour)), stamped("b", "aaaaaaaaaaaa", t0), stamped("c", "bbbbbbbbbbbb", t0),
		}, 20, map[string]RevisionCount{"aaaaaaaaaaaa": {2, t0}, "bbbbbbbbbbbb": {1, t0}}},
		{"an injected pod without a stamp is counted under _none", []metav1.Object{stamped("old", "", t0)}, 20,
			map[string]RevisionCount{UnstampedRevision: {1, t0}}},
		{"pods not injected are not counted", []metav1.Object{
			fakePod("apps", "asking", asking), fakePod("apps", "plain", nil),
			fakePod("apps", "copied", map[string]string{RevisionStampKey: "aaaaaaaaaaaa"}),
		}, 20, map[string]RevisionCount{}},
		{"beyond the bound the revisions with the fewest pods are summed under _other", many(4), 2,
			map[string]RevisionCount{"000000000003": {4, t0.Add(3 * time.Hour)}, "000000000002": {3, t0.Add(2 * time.Hour)}, OverflowRevision: {3, t0}}},
		{"twenty revisions keep their names", many(20), MaxRevisions, func() map[string]RevisionCount {
			m := map[string]RevisionCount{}
			for i := range 20 {
				m[fmt.Sprintf("%012x", i)] = RevisionCount{i + 1, t0.Add(time.Duration(i) * time.Hour)}
			}
			return m
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RevisionSeries(tt.pods, tt.max)
			if len(got) != len(tt.want) {
				t.Fatalf("series %v, want %v", got, tt.want)
			}
			for r, want := range tt.want {
				if g := got[r]; g.Pods != want.Pods || !g.FirstCreated.Equal(want.FirstCreated) {
					t.Errorf("revision %s: %+v, want %+v", r, g, want)
				}
			}
		})
	}
}

func TestTheReporterExportsTheInjectedPodsByRevision(t *testing.T) {
	c := fakeClients(t) // one injected pod without a stamp
	r, reg := startReporter(t, c, 0)
	at := metav1.NewTime(afterWebhook).Unix()
	want := fmt.Sprintf(`
# HELP dynamic_config_injected_pods Pods that carry the status mark, by the revision stamp the injection wrote (the first 12 hex digits of the deciding revision; "_none": no stamp); at most 20 revisions, the rest under revision="_other".
# TYPE dynamic_config_injected_pods gauge
dynamic_config_injected_pods{revision="_none"} 1
# HELP dynamic_config_injected_pods_first_created_timestamp_seconds The creation time of the oldest injected pod of each revision of dynamic_config_injected_pods, in Unix seconds.
# TYPE dynamic_config_injected_pods_first_created_timestamp_seconds gauge
dynamic_config_injected_pods_first_created_timestamp_seconds{revision="_none"} %d
`, at)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "dynamic_config_injected_pods", "dynamic_config_injected_pods_first_created_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	// the informer keeps the stamp's value (trimObject): a stamped pod is
	// counted under its stamp at the next pass
	trimmed, err := trimObject(stamped("new", "0123456789ab", afterWebhook))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.pods.GetStore().Add(trimmed); err != nil {
		t.Fatal(err)
	}
	r.Pass(context.Background())
	want = `
# HELP dynamic_config_injected_pods Pods that carry the status mark, by the revision stamp the injection wrote (the first 12 hex digits of the deciding revision; "_none": no stamp); at most 20 revisions, the rest under revision="_other".
# TYPE dynamic_config_injected_pods gauge
dynamic_config_injected_pods{revision="0123456789ab"} 1
dynamic_config_injected_pods{revision="_none"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "dynamic_config_injected_pods"); err != nil {
		t.Error(err)
	}
}
