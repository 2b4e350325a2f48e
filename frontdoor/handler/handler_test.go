package handler

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpatch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func injectDecision() *deciderv1.Decision {
	return &deciderv1.Decision{
		DecisionId:           "d-1",
		Outcome:              deciderv1.Outcome_OUTCOME_INJECT,
		InstallationRevision: revision,
		AuditAnnotations:     map[string]string{"revision": revision},
		Warnings:             []*deciderv1.Warning{{Code: "watch-seconds-low", Message: "first"}, {Code: "volume-disk", Message: "second <&>"}},
		Plan: &deciderv1.MutationPlan{
			StatusAnnotation: &deciderv1.Annotation{Key: "dynamic-config.rs/status", Value: "injected"},
			Volumes: []*deciderv1.Volume{{Name: "dynamic-config", Source: &deciderv1.Volume_EmptyDir{
				EmptyDir: &deciderv1.EmptyDirVolume{Medium: "Memory", SizeLimit: "16Mi"}}}},
			AppMounts: []*deciderv1.AppMount{{ContainerIndex: 0, ContainerName: "app",
				Mount: &deciderv1.VolumeMount{Name: "dynamic-config", MountPath: "/config"}}},
			Agents: []*deciderv1.AgentPlacement{{
				List: deciderv1.ContainerList_CONTAINER_LIST_CONTAINERS, Position: deciderv1.Position_POSITION_APPEND,
				Container: &deciderv1.AgentContainer{Name: "dynamic-config-agent", Image: "agent:1",
					SecurityContext: &deciderv1.SecurityContext{RunAsNonRoot: true}},
			}},
		},
	}
}

func refuseDecision() *deciderv1.Decision {
	return &deciderv1.Decision{
		DecisionId:           "d-2",
		Outcome:              deciderv1.Outcome_OUTCOME_REFUSE,
		InstallationRevision: revision,
		AuditAnnotations:     map[string]string{"revision": revision, "decision-id": "d-2"},
		Warnings:             []*deciderv1.Warning{{Code: "env-policy-warn", Message: "collected before"}},
		Refusals: []*deciderv1.Refusal{{
			Reason: deciderv1.RefusalReason_REFUSAL_REASON_PINNED, ReasonSlug: "DynamicConfigPinned", HttpCode: 400,
			Message: `dynamic-config.rs/watch-seconds is "5", but the installation pins it to "30"`, Check: "pin.watch-seconds",
			Key: "dynamic-config.rs/watch-seconds",
		}},
	}
}

func TestUnreadableRequests(t *testing.T) {
	h := New(Config{Decider: nil, MaxRequestBytes: 160})
	tests := []struct {
		name        string
		method      string
		contentType string
		body        string
		code        int
		want        string
	}{
		{"a GET is refused with 405", http.MethodGet, "application/json", "", 405, "method not allowed"},
		{"a text body is refused with 415", http.MethodPost, "text/plain", "{}", 415, "expected Content-Type application/json"},
		{"a missing content type is refused with 415", http.MethodPost, "", "{}", 415, "expected Content-Type application/json"},
		{"a body above the limit is refused with 413", http.MethodPost, "application/json", strings.Repeat(" ", 161) + "{}", 413, "request body too large"},
		{"a body that is not JSON is refused with 400", http.MethodPost, "application/json; charset=utf-8", "nope", 400, "the body is not JSON"},
		{"a v1beta1 review is refused with 400", http.MethodPost, "application/json", `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{}}`, 400, `apiVersion "admission.k8s.io/v1beta1"`},
		{"a review without a request is refused with 400", http.MethodPost, "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, 400, "carries no request"},
		{"a review without request.uid is refused with 400 naming the field", http.MethodPost, "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"object":{"kind":"Pod"}}}`, 400, "request.uid"},
		{"a body that is a JSON array is refused with 400 and a clean message", http.MethodPost, "application/json", `[1,2,3]`, 400, "the body is not an AdmissionReview: it is a JSON array, not an object"},
		{"a request of the wrong shape is refused with 400", http.MethodPost, "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":7}}`, 400, "wrong type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/mutate", strings.NewReader(tt.body))
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.want) {
				t.Fatalf("HTTP %d %q, want %d containing %q", w.Code, w.Body.String(), tt.code, tt.want)
			}
		})
	}
}

func TestMutateWithoutRPC(t *testing.T) {
	fake := answering(injectDecision())
	client, _ := serveDecider(t, fake)
	h := New(Config{Decider: client})
	deployment := podRequest("u", `{"metadata":{"annotations":{"dynamic-config.rs/inject":"true"}}}`)
	deployment.Kind = review.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	noObject := podRequest("u", "")
	noObject.Object = nil
	nullObject := podRequest("u", "null")
	tests := []struct {
		name string
		req  review.Request
	}{
		{"a pod without a dynamic-config.rs annotation is allowed without an RPC", podRequest("u", plainPod)},
		{"a review without an object is allowed without an RPC", noObject},
		{"a review with a null object is allowed without an RPC", nullObject},
		{"a Deployment on /mutate is allowed without an RPC", deployment},
		{"an unreadable pod without a prefixed key is allowed without an RPC", podRequest("u", `{"metadata":{"annotations":{"x":"y"}},"spec":{"containers":"bad"}}`)},
		{"a pod with the prefix only in a label is allowed without an RPC",
			podRequest("u", `{"metadata":{"labels":{"dynamic-config.rs/inject":"true"},"annotations":{"x":"y"}},"spec":{"containers":[{"name":"app"}]}}`)},
		{"an unreadable pod with the prefix only in a label is allowed without an RPC",
			podRequest("u", `{"metadata":{"labels":{"dynamic-config.rs/inject":"true"}},"spec":{"containers":"bad"}}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, body := answer(t, h, PathMutate, requestReview(t, tt.req))
			want := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":true,"uid":"u"}}`
			if body != want {
				t.Fatalf("answer %s, want %s", body, want)
			}
			if fake.calls() != 0 {
				t.Fatalf("the decider was called %d times", fake.calls())
			}
		})
	}
}

func TestMutateInject(t *testing.T) {
	fake := answering(injectDecision())
	client, _ := serveDecider(t, fake)
	reg := prometheus.NewRegistry()
	m := metrics.NewFrontdoor(reg)
	var logs bytes.Buffer
	h := New(Config{Decider: client, Metrics: m, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})

	resp, body := answer(t, h, PathMutate, requestReview(t, podRequest("uid-1", example1Pod)))
	if !resp.Allowed || resp.PatchType != "JSONPatch" || resp.UID != "uid-1" || resp.Status != nil {
		t.Fatalf("answer %s", body)
	}
	if got := strings.Join(resp.Warnings, "|"); got != "first|second <&>" {
		t.Fatalf("warnings %q", got)
	}
	if !strings.Contains(body, `"second <&>"`) {
		t.Fatalf("HTML escaping is on: %s", body)
	}
	if resp.AuditAnnotations["revision"] != revision {
		t.Fatalf("audit annotations %v", resp.AuditAnnotations)
	}
	raw, err := base64.StdEncoding.DecodeString(resp.Patch)
	if err != nil {
		t.Fatal(err)
	}
	// The pod has args: null; the patch is built against it and applies.
	if _, err := jsonpatch.Apply([]byte(example1Pod), raw); err != nil {
		t.Fatalf("the patch does not apply: %v\n%s", err, raw)
	}
	if !strings.HasPrefix(string(raw), `[{"op":"add","path":"/metadata/annotations/dynamic-config.rs~1status","value":"injected"},{"op":"add","path":"/spec/volumes","value":[]}`) {
		t.Fatalf("patch %s", raw)
	}

	t.Run("the facts carry only prefixed annotations and the env as the policy sees it", func(t *testing.T) {
		req := fake.last()
		if req.GetPurpose() != deciderv1.Purpose_PURPOSE_MUTATE {
			t.Fatalf("purpose %v", req.GetPurpose())
		}
		if req.GetView() != deciderv1.DecisionView_DECISION_VIEW_PLAN {
			t.Fatalf("view %v: the front door asks for the plan view only", req.GetView())
		}
		f := req.GetPod()
		if _, ok := f.GetAnnotations()["team"]; ok || len(f.GetAnnotations()) != 5 {
			t.Fatalf("annotations %v", f.GetAnnotations())
		}
		c := f.GetContainers()[0]
		if c.GetName() != "app" || c.GetHasArgs() || c.GetHasCommand() {
			t.Fatalf("container %v", c)
		}
		env := c.GetEnv()
		if len(env) != 3 || env[0].GetValue() != "1" || env[0].Value == nil || !env[1].GetValueFrom() || env[1].Value != nil || env[2].Value == nil || env[2].GetValue() != "" {
			t.Fatalf("env %v", env)
		}
		if f.GetNamespace() != "default" || f.GetName() != "app" || f.GetOperation() != deciderv1.Operation_OPERATION_CREATE ||
			f.GetResourceKind() != deciderv1.ResourceKind_RESOURCE_KIND_POD || f.GetRequestUid() != "uid-1" || f.GetUserName() != "alice" {
			t.Fatalf("facts %v", f)
		}
	})

	t.Run("one admission line with exactly the spec's fields and no values", func(t *testing.T) {
		var line map[string]any
		if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
			t.Fatalf("log %q: %v", logs.String(), err)
		}
		want := []string{"time", "level", "msg", "webhook", "uid", "kind", "namespace", "name", "operation", "dry_run",
			"outcome", "reason", "check", "decision_id", "revision", "duration_ms", "rpc_ms", "patch_ops", "warnings", "trace_id", "span_id"}
		if len(line) != len(want) {
			t.Fatalf("log fields %v", line)
		}
		for _, k := range want {
			if _, ok := line[k]; !ok {
				t.Fatalf("log lacks %q: %v", k, line)
			}
		}
		if line["msg"] != "admission" || line["outcome"] != "patched" || line["patch_ops"] != float64(6) || line["warnings"] != float64(2) || line["decision_id"] != "d-1" {
			t.Fatalf("log %v", line)
		}
		if strings.Contains(logs.String(), "consul") || strings.Contains(logs.String(), "second") {
			t.Fatalf("a value or a message was logged: %s", logs.String())
		}
	})

	t.Run("the admission is counted", func(t *testing.T) {
		n, err := testutil.GatherAndCount(reg, "dynamic_config_admissions_total")
		if err != nil || n != 5 {
			t.Fatalf("admissions series = %d, %v", n, err)
		}
		want := `
# HELP dynamic_config_admissions_total Admissions answered on /mutate, by outcome.
# TYPE dynamic_config_admissions_total counter
dynamic_config_admissions_total{outcome="decider_error_allowed"} 0
dynamic_config_admissions_total{outcome="decider_error_denied"} 0
dynamic_config_admissions_total{outcome="patched"} 1
dynamic_config_admissions_total{outcome="refused"} 0
dynamic_config_admissions_total{outcome="skipped"} 0
`
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "dynamic_config_admissions_total"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestDryRunIsDecidedIdentically(t *testing.T) {
	fake := answering(injectDecision())
	client, _ := serveDecider(t, fake)
	h := New(Config{Decider: client})
	wet := podRequest("u", example1Pod)
	dry := podRequest("u", example1Pod)
	yes := true
	dry.DryRun = &yes
	_, a := answer(t, h, PathMutate, requestReview(t, wet))
	_, b := answer(t, h, PathMutate, requestReview(t, dry))
	if a != b {
		t.Fatalf("dry run answered differently:\n%s\n%s", a, b)
	}
	if !fake.last().GetPod().GetDryRun() {
		t.Fatal("dry_run was not passed to the decider")
	}
}

func TestRefusalIsAlwaysDenied(t *testing.T) {
	for _, flag := range []string{OnErrorDeny, OnErrorAllow} {
		t.Run("with --on-decider-error="+flag+" a refusal is denied", func(t *testing.T) {
			client, _ := serveDecider(t, answering(refuseDecision()))
			h := New(Config{Decider: client, OnDeciderError: flag})
			_, body := answer(t, h, PathMutate, requestReview(t, podRequest("u", example1Pod)))
			want := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":false,` +
				`"auditAnnotations":{"decision-id":"d-2","revision":"` + revision + `"},"status":{"code":400,` +
				`"message":"dynamic-config.rs/watch-seconds is \"5\", but the installation pins it to \"30\"","reason":"DynamicConfigPinned"},` +
				`"uid":"u","warnings":["collected before"]}}`
			if body != want {
				t.Fatalf("answer\n%s\nwant\n%s", body, want)
			}
		})
	}
}

func TestEnvPolicyRefusalIsAlwaysDenied(t *testing.T) {
	d := &deciderv1.Decision{
		Outcome: deciderv1.Outcome_OUTCOME_REFUSE, InstallationRevision: revision,
		AuditAnnotations: map[string]string{"revision": revision},
		Refusals: []*deciderv1.Refusal{{Reason: deciderv1.RefusalReason_REFUSAL_REASON_ENV_POLICY, ReasonSlug: "DynamicConfigEnvPolicy",
			HttpCode: 403, Message: `envPolicy.rules[0] (anyIn) rejects this Pod in namespace "default": it sets HTTPS_PROXY, which this rule forbids`,
			Check: "env-policy.rule", Key: "envPolicy.rules[0]"}},
	}
	client, _ := serveDecider(t, answering(d))
	h := New(Config{Decider: client, OnDeciderError: OnErrorAllow, OnDeciderErrorValidate: OnErrorAllow})
	resp, body := answer(t, h, PathValidate, requestReview(t, podRequest("u", plainPod)))
	if resp.Allowed || resp.Status == nil || resp.Status.Code != 403 || resp.Status.Reason != "DynamicConfigEnvPolicy" ||
		resp.AuditAnnotations["revision"] != revision {
		t.Fatalf("with --on-decider-error-validate=allow an env-policy refusal was answered %s", body)
	}
}

func TestTheAuditAnnotationsAreTheDecidersAndTheFrontDoorAddsNone(t *testing.T) {
	skip := func(audit map[string]string) *deciderv1.Decision {
		return &deciderv1.Decision{
			DecisionId: "d-3", Outcome: deciderv1.Outcome_OUTCOME_SKIP, SkipReason: deciderv1.SkipReason_SKIP_REASON_ALREADY_INJECTED,
			InstallationRevision: revision, AuditAnnotations: audit,
		}
	}
	tests := []struct {
		name     string
		decision *deciderv1.Decision
		want     string
	}{
		{"a skip carries the revision and the decision id the decider wrote",
			skip(map[string]string{"revision": revision, "decision-id": "d-3"}),
			`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":true,"auditAnnotations":{"decision-id":"d-3","revision":"` + revision + `"},"uid":"u"}}`},
		{"a decision without audit annotations is answered without any",
			skip(nil),
			`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":true,"uid":"u"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, _ := serveDecider(t, answering(tt.decision))
			h := New(Config{Decider: client})
			if _, body := answer(t, h, PathMutate, requestReview(t, podRequest("u", example1Pod))); body != tt.want {
				t.Fatalf("answer %s\nwant   %s", body, tt.want)
			}
		})
	}
}

// panicking is a decider client whose Decide panics: the handler must still answer.
type panicking struct{ deciderv1.DeciderServiceClient }

func (panicking) Decide(context.Context, *deciderv1.DecisionRequest, ...grpc.CallOption) (*deciderv1.DecisionResponse, error) {
	panic("boom")
}

func TestFailureRules(t *testing.T) {
	unreachable := func(t *testing.T) deciderv1.DeciderServiceClient {
		client, stop := serveDecider(t, answering(injectDecision()))
		stop()
		return client
	}
	slow := func(t *testing.T) deciderv1.DeciderServiceClient {
		client, _ := serveDecider(t, &fakeDecider{decide: func(ctx context.Context, _ *deciderv1.DecisionRequest) (*deciderv1.DecisionResponse, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}})
		return client
	}
	answers := func(d *deciderv1.Decision) func(t *testing.T) deciderv1.DeciderServiceClient {
		return func(t *testing.T) deciderv1.DeciderServiceClient {
			client, _ := serveDecider(t, answering(d))
			return client
		}
	}
	erroring := func(t *testing.T) deciderv1.DeciderServiceClient {
		client, _ := serveDecider(t, &fakeDecider{decide: func(context.Context, *deciderv1.DecisionRequest) (*deciderv1.DecisionResponse, error) {
			return nil, status.Error(codes.Internal, "internal error (decision 42) at https://user:pw@decider:9090/x")
		}})
		return client
	}
	mismatch := injectDecision()
	mismatch.Plan.AppMounts[0].ContainerName = "web"
	deployment := podRequest("u", `{"metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[{"name":"app"}]}}}}`)
	deployment.Kind = review.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

	tests := []struct {
		name       string
		decider    func(t *testing.T) deciderv1.DeciderServiceClient
		onMutate   string
		onValidate string
		path       string
		req        review.Request
		timeout    time.Duration // --decider-timeout; 0 = 10s, ample on a loaded machine
		want       string        // exact answer; "*" stands for the gRPC detail of an unreachable decider
	}{
		{
			name: "an unreachable decider denies with 503 on /mutate", decider: unreachable, path: PathMutate, req: podRequest("u", example1Pod),
			want: `{"allowed":false,"status":{"code":503,"message":"dynamic-config.rs: the decider was unavailable (Unavailable: *), so this pod could not be decided; this front door denies in that case (--on-decider-error=deny)","reason":"DynamicConfigDeciderUnavailable"},"uid":"u"}`,
		},
		{
			name: "an unreachable decider admits with a warning and an audit annotation under allow", decider: unreachable, onMutate: OnErrorAllow, path: PathMutate, req: podRequest("u", example1Pod),
			want: `{"allowed":true,"auditAnnotations":{"decider-unavailable":"Unavailable"},"uid":"u","warnings":["dynamic-config.rs: the decider was unavailable (Unavailable: *); admitted without a decision because this front door is set to --on-decider-error=allow"]}`,
		},
		{
			name: "a plain pod is still admitted while the decider is down", decider: unreachable, path: PathMutate, req: podRequest("u", plainPod),
			want: `{"allowed":true,"uid":"u"}`,
		},
		{
			name: "a slow decider is cut at the timeout", decider: slow, timeout: 50 * time.Millisecond, path: PathMutate, req: podRequest("u", example1Pod),
			want: `{"allowed":false,"status":{"code":503,"message":"dynamic-config.rs: the decider was unavailable (DeadlineExceeded: no answer within 50ms), so this pod could not be decided; this front door denies in that case (--on-decider-error=deny)","reason":"DynamicConfigDeciderUnavailable"},"uid":"u"}`,
		},
		{
			name: "a decider error detail is redacted", decider: erroring, onMutate: OnErrorAllow, path: PathMutate, req: podRequest("u", example1Pod),
			want: `{"allowed":true,"auditAnnotations":{"decider-unavailable":"Internal"},"uid":"u","warnings":["dynamic-config.rs: the decider was unavailable (Internal: internal error (decision 42) at https://…@decider:9090/x); admitted without a decision because this front door is set to --on-decider-error=allow"]}`,
		},
		{
			name: "an unspecified outcome is an unusable answer denied with 500", decider: answers(&deciderv1.Decision{}), path: PathMutate, req: podRequest("u", example1Pod),
			want: `{"allowed":false,"status":{"code":500,"message":"dynamic-config.rs: the decider's answer could not be used (the outcome is unspecified), so this pod could not be decided; this front door denies in that case (--on-decider-error=deny)","reason":"DynamicConfigInternal"},"uid":"u"}`,
		},
		{
			name: "a refusal outcome without a refusal is unusable", decider: answers(&deciderv1.Decision{Outcome: deciderv1.Outcome_OUTCOME_REFUSE}), onMutate: OnErrorAllow, path: PathMutate, req: podRequest("u", example1Pod),
			want: `{"allowed":true,"auditAnnotations":{"decider-unavailable":"unusable-answer"},"uid":"u","warnings":["dynamic-config.rs: the decider's answer could not be used (a refusal outcome with no refusal); admitted without a decision because this front door is set to --on-decider-error=allow"]}`,
		},
		{
			name: "a plan naming another container is unusable", decider: answers(mismatch), path: PathMutate, req: podRequest("u", example1Pod),
			want: `{"allowed":false,"status":{"code":500,"message":"dynamic-config.rs: the decider's answer could not be used (the app mount targets container 0 as \"web\", but the pod's container 0 is \"app\"), so this pod could not be decided; this front door denies in that case (--on-decider-error=deny)","reason":"DynamicConfigInternal"},"uid":"u"}`,
		},
		{
			name: "a panic after decoding is answered as an unusable decision", decider: func(*testing.T) deciderv1.DeciderServiceClient { return panicking{} }, path: PathMutate, req: podRequest("u", example1Pod),
			want: `{"allowed":false,"status":{"code":500,"message":"dynamic-config.rs: the decider's answer could not be used (internal error), so this pod could not be decided; this front door denies in that case (--on-decider-error=deny)","reason":"DynamicConfigInternal"},"uid":"u"}`,
		},
		{
			name: "/validate follows --on-decider-error when its own flag is unset", decider: unreachable, onMutate: OnErrorAllow, path: PathValidate, req: deployment,
			want: `{"allowed":true,"auditAnnotations":{"decider-unavailable":"Unavailable"},"uid":"u","warnings":["dynamic-config.rs: the decider was unavailable (Unavailable: *); admitted without a decision because this front door is set to --on-decider-error-validate=allow"]}`,
		},
		{
			name: "/validate denies under its own flag while /mutate allows", decider: unreachable, onMutate: OnErrorAllow, onValidate: OnErrorDeny, path: PathValidate, req: deployment,
			want: `{"allowed":false,"status":{"code":503,"message":"dynamic-config.rs: the decider was unavailable (Unavailable: *), so this Deployment could not be checked against the environment-variable policy; this front door denies in that case (--on-decider-error-validate=deny)","reason":"DynamicConfigDeciderUnavailable"},"uid":"u"}`,
		},
		{
			name: "/validate allows under its own flag while /mutate denies", decider: unreachable, onMutate: OnErrorDeny, onValidate: OnErrorAllow, path: PathValidate, req: podRequest("u", example1Pod),
			want: `{"allowed":true,"auditAnnotations":{"decider-unavailable":"Unavailable"},"uid":"u","warnings":["dynamic-config.rs: the decider was unavailable (Unavailable: *); admitted without a decision because this front door is set to --on-decider-error-validate=allow"]}`,
		},
		{
			name: "an inject outcome on /validate is unusable", decider: answers(injectDecision()), path: PathValidate, req: podRequest("u", example1Pod),
			want: `{"allowed":false,"status":{"code":500,"message":"dynamic-config.rs: the decider's answer could not be used (an inject outcome on /validate), so this Pod could not be checked against the environment-variable policy; this front door denies in that case (--on-decider-error-validate=deny)","reason":"DynamicConfigInternal"},"uid":"u"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			h := New(Config{Decider: tt.decider(t), Timeout: timeout, OnDeciderError: tt.onMutate, OnDeciderErrorValidate: tt.onValidate})
			_, body := answer(t, h, tt.path, requestReview(t, tt.req))
			want := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":` + tt.want + `}`
			if !matchStar(body, want) {
				t.Fatalf("answer\n%s\nwant\n%s", body, want)
			}
		})
	}
}

// matchStar compares got with want where one "*" in want matches any text
// that does not end the JSON string.
func matchStar(got, want string) bool {
	before, after, found := strings.Cut(want, "*")
	if !found {
		return got == want
	}
	if !strings.HasPrefix(got, before) || !strings.HasSuffix(got, after) || len(got) < len(before)+len(after) {
		return false
	}
	return !strings.Contains(strings.ReplaceAll(got[len(before):len(got)-len(after)], `\"`, ""), `"`)
}

func TestMalformedObject(t *testing.T) {
	fake := answering(injectDecision())
	client, _ := serveDecider(t, fake)
	h := New(Config{Decider: client})
	bad := `{"metadata":{"annotations":{"dynamic-config.rs/inject":"true"}},"spec":{"containers":"bad"}}`
	for _, path := range []string{PathMutate, PathValidate} {
		t.Run("an unreadable annotated pod is denied as malformed on "+path, func(t *testing.T) {
			resp, body := answer(t, h, path, requestReview(t, podRequest("u", bad)))
			if resp.Allowed || resp.Status == nil || resp.Status.Code != 400 || resp.Status.Reason != "DynamicConfigMalformed" ||
				!strings.HasPrefix(resp.Status.Message, "dynamic-config.rs: the object could not be read as a Pod: ") {
				t.Fatalf("answer %s", body)
			}
		})
	}
	if fake.calls() != 0 {
		t.Fatal("the decider was called for an unreadable object")
	}
}

func TestValidate(t *testing.T) {
	fake := answering(&deciderv1.Decision{Outcome: deciderv1.Outcome_OUTCOME_ALLOW, InstallationRevision: revision,
		AuditAnnotations: map[string]string{"revision": revision, "env-policy-rule-0": "would reject: it sets A, which this rule forbids"},
		Warnings:         []*deciderv1.Warning{{Code: "workload-annotations", Message: "w"}}})
	client, _ := serveDecider(t, fake)
	h := New(Config{Decider: client})
	deploy := func(env string) string {
		return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns","annotations":{"dynamic-config.rs/inject":"true","other":"x"}},` +
			`"spec":{"template":{"metadata":{"annotations":{"dynamic-config.rs/source":"consul"}},"spec":{"containers":[{"name":"app","env":` + env + `}]}}}}`
	}
	request := func(kind, group, op, object, old string) review.Request {
		r := podRequest("u", object)
		r.Kind = review.GroupVersionKind{Group: group, Version: "v1", Kind: kind}
		r.Namespace = "ns"
		r.Operation = op
		if old != "" {
			r.OldObject = json.RawMessage(old)
		}
		return r
	}

	t.Run("a Deployment is judged on its template with its own annotation keys", func(t *testing.T) {
		n := fake.calls()
		resp, body := answer(t, h, PathValidate, requestReview(t, request("Deployment", "apps", "CREATE", deploy(`[{"name":"A","value":"1"}]`), "")))
		if !resp.Allowed || resp.AuditAnnotations["env-policy-rule-0"] == "" || resp.AuditAnnotations["revision"] != revision || len(resp.Warnings) != 1 {
			t.Fatalf("answer %s", body)
		}
		if fake.calls() != n+1 {
			t.Fatal("no RPC")
		}
		f := fake.last().GetPod()
		if fake.last().GetView() != deciderv1.DecisionView_DECISION_VIEW_PLAN {
			t.Fatalf("view %v: the front door asks for the plan view only", fake.last().GetView())
		}
		if fake.last().GetPurpose() != deciderv1.Purpose_PURPOSE_VALIDATE || f.GetResourceKind() != deciderv1.ResourceKind_RESOURCE_KIND_DEPLOYMENT ||
			len(f.GetAnnotations()) != 1 || f.GetAnnotations()["dynamic-config.rs/source"] != "consul" ||
			strings.Join(f.GetWorkloadAnnotationKeys(), ",") != "dynamic-config.rs/inject" || f.GetContainers()[0].GetEnv()[0].GetName() != "A" {
			t.Fatalf("facts %v", f)
		}
	})
	t.Run("an UPDATE that leaves every env unchanged is allowed without an RPC", func(t *testing.T) {
		n := fake.calls()
		_, body := answer(t, h, PathValidate, requestReview(t, request("Deployment", "apps", "UPDATE", deploy(`[{"name":"A","value":"1"}]`), deploy(`[{"name":"A","value":"1"}]`))))
		if body != `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":true,"uid":"u"}}` || fake.calls() != n {
			t.Fatalf("answer %s, calls %d→%d", body, n, fake.calls())
		}
	})
	t.Run("an UPDATE that changes an env value is decided", func(t *testing.T) {
		n := fake.calls()
		answer(t, h, PathValidate, requestReview(t, request("Deployment", "apps", "UPDATE", deploy(`[{"name":"A","value":"2"}]`), deploy(`[{"name":"A","value":"1"}]`))))
		if fake.calls() != n+1 {
			t.Fatal("no RPC")
		}
	})
	t.Run("every routed kind reaches the decider with its resource kind", func(t *testing.T) {
		tmpl := `{"metadata":{"name":"x"},"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"E","value":"v"}]}]}},"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"E","value":"v"}]}]}}}}}}`
		for _, k := range []struct {
			group, kind string
			want        deciderv1.ResourceKind
		}{
			{"", "Pod", deciderv1.ResourceKind_RESOURCE_KIND_POD},
			{"", "ReplicationController", deciderv1.ResourceKind_RESOURCE_KIND_REPLICATION_CONTROLLER},
			{"apps", "Deployment", deciderv1.ResourceKind_RESOURCE_KIND_DEPLOYMENT},
			{"apps", "StatefulSet", deciderv1.ResourceKind_RESOURCE_KIND_STATEFUL_SET},
			{"apps", "DaemonSet", deciderv1.ResourceKind_RESOURCE_KIND_DAEMON_SET},
			{"apps", "ReplicaSet", deciderv1.ResourceKind_RESOURCE_KIND_REPLICA_SET},
			{"batch", "Job", deciderv1.ResourceKind_RESOURCE_KIND_JOB},
			{"batch", "CronJob", deciderv1.ResourceKind_RESOURCE_KIND_CRON_JOB},
		} {
			object := tmpl
			if k.kind == "Pod" {
				object = `{"metadata":{"name":"x"},"spec":{"containers":[{"name":"app","env":[{"name":"E","value":"v"}]}]}}`
			}
			answer(t, h, PathValidate, requestReview(t, request(k.kind, k.group, "CREATE", object, "")))
			f := fake.last().GetPod()
			if f.GetResourceKind() != k.want || len(f.GetContainers()) != 1 || f.GetContainers()[0].GetEnv()[0].GetName() != "E" {
				t.Fatalf("%s: facts %v", k.kind, f)
			}
		}
	})
	t.Run("an ephemeral container added through pods/ephemeralcontainers is judged as a Pod", func(t *testing.T) {
		n := fake.calls()
		old := `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"app"}]}}`
		now := `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"app"}],"ephemeralContainers":[{"name":"debug","env":[{"name":"HTTPS_PROXY","value":"x"}]}]}}`
		r := request("Pod", "", "UPDATE", now, old)
		r.SubResource = "ephemeralcontainers"
		answer(t, h, PathValidate, requestReview(t, r))
		f := fake.last().GetPod()
		if fake.calls() != n+1 || f.GetResourceKind() != deciderv1.ResourceKind_RESOURCE_KIND_POD ||
			f.GetOperation() != deciderv1.Operation_OPERATION_UPDATE || f.GetEphemeralContainers()[0].GetEnv()[0].GetName() != "HTTPS_PROXY" {
			t.Fatalf("facts %v", f)
		}
	})
	t.Run("kinds /validate does not judge are allowed without an RPC", func(t *testing.T) {
		n := fake.calls()
		_, body := answer(t, h, PathValidate, requestReview(t, request("ConfigMap", "", "CREATE", `{"data":{}}`, "")))
		if body != `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":true,"uid":"u"}}` || fake.calls() != n {
			t.Fatalf("answer %s", body)
		}
	})
}

func TestOutcomesAreCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.NewFrontdoor(reg)
	client, stop := serveDecider(t, answering(refuseDecision()))
	h := New(Config{Decider: client, Metrics: m, OnDeciderErrorValidate: OnErrorAllow})
	answer(t, h, PathMutate, requestReview(t, podRequest("u", example1Pod))) // refused (pinned)
	answer(t, h, PathMutate, requestReview(t, podRequest("u", plainPod)))    // skipped without an RPC
	stop()
	answer(t, h, PathMutate, requestReview(t, podRequest("u", example1Pod)))   // decider down, deny
	answer(t, h, PathValidate, requestReview(t, podRequest("u", example1Pod))) // decider down, allow
	want := `
# HELP dynamic_config_admission_refusals_total Denied admissions on both paths, by refusal reason.
# TYPE dynamic_config_admission_refusals_total counter
dynamic_config_admission_refusals_total{reason="caller_refused"} 0
dynamic_config_admission_refusals_total{reason="conflict"} 0
dynamic_config_admission_refusals_total{reason="decider_unavailable"} 1
dynamic_config_admission_refusals_total{reason="env_policy"} 0
dynamic_config_admission_refusals_total{reason="internal"} 0
dynamic_config_admission_refusals_total{reason="malformed"} 0
dynamic_config_admission_refusals_total{reason="pinned"} 1
dynamic_config_admission_refusals_total{reason="policy"} 0
# HELP dynamic_config_admissions_total Admissions answered on /mutate, by outcome.
# TYPE dynamic_config_admissions_total counter
dynamic_config_admissions_total{outcome="decider_error_allowed"} 0
dynamic_config_admissions_total{outcome="decider_error_denied"} 1
dynamic_config_admissions_total{outcome="patched"} 0
dynamic_config_admissions_total{outcome="refused"} 1
dynamic_config_admissions_total{outcome="skipped"} 1
# HELP dynamic_config_validations_total Admissions answered on /validate, by outcome.
# TYPE dynamic_config_validations_total counter
dynamic_config_validations_total{outcome="allowed"} 0
dynamic_config_validations_total{outcome="decider_error_allowed"} 1
dynamic_config_validations_total{outcome="decider_error_denied"} 0
dynamic_config_validations_total{outcome="refused"} 0
dynamic_config_validations_total{outcome="skipped"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "dynamic_config_admission_refusals_total",
		"dynamic_config_admissions_total", "dynamic_config_validations_total"); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg, "dynamic_config_decider_rpc_duration_seconds"); err != nil || n != 2 {
		t.Fatalf("rpc duration series %d (OK and Unavailable expected), %v", n, err)
	}
}

func TestTheRequestDeadlineBoundsTheDecideCall(t *testing.T) {
	client, _ := serveDecider(t, &fakeDecider{decide: func(ctx context.Context, _ *deciderv1.DecisionRequest) (*deciderv1.DecisionResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	h := New(Config{Decider: client, Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	r := httptest.NewRequest(http.MethodPost, PathMutate, bytes.NewReader(requestReview(t, podRequest("u", example1Pod)))).WithContext(ctx)
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(w, r)
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Fatalf("the call ran %v: the request's deadline did not bound it", elapsed)
	}
	resp, err := review.DecodeAnswer(w.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	// The detail names the bound that applied (what was left of the request,
	// about 200ms), not the one-minute --decider-timeout.
	const prefix = "dynamic-config.rs: the decider was unavailable (DeadlineExceeded: no answer within "
	if resp.Allowed || resp.Status == nil || !strings.HasPrefix(resp.Status.Message, prefix) {
		t.Fatalf("answer %s", w.Body.String())
	}
	bound, _, _ := strings.Cut(strings.TrimPrefix(resp.Status.Message, prefix), ")")
	if d, err := time.ParseDuration(bound); err != nil || d <= 0 || d > 200*time.Millisecond {
		t.Fatalf("the detail names %q, not the bound that applied (at most 200ms): %s", bound, resp.Status.Message)
	}
}

func TestABodyOfUnknownLengthIsCutAtTheLimit(t *testing.T) {
	const limit = 160
	h := New(Config{Decider: nil, MaxRequestBytes: limit})
	for _, tt := range []struct {
		name string
		size int
		code int
	}{
		{"a streamed body one byte above the limit is refused with 413", limit + 1, http.StatusRequestEntityTooLarge},
		{"a streamed body exactly at the limit is read", limit, http.StatusBadRequest}, // read, then not a review
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := strings.Repeat(" ", tt.size-2) + "{}"
			r := httptest.NewRequest(http.MethodPost, PathMutate, strings.NewReader(body))
			r.ContentLength = -1 // as with chunked transfer encoding
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.code {
				t.Fatalf("HTTP %d %q, want %d", w.Code, w.Body.String(), tt.code)
			}
			if tt.code == http.StatusRequestEntityTooLarge && w.Body.String() != "request body too large" {
				t.Fatalf("body %q", w.Body.String())
			}
		})
	}
}

func TestADeciderErrorIsLoggedAtWarnWithItsCodeAndRedactedDetail(t *testing.T) {
	client, _ := serveDecider(t, &fakeDecider{decide: func(context.Context, *deciderv1.DecisionRequest) (*deciderv1.DecisionResponse, error) {
		return nil, status.Error(codes.Unavailable, "token rejected by https://admin:s3cret@decider:9090")
	}})
	var logs bytes.Buffer
	h := New(Config{Decider: client, Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	answer(t, h, PathMutate, requestReview(t, podRequest("u", example1Pod)))
	var line map[string]any
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("log %q: %v", logs.String(), err)
	}
	if line["msg"] != "admission" || line["level"] != "WARN" || line["grpc_code"] != "Unavailable" ||
		line["detail"] != "token rejected by https://…@decider:9090" || line["outcome"] != "decider_error_denied" {
		t.Fatalf("log line %v", line)
	}
	for _, leak := range []string{"s3cret", "consul:8500", "the decider was unavailable"} {
		if strings.Contains(logs.String(), leak) {
			t.Fatalf("the log carries %q (a secret, a value or the message): %s", leak, logs.String())
		}
	}
}

func TestTheBodyIsReadWholeWhateverItsLengthSays(t *testing.T) {
	const body = `{"apiVersion":"admission.k8s.io/v1"}`
	cases := []struct {
		name    string
		length  int64
		want    string
		wantErr bool
	}{
		{"a body of the length it declares is read in one buffer", int64(len(body)), body, false},
		{"a body of unknown length (chunked) is read to its end", -1, body, false},
		{"a body of no declared length is read to its end", 0, body, false},
		{"a body shorter than it declares is an error, not a short read", int64(len(body)) + 5, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readBody(strings.NewReader(body), tc.length)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("readBody = %q, want an error", got)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("readBody = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
