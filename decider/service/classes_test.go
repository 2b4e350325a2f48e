package service

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

var serviceClasses = classes.NewSet([]classes.Class{
	{Kind: classes.KindNamespaced, Namespace: "billing", Name: "team-vault", Source: "vault",
		Endpoint: "https://user:pw@vault:8200", TokenSecret: &classes.TokenSecret{Name: "vt", Namespace: "billing", Key: "token"}},
	{Kind: classes.KindCluster, Name: "infra-consul", Source: "consul", Endpoint: "http://consul:8500",
		Namespaces: []string{"billing"}, KeyPrefixes: []string{"apps/{namespace}/"}},
})

func classFacts() *deciderv1.PodFacts {
	return &deciderv1.PodFacts{
		Namespace: "billing", Name: "app", Operation: deciderv1.Operation_OPERATION_CREATE,
		ResourceKind: deciderv1.ResourceKind_RESOURCE_KIND_POD,
		Annotations: map[string]string{
			"dynamic-config.rs/inject": "true",
			"dynamic-config.rs/class":  "team-vault",
			"dynamic-config.rs/key":    "secret/app",
			"dynamic-config.rs/path":   "/config/app.json",
		},
		Containers: []*deciderv1.Container{{Name: "app"}},
	}
}

func TestADecisionThatConsultedClassesCarriesTheirRevisionEverywhere(t *testing.T) {
	s := serve(t, installationloader.NewStore(installation.Empty()))
	s.svc.WithClasses(classes.NewStore(serviceClasses))
	resp, err := s.client.Decide(context.Background(), &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: classFacts()})
	if err != nil {
		t.Fatal(err)
	}
	d := resp.GetDecision()
	if d.GetOutcome() != deciderv1.Outcome_OUTCOME_INJECT || d.GetClassesRevision() != serviceClasses.Revision ||
		d.GetAuditAnnotations()["classes-revision"] != serviceClasses.Revision {
		t.Fatalf("decision %v", d)
	}
	for _, v := range d.GetRenders()[0].GetValues() {
		if v.GetKnob() == "endpoint" && (v.GetTier() != deciderv1.Tier_TIER_CLASS || v.GetClass() != "DynamicConfigClass billing/team-vault" || v.GetValue() != "https://…@vault:8200") {
			t.Errorf("endpoint %v", v)
		}
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(s.logs.String())), &line); err != nil {
		t.Fatal(err)
	}
	if line["classes_revision"] != serviceClasses.Revision {
		t.Errorf("decision log line %v lacks classes_revision", line)
	}

	// a pod that names no class did not consult them
	resp, err = s.client.Decide(context.Background(), &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: consulPod()})
	if err != nil {
		t.Fatal(err)
	}
	if cr := resp.GetDecision().GetClassesRevision(); cr != "" {
		t.Errorf("a decision without a class annotation carries classes_revision %q", cr)
	}
}

func TestDecideIsUnavailableUntilTheClassesSynced(t *testing.T) {
	s := serve(t, installationloader.NewStore(installation.Empty()))
	s.svc.WithClasses(classes.NewPendingStore())
	_, err := s.client.Decide(context.Background(), &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: classFacts()})
	if st := status.Convert(err); st.Code() != codes.Unavailable || st.Message() != "the classes have not synced from the API server yet" {
		t.Fatalf("got %v", err)
	}
}

func TestGetInstallationListsTheClassesByNameWithoutSecrets(t *testing.T) {
	s := serve(t, installationloader.NewStore(installation.Empty()))
	resp, err := s.client.GetInstallation(context.Background(), &deciderv1.GetInstallationRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetClasses()) != 0 || resp.GetClassesRevision() != "" {
		t.Fatalf("classes off lists %v %q", resp.GetClasses(), resp.GetClassesRevision())
	}
	s.svc.WithClasses(classes.NewStore(serviceClasses))
	resp, err = s.client.GetInstallation(context.Background(), &deciderv1.GetInstallationRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetClassesRevision() != serviceClasses.Revision || len(resp.GetClasses()) != 2 {
		t.Fatalf("got %q %v", resp.GetClassesRevision(), resp.GetClasses())
	}
	cluster, ns := resp.GetClasses()[0], resp.GetClasses()[1]
	if cluster.GetKind() != classes.KindCluster || cluster.GetName() != "infra-consul" || cluster.GetKeyPrefixes()[0] != "apps/{namespace}/" ||
		cluster.GetNamespaces()[0] != "billing" || cluster.GetTokenSecret() != nil {
		t.Errorf("cluster class %v", cluster)
	}
	if ns.GetNamespace() != "billing" || ns.GetEndpoint() != "https://…@vault:8200" ||
		ns.GetTokenSecret().GetName() != "vt" || ns.GetTokenSecret().GetKey() != "token" {
		t.Errorf("namespaced class %v", ns)
	}
}
