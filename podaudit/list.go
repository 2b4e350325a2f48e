package podaudit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
)

var (
	podsResource       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// listPage is the page size of the one-shot listing: the API server answers
// a large cluster in pages instead of one response holding every pod.
const listPage = 500

// Clients are the two API clients the audit uses: metadata-only reads of
// pods and namespaces, and the typed client for the webhook configuration
// (and, in the reporter, Events).
type Clients struct {
	Metadata metadata.Interface
	Typed    kubernetes.Interface
}

// ListOptions select what List reads.
type ListOptions struct {
	// Namespace limits the listing to one namespace; "" is every namespace.
	Namespace string
	// Configuration and Webhook name the injection webhook.
	Configuration, Webhook string
}

// Report is one listing's answer.
type Report struct {
	Webhook  Webhook
	Findings []Finding
	// Pods is how many pods were read.
	Pods int
}

// List reads the pods (metadata only, in pages), their namespaces' labels
// and the webhook configuration, and audits them.
func List(ctx context.Context, c Clients, o ListOptions) (*Report, error) {
	w, err := GetWebhook(ctx, c.Typed, o.Configuration, o.Webhook)
	if err != nil {
		return nil, err
	}
	namespaces, err := listNamespaces(ctx, c.Metadata, o.Namespace)
	if err != nil {
		return nil, err
	}
	r := &Report{Webhook: w}
	opts := metav1.ListOptions{Limit: listPage}
	for {
		page, err := c.Metadata.Resource(podsResource).Namespace(o.Namespace).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list pods: %w", err)
		}
		for i := range page.Items {
			r.Pods++
			if f, ok := Classify(&page.Items[i], namespaces, w); ok {
				r.Findings = append(r.Findings, f)
			}
		}
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	Sort(r.Findings)
	return r, nil
}

// GetWebhook reads the webhook configuration; a missing one is a Webhook
// with Found false, not an error.
func GetWebhook(ctx context.Context, c kubernetes.Interface, configuration, webhook string) (Webhook, error) {
	cfg, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, configuration, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return WebhookFrom(nil, configuration, webhook)
	}
	if err != nil {
		return Webhook{}, fmt.Errorf("get mutatingwebhookconfiguration %s: %w", configuration, err)
	}
	return WebhookFrom(cfg, configuration, webhook)
}

// listNamespaces returns the labels of one namespace or of every one. A
// namespace the caller may not read is left out: its pods are not judged
// against the namespaceSelector.
func listNamespaces(ctx context.Context, c metadata.Interface, namespace string) (Namespaces, error) {
	out := Namespaces{}
	if namespace != "" {
		ns, err := c.Resource(namespacesResource).Get(ctx, namespace, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err), apierrors.IsForbidden(err):
			return out, nil
		case err != nil:
			return nil, fmt.Errorf("get namespace %s: %w", namespace, err)
		}
		out[ns.Name] = ns.Labels
		return out, nil
	}
	list, err := c.Resource(namespacesResource).List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	for _, ns := range list.Items {
		out[ns.Name] = ns.Labels
	}
	return out, nil
}

// WriteTable prints the findings as a table, one pod a line, in Audit's order.
func WriteTable(w io.Writer, fs []Finding) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tCREATED\tREASON\tDETAIL")
	for _, f := range fs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Namespace, f.Name, f.Created.Format(time.RFC3339), f.Reason, f.Detail)
	}
	return tw.Flush()
}

// jsonReport is the -o json document.
type jsonReport struct {
	Webhook struct {
		Configuration string     `json:"configuration"`
		Name          string     `json:"name"`
		Found         bool       `json:"found"`
		Created       *time.Time `json:"created,omitempty"`
	} `json:"webhook"`
	// Pods is how many pods were read; Asking how many asked and carry no
	// status mark (every finding); Uninjected those not declined.
	Pods       int       `json:"pods"`
	Asking     int       `json:"asking"`
	Uninjected int       `json:"uninjected"`
	Findings   []Finding `json:"findings"`
}

// WriteJSON prints the report as one JSON document (findings [] when none).
func WriteJSON(w io.Writer, r *Report) error {
	var doc jsonReport
	doc.Webhook.Configuration, doc.Webhook.Name, doc.Webhook.Found = r.Webhook.Configuration, r.Webhook.Name, r.Webhook.Found
	if r.Webhook.Found {
		t := r.Webhook.Created.UTC()
		doc.Webhook.Created = &t
	}
	doc.Pods, doc.Asking, doc.Uninjected = r.Pods, len(r.Findings), len(Counted(r.Findings))
	doc.Findings = r.Findings
	if doc.Findings == nil {
		doc.Findings = []Finding{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// Write writes the report as audit-pods prints it: a table of the findings
// (output table), or the report as JSON (json).
func (r *Report) Write(w io.Writer, output string) error {
	if output == "json" {
		return WriteJSON(w, r)
	}
	return WriteTable(w, r.Findings)
}

// CheckListFlags checks audit-pods' -o, -n and -A.
func CheckListFlags(output, namespace string, allNamespaces bool) error {
	switch {
	case output != "table" && output != "json":
		return fmt.Errorf("-o is %q: want table or json", output)
	case allNamespaces && namespace != "":
		return errors.New("-n and -A exclude each other")
	}
	return nil
}

// MissingWebhookHint is what audit-pods says when the webhook it was told
// to look for does not exist ("" when it does).
func (r *Report) MissingWebhookHint(configuration, webhook string) string {
	if r.Webhook.Found {
		return ""
	}
	return fmt.Sprintf("audit-pods: the MutatingWebhookConfiguration %s with the webhook %s does not exist; --webhook-configuration names the release's (its full name)\n", configuration, webhook)
}
