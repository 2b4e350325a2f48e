package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/classloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
)

// classesFileHelp is the help of --classes-file (decider, serve, inject, explain).
const classesFileHelp = "read DynamicConfigClass / ClusterDynamicConfigClass objects (a YAML or JSON stream) from FILE instead of the API server; implies classes on"

// classesSetup is how a decider learns the classes (spec 08 §2): from a
// file, by watching the API server, or not at all.
type classesSetup struct {
	file       string // --classes-file
	watch      bool   // --classes
	kubeconfig string // --kubeconfig
}

// errKubeconfigWithFile is the usage error for both ways at once.
var errKubeconfigWithFile = errors.New("--classes-file and --kubeconfig exclude each other: the file replaces the API server")

// loadClassesFile reads --classes-file (spec 08 §2); "" is classes off
// (nil). An invalid file is a *classes.FileError listing every problem.
func loadClassesFile(path string) (*classes.Set, error) {
	if path == "" {
		return nil, nil
	}
	return classloader.ReadFile(path)
}

// startClasses builds the decider's class store (nil: classes off) and, when
// classes come from the API server, starts the watch; onChange runs after
// each set was put in force. Classes are on with --classes-file, --classes or
// DYNAMIC_CONFIG_WEBHOOK_CLASSES=true (the installation's classesEnabled).
func startClasses(ctx context.Context, setup classesSetup, inst *installation.Installation, reg prometheus.Registerer,
	logger *slog.Logger, onChange func()) (*classes.Store, error) {
	if setup.file != "" && setup.kubeconfig != "" {
		return nil, errKubeconfigWithFile
	}
	if setup.file != "" {
		set, err := loadClassesFile(setup.file)
		if err != nil {
			return nil, err
		}
		m := metrics.NewClasses(reg)
		m.Synced(true)
		m.Counted(classes.KindNamespaced, set.Count(classes.KindNamespaced))
		m.Counted(classes.KindCluster, set.Count(classes.KindCluster))
		logger.Info("classes in force", "file", setup.file, "classes_revision", set.Revision,
			"namespaced", set.Count(classes.KindNamespaced), "cluster", set.Count(classes.KindCluster))
		return classes.NewStore(set), nil
	}
	if !setup.watch && !inst.ClassesEnabled {
		if setup.kubeconfig != "" {
			return nil, errors.New("--kubeconfig is for the classes watch: add --classes (or DYNAMIC_CONFIG_WEBHOOK_CLASSES=true)")
		}
		return nil, nil
	}
	cfg, err := classloader.RESTConfig(setup.kubeconfig)
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
