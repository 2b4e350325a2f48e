package server

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// rawCall is what an HTTP/2 peer that ignores every limit the server
// announces sees after sending one call.
type rawCall struct {
	// answered is true when the server answered the call with HEADERS:
	// it read the whole header block and handled the call.
	answered bool
	// grpcStatus is the answer's grpc-status ("" when not answered).
	grpcStatus string
}

// rawOversizedCall dials addr in plaintext HTTP/2 and sends one
// DeciderService call whose authorization header is valueBytes long,
// streamed in frames (the peer never holds it), then reads until the
// server answers, resets the stream or closes the connection.
func rawOversizedCall(t *testing.T, addr string, valueBytes int) rawCall {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Errorf("dial: %v", err) // not Fatal: the flood calls this from its own goroutines
		return rawCall{}
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fr := http2.NewFramer(conn, conn)
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		return rawCall{}
	}
	if err := fr.WriteSettings(); err != nil {
		return rawCall{}
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range []hpack.HeaderField{
		{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
		{Name: ":path", Value: "/dynamicconfig.decider.v1.DeciderService/Decide"},
		{Name: ":authority", Value: addr}, {Name: "content-type", Value: "application/grpc"}, {Name: "te", Value: "trailers"},
	} {
		_ = enc.WriteField(f)
	}
	// A literal "authorization" of valueBytes, without Huffman coding: the
	// prefix here, the value streamed below.
	block.WriteByte(0x00)
	block.Write(hpackInt(0, 7, len("authorization")))
	block.WriteString("authorization")
	block.Write(hpackInt(0, 7, valueBytes))
	block.WriteString("Bearer ")
	remaining := valueBytes - len("Bearer ")

	go func() { // the writer: HEADERS, then CONTINUATION frames of 16 KiB
		chunk := []byte(strings.Repeat("a", 16<<10))
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: remaining == 0}); err != nil {
			return
		}
		for remaining > 0 {
			n := min(remaining, len(chunk))
			remaining -= n
			if err := fr.WriteContinuation(1, remaining == 0, chunk[:n]); err != nil {
				return
			}
		}
	}()
	dec := hpack.NewDecoder(4096, nil)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return rawCall{} // the connection was closed
		}
		switch f := f.(type) { // nothing is written here: the writer owns the framer's write side
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
			return got
		}
	}
}

// hpackInt is the HPACK integer encoding of v with an n-bit prefix after
// the flag bits first.
func hpackInt(first byte, n uint, v int) []byte {
	limit := 1<<n - 1
	if v < limit {
		return []byte{first | byte(v)}
	}
	out := []byte{first | byte(limit)}
	v -= limit
	for v >= 128 {
		out = append(out, byte(v%128+128))
		v /= 128
	}
	return append(out, byte(v))
}

// idleUntilClosed holds conn (after an HTTP/2 preface when handshake),
// acknowledging pings as a real client would, and reports how long the
// server took to close it (or false when it did not within limit).
func idleUntilClosed(conn net.Conn, handshake bool, limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	_ = conn.SetDeadline(start.Add(limit))
	if !handshake {
		buf := make([]byte, 512)
		for { // the server's SETTINGS arrive first; then it closes
			if _, err := conn.Read(buf); err != nil {
				return time.Since(start), !isTimeout(err)
			}
		}
	}
	fr := http2.NewFramer(conn, conn)
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		return time.Since(start), true
	}
	_ = fr.WriteSettings()
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return time.Since(start), !isTimeout(err)
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
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
