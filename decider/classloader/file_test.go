package classloader

import (
	"errors"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
)

const validStream = `apiVersion: dynamic-config.rs/v1alpha1
kind: DynamicConfigClass
metadata: {name: team-vault, namespace: billing}
spec: {source: vault, endpoint: "https://vault.billing.svc:8200", tokenSecret: billing-vault-token}
---
apiVersion: dynamic-config.rs/v1alpha1
kind: ClusterDynamicConfigClass
metadata: {name: team-vault}
spec: {source: consul, endpoint: "http://consul:8500"}
---
apiVersion: dynamic-config.rs/v1alpha1
kind: ClusterDynamicConfigClass
metadata: {name: shared-redis}
spec:
  source: redis
  endpoint: redis://redis:6379
  namespaces: [billing]
  tokenSecret: {name: redis-token, namespace: billing}
  keyPrefixes: ["apps/{namespace}/"]
`

func mustParse(t *testing.T, text string) *classes.Set {
	t.Helper()
	set, err := Parse("classes.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestAValidStreamBecomesASetWithItsValuesNormalised(t *testing.T) {
	set := mustParse(t, validStream)
	if set.Count(classes.KindNamespaced) != 1 || set.Count(classes.KindCluster) != 2 || len(set.All()) != 3 {
		t.Fatalf("counts %d/%d, all %d", set.Count(classes.KindNamespaced), set.Count(classes.KindCluster), len(set.All()))
	}
	c := set.Lookup("billing", "team-vault")
	if c.Ref() != "DynamicConfigClass billing/team-vault" || c.TokenSecretRef() != "billing-vault-token/token" {
		t.Errorf("namespaced class %+v: ref %q, token %q", c, c.Ref(), c.TokenSecretRef())
	}
	r := set.Lookup("payments", "shared-redis")
	if r.Ref() != "ClusterDynamicConfigClass shared-redis" || r.TokenSecretRef() != "redis-token/token" {
		t.Errorf("cluster class ref %q, token %q (key defaults to token)", r.Ref(), r.TokenSecretRef())
	}
	if r.Admits("payments") || !r.Admits("billing") {
		t.Errorf("namespaces [billing] admits payments=%v billing=%v", r.Admits("payments"), r.Admits("billing"))
	}
	if got := r.Prefixes("billing"); len(got) != 1 || got[0] != "apps/billing/" {
		t.Errorf("prefixes %q", got)
	}
}

func TestANamespacedClassShadowsTheClusterClassOfTheSameNameInItsNamespaceOnly(t *testing.T) {
	set := mustParse(t, validStream)
	if got := set.Lookup("billing", "team-vault").Kind; got != classes.KindNamespaced {
		t.Errorf("billing sees %s", got)
	}
	if got := set.Lookup("payments", "team-vault").Kind; got != classes.KindCluster {
		t.Errorf("payments sees %s", got)
	}
	if set.Lookup("payments", "nothing") != nil {
		t.Error("a missing name was found")
	}
}

func TestTheRevisionDependsOnContentNotOrder(t *testing.T) {
	docs := strings.Split(validStream, "---\n")
	reordered := docs[2] + "---\n" + docs[0] + "---\n" + docs[1]
	a, b := mustParse(t, validStream), mustParse(t, reordered)
	if a.Revision != b.Revision || !strings.HasPrefix(a.Revision, "sha256:") {
		t.Errorf("revisions %s and %s", a.Revision, b.Revision)
	}
	edited := mustParse(t, strings.Replace(validStream, "http://consul:8500", "http://consul:8501", 1))
	if edited.Revision == a.Revision {
		t.Error("an edited endpoint kept the revision")
	}
	if classes.NewSet(nil).Revision == a.Revision {
		t.Error("the empty set has the same revision")
	}
}

func TestAnInvalidFileListsEveryProblemWithFileDocumentKindAndName(t *testing.T) {
	text := `apiVersion: dynamic-config.rs/v1alpha1
kind: DynamicConfigClass
metadata: {name: a, namespace: billing}
spec: {source: mysql, endpoint: "", tokenSecret: {name: x}}
---
apiVersion: dynamic-config.rs/v1alpha1
kind: ClusterDynamicConfigClass
metadata: {name: b}
spec: {endpoint: "http://x", namespaces: [""], keyPrefixes: ["apps/{name}/"], tokenSecret: {namespace: billing}, extra: 1}
---
apiVersion: dynamic-config.rs/v1alpha1
kind: DynamicConfigClass
metadata: {name: c}
spec: {source: consul, endpoint: "http://x"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: d}
`
	_, err := Parse("classes.yaml", []byte(text))
	var fe *classes.FileError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v", err)
	}
	want := []string{
		`classes.yaml: document 1 (DynamicConfigClass billing/a): spec.source is "mysql": one of consul, vault, config-server, firestore, git, redis, etcd, nats, s3`,
		`classes.yaml: document 1 (DynamicConfigClass billing/a): spec.endpoint is empty`,
		`classes.yaml: document 1 (DynamicConfigClass billing/a): spec.tokenSecret is not a string: the name of a Secret in namespace billing (key token)`,
		`classes.yaml: document 2 (ClusterDynamicConfigClass b): spec.extra is not a field of a ClusterDynamicConfigClass: source, endpoint, tokenSecret, namespaces, keyPrefixes`,
		`classes.yaml: document 2 (ClusterDynamicConfigClass b): spec.source is required`,
		`classes.yaml: document 2 (ClusterDynamicConfigClass b): spec.tokenSecret.name is required`,
		`classes.yaml: document 2 (ClusterDynamicConfigClass b): spec.namespaces[0] is empty`,
		`classes.yaml: document 2 (ClusterDynamicConfigClass b): spec.keyPrefixes[0] is "apps/{name}/": the only placeholder a key prefix may hold is {namespace}`,
		`classes.yaml: document 3 (DynamicConfigClass c): metadata.namespace is required: a DynamicConfigClass lives in a namespace`,
		`classes.yaml: document 4 (ConfigMap d): apiVersion is "v1": want dynamic-config.rs/v1alpha1`,
		`classes.yaml: document 4 (ConfigMap d): kind is "ConfigMap": want DynamicConfigClass or ClusterDynamicConfigClass`,
	}
	if got := strings.Join(fe.Problems, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

func TestTheSameClassTwiceInAFileIsAProblem(t *testing.T) {
	doc := strings.Split(validStream, "---\n")[0]
	_, err := Parse("f.yaml", []byte(doc+"---\n"+doc))
	if err == nil || err.Error() != "f.yaml: document 2 (DynamicConfigClass billing/team-vault): the same class as document 1" {
		t.Fatalf("got %v", err)
	}
}

func TestAListOfClassesCountsItsItemsAsDocuments(t *testing.T) {
	set := mustParse(t, `{"apiVersion":"v1","kind":"List","items":[`+
		`{"apiVersion":"dynamic-config.rs/v1alpha1","kind":"ClusterDynamicConfigClass","metadata":{"name":"a"},"spec":{"source":"nats","endpoint":"nats://n:4222"}}]}`)
	if set.Lookup("x", "a") == nil {
		t.Fatal("the List item was not read")
	}
}
