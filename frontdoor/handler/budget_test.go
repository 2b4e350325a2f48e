package handler

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
)

// budgetClient is a client of srv over bufconn whose calls hold to a
// message budget of budget bytes, as client.New sets it.
func budgetClient(t *testing.T, srv deciderv1.DeciderServiceServer, budget int) deciderv1.DeciderServiceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer()
	deciderv1.RegisterDeciderServiceServer(gs, srv)
	go func() { _ = gs.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(budget), grpc.MaxCallSendMsgSize(budget)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); gs.Stop(); lis.Close() })
	return deciderv1.NewDeciderServiceClient(conn)
}

// Issue 17: an answer (or a question) above the message budget refuses the
// pod as malformed — never the decider-error path, under either flag.
func TestAMessageAboveTheBudgetIsAMalformedRefusalNotADeciderError(t *testing.T) {
	d := injectDecision()
	size := proto.Size(&deciderv1.DecisionResponse{Decision: d})
	for _, flag := range []string{OnErrorDeny, OnErrorAllow} {
		t.Run("with --on-decider-error="+flag+" an answer of exactly the budget is used", func(t *testing.T) {
			h := New(Config{Decider: budgetClient(t, answering(d), size), OnDeciderError: flag})
			got, body := answer(t, h, PathMutate, requestReview(t, podRequest("u", example1Pod)))
			if !got.Allowed || got.Patch == "" {
				t.Fatalf("answer %s", body)
			}
		})
		t.Run("with --on-decider-error="+flag+" an answer one byte above the budget refuses the pod as malformed", func(t *testing.T) {
			h := New(Config{Decider: budgetClient(t, answering(d), size-1), OnDeciderError: flag})
			got, body := answer(t, h, PathMutate, requestReview(t, podRequest("u", example1Pod)))
			if got.Allowed || got.Status == nil || got.Status.Code != 400 || got.Status.Reason != "DynamicConfigMalformed" ||
				!strings.Contains(got.Status.Message, "message budget") || len(got.Warnings) != 0 {
				t.Fatalf("answer %s", body)
			}
		})
	}
	t.Run("a question above the budget refuses the pod as malformed on /validate too", func(t *testing.T) {
		h := New(Config{Decider: budgetClient(t, answering(d), 16), OnDeciderError: OnErrorAllow})
		got, body := answer(t, h, PathValidate, requestReview(t, podRequest("u", example1Pod)))
		if got.Allowed || got.Status == nil || got.Status.Reason != "DynamicConfigMalformed" {
			t.Fatalf("answer %s", body)
		}
	})
}

// refusing answers every Decide with err, as a client would.
type refusing struct {
	deciderv1.DeciderServiceClient
	err error
}

func (r refusing) Decide(context.Context, *deciderv1.DecisionRequest, ...grpc.CallOption) (*deciderv1.DecisionResponse, error) {
	return nil, r.err
}

func TestAMessageOverTheBudgetIsRecognisedByItsType(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		malformed bool
	}{
		{"the client's typed refusal of a question above the budget refuses the pod as malformed",
			&msgbudget.OverBudgetError{Size: 20, Budget: 16}, true},
		{"the typed refusal wrapped by a caller is still recognised",
			fmt.Errorf("decide: %w", &msgbudget.OverBudgetError{Size: 20, Budget: 16}), true},
		{"grpc-go's own refusal of a received message above its limit is recognised by its words",
			status.Error(codes.ResourceExhausted, "grpc: received message larger than max (20 vs. 16)"), true},
		{"another ResourceExhausted is a decider error",
			status.Error(codes.ResourceExhausted, "too many requests"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(Config{Decider: refusing{err: tt.err}, OnDeciderError: OnErrorDeny})
			got, body := answer(t, h, PathMutate, requestReview(t, podRequest("u", example1Pod)))
			if malformed := got.Status != nil && got.Status.Reason == "DynamicConfigMalformed"; malformed != tt.malformed {
				t.Fatalf("malformed %v, want %v: answer %s", malformed, tt.malformed, body)
			}
			if tt.malformed && !strings.Contains(got.Status.Message, "(20 vs. 16)") {
				t.Fatalf("the refusal does not carry gRPC's words: %s", body)
			}
		})
	}
}
