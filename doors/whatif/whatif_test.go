package whatif

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/dynamic-config-admission/dynamic-config/doors/installationsource"
	"github.com/dynamic-config-admission/dynamic-config/internal/testfile"
)

// examples is the repository's examples/ directory.
func examples(t *testing.T, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "examples", name)
}

// theExamples are the examples' three injected workloads.
var theExamples = []string{"/shop/StatefulSet/cache", "/team-a-dev/CronJob/report", "/shop/Deployment/web"}

func keys(r *Report) []string {
	var out []string
	for _, w := range r.Differing {
		out = append(out, w.Key)
	}
	return out
}

func TestDiff(t *testing.T) {
	active := installationsource.Source{Document: examples(t, "installation.yaml")}
	manifests := []string{examples(t, "manifests")}
	t.Run("an agent-image change on the examples lists each injected workload once, on the image path only", func(t *testing.T) {
		r, err := Run(t.Context(), Options{Active: active, Rollout: examples(t, "rollout.yaml"), Files: manifests})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keys(r), theExamples) || r.Workloads != 4 || r.Counts["changed"] != 3 || r.Counts["same"] != 1 {
			t.Fatalf("differing %v, %d workloads, counts %v", keys(r), r.Workloads, r.Counts)
		}
		for _, w := range r.Differing {
			if len(w.Paths) != 1 || !strings.HasSuffix(w.Paths[0], "[dynamic-config-agent].image") || w.Values != nil {
				t.Errorf("%s: paths %v, values %v", w.Key, w.Paths, w.Values)
			}
		}
	})
	t.Run("the same document as candidate: nothing differs", func(t *testing.T) {
		r, err := Run(t.Context(), Options{Active: active, Candidate: examples(t, "installation.yaml"), Files: manifests})
		if err != nil || r.Differs() || r.Counts["same"] != 4 {
			t.Fatalf("%+v, %v", r, err)
		}
	})
	t.Run("chart values and their own rollout.candidate compare as the documents do, with the old and new values on request", func(t *testing.T) {
		r, err := Run(t.Context(), Options{Active: installationsource.Source{Values: examples(t, "values.yaml")}, Files: manifests, ShowValues: true})
		if err != nil || !slices.Equal(keys(r), theExamples) {
			t.Fatalf("%v, %v", keys(r), err)
		}
		v := r.Differing[0].Values
		if len(v) != 1 || !strings.HasSuffix(v[0].Active, `:v0.3.0"`) || !strings.HasSuffix(v[0].Candidate, `:v0.4.0"`) {
			t.Errorf("values %+v", v)
		}
	})
	t.Run("a candidate that denies consul newly refuses the consul workloads and names the refusal", func(t *testing.T) {
		candidate := testfile.Write(t, "candidate.yaml", "sourceDeny: \"*: consul\"\nstoreDefaults:\n  vault: \"endpoint=https://vault.vault.svc:8200, auth=kubernetes\"\n")
		r, err := Run(t.Context(), Options{Active: active, Candidate: candidate, Files: manifests})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, w := range r.Differing {
			got[w.Key] = w.Result + " " + strings.Join(w.Paths, " ")
		}
		for _, key := range []string{"/team-a-dev/CronJob/report", "/shop/Deployment/web"} {
			if !strings.HasPrefix(got[key], "newly-refused refusals[") {
				t.Errorf("%s: %q", key, got[key])
			}
		}
	})
	t.Run("a workload met twice (two files, a Pod its ReplicaSet owns, stdin) is listed and counted once", func(t *testing.T) {
		pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-5d8f9c7b6-abcde","namespace":"shop","labels":{"pod-template-hash":"5d8f9c7b6"},
"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5d8f9c7b6","uid":"u","controller":true}],
"annotations":{"dynamic-config.rs/inject":"true","dynamic-config.rs/source":"consul","dynamic-config.rs/key":"k","dynamic-config.rs/path":"/config/web.json"}},
"spec":{"containers":[{"name":"web","image":"registry.example/shop/web:2.3.1"}]}}`
		r, err := Run(t.Context(), Options{Active: active, Rollout: examples(t, "rollout.yaml"),
			Files: []string{examples(t, "manifests/web.yaml"), examples(t, "manifests/web.yaml"), "-"}, Stdin: strings.NewReader(pod)})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keys(r), []string{"/shop/Deployment/web"}) || r.Workloads != 1 {
			t.Errorf("differing %v, %d workloads", keys(r), r.Workloads)
		}
	})
	t.Run("-o json is one JSON value with every differing workload", func(t *testing.T) {
		r, err := Run(t.Context(), Options{Active: active, Rollout: examples(t, "rollout.yaml"), Files: manifests})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := r.Write(&b, OutputJSON); err != nil {
			t.Fatal(err)
		}
		var v struct {
			Differing []Workload `json:"differing"`
		}
		dec := json.NewDecoder(&b)
		if err := dec.Decode(&v); err != nil || len(v.Differing) != 3 || dec.More() {
			t.Errorf("%v, %d differing", err, len(v.Differing))
		}
	})
	for _, c := range []struct {
		name string
		o    Options
		want string
	}{
		{"two candidates", Options{Active: active, Candidate: "a.yaml", Rollout: "r.yaml", Files: manifests}, "give one"},
		{"no candidate", Options{Active: active, Files: manifests}, "no candidate"},
		{"neither manifests nor the cluster", Options{Active: active, Candidate: "a.yaml"}, "one of them"},
		{"manifests and the cluster", Options{Active: active, Candidate: "a.yaml", Files: manifests, FromCluster: true}, "one of them"},
		{"-A without the cluster", Options{Active: active, Candidate: "a.yaml", Files: manifests, AllNamespaces: true}, "-A"},
		{"values whose rollout is empty", Options{Active: installationsource.Source{Values: testfile.Write(t, "v.yaml", "agent:\n  tag: v1\n")}, Files: manifests}, "rollout.candidate is empty"},
	} {
		t.Run("a usage error: "+c.name, func(t *testing.T) {
			if _, err := Run(t.Context(), c.o); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestTheClusterIsListedOnceByWorkload(t *testing.T) {
	template := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}}
	owner := func(kind, name string) []metav1.OwnerReference {
		yes := true
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: "u", Controller: &yes}}
	}
	meta := func(name string, owners []metav1.OwnerReference) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: "shop", OwnerReferences: owners}
	}
	c := fake.NewClientset(
		&appsv1.Deployment{ObjectMeta: meta("web", nil), Spec: appsv1.DeploymentSpec{Template: template}},
		&appsv1.ReplicaSet{ObjectMeta: meta("web-5d8f9c7b6", owner("Deployment", "web")), Spec: appsv1.ReplicaSetSpec{Template: template}},
		&appsv1.ReplicaSet{ObjectMeta: meta("lonely", nil), Spec: appsv1.ReplicaSetSpec{Template: template}},
		&batchv1.CronJob{ObjectMeta: meta("report", nil), Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template}}}},
		&batchv1.Job{ObjectMeta: meta("report-29000000", owner("CronJob", "report")), Spec: batchv1.JobSpec{Template: template}},
		&corev1.Pod{ObjectMeta: meta("web-5d8f9c7b6-abcde", owner("ReplicaSet", "web-5d8f9c7b6")), Spec: template.Spec},
		&corev1.Pod{ObjectMeta: meta("debug", nil), Spec: template.Spec},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: "other"}, Spec: appsv1.DeploymentSpec{Template: template}},
	)
	docs, err := listWorkloads(t.Context(), c, "shop")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		var head struct {
			Kind     string                `json:"kind"`
			Metadata struct{ Name string } `json:"metadata"`
		}
		if err := json.Unmarshal(d.Raw, &head); err != nil {
			t.Fatal(err)
		}
		got = append(got, head.Kind+"/"+head.Metadata.Name)
	}
	want := []string{"Deployment/web", "CronJob/report", "ReplicaSet/lonely", "Pod/debug"}
	if !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
}
