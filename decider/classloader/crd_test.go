package classloader

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
)

// A --classes-file object gets exactly the CRD's validation and the API
// server's naming rules, through the same classes.FromObject the watch uses; the
// refusal quotes no value beyond the message limit.
func TestAClassesFileObjectIsHeldToTheCRD(t *testing.T) {
	mib := strings.Repeat("p", 1<<20)
	many := make([]string, classes.MaxKeyPrefixes+1)
	for i := range many {
		many[i] = fmt.Sprintf("%q", fmt.Sprintf("p%d/", i))
	}
	cluster := func(name, spec string) string {
		return `{"apiVersion": "dynamic-config.rs/v1alpha1", "kind": "ClusterDynamicConfigClass", "metadata": {"name": "` + name +
			`"}, "spec": {"source": "consul", "endpoint": "http://c:8500"` + spec + `}}`
	}
	namespaced := func(ns, name string) string {
		return `{"apiVersion": "dynamic-config.rs/v1alpha1", "kind": "DynamicConfigClass", "metadata": {"namespace": "` + ns +
			`", "name": "` + name + `"}, "spec": {"source": "consul", "endpoint": "http://c:8500"}}`
	}
	tests := []struct {
		name string
		doc  string
		want string // "" = accepted
	}{
		{"a name with a slash", cluster("b/c", ""),
			`metadata.name is "b/c": a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters)`},
		{"a name that climbs a directory", cluster("../x", ""), `metadata.name is "../x": a DNS-1123 subdomain`},
		{"an over-long name", cluster(strings.Repeat("a", 254), ""), `metadata.name is "` + strings.Repeat("a", 200) + `"…: a DNS-1123 subdomain`},
		{"a namespace that is not a label", namespaced("billing.team", "vault"), `metadata.namespace is "billing.team": a DNS-1123 label`},
		{"an over-long namespace", namespaced(strings.Repeat("n", 64), "vault"), `metadata.namespace is "` + strings.Repeat("n", 64) + `": a DNS-1123 label`},
		{"a 1 MiB key prefix", cluster("big", `, "keyPrefixes": ["`+mib+`"]`), "spec.keyPrefixes[0] is 1048576 characters long: at most 512"},
		{"more key prefixes than maxItems", cluster("many", `, "keyPrefixes": [`+strings.Join(many, ",")+`]`), "spec.keyPrefixes has 65 items: at most 64"},
		{"a namespace listed twice", cluster("twice", `, "namespaces": ["billing", "web", "billing"]`),
			`spec.namespaces[2] is "billing", already spec.namespaces[0]: the list is a set`},
		{"names at the limits", cluster(strings.Repeat("a", 253), `, "keyPrefixes": ["`+strings.Repeat("k", 512)+`"]`), ""},
		{"a namespaced class at the limits", namespaced(strings.Repeat("n", 63), "a.b-c"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("classes.yaml", []byte(tt.doc))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %.600v\nwant it to contain %q", err, tt.want)
			}
			if len(err.Error()) > 2000 {
				t.Errorf("the refusal is %d bytes: a value is quoted beyond the message limit", len(err.Error()))
			}
		})
	}
}

func TestAClassesFileRefusalCutsAHugeValueItQuotes(t *testing.T) {
	mib := strings.Repeat("v", 1<<20)
	_, err := Parse("classes.yaml", []byte(`{"apiVersion": "`+mib+`", "kind": "`+mib+`", "metadata": {"name": "`+mib+`"}}`))
	if err == nil || len(err.Error()) > 2000 {
		t.Errorf("a refusal of %d bytes; want every quoted value cut to the message limit", len(fmt.Sprint(err)))
	}
}
