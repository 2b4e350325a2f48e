package facts

import (
	"testing"
)

// TestThePodsRestartPolicyTokenMountAndQoSAreRead: the facts of issue 20 —
// restartPolicy as written, automountServiceAccountToken when present, and
// whether the pod is Guaranteed (every container and init container with cpu
// and memory limits equal to its requests, a missing request defaulting to
// the limit).
func TestThePodsRestartPolicyTokenMountAndQoSAreRead(t *testing.T) {
	const guaranteedApp = `{"name":"app","resources":{"requests":{"cpu":"1","memory":"1Gi"},"limits":{"cpu":"1000m","memory":"1024Mi"}}}`
	cases := []struct {
		name       string
		spec       string
		policy     string
		automount  *bool
		guaranteed bool
	}{
		{"a bare pod has no policy, no automount and is not Guaranteed", `{"containers":[{"name":"app"}]}`, "", nil, false},
		{"restartPolicy Never is read as written", `{"restartPolicy":"Never","containers":[{"name":"app"}]}`, "Never", nil, false},
		{"automountServiceAccountToken false is read", `{"automountServiceAccountToken":false,"containers":[{"name":"app"}]}`, "", ptrTo(false), false},
		{"requests equal to limits in other units make the pod Guaranteed", `{"containers":[` + guaranteedApp + `]}`, "", nil, true},
		{"limits alone make the pod Guaranteed (requests default to them)",
			`{"containers":[{"name":"app","resources":{"limits":{"cpu":"500m","memory":"256Mi"}}}]}`, "", nil, true},
		{"a request below its limit makes the pod Burstable",
			`{"containers":[{"name":"app","resources":{"requests":{"cpu":"100m","memory":"256Mi"},"limits":{"cpu":"500m","memory":"256Mi"}}}]}`, "", nil, false},
		{"a container without a memory limit makes the pod Burstable",
			`{"containers":[` + guaranteedApp + `,{"name":"side","resources":{"limits":{"cpu":"1"}}}]}`, "", nil, false},
		{"an init container without limits makes the pod Burstable",
			`{"initContainers":[{"name":"init"}],"containers":[` + guaranteedApp + `]}`, "", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pod := `{"metadata":{"name":"p"},"spec":` + c.spec + `}`
			obj, err := Decode(podReq(pod), MutateKind(podReq(pod)), []byte(pod))
			if err != nil {
				t.Fatal(err)
			}
			f := obj.Facts
			if f.GetRestartPolicy() != c.policy {
				t.Errorf("restart policy = %q, want %q", f.GetRestartPolicy(), c.policy)
			}
			if (f.AutomountServiceAccountToken == nil) != (c.automount == nil) ||
				c.automount != nil && f.GetAutomountServiceAccountToken() != *c.automount {
				t.Errorf("automountServiceAccountToken = %v, want %v", f.AutomountServiceAccountToken, c.automount)
			}
			if f.GetQosGuaranteed() != c.guaranteed {
				t.Errorf("Guaranteed = %v, want %v", f.GetQosGuaranteed(), c.guaranteed)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
