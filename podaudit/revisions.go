package podaudit

import (
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// The inventory of injected pods by revision (spec 10 §8): the reporter
// counts the pods that carry the status mark by their revision stamp, from
// the metadata it already watches.
const (
	// RevisionStampKey is the stamp the injection writes beside the status
	// mark: the first 12 hex digits of the deciding revision.
	RevisionStampKey = annotation.RevisionStampKey
	// MaxRevisions is how many revision label values the gauge keeps; the
	// pods of the others are summed under OverflowRevision.
	MaxRevisions = 20
	// OverflowRevision is the revision label of the pods beyond
	// MaxRevisions. A stamp is hex, so it never collides.
	OverflowRevision = "_other"
	// UnstampedRevision is the revision label of the injected pods that
	// carry no stamp (injected before stamps existed).
	UnstampedRevision = "_none"
)

// RevisionCount is what the gauges say of one revision label value.
type RevisionCount struct {
	// Pods is how many injected pods carry the revision.
	Pods int
	// FirstCreated is the creation time of the oldest of them.
	FirstCreated time.Time
}

// RevisionOf is an injected pod's revision label value: its stamp, or
// UnstampedRevision; ok is false when the pod is not injected.
func RevisionOf(annotations map[string]string) (revision string, ok bool) {
	if !Injected(annotations) {
		return "", false
	}
	if r := annotations[RevisionStampKey]; r != "" {
		return r, true
	}
	return UnstampedRevision, true
}

// RevisionSeries counts the injected pods by revision, keeping at most max
// revision names: when there are more, the max revisions with the most
// pods (then by name) keep theirs and the others are summed under
// OverflowRevision (its FirstCreated the oldest of theirs).
func RevisionSeries(pods []metav1.Object, max int) map[string]RevisionCount {
	counts := map[string]RevisionCount{}
	for _, p := range pods {
		r, ok := RevisionOf(p.GetAnnotations())
		if !ok {
			continue
		}
		counts[r] = counts[r].add(RevisionCount{Pods: 1, FirstCreated: p.GetCreationTimestamp().Time})
	}
	if len(counts) <= max {
		return counts
	}
	names := make([]string, 0, len(counts))
	for r := range counts {
		names = append(names, r)
	}
	sort.Slice(names, func(i, j int) bool {
		if counts[names[i]].Pods != counts[names[j]].Pods {
			return counts[names[i]].Pods > counts[names[j]].Pods
		}
		return names[i] < names[j]
	})
	out := make(map[string]RevisionCount, max+1)
	for i, r := range names {
		if i < max {
			out[r] = counts[r]
		} else {
			out[OverflowRevision] = out[OverflowRevision].add(counts[r])
		}
	}
	return out
}

// add sums two counts, keeping the older first creation (a zero time is
// unknown, not old).
func (c RevisionCount) add(o RevisionCount) RevisionCount {
	c.Pods += o.Pods
	if c.FirstCreated.IsZero() || !o.FirstCreated.IsZero() && o.FirstCreated.Before(c.FirstCreated) {
		c.FirstCreated = o.FirstCreated
	}
	return c
}

// revisionCollector exports the inventory from the last pass's snapshot:
// dynamic_config_injected_pods{revision} and
// dynamic_config_injected_pods_first_created_timestamp_seconds{revision},
// the creation time of each revision's oldest pod, which the chart's
// outdated-pods alert reads to tell how long the active revision has been
// injecting.
type revisionCollector struct {
	pods, firstCreated *prometheus.Desc
	mu                 sync.Mutex
	snap               map[string]RevisionCount
}

func newRevisionCollector() *revisionCollector {
	return &revisionCollector{
		pods: prometheus.NewDesc("dynamic_config_injected_pods",
			"Pods that carry the status mark, by the revision stamp the injection wrote (the first 12 hex digits of the deciding revision; \"_none\": no stamp); at most 20 revisions, the rest under revision=\"_other\".",
			[]string{"revision"}, nil),
		firstCreated: prometheus.NewDesc("dynamic_config_injected_pods_first_created_timestamp_seconds",
			"The creation time of the oldest injected pod of each revision of dynamic_config_injected_pods, in Unix seconds.",
			[]string{"revision"}, nil),
	}
}

func (c *revisionCollector) set(m map[string]RevisionCount) {
	c.mu.Lock()
	c.snap = m
	c.mu.Unlock()
}

func (c *revisionCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.pods; ch <- c.firstCreated }

func (c *revisionCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for r, n := range c.snap {
		ch <- prometheus.MustNewConstMetric(c.pods, prometheus.GaugeValue, float64(n.Pods), r)
		if !n.FirstCreated.IsZero() {
			ch <- prometheus.MustNewConstMetric(c.firstCreated, prometheus.GaugeValue, float64(n.FirstCreated.Unix()), r)
		}
	}
}
