package patch

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpatch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpointer"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// podFromShape builds a pod JSON document and its description from fuzz
// bits: which members are present, absent or null, and the containers.
func podFromShape(bits uint32, names []string) ([]byte, *Pod) {
	pod := &Pod{SpecPresent: true}
	member := func(shift uint) (present bool, value any, include bool) {
		switch (bits >> shift) & 3 {
		case 0:
			return false, nil, false // absent
		case 1:
			return false, nil, true // null
		default:
			return true, nil, true
		}
	}
	meta := map[string]any{"name": "p"}
	if present, _, include := member(0); include {
		pod.AnnotationsPresent = present
		if present {
			meta["annotations"] = map[string]any{"dynamic-config.rs/inject": "true"}
		} else {
			meta["annotations"] = nil
		}
	}
	spec := map[string]any{}
	arrays := []struct {
		name  string
		shift uint
		flag  *bool
	}{
		{"volumes", 2, &pod.VolumesPresent},
		{"imagePullSecrets", 4, &pod.ImagePullSecretsPresent},
		{"initContainers", 6, &pod.InitContainersPresent},
	}
	for _, a := range arrays {
		if present, _, include := member(a.shift); include {
			*a.flag = present
			if present {
				spec[a.name] = []any{map[string]any{"name": "existing"}}
			} else {
				spec[a.name] = nil
			}
		}
	}
	var containers []any
	for i, n := range names {
		c := map[string]any{"name": n}
		shift := uint(8 + 6*(i%4))
		pc := Container{Name: n}
		if present, _, include := member(shift); include {
			pc.VolumeMountsPresent = present
			if present {
				c["volumeMounts"] = []any{}
			} else {
				c["volumeMounts"] = nil
			}
		}
		if (bits>>(shift+2))&1 == 1 {
			c["command"] = []any{"run"}
			pc.CommandPresent = true
		}
		if present, _, include := member(shift + 3); include {
			pc.ArgsPresent = true // present, any value
			if present {
				c["args"] = []any{"a"}
			} else {
				c["args"] = nil
			}
		}
		containers = append(containers, c)
		pod.Containers = append(pod.Containers, pc)
	}
	if containers != nil || bits>>31 == 1 {
		spec["containers"] = containers
		pod.ContainersPresent = containers != nil
	}
	doc, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
	return doc, pod
}

func FuzzBuild(f *testing.F) {
	for _, plan := range []*deciderv1.MutationPlan{example1(), example2()} {
		b, err := proto.Marshal(plan)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint32(0), "app", "side")
		f.Add(b, uint32(0xffffffff), "app", "")
		f.Add(b, uint32(0x5555), "app", "app")
	}
	f.Fuzz(func(t *testing.T, planBytes []byte, bits uint32, name0, name1 string) {
		plan := &deciderv1.MutationPlan{}
		if err := proto.Unmarshal(planBytes, plan); err != nil {
			return
		}
		var names []string
		for _, n := range []string{name0, name1} {
			if n != "" {
				names = append(names, n)
			}
		}
		doc, pod := podFromShape(bits, names)
		p, err := Build(plan, pod)
		// The bytes (or the refusal) are the reference builder's: map values
		// through encoding/json (reference_test.go).
		want, werr := referenceBuild(plan, pod)
		switch {
		case (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()):
			t.Fatalf("Build() error %v, the reference's %v", err, werr)
		case err == nil && string(p.JSON) != string(want):
			t.Fatalf("Build() wrote\n%s\nthe reference\n%s", p.JSON, want)
		}
		if err != nil {
			var unfitErr *UnfitError
			if !errors.As(err, &unfitErr) {
				t.Fatalf("Build() error %v is not an UnfitError", err)
			}
			return
		}
		for _, op := range p.Ops {
			if _, err := jsonpointer.Parse(op.Path); err != nil || op.Path == "" {
				t.Fatalf("op path %q is not a valid JSON Pointer: %v", op.Path, err)
			}
		}
		raw, err := base64.StdEncoding.DecodeString(p.Base64())
		if err != nil || string(raw) != string(p.JSON) {
			t.Fatalf("base64 does not round-trip: %v", err)
		}
		if _, err := jsonpatch.Apply(doc, p.JSON); err != nil {
			t.Fatalf("applying the patch failed: %v\npod: %s\npatch: %s", err, doc, p.JSON)
		}
	})
}
