package selfrotate

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestPublishWritesTheCABundleOfBothWebhookConfigurations(t *testing.T) {
	bundle := []byte("-----BEGIN CERTIFICATE-----\nbundle\n-----END CERTIFICATE-----\n")
	twoHooks := func(caBundle []byte) (*admissionv1.MutatingWebhookConfiguration, *admissionv1.ValidatingWebhookConfiguration) {
		return &admissionv1.MutatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "dynamic-config"},
				Webhooks: []admissionv1.MutatingWebhook{
					{Name: "inject.dynamic-config.rs", ClientConfig: admissionv1.WebhookClientConfig{CABundle: caBundle}},
					{Name: "other.dynamic-config.rs", ClientConfig: admissionv1.WebhookClientConfig{CABundle: bundle}},
				},
			}, &admissionv1.ValidatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "dynamic-config-env-policy"},
				Webhooks: []admissionv1.ValidatingWebhook{
					{Name: "env-policy.dynamic-config.rs", ClientConfig: admissionv1.WebhookClientConfig{CABundle: caBundle}},
					{Name: "other.dynamic-config.rs", ClientConfig: admissionv1.WebhookClientConfig{CABundle: bundle}},
				},
			}
	}
	tests := []struct {
		name        string
		objects     func() []runtime.Object
		mutating    string
		validating  string
		failVerb    string // a verb the API server fails for every webhook configuration
		wantUpdates []string
		wantErr     string
		wantLog     []string
		wantNoLog   string
	}{
		{
			name:     "a webhook without the bundle gets it and each configuration is written once",
			objects:  func() []runtime.Object { m, v := twoHooks(nil); return []runtime.Object{m, v} },
			mutating: "dynamic-config", validating: "dynamic-config-env-policy",
			wantUpdates: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"},
			wantLog:     []string{"caBundle written", "mutatingwebhookconfiguration=dynamic-config", "validatingwebhookconfiguration=dynamic-config-env-policy"},
		},
		{
			name:     "configurations already carrying the bundle are not written",
			objects:  func() []runtime.Object { m, v := twoHooks(bundle); return []runtime.Object{m, v} },
			mutating: "dynamic-config", validating: "dynamic-config-env-policy",
			wantNoLog: "caBundle written",
		},
		{
			name:     "a missing env-policy configuration is skipped without a word",
			objects:  func() []runtime.Object { m, _ := twoHooks(nil); return []runtime.Object{m} },
			mutating: "dynamic-config", validating: "dynamic-config-env-policy",
			wantUpdates: []string{"mutatingwebhookconfigurations"},
			wantNoLog:   "does not exist",
		},
		{
			name:     "a missing mutating configuration is warned about and the validating one still written",
			objects:  func() []runtime.Object { _, v := twoHooks(nil); return []runtime.Object{v} },
			mutating: "dynamic-config", validating: "dynamic-config-env-policy",
			wantUpdates: []string{"validatingwebhookconfigurations"},
			wantLog:     []string{"level=WARN", "the mutating webhook configuration does not exist", "name=dynamic-config"},
		},
		{
			name:      "configurations not named are not read",
			objects:   func() []runtime.Object { m, v := twoHooks(nil); return []runtime.Object{m, v} },
			failVerb:  "get",
			wantNoLog: "caBundle written",
		},
		{
			name:     "a failed read names the configuration",
			objects:  func() []runtime.Object { m, v := twoHooks(nil); return []runtime.Object{m, v} },
			mutating: "dynamic-config", validating: "dynamic-config-env-policy",
			failVerb: "get",
			wantErr:  "read mutatingwebhookconfiguration dynamic-config: the API server is away",
		},
		{
			name:       "a failed write names the configuration",
			objects:    func() []runtime.Object { _, v := twoHooks(nil); return []runtime.Object{v} },
			validating: "dynamic-config-env-policy",
			failVerb:   "update",
			wantErr:    "write the caBundle of validatingwebhookconfiguration dynamic-config-env-policy: the API server is away",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(tt.objects()...)
			if tt.failVerb != "" {
				client.PrependReactor(tt.failVerb, "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
					if !strings.HasSuffix(a.GetResource().Resource, "webhookconfigurations") {
						return false, nil, nil
					}
					return true, nil, errors.New("the API server is away")
				})
			}
			var log bytes.Buffer
			r := &Rotator{cfg: Config{Client: client, MutatingWebhook: tt.mutating, ValidatingWebhook: tt.validating,
				Logger: slog.New(slog.NewTextHandler(&log, nil))}}
			err := r.publish(context.Background(), bundle)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("publish() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("publish() error = %v", err)
			}
			var updates []string
			for _, a := range client.Actions() {
				if a.GetVerb() == "update" {
					updates = append(updates, a.GetResource().Resource)
				}
			}
			if strings.Join(updates, ",") != strings.Join(tt.wantUpdates, ",") {
				t.Errorf("updates %v, want %v", updates, tt.wantUpdates)
			}
			for _, want := range tt.wantLog {
				if !strings.Contains(log.String(), want) {
					t.Errorf("log lacks %q:\n%s", want, log.String())
				}
			}
			if tt.wantNoLog != "" && strings.Contains(log.String(), tt.wantNoLog) {
				t.Errorf("log has %q:\n%s", tt.wantNoLog, log.String())
			}
			ctx := context.Background()
			if m, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "dynamic-config", metav1.GetOptions{}); err == nil && tt.mutating != "" {
				for _, w := range m.Webhooks {
					if !bytes.Equal(w.ClientConfig.CABundle, bundle) {
						t.Errorf("mutating webhook %s has caBundle %q, want the bundle", w.Name, w.ClientConfig.CABundle)
					}
				}
			}
			if v, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "dynamic-config-env-policy", metav1.GetOptions{}); err == nil && tt.validating != "" {
				for _, w := range v.Webhooks {
					if !bytes.Equal(w.ClientConfig.CABundle, bundle) {
						t.Errorf("validating webhook %s has caBundle %q, want the bundle", w.Name, w.ClientConfig.CABundle)
					}
				}
			}
		})
	}
}
