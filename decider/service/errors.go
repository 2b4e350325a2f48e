package service

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// Error is a broken request or an unavailable decider (spec 06 §6). It
// carries its gRPC code: a refusal is never an Error.
type Error struct {
	Code    codes.Code
	Message string
}

func (e *Error) Error() string { return e.Message }

// GRPCStatus lets grpc-go answer with the error's code.
func (e *Error) GRPCStatus() *status.Status { return status.New(e.Code, e.Message) }

// errNoInstallation: no installation is held yet (serve during start).
var errNoInstallation = &Error{Code: codes.Unavailable, Message: "no installation is loaded yet"}

// errClassesNotSynced: classes are on and the watch has not synced yet.
var errClassesNotSynced = &Error{Code: codes.Unavailable, Message: "the classes have not synced from the API server yet"}

// internalError is the answer to a recovered panic (spec 06 §6); the panic
// and its stack go to the decider's log only.
func internalError(decisionID string) *Error {
	return &Error{Code: codes.Internal, Message: "internal error (decision " + decisionID + ")"}
}

func invalidArgument(message string) *Error {
	return &Error{Code: codes.InvalidArgument, Message: message}
}

// checkRequest applies the request checks of spec 06 §6 (step B0).
func checkRequest(req *deciderv1.DecisionRequest) error {
	switch req.GetPurpose() {
	case deciderv1.Purpose_PURPOSE_MUTATE, deciderv1.Purpose_PURPOSE_VALIDATE:
	case deciderv1.Purpose_PURPOSE_UNSPECIFIED:
		return invalidArgument("decision request: purpose is unspecified; send PURPOSE_MUTATE or PURPOSE_VALIDATE")
	default:
		return invalidArgument("decision request: purpose " + req.GetPurpose().String() + " is not known")
	}
	if req.GetPod() == nil {
		return invalidArgument("decision request: pod is missing")
	}
	if _, known := deciderv1.DecisionView_name[int32(req.GetView())]; !known {
		return invalidArgument("decision request: view " + req.GetView().String() + " is not known; send DECISION_VIEW_PLAN or DECISION_VIEW_FULL, or leave it unset for FULL")
	}
	kind := req.GetPod().GetResourceKind()
	if _, known := deciderv1.ResourceKind_name[int32(kind)]; !known {
		return invalidArgument("decision request: resource_kind " + kind.String() + " is not known")
	}
	switch req.GetPurpose() {
	case deciderv1.Purpose_PURPOSE_VALIDATE:
		if kind == deciderv1.ResourceKind_RESOURCE_KIND_UNSPECIFIED {
			return invalidArgument("decision request: PURPOSE_VALIDATE needs a resource_kind")
		}
	case deciderv1.Purpose_PURPOSE_MUTATE:
		if kind != deciderv1.ResourceKind_RESOURCE_KIND_UNSPECIFIED && kind != deciderv1.ResourceKind_RESOURCE_KIND_POD {
			return invalidArgument("decision request: PURPOSE_MUTATE admits pods only, not " + kind.String())
		}
	}
	return nil
}
