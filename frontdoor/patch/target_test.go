package patch

import (
	"reflect"
	"testing"
)

func TestTarget(t *testing.T) {
	tests := []struct {
		name string
		pod  string
		want *Pod
	}{
		{
			name: "every member the ops append to is seen, and a null args member is there for the command rewrite",
			pod: `{"metadata":{"annotations":{"dynamic-config.rs/inject":"true"}},"spec":{"volumes":[{"name":"data","emptyDir":{}}],` +
				`"imagePullSecrets":[{"name":"regcred"}],"initContainers":[{"name":"init"}],` +
				`"containers":[{"name":"app","command":["run"],"args":[],"volumeMounts":[{"name":"data","mountPath":"/data"}]},{"name":"side","command":[],"args":null}]}}`,
			want: &Pod{SpecPresent: true, AnnotationsPresent: true, VolumesPresent: true, ImagePullSecretsPresent: true,
				ContainersPresent: true, InitContainersPresent: true, Containers: []Container{
					{Name: "app", VolumeMountsPresent: true, CommandPresent: true, ArgsPresent: true},
					{Name: "side", CommandPresent: true, ArgsPresent: true},
				}},
		},
		{
			name: "null members are absent",
			pod:  `{"metadata":{"annotations":null},"spec":{"volumes":null,"imagePullSecrets":null,"initContainers":null,"containers":[{"name":"a","volumeMounts":null,"command":null}]}}`,
			want: &Pod{SpecPresent: true, ContainersPresent: true, Containers: []Container{{Name: "a"}}},
		},
		{
			name: "missing members are absent",
			pod:  `{"metadata":{},"spec":{}}`,
			want: &Pod{SpecPresent: true, Containers: []Container{}},
		},
		{
			name: "a null spec is no spec",
			pod:  `{"metadata":{"annotations":{}},"spec":null}`,
			want: &Pod{AnnotationsPresent: true},
		},
		{
			name: "miscased members are not the pod's",
			pod:  `{"Metadata":{"annotations":{}},"spec":{"Volumes":[{"name":"v"}],"containers":[{"name":"app","command":["run"],"Args":["x"],"VolumeMounts":[]}]}}`,
			want: &Pod{SpecPresent: true, ContainersPresent: true, Containers: []Container{{Name: "app", CommandPresent: true}}},
		},
		{
			name: "a later duplicate member wins, as in the typed decode",
			pod:  `{"metadata":{"annotations":{"a":"b"},"annotations":null},"spec":{"volumes":null,"volumes":[]}}`,
			want: &Pod{SpecPresent: true, VolumesPresent: true, Containers: []Container{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Target([]byte(tt.pod))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Target() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTargetOfJSONThatIsNoObjectFails(t *testing.T) {
	if _, err := Target([]byte(`[1`)); err == nil {
		t.Fatal("Target() of broken JSON succeeded")
	}
}
