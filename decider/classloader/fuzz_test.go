package classloader

import (
	"errors"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/internal/dnsname"
)

// FuzzParse: any --classes-file bytes either give a set whose every class
// holds to the CRD, or a *classes.FileError with bounded problems; never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"apiVersion": "dynamic-config.rs/v1alpha1", "kind": "ClusterDynamicConfigClass", "metadata": {"name": "c"}, "spec": {"source": "consul", "endpoint": "http://c", "namespaces": ["a"], "keyPrefixes": ["apps/{namespace}/"]}}`))
	f.Add([]byte("apiVersion: dynamic-config.rs/v1alpha1\nkind: DynamicConfigClass\nmetadata: {namespace: billing, name: vault}\nspec: {source: vault, endpoint: https://v, tokenSecret: t}\n---\nkind: List\nitems: [1]\n"))
	f.Add([]byte("kind: List\nitems:\n- kind: DynamicConfigClass\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := Parse("classes.yaml", data)
		if err != nil {
			var fe *classes.FileError
			if set != nil || !errors.As(err, &fe) || len(fe.Problems) == 0 {
				t.Fatalf("set %v, err %v: want no set and a *classes.FileError", set, err)
			}
			for _, p := range fe.Problems {
				if len(p) > 4096 {
					t.Fatalf("a problem of %d bytes: quoted values are cut to the message limit", len(p))
				}
			}
			return
		}
		for _, c := range set.All() {
			if !dnsname.IsSubdomain(c.Name) || (c.Namespace != "" && !dnsname.IsLabel(c.Namespace)) ||
				len(c.KeyPrefixes) > classes.MaxKeyPrefixes || c.Source == "" || c.Endpoint == "" {
				t.Fatalf("class %+v accepted", c)
			}
		}
	})
}
