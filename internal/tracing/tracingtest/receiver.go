// Package tracingtest is an in-process OTLP/HTTP trace receiver for tests: a
// small collector that accepts POST /v1/traces (binary protobuf, gzip or
// not), as a real collector does, and keeps every span it was sent.
package tracingtest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, flattened.
type Span struct {
	Service  string // the resource's service.name
	Name     string
	Kind     tracepb.Span_SpanKind
	TraceID  string
	SpanID   string
	ParentID string // "" for a root span
	Attrs    map[string]string
	Status   tracepb.Status_StatusCode
}

// Receiver is the test collector.
type Receiver struct {
	// URL is the receiver's base URL (http://127.0.0.1:port): what
	// --otlp-endpoint takes.
	URL string

	mu       sync.Mutex
	spans    []Span
	problems []string
	header   http.Header
}

// NewReceiver starts a receiver, stopped when the test ends.
func NewReceiver(tb testing.TB) *Receiver {
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	tb.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		r.problem(req.Method + " " + req.URL.Path + " " + req.Header.Get("Content-Type"))
		http.Error(w, "want POST /v1/traces application/x-protobuf", http.StatusBadRequest)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// ExportTraceServiceRequest and TracesData share their wire form:
	// field 1, the repeated ResourceSpans.
	var msg tracepb.TracesData
	if err := proto.Unmarshal(data, &msg); err != nil {
		r.problem("body: " + err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.header = req.Header.Clone()
	for _, rs := range msg.GetResourceSpans() {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, Span{
					Service: service, Name: s.GetName(), Kind: s.GetKind(),
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()), Attrs: attrs(s.GetAttributes()),
					Status: s.GetStatus().GetCode(),
				})
			}
		}
	}
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK) // an empty ExportTraceServiceResponse: full success
}

func (r *Receiver) problem(p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, p)
}

// Spans are the spans received so far, sorted by service and name.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]Span(nil), r.spans...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Service != out[j].Service {
			return out[i].Service < out[j].Service
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Header is the last accepted request's header.
func (r *Receiver) Header() http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.header.Clone()
}

// Problems are the requests the receiver refused (not OTLP/HTTP).
func (r *Receiver) Problems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.problems...)
}

// attrs flattens attributes to text (ints and bools as proto text).
func attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.GetKey()] = v.GetStringValue()
		default:
			out[kv.GetKey()] = v.String()
		}
	}
	return out
}
