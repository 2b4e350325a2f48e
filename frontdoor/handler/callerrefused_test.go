package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// refusingCaller is a decider (a real gRPC server) that refuses every call
// with code, as a decider with --callers or --auth-token-file does.
func refusingCaller(t *testing.T, code codes.Code, message string) deciderv1.DeciderServiceClient {
	client, _ := serveDecider(t, &fakeDecider{decide: func(context.Context, *deciderv1.DecisionRequest) (*deciderv1.DecisionResponse, error) {
		return nil, status.Error(code, message)
	}})
	return client
}

func TestAnAuthorizationFailureDeniesWhateverTheFailureFlagsSay(t *testing.T) {
	deployment := podRequest("u", `{"metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[{"name":"app"}]}}}}`)
	deployment.Kind = review.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	const (
		denied       = "this caller may not speak for the cluster named in the request"
		unknown      = "a credential of a known caller is required"
		permissionTo = `the decider's callers file (--callers) does not let this front door's caller speak for cluster "west": add it to that caller's clusters`
		unknownFix   = `the decider does not know this front door's credential: list its token digest or client certificate in the decider's callers file (--callers) with cluster "west" among its clusters, or give it the decider's --auth-token-file token`
	)
	for _, code := range []struct {
		code            codes.Code
		message, fix    string
		ownClusterTrail string
	}{
		{codes.PermissionDenied, denied, permissionTo, `speak for the decider's own cluster (this front door sends no --cluster-name): add it`},
		{codes.Unauthenticated, unknown, unknownFix, `with the decider's own cluster (this front door sends no --cluster-name) among its clusters`},
	} {
		for _, policy := range []string{OnErrorDeny, OnErrorAllow} {
			for _, path := range []struct {
				path, flag, what string
				req              review.Request
			}{
				{PathMutate, "--on-decider-error", "this pod could not be decided", podRequest("u", example1Pod)},
				{PathValidate, "--on-decider-error-validate", "this Deployment could not be checked against the environment-variable policy", deployment},
			} {
				name := code.code.String() + " from the decider denies " + path.path + " under " + path.flag + "=" + policy
				t.Run(name, func(t *testing.T) {
					reg := prometheus.NewRegistry()
					var logs bytes.Buffer
					h := New(Config{Decider: refusingCaller(t, code.code, code.message), Cluster: "west", OnDeciderError: policy,
						Metrics: metrics.NewFrontdoor(reg), Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
					resp, body := answer(t, h, path.path, requestReview(t, path.req))
					want := "dynamic-config.rs: the decider refused this front door (" + code.code.String() + ": " + code.message + "), so " + path.what +
						" — an authorization failure denies whatever " + path.flag + " says: " + code.fix
					if resp.Allowed || resp.Status == nil || resp.Status.Code != 403 || resp.Status.Reason != slugCallerRefused || resp.Status.Message != want {
						t.Fatalf("answer %s\nwant a 403 %s denial: %s", body, slugCallerRefused, want)
					}
					if len(resp.Warnings) != 0 || len(resp.AuditAnnotations) != 0 {
						t.Errorf("a denial carries warnings or audit annotations: %s", body)
					}
					webhook := strings.TrimPrefix(path.path, "/")
					if n := authorizationFailures(t, reg, webhook, code.code.String()); n != 1 {
						t.Errorf("dynamic_config_decider_authorization_failures_total{webhook=%q,code=%q} = %v, want 1", webhook, code.code, n)
					}
					var line map[string]any
					if err := json.Unmarshal(logs.Bytes(), &line); err != nil || line["level"] != "ERROR" || line["cluster"] != "west" ||
						line["reason"] != slugCallerRefused || line["outcome"] != metrics.OutcomeDeciderErrorDenied {
						t.Errorf("log line %s (%v)", logs.String(), err)
					}
				})
			}
		}
		t.Run(code.code.String()+" names the decider's own cluster when this front door names none", func(t *testing.T) {
			h := New(Config{Decider: refusingCaller(t, code.code, code.message), OnDeciderError: OnErrorAllow})
			resp, body := answer(t, h, PathMutate, requestReview(t, podRequest("u", example1Pod)))
			if resp.Allowed || !strings.Contains(resp.Status.Message, code.ownClusterTrail) {
				t.Fatalf("answer %s\nwant a denial naming %q", body, code.ownClusterTrail)
			}
		})
	}
	t.Run("an outage is still ruled by --on-decider-error=allow", func(t *testing.T) {
		h := New(Config{Decider: refusingCaller(t, codes.Unavailable, "connection refused"), Cluster: "west", OnDeciderError: OnErrorAllow})
		if resp, body := answer(t, h, PathMutate, requestReview(t, podRequest("u", example1Pod))); !resp.Allowed {
			t.Fatalf("answer %s; an Unavailable decider under allow admits", body)
		}
	})
}

// authorizationFailures is the value of
// dynamic_config_decider_authorization_failures_total{webhook, code}.
func authorizationFailures(t *testing.T, reg *prometheus.Registry, webhook, code string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "dynamic_config_decider_authorization_failures_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["webhook"] == webhook && labels["code"] == code {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no series dynamic_config_decider_authorization_failures_total{webhook=%q,code=%q}", webhook, code)
	return 0
}
