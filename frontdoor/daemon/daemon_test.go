package daemon

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/certs/certstest"
)

// revisionOfTheStandIn is the revision the stand-in decider answers under.
const revisionOfTheStandIn = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// standInDecider answers every Decide with a skip under its revision: the
// front door's side of the wire, without the decider (which the front door
// never imports; test/loopback and test/cases run the two daemons
// together).
type standInDecider struct {
	deciderv1.UnimplementedDeciderServiceServer
}

func (standInDecider) Decide(_ context.Context, req *deciderv1.DecisionRequest) (*deciderv1.DecisionResponse, error) {
	return &deciderv1.DecisionResponse{Decision: &deciderv1.Decision{
		DecisionId: "d-1", Outcome: deciderv1.Outcome_OUTCOME_SKIP, SkipReason: deciderv1.SkipReason_SKIP_REASON_NOT_REQUESTED,
		InstallationRevision: revisionOfTheStandIn, AuditAnnotations: map[string]string{"revision": revisionOfTheStandIn, "cluster": req.GetCluster()},
	}}, nil
}

// WatchRevision announces the stand-in's revision once and keeps the
// stream open: the front door's decision cache answers under it.
func (standInDecider) WatchRevision(_ *deciderv1.WatchRevisionRequest, stream grpc.ServerStreamingServer[deciderv1.WatchRevisionResponse]) error {
	if err := stream.Send(&deciderv1.WatchRevisionResponse{InstallationRevision: revisionOfTheStandIn,
		HeartbeatInterval: durationpb.New(time.Minute)}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

// startStandIn serves the stand-in decider on a loopback port.
func startStandIn(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	deciderv1.RegisterDeciderServiceServer(srv, standInDecider{})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// reviewBody is an AdmissionReview of a Pod that asks for injection.
const reviewBody = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1","kind":{"group":"","version":"v1","kind":"Pod"},` +
	`"resource":{"group":"","version":"v1","resource":"pods"},"operation":"CREATE","namespace":"team-a","object":{"apiVersion":"v1","kind":"Pod",` +
	`"metadata":{"name":"app","annotations":{"dynamic-config.rs/inject":"true"}},"spec":{"containers":[{"name":"app","image":"app"}]}}}}`

// httpsClient trusts bundle's CA, with the client certificates given.
func httpsClient(bundle *certstest.Bundle, certificates ...tls.Certificate) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: bundle.Pool(), Certificates: certificates, MinVersion: tls.VersionTLS12}}}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body))
}

// TestAFrontDoorStartsWithoutACommandLine starts the front door from a
// Config (HTTPS on a generated pair, a metrics listener, the stand-in
// decider), admits a pod over HTTPS, and stops it with its context.
func TestAFrontDoorStartsWithoutACommandLine(t *testing.T) {
	bundle, err := certstest.Write(t.TempDir(), "tls", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	fd, err := Start(ctx, Config{
		Addr:        "127.0.0.1:0",
		TLS:         TLS{CertFile: bundle.CertFile, KeyFile: bundle.KeyFile},
		Decider:     client.Config{Target: startStandIn(t), Plaintext: true},
		Cluster:     "west",
		MetricsAddr: "127.0.0.1:0",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("it serves HTTPS at its URL and is ready once its pair is loaded", func(t *testing.T) {
		if !fd.TLS() || fd.URL() != "https://"+fd.Addr().String() || !fd.Ready() {
			t.Errorf("TLS %v, URL %s, ready %v", fd.TLS(), fd.URL(), fd.Ready())
		}
		if code, body := get(t, "http://"+fd.MetricsAddr().String()+"/readyz"); code != http.StatusOK || body != "ok" {
			t.Errorf("/readyz on the metrics listener: %d %q", code, body)
		}
	})
	t.Run("an admission is answered from the decider's decision, for the front door's cluster", func(t *testing.T) {
		resp, err := httpsClient(bundle).Post(fd.URL()+"/mutate", "application/json", strings.NewReader(reviewBody))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		answer, err := review.DecodeAnswer(data)
		if err != nil {
			t.Fatalf("%v: %s", err, data)
		}
		if !answer.Allowed || answer.UID != "u-1" || answer.AuditAnnotations["revision"] != revisionOfTheStandIn || answer.AuditAnnotations["cluster"] != "west" {
			t.Errorf("answer %s", data)
		}
	})
	stop()
	select {
	case <-fd.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the front door did not stop when its context ended")
	}
	if err := fd.Err(); err != nil {
		t.Errorf("Err after a drain: %v", err)
	}
	if _, err := net.DialTimeout("tcp", fd.Addr().String(), time.Second); err == nil {
		t.Error("the admission listener still accepts after the stop")
	}
}

// TestAFrontDoorWithAClientCAAnswersOnlyTheAPIServer: with TLS.ClientCA,
// /mutate answers a caller whose client certificate the CA signed, and
// refuses one without (401).
func TestAFrontDoorWithAClientCAAnswersOnlyTheAPIServer(t *testing.T) {
	bundle, err := certstest.Write(t.TempDir(), "tls", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := Start(t.Context(), Config{Addr: "127.0.0.1:0",
		TLS:     TLS{CertFile: bundle.CertFile, KeyFile: bundle.KeyFile, ClientCA: bundle.CAFile},
		Decider: client.Config{Target: startStandIn(t), Plaintext: true}})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(bundle.CertFile, bundle.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		client *http.Client
		code   int
	}{
		{"a caller with the CA's client certificate is answered", httpsClient(bundle, pair), http.StatusOK},
		{"a caller without a client certificate is refused", httpsClient(bundle), http.StatusUnauthorized},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, err := c.client.Post(fd.URL()+"/mutate", "application/json", strings.NewReader(reviewBody))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.code {
				t.Errorf("HTTP %d, want %d", resp.StatusCode, c.code)
			}
		})
	}
}

// TestAFrontDoorWithoutItsPair: without a pair it refuses to start, or with
// PlaintextWithoutPair serves plain HTTP — where a client CA cannot be used.
func TestAFrontDoorWithoutItsPair(t *testing.T) {
	dir := t.TempDir()
	missing := TLS{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")}
	decider := client.Config{Target: startStandIn(t), Plaintext: true}

	t.Run("a pair that does not load is a PairError naming the files", func(t *testing.T) {
		_, err := Start(t.Context(), Config{Addr: "127.0.0.1:0", TLS: missing, Decider: decider})
		var pe *PairError
		if !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) || pe.CertFile != missing.CertFile ||
			!strings.HasPrefix(err.Error(), "the serving pair at "+missing.CertFile+" and "+missing.KeyFile+" does not load: ") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("with PlaintextWithoutPair it serves plain HTTP and is ready", func(t *testing.T) {
		plain := missing
		plain.PlaintextWithoutPair = true
		fd, err := Start(t.Context(), Config{Addr: "127.0.0.1:0", TLS: plain, Decider: decider})
		if err != nil {
			t.Fatal(err)
		}
		if fd.TLS() || fd.URL() != "http://"+fd.Addr().String() || !fd.Ready() {
			t.Errorf("TLS %v, URL %s, ready %v", fd.TLS(), fd.URL(), fd.Ready())
		}
		resp, err := http.Post(fd.URL()+"/mutate", "application/json", bytes.NewReader([]byte(reviewBody)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("HTTP %d", resp.StatusCode)
		}
	})
	t.Run("a client CA over plain HTTP is refused", func(t *testing.T) {
		plain := missing
		plain.PlaintextWithoutPair, plain.ClientCA = true, filepath.Join(dir, "ca.crt")
		if _, err := Start(t.Context(), Config{Addr: "127.0.0.1:0", TLS: plain, Decider: decider}); !errors.Is(err, ErrClientCAWithoutTLS) {
			t.Errorf("error %v, want ErrClientCAWithoutTLS", err)
		}
	})
}

// TestStartRefusesWhatCannotServe: every refusal is an error in the front
// door's words, and nothing is left listening.
func TestStartRefusesWhatCannotServe(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	decider := client.Config{Target: startStandIn(t), Plaintext: true}
	bundle, err := certstest.Write(t.TempDir(), "tls", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	free.Close()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"an admission address in use", Config{Addr: busy.Addr().String(), Decider: decider}, "listen tcp " + busy.Addr().String()},
		{"a metrics address in use", Config{Addr: freeAddr, MetricsAddr: busy.Addr().String(), Decider: decider},
			"metrics listener: listen tcp " + busy.Addr().String()},
		{"a client CA that does not read", Config{Addr: "127.0.0.1:0", Decider: decider,
			TLS: TLS{CertFile: bundle.CertFile, KeyFile: bundle.KeyFile, ClientCA: "/nonexistent/ca.crt"}}, "--client-ca: open /nonexistent/ca.crt"},
		{"self-rotate without hosts", Config{Addr: "127.0.0.1:0", Decider: decider, SelfRotate: &SelfRotate{}},
			"--self-rotate needs --self-rotate-hosts (the front door Service's DNS names)"},
		{"self-rotate with decider hosts and no decider Secret", Config{Addr: "127.0.0.1:0", Decider: decider,
			SelfRotate: &SelfRotate{Hosts: []string{"fd"}, DeciderHosts: []string{}}},
			"--self-rotate-decider-hosts needs --self-rotate-decider-secret"},
		{"a bearer token sent in plaintext off loopback", Config{Addr: "127.0.0.1:0", Decider: client.Config{Target: "10.0.0.1:9090", Plaintext: true, TokenFile: "/nonexistent"}},
			"token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fd, err := Start(t.Context(), tt.cfg)
			if err == nil {
				t.Fatalf("started on %s; want %q", fd.Addr(), tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want %q", err, tt.want)
			}
		})
	}
	t.Run("the admission listener of a refused metrics listener is closed", func(t *testing.T) {
		lis, err := net.Listen("tcp", freeAddr)
		if err != nil {
			t.Fatalf("the admission address stayed bound: %v", err)
		}
		lis.Close()
	})
}

// TestTheDecisionCacheIsOnUnlessTurnedOff: a front door started with the
// zero DecisionCache answers a question asked before from its cache once the
// decider announced its revision; with Off it asks the decider every time.
func TestTheDecisionCacheIsOnUnlessTurnedOff(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cache  DecisionCache
		source string
	}{
		{"on by default: the second admission is answered from the cache", DecisionCache{}, "cache"},
		{"off: the second admission is the decider's too", DecisionCache{Off: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, err := Start(t.Context(), Config{
				Addr:          "127.0.0.1:0",
				TLS:           TLS{PlaintextWithoutPair: true},
				Decider:       client.Config{Target: startStandIn(t), Plaintext: true},
				DecisionCache: tc.cache,
			})
			if err != nil {
				t.Fatal(err)
			}
			admit := func() *review.Response {
				resp, err := http.Post(fd.URL()+"/mutate", "application/json", strings.NewReader(reviewBody))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				data, _ := io.ReadAll(resp.Body)
				answer, err := review.DecodeAnswer(data)
				if err != nil {
					t.Fatalf("%v: %s", err, data)
				}
				return answer
			}
			var second *review.Response
			deadline := time.Now().Add(10 * time.Second)
			for {
				admit()
				second = admit()
				if tc.source == "" || second.AuditAnnotations["decision-source"] == tc.source || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond) // the revision watch announces shortly after the start
			}
			if got := second.AuditAnnotations["decision-source"]; got != tc.source {
				t.Fatalf("the second admission's decision-source is %q, want %q: %v", got, tc.source, second.AuditAnnotations)
			}
		})
	}
}
