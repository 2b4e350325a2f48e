package outdated

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// RestartedAtKey is the pod template annotation `kubectl rollout restart`
// sets to the time of the restart; a change of the template is a rollout.
const RestartedAtKey = "kubectl.kubernetes.io/restartedAt"

// RestartOptions are how Restart rolls.
type RestartOptions struct {
	// MaxInFlight is how many rollouts run at once (at least 1).
	MaxInFlight int
	// DryRun sends each patch as a server-side dry run (the API server
	// checks it, RBAC included, and stores nothing) and waits for none.
	DryRun bool
	// Timeout bounds each rollout, from its patch to its end.
	Timeout time.Duration
	// Poll is how often a rollout's status is read (default 1s).
	Poll time.Duration
	// Now is the restart time written (default time.Now).
	Now func() time.Time
	// Out gets one line per workload, as it happens.
	Out io.Writer
}

// ErrNotFinished is the error of a rollout that did not finish in time, or
// that its controller reports as failed.
var ErrNotFinished = errors.New("the rollout did not finish")

// Restart restarts the restartable workloads of ws — Deployments, and
// StatefulSets and DaemonSets that roll their pods on a template change —
// at most MaxInFlight at a time, in order, each waited for until its
// rollout finishes; it starts none after the first that fails (a patch
// refused, a rollout not finished within Timeout) and returns that error
// once the ones in flight are done. The others — Jobs, CronJobs, bare
// pods, OnDelete updates — are listed first and never touched.
func Restart(ctx context.Context, typed kubernetes.Interface, ws []Workload, o RestartOptions) error {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	var todo []Workload
	for _, w := range ws {
		if why := untouched(ctx, typed, w); why != "" {
			fmt.Fprintf(o.Out, "left alone: %s (%s)\n", w.Key(), why)
			continue
		}
		todo = append(todo, w)
	}
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		slots = make(chan struct{}, max(o.MaxInFlight, 1))
	)
	for _, w := range todo {
		slots <- struct{}{}
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			err := restartOne(ctx, typed, w, o)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = fmt.Errorf("%s: %w", w.Key(), err)
			}
		}()
	}
	wg.Wait()
	return first
}

// untouched says why Restart leaves w alone ("" = it restarts it).
func untouched(ctx context.Context, typed kubernetes.Interface, w Workload) string {
	if w.Refused != "" {
		return "the active installation refuses its pod template, so a restart would leave it without new pods: " + w.Refused
	}
	switch w.Kind {
	case "Deployment":
		return ""
	case "StatefulSet":
		s, err := typed.AppsV1().StatefulSets(w.Namespace).Get(ctx, w.Name, metav1.GetOptions{})
		if err == nil && s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
			return "its updateStrategy is OnDelete: a restart replaces no pod; delete its pods to roll them"
		}
		return ""
	case "DaemonSet":
		d, err := typed.AppsV1().DaemonSets(w.Namespace).Get(ctx, w.Name, metav1.GetOptions{})
		if err == nil && d.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType {
			return "its updateStrategy is OnDelete: a restart replaces no pod; delete its pods to roll them"
		}
		return ""
	case "Job", "CronJob":
		return w.Kind + "s are never restarted: their next run gets the active revision"
	case "Pod":
		return "a bare pod is never restarted: recreate it"
	}
	return "only Deployments, StatefulSets and DaemonSets are restarted"
}

// restartOne patches w's template as `kubectl rollout restart` does and
// waits for its rollout.
func restartOne(ctx context.Context, typed kubernetes.Interface, w Workload, o RestartOptions) error {
	patch := fmt.Appendf(nil, `{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, RestartedAtKey, o.Now().Format(time.RFC3339))
	opts := metav1.PatchOptions{}
	if o.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	apps := typed.AppsV1()
	var err error
	switch w.Kind {
	case "Deployment":
		_, err = apps.Deployments(w.Namespace).Patch(ctx, w.Name, types.StrategicMergePatchType, patch, opts)
	case "StatefulSet":
		_, err = apps.StatefulSets(w.Namespace).Patch(ctx, w.Name, types.StrategicMergePatchType, patch, opts)
	case "DaemonSet":
		_, err = apps.DaemonSets(w.Namespace).Patch(ctx, w.Name, types.StrategicMergePatchType, patch, opts)
	}
	if err != nil {
		fmt.Fprintf(o.Out, "failed: %s: %v\n", w.Key(), err)
		return fmt.Errorf("restart: %w", err)
	}
	if o.DryRun {
		fmt.Fprintf(o.Out, "would restart: %s (server dry run)\n", w.Key())
		return nil
	}
	fmt.Fprintf(o.Out, "restarted: %s\n", w.Key())
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	tick := time.NewTicker(o.Poll)
	defer tick.Stop()
	last := "its status not read yet"
	for {
		status, done, err := rolloutStatus(ctx, typed, w)
		if status != "" {
			last = status
		}
		switch {
		case err != nil:
			fmt.Fprintf(o.Out, "failed: %s: %v\n", w.Key(), err)
			return err
		case done:
			fmt.Fprintf(o.Out, "rolled out: %s (%s)\n", w.Key(), time.Since(start).Round(time.Second))
			return nil
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(o.Out, "not finished: %s after %s: %s\n", w.Key(), o.Timeout, last)
			return fmt.Errorf("%w within %s: %s", ErrNotFinished, o.Timeout, last)
		case <-tick.C:
		}
	}
}

// rolloutStatus reads w and judges its rollout as `kubectl rollout status`
// does: done, or what it waits for; an error when the controller reports
// the rollout failed (a Deployment past its progress deadline).
func rolloutStatus(ctx context.Context, typed kubernetes.Interface, w Workload) (status string, done bool, err error) {
	get := metav1.GetOptions{}
	apps := typed.AppsV1()
	switch w.Kind {
	case "Deployment":
		d, err := apps.Deployments(w.Namespace).Get(ctx, w.Name, get)
		if err != nil {
			return "", false, readErr(ctx, err)
		}
		status, done, failed := DeploymentStatus(d)
		if failed {
			return "", false, fmt.Errorf("%w: %s", ErrNotFinished, status)
		}
		return status, done, nil
	case "StatefulSet":
		s, err := apps.StatefulSets(w.Namespace).Get(ctx, w.Name, get)
		if err != nil {
			return "", false, readErr(ctx, err)
		}
		status, done := StatefulSetStatus(s)
		return status, done, nil
	default:
		d, err := apps.DaemonSets(w.Namespace).Get(ctx, w.Name, get)
		if err != nil {
			return "", false, readErr(ctx, err)
		}
		status, done := DaemonSetStatus(d)
		return status, done, nil
	}
}

// readErr is a failed read: nil when the wait's own deadline ended it (the
// caller reports the timeout), else the error.
func readErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("read the rollout's status: %w", err)
}
