package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// fakeDecider is a DeciderService that answers with decide and records what
// it was asked.
type fakeDecider struct {
	deciderv1.UnimplementedDeciderServiceServer
	decide func(context.Context, *deciderv1.DecisionRequest) (*deciderv1.DecisionResponse, error)

	mu       sync.Mutex
	requests []*deciderv1.DecisionRequest
}

func (f *fakeDecider) Decide(ctx context.Context, req *deciderv1.DecisionRequest) (*deciderv1.DecisionResponse, error) {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	return f.decide(ctx, req)
}

func (f *fakeDecider) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func (f *fakeDecider) last() *deciderv1.DecisionRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) == 0 {
		return nil
	}
	return f.requests[len(f.requests)-1]
}

// answering returns a fake that always answers d.
func answering(d *deciderv1.Decision) *fakeDecider {
	return &fakeDecider{decide: func(context.Context, *deciderv1.DecisionRequest) (*deciderv1.DecisionResponse, error) {
		return &deciderv1.DecisionResponse{Decision: d}, nil
	}}
}

// serveDecider runs srv on a real gRPC server over bufconn and returns a
// client and a stop function (stopping makes the decider unreachable).
func serveDecider(t *testing.T, srv deciderv1.DeciderServiceServer) (deciderv1.DeciderServiceClient, func()) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer()
	deciderv1.RegisterDeciderServiceServer(gs, srv)
	go func() { _ = gs.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { gs.Stop(); lis.Close() }) }
	t.Cleanup(func() { conn.Close(); stop() })
	return deciderv1.NewDeciderServiceClient(conn), stop
}

// requestReview builds an AdmissionReview request body.
func requestReview(t testing.TB, req review.Request) []byte {
	t.Helper()
	b, err := json.Marshal(review.Review{APIVersion: review.APIVersion, Kind: review.Kind, Request: &req})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// podRequest is a CREATE review of a Pod.
func podRequest(uid string, pod string) review.Request {
	return review.Request{
		UID:       uid,
		Kind:      review.GroupVersionKind{Group: "", Version: "v1", Kind: "Pod"},
		Resource:  review.GroupVersionResource{Group: "", Version: "v1", Resource: "pods"},
		Namespace: "default",
		Operation: "CREATE",
		UserInfo:  review.UserInfo{Username: "alice"},
		Object:    json.RawMessage(pod),
	}
}

// post sends body to path and returns the recorded answer.
func post(t *testing.T, h http.Handler, path string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// answer posts a review and decodes the AdmissionResponse.
func answer(t *testing.T, h http.Handler, path string, body []byte) (*review.Response, string) {
	t.Helper()
	w := post(t, h, path, body)
	if w.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", w.Code, w.Body.String())
	}
	resp, err := review.DecodeAnswer(w.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return resp, w.Body.String()
}

const (
	revision = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"

	// example1Pod is the pod of spec 03 §7.1.
	example1Pod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"app","annotations":{` +
		`"dynamic-config.rs/inject":"true","dynamic-config.rs/source":"consul",` +
		`"dynamic-config.rs/endpoint":"http://consul:8500","dynamic-config.rs/key":"myapp/config.json",` +
		`"dynamic-config.rs/path":"/config/rendered.toml","team":"payments"}},` +
		`"spec":{"containers":[{"name":"app","image":"app:1","args":null,"env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}},{"name":"C"}]}]}}`
	plainPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"plain","annotations":{"team":"x"}},"spec":{"containers":[{"name":"app"}]}}`
)
