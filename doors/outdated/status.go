package outdated

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
)

// The rollout judged as `kubectl rollout status` judges it: each function
// says whether the workload's rollout is done and, when not, what it waits
// for.

// DeploymentStatus judges d; failed is true when its controller gave up
// (the Progressing condition's reason is ProgressDeadlineExceeded).
func DeploymentStatus(d *appsv1.Deployment) (status string, done, failed bool) {
	if d.Generation > d.Status.ObservedGeneration {
		return "waiting for the deployment spec update to be observed", false, false
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return fmt.Sprintf("deployment %q exceeded its progress deadline", d.Name), false, true
		}
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	s := d.Status
	switch {
	case s.UpdatedReplicas < replicas:
		return fmt.Sprintf("%d out of %d new replicas have been updated", s.UpdatedReplicas, replicas), false, false
	case s.Replicas > s.UpdatedReplicas:
		return fmt.Sprintf("%d old replicas are pending termination", s.Replicas-s.UpdatedReplicas), false, false
	case s.AvailableReplicas < s.UpdatedReplicas:
		return fmt.Sprintf("%d of %d updated replicas are available", s.AvailableReplicas, s.UpdatedReplicas), false, false
	}
	return "successfully rolled out", true, false
}

// StatefulSetStatus judges s (a RollingUpdate one; OnDelete is left alone
// before).
func StatefulSetStatus(s *appsv1.StatefulSet) (status string, done bool) {
	if s.Status.ObservedGeneration == 0 || s.Generation > s.Status.ObservedGeneration {
		return "waiting for the statefulset spec update to be observed", false
	}
	if s.Spec.Replicas != nil && s.Status.ReadyReplicas < *s.Spec.Replicas {
		return fmt.Sprintf("%d of %d pods are ready", s.Status.ReadyReplicas, *s.Spec.Replicas), false
	}
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil && s.Spec.Replicas != nil && *ru.Partition > 0 {
		if want := *s.Spec.Replicas - *ru.Partition; s.Status.UpdatedReplicas < want {
			return fmt.Sprintf("%d of %d pods updated (partition %d)", s.Status.UpdatedReplicas, want, *ru.Partition), false
		}
		return "partitioned roll out complete", true
	}
	if s.Status.UpdateRevision != s.Status.CurrentRevision {
		return fmt.Sprintf("%d pods at revision %s", s.Status.UpdatedReplicas, s.Status.UpdateRevision), false
	}
	return "successfully rolled out", true
}

// DaemonSetStatus judges d (a RollingUpdate one).
func DaemonSetStatus(d *appsv1.DaemonSet) (status string, done bool) {
	if d.Generation > d.Status.ObservedGeneration {
		return "waiting for the daemon set spec update to be observed", false
	}
	s := d.Status
	switch {
	case s.UpdatedNumberScheduled < s.DesiredNumberScheduled:
		return fmt.Sprintf("%d out of %d new pods have been updated", s.UpdatedNumberScheduled, s.DesiredNumberScheduled), false
	case s.NumberAvailable < s.DesiredNumberScheduled:
		return fmt.Sprintf("%d of %d updated pods are available", s.NumberAvailable, s.DesiredNumberScheduled), false
	}
	return "successfully rolled out", true
}
