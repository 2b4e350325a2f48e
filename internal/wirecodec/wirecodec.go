// Package wirecodec is the gRPC codec of the hop between the front door and
// the decider: it replaces gRPC's "proto" codec with one that marshals and
// unmarshals the wire types with the methods protoc-gen-go-vtproto generates
// beside them (gen/, SizeVT, MarshalToSizedBufferVT, UnmarshalVT) instead of
// protobuf reflection, which cost about 15% of the decider's CPU (map fields
// above all): the hop's two messages marshal and unmarshal in two thirds of
// the time and allocations (BenchmarkTheHopsMessages). A message without
// those methods (health, server reflection) goes to gRPC's own codec as
// before. Importing the package registers the codec for the whole process;
// decider/server and frontdoor/client import it.
//
// What the codec accepts and sends is what proto.Unmarshal and proto.Marshal
// do. The generated code does not check that string fields are valid UTF-8,
// which proto3 requires and protobuf-go checks both ways, and it reads a
// known field sent with another wire type differently (it fails, or in a map
// entry reads it as the field it names, where proto keeps an unknown field);
// so the codec checks the wire (wirecheck.go) after marshalling and before
// unmarshalling, and whenever that check or the generated code fails, the
// message goes to the standard codec, whose answer is the codec's. Map
// entries are written in Go's map order, as proto.Marshal's default
// (non-deterministic) marshalling and gRPC's codec do.
package wirecodec

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/dynamic-config-admission/dynamic-config/internal/podcaps"
)

// Name is the codec's name, gRPC's default content subtype: the codec
// replaces the standard one rather than adding a content type, so peers
// without it (grpcurl, a front door or decider of an earlier version) still
// speak to ours.
const Name = grpcproto.Name

// vtMessage is a wire type with the generated fast methods.
type vtMessage interface {
	proto.Message
	SizeVT() int
	MarshalToSizedBufferVT(dAtA []byte) (int, error)
	UnmarshalVT(dAtA []byte) error
}

func init() {
	// grpc/encoding/proto is imported above, so its init has registered the
	// standard codec before this one runs and replaces it.
	encoding.RegisterCodecV2(New(encoding.GetCodecV2(Name)))
}

// New returns the codec, sending every message without the generated methods
// to fallback (gRPC's standard proto codec in the registered one).
func New(fallback encoding.CodecV2) encoding.CodecV2 {
	if fallback == nil {
		panic("wirecodec: no fallback codec")
	}
	return codec{fallback: fallback}
}

type codec struct {
	fallback encoding.CodecV2
}

func (codec) Name() string { return Name }

// Marshal sizes the message once and writes it into one buffer, from gRPC's
// buffer pool when the message is large enough for pooling to pay (as gRPC's
// codec does), else a plain slice. The generated marshaller does not check
// strings either, so the written bytes are checked as received ones are, and a
// message that fails goes to the fallback, which answers proto.Marshal's
// error.
func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(vtMessage)
	if !ok {
		return c.fallback.Marshal(v)
	}
	size := m.SizeVT()
	if mem.IsBelowBufferPoolingThreshold(size) {
		buf := make([]byte, size)
		if err := marshalInto(m, buf); err != nil {
			return c.fallback.Marshal(v)
		}
		return mem.BufferSlice{mem.SliceBuffer(buf)}, nil
	}
	pool := mem.DefaultBufferPool()
	buf := pool.Get(size)
	if err := marshalInto(m, (*buf)[:size]); err != nil {
		pool.Put(buf)
		return c.fallback.Marshal(v)
	}
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, nil
}

// marshalInto writes m into buf, which is exactly m's SizeVT long (the
// generated code writes from the end backwards), and checks what it wrote.
func marshalInto(m vtMessage, buf []byte) error {
	n, err := m.MarshalToSizedBufferVT(buf)
	if err != nil {
		return err
	}
	if n != len(buf) {
		// The message changed between SizeVT and the marshalling (a
		// concurrent write, which the caller must not do).
		return fmt.Errorf("wirecodec: %T marshalled to %d bytes, sized %d", m, n, len(buf))
	}
	return checkWire(buf, m.ProtoReflect().Descriptor())
}

// Unmarshal decodes data into v as proto.Unmarshal does (v is reset first);
// into a *Received it keeps data undecoded.
func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*Received); ok {
		r.buf = data.MaterializeToBuffer(mem.DefaultBufferPool())
		return nil
	}
	m, ok := v.(vtMessage)
	if !ok {
		return c.fallback.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return unmarshal(buf.ReadOnlyData(), m)
}

// unmarshal is the codec's decoding of b into m: the fast path when it
// succeeds, proto.Unmarshal's answer otherwise — except for a pod above the
// caps (internal/podcaps), refused with its *podcaps.Error before anything
// is unmarshalled, by either path.
func unmarshal(b []byte, m vtMessage) error {
	proto.Reset(m)
	err := fastUnmarshal(b, m)
	if err == nil {
		return nil
	}
	var capped *podcaps.Error
	if errors.As(err, &capped) {
		return err
	}
	// proto.Unmarshal resets m (which the failed fast path may have half
	// filled) before it decodes.
	return proto.Unmarshal(b, m)
}

// fastUnmarshal decodes b into m, which is empty, with the generated
// unmarshaller, after checking b's caps and strings.
func fastUnmarshal(b []byte, m vtMessage) error {
	if err := checkReceived(b, m.ProtoReflect().Descriptor()); err != nil {
		return err
	}
	return m.UnmarshalVT(b)
}

// Received is a received message kept undecoded, for a server that answers
// a pod above the caps itself: gRPC turns every error of a codec into
// INTERNAL, and a request above the caps is the caller's mistake
// (INVALID_ARGUMENT naming the field and the cap; decider/server). Receive
// into it, then Decode.
type Received struct {
	buf mem.Buffer
}

// Decode decodes the received message into v as the codec does and lets
// the bytes go. A pod above the caps is a *podcaps.Error.
func (r *Received) Decode(v any) error {
	if r.buf == nil {
		return errors.New("wirecodec: nothing received")
	}
	defer func() {
		r.buf.Free()
		r.buf = nil
	}()
	m, ok := v.(vtMessage)
	if !ok {
		return encoding.GetCodecV2(Name).Unmarshal(mem.BufferSlice{r.buf}, v)
	}
	return unmarshal(r.buf.ReadOnlyData(), m)
}
