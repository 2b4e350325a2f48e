package metrics

import "github.com/prometheus/client_golang/prometheus"

// Classes are the class metrics of spec 08 §2, registered only when classes
// are on. A nil *Classes records nothing.
type Classes struct {
	synced prometheus.Gauge
	count  *prometheus.GaugeVec
}

// Class kinds as the dynamic_config_classes label spells them.
var classKinds = []string{"DynamicConfigClass", "ClusterDynamicConfigClass"}

// NewClasses registers dynamic_config_classes_synced and dynamic_config_classes with reg.
func NewClasses(reg prometheus.Registerer) *Classes {
	m := &Classes{
		synced: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "dynamic_config_classes_synced",
			Help: "1 while the class set in force is in sync with the API server (or read from --classes-file); 0 before the first sync and after a watch broke until it recovers.",
		}),
		count: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dynamic_config_classes",
			Help: "Classes in the set in force, by kind.",
		}, []string{"kind"}),
	}
	reg.MustRegister(m.synced, m.count)
	for _, k := range classKinds {
		m.count.WithLabelValues(k)
	}
	return m
}

// Synced sets dynamic_config_classes_synced.
func (m *Classes) Synced(ok bool) {
	if m == nil {
		return
	}
	v := 0.0
	if ok {
		v = 1
	}
	m.synced.Set(v)
}

// Counted sets dynamic_config_classes{kind}.
func (m *Classes) Counted(kind string, n int) {
	if m == nil {
		return
	}
	m.count.WithLabelValues(kind).Set(float64(n))
}
