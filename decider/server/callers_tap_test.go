package server

import (
	"bytes"
	"encoding/binary"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/podcaps"
)

// rawUnfinishedCall dials addr in plaintext HTTP/2 and starts one Decide
// call with the given authorization values (none: no header), announcing a
// message of announced bytes of which it sends only the first KiB, and
// never the rest. It reports the server's answer when one comes within
// wait: a server that answers checked the call without its message.
func rawUnfinishedCall(t *testing.T, addr string, authorization []string, announced int, wait time.Duration) rawCall {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(wait))
	fr := http2.NewFramer(conn, conn)
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	fields := []hpack.HeaderField{
		{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
		{Name: ":path", Value: "/dynamicconfig.decider.v1.DeciderService/Decide"},
		{Name: ":authority", Value: addr}, {Name: "content-type", Value: "application/grpc"}, {Name: "te", Value: "trailers"},
	}
	for _, a := range authorization {
		fields = append(fields, hpack.HeaderField{Name: "authorization", Value: a})
	}
	for _, f := range fields {
		_ = enc.WriteField(f)
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	// The gRPC message prefix (not compressed, the announced length) and
	// the first KiB of its body.
	data := make([]byte, 5, 5+1024)
	binary.BigEndian.PutUint32(data[1:], uint32(announced))
	data = append(data, bytes.Repeat([]byte{0x42, 0x00}, 512)...) // empty containers
	if err := fr.WriteData(1, false, data); err != nil {
		t.Fatal(err)
	}
	dec := hpack.NewDecoder(4096, nil)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return rawCall{} // no answer within wait, or the connection closed
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = fr.WritePing(true, f.Data)
			}
		case *http2.RSTStreamFrame, *http2.GoAwayFrame:
			return rawCall{}
		case *http2.HeadersFrame:
			fields, _ := dec.DecodeFull(f.HeaderBlockFragment())
			got := rawCall{answered: true}
			for _, h := range fields {
				if h.Name == "grpc-status" {
					got.grpcStatus = h.Value
				}
			}
			if got.grpcStatus != "" || f.StreamEnded() {
				return got
			}
		}
	}
}

func TestACallersFileDeciderRefusesAnUnauthenticatedCallBeforeReadingItsMessage(t *testing.T) {
	d := startCallersDecider(t, twoCallers(), nil)
	const announced = 13 << 20 // the 13 MB junk-token calls of issue 38
	unauthenticated := strconv.Itoa(int(codes.Unauthenticated))
	cases := []struct {
		name          string
		authorization []string
	}{
		{"a token the callers file does not list", []string{"Bearer junk-token"}},
		{"no token, where no caller is identified by a certificate", nil},
		{"a malformed authorization", []string{"Basic east:token"}},
		{"two authorizations", []string{"Bearer " + eastToken, "Bearer " + eastToken}},
		{"the digest of a listed token presented as the token", []string{"Bearer " + digest(eastToken)}},
	}
	for _, c := range cases {
		t.Run(c.name+" is answered UNAUTHENTICATED while its message is still coming", func(t *testing.T) {
			got := rawUnfinishedCall(t, d.addr, c.authorization, announced, 5*time.Second)
			if !got.answered || got.grpcStatus != unauthenticated {
				t.Errorf("%+v, want an Unauthenticated answer before the message was read", got)
			}
		})
	}
	t.Run("a listed token's call waits for its message (the test can tell)", func(t *testing.T) {
		if got := rawUnfinishedCall(t, d.addr, []string{"Bearer " + eastToken}, announced, time.Second); got.answered {
			t.Errorf("%+v: a known caller's unfinished call was answered", got)
		}
	})
	// With a certificate identity listed, a call without a token goes on
	// to the certificate check: TestCallersByClientCertificate.
}

// rawBytesCodec sends a message already encoded ([]byte): a request the
// generated types could not hold in memory.
type rawBytesCodec struct{}

func (rawBytesCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}
func (rawBytesCodec) Unmarshal(mem.BufferSlice, any) error { return nil }
func (rawBytesCodec) Name() string                         { return "proto" }

var _ encoding.CodecV2 = rawBytesCodec{}

// podFactsRequest encodes a DecisionRequest whose pod is the encoded
// PodFacts fields of pod, as a hostile caller would send it.
func podFactsRequest(pod []byte) []byte {
	req := []byte{0x08, 0x01} // purpose: MUTATE
	req = append(req, 0x12)   // pod
	req = binary.AppendUvarint(req, uint64(len(pod)))
	return append(req, pod...)
}

// repeated is n copies of one encoded field.
func repeated(field []byte, n int) []byte { return bytes.Repeat(field, n) }

func TestARequestAboveThePodCapsIsInvalidArgumentNamingTheFieldAndTheCap(t *testing.T) {
	d := startCallersDecider(t, twoCallers(), nil)
	conn := dial(t, d.addr, nil)
	authorized := func() metadata.MD { return metadata.MD{"authorization": {"Bearer " + eastToken}} }
	envOf := func(n int) []byte { // one container holding n empty env entries
		c := repeated([]byte{0x42, 0x00}, n)
		return append([]byte{0x42}, append(binary.AppendUvarint(nil, uint64(len(c))), c...)...)
	}
	cases := []struct {
		name string
		pod  []byte
		want string
	}{
		{"one container above the cap", repeated([]byte{0x42, 0x00}, podcaps.Containers.Cap()+1),
			"spec.containers holds 41392 entries, above the cap of 41391"},
		{"6 M empty containers in 12 MB (issue 38: 1.28 GB)", repeated([]byte{0x42, 0x00}, 6_000_000),
			"spec.containers holds 6000000 entries, above the cap of 41391"},
		{"env entries above the cap, in one container", envOf(podcaps.Env.Cap() + 1),
			"env holds 224695 entries, above the cap of 224694"},
		{"init containers and volume names that do not fit together", append(
			repeated([]byte{0x4a, 0x00}, podcaps.InitContainers.Cap()/2+1),
			repeated([]byte{0x6a, 0x00}, podcaps.Volumes.Cap()/2+1)...),
			"spec.initContainers holds 20165 entries (cap 40329 alone)"},
		{"an unknown field does not hide the count from the caps", append(
			repeated([]byte{0x42, 0x00}, podcaps.Containers.Cap()+1), 0xfa, 0x7f, 0x00),
			"spec.containers holds 41392 entries"},
	}
	for _, c := range cases {
		t.Run(c.name+" is INVALID_ARGUMENT naming the field and its cap", func(t *testing.T) {
			ctx := metadata.NewOutgoingContext(ctxTimeout(t), authorized())
			err := conn.Invoke(ctx, deciderv1.DeciderService_Decide_FullMethodName, podFactsRequest(c.pod), new(deciderv1.DecisionResponse),
				grpc.ForceCodecV2(rawBytesCodec{}))
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), c.want) {
				t.Errorf("got %v, want InvalidArgument with %q", err, c.want)
			}
		})
	}
	t.Run("a pod at the caps is decided", func(t *testing.T) {
		ctx := metadata.NewOutgoingContext(ctxTimeout(t), authorized())
		pod := append([]byte{0x0a, 0x07}, "default"...) // namespace
		pod = append(pod, repeated([]byte{0x42, 0x00}, podcaps.Containers.Cap())...)
		err := conn.Invoke(ctx, deciderv1.DeciderService_Decide_FullMethodName, append(podFactsRequest(pod), 0x22, 0x04, 'e', 'a', 's', 't'),
			new(deciderv1.DecisionResponse), grpc.ForceCodecV2(rawBytesCodec{}))
		if err != nil {
			t.Errorf("a pod of %d containers: %v", podcaps.Containers.Cap(), err)
		}
	})
}

func TestTheRefusedCallLineIsSampledWithACallersFile(t *testing.T) {
	d := startCallersDecider(t, twoCallers(), nil)
	conn := dial(t, d.addr, nil)
	for range 200 {
		if _, err := decideAs(t, conn, "junk-token", "east"); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("a junk token: %v", err)
		}
	}
	for range 50 {
		if _, err := decideAs(t, conn, eastToken, "west"); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("a cluster the caller may not speak for: %v", err)
		}
	}
	log := d.log.String()
	t.Run("200 junk-token calls write one line, the tap's, in the interval", func(t *testing.T) {
		if n := strings.Count(log, `"grpc call refused before its message was read"`); n != 1 {
			t.Errorf("%d refusal lines, want 1", n)
		}
		if n := strings.Count(log, `"grpc_code":"Unauthenticated"`); n != 1 {
			t.Errorf("%d lines name Unauthenticated, want the tap's 1:\n%s", n, log)
		}
	})
	t.Run("the refused call lines of the chain share the tap's sampler", func(t *testing.T) {
		if n := strings.Count(log, `"msg":"grpc call","grpc_service":"dynamicconfig.decider.v1.DeciderService","grpc_method":"Decide","grpc_code":"PermissionDenied"`); n != 0 {
			t.Errorf("%d PermissionDenied call lines within the interval of the tap's line, want 0", n)
		}
	})
}
