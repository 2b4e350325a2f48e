package handler

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/patch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/refusallabel"
)

func TestFromDecision(t *testing.T) {
	p := &patch.Patch{Ops: []patch.Op{{Op: "add", Path: "/x"}, {Op: "add", Path: "/y"}}, JSON: []byte(`[]`)}
	refusal := &deciderv1.Refusal{Reason: deciderv1.RefusalReason_REFUSAL_REASON_ENV_POLICY, ReasonSlug: "DynamicConfigEnvPolicy",
		HttpCode: 422, Message: "no", Check: "E1"}
	tests := []struct {
		name    string
		d       *deciderv1.Decision
		p       *builtPatch
		want    string
		outcome string
		reason  string
		check   string
		ops     int
		refusal string
	}{
		{
			name:    "a skip is allowed unchanged and recorded with its skip reason",
			d:       &deciderv1.Decision{Outcome: deciderv1.Outcome_OUTCOME_SKIP, SkipReason: deciderv1.SkipReason_SKIP_REASON_ALREADY_INJECTED},
			want:    `{"allowed":true,"uid":"u"}`,
			outcome: metrics.OutcomeSkipped, reason: "SKIP_REASON_ALREADY_INJECTED",
		},
		{
			name:    "an allow is allowed unchanged and carries the decision's audit annotations",
			d:       &deciderv1.Decision{Outcome: deciderv1.Outcome_OUTCOME_ALLOW, AuditAnnotations: map[string]string{"revision": "r"}},
			want:    `{"allowed":true,"auditAnnotations":{"revision":"r"},"uid":"u"}`,
			outcome: metrics.OutcomeAllowed,
		},
		{
			name:    "an inject is patched with the base64 JSON Patch and records its op count",
			d:       &deciderv1.Decision{Outcome: deciderv1.Outcome_OUTCOME_INJECT, Warnings: []*deciderv1.Warning{{Code: "c", Message: "first"}}},
			p:       newBuiltPatch(p),
			want:    `{"allowed":true,"patch":"W10=","patchType":"JSONPatch","uid":"u","warnings":["first"]}`,
			outcome: metrics.OutcomePatched, ops: 2,
		},
		{
			name:    "a refusal is denied with the first refusal's code, slug and message and counted under its reason",
			d:       &deciderv1.Decision{Outcome: deciderv1.Outcome_OUTCOME_REFUSE, Refusals: []*deciderv1.Refusal{refusal, {ReasonSlug: "Second", HttpCode: 400}}},
			want:    `{"allowed":false,"status":{"code":422,"message":"no","reason":"DynamicConfigEnvPolicy"},"uid":"u"}`,
			outcome: metrics.OutcomeRefused, reason: "DynamicConfigEnvPolicy", check: "E1", refusal: refusallabel.EnvPolicy,
		},
		{
			name:    "an empty audit annotation map is left out of the answer",
			d:       &deciderv1.Decision{Outcome: deciderv1.Outcome_OUTCOME_ALLOW, AuditAnnotations: map[string]string{}},
			want:    `{"allowed":true,"uid":"u"}`,
			outcome: metrics.OutcomeAllowed,
		},
		{
			name: "warnings beyond the API server's limits are fitted, not dropped silently",
			d: &deciderv1.Decision{Outcome: deciderv1.Outcome_OUTCOME_ALLOW,
				Warnings: []*deciderv1.Warning{{Message: strings.Repeat("w", 300)}}},
			want:    `{"allowed":true,"uid":"u","warnings":["` + review.FitWarning(strings.Repeat("w", 300)) + `"]}`,
			outcome: metrics.OutcomeAllowed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := fromDecision("u", tt.d, tt.p)
			if got := string(review.Encode(v.resp)); got != `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":`+tt.want+`}` {
				t.Errorf("answer %s, want response %s", got, tt.want)
			}
			if v.outcome != tt.outcome || v.reason != tt.reason || v.check != tt.check || v.patchOps != tt.ops || v.refusal != tt.refusal {
				t.Errorf("verdict %q %q %q %d %q, want %q %q %q %d %q", v.outcome, v.reason, v.check, v.patchOps, v.refusal,
					tt.outcome, tt.reason, tt.check, tt.ops, tt.refusal)
			}
		})
	}
}

func TestTheVocabulary(t *testing.T) {
	tests := []struct {
		name string
		resp *review.Response
		want string
	}{
		{"allowed admits the object unchanged", allowed("u"), `{"allowed":true,"uid":"u"}`},
		{"denied carries exactly code, message and reason", denied("u", 400, "DynamicConfigMalformed", "bad"),
			`{"allowed":false,"status":{"code":400,"message":"bad","reason":"DynamicConfigMalformed"},"uid":"u"}`},
		{"patched admits with a JSONPatch", patched("u", newBuiltPatch(&patch.Patch{JSON: []byte(`[{"op":"remove","path":"/a"}]`)})),
			`{"allowed":true,"patch":"W3sib3AiOiJyZW1vdmUiLCJwYXRoIjoiL2EifV0=","patchType":"JSONPatch","uid":"u"}`},
		{"errored admits with the warning and the decider-unavailable audit annotation", errored("u", "Unavailable", "why"),
			`{"allowed":true,"auditAnnotations":{"decider-unavailable":"Unavailable"},"uid":"u","warnings":["why"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(review.Encode(tt.resp)); got != `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":`+tt.want+`}` {
				t.Errorf("answer %s, want response %s", got, tt.want)
			}
		})
	}
}
