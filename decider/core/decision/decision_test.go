package decision

import "testing"

func TestFactsNameTheirWorkload(t *testing.T) {
	tests := []struct {
		name  string
		facts Facts
		want  string
	}{
		{"a Deployment's pod names the Deployment",
			Facts{Namespace: "shop", ResourceKind: KindPod, GenerateName: "web-5d9c7b8f6-", Labels: map[string]string{"pod-template-hash": "5d9c7b8f6"},
				ControllerKind: "ReplicaSet", ControllerName: "web-5d9c7b8f6"},
			"east/shop/Deployment/web"},
		{"a bare pod names itself by its generateName",
			Facts{Namespace: "dev", ResourceKind: KindPod, Name: "debug-x7k2p", GenerateName: "debug-"},
			"east/dev/Pod/debug-"},
		{"a StatefulSet admitted on the validating path names itself",
			Facts{Namespace: "db", ResourceKind: KindStatefulSet, Name: "pg"},
			"east/db/StatefulSet/pg"},
		{"a CronJob admitted on the validating path names itself",
			Facts{Namespace: "ops", ResourceKind: KindCronJob, Name: "backup"},
			"east/ops/CronJob/backup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.facts.Workload("east").String(); got != tt.want {
				t.Errorf("Workload = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEveryResourceKindHasItsKubernetesName(t *testing.T) {
	for k := KindPod; k <= KindCronJob; k++ {
		if k.String() == "" {
			t.Errorf("ResourceKind %d has no name", k)
		}
	}
	if KindUnspecified.String() != "" || ResourceKind(99).String() != "" || ResourceKind(-1).String() != "" {
		t.Error("an unspecified or unknown kind has a name")
	}
}
