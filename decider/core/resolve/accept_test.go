package resolve

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

func TestAPodWithOnlyInjectUnderTheEmptyInstallationIsRefusedForTheEndpointFirst(t *testing.T) {
	// B15, the no-source form: not source (B57), not path (B55).
	r := mustRefuse(t, Decide(installation.Empty(), nil, facts("inject", "true")))
	if r.Check != "endpoint.required" || !strings.Contains(r.Message, "— and name the store with dynamic-config.rs/source") {
		t.Fatalf("refusal %+v", r)
	}
}

func TestSkips(t *testing.T) {
	tests := []struct {
		name string
		pod  *decision.Facts
		want decision.SkipReason
	}{
		{"a pod without prefixed annotations is skipped", with(facts(), func(f *decision.Facts) { f.Annotations = map[string]string{"other.io/x": "1"} }), decision.SkipNoAnnotations},
		{"an update is skipped", with(consulPod(), func(f *decision.Facts) { f.Operation = decision.OperationUpdate }), decision.SkipNotCreate},
		{"an unspecified operation is decided like a create", with(consulPod("inject", "false"), func(f *decision.Facts) { f.Operation = decision.OperationUnspecified }), decision.SkipNotRequested},
		{"an injected pod carrying its agent is skipped", with(consulPod("status", "injected"), func(f *decision.Facts) {
			f.InitContainers = []decision.Container{{Name: "dynamic-config-init"}}
		}), decision.SkipAlreadyInjected},
		{"an injected pod with a class is skipped, not refused", with(consulPod("status", "injected", "class", "x"), func(f *decision.Facts) {
			f.Containers = append(f.Containers, decision.Container{Name: "dynamic-config-agent"})
		}), decision.SkipAlreadyInjected},
		{"a pod not asking passes whatever else it carries", facts("no-such-key", "x", "watch-seconds", "abc"), decision.SkipNotRequested},
		{"inject false is not asking", consulPod("inject", "false"), decision.SkipNotRequested},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(installation.Empty(), nil, tt.pod)
			if d.Outcome != decision.OutcomeSkip || d.SkipReason != tt.want {
				t.Fatalf("outcome %v skip %v, want skip %v; refusals %+v", d.Outcome, d.SkipReason, tt.want, d.Refusals)
			}
			if d.AuditAnnotations["revision"] != installation.EmptyRevision || d.Plan != nil || len(d.Refusals) != 0 {
				t.Fatalf("skip decision %+v", d)
			}
		})
	}
}

func TestAcceptedValuesResolveNormalised(t *testing.T) {
	tests := []struct {
		name   string
		env    []string
		pod    *decision.Facts
		render string
		knob   string
		value  string
	}{
		{"watch-seconds drops leading zeros", nil, consulPod("watch-seconds", "015"), "", "watch-seconds", "15"},
		{"watch-seconds zero is accepted", nil, consulPod("watch-seconds", "0"), "", "watch-seconds", "0"},
		{"file-mode 640 becomes 0640", nil, consulPod("file-mode", "640"), "", "file-mode", "0640"},
		{"file-mode 0o400 becomes 0400", nil, consulPod("file-mode", "0o400"), "", "file-mode", "0400"},
		{"a metrics port of zero opts out", nil, consulPod("metrics-port", "0"), "", "metrics-port", "0"},
		{"revoke-grace drops its s", nil, consulPod("revoke-grace", "10s", "dynamic", "true"), "", "revoke-grace", "10"},
		{"history accepts ten", nil, consulPod("history", "10"), "", "history", "10"},
		{"a quantity stays as written", nil, consulPod("agent-cpu-request", "0.05"), "", "agent-cpu-request", "0.05"},
		{"mode both", nil, consulPod("mode", "both"), "", "mode", "both"},
		{"volume-medium disk", nil, consulPod("volume-medium", "disk"), "", "volume-medium", "disk"},
		{"native-sidecar true", nil, consulPod("native-sidecar", "true"), "", "native-sidecar", "true"},
		{"a UID at the API limit", nil, consulPod("agent-run-as-user", "2147483647"), "", "agent-run-as-user", "2147483647"},
		{"a secret reference splits at the first slash", nil, consulPod("token-secret", "tok/a/b"), "", "token-secret", "tok/a/b"},
		{"an object reference may be a bare name", nil, consulPod("schema-configmap", "schema"), "", "schema-configmap", "schema"},
		{"notify-http on ipv6 loopback", nil, consulPod("notify-http", "http://[::1]:9000/hook"), "", "notify-http", "http://[::1]:9000/hook"},
		{"on-drift repair", nil, consulPod("on-drift", "repair"), "", "on-drift", "repair"},
		{"startup-policy best-effort", nil, consulPod("startup-policy", "best-effort"), "", "startup-policy", "best-effort"},
		{"on-delete remove", nil, consulPod("on-delete", "remove"), "", "on-delete", "remove"},
		{"max-document-bytes one", nil, consulPod("max-document-bytes", "1"), "", "max-document-bytes", "1"},
		{"max-staleness is forwarded verbatim", nil, consulPod("max-staleness", "6h"), "", "max-staleness", "6h"},
		{"tls-server-name is forwarded", nil, consulPod("tls-server-name", "consul.internal"), "", "tls-server-name", "consul.internal"},
		{"events when offered", []string{"DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS=true"}, consulPod("events", "true"), "", "events", "true"},
		{"tls-skip-verify when offered", []string{"DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY=true"}, consulPod("tls-skip-verify", "true"), "", "tls-skip-verify", "true"},
		{"an allowed agent image", []string{"DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW=ghcr.io/acme/"}, consulPod("agent-image", "ghcr.io/acme/agent:2"), "", "agent-image", "ghcr.io/acme/agent:2"},
		{"a named render's file mode is normalised", nil, cachePod("file-mode.cache", "0o644"), "cache", "file-mode", "0644"},
		{"a named render's timeout", nil, cachePod("timeout.cache", "030"), "cache", "timeout", "30"},
		{"aws-secret with s3", nil, storePod("s3", "aws-secret", "aws"), "", "aws-secret", "aws"},
		{"an ephemeral request below its limit", nil, consulPod("agent-ephemeral-request", "1Gi", "agent-ephemeral-limit", "2Gi"), "", "agent-ephemeral-request", "1Gi"},
		{"an ephemeral comparison with another suffix is skipped", nil, consulPod("agent-ephemeral-request", "2e9", "agent-ephemeral-limit", "1Gi"), "", "agent-ephemeral-request", "2e9"},
		{"a revoke-grace equal to the grace period", nil, consulPod("revoke-grace", "30", "dynamic", "true"), "", "revoke-grace", "30"},
		{"init-first in mode both", nil, consulPod("init-first", "true", "mode", "both"), "", "init-first", "true"},
		{"env-inject into a commanded container", nil, consulPod("mode", "both", "env-inject", "app", "env-restart", "true", "path", "/config/app.env"), "", "env-inject", "app"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(load(t, "", tt.env...), nil, tt.pod)
			mustInject(t, d)
			v := resolved(t, d, tt.render, tt.knob)
			if v.Value != tt.value || !v.Set || v.Tier != decision.TierAnnotation || v.AnnotationKey == "" {
				t.Fatalf("%s resolved %+v, want %q from the annotation", tt.knob, v, tt.value)
			}
		})
	}
}

// storeShapedPin is a store-shaped knob pinned at s3's store tier (pinned)
// and another value of it.
type storeShapedPin struct{ knob, pinned, other string }

// storeShapedPins are a pin of every store-shaped knob.
var storeShapedPins = []storeShapedPin{
	{"endpoint", "e://pinned", "e://other"}, {"endpoint-secret", "a/b", "c/d"}, {"key", "k1", "k2"},
	{"token-secret", "a/b", "c/d"}, {"password-secret", "a/b", "c/d"}, {"ca-configmap", "ca", "ca2"},
	{"tls-secret", "t", "t2"}, {"ssh-secret", "s", "s2"}, {"aws-secret", "aws", "aws2"}, {"section", "db", "web"},
	{"auth", "ssh-key", "token"}, {"auth-mount", "m", "m2"}, {"auth-role", "r", "r2"}, {"auth-username", "u", "u2"},
	{"auth-token-path", "/t", "/t2"}, {"namespace", "n", "n2"}, {"ref", "main", "dev"}, {"api-url", "http://a", "http://b"},
	{"template", "{{ . }}", "{{ .x }}"}, {"template-configmap", "t", "t2"},
}

// doc is the installation document pinning the knob at s3's store tier.
func (c storeShapedPin) doc() string {
	return "storeDefaults:\n  s3:\n    " + c.knob + ": \"" + c.pinned + "!\"\n"
}

// pod is an s3 pod setting the knob to v.
func (c storeShapedPin) pod(v string) *decision.Facts {
	f := storePod("s3")
	if c.knob == "endpoint-secret" {
		delete(f.Annotations, "dynamic-config.rs/endpoint")
	}
	f.Annotations["dynamic-config.rs/"+c.knob] = v
	return f
}

func TestEveryStoreShapedPinRefusesADifferingAnnotationAndPassesTheSameOne(t *testing.T) {
	for _, c := range storeShapedPins {
		t.Run(c.knob, func(t *testing.T) {
			inst := load(t, c.doc())
			pod := c.pod
			r := mustRefuse(t, Decide(inst, nil, pod(c.other)))
			if r.Check != "pin."+c.knob || r.Slug != SlugPinned || !strings.HasSuffix(r.Message, advice) {
				t.Fatalf("refusal %+v", r)
			}
			d := Decide(inst, nil, pod(c.pinned))
			if d.Outcome == decision.OutcomeRefuse && strings.HasPrefix(d.Refusals[0].Check, "pin.") {
				t.Fatalf("restating the pinned value is refused: %+v", d.Refusals[0])
			}
		})
	}
}

func TestAPinnedValueTheAnnotationOmitsIsFilled(t *testing.T) {
	inst := load(t, "storeDefaults:\n  consul: \"key=shared/app.json!, section=db!\"\n")
	d := Decide(inst, nil, facts("inject", "true", "source", "consul", "endpoint", "e://x", "path", "/config/a.json"))
	mustInject(t, d)
	if got := args(agent(t, d, "dynamic-config-agent")); !strings.Contains(got, "--key shared/app.json --out /config/a.json --section db") {
		t.Fatalf("args %s", got)
	}
}

func TestThePairResolvesAsALevel(t *testing.T) {
	inst := load(t, "storeDefaults:\n  consul: \"endpoint=http://consul.infra:8500, template-configmap=tpl\"\n")
	d := Decide(inst, nil, facts("inject", "true", "source", "consul", "endpoint-secret", "addr/url", "key", "k", "path", "/config/a.json"))
	mustInject(t, d)
	ep := resolved(t, d, "", "endpoint")
	if ep.Set || ep.Tier != decision.TierNone || ep.Note != "pair answered by the pod: installation halves muted" {
		t.Fatalf("endpoint provenance %+v", ep)
	}
	if es := resolved(t, d, "", "endpoint-secret"); es.Tier != decision.TierAnnotation || es.AnnotationKey != "dynamic-config.rs/endpoint-secret" {
		t.Fatalf("endpoint-secret provenance %+v", es)
	}
	if tc := resolved(t, d, "", "template-configmap"); tc.Tier != decision.TierStoreDefault || tc.Value != "tpl" {
		t.Fatalf("the other pair is untouched: %+v", tc)
	}
	a := agent(t, d, "dynamic-config-agent")
	if strings.Contains(args(a), "--endpoint") {
		t.Fatalf("muted endpoint sent: %s", args(a))
	}
}

func TestSameUserTakesTheUIDFromThePodSpec(t *testing.T) {
	pod := with(consulPod("agent-run-as-same-user", "true"), func(f *decision.Facts) {
		f.RunAsUser = i64(1000)
		f.Containers[0].RunAsUser = i64(1234)
	})
	d := Decide(load(t, `runAsUser: "1234!"`), nil, pod)
	mustInject(t, d)
	v := resolved(t, d, "", "agent-run-as-user")
	if v.Tier != decision.TierPodSpec || v.Value != "1234" || v.Note != "inherited from spec.containers[0].securityContext.runAsUser" || v.Pinned {
		t.Fatalf("provenance %+v", v)
	}
	if a := agent(t, d, "dynamic-config-agent"); a.SecurityContext.RunAsUser != 1234 {
		t.Fatalf("runAsUser %d", a.SecurityContext.RunAsUser)
	}
}

func TestFleetAndPodAgentEnvMerge(t *testing.T) {
	inst := load(t, gateDoc)
	tests := []struct {
		name string
		ns   string
		env  string
		want string
	}{
		{"a pod without agent-env gets the fleet environment", "default", "", "HTTPS_PROXY=http://egress.infra.svc:3128,RUST_LOG=info"},
		{"an allowed name overrides the fleet entry and goes last", "default", "RUST_LOG=debug", "HTTPS_PROXY=http://egress.infra.svc:3128,RUST_LOG=debug"},
		{"payments may set its own names", "payments", "HTTPS_PROXY=http://mine:3128, AWS_REGION=eu-west-1", "RUST_LOG=info,HTTPS_PROXY=http://mine:3128,AWS_REGION=eu-west-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := in(tt.ns, consulPod())
			if tt.env != "" {
				pod.Annotations["dynamic-config.rs/agent-env"] = tt.env
			}
			if tt.ns == "payments" {
				pod.Annotations["dynamic-config.rs/source"] = "vault"
			}
			d := Decide(inst, nil, pod)
			mustInject(t, d)
			var got []string
			for _, e := range agent(t, d, "dynamic-config-agent").Env {
				if e.Value != nil {
					got = append(got, e.Name+"="+*e.Value)
				}
			}
			if strings.Join(got, ",") != tt.want {
				t.Fatalf("env %v, want %s", got, tt.want)
			}
			var envGates int
			for _, g := range d.Gates {
				if g.Gate == GateAgentEnvAllow {
					envGates++
				}
			}
			if want := strings.Count(tt.env, "="); envGates != want {
				t.Fatalf("%d agentEnvAllow rulings, want %d: %+v", envGates, want, d.Gates)
			}
		})
	}
}

func TestTheAWSSecretStepsTheFleetCredentialsAside(t *testing.T) {
	inst := load(t, `agentEnv: "AWS_ACCESS_KEY_ID=fleet, RUST_LOG=info"`)
	d := Decide(inst, nil, storePod("s3", "aws-secret", "creds"))
	mustInject(t, d)
	var names []string
	for _, e := range agent(t, d, "dynamic-config-agent").Env {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, ","); got != "AWS_ACCESS_KEY_ID,AWS_SECRET_ACCESS_KEY,RUST_LOG" {
		t.Fatalf("env names %s", got)
	}
}

func TestGatesAreRecordedForEveryRenderInOrder(t *testing.T) {
	inst := load(t, "sourceAllow: \"team-b: git; *: consul, redis\"\nsourceDeny: \"team-b: s3\"\n")
	d := Decide(inst, nil, cachePod())
	mustInject(t, d)
	var got []string
	for _, g := range d.Gates {
		got = append(got, g.Gate+":"+g.Render+":"+g.Subject+":"+strings.Join(g.Listing, "|"))
		if !g.Passed || g.Namespace != "default" {
			t.Errorf("ruling %+v", g)
		}
	}
	want := "sourceDeny::consul:,sourceAllow::consul:consul|redis,sourceDeny:cache:redis:,sourceAllow:cache:redis:consul|redis"
	if strings.Join(got, ",") != want {
		t.Fatalf("gates\n got %s\nwant %s", strings.Join(got, ","), want)
	}
}

func TestNamedRendersGetTheirOwnAgentsAndValues(t *testing.T) {
	d := Decide(load(t, `watchSeconds: "20"`), nil, cachePod("mode", "both"))
	mustInject(t, d)
	if len(d.Renders) != 2 || d.Renders[1].Name != "cache" || d.Renders[1].Source != "redis" || len(d.Renders[1].Values) != len(registry.PerRender) {
		t.Fatalf("renders %+v", d.Renders)
	}
	if got := strings.Join(d.Renders[1].AgentContainers, ","); got != "dynamic-config-init-cache,dynamic-config-agent-cache" {
		t.Fatalf("agent containers %s", got)
	}
	ws := resolved(t, d, "cache", "watch-seconds")
	if ws.Tier != decision.TierFleetDefault || ws.Value != "20" {
		t.Fatalf("named watch-seconds %+v", ws)
	}
	if src := resolved(t, d, "cache", "source"); src.Tier != decision.TierAnnotation || src.AnnotationKey != "dynamic-config.rs/source.cache" {
		t.Fatalf("named source %+v", src)
	}
	want := "--source redis --endpoint redis://redis:6379 --key myapp/cache.json --out /config/cache.json --watch 20"
	if got := args(agent(t, d, "dynamic-config-agent-cache")); got != want {
		t.Fatalf("args\n got %s\nwant %s", got, want)
	}
}

func TestTheFleetSourceAndPathDoNotApplyToNamedRenders(t *testing.T) {
	inst := load(t, "source: consul\npath: /config/app.json\nstoreDefaults:\n  consul: \"endpoint=http://c:8500, key=k\"\n")
	r := mustRefuse(t, Decide(inst, nil, facts("inject", "true", "key.cache", "k")))
	if r.Check != "render.source-required" {
		t.Fatalf("refusal %+v", r)
	}
	r = mustRefuse(t, Decide(inst, nil, facts("inject", "true", "source.cache", "consul")))
	if r.Check != "render.path-required" {
		t.Fatalf("refusal %+v", r)
	}
}

func TestAValidatingDecisionIsTheEnvPolicys(t *testing.T) {
	pod := consulPod("watch-seconds", "abc")
	pod.Purpose = decision.PurposeValidate
	d := Decide(installation.Empty(), nil, pod)
	if d.Outcome != decision.OutcomeSkip || d.SkipReason != decision.SkipNoPolicy || d.AuditAnnotations["revision"] != installation.EmptyRevision {
		t.Fatalf("decision %+v", d)
	}
}

func TestANilInstallationOrFactsDoNotPanic(t *testing.T) {
	if d := Decide(nil, nil, nil); d.Outcome != decision.OutcomeSkip {
		t.Fatalf("decision %+v", d)
	}
}

func TestTheStepsAreB1ToB60InOrder(t *testing.T) {
	var ids []string
	for _, st := range steps {
		if st.do == nil {
			ids = append(ids, st.id)
		}
	}
	if len(ids) != 60 {
		t.Fatalf("%d steps, want 60", len(ids))
	}
	for k, id := range ids {
		if want := "B" + strconv.Itoa(k+1); id != want {
			t.Fatalf("step %d is %s, want %s", k, id, want)
		}
	}
}

func TestInstallationValuesReachTheDecisionNormalisedWithTheirProvenance(t *testing.T) {
	inst := load(t, "watchSeconds: \"030\"\nfileMode: \"640\"\nstoreDefaults:\n  redis: \"file-mode=0o600!\"\n")
	d := Decide(inst, nil, cachePod())
	mustInject(t, d)
	ws := resolved(t, d, "", "watch-seconds")
	if ws.Value != "30" || ws.Tier != decision.TierFleetDefault || ws.DocumentPath != "watchSeconds" ||
		ws.Variable != "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS" || ws.OverrideRule != decision.OverrideFleetFlag || ws.Pinned {
		t.Errorf("default watch-seconds %+v", ws)
	}
	fm := resolved(t, d, "cache", "file-mode")
	if fm.Value != "0600" || fm.Tier != decision.TierStoreDefault || fm.Store != "redis" || !fm.Pinned || fm.OverrideRule != decision.OverrideMarker {
		t.Errorf("named file-mode %+v", fm)
	}
	if got, want := args(agent(t, d, "dynamic-config-agent-cache")), "--file-mode 0600 --watch 30"; !strings.HasSuffix(got, want) {
		t.Errorf("named args %s, want the suffix %s", got, want)
	}
	// A refusal keeps the raw tier lookup, unvalidated.
	d = Decide(inst, nil, consulPod("mode", "never"))
	mustRefuse(t, d)
	if ws := resolved(t, d, "", "watch-seconds"); ws.Value != "030" || ws.Tier != decision.TierFleetDefault {
		t.Errorf("watch-seconds on a refusal %+v", ws)
	}
}

func TestTheRevisionStampIsRecognisedAndThePlanWritesTheDecidingInstallations(t *testing.T) {
	tests := []struct {
		name string
		pod  *decision.Facts
	}{
		{"a pod asking without a stamp", consulPod()},
		{"a pod whose template was copied with another installation's stamp", consulPod("revision", "0123456789ab")},
		{"a pod whose copied stamp is empty", consulPod("revision", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(installation.Empty(), nil, tt.pod)
			if d.Outcome != decision.OutcomeInject {
				t.Fatalf("outcome %v, refusals %+v", d.Outcome, d.Refusals)
			}
			want := decision.Annotation{Key: "dynamic-config.rs/revision", Value: installation.EmptyRevision[len("sha256:") : len("sha256:")+12]}
			if d.Plan.RevisionAnnotation != want {
				t.Fatalf("stamp %+v, want %+v", d.Plan.RevisionAnnotation, want)
			}
		})
	}
}
