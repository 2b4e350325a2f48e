package workload

import (
	"strconv"
	"testing"
)

func TestOfNamesThePodsWorkload(t *testing.T) {
	hash := map[string]string{"app": "web", "pod-template-hash": "5d9c7b8f6"}
	tests := []struct {
		name string
		obj  Object
		want string
	}{
		{"a Deployment's pod is named for the Deployment",
			Object{Namespace: "shop", Kind: "Pod", GenerateName: "web-5d9c7b8f6-", Labels: hash, ControllerKind: "ReplicaSet", ControllerName: "web-5d9c7b8f6"},
			"east/shop/Deployment/web"},
		{"a Deployment whose name has dashes keeps them",
			Object{Namespace: "shop", Kind: "Pod", Labels: map[string]string{"pod-template-hash": "77f4c"}, ControllerKind: "ReplicaSet", ControllerName: "api-gateway-v2-77f4c"},
			"east/shop/Deployment/api-gateway-v2"},
		{"a ReplicaSet's pod without the hash label is named for the ReplicaSet",
			Object{Namespace: "shop", Kind: "Pod", ControllerKind: "ReplicaSet", ControllerName: "web-5d9c7b8f6"},
			"east/shop/ReplicaSet/web-5d9c7b8f6"},
		{"a ReplicaSet's pod whose hash is not the name's suffix is named for the ReplicaSet",
			Object{Namespace: "shop", Kind: "Pod", Labels: map[string]string{"pod-template-hash": "abc"}, ControllerKind: "ReplicaSet", ControllerName: "web"},
			"east/shop/ReplicaSet/web"},
		{"a ReplicaSet named only by the hash is named for the ReplicaSet",
			Object{Namespace: "shop", Kind: "Pod", Labels: map[string]string{"pod-template-hash": "abc"}, ControllerKind: "ReplicaSet", ControllerName: "-abc"},
			"east/shop/ReplicaSet/-abc"},
		{"a StatefulSet's pod is named for the StatefulSet",
			Object{Namespace: "db", Kind: "Pod", Name: "pg-0", Labels: map[string]string{"controller-revision-hash": "pg-7b9"}, ControllerKind: "StatefulSet", ControllerName: "pg"},
			"east/db/StatefulSet/pg"},
		{"a DaemonSet's pod is named for the DaemonSet",
			Object{Namespace: "kube-system", Kind: "Pod", GenerateName: "node-exporter-", ControllerKind: "DaemonSet", ControllerName: "node-exporter"},
			"east/kube-system/DaemonSet/node-exporter"},
		{"a CronJob's Job's pod is named for the CronJob",
			Object{Namespace: "ops", Kind: "Pod", GenerateName: "backup-29430720-", ControllerKind: "Job", ControllerName: "backup-29430720"},
			"east/ops/CronJob/backup"},
		{"a Job with a short number at the end is its own workload",
			Object{Namespace: "ops", Kind: "Pod", GenerateName: "migrate-2-", ControllerKind: "Job", ControllerName: "migrate-2"},
			"east/ops/Job/migrate-2"},
		{"a Job whose suffix is not all digits is its own workload",
			Object{Namespace: "ops", Kind: "Pod", ControllerKind: "Job", ControllerName: "backup-2943072x"},
			"east/ops/Job/backup-2943072x"},
		{"a Job of digits alone is its own workload",
			Object{Namespace: "ops", Kind: "Pod", ControllerKind: "Job", ControllerName: "29430720"},
			"east/ops/Job/29430720"},
		{"a custom controller's pod is named for the controller",
			Object{Namespace: "shop", Kind: "Pod", ControllerKind: "Rollout", ControllerName: "web"},
			"east/shop/Rollout/web"},
		{"a bare pod with a generateName is named for it",
			Object{Namespace: "dev", Kind: "Pod", Name: "", GenerateName: "debug-"},
			"east/dev/Pod/debug-"},
		{"a bare pod's generateName wins over its name",
			Object{Namespace: "dev", Kind: "Pod", Name: "debug-x7k2p", GenerateName: "debug-"},
			"east/dev/Pod/debug-"},
		{"a bare pod without a generateName is named for itself",
			Object{Namespace: "dev", Kind: "Pod", Name: "toolbox"},
			"east/dev/Pod/toolbox"},
		{"an object of no stated kind is read as a pod",
			Object{Namespace: "dev", Name: "toolbox"},
			"east/dev/Pod/toolbox"},
		{"a Deployment admitted itself is its own workload",
			Object{Namespace: "shop", Kind: "Deployment", Name: "web"},
			"east/shop/Deployment/web"},
		{"a Deployment's ReplicaSet admitted itself is named for the Deployment",
			Object{Namespace: "shop", Kind: "ReplicaSet", Name: "web-5d9c7b8f6", Labels: hash, ControllerKind: "Deployment", ControllerName: "web"},
			"east/shop/Deployment/web"},
		{"a CronJob's Job admitted itself is named for the CronJob",
			Object{Namespace: "ops", Kind: "Job", Name: "backup-29430720", ControllerKind: "CronJob", ControllerName: "backup"},
			"east/ops/CronJob/backup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of("east", tt.obj).String(); got != tt.want {
				t.Errorf("Of(%+v) = %q, want %q", tt.obj, got, tt.want)
			}
		})
	}
}

func TestEveryPodOfADeploymentSharesOneKeyAcrossItsReplicaSets(t *testing.T) {
	old := Object{Namespace: "shop", Kind: "Pod", GenerateName: "web-5d9c7b8f6-", Labels: map[string]string{"pod-template-hash": "5d9c7b8f6"}, ControllerKind: "ReplicaSet", ControllerName: "web-5d9c7b8f6"}
	next := Object{Namespace: "shop", Kind: "Pod", GenerateName: "web-6f8d9c4b7-", Labels: map[string]string{"pod-template-hash": "6f8d9c4b7"}, ControllerKind: "ReplicaSet", ControllerName: "web-6f8d9c4b7"}
	if a, b := Of("", old), Of("", next); a != b || a.Bucket() != b.Bucket() {
		t.Errorf("keys %v (bucket %d) and %v (bucket %d) differ", a, a.Bucket(), b, b.Bucket())
	}
}

func TestBucketIsFNV1a64OfTheKeyModuloTenThousand(t *testing.T) {
	tests := []struct {
		name string
		key  Key
		want int
	}{
		// FNV-1a 64 of "///" is 0xeed41417e7153e64 (the offset basis, then
		// three times: xor '/', multiply by the prime), mod 10 000 = 292.
		{"the empty key's bucket is the hash of its three slashes", Key{}, 292},
		// of "east/shop/Deployment/web": 0x11cc2bbfdd4e3bf8, mod 10 000 = 8 536.
		{"a key's bucket is the hash of its four parts", Key{Cluster: "east", Namespace: "shop", Kind: "Deployment", Name: "web"}, 8536},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.key.Bucket(); got != tt.want {
				t.Errorf("Bucket(%v) = %d, want %d", tt.key, got, tt.want)
			}
		})
	}
}

func TestBucketsSpreadWorkloadsEvenly(t *testing.T) {
	// 20 000 Deployments: each tenth of the key space gets 2 000 ± 10 %;
	// a hash that ignored part of the key would pile them up.
	var tenths [10]int
	for i := range 20_000 {
		k := Key{Cluster: "east", Namespace: "ns", Kind: "Deployment", Name: "web-" + strconv.Itoa(i)}
		tenths[k.Bucket()*10/Buckets]++
	}
	for i, n := range tenths {
		if n < 1_800 || n > 2_200 {
			t.Errorf("tenth %d holds %d of 20 000 keys, want 2 000 ± 10 %%: %v", i, n, tenths)
		}
	}
}
