package wirecodec

import (
	"testing"

	"google.golang.org/grpc/encoding"
	"google.golang.org/protobuf/proto"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// BenchmarkTheHopsMessages marshals and unmarshals the two messages of one
// admission's hop (a request with a whole pod, a response with a whole
// decision), with this codec and with gRPC's standard one, as the two ends of
// a Decide call do: request marshal and response unmarshal in the front door,
// request unmarshal and response marshal in the decider.
//
//	go test ./internal/wirecodec/ -run '^$' -bench TheHopsMessages -benchmem
func BenchmarkTheHopsMessages(b *testing.B) {
	request := &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose(1), Pod: pod(),
		View: deciderv1.DecisionView(1), Cluster: "eu-1"}
	response := &deciderv1.DecisionResponse{Decision: decision()}
	for _, codec := range []struct {
		name  string
		codec encoding.CodecV2
	}{
		{"vtproto", encoding.GetCodecV2(Name)},
		{"standard", standard(b)},
	} {
		b.Run(codec.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				hop(b, codec.codec, request, &deciderv1.DecisionRequest{})
				hop(b, codec.codec, response, &deciderv1.DecisionResponse{})
			}
		})
	}
}

func hop(b *testing.B, c encoding.CodecV2, sent, received proto.Message) {
	data, err := c.Marshal(sent)
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Unmarshal(data, received); err != nil {
		b.Fatal(err)
	}
	data.Free()
}
