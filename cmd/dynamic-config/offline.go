package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpatch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
)

// offlineUID is the request uid of every review the offline doors send.
const offlineUID = "offline"

// offlineTimeout bounds each Decide call of the offline doors: the decider
// is in-process, so only a bug could make it slow; the cluster's 2s would
// only add flakiness on a loaded CI machine.
const offlineTimeout = 30 * time.Second

// offlineEngine is the cluster's code path in one process (spec 00 §4, 07
// §1.4): the front door handler, talking real gRPC over bufconn to a decider
// (decider/server around decider/service) holding one installation. inject
// and explain use it so that offline and in-cluster answers cannot drift.
type offlineEngine struct {
	inst    *installation.Installation
	lis     *bufconn.Listener
	server  *server.Server
	conn    *grpc.ClientConn
	decider *recordingClient
	handler http.Handler
	cluster string
}

// forCluster makes the engine ask for cluster, as a front door with
// --cluster-name does. It returns e.
func (e *offlineEngine) forCluster(cluster string) *offlineEngine {
	e.cluster = cluster
	e.handler = handler.New(handler.Config{Decider: e.decider, Timeout: offlineTimeout, Cluster: cluster})
	return e
}

// newOfflineEngine starts the in-process decider with inst and the class
// set cls (nil: classes off) and the front door handler in front of it.
// Close releases both.
func newOfflineEngine(inst *installation.Installation, cls *classes.Set) (*offlineEngine, error) {
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
	return &offlineEngine{
		inst:    inst,
		lis:     lis,
		server:  srv,
		conn:    conn,
		decider: rec,
		handler: handler.New(handler.Config{Decider: rec, Timeout: offlineTimeout}),
	}, nil
}

// decide asks the in-process decider directly, past the front door
// (explain: a workload's validating path, or a pod the front door allowed
// without an RPC).
func (e *offlineEngine) decide(ctx context.Context, purpose deciderv1.Purpose, f *deciderv1.PodFacts) (*deciderv1.DecisionResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, offlineTimeout)
	defer cancel()
	resp, err := e.decider.DeciderServiceClient.Decide(ctx, &deciderv1.DecisionRequest{Purpose: purpose, Pod: f, Cluster: e.cluster})
	if err != nil {
		return nil, fmt.Errorf("the in-process decider failed: %w", err)
	}
	return resp, nil
}

// Installation is the installation the engine's decider holds.
func (e *offlineEngine) Installation() *installation.Installation { return e.inst }

// Close stops the decider and closes the connection.
func (e *offlineEngine) Close() error {
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

// podReview is the AdmissionReview the offline doors send for a Pod (uid
// "offline"), operation CREATE, the given namespace.
func podReview(uid string, pod []byte, namespace, name string) ([]byte, error) {
	return json.Marshal(review.Review{APIVersion: review.APIVersion, Kind: review.Kind, Request: &review.Request{
		UID:       uid,
		Kind:      review.GroupVersionKind{Group: "", Version: "v1", Kind: "Pod"},
		Resource:  review.GroupVersionResource{Group: "", Version: "v1", Resource: "pods"},
		Name:      name,
		Namespace: namespace,
		Operation: "CREATE",
		Object:    pod,
	}})
}

// reviewDoor posts one review body to a front door path and returns its
// answer and, when the door can tell, the decision behind it (nil without
// an RPC or when unknown).
type reviewDoor func(path string, body []byte) (*review.Response, *deciderv1.Decision, error)

// roundTrip is the engine's door: the handler in process.
func (e *offlineEngine) roundTrip(path string, body []byte) (*review.Response, *deciderv1.Decision, error) {
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

// admitted is the outcome of one Pod through the offline door.
type admitted struct {
	// Answer is the AdmissionResponse: /mutate's, with the /validate
	// findings folded in when a pods-targeting envPolicy exists.
	Answer *review.Response
	// Mutated is the pod after the patch (the input when nothing was
	// patched); nil when refused.
	Mutated []byte
	// Patch is the decoded JSON Patch ("[]" when none).
	Patch []byte
	// Mutate and Validate are the decisions behind the answers (nil when
	// the path was not asked, answered without an RPC, or unknown).
	Mutate, Validate *deciderv1.Decision
}

// Refused reports whether the pod was denied.
func (a *admitted) Refused() bool { return !a.Answer.Allowed }

// admitPod runs one Pod (JSON) through the engine's front door with uid
// "offline" (see admitThrough).
func (e *offlineEngine) admitPod(pod []byte, namespace, name string) (*admitted, error) {
	return admitThrough(e.roundTrip, e.inst.EnvPolicy, offlineUID, pod, namespace, name)
}

// admitThrough runs one Pod (JSON) through door's /mutate, applies the
// patch, and when policy targets pods puts the mutated pod through
// /validate too, folding the findings into one answer (07 §1.4). The
// two-door test passes the HTTPS front door here.
func admitThrough(door reviewDoor, policy *envpolicy.Policy, uid string, pod []byte, namespace, name string) (*admitted, error) {
	body, err := podReview(uid, pod, namespace, name)
	if err != nil {
		return nil, err
	}
	resp, d, err := door(handler.PathMutate, body)
	if err != nil {
		return nil, err
	}
	out := &admitted{Answer: resp, Mutate: d, Patch: []byte("[]")}
	if !resp.Allowed {
		return out, nil
	}
	out.Mutated = pod
	if resp.Patch != "" {
		out.Patch, out.Mutated, err = applyAnswerPatch(pod, resp.Patch)
		if err != nil {
			return nil, err
		}
	}
	if !targetsPods(policy) {
		return out, nil
	}
	body, err = podReview(uid, out.Mutated, namespace, name)
	if err != nil {
		return nil, err
	}
	v, vd, err := door(handler.PathValidate, body)
	if err != nil {
		return nil, err
	}
	out.Validate = vd
	out.Answer = foldValidation(resp, v)
	if !out.Answer.Allowed {
		out.Mutated = nil
	}
	return out, nil
}

// applyAnswerPatch decodes a base64 patch and applies it to pod.
func applyAnswerPatch(pod []byte, patch64 string) (patch, mutated []byte, err error) {
	patch, err = decodeBase64(patch64)
	if err != nil {
		return nil, nil, fmt.Errorf("the front door's patch is not base64: %w", err)
	}
	mutated, err = jsonpatch.Apply(pod, patch)
	if err != nil {
		return nil, nil, fmt.Errorf("apply the front door's patch: %w", err)
	}
	return patch, mutated, nil
}

// targetsPods reports whether an envPolicy exists and targets pods.
func targetsPods(p *envpolicy.Policy) bool {
	return p != nil && slices.Contains(p.Targets, envpolicy.TargetPods)
}

// foldValidation folds the /validate answer for the mutated pod into the
// /mutate answer (07 §1.4): a policy refusal denies with the policy's status
// and drops the patch; the policy's warnings follow the mutating ones; audit
// annotations are merged.
func foldValidation(mutate, validate *review.Response) *review.Response {
	out := *mutate
	if !validate.Allowed {
		out.Allowed = false
		out.Status = validate.Status
		out.Patch, out.PatchType = "", ""
	}
	if len(validate.Warnings) > 0 {
		out.Warnings = append(slices.Clone(mutate.Warnings), validate.Warnings...)
	}
	if len(validate.AuditAnnotations) > 0 {
		merged := make(map[string]string, len(mutate.AuditAnnotations)+len(validate.AuditAnnotations))
		for k, v := range mutate.AuditAnnotations {
			merged[k] = v
		}
		for k, v := range validate.AuditAnnotations {
			merged[k] = v
		}
		out.AuditAnnotations = merged
	}
	return &out
}
