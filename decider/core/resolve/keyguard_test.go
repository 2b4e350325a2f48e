package resolve

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// guardSet holds guarded cluster classes — one whose token Secret lives in
// billing, two without a credential whose prefix has no / a trailing slash,
// one of absolute keys — and an unguarded namespaced class with a credential.
var guardSet = classes.NewSet([]classes.Class{
	{Kind: classes.KindCluster, Name: "tenant-consul", Source: "consul", Endpoint: "http://consul.infra.svc:8500",
		TokenSecret: &classes.TokenSecret{Name: "consul-token", Namespace: "billing", Key: "token"},
		KeyPrefixes: []string{"apps/{namespace}/", "shared/"}},
	{Kind: classes.KindCluster, Name: "bare-prefix", Source: "consul", Endpoint: "http://consul:8500", KeyPrefixes: []string{"apps/{namespace}"}},
	{Kind: classes.KindCluster, Name: "slash-prefix", Source: "consul", Endpoint: "http://consul:8500", KeyPrefixes: []string{"apps/{namespace}/"}},
	{Kind: classes.KindCluster, Name: "tenant-etcd", Source: "etcd", Endpoint: "http://etcd:2379", KeyPrefixes: []string{"/apps/{namespace}/"}},
	{Kind: classes.KindNamespaced, Namespace: "billing", Name: "team-vault", Source: "vault", Endpoint: "https://vault.billing.svc:8200",
		TokenSecret: &classes.TokenSecret{Name: "billing-vault-token", Namespace: "billing", Key: "token"}},
})

// secretPod is a pod of billing that names no class but the store, the
// address and credential knobs itself (kv), with a path.
func secretPod(kv ...string) *decision.Facts {
	f := facts(append([]string{"inject", "true", "source", "consul", "endpoint", "http://consul.infra.svc:8500", "path", "/config/app.json"}, kv...)...)
	f.Namespace = "billing"
	return f
}

// keyGuardCases are the refusals of the class key guard, decided with guardSet.
var keyGuardCases = []struct {
	name, check, key, render, message string
	pod                               *decision.Facts
}{
	{"a dot-dot segment the raw prefix would let through", "class.key-segment", "dynamic-config.rs/key", "",
		`dynamic-config.rs/key is "apps/billing/../payments/app": it has a ".." segment, and the cluster class tenant-consul only serves plain keys under apps/billing/, shared/ (no "." or ".." segment, no empty segment, no %-escape)`,
		classPod("billing", "tenant-consul", "key", "apps/billing/../payments/app")},
	{"a percent-escaped dot-dot", "class.key-segment", "dynamic-config.rs/key", "",
		`dynamic-config.rs/key is "apps/billing/%2e%2e/payments/app": it has a %-escape, and the cluster class tenant-consul only serves plain keys under apps/billing/, shared/ (no "." or ".." segment, no empty segment, no %-escape)`,
		classPod("billing", "tenant-consul", "key", "apps/billing/%2e%2e/payments/app")},
	{"a dot segment", "class.key-segment", "dynamic-config.rs/key", "",
		`dynamic-config.rs/key is "apps/billing/./app": it has a "." segment, and the cluster class tenant-consul only serves plain keys under apps/billing/, shared/ (no "." or ".." segment, no empty segment, no %-escape)`,
		classPod("billing", "tenant-consul", "key", "apps/billing/./app")},
	{"a double slash", "class.key-segment", "dynamic-config.rs/key", "",
		`dynamic-config.rs/key is "apps/billing//app": it has an empty segment, and the cluster class tenant-consul only serves plain keys under apps/billing/, shared/ (no "." or ".." segment, no empty segment, no %-escape)`,
		classPod("billing", "tenant-consul", "key", "apps/billing//app")},
	{"a trailing slash", "class.key-segment", "dynamic-config.rs/key", "",
		`dynamic-config.rs/key is "apps/billing/": it has an empty segment, and the cluster class tenant-consul only serves plain keys under apps/billing/, shared/ (no "." or ".." segment, no empty segment, no %-escape)`,
		classPod("billing", "tenant-consul", "key", "apps/billing/")},
	{"namespace bill reading apps/billing through a prefix without a trailing slash", "class.key-prefix", "dynamic-config.rs/key", "",
		`dynamic-config.rs/key is "apps/billing/app": the cluster class bare-prefix only serves keys under apps/bill`,
		classPod("bill", "bare-prefix", "key", "apps/billing/app")},
	{"namespace bill reading apps/billing through a prefix with a trailing slash", "class.key-prefix", "dynamic-config.rs/key", "",
		`dynamic-config.rs/key is "apps/billing/app": the cluster class slash-prefix only serves keys under apps/bill/`,
		classPod("bill", "slash-prefix", "key", "apps/billing/app")},
	{"an absolute key under a relative prefix", "class.key-prefix", "dynamic-config.rs/key", "",
		`dynamic-config.rs/key is "/apps/billing/app": the cluster class tenant-consul only serves keys under apps/billing/, shared/`,
		classPod("billing", "tenant-consul", "key", "/apps/billing/app")},
	{"a pod naming the class's token Secret itself instead of the class", "class.key-prefix", "dynamic-config.rs/key", "",
		`dynamic-config.rs/key is "apps/payments/app": dynamic-config.rs/token-secret names consul-token/token, the token Secret of the cluster class tenant-consul, and with it only keys under apps/billing/, shared/ are served`,
		secretPod("token-secret", "consul-token/token", "key", "apps/payments/app")},
	{"a pod naming the class's token Secret as its password", "class.key-prefix", "dynamic-config.rs/key", "",
		`dynamic-config.rs/key is "apps/payments/app": dynamic-config.rs/password-secret names consul-token/token, the token Secret of the cluster class tenant-consul, and with it only keys under apps/billing/, shared/ are served`,
		secretPod("password-secret", "consul-token/token", "key", "apps/payments/app")},
	{"a named render naming the class's token Secret, beside a default render naming the class", "class.key-prefix", "dynamic-config.rs/key.cache", "cache",
		`dynamic-config.rs/key.cache is "apps/payments/cache": dynamic-config.rs/token-secret.cache names consul-token/token, the token Secret of the cluster class tenant-consul, and with it only keys under apps/billing/, shared/ are served`,
		classPod("billing", "tenant-consul", "source.cache", "consul", "endpoint.cache", "http://consul.infra.svc:8500",
			"token-secret.cache", "consul-token/token", "key.cache", "apps/payments/cache", "path.cache", "/config/cache.json")},
	{"a pod naming the class's token Secret with a dot-dot key", "class.key-segment", "dynamic-config.rs/key", "",
		`dynamic-config.rs/key is "apps/billing/../payments/app": it has a ".." segment, and dynamic-config.rs/token-secret names consul-token/token, the token Secret of the cluster class tenant-consul, and with it only plain keys under apps/billing/, shared/ are served (no "." or ".." segment, no empty segment, no %-escape)`,
		secretPod("token-secret", "consul-token/token", "key", "apps/billing/../payments/app")},
	{"a pod-chosen endpoint next to the class's credential", "class.credential-endpoint", "dynamic-config.rs/endpoint", "",
		`dynamic-config.rs/endpoint is "https://collector.example:8200", but dynamic-config.rs/token-secret would come from the class billing/team-vault (billing-vault-token/token), and a class's credential is used only with the class's endpoint (https://vault.billing.svc:8200): drop dynamic-config.rs/endpoint, or name a credential of your own with dynamic-config.rs/token-secret`,
		classPod("billing", "team-vault", "endpoint", "https://collector.example:8200")},
	{"a pod-chosen endpoint Secret next to the class's credential", "class.credential-endpoint", "dynamic-config.rs/endpoint-secret", "",
		`dynamic-config.rs/endpoint-secret is "vault-addr/url", but dynamic-config.rs/token-secret would come from the class billing/team-vault (billing-vault-token/token), and a class's credential is used only with the class's endpoint (https://vault.billing.svc:8200): drop dynamic-config.rs/endpoint-secret, or name a credential of your own with dynamic-config.rs/token-secret`,
		classPod("billing", "team-vault", "endpoint-secret", "vault-addr/url")},
	{"a pod-chosen endpoint next to a cluster class's credential, redacted", "class.credential-endpoint", "dynamic-config.rs/endpoint", "",
		`dynamic-config.rs/endpoint is "http://…@collector:8500", but dynamic-config.rs/token-secret would come from the class tenant-consul (consul-token/token), and a class's credential is used only with the class's endpoint (http://consul.infra.svc:8500): drop dynamic-config.rs/endpoint, or name a credential of your own with dynamic-config.rs/token-secret`,
		classPod("billing", "tenant-consul", "endpoint", "http://u:p@collector:8500")},
}

func TestTheClassKeyGuardRefuses(t *testing.T) {
	for _, tt := range keyGuardCases {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(installation.Empty(), guardSet, tt.pod)
			r := mustRefuse(t, d)
			if r.Check != tt.check || r.Key != tt.key || r.Render != tt.render || r.HTTPCode != 403 || r.Slug != SlugPolicy {
				t.Errorf("refusal %s key %q render %q %d %s; want %s key %q render %q 403 %s", r.Check, r.Key, r.Render, r.HTTPCode, r.Slug,
					tt.check, tt.key, tt.render, SlugPolicy)
			}
			if r.Message != tt.message {
				t.Errorf("message\n%s\nwant\n%s", r.Message, tt.message)
			}
			if d.ClassesRevision != guardSet.Revision {
				t.Errorf("classes revision %q; the class set judged the pod", d.ClassesRevision)
			}
		})
	}
}

func TestTheClassKeyGuardAdmits(t *testing.T) {
	tests := []struct {
		name string
		pod  *decision.Facts
	}{
		{"a plain key under the namespace's prefix", classPod("billing", "tenant-consul", "key", "apps/billing/app")},
		{"a key under the second prefix", classPod("billing", "tenant-consul", "key", "shared/public/app")},
		{"namespace bill under a prefix without a trailing slash", classPod("bill", "bare-prefix", "key", "apps/bill/app")},
		{"an absolute key under an absolute prefix", classPod("billing", "tenant-etcd", "key", "/apps/billing/app")},
		{"a pod naming the class's token Secret itself with a key under the prefix", secretPod("token-secret", "consul-token/token", "key", "apps/billing/app")},
		{"a pod naming another Secret is not judged by the guard", secretPod("token-secret", "my-token/token", "key", "apps/payments/app")},
		{"the class's own endpoint written out next to the class's credential", classPod("billing", "team-vault", "endpoint", "https://vault.billing.svc:8200")},
		{"a pod-chosen endpoint with the pod's own credential", classPod("billing", "team-vault", "endpoint", "https://canary:8200", "token-secret", "mine/token")},
		{"a pod-chosen endpoint with a class that has no credential", classPod("billing", "bare-prefix", "endpoint", "http://canary:8500")},
		{"a non-plain key under a class without keyPrefixes is the store's business", classPod("billing", "team-vault", "key", "secret/billing/../app")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustInject(t, Decide(installation.Empty(), guardSet, tt.pod))
		})
	}
}

func TestAPinnedTokenSecretOfAGuardedClassBringsTheClassGuardToEveryPod(t *testing.T) {
	inst := load(t, "storeDefaults:\n  consul: \"token-secret=consul-token/token!\"\n")
	tests := []struct {
		name, check string
		pod         *decision.Facts
	}{
		{"a pod naming another credential meets the pin", "pin.token-secret", secretPod("token-secret", "mine/token", "key", "apps/billing/app")},
		{"a silent pod gets the pinned credential and its guard", "class.key-prefix", secretPod("key", "apps/payments/app")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := mustRefuse(t, Decide(inst, guardSet, tt.pod)); r.Check != tt.check {
				t.Errorf("refusal %s (%s), want %s", r.Check, r.Message, tt.check)
			}
		})
	}
	mustInject(t, Decide(inst, guardSet, secretPod("key", "apps/billing/app")))
}

// A class with many long prefixes is refused with its prefixes cut to the
// message limit, the ones left out counted (issue 23 item 7).
func TestAKeyGuardRefusalCutsALongPrefixList(t *testing.T) {
	prefixes := make([]string, 64)
	for i := range prefixes {
		prefixes[i] = fmt.Sprintf("apps/{namespace}/%03d-%s/", i, strings.Repeat("x", 100))
	}
	set := classes.NewSet([]classes.Class{{Kind: classes.KindCluster, Name: "many", Source: "consul", Endpoint: "http://consul:8500", KeyPrefixes: prefixes}})
	r := mustRefuse(t, Decide(installation.Empty(), set, classPod("billing", "many", "key", "other/app")))
	if r.Check != "class.key-prefix" {
		t.Fatalf("refusal %s, want class.key-prefix: %s", r.Check, r.Message)
	}
	if n := len(r.Message); n > 600 || !strings.Contains(r.Message, " more)") {
		t.Errorf("message of %d bytes, want the prefix list cut with a count of the rest:\n%s", n, r.Message)
	}
}
