package service

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// lockedBuffer collects log output written from the server goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// served is a Service behind a real gRPC server on bufconn, with a client.
type served struct {
	svc    *Service
	client deciderv1.DeciderServiceClient
	logs   *lockedBuffer
	reg    *prometheus.Registry
}

func serve(t *testing.T, store *installationloader.Store) *served {
	t.Helper()
	logs := &lockedBuffer{}
	reg := prometheus.NewRegistry()
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	svc := New(store, logger, metrics.NewDecider(reg))
	listener := bufconn.Listen(1 << 20)
	// The decider server's recovery, as decider/server wires it: a decision id
	// per call, a panic answered by Recovered.
	recovering := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		ctx = WithDecisionID(ctx)
		defer func() {
			if p := recover(); p != nil {
				resp, err = nil, Recovered(ctx, logger, p)
			}
		}()
		return handler(ctx, req)
	}
	server := grpc.NewServer(grpc.ChainUnaryInterceptor(recovering))
	deciderv1.RegisterDeciderServiceServer(server, svc)
	go func() { _ = server.Serve(listener) }()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return listener.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		server.Stop()
	})
	return &served{svc: svc, client: deciderv1.NewDeciderServiceClient(conn), logs: logs, reg: reg}
}

// consulPod is canonical example 1's pod facts.
func consulPod() *deciderv1.PodFacts {
	return &deciderv1.PodFacts{
		Namespace: "default", Name: "app", Operation: deciderv1.Operation_OPERATION_CREATE,
		ResourceKind: deciderv1.ResourceKind_RESOURCE_KIND_POD,
		Annotations: map[string]string{
			"dynamic-config.rs/inject":   "true",
			"dynamic-config.rs/source":   "consul",
			"dynamic-config.rs/endpoint": "http://user:secret@consul:8500",
			"dynamic-config.rs/key":      "myapp/config.json",
			"dynamic-config.rs/path":     "/config/rendered.toml",
		},
		Containers: []*deciderv1.Container{{Name: "app"}},
	}
}

func TestDecideRejectsBrokenRequests(t *testing.T) {
	s := serve(t, installationloader.NewStore(installation.Empty()))
	pod := func(kind deciderv1.ResourceKind) *deciderv1.PodFacts {
		p := consulPod()
		p.ResourceKind = kind
		return p
	}
	cases := []struct {
		name string
		req  *deciderv1.DecisionRequest
		want string
	}{
		{"an unspecified purpose is an invalid argument",
			&deciderv1.DecisionRequest{Pod: consulPod()}, "purpose is unspecified"},
		{"an unknown purpose is an invalid argument",
			&deciderv1.DecisionRequest{Purpose: 7, Pod: consulPod()}, "is not known"},
		{"a request without a pod is an invalid argument",
			&deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE}, "pod is missing"},
		{"VALIDATE without a resource kind is an invalid argument",
			&deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_VALIDATE, Pod: pod(deciderv1.ResourceKind_RESOURCE_KIND_UNSPECIFIED)},
			"PURPOSE_VALIDATE needs a resource_kind"},
		{"MUTATE of a Deployment is an invalid argument",
			&deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: pod(deciderv1.ResourceKind_RESOURCE_KIND_DEPLOYMENT)},
			"admits pods only"},
		{"an unknown resource kind is an invalid argument",
			&deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_VALIDATE, Pod: pod(42)}, "is not known"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.client.Decide(context.Background(), tc.req)
			st := status.Convert(err)
			if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), tc.want) {
				t.Errorf("got %v %q, want InvalidArgument containing %q", st.Code(), st.Message(), tc.want)
			}
		})
	}
	t.Run("MUTATE with an unspecified kind is read as a pod", func(t *testing.T) {
		if _, err := s.client.Decide(context.Background(), &deciderv1.DecisionRequest{
			Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: pod(deciderv1.ResourceKind_RESOURCE_KIND_UNSPECIFIED)}); err != nil {
			t.Errorf("got %v, want an answer", err)
		}
	})
}

func TestUnavailableWithoutAnInstallation(t *testing.T) {
	s := serve(t, installationloader.NewStore(nil))
	_, err := s.client.Decide(context.Background(), &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: consulPod()})
	if code := status.Code(err); code != codes.Unavailable {
		t.Errorf("Decide: got %v, want Unavailable", code)
	}
	_, err = s.client.GetInstallation(context.Background(), &deciderv1.GetInstallationRequest{})
	if code := status.Code(err); code != codes.Unavailable {
		t.Errorf("GetInstallation: got %v, want Unavailable", code)
	}
	t.Run("a broken request is still an invalid argument", func(t *testing.T) {
		_, err := s.client.Decide(context.Background(), &deciderv1.DecisionRequest{Pod: consulPod()})
		if code := status.Code(err); code != codes.InvalidArgument {
			t.Errorf("got %v, want InvalidArgument", code)
		}
	})
}

func TestDecideAnswers(t *testing.T) {
	inst := installation.Empty()
	s := serve(t, installationloader.NewStore(inst))
	ids := map[string]bool{}
	for i := 0; i < 3; i++ {
		resp, err := s.client.Decide(context.Background(), &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: consulPod()})
		if err != nil {
			t.Fatal(err)
		}
		d := resp.GetDecision()
		id, err := uuid.Parse(d.GetDecisionId())
		if err != nil || id.Version() != 4 || id.Variant() != uuid.RFC4122 || d.GetDecisionId() != id.String() {
			t.Errorf("decision_id %q is not a canonical UUIDv4 (%v)", d.GetDecisionId(), err)
		}
		ids[d.GetDecisionId()] = true
		if d.GetInstallationRevision() != inst.Revision {
			t.Errorf("installation_revision = %q, want %q", d.GetInstallationRevision(), inst.Revision)
		}
		if d.GetAuditAnnotations()["revision"] != inst.Revision {
			t.Errorf("audit annotation revision = %q, want %q", d.GetAuditAnnotations()["revision"], inst.Revision)
		}
		if d.GetAuditAnnotations()["decision-id"] != d.GetDecisionId() {
			t.Errorf("audit annotation decision-id = %q, want the decision id %q", d.GetAuditAnnotations()["decision-id"], d.GetDecisionId())
		}
	}
	if len(ids) != 3 {
		t.Errorf("decision ids repeat: %v", ids)
	}

	t.Run("GetInstallation describes the installation in force", func(t *testing.T) {
		resp, err := s.client.GetInstallation(context.Background(), &deciderv1.GetInstallationRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetRevision() != inst.Revision {
			t.Errorf("revision = %q, want %q", resp.GetRevision(), inst.Revision)
		}
	})

	t.Run("each decision is counted", func(t *testing.T) {
		total := 0.0
		for _, o := range []string{"skip", "inject", "refuse"} {
			total += counterValue(t, s.reg, "dynamic_config_decisions_total", o, "mutate")
		}
		if total != 3 {
			t.Errorf("dynamic_config_decisions_total{purpose=mutate} = %v, want 3", total)
		}
	})

	t.Run("each decision logs one line with exactly the spec's fields and no values", func(t *testing.T) {
		lines := strings.Split(strings.TrimSpace(s.logs.String()), "\n")
		if len(lines) != 3 {
			t.Fatalf("got %d log lines, want 3:\n%s", len(lines), s.logs)
		}
		var entry map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &entry); err != nil {
			t.Fatal(err)
		}
		want := []string{"decision_id", "purpose", "namespace", "name", "kind", "outcome", "skip_reason", "reason",
			"check", "key", "render", "stores", "revision", "cluster", "caller", "duration_us", "trace_id", "span_id", "time", "level", "msg"}
		if len(entry) != len(want) {
			t.Errorf("log line has %d fields, want %d: %s", len(entry), len(want), lines[0])
		}
		for _, k := range want {
			if _, ok := entry[k]; !ok {
				t.Errorf("log line lacks %q: %s", k, lines[0])
			}
		}
		if entry["msg"] != "decision" || entry["purpose"] != "mutate" || entry["kind"] != "Pod" || entry["name"] != "app" {
			t.Errorf("unexpected log line %s", lines[0])
		}
		// store names are logged on purpose; the other values never are
		for _, value := range []string{"secret", "consul:8500", "myapp/config.json", "/config/rendered.toml"} {
			if strings.Contains(s.logs.String(), value) {
				t.Errorf("log carries the annotation value %q", value)
			}
		}
	})
}

func TestDecidePanicIsInternal(t *testing.T) {
	s := serve(t, installationloader.NewStore(installation.Empty()))
	s.svc.decide = func(*installation.Installation, *classes.Set, *decision.Facts) decision.Decision {
		panic("resolver bug")
	}
	_, err := s.client.Decide(context.Background(), &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: consulPod()})
	st := status.Convert(err)
	if st.Code() != codes.Internal {
		t.Fatalf("got %v, want Internal", st.Code())
	}
	id, ok := strings.CutPrefix(st.Message(), "internal error (decision ")
	id, ok2 := strings.CutSuffix(id, ")")
	if _, err := uuid.Parse(id); !ok || !ok2 || err != nil {
		t.Errorf("message %q is not \"internal error (decision <uuid>)\"", st.Message())
	}
	if !strings.Contains(s.logs.String(), "resolver bug") || !strings.Contains(s.logs.String(), id) {
		t.Errorf("the panic and its decision id are not logged: %s", s.logs)
	}
}

// counterValue reads one series of a counter vector registered in reg (labels
// in label-name order).
func counterValue(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			match := len(m.GetLabel()) == len(labels)
			for i, l := range m.GetLabel() {
				if match && l.GetValue() != labels[i] {
					match = false
				}
			}
			if match {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no %s%v", name, labels)
	return 0
}

func TestDecisionLogLineOfARefusal(t *testing.T) {
	s := serve(t, installationloader.NewStore(installation.Empty()))
	pod := consulPod()
	pod.Annotations["dynamic-config.rs/watch-seconds"] = "soon-ish"
	resp, err := s.client.Decide(context.Background(), &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: pod})
	if err != nil {
		t.Fatal(err)
	}
	d := resp.GetDecision()
	if d.GetOutcome() != deciderv1.Outcome_OUTCOME_REFUSE || len(d.GetRefusals()) == 0 {
		t.Fatalf("outcome %v, want a refusal", d.GetOutcome())
	}
	refusal := d.GetRefusals()[0]
	var entry map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(s.logs.String())), &entry); err != nil {
		t.Fatalf("want one JSON line: %v\n%s", err, s.logs)
	}
	want := map[string]any{
		"msg": "decision", "decision_id": d.GetDecisionId(), "outcome": "refuse", "skip_reason": "",
		"reason": refusal.GetReasonSlug(), "check": refusal.GetCheck(), "key": "dynamic-config.rs/watch-seconds",
		"render": "", "revision": installation.EmptyRevision,
	}
	for k, v := range want {
		t.Run("a refusal logs "+k, func(t *testing.T) {
			if entry[k] != v {
				t.Errorf("%s = %v, want %v", k, entry[k], v)
			}
		})
	}
	t.Run("a refusal logs neither the value nor the message", func(t *testing.T) {
		for _, leak := range []string{"soon-ish", refusal.GetMessage()} {
			if strings.Contains(s.logs.String(), leak) {
				t.Errorf("the log carries %q: %s", leak, s.logs)
			}
		}
	})
}
