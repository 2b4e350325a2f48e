package facts

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	leanv1 "github.com/dynamic-config-admission/dynamic-config/frontdoor/internal/leanapi/core/v1"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
	"github.com/dynamic-config-admission/dynamic-config/internal/podcaps"
)

// podOf is a pod whose spec is the given members, with a prefixed
// annotation (so that /mutate decodes it).
func podOf(spec string) string {
	return `{"metadata":{"annotations":{"dynamic-config.rs/inject":"true"}},"spec":{` + spec + `}}`
}

// entries is n copies of entry, comma-separated.
func entries(entry string, n int) string {
	return strings.TrimSuffix(strings.Repeat(entry+",", n), ",")
}

// allocated is what decode allocates, in bytes.
func allocated(decode func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	decode()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestAPodAboveTheCapsIsRefusedBeforeAnythingOfItIsDecoded(t *testing.T) {
	cases := []struct {
		name, object string
		want         string
	}{
		{"50 000 containers (the 1.49 MB pod of issue 38)", podOf(`"containers":[` + entries(`{"name":"c","image":"i"}`, 50000) + `]`),
			"spec.containers holds 50000 entries, above the cap of 41391"},
		{"a review's worth of empty containers", podOf(`"containers":[` + entries(`{}`, 170000) + `]`),
			"spec.containers holds 170000 entries"},
		{"env entries spread over containers", podOf(`"containers":[` + entries(`{"env":[`+entries(`{}`, 30000)+`]}`, 8) + `]`),
			"env holds 240000 entries, above the cap of 224694"},
		{"init containers and volumes that do not fit together", podOf(`"initContainers":[` + entries(`{}`, 30000) + `],"volumes":[` + entries(`{}`, 40000) + `]`),
			"spec.initContainers holds 30000 entries (cap 40329 alone)"},
		{"labels", `{"metadata":{"labels":{` + entries(`"k":""`, 230000) + `}}}`, "metadata.labels holds 230000 entries"},
		{"resource limits", podOf(`"containers":[{"resources":{"limits":{` + entries(`"cpu":"1"`, 230000) + `}}}]`), "resources holds 230000 entries"},
	}
	for _, c := range cases {
		t.Run(c.name+" is refused naming the field and its cap, allocating nothing of it", func(t *testing.T) {
			var err error
			req, raw := podReq(c.object), []byte(c.object)
			bytes := allocated(func() { _, err = Decode(req, kindPod, raw) })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Decode: %v; want an error naming %q", err, c.want)
			}
			if bytes > 64<<10 {
				t.Errorf("the refusal allocated %d KiB for a %d KiB object", bytes>>10, len(c.object)>>10)
			}
		})
	}
	t.Run("a workload's template is counted as the pod it makes", func(t *testing.T) {
		object := `{"spec":{"template":{"spec":{"containers":[` + entries(`{}`, 50000) + `]}}}}`
		_, err := Decode(podReq(object), ValidateKind(deploymentReq()), []byte(object))
		if err == nil || !strings.Contains(err.Error(), "spec.containers holds 50000 entries") {
			t.Errorf("Decode: %v", err)
		}
	})
	// The pod's one annotation takes 7 of the stored bytes.
	t.Run("a pod at the caps decodes, one entry more does not", func(t *testing.T) {
		n := podcaps.Containers.Cap() - 1
		object := podOf(`"containers":[` + entries(`{"name":"c"}`, n) + `]`)
		obj, err := Decode(podReq(object), kindPod, []byte(object))
		if err != nil || len(obj.Facts.GetContainers()) != n {
			t.Errorf("Decode: %v", err)
		}
		object = podOf(`"containers":[` + entries(`{"name":"c"}`, n+1) + `]`)
		if _, err := Decode(podReq(object), kindPod, []byte(object)); err == nil {
			t.Error("one container more decoded")
		}
	})
}

func deploymentReq() *review.Request {
	r := podReq("{}")
	r.Kind.Group, r.Kind.Kind = "apps", "Deployment"
	return r
}

// referenceCounts counts what the lean decode built of a Pod: the counter
// must never count less.
func referenceCounts(pod *leanv1.Pod) podcaps.Counts {
	var c podcaps.Counts
	c[podcaps.Labels] = len(pod.Labels)
	c[podcaps.Annotations] = len(pod.Annotations)
	c[podcaps.Volumes] = len(pod.Spec.Volumes)
	c[podcaps.ImagePullSecrets] = len(pod.Spec.ImagePullSecrets)
	c[podcaps.Containers] = len(pod.Spec.Containers)
	c[podcaps.InitContainers] = len(pod.Spec.InitContainers)
	c[podcaps.EphemeralContainers] = len(pod.Spec.EphemeralContainers)
	for _, list := range [][]leanv1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, ct := range list {
			c[podcaps.Env] += len(ct.Env)
			c[podcaps.VolumeMounts] += len(ct.VolumeMounts)
			c[podcaps.Command] += len(ct.Command)
			c[podcaps.Args] += len(ct.Args)
			c[podcaps.Resources] += len(ct.Resources.Limits) + len(ct.Resources.Requests) + len(ct.Resources.Claims)
		}
	}
	for _, e := range pod.Spec.EphemeralContainers {
		c[podcaps.Env] += len(e.Env)
	}
	return c
}

// lenientPrefixed is HasPrefixedAnnotation as it was before issue 38: the
// annotations decoded into a map.
func lenientPrefixed(raw []byte) bool {
	var lenient struct {
		Metadata struct {
			Annotations map[string]json.RawMessage `json:"annotations"`
		} `json:"metadata"`
	}
	if err := unmarshal(raw, &lenient); err != nil {
		return false
	}
	for k := range lenient.Metadata.Annotations {
		if annotation.Prefixed(k) {
			return true
		}
	}
	return false
}

func TestTheCountReadsWhatTheDecodeReads(t *testing.T) {
	cases := []struct{ name, object string }{
		{"a rich pod", richPod},
		{"escaped member names", `{"metadata":{"\u0061nnotations":{"dynamic-config.rs\/inject":"1"},"labels":{"a":"b","c":"d"}},"sp\u0065c":{"containers":[{"env":[{},{}]}]}}`},
		{"miscased members are not counted", `{"Metadata":{"annotations":{"dynamic-config.rs/x":"1"}},"spec":{"Containers":[{}],"containers":[{"Env":[{}]}]}}`},
		{"nulls everywhere", `{"metadata":null,"spec":{"containers":null,"volumes":[null,{}],"initContainers":[{"env":null,"args":null}]}}`},
		{"deep values beside the counted lists", `{"spec":{"containers":[{"livenessProbe":{"exec":{"command":[["x",{"y":[1,2,{}]}]]}},"env":[{"valueFrom":{"a":[{}]}}]}]}}`},
		{"strings that look like structure", `{"metadata":{"annotations":{"x":"{\"spec\":[1,2]}","dynamic-config.rs/q":"]}"}},"spec":{"containers":[{"name":"}]\"[{"}]}}`},
		{"numbers and literals", `{"spec":{"terminationGracePeriodSeconds":30,"automountServiceAccountToken":false,"containers":[{"securityContext":{"runAsUser":-1.5e3}}]}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sameCounts(t, []byte(c.object))
		})
	}
}

// sameCounts checks, for one object, that the counter never counts less
// than the decode built and that the prefix scan answers as the lenient
// decode.
func sameCounts(t *testing.T, raw []byte) {
	t.Helper()
	if got, want := hasPrefixedKey(raw), lenientPrefixed(raw); got != want {
		t.Errorf("the prefix scan says %v, the lenient decode %v: %s", got, want, raw)
	}
	var pod leanv1.Pod
	if err := unmarshal(raw, &pod); err != nil {
		return
	}
	got, want := countLists(kindPod, raw), referenceCounts(&pod)
	for _, f := range podcaps.Fields() {
		if got[f] < want[f] {
			t.Errorf("%s: counted %d, the decode built %d: %s", f.Name(), got[f], want[f], raw)
		}
	}
}

// FuzzTheCountNeverCountsLessThanTheDecodeBuilds: for any object, the
// counter that refuses a pod above the caps before it is decoded counts at
// least what the decode would build, and the prefix scan answers as the
// lenient decode of the annotations did.
func FuzzTheCountNeverCountsLessThanTheDecodeBuilds(f *testing.F) {
	f.Add([]byte(richPod))
	f.Add([]byte(`{"metadata":{"\u0061nnotations":{"dynamic-config.rs\/inject":"1"}},"spec":{"containers":[{"env":[{},{}],"resources":{"limits":{"cpu":"1"},"claims":[{}]}}]}}`))
	f.Add([]byte(`{"metadata":{"annotations":{"dynamic-config.rs/x":1}},"spec":{"ephemeralContainers":[{"env":[{}]}],"imagePullSecrets":[{}]}}`))
	f.Add([]byte(`{"metadata":{"annotations":"x"}}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"spec":{"containers":[{"command":["a","b"],"args":[],"volumeMounts":[{}]}]}} x`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		sameCounts(t, raw)
	})
}
