package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// MaxRevisions bounds the revision label of
// dynamic_config_decider_revision_last_answer_timestamp_seconds: when a new
// revision answers and MaxRevisions are already exported, the one that
// answered longest ago is dropped. A fleet in agreement shows one series; a
// rollout of the installation shows two for a minute or so.
const MaxRevisions = 4

// revisions exports, per installation revision, when a decider holding it
// last answered this front door (issue 12: which revisions answered).
type revisions struct {
	gauge *prometheus.GaugeVec
	now   func() time.Time

	mu   sync.Mutex
	last map[string]time.Time
}

func newRevisions() *revisions {
	return &revisions{
		gauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dynamic_config_decider_revision_last_answer_timestamp_seconds",
			Help: "When a decider holding this installation revision last answered, in Unix seconds (at most 4 revisions, the most recent).",
		}, []string{"revision"}),
		now:  time.Now,
		last: map[string]time.Time{},
	}
}

func (r *revisions) answered(revision string) {
	if revision == "" {
		return
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, known := r.last[revision]; !known && len(r.last) >= MaxRevisions {
		oldest, oldestAt := "", now
		for rev, at := range r.last {
			if oldest == "" || at.Before(oldestAt) {
				oldest, oldestAt = rev, at
			}
		}
		delete(r.last, oldest)
		r.gauge.DeleteLabelValues(oldest)
	}
	r.last[revision] = now
	r.gauge.WithLabelValues(revision).Set(float64(now.UnixNano()) / 1e9)
}

// RevisionAnswered records that a decider holding revision answered a
// Decide call usefully ("" is ignored).
func (m *Frontdoor) RevisionAnswered(revision string) {
	if m == nil {
		return
	}
	m.revisions.answered(revision)
}
