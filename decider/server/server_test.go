package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func ctxTimeout(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mutateRequest(name string) *deciderv1.DecisionRequest {
	return &deciderv1.DecisionRequest{
		Purpose: deciderv1.Purpose_PURPOSE_MUTATE,
		Pod:     &deciderv1.PodFacts{Namespace: "default", Name: name},
	}
}

func healthStatus(t *testing.T, conn *grpc.ClientConn, service string) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	resp, err := healthpb.NewHealthClient(conn).Check(ctxTimeout(t), &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		t.Fatalf("health check %q: %v", service, err)
	}
	return resp.GetStatus()
}

// listServices asks server reflection for the service list.
func listServices(t *testing.T, conn *grpc.ClientConn) ([]string, error) {
	t.Helper()
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctxTimeout(t))
	if err != nil {
		return nil, err
	}
	// A stream the server has already ended (Unimplemented with reflection
	// off, or refused by the transport) answers Send with io.EOF; the
	// status is then read with Recv (grpc.ClientStream.SendMsg).
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{ListServices: "*"},
	}); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	resp, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	return names, nil
}

func TestCallsOverLoopback(t *testing.T) {
	r := start(t, Config{Reflection: true}, installation.Empty())
	client := deciderv1.NewDeciderServiceClient(dial(t, r.addr, nil))

	t.Run("Decide answers with the revision of the installation held", func(t *testing.T) {
		resp, err := client.Decide(ctxTimeout(t), mutateRequest("app"))
		if err != nil {
			t.Fatalf("Decide: %v", err)
		}
		if got := resp.GetDecision().GetInstallationRevision(); got != installation.EmptyRevision {
			t.Errorf("revision = %q, want %q", got, installation.EmptyRevision)
		}
	})
	t.Run("GetInstallation answers with the revision", func(t *testing.T) {
		resp, err := client.GetInstallation(ctxTimeout(t), &deciderv1.GetInstallationRequest{})
		if err != nil {
			t.Fatalf("GetInstallation: %v", err)
		}
		if resp.GetRevision() != installation.EmptyRevision {
			t.Errorf("revision = %q", resp.GetRevision())
		}
	})
	t.Run("the call log line carries method, code and duration only", func(t *testing.T) {
		log := r.log.String()
		if !strings.Contains(log, `"grpc_method":"Decide"`) || !strings.Contains(log, `"grpc_code":"OK"`) || !strings.Contains(log, `"duration_ms"`) {
			t.Errorf("call line missing method/code/duration:\n%s", log)
		}
		for _, leak := range []string{"peer", "default", "grpc.request", "app\""} {
			if strings.Contains(log, leak) {
				t.Errorf("call log carries %q:\n%s", leak, log)
			}
		}
	})
}

func TestHealth(t *testing.T) {
	t.Run("health is NOT_SERVING until an installation is held, then SERVING", func(t *testing.T) {
		r := start(t, Config{}, nil)
		conn := dial(t, r.addr, nil)
		for _, svc := range []string{"", "dynamicconfig.decider.v1.DeciderService"} {
			if got := healthStatus(t, conn, svc); got != healthpb.HealthCheckResponse_NOT_SERVING {
				t.Errorf("before: %q is %v, want NOT_SERVING", svc, got)
			}
		}
		if r.srv.Ready() {
			t.Error("Ready() without an installation")
		}
		r.store.Swap(installation.Empty())
		r.srv.RefreshHealth()
		for _, svc := range []string{"", "dynamicconfig.decider.v1.DeciderService"} {
			if got := healthStatus(t, conn, svc); got != healthpb.HealthCheckResponse_SERVING {
				t.Errorf("after: %q is %v, want SERVING", svc, got)
			}
		}
	})
	t.Run("health turns NOT_SERVING when graceful shutdown starts", func(t *testing.T) {
		r := start(t, Config{}, installation.Empty())
		conn := dial(t, r.addr, nil)
		if got := healthStatus(t, conn, ""); got != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("status %v, want SERVING", got)
		}
		watch, err := healthpb.NewHealthClient(conn).Watch(ctxTimeout(t), &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if first, err := watch.Recv(); err != nil || first.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("first watch update %v, %v", first, err)
		}
		go r.srv.Shutdown(2 * time.Second)
		next, err := watch.Recv()
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		if next.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Errorf("status during shutdown %v, want NOT_SERVING", next.GetStatus())
		}
		if r.srv.Ready() {
			t.Error("Ready() while draining")
		}
	})
}

func TestPanicRecovery(t *testing.T) {
	r := start(t, Config{}, installation.Empty())
	client := deciderv1.NewDeciderServiceClient(dial(t, r.addr, nil))

	_, err := client.Decide(ctxTimeout(t), mutateRequest("panic"))
	st := status.Convert(err)
	t.Run("a panic in a handler answers Internal with a generic message", func(t *testing.T) {
		if st.Code() != codes.Internal {
			t.Fatalf("code %v, want Internal (%v)", st.Code(), err)
		}
		if !regexp.MustCompile(`^internal error \(decision [0-9a-f-]{36}\)$`).MatchString(st.Message()) {
			t.Errorf("message %q is not the generic one", st.Message())
		}
	})
	t.Run("the panic and its stack are logged under the decision id", func(t *testing.T) {
		id := strings.TrimSuffix(strings.TrimPrefix(st.Message(), "internal error (decision "), ")")
		log := r.log.String()
		if !strings.Contains(log, `"decision_id":"`+id+`"`) || !strings.Contains(log, "test panic") || !strings.Contains(log, "goroutine") {
			t.Errorf("panic not logged in full under %s:\n%s", id, log)
		}
	})
	t.Run("the server keeps serving after the panic", func(t *testing.T) {
		if _, err := client.Decide(ctxTimeout(t), mutateRequest("app")); err != nil {
			t.Errorf("Decide after the panic: %v", err)
		}
	})
}

func TestBearerToken(t *testing.T) {
	old := tokenRecheck
	tokenRecheck = 0
	t.Cleanup(func() { tokenRecheck = old })
	tokenPath := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenPath, []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := start(t, Config{TokenFile: tokenPath, Reflection: true}, installation.Empty())
	conn := dial(t, r.addr, nil)
	client := deciderv1.NewDeciderServiceClient(conn)
	withToken := func(token string) context.Context {
		return metadata.AppendToOutgoingContext(ctxTimeout(t), "authorization", "Bearer "+token)
	}

	cases := []struct {
		name string
		ctx  context.Context
		want codes.Code
	}{
		{"a call without a token is Unauthenticated", ctxTimeout(t), codes.Unauthenticated},
		{"a call with a wrong token is Unauthenticated", withToken("wrong"), codes.Unauthenticated},
		{"a call with a token prefix is Unauthenticated", withToken("s3cret"), codes.Unauthenticated},
		{"a call with another scheme is Unauthenticated", metadata.AppendToOutgoingContext(ctxTimeout(t), "authorization", "Basic s3cret-token"), codes.Unauthenticated},
		{"a call with the token passes", withToken("s3cret-token"), codes.OK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := client.GetInstallation(c.ctx, &deciderv1.GetInstallationRequest{})
			if got := status.Code(err); got != c.want {
				t.Errorf("code %v, want %v (%v)", got, c.want, err)
			}
		})
	}
	t.Run("health stays callable without a token", func(t *testing.T) {
		if got := healthStatus(t, conn, ""); got != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health %v", got)
		}
	})
	t.Run("reflection stays callable without a token", func(t *testing.T) {
		if _, err := listServices(t, conn); err != nil {
			t.Errorf("reflection: %v", err)
		}
	})
	t.Run("a rotated token file is honoured without a restart", func(t *testing.T) {
		if err := os.WriteFile(tokenPath, []byte("rotated-token-value"), 0o600); err != nil {
			t.Fatal(err)
		}
		// The re-check runs off the request path: the new token is in
		// force once it finished.
		deadline := time.Now().Add(5 * time.Second)
		for {
			_, err := client.GetInstallation(withToken("rotated-token-value"), &deciderv1.GetInstallationRequest{})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("new token refused: %v", err)
			}
			time.Sleep(5 * time.Millisecond)
		}
		_, err := client.GetInstallation(withToken("s3cret-token"), &deciderv1.GetInstallationRequest{})
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("old token still accepted: %v", err)
		}
	})
	t.Run("an empty token file is refused at start", func(t *testing.T) {
		empty := filepath.Join(t.TempDir(), "empty")
		if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := New(Config{TokenFile: empty}, installationloader.NewStore(nil), &echoService{}); err == nil {
			t.Error("New accepted an empty token file")
		}
	})
}

func TestMutualTLS(t *testing.T) {
	pki := newTestPKI(t)
	r := start(t, Config{TLS: pki.serverTLS(true), Reflection: true}, installation.Empty())

	t.Run("a client without a certificate is refused", func(t *testing.T) {
		client := deciderv1.NewDeciderServiceClient(dial(t, r.addr, pki.clientCreds(false)))
		_, err := client.GetInstallation(ctxTimeout(t), &deciderv1.GetInstallationRequest{})
		if err == nil {
			t.Fatal("call without a client certificate succeeded")
		}
		if code := status.Code(err); code != codes.Unavailable {
			t.Errorf("code %v, want Unavailable (%v)", code, err)
		}
	})
	t.Run("a client with a certificate from the CA is served", func(t *testing.T) {
		client := deciderv1.NewDeciderServiceClient(dial(t, r.addr, pki.clientCreds(true)))
		if _, err := client.GetInstallation(ctxTimeout(t), &deciderv1.GetInstallationRequest{}); err != nil {
			t.Errorf("GetInstallation: %v", err)
		}
	})
	t.Run("health is behind mTLS too", func(t *testing.T) {
		conn := dial(t, r.addr, pki.clientCreds(false))
		if _, err := healthpb.NewHealthClient(conn).Check(ctxTimeout(t), &healthpb.HealthCheckRequest{}); err == nil {
			t.Error("health answered a client without a certificate")
		}
	})
	t.Run("reflection is behind mTLS too", func(t *testing.T) {
		if _, err := listServices(t, dial(t, r.addr, pki.clientCreds(false))); err == nil {
			t.Error("reflection answered a client without a certificate")
		}
	})
	t.Run("reflection answers a client with a certificate from the CA", func(t *testing.T) {
		if _, err := listServices(t, dial(t, r.addr, pki.clientCreds(true))); err != nil {
			t.Errorf("reflection: %v", err)
		}
	})
}

func TestReflection(t *testing.T) {
	t.Run("reflection lists the DeciderService", func(t *testing.T) {
		r := start(t, Config{Reflection: true}, installation.Empty())
		names, err := listServices(t, dial(t, r.addr, nil))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(names, ","), "dynamicconfig.decider.v1.DeciderService") {
			t.Errorf("services %v", names)
		}
	})
	t.Run("with reflection off the reflection service is not there", func(t *testing.T) {
		r := start(t, Config{Reflection: false}, installation.Empty())
		_, err := listServices(t, dial(t, r.addr, nil))
		if status.Code(err) != codes.Unimplemented {
			t.Errorf("reflection answered with reflection off: %v", err)
		}
	})
}

// Issue 17: the decider holds one message budget (msgbudget.Bytes of
// --max-request-bytes) on what it receives and what it sends.
func TestTheMessageBudgetBoundsBothDirectionsToTheByte(t *testing.T) {
	req := mutateRequest("app")
	req.Pod.Annotations = map[string]string{"dynamic-config.rs/key": strings.Repeat("x", 2048)}
	size := proto.Size(req)
	t.Run("a request of exactly the budget is received", func(t *testing.T) {
		r := start(t, Config{MaxMessageBytes: size}, installation.Empty())
		if _, err := deciderv1.NewDeciderServiceClient(dial(t, r.addr, nil)).Decide(ctxTimeout(t), req); err != nil {
			t.Errorf("a request of %d bytes under a budget of %d: %v", size, size, err)
		}
	})
	t.Run("a request one byte above the budget is ResourceExhausted", func(t *testing.T) {
		r := start(t, Config{MaxMessageBytes: size - 1}, installation.Empty())
		_, err := deciderv1.NewDeciderServiceClient(dial(t, r.addr, nil)).Decide(ctxTimeout(t), req)
		if status.Code(err) != codes.ResourceExhausted {
			t.Errorf("a request above the limit: %v, want ResourceExhausted", err)
		}
	})
	inst := installation.Empty()
	answer := proto.Size(&deciderv1.GetInstallationResponse{Revision: inst.Revision, LoadedAt: timestamppb.New(inst.LoadedAt)})
	t.Run("an answer of exactly the budget is sent", func(t *testing.T) {
		r := start(t, Config{MaxMessageBytes: answer}, inst)
		if _, err := deciderv1.NewDeciderServiceClient(dial(t, r.addr, nil)).GetInstallation(ctxTimeout(t), &deciderv1.GetInstallationRequest{}); err != nil {
			t.Errorf("an answer of %d bytes under a budget of %d: %v", answer, answer, err)
		}
	})
	t.Run("an answer one byte above the budget is not sent", func(t *testing.T) {
		r := start(t, Config{MaxMessageBytes: answer - 1}, inst)
		_, err := deciderv1.NewDeciderServiceClient(dial(t, r.addr, nil)).GetInstallation(ctxTimeout(t), &deciderv1.GetInstallationRequest{})
		if status.Code(err) != codes.ResourceExhausted {
			t.Errorf("an answer above the limit: %v, want ResourceExhausted", err)
		}
	})
}

func TestMetricsHandler(t *testing.T) {
	r := start(t, Config{}, installation.Empty())
	client := deciderv1.NewDeciderServiceClient(dial(t, r.addr, nil))
	if _, err := client.Decide(ctxTimeout(t), mutateRequest("app")); err != nil {
		t.Fatal(err)
	}
	ready := true
	h := MetricsHandler(r.registry, func() bool { return ready })
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		body, _ := io.ReadAll(rec.Result().Body)
		return rec.Code, string(body)
	}

	cases := []struct {
		name      string
		path      string
		ready     bool
		wantCode  int
		wantBody  string
		substring bool
	}{
		{"healthz answers ok", "/healthz", false, 200, "ok", false},
		{"readyz answers ok while ready", "/readyz", true, 200, "ok", false},
		{"readyz answers 503 not ready otherwise", "/readyz", false, 503, "not ready", false},
		{"metrics carries the gRPC server metrics", "/metrics", true, 200, `grpc_server_handled_total{grpc_code="OK",grpc_method="Decide"`, true},
		{"metrics carries the handling histogram", "/metrics", true, 200, "grpc_server_handling_seconds_bucket", true},
		{"metrics carries the Go runtime collector", "/metrics", true, 200, "go_goroutines", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ready = c.ready
			code, body := get(c.path)
			if code != c.wantCode {
				t.Errorf("code %d, want %d", code, c.wantCode)
			}
			if c.substring && !strings.Contains(body, c.wantBody) || !c.substring && body != c.wantBody {
				t.Errorf("body %q, want %q", body, c.wantBody)
			}
		})
	}
}

// TestInterceptorOrder pins ChainUnaryInterceptor(metrics, logging, auth,
// recovery) of spec 06 §7 by what each outer interceptor sees: a recovered
// panic and a refused token are both counted and logged with their codes.
func TestInterceptorOrder(t *testing.T) {
	tokenPath := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenPath, []byte("s3cret-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := start(t, Config{TokenFile: tokenPath}, installation.Empty())
	client := deciderv1.NewDeciderServiceClient(dial(t, r.addr, nil))
	authorized := metadata.AppendToOutgoingContext(ctxTimeout(t), "authorization", "Bearer s3cret-token")

	if _, err := client.Decide(authorized, mutateRequest("panic")); status.Code(err) != codes.Internal {
		t.Fatalf("a panicking call: %v, want Internal", err)
	}
	if _, err := client.Decide(ctxTimeout(t), mutateRequest("panic")); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("a call without a token: %v, want Unauthenticated (auth runs before the handler)", err)
	}
	if _, err := client.Decide(metadata.AppendToOutgoingContext(ctxTimeout(t), "authorization", "Bearer wrong"), mutateRequest("panic")); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("a call with a wrong token: %v, want Unauthenticated", err)
	}
	families, err := r.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	handled := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "grpc_server_handled_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["grpc_method"] == "Decide" {
				handled[labels["grpc_code"]] += m.GetCounter().GetValue()
			}
		}
	}
	log := r.log.String()
	// Issue 23: the token is checked in the transport's tap handle, before
	// the chain and before the message is read; the chain never sees a
	// refused call, and the tap writes one sampled line for a burst.
	t.Run("a call the token refuses never reaches the chain", func(t *testing.T) {
		if handled["Unauthenticated"] != 0 {
			t.Errorf("grpc_server_handled_total{grpc_method=Decide,grpc_code=Unauthenticated} = %v, want 0", handled["Unauthenticated"])
		}
	})
	t.Run("the tap handle logs the first refused call and suppresses the next within the interval", func(t *testing.T) {
		line := `"msg":"grpc call refused before its message was read","grpc_service":"dynamicconfig.decider.v1.DeciderService","grpc_method":"Decide","grpc_code":"Unauthenticated","suppressed":0`
		if n := strings.Count(log, "grpc call refused before its message was read"); n != 1 || !strings.Contains(log, line) {
			t.Errorf("%d refusal lines, want 1 of %s:\n%s", n, line, log)
		}
	})
	for _, code := range []string{"Internal"} {
		t.Run("metrics, outside recovery and auth, count the "+code+" call", func(t *testing.T) {
			if handled[code] != 1 {
				t.Errorf("grpc_server_handled_total{grpc_method=Decide,grpc_code=%s} = %v, want 1 (all: %v)", code, handled[code], handled)
			}
		})
		t.Run("logging, outside recovery and auth, logs the "+code+" call", func(t *testing.T) {
			if !strings.Contains(log, `"msg":"grpc call","grpc_service":"dynamicconfig.decider.v1.DeciderService","grpc_method":"Decide","grpc_code":"`+code+`"`) {
				t.Errorf("no call line with code %s:\n%s", code, log)
			}
		})
	}
}

func TestShutdownEndsTheRevisionWatchesInsteadOfWaitingOutTheGrace(t *testing.T) {
	inst, err := installationloader.Load(installationloader.Options{DocumentPath: filepath.Join(t.TempDir(), "absent.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	store := installationloader.NewStore(inst)
	srv, err := New(Config{}, store, service.New(store, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	conn := dial(t, lis.Addr().String(), nil)
	stream, err := deciderv1.NewDeciderServiceClient(conn).WatchRevision(context.Background(), &deciderv1.WatchRevisionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	const grace = 20 * time.Second
	start := time.Now()
	srv.Shutdown(grace)
	if took := time.Since(start); took > grace/2 {
		t.Errorf("Shutdown took %s with a revision watch open: it waited for the stream", took)
	}
	if _, err := stream.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("the watch ended with %v, want UNAVAILABLE", err)
	}
}
