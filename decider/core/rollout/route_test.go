package rollout

import (
	"fmt"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/internal/workload"
)

func key(cluster, namespace, name string) workload.Key {
	return workload.Key{Cluster: cluster, Namespace: namespace, Kind: "Deployment", Name: name}
}

func TestTheSliceIsTheNamedNamespacesAndTheKeysBelowThePercentInTheCanaryClusters(t *testing.T) {
	// Buckets of these keys (FNV-1a 64 of the key, mod 10 000), pinned by
	// internal/workload's tests: the slice reads them, never recomputes them.
	low, high := key("east", "shop", "web"), key("east", "shop", "api")
	if low.Bucket() >= high.Bucket() {
		low, high = high, low
	}
	between := (low.Bucket() + high.Bucket()) / 2
	if between == low.Bucket() {
		t.Skip("the two keys share a bucket")
	}
	tests := []struct {
		name  string
		slice Slice
		key   workload.Key
		want  bool
	}{
		{"a key below the percentage is in", Slice{Buckets: between}, low, true},
		{"a key at or above it is out", Slice{Buckets: between}, high, false},
		{"100 % holds every key", Slice{Buckets: 10_000}, high, true},
		{"0 % holds none", Slice{}, low, false},
		{"a named namespace is in whatever its bucket", Slice{Namespaces: []string{"shop"}}, high, true},
		{"another namespace is not", Slice{Namespaces: []string{"team-a"}}, high, false},
		{"a listed cluster canaries", Slice{Buckets: 10_000, Clusters: []string{"east", "west"}}, high, true},
		{"an unlisted cluster does not", Slice{Buckets: 10_000, Clusters: []string{"west"}}, high, false},
		{"every cluster canaries when none is listed (a follower's too: spec 10 §2)", Slice{Buckets: 10_000}, key("west", "shop", "api"), true},
		{"a decision for no named cluster canaries when none is listed", Slice{Buckets: 10_000}, key("", "shop", "api"), true},
		{"a decision for no named cluster is out when clusters are listed", Slice{Buckets: 10_000, Clusters: []string{"east"}}, key("", "shop", "api"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.slice.InSlice(tt.key); got != tt.want {
				t.Errorf("InSlice(%s) = %v", tt.key, got)
			}
		})
	}
}

func TestEveryPodOfOneWorkloadGetsOneRoute(t *testing.T) {
	r := &Rollout{Stage: StageCanary, Slice: Slice{Buckets: 5000}}
	canaried := 0
	for i := range 200 {
		k := key("east", "shop", fmt.Sprintf("web-%d", i))
		first := r.Route(k, false, Changed)
		for range 20 { // the pods of one workload share its key
			if got := r.Route(k, false, Changed); got != first {
				t.Fatalf("%s: routes %s and %s", k, first, got)
			}
		}
		if first == RouteCanary {
			canaried++
		}
	}
	if canaried < 70 || canaried > 130 {
		t.Errorf("%d of 200 workloads in a 50 %% slice", canaried)
	}
}

func TestTheRouteIsTheCanaryOnlyInTheSliceOfAnUnhaltedCanaryAndTheGuardFallsBackOnANewRefusal(t *testing.T) {
	in := key("east", "team-a", "web")
	out := key("east", "team-b", "web")
	slice := Slice{Namespaces: []string{"team-a"}}
	tests := []struct {
		name   string
		r      Rollout
		key    workload.Key
		halted bool
		result Result
		want   Route
	}{
		{"shadow answers with the active", Rollout{Stage: StageShadow, Slice: slice}, in, false, Changed, RouteShadow},
		{"a canary in the slice answers with the candidate", Rollout{Stage: StageCanary, Slice: slice}, in, false, Changed, RouteCanary},
		{"a canary outside the slice answers with the active", Rollout{Stage: StageCanary, Slice: slice}, out, false, Changed, RouteShadow},
		{"a halted canary is a shadow", Rollout{Stage: StageCanary, Slice: slice}, in, true, Changed, RouteShadow},
		{"a new refusal in the slice falls back", Rollout{Stage: StageCanary, Slice: slice}, in, false, NewlyRefused, RouteFallback},
		{"a new refusal outside the slice is a shadow", Rollout{Stage: StageCanary, Slice: slice}, out, false, NewlyRefused, RouteShadow},
		{"a new refusal with guard serve is served", Rollout{Stage: StageCanary, Slice: slice, Guard: GuardServe}, in, false, NewlyRefused, RouteCanary},
		{"a refusal the active made too is served", Rollout{Stage: StageCanary, Slice: slice}, in, false, Same, RouteCanary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Route(tt.key, tt.halted, tt.result); got != tt.want {
				t.Errorf("Route = %s, want %s", got, tt.want)
			}
		})
	}
}
