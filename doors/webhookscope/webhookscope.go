// Package webhookscope says whether the API server would call the webhook
// at all for an object, as istioctl x check-inject says it (issue 15), from
// the chart's webhook values: explain shows it above each decision.
package webhookscope

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/facts"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// Whether the API server would call the webhook at all, as istioctl x
// check-inject says it (issue 15): the chart's webhooks only see objects in
// namespaces their namespaceSelector admits, and the mutating webhook only
// pods its matchCondition admits (a dynamic-config.rs/ annotation key, the
// front door's own A3 rule). A pod kept out never reaches the decider,
// whatever explain's decision says.

// asksConditionName is the chart's matchCondition on /mutate.
const asksConditionName = "asks-for-dynamic-config"

// DefaultReleaseNamespace is the namespace the chart README installs into.
const DefaultReleaseNamespace = "dynamic-config"

// validateOnlyExcluded is kept out of the env-policy webhook (/validate)
// beside the namespaces both webhooks exclude: kube-public holds the
// cluster's public bootstrap data (cluster-info), no team's workloads, and
// nothing there should wait on the front door (issue 40 item 10).
const validateOnlyExcluded = "kube-public"

// Scope is what the chart's webhook configurations select, from the
// chart values (--values) or the chart's defaults.
type Scope struct {
	releaseNamespace  string
	excludeNamespaces []string // the chart's: kube-system, kube-node-lease, the release namespace, webhook.excludeNamespaces
	namespaceGating   bool
	objectSelector    *metav1.LabelSelector
	extraConditions   []string // the names of webhook.matchConditions (CEL explain does not evaluate)
}

// chartWebhookValues is the part of the chart values the scope reads.
type chartWebhookValues struct {
	Webhook struct {
		ExcludeNamespaces []string              `json:"excludeNamespaces"`
		NamespaceGating   bool                  `json:"namespaceGating"`
		ObjectSelector    *metav1.LabelSelector `json:"objectSelector"`
		MatchConditions   []struct {
			Name string `json:"name"`
		} `json:"matchConditions"`
	} `json:"webhook"`
}

// Load builds the scope from the chart values file ("" = the
// chart's defaults) and the release namespace.
func Load(valuesPath, releaseNamespace string) (*Scope, error) {
	s := &Scope{releaseNamespace: releaseNamespace}
	var v chartWebhookValues
	if valuesPath != "" {
		data, err := os.ReadFile(valuesPath)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", valuesPath, err)
		}
		if err := yaml.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("%s: webhook: %w", valuesPath, err)
		}
	}
	for _, ns := range append([]string{"kube-system", "kube-node-lease", releaseNamespace}, v.Webhook.ExcludeNamespaces...) {
		if !slices.Contains(s.excludeNamespaces, ns) {
			s.excludeNamespaces = append(s.excludeNamespaces, ns)
		}
	}
	s.namespaceGating = v.Webhook.NamespaceGating
	if sel := v.Webhook.ObjectSelector; sel != nil && (len(sel.MatchLabels) > 0 || len(sel.MatchExpressions) > 0) {
		s.objectSelector = sel
	}
	for _, c := range v.Webhook.MatchConditions {
		s.extraConditions = append(s.extraConditions, c.Name)
	}
	return s, nil
}

// Reach is whether the object reaches its webhook.
type Reach struct {
	Path string `json:"path"` // /mutate for a Pod, /validate for a workload
	// Reached is false when the API server would never call the webhook.
	Reached bool `json:"reached"`
	// Blocked says why not, one sentence per cause.
	Blocked []string `json:"blocked,omitempty"`
	// Provided are the conditions explain cannot check offline.
	Provided []string `json:"provided,omitempty"`
}

// Reach decides whether a Pod (pod=true: /mutate) or a workload (/validate)
// in namespace, with the object's labels and raw JSON, reaches the webhook.
func (s *Scope) Reach(pod bool, namespace string, objLabels map[string]string, raw []byte) Reach {
	r := Reach{Path: "/mutate", Reached: true}
	if !pod {
		r.Path = "/validate"
	}
	excluded := s.excludeNamespaces
	if !pod && !slices.Contains(excluded, validateOnlyExcluded) {
		excluded = append(slices.Clip(excluded), validateOnlyExcluded)
	}
	if slices.Contains(excluded, namespace) {
		r.Blocked = append(r.Blocked, fmt.Sprintf("namespace %q is excluded by the chart's namespaceSelector (%s)",
			namespace, strings.Join(excluded, ", ")))
	}
	if pod {
		if !facts.HasPrefixedAnnotation(raw) {
			r.Blocked = append(r.Blocked, "the pod has no "+annotation.Prefix+" annotation key (the webhook's matchCondition "+asksConditionName+")")
		}
		if s.objectSelector != nil {
			sel, err := metav1.LabelSelectorAsSelector(s.objectSelector)
			switch {
			case err != nil:
				r.Blocked = append(r.Blocked, "webhook.objectSelector is invalid: "+err.Error())
			case !sel.Matches(labels.Set(objLabels)):
				r.Blocked = append(r.Blocked, "the pod's labels do not match webhook.objectSelector ("+sel.String()+")")
			}
		}
		for _, name := range s.extraConditions {
			r.Provided = append(r.Provided, "the installer's matchCondition "+strconv.Quote(name)+" is true (not evaluated offline)")
		}
		if s.namespaceGating {
			r.Provided = append(r.Provided, fmt.Sprintf("namespace %q is labelled dynamic-config.rs/injection=enabled (webhook.namespaceGating)", namespace))
		}
	}
	r.Reached = len(r.Blocked) == 0
	return r
}

// ValidateRendered narrows a workload's reach (/validate) to what the
// release renders (issue 40): the chart renders the env-policy webhook only
// when envPolicy has rules, for its targets (both by default), so without
// them the API server calls no /validate at all.
func (r Reach) ValidateRendered(p *envpolicy.Policy) Reach {
	switch {
	case p == nil || len(p.Rules) == 0:
		r.Blocked = append(r.Blocked, "the release renders no /validate webhook (envPolicy has no rules)")
	case !p.Includes(envpolicy.TargetWorkloads):
		r.Blocked = append(r.Blocked, "the release's /validate webhook leaves workloads out (envPolicy.targets is "+strings.Join(p.Targets, ", ")+")")
	}
	r.Reached = len(r.Blocked) == 0
	return r
}

// Text is the reach line of explain's text output.
func (r Reach) Text() string {
	if !r.Reached {
		return "webhook " + r.Path + ": never called: " + strings.Join(r.Blocked, "; ") +
			" (the decision below is what it would answer)"
	}
	if len(r.Provided) > 0 {
		return "webhook " + r.Path + ": called, provided " + strings.Join(r.Provided, " and ")
	}
	return "webhook " + r.Path + ": called"
}
