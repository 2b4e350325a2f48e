// Package handler is the front door's admission handler: /mutate and
// /validate (spec 07 §3.2). It decodes the AdmissionReview, extracts the
// PodFacts, asks the decider with a deadline, maps the decision to the
// answer (03 §5, 04) — a JSON Patch built from the plan on /mutate — and
// applies the failure rules when no usable decision was obtained (04 §5).
// It holds no installation; the offline doors (inject, explain) run this
// same handler against an in-process decider.
package handler

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/decisioncache"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
)

// Defaults of the flags the handler honours (spec 07 §1.2).
const (
	DefaultTimeout = 2 * time.Second
	// DefaultMaxRequestBytes is 7 MiB (msgbudget.DefaultMaxRequestBytes;
	// the kube-apiserver itself bounds request bodies at 3 MiB for writes,
	// so a bigger review is not a real object).
	DefaultMaxRequestBytes = msgbudget.DefaultMaxRequestBytes
)

// The failure behaviours of --on-decider-error and --on-decider-error-validate.
const (
	OnErrorDeny  = "deny"
	OnErrorAllow = "allow"
)

// CheckOnDeciderError names a value of --on-decider-error or
// --on-decider-error-validate (which may be empty: as --on-decider-error)
// that is neither deny nor allow.
func CheckOnDeciderError(onError, onErrorValidate string) error {
	if onError != OnErrorDeny && onError != OnErrorAllow {
		return fmt.Errorf("--on-decider-error is %q: deny or allow", onError)
	}
	if onErrorValidate != "" && onErrorValidate != OnErrorDeny && onErrorValidate != OnErrorAllow {
		return fmt.Errorf("--on-decider-error-validate is %q: deny or allow", onErrorValidate)
	}
	return nil
}

// Paths served.
const (
	PathMutate   = "/mutate"
	PathValidate = "/validate"
)

// Config configures the handler.
type Config struct {
	// Decider is the client of the decider's gRPC service.
	Decider deciderv1.DeciderServiceClient
	// Timeout bounds each Decide call (default 2s); the HTTP request's own
	// deadline wins when it is sooner.
	Timeout time.Duration
	// OnDeciderError is deny (default) or allow, for /mutate. Any value other
	// than allow denies: the handler fails closed.
	OnDeciderError string
	// OnDeciderErrorValidate is deny or allow for /validate; empty = the
	// value of OnDeciderError.
	OnDeciderErrorValidate string
	// MaxRequestBytes bounds the request body (default 7 MiB).
	MaxRequestBytes int64
	// Cluster is the name of the cluster this front door admits for, sent
	// with every Decide call ("" = the decider's own cluster).
	Cluster string
	// Logger receives the admission lines (nil = discard).
	Logger *slog.Logger
	// Metrics records the front door metrics (nil = none).
	Metrics *metrics.Frontdoor
	// Tracing, when on, gives every review a server span (continuing the
	// API server's traceparent) with decode, facts, decide and patch
	// children (docs/tracing.md). nil = off: no span, no context wrapping.
	Tracing *tracing.Tracing
	// Cache, when set, answers a question asked before from the decision
	// cache instead of the decider, and a question whose call failed from a
	// stale entry (issue 43). nil = off: every question asks the decider.
	Cache *decisioncache.Cache
	// StaleIfError is the cache's stale bound, named in a stale answer's warning.
	StaleIfError time.Duration
}

// handler serves both paths.
type handler struct {
	decider         deciderv1.DeciderServiceClient
	cluster         string
	timeout         time.Duration
	allowOnError    map[string]bool // by webhook
	maxRequestBytes int64
	log             *slog.Logger
	metrics         *metrics.Frontdoor
	tracing         *tracing.Tracing
	cache           *decisioncache.Cache
	staleIfError    time.Duration
}

// New returns the handler for /mutate and /validate; other paths answer 404.
func New(cfg Config) http.Handler {
	h := &handler{
		decider:         cfg.Decider,
		cluster:         cfg.Cluster,
		timeout:         cfg.Timeout,
		maxRequestBytes: cfg.MaxRequestBytes,
		log:             cfg.Logger,
		metrics:         cfg.Metrics,
		tracing:         cfg.Tracing,
		cache:           cfg.Cache,
		staleIfError:    cfg.StaleIfError,
	}
	if h.timeout <= 0 {
		h.timeout = DefaultTimeout
	}
	if h.maxRequestBytes <= 0 {
		h.maxRequestBytes = DefaultMaxRequestBytes
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	onValidate := cfg.OnDeciderErrorValidate
	if onValidate == "" {
		onValidate = cfg.OnDeciderError
	}
	h.allowOnError = map[string]bool{
		metrics.WebhookMutate:   cfg.OnDeciderError == OnErrorAllow,
		metrics.WebhookValidate: onValidate == OnErrorAllow,
	}
	mux := http.NewServeMux()
	mux.HandleFunc(PathMutate, func(w http.ResponseWriter, r *http.Request) {
		h.serve(w, r, metrics.WebhookMutate, spanMutate)
	})
	mux.HandleFunc(PathValidate, func(w http.ResponseWriter, r *http.Request) {
		h.serve(w, r, metrics.WebhookValidate, spanValidate)
	})
	return mux
}

// HTTP answers for requests that are not a readable review (spec 04 §6).
const (
	bodyMethodNotAllowed = "method not allowed"
	bodyContentType      = "expected Content-Type application/json"
	bodyTooLarge         = "request body too large"
)

// Span names of the front door (docs/tracing.md): the review's server span
// and its children.
const (
	spanMutate   = "POST " + PathMutate
	spanValidate = "POST " + PathValidate
	SpanDecode   = "decode"
	SpanFacts    = "facts"
	SpanDecide   = "decide"
	SpanPatch    = "patch"
)

// serve reads one review and answers it; spanName names its server span.
func (h *handler) serve(w http.ResponseWriter, r *http.Request, webhook, spanName string) {
	start := time.Now()
	ctx, span := h.tracing.StartServer(r.Context(), r.Header, spanName)
	defer span.End()
	var a *admission
	defer func() {
		rec := recover()
		if rec == nil {
			return
		}
		if rec == http.ErrAbortHandler {
			panic(rec)
		}
		h.log.Error("panic while answering a review", "webhook", webhook,
			"panic", redact.URL(fmt.Sprint(rec)), "stack", string(debug.Stack()))
		if a == nil {
			// Before the review was decoded there is no uid to echo.
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		// After decoding, the review is answered as an unusable decision.
		writeAnswer(w, a.recovered(detailInternal))
	}()
	_, decode := h.tracing.Start(ctx, SpanDecode)
	req, status, msg := h.read(w, r)
	decode.End()
	if req == nil {
		span.Fail("review not readable")
		h.log.Warn("review not readable", "webhook", webhook, "status", status, "error", redact.URL(msg))
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, msg) // a client that went away has nothing left to tell
		return
	}
	a = &admission{h: h, webhook: webhook, req: req, start: start, span: span}
	if span.Recording() {
		a.rec.traceID, a.rec.spanID = span.IDs()
	} else {
		// Tracing off: the API server's trace, when it sent a traceparent.
		a.rec.traceID = tracing.HeaderTraceID(r.Header)
	}
	writeAnswer(w, a.answer(ctx))
}

func writeAnswer(w http.ResponseWriter, resp *review.Response) {
	body := review.Encode(resp)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body) // a client that went away has nothing left to tell
}

// readBody reads the whole request body. The API server sends a
// Content-Length, so the body is read into one buffer of that size instead
// of the growing ones of io.ReadAll; a body of unknown length (chunked) is
// read with io.ReadAll. net/http ends a body at its Content-Length, so
// reading exactly that many bytes reads all of it.
func readBody(body io.Reader, length int64) ([]byte, error) {
	if length <= 0 {
		return io.ReadAll(body)
	}
	b := make([]byte, length)
	if _, err := io.ReadFull(body, b); err != nil {
		return nil, err
	}
	return b, nil
}

// read applies the checks of spec 04 §6 in order — the method (POST; 405
// with an Allow header), the Content-Type (application/json; 415), the size
// against --max-request-bytes (the declared Content-Length first, then the
// bytes read; 413), the body read whole (400) — and decodes the review (400,
// the body naming what was wrong). On failure the request is nil and the
// HTTP status and body to answer with are returned.
func (h *handler) read(w http.ResponseWriter, r *http.Request) (*review.Request, int, string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return nil, http.StatusMethodNotAllowed, bodyMethodNotAllowed
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, http.StatusUnsupportedMediaType, bodyContentType
	}
	if r.ContentLength > h.maxRequestBytes {
		return nil, http.StatusRequestEntityTooLarge, bodyTooLarge
	}
	body, err := readBody(http.MaxBytesReader(w, r.Body, h.maxRequestBytes), r.ContentLength)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, http.StatusRequestEntityTooLarge, bodyTooLarge
		}
		return nil, http.StatusBadRequest, fmt.Sprintf("the request body could not be read: %v", err)
	}
	req, err := review.Decode(body)
	if err != nil {
		return nil, http.StatusBadRequest, err.Error()
	}
	return req, 0, ""
}
