package main

// Issue 17: every warning the front door can answer with fits the API
// server's limits (each ≤ 256 characters, all ≤ 4096 bytes). Each warning
// template is produced by its real producer at its longest, then answered
// through the real front-door handler.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/plan"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// longestTemplates returns every warning template of the decider at its
// longest, by template name.
func longestTemplates(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	// Mutating path (03 §6.1): every rule of the default render and of a
	// named render with the longest name a key can carry (63 characters,
	// more than any knob leaves room for), with the longest values.
	longName := strings.Repeat("r", 62) + "9"
	var values registry.Values
	for _, v := range []struct {
		knob registry.ID
		text string
	}{
		{registry.VolumeMedium, "disk"}, {registry.FileMode, "0777"}, {registry.WatchSeconds, "0"}, {registry.TLSSkipVerify, "true"},
		{registry.Dynamic, "true"}, {registry.RevokeOnShutdown, "false"}, {registry.History, "10"}, {registry.MaxDocumentBytes, "18446744073709551615"},
	} {
		values.Set(v.knob, v.text)
	}
	in := plan.Input{
		Facts:        &decision.Facts{Namespace: "ns", Name: "app", Containers: []decision.Container{{Name: "app"}}},
		Installation: installation.Empty(),
		Default:      plan.Render{Values: values},
		Named:        []plan.Render{{Name: longName, Values: values}},
	}
	for _, w := range plan.Warnings(&in) {
		out["plan/"+w.Code] = append(out["plan/"+w.Code], w.Message)
	}
	// Deprecated keys (01 §2): the longest key, with and without a replacement.
	key := registry.Prefix + strings.Repeat("k", 63)
	row := registry.Row{Name: strings.Repeat("k", 63), DeprecatedSince: "v10.10.10", Replacement: strings.Repeat("n", 63)}
	out["deprecated-key/replaced"] = []string{row.DeprecationMessage(key)}
	row.Replacement = ""
	out["deprecated-key/removed"] = []string{row.DeprecationMessage(key)}
	// Validating path (05 §4): a warn rule of every operator, in the longest
	// namespace, listing many long variable names; and the workload note.
	ns := strings.Repeat("n", 63)
	var listed []envpolicy.Variable
	var env []decision.EnvVar
	for i := range 40 {
		name := strings.Repeat(string(rune('A'+i%26)), 60) + "_" + string(rune('A'+i/26))
		listed = append(listed, envpolicy.Variable{Name: name})
		if i%2 == 0 {
			env = append(env, decision.EnvVar{Name: name, Value: "v"})
		}
	}
	unlisted := append([]decision.EnvVar(nil), env...)
	for i := range 20 {
		unlisted = append(unlisted, decision.EnvVar{Name: strings.Repeat("U", 60) + "_" + strings.Repeat(string(rune('A'+i)), 3), Value: "v"})
	}
	for _, op := range []string{envpolicy.RejectAnyIn, envpolicy.RejectAnyNotIn, envpolicy.RejectAllAreUsed, envpolicy.RejectNotAllAreUsed} {
		rules := make([]envpolicy.Rule, 1000)
		for i := range rules {
			rules[i] = envpolicy.Rule{Reject: envpolicy.RejectAnyIn, Variables: []envpolicy.Variable{{Name: "NEVER_SET"}}, Mode: envpolicy.ModeWarn}
		}
		rules[999] = envpolicy.Rule{Reject: op, Variables: listed, Mode: envpolicy.ModeWarn}
		if op == envpolicy.RejectAnyNotIn {
			// none of them set
			rules[999].Variables = make([]envpolicy.Variable, len(listed))
			for i := range listed {
				rules[999].Variables[i] = envpolicy.Variable{Name: "Z" + listed[i].Name}
			}
		}
		if op == envpolicy.RejectAllAreUsed {
			// every listed variable set
			rules[999].Variables = listed[:20]
			for i := range rules[999].Variables {
				rules[999].Variables[i] = envpolicy.Variable{Name: env[i].Name}
			}
		}
		p := &envpolicy.Policy{Targets: []string{envpolicy.TargetPods, envpolicy.TargetWorkloads}, Rules: rules}
		f := &decision.Facts{Purpose: decision.PurposeValidate, ResourceKind: decision.KindDeployment, Namespace: ns, Name: "app",
			Operation: decision.OperationCreate, Containers: []decision.Container{{Name: "app", Env: unlisted}},
			WorkloadAnnotationKeys: []string{key}}
		d := envpolicy.Decide(p, installation.EmptyRevision, f)
		for _, w := range d.Warnings {
			out["envpolicy/"+w.Code+"/"+op] = append(out["envpolicy/"+w.Code+"/"+op], w.Message)
		}
	}
	return out
}

// warningsDecider answers every Decide with a decision carrying warnings,
// or fails with err.
type warningsDecider struct {
	outcome  deciderv1.Outcome
	warnings []string
	err      error
}

func (w *warningsDecider) Decide(context.Context, *deciderv1.DecisionRequest, ...grpc.CallOption) (*deciderv1.DecisionResponse, error) {
	if w.err != nil {
		return nil, w.err
	}
	d := &deciderv1.Decision{DecisionId: "d", Outcome: w.outcome, InstallationRevision: installation.EmptyRevision}
	for _, m := range w.warnings {
		d.Warnings = append(d.Warnings, &deciderv1.Warning{Code: "c", Message: m})
	}
	return &deciderv1.DecisionResponse{Decision: d}, nil
}

func (w *warningsDecider) GetInstallation(context.Context, *deciderv1.GetInstallationRequest, ...grpc.CallOption) (*deciderv1.GetInstallationResponse, error) {
	return nil, status.Error(codes.Unimplemented, "no")
}

func (w *warningsDecider) WatchRevision(context.Context, *deciderv1.WatchRevisionRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[deciderv1.WatchRevisionResponse], error) {
	return nil, status.Error(codes.Unimplemented, "no")
}

// answerWarnings posts a Pod review asking for injection to a handler over
// decider on path and returns the answer's warnings.
func answerWarnings(t *testing.T, decider deciderv1.DeciderServiceClient, path, onError string) []string {
	t.Helper()
	h := handler.New(handler.Config{Decider: decider, OnDeciderError: onError})
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"},` +
		`"operation":"CREATE","namespace":"ns","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"dynamic-config.rs/inject":"true"}},` +
		`"spec":{"containers":[{"name":"app","image":"app"}]}}}}`
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	resp, err := review.DecodeAnswer(w.Body.Bytes())
	if err != nil {
		t.Fatalf("%v: %s", err, w.Body.String())
	}
	return resp.Warnings
}

func checkWarningLimits(t *testing.T, ws []string) {
	t.Helper()
	total := 0
	for _, w := range ws {
		if n := utf8.RuneCountInString(w); n > 256 || len(w) > review.MaxWarningBytes {
			t.Errorf("a warning of %d characters (%d bytes) reaches the API server: %q", n, len(w), w)
		}
		total += len(w)
	}
	if total > 4096 {
		t.Errorf("the warnings total %d bytes, above the API server's 4096", total)
	}
}

func TestEveryWarningTemplateAtItsLongestFitsTheAPIServerLimits(t *testing.T) {
	templates := longestTemplates(t)
	for _, want := range []string{"envpolicy/env-policy-warn/anyIn", "envpolicy/env-policy-warn/anyNotIn",
		"envpolicy/env-policy-warn/allAreUsed", "envpolicy/env-policy-warn/notAllAreUsed", "plan/volume-disk", "plan/file-mode-world-readable", "plan/watch-seconds-low", "plan/tls-skip-verify",
		"plan/revoke-on-shutdown-off", "plan/history-volume", "deprecated-key/replaced", "deprecated-key/removed"} {
		if len(templates[want]) == 0 {
			t.Errorf("the template %s was not produced", want)
		}
	}
	var all []string
	for name, texts := range templates {
		t.Logf("%s: %d warning(s), the longest %d bytes", name, len(texts), longest(texts))
		all = append(all, texts...)
		t.Run(name+" is answered within the limits", func(t *testing.T) {
			got := answerWarnings(t, &warningsDecider{outcome: deciderv1.Outcome_OUTCOME_SKIP, warnings: texts}, handler.PathMutate, "")
			if len(got) != len(texts) {
				t.Fatalf("%d warnings answered for %d", len(got), len(texts))
			}
			checkWarningLimits(t, got)
			for i := range got {
				if len(texts[i]) <= 256 && got[i] != texts[i] {
					t.Errorf("a warning that fits was changed: %q → %q", texts[i], got[i])
				}
			}
		})
	}
	t.Run("all of them at once are answered within the total limit, saying how many were left out", func(t *testing.T) {
		// Three times over: every named render repeats rules 2–4.
		all = append(append(all, all...), all...)
		got := answerWarnings(t, &warningsDecider{outcome: deciderv1.Outcome_OUTCOME_SKIP, warnings: all}, handler.PathMutate, "")
		checkWarningLimits(t, got)
		if last := got[len(got)-1]; !strings.Contains(last, "more warning") {
			t.Errorf("the last warning does not say that some were left out: %q", last)
		}
	})
	t.Run("the front door's own decider-error warning at its longest keeps its flag", func(t *testing.T) {
		for _, path := range []string{handler.PathMutate, handler.PathValidate} {
			err := status.Error(codes.Unavailable, strings.Repeat("é", 1000))
			got := answerWarnings(t, &warningsDecider{err: err}, path, handler.OnErrorAllow)
			checkWarningLimits(t, got)
			if len(got) != 1 || !strings.HasSuffix(got[0], "=allow") {
				t.Errorf("%s: %q", path, got)
			}
		}
	})
}

func longest(ws []string) int {
	n := 0
	for _, w := range ws {
		n = max(n, len(w))
	}
	return n
}
