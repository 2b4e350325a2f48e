package podaudit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// OverflowNamespace is the namespace label value the gauge folds every
// namespace beyond MaxNamespaces into. A namespace name is a DNS label and
// can never contain "_", so it never collides with a real namespace.
const OverflowNamespace = "_other"

// EventReason is the reason of the Event the reporter posts on a pod.
const EventReason = "AskedButNotInjected"

// eventComponent is the Event's source and reporting controller.
const eventComponent = "dynamic-config-audit"

// ReporterConfig is what a Reporter needs.
type ReporterConfig struct {
	Clients Clients
	// Configuration and Webhook name the injection webhook.
	Configuration, Webhook string
	// Namespace limits the watch to one namespace; "" watches every one.
	Namespace string
	// Interval is how often the cache is audited and the gauge set.
	Interval time.Duration
	// MaxNamespaces caps the gauge's namespace label values: the
	// namespaces with the most uninjected pods (then by name) keep their
	// name, the rest are summed under OverflowNamespace.
	MaxNamespaces int
	// MaxEventsPerPass bounds the Events posted in one pass; the rest
	// follow in the next passes.
	MaxEventsPerPass int
	// Instance is the Event's reportingInstance (the pod name).
	Instance string
	Logger   *slog.Logger
	// Registry receives the reporter's metrics.
	Registry prometheus.Registerer
}

// Reporter watches pod metadata and reports the pods that asked and were
// not injected — the gauge dynamic_config_pods_asking_uninjected{namespace}
// and one Event on each such pod — and the injected pods by revision
// (dynamic_config_injected_pods{revision}, spec 10 §8).
type Reporter struct {
	cfg  ReporterConfig
	pods cache.SharedIndexInformer
	nss  cache.SharedIndexInformer

	series    *seriesCollector
	revisions *revisionCollector
	cached    prometheus.Gauge
	events    *prometheus.CounterVec
	passes    *prometheus.CounterVec
	ready     atomic.Bool
	webhook   Webhook // the last webhook read; the pass goroutine's only

	// reported holds the UIDs of the pods whose Event exists (posted by
	// this process, or found already there): one Event per pod, however
	// many passes see it. A pod that leaves the findings leaves the set.
	reported map[string]struct{}
}

// NewReporter builds the reporter and registers its metrics.
func NewReporter(cfg ReporterConfig) (*Reporter, error) {
	if cfg.Interval <= 0 || cfg.MaxNamespaces <= 0 || cfg.MaxEventsPerPass < 0 {
		return nil, errors.New("podaudit: interval and max namespaces must be positive, max events not negative")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Reporter{
		cfg:       cfg,
		series:    &seriesCollector{desc: prometheus.NewDesc("dynamic_config_pods_asking_uninjected", "Pods that carry a dynamic-config.rs/ annotation asking for injection and no status mark (declined pods left out), by namespace; at most --max-namespaces names, the rest under namespace=\"_other\".", []string{"namespace"}, nil)},
		revisions: newRevisionCollector(),
		cached:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "dynamic_config_audit_pods", Help: "Pods in the audit reporter's metadata cache."}),
		events:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dynamic_config_audit_events_total", Help: "Events the audit reporter posted on uninjected pods, by result: created, exists (already posted), failed."}, []string{"result"}),
		passes:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dynamic_config_audit_passes_total", Help: "Audit passes over the cache, by result: ok, or webhook_error when the webhook configuration could not be read (the pass used the last one read)."}, []string{"result"}),
		reported:  map[string]struct{}{},
	}
	for _, res := range []string{"created", "exists", "failed"} {
		r.events.WithLabelValues(res)
	}
	for _, res := range []string{"ok", "webhook_error"} {
		r.passes.WithLabelValues(res)
	}
	for _, c := range []prometheus.Collector{r.series, r.revisions, r.cached, r.events, r.passes} {
		if err := cfg.Registry.Register(c); err != nil {
			return nil, fmt.Errorf("podaudit: register metrics: %w", err)
		}
	}
	r.pods = metadatainformer.NewFilteredMetadataInformer(cfg.Clients.Metadata, podsResource, cfg.Namespace, 0, cache.Indexers{}, nil).Informer()
	// The namespaces (cluster-scoped) are watched by name when one is given.
	r.nss = metadatainformer.NewFilteredMetadataInformer(cfg.Clients.Metadata, namespacesResource, "", 0, cache.Indexers{},
		func(o *metav1.ListOptions) {
			if cfg.Namespace != "" {
				o.FieldSelector = "metadata.name=" + cfg.Namespace
			}
		}).Informer()
	for _, inf := range []cache.SharedIndexInformer{r.pods, r.nss} {
		if err := inf.SetTransform(trimObject); err != nil {
			return nil, fmt.Errorf("podaudit: %w", err)
		}
	}
	return r, nil
}

// trimObject keeps of a pod or namespace only what Classify reads, so that
// the cache holds a few hundred bytes per pod whatever the pod carries
// (managedFields, owner references, long annotation values).
func trimObject(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		CreationTimestamp: m.CreationTimestamp, Labels: m.Labels, Annotations: trimAnnotations(m.Annotations),
	}}, nil
}

// Handler serves /metrics (reg's), /healthz and /readyz (ready after the
// caches synced and the first pass ran).
func (r *Reporter) Handler(reg prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !r.ready.Load() {
			http.Error(w, "caches not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// Run starts the informers, waits for their caches and audits every
// Interval until ctx ends (and the informers stopped).
func (r *Reporter) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, inf := range []cache.SharedIndexInformer{r.pods, r.nss} {
		wg.Add(1)
		go func() { defer wg.Done(); inf.Run(ctx.Done()) }()
	}
	if !cache.WaitForCacheSync(ctx.Done(), r.pods.HasSynced, r.nss.HasSynced) {
		if ctx.Err() != nil {
			return nil
		}
		return errors.New("podaudit: the pod and namespace caches did not sync")
	}
	r.cfg.Logger.Info("audit caches synced", "pods", len(r.pods.GetStore().ListKeys()))
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	for {
		r.Pass(ctx)
		r.ready.Store(true)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Pass audits the cache once: reads the webhook configuration, sets the
// gauge and posts the Events not yet posted. Run calls it; it is exported
// for tests that drive the reporter without a ticker.
func (r *Reporter) Pass(ctx context.Context) {
	w, err := GetWebhook(ctx, r.cfg.Clients.Typed, r.cfg.Configuration, r.cfg.Webhook)
	if err != nil {
		r.passes.WithLabelValues("webhook_error").Inc()
		r.cfg.Logger.Warn("audit: the webhook configuration could not be read; using the last one read", "configuration", r.cfg.Configuration, "error", err)
	} else {
		r.passes.WithLabelValues("ok").Inc()
		r.webhook = w
	}
	if err != nil && r.webhook.Configuration == "" {
		return // nothing to judge against yet
	}
	namespaces := Namespaces{}
	for _, obj := range r.nss.GetStore().List() {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			namespaces[m.Name] = m.Labels
		}
	}
	objs := r.pods.GetStore().List()
	r.cached.Set(float64(len(objs)))
	var counted []Finding
	pods := make([]metav1.Object, 0, len(objs))
	for _, obj := range objs {
		m, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			continue
		}
		pods = append(pods, m)
		if f, ok := Classify(m, namespaces, r.webhook); ok && !f.Reason.Declined() {
			counted = append(counted, f)
		}
	}
	Sort(counted)
	r.series.set(NamespaceSeries(counted, r.cfg.MaxNamespaces))
	r.revisions.set(RevisionSeries(pods, MaxRevisions))
	r.postEvents(ctx, counted)
}

// postEvents posts the Event of every counted pod not yet reported (at
// most MaxEventsPerPass) and forgets the pods no longer counted.
func (r *Reporter) postEvents(ctx context.Context, counted []Finding) {
	current := make(map[string]struct{}, len(counted))
	posted := 0
	for _, f := range counted {
		current[f.UID] = struct{}{}
		if _, done := r.reported[f.UID]; done || posted >= r.cfg.MaxEventsPerPass {
			continue
		}
		posted++
		switch err := r.postEvent(ctx, f); {
		case err == nil:
			r.events.WithLabelValues("created").Inc()
			r.reported[f.UID] = struct{}{}
			r.cfg.Logger.Info("audit: pod asked for the agent and was not injected", "namespace", f.Namespace, "pod", f.Name, "reason", string(f.Reason))
		case apierrors.IsAlreadyExists(err):
			r.events.WithLabelValues("exists").Inc()
			r.reported[f.UID] = struct{}{}
		default:
			r.events.WithLabelValues("failed").Inc()
			r.cfg.Logger.Warn("audit: event not posted", "namespace", f.Namespace, "pod", f.Name, "error", err)
		}
	}
	for uid := range r.reported {
		if _, ok := current[uid]; !ok {
			delete(r.reported, uid)
		}
	}
}

// postEvent creates the pod's Event under a name derived from its UID, so
// that a restarted reporter finds it instead of posting a second one.
func (r *Reporter) postEvent(ctx context.Context, f Finding) error {
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: EventName(f.Name, f.UID), Namespace: f.Namespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: "v1", Kind: "Pod", Namespace: f.Namespace, Name: f.Name, UID: types.UID(f.UID),
		},
		Reason:              EventReason,
		Message:             textLimit("asked for the dynamic-config agent and was admitted without it ("+string(f.Reason)+"): "+f.Detail, 1024),
		Type:                corev1.EventTypeWarning,
		Source:              corev1.EventSource{Component: eventComponent},
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		ReportingController: "dynamic-config.rs/audit",
		ReportingInstance:   textLimit(r.cfg.Instance, 128),
	}
	_, err := r.cfg.Clients.Typed.CoreV1().Events(f.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	return err
}

// EventName is the name of a pod's Event: the pod name (cut to fit) and
// its UID, a valid DNS subdomain of at most 253 characters.
func EventName(pod, uid string) string {
	const room = 253 - len(".uninjected.") - 36
	if len(pod) > room {
		pod = strings.TrimRight(pod[:room], ".-")
	}
	return pod + ".uninjected." + uid
}

func textLimit(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// NamespaceSeries counts findings by namespace, keeping at most max
// namespace names: when there are more, the max namespaces with the most
// findings (then by name) keep theirs and the others are summed under
// OverflowNamespace.
func NamespaceSeries(fs []Finding, max int) map[string]int {
	counts := map[string]int{}
	for _, f := range fs {
		counts[f.Namespace]++
	}
	if len(counts) <= max {
		return counts
	}
	names := make([]string, 0, len(counts))
	for ns := range counts {
		names = append(names, ns)
	}
	sort.Slice(names, func(i, j int) bool {
		if counts[names[i]] != counts[names[j]] {
			return counts[names[i]] > counts[names[j]]
		}
		return names[i] < names[j]
	})
	out := make(map[string]int, max+1)
	for i, ns := range names {
		if i < max {
			out[ns] = counts[ns]
		} else {
			out[OverflowNamespace] += counts[ns]
		}
	}
	return out
}

// seriesCollector exports the gauge from the last pass's snapshot: a
// scrape sees one pass whole, and a namespace whose pods are gone drops out.
type seriesCollector struct {
	desc *prometheus.Desc
	mu   sync.Mutex
	snap map[string]int
}

func (c *seriesCollector) set(m map[string]int) {
	c.mu.Lock()
	c.snap = m
	c.mu.Unlock()
}

func (c *seriesCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *seriesCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ns, n := range c.snap {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), ns)
	}
}
