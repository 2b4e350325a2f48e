package tracing

// The OTLP/HTTP client behind the exporter (otlptrace.New does the span
// conversion). It is the project's own, small one: both of the SDK's OTLP
// exporters (gRPC and HTTP) link grpc-go's gzip compressor, which registers
// itself on import, and every Decide call of the front door would then carry
// a grpc-accept-encoding header — four allocations per admission, tracing
// off or on (issue 21: tracing off costs nothing).

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// tracesPath is the OTLP/HTTP traces path, appended to a base endpoint.
const tracesPath = "/v1/traces"

// defaultExportTimeout bounds one export (OTEL_EXPORTER_OTLP_TIMEOUT overrides it).
const defaultExportTimeout = 10 * time.Second

// maxResponseBytes bounds what is read of a collector's answer.
const maxResponseBytes = 64 << 10

// otlpHTTP sends ExportTraceServiceRequest messages as binary protobuf.
type otlpHTTP struct {
	url     string
	headers http.Header
	gzip    bool
	client  *http.Client
}

// exportEndpoint is where spans go: --otlp-endpoint (a base URL unless it
// has a path of its own), else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (as it
// is), else OTEL_EXPORTER_OTLP_ENDPOINT (a base URL).
func exportEndpoint(flag string, getenv func(string) string) (string, error) {
	raw, base, what := flag, true, "--otlp-endpoint"
	switch {
	case flag != "":
	case getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		raw, base, what = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), false, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	default:
		raw, what = getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "OTEL_EXPORTER_OTLP_ENDPOINT"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("%s is %q: an http:// or https:// URL of an OTLP/HTTP receiver, such as http://otel-collector:4318", what, raw)
	}
	if base && (flag == "" || u.Path == "" || u.Path == "/") {
		u.Path = strings.TrimSuffix(u.Path, "/") + tracesPath
	}
	return u.String(), nil
}

// newOTLPHTTP reads the standard OTEL_EXPORTER_OTLP_[TRACES_]{HEADERS,
// CERTIFICATE,COMPRESSION,TIMEOUT} variables.
func newOTLPHTTP(endpoint string, getenv func(string) string) (*otlpHTTP, error) {
	pick := func(name string) string {
		if v := getenv("OTEL_EXPORTER_OTLP_TRACES_" + name); v != "" {
			return v
		}
		return getenv("OTEL_EXPORTER_OTLP_" + name)
	}
	c := &otlpHTTP{url: endpoint, headers: http.Header{}}
	for _, kv := range strings.Split(pick("HEADERS"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		key, err1 := url.PathUnescape(strings.TrimSpace(k))
		value, err2 := url.PathUnescape(strings.TrimSpace(v))
		if err1 != nil || err2 != nil || key == "" {
			return nil, errors.New("OTEL_EXPORTER_OTLP_HEADERS: want key=value pairs separated by commas")
		}
		c.headers.Add(key, value)
	}
	switch comp := pick("COMPRESSION"); comp {
	case "", "none":
	case "gzip":
		c.gzip = true
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION is %q: gzip or none", comp)
	}
	timeout := defaultExportTimeout
	if t := pick("TIMEOUT"); t != "" {
		ms, err := strconv.Atoi(t)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT is %q: milliseconds", t)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if ca := pick("CERTIFICATE"); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE: %s holds no PEM certificate", ca)
		}
		transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	}
	c.client = &http.Client{Transport: transport, Timeout: timeout}
	return c, nil
}

// Start implements otlptrace.Client; the connection is made by the first export.
func (c *otlpHTTP) Start(context.Context) error { return nil }

// Stop implements otlptrace.Client.
func (c *otlpHTTP) Stop(context.Context) error {
	c.client.CloseIdleConnections()
	return nil
}

// UploadTraces implements otlptrace.Client: one POST of the spans. A
// TracesData message has the wire form of an ExportTraceServiceRequest
// (field 1, the repeated resource spans), without linking the collector's
// gRPC service package.
func (c *otlpHTTP) UploadTraces(ctx context.Context, spans []*tracepb.ResourceSpans) error {
	body, err := proto.Marshal(&tracepb.TracesData{ResourceSpans: spans})
	if err != nil {
		return fmt.Errorf("otlp: encode: %w", err)
	}
	if c.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(body); err != nil {
			return fmt.Errorf("otlp: gzip: %w", err)
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("otlp: gzip: %w", err)
		}
		body = buf.Bytes()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("otlp: %w", err)
	}
	for k, v := range c.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if c.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("otlp: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes)) // the connection is reused
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("otlp: the receiver answered %s", resp.Status)
	}
	return nil
}
