// Package review decodes the AdmissionReview admission.k8s.io/v1 the API
// server sends and encodes the answer (spec 03 §5, 04 §1, §6). Only v1 is
// spoken. Answers are compact JSON with member names in ascending byte order
// and HTML escaping off (spec 03 §4.4): the struct fields below are declared
// in that order on purpose.
package review

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonout"
)

// The envelope's fixed identity.
const (
	APIVersion = "admission.k8s.io/v1"
	Kind       = "AdmissionReview"
	// PatchTypeJSONPatch is the only patch type the front door answers with.
	PatchTypeJSONPatch = "JSONPatch"
)

// Review is the AdmissionReview envelope; the API server fills Request, the
// front door answers with Response.
type Review struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Request    *Request  `json:"request,omitempty"`
	Response   *Response `json:"response,omitempty"`
}

// Request is the part of an AdmissionRequest the front door reads. Object and
// OldObject stay raw: the object is decoded once, by the facts extraction,
// and the patch is built against the JSON as received.
type Request struct {
	UID         string               `json:"uid"`
	Kind        GroupVersionKind     `json:"kind"`
	Resource    GroupVersionResource `json:"resource"`
	SubResource string               `json:"subResource,omitempty"`
	Name        string               `json:"name,omitempty"`
	Namespace   string               `json:"namespace,omitempty"`
	Operation   string               `json:"operation"`
	UserInfo    UserInfo             `json:"userInfo"`
	Object      json.RawMessage      `json:"object,omitempty"`
	OldObject   json.RawMessage      `json:"oldObject,omitempty"`
	DryRun      *bool                `json:"dryRun,omitempty"`
}

// GroupVersionKind is request.kind.
type GroupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// GroupVersionResource is request.resource.
type GroupVersionResource struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
}

// UserInfo is the requesting user; only the name is read (for logs).
type UserInfo struct {
	Username string `json:"username,omitempty"`
}

// Response is the AdmissionResponse. Members are declared in ascending byte
// order of their JSON names.
type Response struct {
	Allowed          bool              `json:"allowed"`
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
	Patch            string            `json:"patch,omitempty"`
	PatchType        string            `json:"patchType,omitempty"`
	Status           *Status           `json:"status,omitempty"`
	UID              string            `json:"uid"`
	Warnings         []string          `json:"warnings,omitempty"`
}

// Status is a denial's status: exactly code, message and reason (spec 04 §1).
type Status struct {
	Code    int32  `json:"code"`
	Message string `json:"message"`
	Reason  string `json:"reason"`
}

// IsDryRun reports request.dryRun.
func (r *Request) IsDryRun() bool { return r.DryRun != nil && *r.DryRun }

// HasObject reports whether request.object is present and not null.
func (r *Request) HasObject() bool { return present(r.Object) }

// HasOldObject reports whether request.oldObject is present and not null.
func (r *Request) HasOldObject() bool { return present(r.OldObject) }

func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// DecodeError says why a body is not a v1 AdmissionReview with a request; its
// text is the HTTP 400 body (spec 04 §6).
type DecodeError struct{ msg string }

func (e *DecodeError) Error() string { return e.msg }

// Decode reads a body as an admission.k8s.io/v1 AdmissionReview carrying a
// request. Every failure is a *DecodeError.
func Decode(body []byte) (*Request, error) {
	var rv Review
	if err := json.Unmarshal(body, &rv); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typ) && typ.Field == "":
			// The body as a whole is not an object (an array, a string, …).
			return nil, &DecodeError{fmt.Sprintf("the body is not an AdmissionReview: it is a JSON %s, not an object", typ.Value)}
		case errors.As(err, &typ):
			return nil, &DecodeError{fmt.Sprintf("the body is not an AdmissionReview: %s has the wrong type (%s)", typ.Field, typ.Value)}
		case errors.As(err, &syntax):
			return nil, &DecodeError{fmt.Sprintf("the body is not JSON: %v", err)}
		default:
			return nil, &DecodeError{fmt.Sprintf("the body is not an AdmissionReview: %v", err)}
		}
	}
	if rv.APIVersion != APIVersion || rv.Kind != Kind {
		return nil, &DecodeError{fmt.Sprintf("the body is %s, not an %s %s",
			describe(rv.APIVersion, rv.Kind), APIVersion, Kind)}
	}
	if rv.Request == nil {
		return nil, &DecodeError{"the AdmissionReview carries no request"}
	}
	if rv.Request.UID == "" {
		// The answer must echo the uid; without one the API server cannot
		// match it, so the review is refused like one without a request.
		return nil, &DecodeError{"the AdmissionReview request carries no uid: request.uid is missing or empty"}
	}
	return rv.Request, nil
}

func describe(apiVersion, kind string) string {
	if apiVersion == "" && kind == "" {
		return "a JSON value without apiVersion and kind"
	}
	return fmt.Sprintf("apiVersion %q kind %q", apiVersion, kind)
}

// Encode writes the answer envelope for resp: compact, member names sorted,
// HTML escaping off, no trailing newline.
func Encode(resp *Response) []byte {
	return appendResponse(make([]byte, 0, encodedSize(resp)), resp)
}

// encodedSize is what the answer envelope for r takes before any escaping:
// one buffer of it is written without growing (the audit annotations alone
// outgrew a fixed allowance and doubled the buffer).
func encodedSize(r *Response) int {
	size := 256 // the member names, the literals, the UID
	if r == nil {
		return size
	}
	size += len(r.Patch)
	for k, v := range r.AuditAnnotations {
		size += len(k) + len(v) + 6 // "k":"v",
	}
	for _, w := range r.Warnings {
		size += len(w) + 3 // "w",
	}
	if r.Status != nil {
		size += len(r.Status.Message) + len(r.Status.Reason)
	}
	return size
}

// DecodeAnswer reads an answer envelope (the front door's output) back; for
// the offline door and tests.
func DecodeAnswer(body []byte) (*Response, error) {
	var rv Review
	if err := json.Unmarshal(body, &rv); err != nil {
		return nil, fmt.Errorf("decode AdmissionReview answer: %w", err)
	}
	if rv.Response == nil {
		return nil, errors.New("decode AdmissionReview answer: no response")
	}
	return rv.Response, nil
}

// appendResponse writes the answer envelope (Encode) member by member, in
// the order and with the omissions of the struct tags of Review and
// Response.
func appendResponse(dst []byte, r *Response) []byte {
	dst = append(dst, `{"apiVersion":`...)
	dst = jsonout.AppendString(dst, APIVersion)
	dst = append(dst, `,"kind":`...)
	dst = jsonout.AppendString(dst, Kind)
	if r == nil {
		return append(dst, '}')
	}
	dst = append(dst, `,"response":{"allowed":`...)
	dst = strconv.AppendBool(dst, r.Allowed)
	if len(r.AuditAnnotations) > 0 {
		dst = append(dst, `,"auditAnnotations":`...)
		dst = jsonout.AppendStringMap(dst, r.AuditAnnotations)
	}
	if r.Patch != "" {
		dst = append(dst, `,"patch":`...)
		dst = jsonout.AppendString(dst, r.Patch)
	}
	if r.PatchType != "" {
		dst = append(dst, `,"patchType":`...)
		dst = jsonout.AppendString(dst, r.PatchType)
	}
	if s := r.Status; s != nil {
		dst = append(dst, `,"status":{"code":`...)
		dst = strconv.AppendInt(dst, int64(s.Code), 10)
		dst = append(dst, `,"message":`...)
		dst = jsonout.AppendString(dst, s.Message)
		dst = append(dst, `,"reason":`...)
		dst = jsonout.AppendString(dst, s.Reason)
		dst = append(dst, '}')
	}
	dst = append(dst, `,"uid":`...)
	dst = jsonout.AppendString(dst, r.UID)
	if len(r.Warnings) > 0 {
		dst = append(dst, `,"warnings":`...)
		dst = jsonout.AppendStrings(dst, r.Warnings)
	}
	return append(dst, `}}`...)
}
