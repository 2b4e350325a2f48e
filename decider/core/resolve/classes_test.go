package resolve

import (
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// classSet is the set the class tests decide with.
var classSet = classes.NewSet([]classes.Class{
	{Kind: classes.KindNamespaced, Namespace: "billing", Name: "team-vault", Source: "vault",
		Endpoint: "https://vault.billing.svc:8200", TokenSecret: &classes.TokenSecret{Name: "billing-vault-token", Namespace: "billing", Key: "token"}},
	{Kind: classes.KindCluster, Name: "infra-consul", Source: "consul", Endpoint: "http://consul.infra.svc:8500"},
	{Kind: classes.KindCluster, Name: "shared-redis", Source: "redis", Endpoint: "redis://redis:6379", Namespaces: []string{"billing"},
		TokenSecret: &classes.TokenSecret{Name: "redis-token", Namespace: "billing", Key: "password"}},
	{Kind: classes.KindCluster, Name: "tenant-consul", Source: "consul", Endpoint: "http://consul:8500",
		KeyPrefixes: []string{"apps/{namespace}/", "shared/"}},
})

// classPod is a pod of ns naming class, with key and path and extra annotations.
func classPod(ns, class string, extra ...string) *decision.Facts {
	f := facts(append([]string{"inject", "true", "class", class, "key", "apps/" + ns + "/app", "path", "/config/app.json"}, extra...)...)
	f.Namespace = ns
	return f
}

// classRefusalCases are the refusals of a class name, each decided with its class set.
var classRefusalCases = []struct {
	name, check, message string
	cls                  *classes.Set
	pod                  *decision.Facts
}{
	{"classes off is class.disabled, as before", "class.disabled",
		`dynamic-config.rs/class is "team-vault", but classes are not enabled in this installation (webhook.classes.enabled): name the store with dynamic-config.rs/source and its address with dynamic-config.rs/endpoint instead`,
		nil, classPod("billing", "team-vault")},
	{"a namespaced class is invisible from another namespace", "class.not-found",
		`dynamic-config.rs/class is "team-vault", but no class of that name is visible from namespace payments: list them with kubectl get dynamicconfigclasses,clusterdynamicconfigclasses`,
		classSet, classPod("payments", "team-vault")},
	{"a cluster class whose namespaces lack the pod's does not admit it", "class.not-admitted",
		`dynamic-config.rs/class is "shared-redis": the cluster class does not admit namespace web`,
		classes.NewSet([]classes.Class{{Kind: classes.KindCluster, Name: "shared-redis", Source: "redis", Endpoint: "redis://r", Namespaces: []string{"billing"}}}),
		classPod("web", "shared-redis")},
	{"a cluster class whose token Secret lives elsewhere is refused", "class.credential-elsewhere",
		`dynamic-config.rs/class is "shared-redis": its token Secret lives in namespace billing, and a pod can only mount Secrets of its own namespace (payments)`,
		classes.NewSet([]classes.Class{{Kind: classes.KindCluster, Name: "shared-redis", Source: "redis", Endpoint: "redis://r",
			TokenSecret: &classes.TokenSecret{Name: "t", Namespace: "billing", Key: "token"}}}),
		classPod("payments", "shared-redis")},
	{"a key outside the cluster class's prefixes is refused, naming them substituted", "class.key-prefix",
		`dynamic-config.rs/key is "apps/payments/app": the cluster class tenant-consul only serves keys under apps/billing/, shared/`,
		classSet, classPod("billing", "tenant-consul", "key", "apps/payments/app")},
}

func TestClassRefusals(t *testing.T) {
	for _, tt := range classRefusalCases {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(installation.Empty(), tt.cls, tt.pod)
			if d.Outcome != decision.OutcomeRefuse {
				t.Fatalf("outcome %v, want a refusal", d.Outcome)
			}
			r := d.Refusals[0]
			if r.Check != tt.check || r.Message != tt.message || r.HTTPCode != 403 || r.Slug != SlugPolicy {
				t.Errorf("refusal %+v\nwant check %s, 403 %s, message %s", r, tt.check, SlugPolicy, tt.message)
			}
			wantRevision := ""
			if tt.cls != nil {
				wantRevision = tt.cls.Revision
			}
			if d.ClassesRevision != wantRevision || d.AuditAnnotations[annotation.AuditClassesRevision] != wantRevision {
				t.Errorf("classes revision %q, audit %q; want %q", d.ClassesRevision, d.AuditAnnotations[annotation.AuditClassesRevision], wantRevision)
			}
		})
	}
}

func TestANamespacedClassFillsSourceEndpointAndTokenSecretWithClassProvenance(t *testing.T) {
	d := Decide(installation.Empty(), classSet, classPod("billing", "team-vault", "key", "secret/billing/app"))
	mustInject(t, d)
	for knob, want := range map[string]string{"source": "vault", "endpoint": "https://vault.billing.svc:8200", "token-secret": "billing-vault-token/token"} {
		v := resolved(t, d, "", knob)
		if v.Value != want || v.Tier != decision.TierClass || v.Class != "DynamicConfigClass billing/team-vault" || v.AnnotationKey != "" {
			t.Errorf("%s: %+v; want %q from the class", knob, v, want)
		}
	}
	if v := resolved(t, d, "", "key"); v.Tier != decision.TierAnnotation {
		t.Errorf("key tier %v", v.Tier)
	}
	if d.ClassesRevision != classSet.Revision {
		t.Errorf("classes revision %q", d.ClassesRevision)
	}
}

func TestPodValuesWinOverTheClass(t *testing.T) {
	d := Decide(installation.Empty(), classSet, classPod("billing", "team-vault", "key", "secret/billing/app",
		"endpoint", "https://canary:8200", "token-secret", "mine/vault"))
	mustInject(t, d)
	if v := resolved(t, d, "", "endpoint"); v.Value != "https://canary:8200" || v.Tier != decision.TierAnnotation {
		t.Errorf("endpoint %+v", v)
	}
	if v := resolved(t, d, "", "token-secret"); v.Value != "mine/vault" || v.Tier != decision.TierAnnotation {
		t.Errorf("token-secret %+v", v)
	}
	if v := resolved(t, d, "", "source"); v.Tier != decision.TierClass {
		t.Errorf("source %+v", v)
	}
}

func TestEndpointSecretBlocksTheClassEndpoint(t *testing.T) {
	// The pod brings its own credential: a class credential next to a
	// pod-chosen address is class.credential-endpoint (keyguard_test.go).
	d := Decide(installation.Empty(), classSet, classPod("billing", "team-vault", "key", "secret/billing/app",
		"endpoint-secret", "vault-addr/url", "token-secret", "vault-token/token"))
	mustInject(t, d)
	if v := resolved(t, d, "", "endpoint"); v.Set {
		t.Errorf("endpoint %+v; want unset: endpoint-secret blocks the class endpoint", v)
	}
}

func TestAClusterClassServesEveryNamespaceAndKeysUnderItsPrefixes(t *testing.T) {
	for _, ns := range []string{"billing", "payments"} {
		d := Decide(installation.Empty(), classSet, classPod(ns, "tenant-consul"))
		mustInject(t, d)
		if v := resolved(t, d, "", "endpoint"); v.Class != "ClusterDynamicConfigClass tenant-consul" {
			t.Errorf("%s: endpoint %+v", ns, v)
		}
	}
}

func TestTheStatusMarkSkipsClassResolution(t *testing.T) {
	f := classPod("payments", "no-such-class", "status", "injected")
	f.Containers = append(f.Containers, decision.Container{Name: "dynamic-config-agent"})
	d := Decide(installation.Empty(), classSet, f)
	if d.Outcome != decision.OutcomeSkip || d.SkipReason != decision.SkipAlreadyInjected || d.ClassesRevision != "" {
		t.Fatalf("decision %+v", d)
	}
}

func TestAClassFilledValueMeetsTheInstallationPinAsAPodValueWould(t *testing.T) {
	inst := load(t, "storeDefaults:\n  vault: \"endpoint=https://vault.central:8200!\"\n")
	d := Decide(inst, classSet, classPod("billing", "team-vault"))
	if d.Outcome != decision.OutcomeRefuse || d.Refusals[0].Check != "pin.endpoint" {
		t.Fatalf("decision %+v", d.Refusals)
	}
}
