// Package classloader keeps a classes.Store in sync with the DynamicConfigClass and
// ClusterDynamicConfigClass objects of the API server (spec 08 §2) through
// client-go shared informers. It only reads: get, list and watch.
package classloader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
)

// The two resources watched.
var (
	NamespacedResource = schema.GroupVersionResource{Group: classes.Group, Version: classes.Version, Resource: "dynamicconfigclasses"}
	ClusterResource    = schema.GroupVersionResource{Group: classes.Group, Version: classes.Version, Resource: "clusterdynamicconfigclasses"}
)

// RESTConfig is the API server configuration: kubeconfig when set, else the
// in-cluster service account.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
		}
		return cfg, nil
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("classes need the API server: not running in a cluster (%w); pass --kubeconfig FILE or --classes-file FILE", err)
	}
	return cfg, nil
}

// Config is what a Watcher needs.
type Config struct {
	REST *rest.Config
	// Client, when set, is used instead of a client built from REST.
	Client  dynamic.Interface
	Store   *classes.Store // a pending store; the watcher swaps each synced set in
	Logger  *slog.Logger
	Metrics *metrics.Classes
	// OnChange runs after each set was put in force (the first sync
	// included): the decider refreshes its health there.
	OnChange func()
}

// Watcher runs the two informers.
type Watcher struct {
	cfg    Config
	ns, cl cache.SharedIndexInformer

	mu     sync.Mutex
	synced bool
	warned map[string]string // object → resourceVersion already warned about
}

// New builds the watcher; Run starts it.
func New(cfg Config) (*Watcher, error) {
	if (cfg.REST == nil && cfg.Client == nil) || cfg.Store == nil {
		return nil, errors.New("classes watch: a REST config (or a client) and a store are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	client := cfg.Client
	if client == nil {
		c, err := dynamic.NewForConfig(cfg.REST)
		if err != nil {
			return nil, fmt.Errorf("classes watch: %w", err)
		}
		client = c
	}
	w := &Watcher{cfg: cfg, warned: map[string]string{}}
	w.ns = newInformer(client, NamespacedResource)
	w.cl = newInformer(client, ClusterResource)
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.rebuild() },
		UpdateFunc: func(any, any) { w.rebuild() },
		DeleteFunc: func(any) { w.rebuild() },
	}
	for _, inf := range []cache.SharedIndexInformer{w.ns, w.cl} {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return nil, fmt.Errorf("classes watch: %w", err)
		}
		if err := inf.SetWatchErrorHandler(w.watchBroke); err != nil {
			return nil, fmt.Errorf("classes watch: %w", err)
		}
	}
	return w, nil
}

// Run starts the informers and returns; they stop when ctx ends. The store
// holds its first set once both informers have synced.
func (w *Watcher) Run(ctx context.Context) {
	go w.ns.RunWithContext(ctx)
	go w.cl.RunWithContext(ctx)
	go func() {
		if !cache.WaitForCacheSync(ctx.Done(), w.ns.HasSynced, w.cl.HasSynced) {
			return
		}
		w.mu.Lock()
		w.synced = true
		w.mu.Unlock()
		w.rebuild()
	}()
}

// newInformer is a shared informer of unstructured objects over every
// namespace of r, without resync. (dynamicinformer would do the same, at the
// price of importing every typed informer and clientset of client-go.)
func newInformer(client dynamic.Interface, gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	r := client.Resource(gvr)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return r.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return r.Watch(ctx, opts)
		},
	}
	// the client tells whether it streams lists (WatchList); a client that
	// does not (client-go's fake) is listed the classic way
	return cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, client), &unstructured.Unstructured{}, 0, cache.Indexers{})
}

// watchBroke logs a broken watch; the informer keeps its last synced objects
// and retries, so the set in force stays.
func (w *Watcher) watchBroke(r *cache.Reflector, err error) {
	w.mu.Lock()
	synced := w.synced
	w.mu.Unlock()
	msg := "classes watch broke; the last synced classes stay in force"
	if !synced {
		msg = "classes watch failed before the first sync; the decider is not ready until both kinds sync"
	}
	w.cfg.Logger.Warn(msg, "resource", r.TypeDescription(), "error", err.Error())
	w.cfg.Metrics.Synced(false)
}

// rebuild validates every object both informers hold into a new set and
// puts it in force. An invalid object is left out with one warning per
// resource version.
func (w *Watcher) rebuild() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.synced {
		return
	}
	var list []classes.Class
	for _, inf := range []cache.SharedIndexInformer{w.ns, w.cl} {
		for _, obj := range inf.GetStore().List() {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			c, problems := classes.FromObject(u.Object)
			if len(problems) > 0 {
				w.warn(u, problems)
				continue
			}
			list = append(list, c)
		}
	}
	set := classes.NewSet(list)
	prev := w.cfg.Store.Current()
	w.cfg.Store.Swap(set)
	w.cfg.Metrics.Synced(true)
	w.cfg.Metrics.Counted(classes.KindNamespaced, set.Count(classes.KindNamespaced))
	w.cfg.Metrics.Counted(classes.KindCluster, set.Count(classes.KindCluster))
	if prev == nil || prev.Revision != set.Revision {
		w.cfg.Logger.Info("classes in force", "classes_revision", set.Revision,
			"namespaced", set.Count(classes.KindNamespaced), "cluster", set.Count(classes.KindCluster), "first_sync", prev == nil)
	}
	if w.cfg.OnChange != nil {
		w.cfg.OnChange()
	}
}

func (w *Watcher) warn(u *unstructured.Unstructured, problems []string) {
	id := u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
	if rv, seen := w.warned[id]; seen && rv == u.GetResourceVersion() {
		return
	}
	w.warned[id] = u.GetResourceVersion()
	w.cfg.Logger.Warn("class ignored: it does not validate", "kind", u.GetKind(), "namespace", u.GetNamespace(),
		"name", u.GetName(), "problems", problems)
}
