package podaudit

import (
	"context"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

// mutating is a MutatingWebhookConfiguration holding webhooks of these names.
func mutating(name string, webhooks ...string) *admissionv1.MutatingWebhookConfiguration {
	cfg := &admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, w := range webhooks {
		cfg.Webhooks = append(cfg.Webhooks, admissionv1.MutatingWebhook{Name: w})
	}
	return cfg
}

// Without --webhook-configuration, audit-pods finds the release's webhook by
// itself, as check-cluster does (issue 40 item 6); the flag chooses among
// several.
func TestWithoutAConfigurationNameTheWebhookIsFound(t *testing.T) {
	other := mutating("istio-sidecar-injector", "sidecar-injector.istio.io")
	cases := []struct {
		name          string
		configuration string
		objects       []runtime.Object
		want          string // the configuration found, "" for none
		wantErr       string
	}{
		{"the one configuration holding the webhook is found, whatever its name", "", []runtime.Object{other, mutating("platform-dynamic-config", DefaultWebhookName)}, "platform-dynamic-config", ""},
		{"no configuration holding it is not found, and says so", "", []runtime.Object{other}, "", ""},
		{"several are an error naming them all", "", []runtime.Object{mutating("b", DefaultWebhookName), mutating("a", "x.example.com", DefaultWebhookName)}, "",
			"2 MutatingWebhookConfigurations hold the webhook inject.dynamic-config.rs (a, b): --webhook-configuration chooses one"},
		{"a named configuration chooses among several", "b", []runtime.Object{mutating("b", DefaultWebhookName), mutating("a", DefaultWebhookName)}, "b", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, err := GetWebhook(context.Background(), kubefake.NewClientset(tc.objects...), tc.configuration, DefaultWebhookName)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w.Found != (tc.want != "") || w.Configuration != tc.want {
				t.Fatalf("found %v in %q, want %q", w.Found, w.Configuration, tc.want)
			}
			if !w.Found && !strings.Contains(w.Absence(), "no MutatingWebhookConfiguration holds the webhook inject.dynamic-config.rs") {
				t.Errorf("absence %q does not say none holds it", w.Absence())
			}
		})
	}
}
