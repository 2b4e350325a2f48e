// Package engine is the cluster's code path in one process (spec 00 §4, 07
// §1.4), for the offline doors (inject, explain) and for any program that
// wants the cluster's answer without a cluster: the front door handler,
// talking real gRPC over an in-memory connection to a decider
// (decider/server around decider/service) holding one installation
// (engine.go); a pod through both admission paths, as the API server would
// put it (admit.go); and the skip reasons as the doors print them (skip.go).
package engine

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
)

// UID is the request uid of every review the offline doors send.
const UID = "offline"

// Timeout bounds each Decide call of the offline doors: the decider
// is in-process, so only a bug could make it slow; the cluster's 2s would
// only add flakiness on a loaded CI machine.
const Timeout = 30 * time.Second

// Engine is the cluster's code path in one process (spec 00 §4, 07
// §1.4): the front door handler, talking real gRPC over bufconn to a decider
// (decider/server around decider/service) holding one installation. inject
// and explain use it so that offline and in-cluster answers cannot drift.
type Engine struct {
	inst    *installation.Installation
	store   *installationloader.Store
	lis     *bufconn.Listener
	server  *server.Server
	conn    *grpc.ClientConn
	decider *recordingClient
	handler http.Handler
	cluster string
}

// ForCluster makes the engine ask for cluster, as a front door with
// --cluster-name does. It returns e.
func (e *Engine) ForCluster(cluster string) *Engine {
	e.cluster = cluster
	e.handler = handler.New(handler.Config{Decider: e.decider, Timeout: Timeout, Cluster: cluster})
	return e
}

// New starts the in-process decider with inst and the class
// set cls (nil: classes off) and the front door handler in front of it.
// Close releases both.
func New(inst *installation.Installation, cls *classes.Set) (*Engine, error) {
	store := installationloader.NewStore(inst)
	var cs *classes.Store
	if cls != nil {
		cs = classes.NewStore(cls)
	}
	// The cluster's message budget at the default --max-request-bytes on
	// both ends, so a pod too large for the cluster is refused here too.
	budget := msgbudget.Bytes(0)
	srv, err := server.New(server.Config{MaxMessageBytes: budget}, store, service.New(store, nil, nil).WithClasses(cs).LimitAnswers(budget))
	if err != nil {
		return nil, fmt.Errorf("start the in-process decider: %w", err)
	}
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.Serve(lis) }() // ends with Stop; the in-memory listener has no other failure
	conn, err := grpc.NewClient("passthrough:///offline-decider",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(budget), grpc.MaxCallSendMsgSize(budget)))
	if err != nil {
		srv.Shutdown(0)
		lis.Close()
		return nil, fmt.Errorf("connect to the in-process decider: %w", err)
	}
	rec := &recordingClient{DeciderServiceClient: deciderv1.NewDeciderServiceClient(conn)}
	return &Engine{
		inst:    inst,
		store:   store,
		lis:     lis,
		server:  srv,
		conn:    conn,
		decider: rec,
		handler: handler.New(handler.Config{Decider: rec, Timeout: Timeout}),
	}, nil
}

// Decide asks the in-process decider directly, past the front door
// (explain: a workload's validating path, or a pod the front door allowed
// without an RPC).
func (e *Engine) Decide(ctx context.Context, purpose deciderv1.Purpose, f *deciderv1.PodFacts) (*deciderv1.DecisionResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	resp, err := e.decider.DeciderServiceClient.Decide(ctx, &deciderv1.DecisionRequest{Purpose: purpose, Pod: f, Cluster: e.cluster})
	if err != nil {
		return nil, fmt.Errorf("the in-process decider failed: %w", err)
	}
	return resp, nil
}

// Installation is the installation the engine's decider holds.
func (e *Engine) Installation() *installation.Installation { return e.inst }

// Close stops the decider and closes the connection.
func (e *Engine) Close() error {
	err := e.conn.Close()
	e.server.Shutdown(time.Second)
	e.lis.Close()
	return err
}

// recordingClient remembers the last decision the handler obtained, so the
// offline doors can name a skip reason the AdmissionReview does not carry.
type recordingClient struct {
	deciderv1.DeciderServiceClient
	mu   sync.Mutex
	last *deciderv1.Decision
}

func (c *recordingClient) Decide(ctx context.Context, in *deciderv1.DecisionRequest, opts ...grpc.CallOption) (*deciderv1.DecisionResponse, error) {
	// The handler asks for the plan view; the offline doors show the whole
	// decision (explain's provenance, gates and policy results), so they ask
	// for everything. The answer built from it is the same.
	in.View = deciderv1.DecisionView_DECISION_VIEW_FULL
	resp, err := c.DeciderServiceClient.Decide(ctx, in, opts...)
	c.mu.Lock()
	c.last = resp.GetDecision()
	c.mu.Unlock()
	return resp, err
}

func (c *recordingClient) take() *deciderv1.Decision {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.last
	c.last = nil
	return d
}

// roundTrip is the engine's door: the handler in process.
func (e *Engine) roundTrip(path string, body []byte) (*review.Response, *deciderv1.Decision, error) {
	e.decider.take()
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	e.handler.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		return nil, nil, fmt.Errorf("the front door answered HTTP %d: %s", w.Code, bytes.TrimSpace(w.Body.Bytes()))
	}
	resp, err := review.DecodeAnswer(w.Body.Bytes())
	if err != nil {
		return nil, nil, err
	}
	return resp, e.decider.take(), nil
}
