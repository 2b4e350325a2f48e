package secretprune

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func secret(name string, annotations map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "dc", Annotations: annotations, UID: types.UID("uid-" + name)}}
}

func TestPruneDeletesOnlyWhatCertManagerWroteAndHelmDoesNotManage(t *testing.T) {
	client := fake.NewClientset(
		secret("issued", map[string]string{certManagerAnnotation: "dc-frontdoor"}),
		secret("helm-owned", map[string]string{certManagerAnnotation: "dc-decider", helmReleaseAnnotation: "dc"}),
		secret("someone-elses", nil),
	)
	got, err := Prune(context.Background(), client, "dc", []string{"issued", "helm-owned", "someone-elses", "never-there"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Outcome{
		{"issued", Deleted, "issued by cert-manager for Certificate dc-frontdoor"},
		{"helm-owned", Kept, "Helm release dc manages it"},
		{"someone-elses", Kept, "cert-manager did not write it (no cert-manager.io/certificate-name annotation)"},
		{"never-there", Absent, ""},
	}
	if len(got) != len(want) {
		t.Fatalf("outcomes %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("outcome %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	left, err := client.CoreV1().Secrets("dc").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range left.Items {
		names = append(names, s.Name)
	}
	if len(names) != 2 || names[0] != "helm-owned" || names[1] != "someone-elses" {
		t.Errorf("Secrets left %v, want [helm-owned someone-elses]", names)
	}
}

func TestPruneOfNoNamesDoesNothing(t *testing.T) {
	got, err := Prune(context.Background(), fake.NewClientset(secret("issued", map[string]string{certManagerAnnotation: "x"})), "dc", nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("Prune(nil) = %v, %v; want nothing", got, err)
	}
}
