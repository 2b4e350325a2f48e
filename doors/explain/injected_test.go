package explain

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

const askingPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"app","namespace":"shop","annotations":{
"dynamic-config.rs/inject":"true","dynamic-config.rs/source":"consul","dynamic-config.rs/endpoint":"http://consul:8500",
"dynamic-config.rs/key":"app/config.json","dynamic-config.rs/path":"/config/app.json"}},
"spec":{"containers":[{"name":"app","image":"busybox"}]}}`

// withImage is an installation whose agent image is image.
func withImage(t *testing.T, image string) *installation.Installation {
	t.Helper()
	inst, err := installation.Build(installation.Document{}, []string{"DYNAMIC_CONFIG_AGENT_IMAGE=" + image}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// explainWith explains pod under inst.
func explainWith(t *testing.T, inst *installation.Installation, pod []byte) *Explanation {
	t.Helper()
	e, err := engine.New(inst, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	x, err := Document(context.Background(), e, &manifest.Document{File: "pod.json", Index: 1, JSON: true, Raw: pod}, "")
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// injectedUnder is askingPod injected by inst, as the API server stores it.
func injectedUnder(t *testing.T, inst *installation.Installation) []byte {
	t.Helper()
	e, err := engine.New(inst, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	a, err := e.AdmitPod([]byte(askingPod), "shop", "app")
	if err != nil || a.Refused() {
		t.Fatalf("inject: %v %+v", err, a)
	}
	return a.Mutated
}

func TestExplainOnARunningPodNamesItsRevisionAndWhetherTheActiveOneDiffers(t *testing.T) {
	r1, r2 := withImage(t, "registry.local/agent:v1"), withImage(t, "registry.local/agent:v2")
	running := injectedUnder(t, r1)
	unstamped := bytes.Replace(running, []byte(`"`+annotation.RevisionStampKey+`"`), []byte(`"x-old/revision"`), 1)
	tests := []struct {
		name   string
		active *installation.Installation
		pod    []byte
		want   Injected
		text   string
	}{
		{"a pod injected by the active installation is on it", r1, running,
			Injected{Revision: annotation.Stamp(r1.Revision), Active: annotation.Stamp(r1.Revision)}, "— the same"},
		{"a pod injected by another installation says the active one differs", r2, running,
			Injected{Revision: annotation.Stamp(r1.Revision), Active: annotation.Stamp(r2.Revision), Differs: true}, "— another revision"},
		{"a pod injected before the stamp existed says it carries none", r1, unstamped,
			Injected{Active: annotation.Stamp(r1.Revision), Differs: true}, "injected under revision none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := explainWith(t, tt.active, tt.pod)
			if x.Injected == nil || *x.Injected != tt.want {
				t.Fatalf("injected %+v, want %+v", x.Injected, tt.want)
			}
			var text, js bytes.Buffer
			WriteText(&text, x, "installation")
			if !strings.Contains(text.String(), tt.text) || !strings.Contains(text.String(), "the active installation's is "+tt.want.Active) {
				t.Errorf("text lacks %q:\n%s", tt.text, text.String())
			}
			if err := WriteJSON(&js, []*Explanation{x}); err != nil || !strings.Contains(js.String(), `"injected": {`) {
				t.Errorf("json (%v) lacks the injected object:\n%s", err, js.String())
			}
		})
	}
	if x := explainWith(t, r1, []byte(askingPod)); x.Injected != nil {
		t.Errorf("a pod not yet injected is explained as running: %+v", x.Injected)
	}
}
