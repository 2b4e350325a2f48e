package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/classloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
)

// errKubeconfigWithFile is the refusal of a classes file and a kubeconfig at once.
var errKubeconfigWithFile = errors.New("--classes-file and --kubeconfig exclude each other: the file replaces the API server")

// ReadClassesFile reads a --classes-file (spec 08 §2); "" is classes off
// (nil). An invalid file is a *classes.FileError listing every problem.
// The offline doors read theirs here too, and hand the set to the engine.
func ReadClassesFile(path string) (*classes.Set, error) {
	if path == "" {
		return nil, nil
	}
	return classloader.ReadFile(path)
}

// start builds the decider's class store (nil: classes off) and, when the
// classes come from the API server, starts the watch; onChange runs after
// each set was put in force. byInstallation is the installation's
// classesEnabled, which turns the watch on as Watch does.
func (c Classes) start(ctx context.Context, byInstallation bool, reg prometheus.Registerer, logger *slog.Logger, onChange func()) (*classes.Store, error) {
	if c.File != "" && c.Kubeconfig != "" {
		return nil, errKubeconfigWithFile
	}
	if c.Set != nil && (c.File != "" || c.Watch || c.Kubeconfig != "") {
		return nil, errors.New("decider: a class set given excludes a classes file and the watch")
	}
	set, source := c.Set, []any{}
	if c.File != "" {
		var err error
		if set, err = ReadClassesFile(c.File); err != nil {
			return nil, err
		}
		source = []any{"file", c.File}
	}
	if set != nil {
		m := metrics.NewClasses(reg)
		m.Synced(true)
		m.Counted(classes.KindNamespaced, set.Count(classes.KindNamespaced))
		m.Counted(classes.KindCluster, set.Count(classes.KindCluster))
		logger.Info("classes in force", append(source, "classes_revision", set.Revision,
			"namespaced", set.Count(classes.KindNamespaced), "cluster", set.Count(classes.KindCluster))...)
		return classes.NewStore(set), nil
	}
	if !c.Watch && !byInstallation {
		if c.Kubeconfig != "" {
			return nil, errors.New("--kubeconfig is for the classes watch: add --classes (or DYNAMIC_CONFIG_WEBHOOK_CLASSES=true)")
		}
		return nil, nil
	}
	cfg, err := classloader.RESTConfig(c.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("decider: %w", err)
	}
	store := classes.NewPendingStore()
	w, err := classloader.New(classloader.Config{REST: cfg, Store: store, Logger: logger, Metrics: metrics.NewClasses(reg), OnChange: onChange})
	if err != nil {
		return nil, fmt.Errorf("decider: %w", err)
	}
	w.Run(ctx)
	logger.Info("watching classes", "api_server", cfg.Host)
	return store, nil
}
