package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

func TestARemoteEngineAnswersWithTheDeciderItReaches(t *testing.T) {
	inst, err := installation.Build(installation.Document{}, []string{"DYNAMIC_CONFIG_AGENT_IMAGE=registry.local/agent:remote"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	local, err := New(inst, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	remote := Remote(local.conn)
	if remote.Installation() != nil {
		t.Error("a remote engine holds no installation")
	}
	rev, err := remote.Revision(context.Background())
	if err != nil || rev != inst.Revision {
		t.Errorf("Revision() = %q, %v; want the decider's %q", rev, err, inst.Revision)
	}
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"app","annotations":{"dynamic-config.rs/inject":"true","dynamic-config.rs/source":"consul",` +
		`"dynamic-config.rs/endpoint":"http://consul:8500","dynamic-config.rs/key":"k","dynamic-config.rs/path":"/config/app.json"}},"spec":{"containers":[{"name":"app","image":"busybox"}]}}`
	a, err := remote.AdmitPod([]byte(pod), "shop", "app")
	if err != nil || a.Refused() || !strings.Contains(string(a.Mutated), "registry.local/agent:remote") {
		t.Fatalf("AdmitPod through the remote decider: %v %+v", err, a)
	}
	if err := remote.Close(); err != nil {
		t.Errorf("Close of a remote engine: %v", err)
	}
	if a, err := local.AdmitPod([]byte(pod), "shop", "app"); err != nil || a.Refused() {
		t.Errorf("the connection's owner lost it: %v", err)
	}
}
