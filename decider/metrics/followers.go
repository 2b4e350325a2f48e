package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Leader is a leader's follower metrics (spec 09 §2). The follower label
// takes only the ids of the followers the leader holds (at most 64 per
// caller); a follower's series are deleted when the leader forgets it (10
// minutes after its stream ended). A nil *Leader records nothing.
type Leader struct {
	revision  *prometheus.GaugeVec
	connected *prometheus.GaugeVec
	nacks     *prometheus.CounterVec

	mu      sync.Mutex
	applied map[[2]string]string // (follower, cluster) → the revision label in force
}

// NewLeader creates the follower metrics of a leader and registers them with reg.
func NewLeader(reg prometheus.Registerer) *Leader {
	m := &Leader{
		revision: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dynamic_config_follower_revision_info",
			Help: "The revision each follower last acknowledged (or announced it serves): value 1, one series per follower.",
		}, []string{"follower", "cluster", "revision"}),
		connected: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dynamic_config_follower_connected",
			Help: "1 while the follower has a SyncInstallation stream open to this leader, else 0.",
		}, []string{"follower", "cluster"}),
		nacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_follower_nacks_total",
			Help: "Snapshots the follower refused (NACK), by follower.",
		}, []string{"follower", "cluster"}),
		applied: map[[2]string]string{},
	}
	reg.MustRegister(m.revision, m.connected, m.nacks)
	return m
}

// Applied records the revision a follower serves (one series per follower).
func (m *Leader) Applied(follower, cluster, revision string) {
	if m == nil || revision == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{follower, cluster}
	if old, ok := m.applied[k]; ok {
		if old == revision {
			return
		}
		m.revision.DeleteLabelValues(follower, cluster, old)
	}
	m.applied[k] = revision
	m.revision.WithLabelValues(follower, cluster, revision).Set(1)
}

// Connected records whether a follower has a stream open.
func (m *Leader) Connected(follower, cluster string, connected bool) {
	if m == nil {
		return
	}
	v := 0.0
	if connected {
		v = 1
	}
	m.connected.WithLabelValues(follower, cluster).Set(v)
	m.nacks.WithLabelValues(follower, cluster) // present from the first stream on
}

// Nacked counts one refused snapshot.
func (m *Leader) Nacked(follower, cluster string) {
	if m == nil {
		return
	}
	m.nacks.WithLabelValues(follower, cluster).Inc()
}

// Forget deletes every series of a follower the leader no longer holds.
func (m *Leader) Forget(follower, cluster string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{follower, cluster}
	if old, ok := m.applied[k]; ok {
		m.revision.DeleteLabelValues(follower, cluster, old)
		delete(m.applied, k)
	}
	m.connected.DeleteLabelValues(follower, cluster)
	m.nacks.DeleteLabelValues(follower, cluster)
}

// Snapshot results of a follower (dynamic_config_follower_snapshots_total).
const (
	SnapshotAck  = "ack"
	SnapshotNack = "nack"
)

// Follower is a follower's own metrics (spec 09 §3). A nil *Follower records nothing.
type Follower struct {
	leaderConnected prometheus.Gauge
	lastSync        prometheus.Gauge
	snapshots       *prometheus.CounterVec
	stale           prometheus.Gauge
}

// NewFollower creates a follower's metrics and registers them with reg.
func NewFollower(reg prometheus.Registerer) *Follower {
	m := &Follower{
		leaderConnected: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "dynamic_config_follower_leader_connected",
			Help: "1 while this follower has a SyncInstallation stream open to its leader, else 0.",
		}),
		lastSync: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "dynamic_config_follower_last_sync_timestamp_seconds",
			Help: "When this follower last received a snapshot or heartbeat from its leader, in Unix seconds (0 before any).",
		}),
		snapshots: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_follower_snapshots_total",
			Help: "Snapshots this follower received, by its answer: ack (put in force) or nack (refused, last good kept).",
		}, []string{"result"}),
		stale: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "dynamic_config_follower_stale",
			Help: "1 while this follower is past --max-stale and refuses to decide, else 0.",
		}),
	}
	reg.MustRegister(m.leaderConnected, m.lastSync, m.snapshots, m.stale)
	for _, r := range []string{SnapshotAck, SnapshotNack} {
		m.snapshots.WithLabelValues(r)
	}
	return m
}

// LeaderConnected records whether the stream to the leader is open.
func (m *Follower) LeaderConnected(connected bool) {
	if m == nil {
		return
	}
	if connected {
		m.leaderConnected.Set(1)
	} else {
		m.leaderConnected.Set(0)
	}
}

// Synced records a snapshot or heartbeat received at t.
func (m *Follower) Synced(t time.Time) {
	if m == nil {
		return
	}
	m.lastSync.Set(float64(t.UnixNano()) / 1e9)
}

// Snapshot counts one snapshot answered with result (SnapshotAck, SnapshotNack).
func (m *Follower) Snapshot(result string) {
	if m == nil {
		return
	}
	m.snapshots.WithLabelValues(result).Inc()
}

// Stale records whether the follower is past --max-stale.
func (m *Follower) Stale(stale bool) {
	if m == nil {
		return
	}
	if stale {
		m.stale.Set(1)
	} else {
		m.stale.Set(0)
	}
}
