package callers

import (
	"errors"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/internal/dnsname"
)

// FuzzParse: any bytes either parse into a set within the limits, every
// name a DNS label and every cluster a DNS subdomain, or are refused with
// problems of bounded length; never a panic, never both.
func FuzzParse(f *testing.F) {
	f.Add([]byte(fileOf("east")))
	f.Add([]byte("callers:\n  - name: a\n    clusters: [x, x, y.z]\n    credentials: [{dnsSAN: a.example}, {uriSAN: \"spiffe://a/b\"}]\n"))
	f.Add([]byte("callers: [\n"))
	f.Add([]byte("callers:\n  - name: &a x\n    clusters: *a\n"))
	f.Add(bigFile(3, 3))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opts := range []Options{{}, {ClientCertificates: true}} {
			set, err := Parse(data, "callers.yaml", opts)
			if err != nil {
				var problems *Problems
				if set != nil || !errors.As(err, &problems) || len(problems.List) == 0 {
					t.Fatalf("set %v, err %v: want no set and a *Problems", set, err)
				}
				for _, p := range problems.List {
					if len(p) > 4096 {
						t.Fatalf("a problem of %d bytes: values are cut to the message limit", len(p))
					}
				}
				continue
			}
			if len(set.callers) == 0 || len(set.callers) > MaxCallers {
				t.Fatalf("%d callers accepted", len(set.callers))
			}
			for _, c := range set.callers {
				if !dnsname.IsLabel(c.Name) || len(c.Clusters) == 0 || len(c.Clusters) > MaxClustersPerCaller {
					t.Fatalf("caller %q with %d clusters accepted", c.Name, len(c.Clusters))
				}
				for _, cl := range c.Clusters {
					if !dnsname.IsSubdomain(cl) || !c.MaySpeakFor(cl) {
						t.Fatalf("cluster %q of %q", cl, c.Name)
					}
				}
			}
		}
	})
}
