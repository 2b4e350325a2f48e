package server

import (
	"context"
	"errors"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/internal/podcaps"
	"github.com/dynamic-config-admission/dynamic-config/internal/wirecodec"
)

// capped is desc with every unary method's request received undecoded and
// decoded by decodeCapped: the codec refuses a pod above the caps before
// anything is unmarshalled (internal/wirecodec, internal/podcaps), and
// gRPC would answer that refusal INTERNAL, as any codec error; the caller's
// mistake is INVALID_ARGUMENT naming the field and the cap (issue 38).
func capped(desc *grpc.ServiceDesc) *grpc.ServiceDesc {
	d := *desc
	d.Methods = slices.Clone(desc.Methods)
	for i := range d.Methods {
		handler := d.Methods[i].Handler
		d.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			return handler(srv, ctx, func(v any) error { return decodeCapped(dec, v) }, interceptor)
		}
	}
	return &d
}

// decodeCapped receives the request with dec and decodes it into v.
func decodeCapped(dec func(any) error, v any) error {
	var received wirecodec.Received
	if err := dec(&received); err != nil {
		return err
	}
	err := received.Decode(v)
	var above *podcaps.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &above):
		return status.Error(codes.InvalidArgument, "the request's pod is above the caps: "+above.Error())
	default:
		// gRPC's own answer to a message its codec cannot decode.
		return status.Errorf(codes.Internal, "grpc: failed to unmarshal the received message: %v", err)
	}
}
