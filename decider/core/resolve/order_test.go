package resolve

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// TestTheFirstFailingCheckInEvaluationOrderWins pairs two failing checks and
// asserts the one spec 01 §8 (and §4's N1–N16) evaluates first is reported.
func TestTheFirstFailingCheckInEvaluationOrderWins(t *testing.T) {
	dbRender := []string{"source.db", "redis", "endpoint.db", "r://x", "key.db", "k", "path.db", "/config/db.json"}
	tests := []struct {
		name  string
		doc   string
		pod   *decision.Facts
		check string
		key   string
	}{
		{name: "a named render's pin (N3) comes before its watch-seconds (N5)", doc: "storeDefaults:\n  redis: \"key=k!\"",
			pod: cachePod("watch-seconds.cache", "soon"), check: "pin.key", key: "dynamic-config.rs/key.cache"},
		{name: "a named render's reference form (N6) comes before its endpoint requirement (N7)",
			pod: consulPod("source.cache", "redis", "token-secret.cache", "t"), check: "secret-ref.form", key: "dynamic-config.rs/token-secret.cache"},
		{name: "a named render's metrics port (N11) comes before its timeout (N12)",
			pod: cachePod("metrics-port.cache", "x", "timeout.cache", "0"), check: "metrics-port.value", key: "dynamic-config.rs/metrics-port.cache"},
		{name: "a named render's key requirement (N15) comes before its path requirement (N16)",
			pod: consulPod("source.cache", "redis", "endpoint.cache", "r://x"), check: "render.key-required", key: "dynamic-config.rs/key.cache"},
		{name: "named renders (B53) come before the also renderings (B54)",
			pod: consulPod("source.cache", "redis", "also.x", "rel"), check: "render.endpoint-required", key: "dynamic-config.rs/endpoint.cache"},
		{name: "the also renderings (B54) come before the default path (B55)",
			pod: facts("inject", "true", "source", "consul", "endpoint", "e://x", "also.x", "rel"), check: "also.path", key: "dynamic-config.rs/also.x"},
		{name: "every also path is judged before an orphan section",
			pod: consulPod("also-section.a", "s", "also.b", "/other/b.json"), check: "also.directory", key: "dynamic-config.rs/also.b"},
		{name: "the also directory rule waits while the default path is malformed",
			pod: consulPod("path", "/app.toml", "also.x", "/other/x.json"), check: "path.shape", key: "dynamic-config.rs/path"},
		{name: "the render directory rule waits while the default path is unresolved",
			pod: facts("inject", "true", "source", "consul", "endpoint", "e://x", "source.cache", "redis", "endpoint.cache", "r://x",
				"key.cache", "k", "path.cache", "/other/c.json"), check: "path.required", key: "dynamic-config.rs/path"},
		{name: "a named render's path repeating the default path is a duplicate of it",
			pod: cachePod("path.cache", "/config/rendered.toml"), check: "output.duplicate", key: "dynamic-config.rs/path.cache"},
		{name: "an also path repeating a named render's path is a duplicate of that render",
			pod: cachePod("also.x", "/config/cache.json"), check: "output.duplicate", key: "dynamic-config.rs/also.x"},
		{name: "a metrics port equal to the default render's is taken",
			pod: cachePod("metrics-port", "9000", "metrics-port.cache", "09000"), check: "render.metrics-port-taken", key: "dynamic-config.rs/metrics-port.cache"},
		{name: "a metrics port equal to an earlier named render's is taken by the later one",
			pod: cachePod(append(dbRender, "metrics-port.cache", "9001", "metrics-port.db", "9001")...), check: "render.metrics-port-taken", key: "dynamic-config.rs/metrics-port.db"},
		{name: "a pinned endpoint refuses the other half even when the pod restates it",
			doc: "storeDefaults:\n  consul: \"endpoint=http://consul:8500!\"", pod: consulPod("endpoint-secret", "a/b"), check: "pair-pin.endpoint", key: "dynamic-config.rs/endpoint-secret"},
		{name: "a pinned store UID refuses an inherited one that differs",
			doc:   "storeDefaults:\n  consul: \"agent-run-as-user=1000!\"",
			pod:   with(consulPod("agent-run-as-same-user", "true"), func(f *decision.Facts) { f.RunAsUser = i64(2000) }),
			check: "pin.agent-run-as-same-user", key: "dynamic-config.rs/agent-run-as-same-user"},
		{name: "agent-env cannot set a credential a store default aws-secret supplies",
			doc: "storeDefaults:\n  s3: \"aws-secret=creds\"\nagentEnvAllow: \"AWS_*\"", pod: storePod("s3", "agent-env", "AWS_ACCESS_KEY_ID=x"),
			check: "agent-env.aws", key: "dynamic-config.rs/agent-env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRefuse(t, Decide(load(t, tt.doc), nil, tt.pod))
			if r.Check != tt.check || r.Key != tt.key {
				t.Fatalf("refused %s on %s (%s), want %s on %s", r.Check, r.Key, r.Message, tt.check, tt.key)
			}
		})
	}
}

// TestTheseNearMissesAreAdmitted are the rules' other sides: what must not refuse.
func TestTheseNearMissesAreAdmitted(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		pod  *decision.Facts
	}{
		{name: "a shared metrics port does not count without watching agents",
			pod: cachePod("mode", "init", "metrics-port", "9000", "metrics-port.cache", "9000")},
		{name: "port 0 on two renders is no port at all", pod: cachePod("metrics-port", "0", "metrics-port.cache", "0")},
		{name: "a named render's metrics port is annotation only, so a fleet pin does not reach it",
			doc: `metricsPort: "9110!"`, pod: cachePod("metrics-port.cache", "9111")},
		{name: "a named render has no path tier, so a store path pin does not reach it",
			doc: "storeDefaults:\n  redis: \"path=/config/r.json!\"", pod: cachePod()},
		{name: "an inherited UID equal to the pinned one passes",
			doc: `runAsUser: "1000!"`, pod: with(consulPod("agent-run-as-same-user", "true"), func(f *decision.Facts) { f.RunAsUser = i64(1000) })},
		{name: "an inherited UID overrides an open fleet UID",
			doc: `runAsUser: "1000"`, pod: with(consulPod("agent-run-as-same-user", "true"), func(f *decision.Facts) { f.RunAsUser = i64(2000) })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustInject(t, Decide(load(t, tt.doc), nil, tt.pod))
		})
	}
}

// TestEveryAgentOfThePodCarriesTheMergedEnvironmentInItsRendersOrder is spec
// 02 §8 with a store default aws-secret, and spec 03 §3.6's two env orders.
func TestEveryAgentOfThePodCarriesTheMergedEnvironmentInItsRendersOrder(t *testing.T) {
	inst := load(t, "storeDefaults:\n  s3: \"aws-secret=creds\"\n"+
		"agentEnv: \"AWS_ACCESS_KEY_ID=fleet, RUST_LOG=info, HTTPS_PROXY=http://egress:3128\"\nagentEnvAllow: \"AWS_*, RUST_LOG\"\n")
	pod := storePod("s3", "agent-env", "AWS_REGION=eu-west-1, RUST_LOG=debug", "token-secret", "t/k",
		"source.b", "s3", "endpoint.b", "x://y", "key.b", "k", "path.b", "/config/b.json", "password-secret.b", "p/w")
	d := Decide(inst, nil, pod)
	mustInject(t, d)
	want := map[string]string{
		"dynamic-config-agent": "DYNAMIC_CONFIG_AGENT_TOKEN<t/k AWS_ACCESS_KEY_ID<creds/AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY<creds/AWS_SECRET_ACCESS_KEY " +
			"HTTPS_PROXY=http://egress:3128 AWS_REGION=eu-west-1 RUST_LOG=debug",
		"dynamic-config-agent-b": "DYNAMIC_CONFIG_AGENT_PASSWORD<p/w HTTPS_PROXY=http://egress:3128 AWS_REGION=eu-west-1 RUST_LOG=debug " +
			"AWS_ACCESS_KEY_ID<creds/AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY<creds/AWS_SECRET_ACCESS_KEY",
	}
	for name, env := range want {
		if got := envText(agent(t, d, name).Env); got != env {
			t.Errorf("%s env\n got %s\nwant %s", name, got, env)
		}
	}
}

func envText(env []decision.AgentEnvVar) string {
	s := ""
	for i, e := range env {
		if i > 0 {
			s += " "
		}
		s += e.Name
		switch {
		case e.Value != nil:
			s += "=" + *e.Value
		case e.SecretKeyRef != nil:
			s += "<" + e.SecretKeyRef.Name + "/" + e.SecretKeyRef.Key
		}
	}
	return s
}

// TestWarningsFollowTheRuleOrderThenTheNamedRenders is spec 03 §6.1 through Decide.
func TestWarningsFollowTheRuleOrderThenTheNamedRenders(t *testing.T) {
	inst := load(t, "", "DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY=true")
	pod := cachePod("volume-medium", "disk", "file-mode", "0644", "watch-seconds", "1", "tls-skip-verify", "true",
		"dynamic", "true", "revoke-on-shutdown", "false", "file-mode.cache", "0o604", "watch-seconds.cache", "0", "tls-skip-verify.cache", "true")
	d := Decide(inst, nil, pod)
	mustInject(t, d)
	want := []string{"volume-disk", "file-mode-world-readable", "watch-seconds-low", "tls-skip-verify", "revoke-on-shutdown-off",
		"file-mode-world-readable", "watch-seconds-low", "tls-skip-verify"}
	if len(d.Warnings) != len(want) {
		t.Fatalf("warnings %+v", d.Warnings)
	}
	for k, w := range d.Warnings {
		named := k >= 5
		if w.Code != want[k] || named != (w.Render == "cache") || named != strings.HasPrefix(w.Message, `render "cache": `) {
			t.Errorf("warning %d: %s render %q %q", k, w.Code, w.Render, w.Message)
		}
	}
	if got := d.Warnings[5].Message; got != `render "cache": file-mode is world-readable (0604): anything that can read the volume can read the rendered document; 0640 or 0600 keeps it to owner and group` {
		t.Errorf("named file-mode warning %q", got)
	}
}
