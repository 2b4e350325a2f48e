package facts

import deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"

// EnvUnchanged reports whether object and oldObject carry the same env in
// every container of containers, initContainers and ephemeralContainers,
// container by container (spec 07 §3.2 step 6, 01 §8.2 V3). The comparison
// is over what the env policy can see: each entry's name, its literal value
// and whether it uses valueFrom.
func EnvUnchanged(object, oldObject *Object) bool {
	n, o := object.Facts, oldObject.Facts
	return sameEnv(n.GetContainers(), o.GetContainers()) &&
		sameEnv(n.GetInitContainers(), o.GetInitContainers()) &&
		sameEnv(n.GetEphemeralContainers(), o.GetEphemeralContainers())
}

func sameEnv(a, b []*deciderv1.Container) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		ea, eb := a[i].GetEnv(), b[i].GetEnv()
		if len(ea) != len(eb) {
			return false
		}
		for j := range ea {
			x, y := ea[j], eb[j]
			if x.GetName() != y.GetName() || x.GetValueFrom() != y.GetValueFrom() ||
				x.Value == nil != (y.Value == nil) || x.GetValue() != y.GetValue() {
				return false
			}
		}
	}
	return true
}
