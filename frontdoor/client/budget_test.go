package client

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
)

// sizedService answers GetInstallation with a revision of n bytes.
type sizedService struct {
	deciderv1.UnimplementedDeciderServiceServer
	n int
}

func (s *sizedService) GetInstallation(context.Context, *deciderv1.GetInstallationRequest) (*deciderv1.GetInstallationResponse, error) {
	return &deciderv1.GetInstallationResponse{Revision: strings.Repeat("r", s.n)}, nil
}

func (s *sizedService) Decide(context.Context, *deciderv1.DecisionRequest) (*deciderv1.DecisionResponse, error) {
	return &deciderv1.DecisionResponse{}, nil
}

// Issue 17: the front door's client holds the same budget as the decider,
// in both directions, instead of grpc-go's 4 MiB receive default.
func TestTheClientHoldsTheMessageBudgetToTheByte(t *testing.T) {
	const n = 5 << 20 // above grpc-go's 4 MiB default
	answer := proto.Size(&deciderv1.GetInstallationResponse{Revision: strings.Repeat("r", n)})
	addr := serve(t, &sizedService{n: n})
	get := func(budget int) error {
		c, err := New(Config{Target: addr, Plaintext: true, MaxMessageBytes: budget})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return call(t, c)
	}
	t.Run("the default budget receives an answer above grpc-go's 4 MiB", func(t *testing.T) {
		if answer > msgbudget.Bytes(0) {
			t.Fatalf("the test answer (%d bytes) is above the default budget", answer)
		}
		if err := get(0); err != nil {
			t.Errorf("a %d-byte answer under the default budget: %v", answer, err)
		}
	})
	t.Run("an answer of exactly the budget is received", func(t *testing.T) {
		if err := get(answer); err != nil {
			t.Errorf("a %d-byte answer under a budget of %d: %v", answer, answer, err)
		}
	})
	t.Run("an answer one byte above the budget is ResourceExhausted", func(t *testing.T) {
		if err := get(answer - 1); status.Code(err) != codes.ResourceExhausted {
			t.Errorf("got %v, want ResourceExhausted", err)
		}
	})
	t.Run("a request above the budget is not sent", func(t *testing.T) {
		req := &deciderv1.DecisionRequest{Pod: &deciderv1.PodFacts{Name: strings.Repeat("p", 1024)}}
		size := proto.Size(req)
		for _, c := range []struct {
			budget int
			want   codes.Code
		}{{size, codes.OK}, {size - 1, codes.ResourceExhausted}} {
			cl, err := New(Config{Target: addr, Plaintext: true, MaxMessageBytes: c.budget})
			if err != nil {
				t.Fatal(err)
			}
			_, err = cl.Decide(context.Background(), req)
			cl.Close()
			if status.Code(err) != c.want {
				t.Errorf("a %d-byte request under a budget of %d: %v, want %v", size, c.budget, err, c.want)
			}
			if over := c.want != codes.OK; msgbudget.IsOverBudget(err) != over {
				t.Errorf("a %d-byte request under a budget of %d: %v is typed over budget: %v, want %v", size, c.budget, err, !over, over)
			}
		}
	})
	t.Run("a request above the budget is refused in grpc-go's own words", func(t *testing.T) {
		req := &deciderv1.DecisionRequest{Pod: &deciderv1.PodFacts{Name: strings.Repeat("p", 1024)}}
		size := proto.Size(req)
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(size-1)))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, grpcErr := deciderv1.NewDeciderServiceClient(conn).Decide(context.Background(), req)
		cl, err := New(Config{Target: addr, Plaintext: true, MaxMessageBytes: size - 1})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		_, typedErr := cl.Decide(context.Background(), req)
		if status.Code(grpcErr) != codes.ResourceExhausted || typedErr == nil || typedErr.Error() != grpcErr.Error() {
			t.Fatalf("the typed refusal %v differs from grpc-go's %v", typedErr, grpcErr)
		}
	})
}
