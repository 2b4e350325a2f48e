package review

import (
	"errors"
	"strings"
	"testing"
)

func TestEncodeIsCompactSortedAndUnescaped(t *testing.T) {
	got := string(Encode(&Response{
		UID: "u", Allowed: false,
		Status:           &Status{Code: 400, Message: `a <b> & "c"`, Reason: "DynamicConfigMalformed"},
		Warnings:         []string{"w1", "w2"},
		AuditAnnotations: map[string]string{"revision": "sha256:x", "env-policy-rule-0": "y"},
	}))
	want := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":false,` +
		`"auditAnnotations":{"env-policy-rule-0":"y","revision":"sha256:x"},` +
		`"status":{"code":400,"message":"a <b> & \"c\"","reason":"DynamicConfigMalformed"},"uid":"u","warnings":["w1","w2"]}}`
	if got != want {
		t.Fatalf("Encode() =\n%s\nwant\n%s", got, want)
	}
	if got := string(Encode(&Response{Allowed: true})); got != `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":true,"uid":""}}` {
		t.Fatalf("a minimal answer = %s", got)
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string
	}{
		{"a v1 review with a request decodes", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","object":{"a":1},"dryRun":true}}`, ""},
		{"a body that is not JSON is refused", `{`, "the body is not JSON"},
		{"a v1beta1 review is refused", `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{}}`, `apiVersion "admission.k8s.io/v1beta1" kind "AdmissionReview"`},
		{"another kind is refused", `{"apiVersion":"admission.k8s.io/v1","kind":"Pod","request":{}}`, `not an admission.k8s.io/v1 AdmissionReview`},
		{"an empty object is refused", `{}`, "without apiVersion and kind"},
		{"a review without a request is refused", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{}}`, "carries no request"},
		{"a field of the wrong type is refused", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"dryRun":"yes"}}`, "request.dryRun has the wrong type"},
		{"a JSON array is refused", `[]`, "the body is not an AdmissionReview"},
		{"a JSON array of numbers is named as an array, without an empty field name", `[1,2,3]`,
			"the body is not an AdmissionReview: it is a JSON array, not an object"},
		{"a JSON string is named as a string", `"review"`, "the body is not an AdmissionReview: it is a JSON string, not an object"},
		{"a request without a uid is refused naming request.uid", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"object":{"a":1}}}`,
			"request.uid is missing or empty"},
		{"a request with an empty uid is refused naming request.uid", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":""}}`,
			"request.uid is missing or empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := Decode([]byte(tt.body))
			if tt.wantErr == "" {
				if err != nil || req.UID != "u" || !req.IsDryRun() || !req.HasObject() || req.HasOldObject() {
					t.Fatalf("Decode() = %+v, %v", req, err)
				}
				return
			}
			var de *DecodeError
			if err != nil && strings.Contains(err.Error(), "  ") {
				t.Errorf("the message has a double space: %q", err)
			}
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Decode() error = %v, want a DecodeError containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestNullObjectIsAbsent(t *testing.T) {
	req, err := Decode([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","object":null,"oldObject":null}}`))
	if err != nil {
		t.Fatal(err)
	}
	if req.HasObject() || req.HasOldObject() {
		t.Fatal("a null object counts as present")
	}
}

func TestTheAnswerEnvelopeIsWrittenIntoOneBufferOfItsSize(t *testing.T) {
	cases := []struct {
		name string
		resp *Response
	}{
		{"no response", nil},
		{"an allowed answer", &Response{UID: "u", Allowed: true}},
		{"a patch and many audit annotations", &Response{UID: "0c8f3f0e-8d4b-4a8e-9b1a-6f4f7f0f7f0f", Allowed: true,
			Patch: strings.Repeat("W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvdm9sdW1lcyJ9XQ==", 60), PatchType: PatchTypeJSONPatch,
			AuditAnnotations: map[string]string{
				"dynamic-config.rs/decision-id": "01JEXAMPLE0000000000000000", "dynamic-config.rs/outcome": "inject",
				"dynamic-config.rs/installation-revision": strings.Repeat("f", 64), "dynamic-config.rs/cluster": "eu-1",
				"dynamic-config.rs/classes-revision": strings.Repeat("e", 64), "dynamic-config.rs/decider-role": "follower",
			},
			Warnings: []string{"dynamic-config.rs/x is deprecated", "another warning"}}},
		{"a refusal", &Response{UID: "u", Status: &Status{Code: 403, Message: strings.Repeat("refused because ", 40), Reason: "Forbidden"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := Encode(c.resp)
			if len(b) > encodedSize(c.resp) {
				t.Errorf("the envelope is %d bytes, more than the %d Encode sized its buffer for", len(b), encodedSize(c.resp))
			}
		})
	}
}
