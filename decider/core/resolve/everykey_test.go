package resolve

import (
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// acceptedValue is, per registry key, a value the key accepts on a complete
// consul pod, with whatever else the value needs. A key whose grammar takes
// "1", "true" or "x" on its own needs no entry.
var acceptedValue = map[string]struct {
	value string
	extra []string
	env   []string
	want  string // the normalised value ("" = as written)
}{
	"inject": {value: "true"}, "source": {value: "consul"}, "endpoint": {value: "http://c:8500"},
	"endpoint-secret": {value: "addr/url", extra: []string{"endpoint", ""}}, "key": {value: "k"},
	"path": {value: "/srv/config/app.json"}, "mode": {value: "init"}, "watch-seconds": {value: "0030", want: "30"},
	"timeout": {value: "30"}, "agent-image": {value: "ghcr.io/acme/a:1", env: []string{"DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW=ghcr.io/acme/"}},
	"section": {value: "db"}, "auth": {value: "token"}, "auth-mount": {value: "kubernetes"}, "auth-role": {value: "app"},
	"auth-username": {value: "app"}, "auth-token-path": {value: "/var/run/token"}, "namespace": {value: "team"},
	"ref": {value: "tag:v1.4"}, "api-url": {value: "http://minio:9000"}, "token-secret": {value: "tok/token"},
	"password-secret": {value: "pw/password"}, "ca-configmap": {value: "ca/root.pem"}, "tls-secret": {value: "client-tls"},
	"ssh-secret": {value: "deploy/id", extra: []string{"auth", "ssh-key"}}, "volume-medium": {value: "memory"},
	"native-sidecar": {value: "true"}, "agent-cpu-request": {value: "50m"}, "agent-memory-request": {value: "16Mi"},
	"agent-cpu-limit": {value: "1"}, "agent-memory-limit": {value: "1Gi"}, "file-mode": {value: "0o600", want: "0600"},
	"agent-run-as-user": {value: "1001"}, "agent-run-as-group": {value: "2001"}, "agent-ephemeral-request": {value: "10Mi"},
	"agent-ephemeral-limit": {value: "1Gi"}, "env-inject": {value: "app", extra: []string{"mode", "init", "path", "/config/app.env"}},
	"env-restart": {value: "false"}, "metrics-port": {value: "9110"}, "readiness": {value: "false"},
	"inject-containers": {value: " app , "}, "revoke-grace": {value: "5s", extra: []string{"dynamic", "true"}, want: "5"},
	"init-first": {value: "false"}, "notify-http": {value: "http://127.0.0.1:8080/reload"}, "on-drift": {value: "fail"},
	"tls-reload": {value: "false"}, "history": {value: "3"}, "require-ack": {value: "true"},
	"events":           {value: "true", env: []string{"DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS=true"}},
	"canary-configmap": {value: "canary"}, "agent-run-as-same-user": {value: "false"}, "extra-secret": {value: "extra"},
	"tls-server-name": {value: "consul.internal"}, "tls-skip-verify": {value: "false"}, "schema-configmap": {value: "schema/s.json"},
	"startup-policy": {value: "require-fresh"}, "on-delete": {value: "fail"}, "max-document-bytes": {value: "1048576"},
	"max-staleness": {value: "90s"}, "meta": {value: "true"}, "dynamic": {value: "true"}, "revoke-on-shutdown": {value: "true"},
	"aws-secret": {value: "aws", extra: []string{"source", "s3"}},
	"agent-env":  {value: "RUST_LOG=debug", env: []string{"DYNAMIC_CONFIG_WEBHOOK_AGENT_ENV_ALLOW=RUST_LOG"}},
	"template":   {value: "{{ .db }}"}, "template-configmap": {value: "tpl/t.tmpl"},
}

func TestEveryRegistryKeyAcceptsAValidValue(t *testing.T) {
	for _, row := range registry.Rows() {
		if row.Name == "class" {
			continue // always refused in this version
		}
		c, ok := acceptedValue[row.Name]
		if !ok {
			// a plain row needs no entry: the first simple value its grammar accepts
			for _, v := range []string{"1", "true", "x"} {
				if _, f := row.Check(v); f == nil {
					c.value, ok = v, true
					break
				}
			}
		}
		if !ok {
			t.Errorf("no accepted value for %s: give it an acceptedValue entry", row.Name)
			continue
		}
		t.Run(row.Name, func(t *testing.T) {
			pod := consulPod(append(c.extra, row.Name, c.value)...)
			for k, v := range pod.Annotations {
				if v == "" {
					delete(pod.Annotations, k)
				}
			}
			if row.Name == "path" {
				pod.Annotations["dynamic-config.rs/path"] = c.value
			}
			d := Decide(load(t, "", c.env...), nil, pod)
			mustInject(t, d)
			v := resolved(t, d, "", row.Name)
			want := c.want
			if want == "" {
				want = c.value
			}
			if v.Value != want || v.Tier != decision.TierAnnotation || v.AnnotationKey != "dynamic-config.rs/"+row.Name {
				t.Fatalf("resolved %+v, want %q from the annotation", v, want)
			}
		})
	}
}

// TestEveryKeyRefusesWhatItsGrammarRefuses holds the evaluation order to the
// registry: a key whose grammar refuses a value must be refused by some step
// (a new row places its value check with Row.Default, or a line in steps.go).
func TestEveryKeyRefusesWhatItsGrammarRefuses(t *testing.T) {
	candidates := []string{"x y", "-1", "0", "/", "x", "99999999999999999999999"}
	for _, row := range registry.Rows() {
		bad := ""
		for _, c := range candidates {
			if _, f := row.Check(c); f != nil {
				bad = c
				break
			}
		}
		if bad == "" {
			continue // only "" is refused: step B7 (value.empty) refuses it for every key
		}
		t.Run(row.Name, func(t *testing.T) {
			c := acceptedValue[row.Name]
			pod := consulPod(append(c.extra, row.Name, bad)...)
			for k, v := range pod.Annotations {
				if v == "" {
					delete(pod.Annotations, k)
				}
			}
			d := Decide(load(t, "", c.env...), nil, pod)
			if d.Outcome != decision.OutcomeRefuse {
				t.Fatalf("%s=%q is refused by its grammar but the decision is %v: place its value check (Row.Default, or a step in steps.go)", row.Name, bad, d.Outcome)
			}
		})
	}
}

// namedPod is consulPod with a complete named render "cache".
func namedPod(extra ...string) *decision.Facts {
	return consulPod(append([]string{
		"source.cache", "redis", "endpoint.cache", "redis://r:6379", "key.cache", "cache.json", "path.cache", "/config/cache.json",
	}, extra...)...)
}

// TestEveryPerRenderKeyIsJudgedOnANamedRender holds the named-render checks
// (N1–N16, derived from the rows' Named steps) to the registry: a per-render
// key whose grammar refuses a value must be refused by some named-render
// step, on that key (a new per-render row needs its Named step, or a
// hand-written check in namedSteps).
func TestEveryPerRenderKeyIsJudgedOnANamedRender(t *testing.T) {
	if d := Decide(installation.Empty(), nil, namedPod()); d.Outcome != decision.OutcomeInject {
		t.Fatalf("the complete named render is not injected: %v %+v", d.Outcome, d.Refusals)
	}
	candidates := []string{"x y", "-1", "0", "/", "x", "99999999999999999999999"}
	for _, id := range registry.PerRender {
		row := id.Row()
		bad := ""
		for _, c := range candidates {
			if _, f := row.Check(c); f != nil {
				bad = c
				break
			}
		}
		if !row.Grammar.Checked() || bad == "" {
			continue // only "" is refused: step B7 (value.empty) refuses it for every key
		}
		t.Run(row.Name, func(t *testing.T) {
			k := registry.Full(row.Name, "cache")
			pod := namedPod()
			pod.Annotations[k] = bad
			d := Decide(installation.Empty(), nil, pod)
			if d.Outcome != decision.OutcomeRefuse || len(d.Refusals) == 0 || d.Refusals[0].Key != k {
				t.Fatalf("%s=%q is refused by its grammar, but the decision is %v %+v: give the row its Named step", k, bad, d.Outcome, d.Refusals)
			}
		})
	}
}
