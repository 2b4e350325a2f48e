// Package secretprune deletes the Secrets cert-manager issued for a release's
// Certificates once the release no longer has those Certificates (issue 40:
// a switch of tls.mode away from certManager, or helm uninstall). cert-manager
// keeps a Certificate's Secret after the Certificate is deleted (unless its
// controller runs with --enable-certificate-owner-ref), and Helm never owned
// it, so without this every such Secret would outlive the release that asked
// for it. `dynamic-config prune-secrets` (cmd/dynamic-config) runs it in the
// chart's prune-secrets hook Job.
//
// Only a Secret that cert-manager wrote (it carries cert-manager's
// certificate-name annotation) and that no Helm release manages is deleted;
// any other Secret of a given name is left alone and reported.
package secretprune

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The annotations that say who wrote a Secret.
const (
	certManagerAnnotation = "cert-manager.io/certificate-name"
	helmReleaseAnnotation = "meta.helm.sh/release-name"
)

// Action is what Prune did with one name.
type Action string

// The actions.
const (
	Deleted Action = "deleted" // cert-manager's Secret, now gone
	Absent  Action = "absent"  // no Secret of that name
	Kept    Action = "kept"    // a Secret someone else owns (Why says who)
)

// Outcome is one name's result.
type Outcome struct {
	Name   string
	Action Action
	Why    string
}

// WriteOutcomes writes one line per Secret: "secret NS/NAME: ACTION[: WHY]".
func WriteOutcomes(w io.Writer, namespace string, outcomes []Outcome) {
	for _, o := range outcomes {
		if o.Why == "" {
			fmt.Fprintf(w, "secret %s/%s: %s\n", namespace, o.Name, o.Action)
		} else {
			fmt.Fprintf(w, "secret %s/%s: %s: %s\n", namespace, o.Name, o.Action, o.Why)
		}
	}
}

// Prune deletes, in namespace, each named Secret that cert-manager issued and
// Helm does not manage. It stops at the first API error other than "not
// found", returning the outcomes so far.
func Prune(ctx context.Context, client kubernetes.Interface, namespace string, names []string) ([]Outcome, error) {
	secrets := client.CoreV1().Secrets(namespace)
	var out []Outcome
	for _, name := range names {
		s, err := secrets.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			out = append(out, Outcome{Name: name, Action: Absent})
			continue
		case err != nil:
			return out, fmt.Errorf("get secret %s/%s: %w", namespace, name, err)
		}
		if release := s.Annotations[helmReleaseAnnotation]; release != "" {
			out = append(out, Outcome{Name: name, Action: Kept, Why: "Helm release " + release + " manages it"})
			continue
		}
		certificate := s.Annotations[certManagerAnnotation]
		if certificate == "" {
			out = append(out, Outcome{Name: name, Action: Kept, Why: "cert-manager did not write it (no " + certManagerAnnotation + " annotation)"})
			continue
		}
		uid := s.UID
		err = secrets.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		switch {
		case apierrors.IsNotFound(err):
			out = append(out, Outcome{Name: name, Action: Absent})
		case err != nil:
			return out, fmt.Errorf("delete secret %s/%s: %w", namespace, name, err)
		default:
			out = append(out, Outcome{Name: name, Action: Deleted, Why: "issued by cert-manager for Certificate " + certificate})
		}
	}
	return out, nil
}
