// Package engine is the cluster's code path in one process (spec 00 §4, 07
// §1.4), for the offline doors (inject, explain) and for any program that
// wants the cluster's answer without a cluster: the front door handler,
// talking real gRPC over an in-memory connection to a decider holding one
// installation, started by decider/daemon as the cluster's decider is
// (engine.go); a pod through both admission paths, as the API server would
// put it (admit.go); and the skip reasons as the doors print them
// (skip.go). An Engine is safe for concurrent use.
package engine

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	deciderd "github.com/dynamic-config-admission/dynamic-config/decider/daemon"
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
// holding one installation, started by decider/daemon as `dynamic-config
// decider` starts its own. inject and explain use it so that offline and
// in-cluster answers cannot drift.
//
// An Engine is safe for concurrent use: each admission carries its own
// record of the decision behind it (in its request's context), and
// ForCluster swaps the cluster asked for whole, for the admissions that
// start after it.
type Engine struct {
	inst    *installation.Installation
	lis     *bufconn.Listener
	decider *deciderd.Decider
	stop    context.CancelFunc
	conn    *grpc.ClientConn
	client  deciderv1.DeciderServiceClient
	front   atomic.Pointer[frontDoor]
}

// frontDoor is the front door handler asking for one cluster.
type frontDoor struct {
	cluster string
	handler http.Handler
}

// ForCluster makes the engine ask for cluster, as a front door with
// --cluster-name does ("" = the decider's own). It returns e.
func (e *Engine) ForCluster(cluster string) *Engine {
	e.front.Store(&frontDoor{cluster: cluster, handler: handler.New(handler.Config{
		Decider: recordingClient{e.client}, Timeout: Timeout, Cluster: cluster})})
	return e
}

// New starts the in-process decider with inst and the class set cls (nil:
// classes off) — decider/daemon over an in-memory listener, with the
// cluster's message budget at the default --max-request-bytes on both ends,
// so that a pod too large for the cluster is refused here too — and the
// front door handler in front of it. Close releases both.
func New(inst *installation.Installation, cls *classes.Set) (*Engine, error) {
	ctx, stop := context.WithCancel(context.Background())
	lis := bufconn.Listen(1 << 20)
	budget := msgbudget.Bytes(0)
	d, err := deciderd.Start(ctx, deciderd.Config{
		Installation:  deciderd.Installation{Given: inst},
		Listener:      lis,
		Classes:       deciderd.Classes{Set: cls},
		MessageBudget: budget,
	})
	if err != nil {
		stop()
		lis.Close()
		return nil, fmt.Errorf("start the in-process decider: %w", err)
	}
	conn, err := grpc.NewClient("passthrough:///offline-decider",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(budget), grpc.MaxCallSendMsgSize(budget)))
	if err != nil {
		d.Shutdown(0)
		stop()
		lis.Close()
		return nil, fmt.Errorf("connect to the in-process decider: %w", err)
	}
	e := &Engine{inst: inst, lis: lis, decider: d, stop: stop, conn: conn, client: deciderv1.NewDeciderServiceClient(conn)}
	return e.ForCluster(""), nil
}

// Decide asks the in-process decider directly, past the front door
// (explain: a workload's validating path, or a pod the front door allowed
// without an RPC), for the engine's cluster.
func (e *Engine) Decide(ctx context.Context, purpose deciderv1.Purpose, f *deciderv1.PodFacts) (*deciderv1.DecisionResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	resp, err := e.client.Decide(ctx, &deciderv1.DecisionRequest{Purpose: purpose, Pod: f, Cluster: e.front.Load().cluster})
	if err != nil {
		return nil, fmt.Errorf("the decider failed: %w", err)
	}
	return resp, nil
}

// Installation is the installation the engine's decider holds (nil for a
// Remote engine).
func (e *Engine) Installation() *installation.Installation { return e.inst }

// Close stops the decider and closes the connection (nothing for a Remote
// engine).
func (e *Engine) Close() error {
	if e.decider == nil {
		return nil
	}
	err := e.conn.Close()
	e.decider.Shutdown(time.Second)
	e.stop()
	e.lis.Close()
	return err
}

// decisionSlot receives the decision behind one admission; roundTrip puts
// one in the request's context, which the handler hands to Decide.
type decisionSlot struct{ decision *deciderv1.Decision }

type decisionSlotKey struct{}

// recordingClient records the decision the handler obtained in the call's
// slot, so the offline doors can name a skip reason the AdmissionReview
// does not carry.
type recordingClient struct {
	deciderv1.DeciderServiceClient
}

func (c recordingClient) Decide(ctx context.Context, in *deciderv1.DecisionRequest, opts ...grpc.CallOption) (*deciderv1.DecisionResponse, error) {
	// The handler asks for the plan view; the offline doors show the whole
	// decision (explain's provenance, gates and policy results), so they ask
	// for everything. The answer built from it is the same.
	in.View = deciderv1.DecisionView_DECISION_VIEW_FULL
	resp, err := c.DeciderServiceClient.Decide(ctx, in, opts...)
	if slot, ok := ctx.Value(decisionSlotKey{}).(*decisionSlot); ok {
		slot.decision = resp.GetDecision()
	}
	return resp, err
}

// roundTrip is the engine's door: the handler in process.
func (e *Engine) roundTrip(path string, body []byte) (*review.Response, *deciderv1.Decision, error) {
	slot := &decisionSlot{}
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r = r.WithContext(context.WithValue(r.Context(), decisionSlotKey{}, slot))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	e.front.Load().handler.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		return nil, nil, fmt.Errorf("the front door answered HTTP %d: %s", w.Code, bytes.TrimSpace(w.Body.Bytes()))
	}
	resp, err := review.DecodeAnswer(w.Body.Bytes())
	if err != nil {
		return nil, nil, err
	}
	return resp, slot.decision, nil
}
