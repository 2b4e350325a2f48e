// Package podaudit finds the pods that asked for the agent and were admitted
// without it (issue 21): a pod that carries a dynamic-config.rs/ annotation
// (the front door's "does it ask?" rule, spec 01 §8.1 A3 and 04 §6) and no
// status mark (dynamic-config.rs/status: injected, spec 03 §1). It reads pod
// metadata only. Audit classifies, and says why when it can tell; List is
// the one-shot listing of `dynamic-config audit-pods`; Reporter is the
// in-cluster reporter (`dynamic-config audit-reporter`): a metadata informer,
// the dynamic_config_pods_asking_uninjected gauge and one Event per pod.
package podaudit

import (
	"fmt"
	"sort"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// The annotations the audit reads (spec 01 §2, 03 §1).
const (
	// StatusKey and StatusInjected form the status mark the webhook writes
	// on every pod it injects (the patch's first operation, spec 03 §4).
	StatusKey      = annotation.Prefix + "status"
	StatusInjected = "injected"
	// InjectKey is the pod's opt-in; "false" (or its absence without a
	// class) is the decider's NOT_REQUESTED skip (01 §8.1 B5).
	InjectKey = annotation.Prefix + "inject"
	// ClassKey names a class that may supply inject (spec 08 §3).
	ClassKey = annotation.Prefix + "class"
)

// DefaultWebhookName is the injection webhook's name inside the chart's
// MutatingWebhookConfiguration (07 §6.3).
const DefaultWebhookName = "inject.dynamic-config.rs"

// Asks is the front door's A3 rule: some annotation key is under the prefix.
func Asks(annotations map[string]string) bool {
	for k := range annotations {
		if annotation.Prefixed(k) {
			return true
		}
	}
	return false
}

// Injected reports whether the pod carries the status mark.
func Injected(annotations map[string]string) bool {
	return annotations[StatusKey] == StatusInjected
}

// Reason says why a pod that asked is not injected, as far as the audit
// can tell from the pod's metadata, its namespace's labels and the webhook
// configuration. The values are stable: the JSON output and the Events
// carry them.
type Reason string

// The reasons, in the order Audit tries them: the first that applies wins.
const (
	// ReasonInjectFalse: the pod says inject: "false"; it declined.
	ReasonInjectFalse Reason = "inject-false"
	// ReasonNotRequested: prefixed annotations, but neither inject nor a
	// class; the decider would skip it too (NOT_REQUESTED).
	ReasonNotRequested Reason = "not-requested"
	// ReasonNoWebhook: the webhook configuration (or the injection webhook
	// in it) does not exist.
	ReasonNoWebhook Reason = "no-webhook"
	// ReasonNamespaceExcluded: the webhook's namespaceSelector does not
	// select the pod's namespace.
	ReasonNamespaceExcluded Reason = "namespace-excluded"
	// ReasonObjectExcluded: the webhook's objectSelector does not select
	// the pod's labels.
	ReasonObjectExcluded Reason = "object-excluded"
	// ReasonCreatedBeforeWebhook: the pod is older than the webhook
	// configuration.
	ReasonCreatedBeforeWebhook Reason = "created-before-webhook"
	// ReasonUnknown: the webhook should have seen the pod. It did not
	// answer while failurePolicy is Ignore, a matchCondition of the
	// operator's own left it out, or another webhook added the annotation
	// after ours ran (reinvocationPolicy Never).
	ReasonUnknown Reason = "unknown"
)

// Declined reports whether the reason is the pod's own choice: such a pod
// is listed but neither counted by the gauge nor given an Event, and does
// not make audit-pods exit 1.
func (r Reason) Declined() bool { return r == ReasonInjectFalse || r == ReasonNotRequested }

// Webhook is what the audit knows of the injection webhook.
type Webhook struct {
	// Configuration is the MutatingWebhookConfiguration's name, Name the
	// webhook's inside it.
	Configuration, Name string
	// Found is false when the configuration or the webhook is missing.
	Found bool
	// Created is the configuration's creationTimestamp.
	Created time.Time
	// NamespaceSelector and ObjectSelector are the webhook's (Everything when unset).
	NamespaceSelector, ObjectSelector labels.Selector
}

// WebhookFrom reads the named webhook of cfg; cfg nil means the
// configuration does not exist.
func WebhookFrom(cfg *admissionv1.MutatingWebhookConfiguration, configuration, webhook string) (Webhook, error) {
	w := Webhook{Configuration: configuration, Name: webhook}
	if cfg == nil {
		return w, nil
	}
	for i := range cfg.Webhooks {
		h := &cfg.Webhooks[i]
		if h.Name != webhook {
			continue
		}
		ns, err := selector(h.NamespaceSelector)
		if err != nil {
			return w, fmt.Errorf("webhook %s of %s: namespaceSelector: %w", webhook, configuration, err)
		}
		obj, err := selector(h.ObjectSelector)
		if err != nil {
			return w, fmt.Errorf("webhook %s of %s: objectSelector: %w", webhook, configuration, err)
		}
		w.Found, w.Created = true, cfg.CreationTimestamp.Time
		w.NamespaceSelector, w.ObjectSelector = ns, obj
		return w, nil
	}
	return w, nil
}

func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

// Namespaces holds the labels of the namespaces the audit may look at; a
// namespace that is not in it is not judged against the namespaceSelector.
type Namespaces map[string]map[string]string

// Finding is one pod that asked and carries no status mark.
type Finding struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       string    `json:"uid"`
	Created   time.Time `json:"created"`
	Reason    Reason    `json:"reason"`
	// Detail is the reason in words, naming the webhook configuration.
	Detail string `json:"detail"`
}

// Audit returns the findings among pods, ordered by namespace then name.
// A pod that does not ask, or carries the status mark, is no finding.
func Audit(pods []metav1.Object, namespaces Namespaces, w Webhook) []Finding {
	var out []Finding
	for _, p := range pods {
		if f, ok := Classify(p, namespaces, w); ok {
			out = append(out, f)
		}
	}
	Sort(out)
	return out
}

// Sort orders findings by namespace, then name, then UID.
func Sort(fs []Finding) {
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.UID < b.UID
	})
}

// Classify judges one pod; ok is false when it is no finding.
func Classify(p metav1.Object, namespaces Namespaces, w Webhook) (Finding, bool) {
	ann := p.GetAnnotations()
	if !Asks(ann) || Injected(ann) {
		return Finding{}, false
	}
	f := Finding{Namespace: p.GetNamespace(), Name: p.GetName(), UID: string(p.GetUID()), Created: p.GetCreationTimestamp().UTC()}
	f.Reason, f.Detail = why(p, ann, namespaces, w)
	return f, true
}

func why(p metav1.Object, ann map[string]string, namespaces Namespaces, w Webhook) (Reason, string) {
	inject, hasInject := ann[InjectKey]
	_, hasClass := ann[ClassKey]
	switch {
	case hasInject && inject == "false":
		return ReasonInjectFalse, `the pod says dynamic-config.rs/inject: "false"`
	case !hasInject && !hasClass:
		return ReasonNotRequested, "the pod carries dynamic-config.rs/ annotations but neither dynamic-config.rs/inject nor dynamic-config.rs/class"
	case !w.Found:
		return ReasonNoWebhook, fmt.Sprintf("the MutatingWebhookConfiguration %s with the webhook %s does not exist", w.Configuration, w.Name)
	}
	if nsLabels, known := namespaces[p.GetNamespace()]; known && !w.NamespaceSelector.Matches(labels.Set(nsLabels)) {
		return ReasonNamespaceExcluded, fmt.Sprintf("the namespaceSelector of %s does not select namespace %s (%s)", w.Configuration, p.GetNamespace(), w.NamespaceSelector)
	}
	if !w.ObjectSelector.Matches(labels.Set(p.GetLabels())) {
		return ReasonObjectExcluded, fmt.Sprintf("the objectSelector of %s does not select the pod's labels (%s)", w.Configuration, w.ObjectSelector)
	}
	if created := p.GetCreationTimestamp().Time; !created.IsZero() && created.Before(w.Created) {
		return ReasonCreatedBeforeWebhook, fmt.Sprintf("the pod was created at %s, before %s (%s): recreate it",
			created.UTC().Format(time.RFC3339), w.Configuration, w.Created.UTC().Format(time.RFC3339))
	}
	return ReasonUnknown, "the webhook should have seen this pod: it did not answer while failurePolicy was Ignore, " +
		"an extra matchCondition left it out, or another webhook added the annotation after ours; recreate the pod"
}

// Counted returns the findings that are not declined.
func Counted(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if !f.Reason.Declined() {
			out = append(out, f)
		}
	}
	return out
}

// trimAnnotations keeps what Classify and RevisionOf read: the prefixed
// keys, with the values of status, inject, class and the revision stamp
// only (an annotation value can be a whole template; the informer must not
// hold it).
func trimAnnotations(ann map[string]string) map[string]string {
	var out map[string]string
	for k, v := range ann {
		if !strings.HasPrefix(k, annotation.Prefix) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		switch k {
		case StatusKey, InjectKey, ClassKey, RevisionStampKey:
			out[k] = v
		default:
			out[k] = ""
		}
	}
	return out
}
