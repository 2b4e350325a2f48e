package handler

import (
	"context"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
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
