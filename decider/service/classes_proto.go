package service

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// classesToProto lists the classes of set for GetInstallation (spec 08 §2):
// endpoints URL-redacted, token Secrets by name only.
func classesToProto(set *classes.Set) []*deciderv1.ClassInfo {
	all := set.All()
	out := make([]*deciderv1.ClassInfo, len(all))
	for i := range all {
		c := &all[i]
		ci := &deciderv1.ClassInfo{
			Kind:        c.Kind,
			Namespace:   c.Namespace,
			Name:        c.Name,
			Source:      c.Source,
			Endpoint:    redact.URL(c.Endpoint),
			Namespaces:  append([]string(nil), c.Namespaces...),
			KeyPrefixes: append([]string(nil), c.KeyPrefixes...),
		}
		if t := c.TokenSecret; t != nil {
			ci.TokenSecret = &deciderv1.ClassTokenSecret{Name: t.Name, Namespace: t.Namespace, Key: t.Key}
		}
		out[i] = ci
	}
	return out
}
