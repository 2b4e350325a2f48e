package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
)

// fuzzInstallations are the installations a fuzzed sequence switches
// between: pins, gates, a source deny and an env policy on pods, so that the
// facts the fuzzer varies change the answers.
var fuzzInstallations = []string{`
watchSeconds: "30"
storeDefaults:
  consul: "endpoint=http://consul.infra.svc:8500!, watch-seconds=10"
  vault: "overridable=false, endpoint=https://vault.vault.svc:8200, auth=kubernetes"
sourceDeny: "sandbox: git"
agentEnvAllow: "payments: HTTPS_PROXY; *: RUST_LOG"
envPolicy:
  targets: [pods]
  rules:
    - reject: anyIn
      environmentVariables:
        - name: HTTPS_PROXY
      mode: enforce
`, `
watchSeconds: "20?"
storeDefaults:
  consul: "endpoint=http://consul.other.svc:8500, watch-seconds=10"
sourceDeny: "payments: git"
`}

func loadFuzzInstallations(t testing.TB) []*installation.Installation {
	t.Helper()
	dir := t.TempDir()
	var out []*installation.Installation
	for i, doc := range fuzzInstallations {
		p := filepath.Join(dir, "installation-"+string(rune('a'+i))+".yaml")
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		inst, err := installationloader.Load(installationloader.Options{DocumentPath: p, DocumentExplicit: true})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, inst)
	}
	return out
}

// fuzzPod is the pod three bytes describe, and the uid of its review (a
// per-admission fact) a fourth chooses. Every choice moves a fact the
// decider reads, or one the key leaves out.
func fuzzPod(b [4]byte) (pod []byte, namespace, uid string) {
	pick := func(v byte, options ...string) string { return options[int(v)%len(options)] }
	namespace = pick(b[0], "payments", "sandbox", "default")
	meta := map[string]any{"generateName": pick(b[0]>>2, "web-7d4f8b-", "api-5c9d-")}
	if b[0]&0x10 != 0 {
		meta["labels"] = map[string]string{"app": pick(b[0]>>5, "web", "api"), "pod-template-hash": "7d4f8b"}
	}
	if b[0]&0x80 != 0 {
		meta["ownerReferences"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet",
			"name": pick(b[1]>>6, "web-7d4f8b", "api-5c9d"), "uid": "u", "controller": true}}
	}
	annotations := map[string]string{}
	if v := pick(b[1], "true", "false", ""); v != "" {
		annotations["dynamic-config.rs/inject"] = v
	}
	if v := pick(b[1]>>2, "consul", "vault", "git", ""); v != "" {
		annotations["dynamic-config.rs/source"] = v
		annotations["dynamic-config.rs/key"] = "app/config.json"
		annotations["dynamic-config.rs/path"] = "/config/app.json"
	}
	if v := pick(b[1]>>4, "", "http://consul.infra.svc:8500", "http://elsewhere:8500", ""); v != "" {
		annotations["dynamic-config.rs/endpoint"] = v
	}
	if v := pick(b[2], "", "15", "15s", "5"); v != "" {
		annotations["dynamic-config.rs/watch-seconds"] = v
	}
	if v := pick(b[2]>>2, "", "HTTPS_PROXY=http://p:3128", "RUST_LOG=debug"); v != "" {
		annotations["dynamic-config.rs/agent-env"] = v
	}
	if b[2]&0x10 != 0 {
		annotations["dynamic-config.rs/status"] = "injected"
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	containers := []any{map[string]any{"name": "app", "image": "app:1"}}
	if b[2]&0x20 != 0 {
		containers[0].(map[string]any)["env"] = []any{map[string]any{"name": "HTTPS_PROXY", "value": "http://p:3128"}}
	}
	if b[2]&0x40 != 0 {
		containers = append(containers, map[string]any{"name": "sidecar", "image": "side:1", "args": []string{"--x"}})
	}
	spec := map[string]any{"containers": containers}
	if b[2]&0x80 != 0 {
		spec["restartPolicy"] = "Never"
	}
	pod, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
	if err != nil {
		panic(err)
	}
	return pod, namespace, pick(b[3], "uid-a", "uid-b", "uid-c")
}

// FuzzAHitIsTheFreshDecision admits a fuzzed sequence of pods through a
// front door with a decision cache and through one without, before the
// same decider, whose installation the sequence switches; every answer from
// the cache must be the decider's fresh answer under the same revision but
// for the marks, and once the decider announced a revision no answer carries
// another.
func FuzzAHitIsTheFreshDecision(f *testing.F) {
	f.Add([]byte{0x11, 0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x05})
	f.Add([]byte{0x90, 0x44, 0x21, 0x01, 0x90, 0x44, 0x21, 0x02, 0xff, 0x90, 0x44, 0x21, 0x03})
	f.Add([]byte{0x00, 0x10, 0x02, 0x00, 0x01, 0x10, 0x02, 0x00, 0x00, 0x10, 0x06, 0x00, 0x00, 0x10, 0x02, 0x04})
	f.Add([]byte("a sequence of pods, reloads and repeats, as bytes"))
	installs := loadFuzzInstallations(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		doors := newCachedDoors(t, installs[0], nil)
		current := 0
		for len(data) > 0 {
			if data[0] == 0xff { // a reload: the decider swaps, then announces
				data = data[1:]
				current = 1 - current
				doors.e.decider.Store().Swap(installs[current])
				want := installs[current].Revision
				for deadline := time.Now().Add(10 * time.Second); !doors.announced(want); time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("the new revision was never announced")
					}
				}
				continue
			}
			var b [4]byte
			n := copy(b[:], data)
			data = data[n:]
			pod, namespace, uid := fuzzPod(b)
			cached, err := AdmitThrough(doors.cached, installs[current].EnvPolicy, uid, pod, namespace, "")
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := AdmitThrough(doors.direct, installs[current].EnvPolicy, uid+"-fresh", pod, namespace, "")
			if err != nil {
				t.Fatal(err)
			}
			if rev := cached.Answer.AuditAnnotations["revision"]; rev != "" && rev != installs[current].Revision {
				t.Fatalf("after the decider announced %s an answer carries %s: %s", installs[current].Revision, rev, review.Encode(cached.Answer))
			}
			if unmarked(cached.Answer) != unmarked(fresh.Answer) {
				t.Fatalf("pod %s in %s\nthe cached door: %s\nthe decider:     %s", pod, namespace, review.Encode(cached.Answer), review.Encode(fresh.Answer))
			}
			if s := cached.Answer.AuditAnnotations["decision-source"]; s != "" && s != "cache" {
				t.Fatalf("source %q with the decider up", s)
			}
		}
	})
}

// announced reports whether the cache answers under revision now.
func (d *cachedDoors) announced(revision string) bool {
	return d.cache.Usable() && d.cache.Announced().Installation == revision
}
