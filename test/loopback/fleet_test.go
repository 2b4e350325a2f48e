package loopback_test

// A fleet of deciders behind the front door's client on loopback (issue
// 12): connection ageing finds a replica DNS starts listing, and client-side
// health checking drops a draining one before it stops — the decider's
// server and the front door's client together, each decider started by
// decider/daemon.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

	deciderd "github.com/dynamic-config-admission/dynamic-config/decider/daemon"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// fleetAge is the connection age of the in-process fleets: short, so that a
// test sees several GOAWAY rounds; the grace is what calls in flight get.
const (
	fleetAge      = time.Second
	fleetAgeGrace = 500 * time.Millisecond
)

// startReplica starts one decider on a loopback port 0 holding document,
// with connection ageing age and a 300 ms drain delay.
func startReplica(t *testing.T, document string, age time.Duration) *deciderd.Decider {
	t.Helper()
	return startReplicaDraining(t, document, age, 300*time.Millisecond)
}

func startReplicaDraining(t *testing.T, document string, age, drain time.Duration) *deciderd.Decider {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	d, err := deciderd.Start(ctx, deciderd.Config{
		Installation: deciderd.Installation{Load: installationloader.Options{DocumentPath: document, DocumentExplicit: true},
			ReloadInterval: time.Hour},
		Addr:                  "127.0.0.1:0",
		MaxConnectionAge:      age,
		MaxConnectionAgeGrace: fleetAgeGrace,
		DrainDelay:            drain,
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.Shutdown(time.Second)
		cancel()
	})
	return d
}

// emptyDocument writes an empty installation document.
func emptyDocument(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// dnsStandIn is a resolver that behaves as DNS does for grpc-go: it answers
// with the current address list only when asked to re-resolve (ResolveNow,
// which the client does when a connection goes away), never by itself.
type dnsStandIn struct {
	*manual.Resolver
	mu     sync.Mutex
	answer []string
}

func newDNSStandIn(t *testing.T, addrs ...string) *dnsStandIn {
	r := &dnsStandIn{Resolver: manual.NewBuilderWithScheme(fmt.Sprintf("fleet%d", time.Now().UnixNano())), answer: addrs}
	r.InitialState(stateOf(addrs))
	r.ResolveNowCallback = func(resolver.ResolveNowOptions) {
		r.mu.Lock()
		state := stateOf(r.answer)
		r.mu.Unlock()
		go r.UpdateState(state)
	}
	return r
}

// setAnswer changes what the next re-resolution returns; clients are not told.
func (r *dnsStandIn) setAnswer(addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = addrs
}

func stateOf(addrs []string) resolver.State {
	var s resolver.State
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, resolver.Endpoint{Addresses: []resolver.Address{{Addr: a}}})
	}
	return s
}

// load is a steady stream of Decide calls from a few goroutines, counting
// which replica answered each and every failed call.
type load struct {
	mu       sync.Mutex
	answered map[string]int
	failed   int
	lastErr  error
	stop     chan struct{}
	done     sync.WaitGroup
}

const loadWorkers = 3

func startLoad(t *testing.T, c *client.Client) *load {
	t.Helper()
	l := &load{answered: map[string]int{}, stop: make(chan struct{})}
	deadline := time.Now().Add(30 * time.Second) // a bound in time, whatever the test does
	for range loadWorkers {
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			for n := 0; n < 100000 && time.Now().Before(deadline); n++ {
				select {
				case <-l.stop:
					return
				default:
				}
				var p peer.Peer
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, err := c.Decide(ctx, fleetRequest(), grpc.Peer(&p))
				cancel()
				l.mu.Lock()
				if err != nil {
					l.failed++
					l.lastErr = err
				} else if p.Addr != nil {
					l.answered[p.Addr.String()]++
				}
				l.mu.Unlock()
				time.Sleep(time.Millisecond)
			}
		}()
	}
	t.Cleanup(l.finish)
	return l
}

func (l *load) finish() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.done.Wait()
}

// snapshot is a copy of the counts so far.
func (l *load) snapshot() (map[string]int, int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.answered))
	for k, v := range l.answered {
		out[k] = v
	}
	return out, l.failed, l.lastErr
}

func fleetRequest() *deciderv1.DecisionRequest {
	return &deciderv1.DecisionRequest{
		Purpose: deciderv1.Purpose_PURPOSE_MUTATE,
		Pod: &deciderv1.PodFacts{Namespace: "default", Name: "app", Operation: deciderv1.Operation_OPERATION_CREATE,
			ResourceKind: deciderv1.ResourceKind_RESOURCE_KIND_POD,
			Annotations:  map[string]string{"dynamic-config.rs/inject": "true"},
			Containers:   []*deciderv1.Container{{Name: "app"}}},
	}
}

func fleetClient(t *testing.T, r *dnsStandIn) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Target: r.Scheme() + ":///deciders", Plaintext: true, Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitForCalls waits until addr answered at least one call, or timeout; it
// returns how long that took.
func waitForCalls(l *load, addr string, timeout time.Duration) (time.Duration, bool) {
	start := time.Now()
	for time.Since(start) < timeout {
		if got, _, _ := l.snapshot(); got[addr] > 0 {
			return time.Since(start), true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start), false
}

// TestAReplicaAddedUnderLoadGetsAFairShare: with connection ageing, a
// decider that DNS starts listing receives calls within MaxConnectionAge
// (+10 % jitter) + grace, and then about a third of them; without ageing
// (the control) the client never re-resolves and the new replica idles.
func TestAReplicaAddedUnderLoadGetsAFairShare(t *testing.T) {
	doc := emptyDocument(t)
	cases := []struct {
		name      string
		age       time.Duration
		wantCalls bool
	}{
		{"with a one-second connection age the added replica is found and gets its share", fleetAge, true},
		{"without connection ageing the added replica gets nothing (the control)", time.Hour, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := startReplica(t, doc, c.age), startReplica(t, doc, c.age)
			dns := newDNSStandIn(t, a.Addr().String(), b.Addr().String())
			l := startLoad(t, fleetClient(t, dns))
			time.Sleep(300 * time.Millisecond)

			added := startReplica(t, doc, c.age)
			dns.setAnswer(a.Addr().String(), b.Addr().String(), added.Addr().String())
			// Age with its jitter, plus the grace, plus scheduling slack on a
			// loaded two-core machine.
			bound := fleetAge*11/10 + fleetAgeGrace + time.Second
			took, found := waitForCalls(l, added.Addr().String(), bound)
			if found != c.wantCalls {
				got, _, _ := l.snapshot()
				t.Fatalf("the added replica answered calls within %s: %v; want %v (answers %v)", bound, found, c.wantCalls, got)
			}
			if !found {
				return
			}
			t.Logf("the added replica answered its first call %s after DNS listed it (bound %s)", took.Round(time.Millisecond), bound)

			before, _, _ := l.snapshot()
			time.Sleep(1500 * time.Millisecond)
			after, failed, lastErr := l.snapshot()
			total, share := 0, 0
			for addr, n := range after {
				total += n - before[addr]
				if addr == added.Addr().String() {
					share = n - before[addr]
				}
			}
			t.Logf("over 1.5 s: %d calls, %d to the added replica; %d failed", total, share, failed)
			if total == 0 || float64(share)/float64(total) < 0.2 {
				t.Errorf("the added replica answered %d of %d calls; want a fair share (≥ 20 %%, a third ideally)", share, total)
			}
			if failed != 0 {
				t.Errorf("%d calls failed while the fleet grew; last: %v", failed, lastErr)
			}
		})
	}
}

// TestAReplicaStoppedUnderLoadCostsNoCall: a decider that stops gracefully
// (NOT_SERVING, the drain delay, GracefulStop) while three share the load,
// and that DNS still lists afterwards, costs zero failed calls; during its
// drain delay it still serves, yet client-side health checking has already
// taken it out of the pick list.
func TestAReplicaStoppedUnderLoadCostsNoCall(t *testing.T) {
	doc := emptyDocument(t)
	a, c := startReplica(t, doc, fleetAge), startReplica(t, doc, fleetAge)
	b := startReplicaDraining(t, doc, fleetAge, 1500*time.Millisecond)
	dns := newDNSStandIn(t, a.Addr().String(), b.Addr().String(), c.Addr().String())
	l := startLoad(t, fleetClient(t, dns))
	if _, ok := waitForCalls(l, b.Addr().String(), 5*time.Second); !ok {
		t.Fatal("the replica to stop never answered a call")
	}
	time.Sleep(500 * time.Millisecond)

	stopped := make(chan struct{})
	go func() {
		b.Shutdown(5 * time.Second)
		close(stopped)
	}()
	time.Sleep(300 * time.Millisecond) // the NOT_SERVING update reaches the client
	inDrain, _, _ := l.snapshot()
	time.Sleep(time.Second) // still inside the 1.5 s drain delay
	drained, _, _ := l.snapshot()
	<-stopped
	stoppedAt, _, _ := l.snapshot()
	time.Sleep(time.Second)
	l.finish()

	got, failed, lastErr := l.snapshot()
	t.Logf("answers %v; %d failed", got, failed)
	if failed != 0 {
		t.Errorf("%d calls failed while a replica stopped; last: %v", failed, lastErr)
	}
	if n := drained[b.Addr().String()] - inDrain[b.Addr().String()]; n != 0 {
		t.Errorf("the draining replica (NOT_SERVING, still listening) answered %d calls; health checking should have removed it", n)
	}
	if got[b.Addr().String()] != stoppedAt[b.Addr().String()] {
		t.Errorf("the stopped replica answered %d calls after it stopped", got[b.Addr().String()]-stoppedAt[b.Addr().String()])
	}
	for _, d := range []*deciderd.Decider{a, c} {
		if got[d.Addr().String()] <= stoppedAt[d.Addr().String()] {
			t.Errorf("replica %s answered nothing after the stop", d.Addr())
		}
	}
}

// TestKeepaliveSettingsAgree: the front door pings no more often than the
// decider tolerates, so no connection ends with too_many_pings.
func TestKeepaliveSettingsAgree(t *testing.T) {
	if client.KeepaliveTime < server.KeepaliveMinTime {
		t.Errorf("the front door pings every %s; the decider's enforcement minimum is %s (too_many_pings)", client.KeepaliveTime, server.KeepaliveMinTime)
	}
}
