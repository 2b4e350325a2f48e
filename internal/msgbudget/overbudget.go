package msgbudget

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// OverBudgetError is a message of the hop refused before it is sent because
// it is larger than the budget: the front door's question (frontdoor/client
// checks it) — the decider's answer above the budget is already a
// DynamicConfigMalformed refusal (decider/service LimitAnswers). It is a
// gRPC ResourceExhausted status with grpc-go's own words for the same
// refusal, so that the code counted and the text shown do not change.
type OverBudgetError struct {
	Size   int
	Budget int
}

func (e *OverBudgetError) Error() string { return e.GRPCStatus().Err().Error() }

// GRPCStatus implements the interface status.FromError and status.Code read.
func (e *OverBudgetError) GRPCStatus() *status.Status {
	return status.New(codes.ResourceExhausted, fmt.Sprintf("trying to send message larger than max (%d vs. %d)", e.Size, e.Budget))
}

// IsOverBudget reports whether err is an *OverBudgetError (wrapped or not).
func IsOverBudget(err error) bool {
	if err == nil { // the common case, without errors.As's allocation
		return false
	}
	var ob *OverBudgetError
	return errors.As(err, &ob)
}
