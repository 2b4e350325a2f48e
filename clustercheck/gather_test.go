package clustercheck

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
)

// A Service-backed webhook as the chart renders it: the Service port 443
// maps to the endpoints' named port, whose ready addresses are dialled.
func TestClusterCheckFollowsTheServiceToItsReadyEndpoints(t *testing.T) {
	srv, b := servingServer(t)
	_, portText, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "https://"))
	port, _ := strconv.Atoi(portText)

	cfg := &admissionv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "dynamic-config"},
		Webhooks: []admissionv1.MutatingWebhook{
			{Name: InjectWebhook, ClientConfig: admissionv1.WebhookClientConfig{
				Service:  &admissionv1.ServiceReference{Namespace: "dc", Name: "dynamic-config-frontdoor", Port: ptr(int32(443))},
				CABundle: b.CAPEM,
			}, FailurePolicy: ptr(admissionv1.Fail), TimeoutSeconds: ptr(int32(5)), MatchConditions: []admissionv1.MatchCondition{{Name: AsksCondition, Expression: "true"}}},
			{Name: "someone-else.example.com"},
		},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "dc", Name: "dynamic-config-frontdoor"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "metrics", Port: 9091}, {Name: "https", Port: 443, TargetPort: intstr.FromString("https")}}},
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "dc", Name: "dynamic-config-frontdoor-abcde", Labels: map[string]string{discoveryv1.LabelServiceName: "dynamic-config-frontdoor"}},
		Ports:      []discoveryv1.EndpointPort{{Name: ptr("metrics"), Port: ptr(int32(9091))}, {Name: ptr("https"), Port: ptr(int32(port))}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}},
			{Addresses: []string{"127.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(false)}},
		},
	}
	client := fake.NewClientset(cfg, svc, slice)

	// The serving certificate is for localhost and 127.0.0.1, not for the
	// Service's name: the check must say so, as the API server would.
	fs := Cluster{Client: client, Dial: true, DialTimeout: 5 * time.Second}.Check(context.Background(), Expect{DeciderTimeout: 2 * time.Second, Now: time.Now()})
	want := map[string]Status{"caBundle": OK, "endpoints": OK, "failurePolicy": OK, "matchConditions": OK, "timeoutSeconds": OK, "serving certificate": Fail}
	if len(fs) != len(want) {
		t.Fatalf("%d findings; want %d (one webhook of ours, one ready endpoint dialled): %+v", len(fs), len(want), fs)
	}
	for _, f := range fs {
		if f.Status != want[f.Check] {
			t.Errorf("%s: %s (%s); want %s", f.Check, f.Status, f.Detail, want[f.Check])
		}
	}
	serving := byCheck(fs, "serving certificate")[0].Detail
	if !strings.HasPrefix(serving, "127.0.0.1:"+portText+" ") || !strings.Contains(serving, "not dynamic-config-frontdoor.dc.svc") {
		t.Errorf("the serving finding %q does not name the endpoint dialled and the name expected", serving)
	}
	if d := byCheck(fs, "endpoints")[0].Detail; d != "service dc/dynamic-config-frontdoor: 1 of 2 endpoint(s) ready" {
		t.Errorf("endpoints: %q", d)
	}

	t.Run("a named configuration that does not exist fails naming it", func(t *testing.T) {
		fs := Cluster{Client: client, MutatingConfigs: []string{"nope"}}.Check(context.Background(), Expect{Now: time.Now()})
		if len(fs) != 1 || fs[0].Status != Fail || fs[0].Object != "mutatingwebhookconfiguration/nope" || !strings.Contains(fs[0].Detail, "not found") {
			t.Errorf("findings %+v; want one failure naming mutatingwebhookconfiguration/nope", fs)
		}
	})
	t.Run("no configuration of ours at all fails", func(t *testing.T) {
		fs := Cluster{Client: fake.NewClientset()}.Check(context.Background(), Expect{Now: time.Now()})
		if len(fs) != 1 || fs[0].Status != Fail || !strings.Contains(fs[0].Detail, "no webhook configuration holds "+InjectWebhook) {
			t.Errorf("findings %+v; want one failure", fs)
		}
	})
}
