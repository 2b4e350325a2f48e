package msgbudget

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestOverBudgetError(t *testing.T) {
	typed := &OverBudgetError{Size: 20, Budget: 16}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"the typed refusal is over budget", typed, true},
		{"the typed refusal wrapped is over budget", fmt.Errorf("decide: %w", typed), true},
		{"a status in the same words is not the typed refusal", status.Error(codes.ResourceExhausted, "trying to send message larger than max (20 vs. 16)"), false},
		{"no error is not over budget", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsOverBudget(tt.err); got != tt.want {
				t.Fatalf("IsOverBudget(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
	t.Run("the typed refusal is ResourceExhausted in grpc-go's words", func(t *testing.T) {
		st := status.Convert(typed)
		if st.Code() != codes.ResourceExhausted || st.Message() != "trying to send message larger than max (20 vs. 16)" {
			t.Fatalf("status %v", st)
		}
	})
}
