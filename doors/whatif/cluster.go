package whatif

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
	"github.com/dynamic-config-admission/dynamic-config/internal/kubeclient"
)

// ClusterFile is the File of the documents --from-cluster reads.
const ClusterFile = "the cluster"

// ClusterDocuments lists the workloads of a cluster through the kubeconfig
// (spec 10 §7): Deployments, StatefulSets, DaemonSets, CronJobs, and the
// ReplicaSets, Jobs and Pods that no controller owns (a Deployment's
// ReplicaSet, a CronJob's Job and a controller's Pod are their workload's,
// listed once as it). namespace "" is the kubeconfig context's unless all.
func ClusterDocuments(ctx context.Context, kubeconfig, namespace string, all bool) ([]*manifest.Document, error) {
	k := kubeclient.Kubeconfig{Path: kubeconfig, UserAgent: "dynamic-config-diff", QPS: 50}
	client, err := k.Typed()
	if err != nil {
		return nil, err
	}
	switch {
	case all:
		namespace = metav1.NamespaceAll
	case namespace == "":
		namespace = k.Namespace()
	}
	return listWorkloads(ctx, client, namespace)
}

// listWorkloads lists the workloads of namespace ("" = every one) as documents.
func listWorkloads(ctx context.Context, c kubernetes.Interface, namespace string) ([]*manifest.Document, error) {
	var docs []*manifest.Document
	add := func(apiVersion, kind string, objects []any, owned func(i int) bool) error {
		for i, o := range objects {
			if owned != nil && owned(i) {
				continue
			}
			raw, err := json.Marshal(o)
			if err != nil {
				return err
			}
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				return err
			}
			m["apiVersion"], m["kind"] = apiVersion, kind
			delete(m, "status")
			if raw, err = json.Marshal(m); err != nil {
				return err
			}
			docs = append(docs, &manifest.Document{File: ClusterFile, Index: len(docs) + 1, JSON: true, Raw: raw,
				Head: manifest.Head{APIVersion: apiVersion, Kind: kind}})
		}
		return nil
	}
	opts := metav1.ListOptions{}
	apps, batch, core := c.AppsV1(), c.BatchV1(), c.CoreV1()
	deployments, err := apps.Deployments(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list Deployments: %w", err)
	}
	statefulSets, err := apps.StatefulSets(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list StatefulSets: %w", err)
	}
	daemonSets, err := apps.DaemonSets(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list DaemonSets: %w", err)
	}
	replicaSets, err := apps.ReplicaSets(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list ReplicaSets: %w", err)
	}
	cronJobs, err := batch.CronJobs(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list CronJobs: %w", err)
	}
	jobs, err := batch.Jobs(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list Jobs: %w", err)
	}
	pods, err := core.Pods(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list Pods: %w", err)
	}
	for _, step := range []error{
		add("apps/v1", "Deployment", anySlice(deployments.Items), nil),
		add("apps/v1", "StatefulSet", anySlice(statefulSets.Items), nil),
		add("apps/v1", "DaemonSet", anySlice(daemonSets.Items), nil),
		add("batch/v1", "CronJob", anySlice(cronJobs.Items), nil),
		add("apps/v1", "ReplicaSet", anySlice(replicaSets.Items), func(i int) bool { return metav1.GetControllerOf(&replicaSets.Items[i]) != nil }),
		add("batch/v1", "Job", anySlice(jobs.Items), func(i int) bool { return metav1.GetControllerOf(&jobs.Items[i]) != nil }),
		add("v1", "Pod", anySlice(pods.Items), func(i int) bool { return metav1.GetControllerOf(&pods.Items[i]) != nil }),
	} {
		if step != nil {
			return nil, step
		}
	}
	return docs, nil
}

// anySlice lists pointers to a list's items.
func anySlice[T any](items []T) []any {
	out := make([]any, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
