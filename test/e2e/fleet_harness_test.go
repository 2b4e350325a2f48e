package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
)

// --- the chart's match condition -------------------------------------------

var renderedExpression = regexp.MustCompile(`(?m)^\s*-?\s*expression:\s*(.+)$`)

// chartMatchExpression is the CEL expression of the chart's
// asks-for-dynamic-config matchCondition, read from the rendered chart (so
// the tests exercise what the chart ships, not a copy).
func chartMatchExpression(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chartRenderDir(t), "chart-default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "name: asks-for-dynamic-config")
	start := strings.LastIndex(doc[:max(i, 0)], "matchConditions:")
	if i < 0 || start < 0 {
		t.Fatalf("the rendered chart has no asks-for-dynamic-config matchCondition")
	}
	m := renderedExpression.FindStringSubmatch(doc[start:])
	if m == nil {
		t.Fatalf("no expression after the rendered matchConditions")
	}
	raw := strings.TrimSpace(m[1])
	expr, err := strconv.Unquote(raw)
	if err != nil {
		expr = raw // plain YAML scalar
	}
	return expr
}

// chartMatchConditions are the chart's matchConditions, for registerInjection.
func chartMatchConditions(t *testing.T) []admissionv1.MatchCondition {
	return []admissionv1.MatchCondition{{Name: "asks-for-dynamic-config", Expression: chartMatchExpression(t)}}
}

// --- the API server over HTTP (fast enough for a steady create loop) ---------

var apiHTTP = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
	TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, // the apiserver's self-signed loopback certificate
	MaxIdleConnsPerHost: 16,
}}

// createResult is the API server's answer to one pod create.
type createResult struct {
	code int
	body string
	err  error
}

func (r createResult) ok() bool { return r.err == nil && r.code == http.StatusCreated }

// message is the Status message of a refused create.
func (r createResult) message() string {
	var st struct{ Message string }
	if json.Unmarshal([]byte(r.body), &st) == nil && st.Message != "" {
		return st.Message
	}
	if r.err != nil {
		return r.err.Error()
	}
	return r.body
}

// createPod POSTs p to the API server (dryRun: nothing is stored).
func createPod(p *corev1.Pod, dryRun bool) createResult {
	body, err := json.Marshal(p)
	if err != nil {
		return createResult{err: err}
	}
	url := fmt.Sprintf("%s/api/v1/namespaces/%s/pods", theCluster.serverURL, p.Namespace)
	if dryRun {
		url += "?dryRun=All"
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return createResult{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+theCluster.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := apiHTTP.Do(req)
	if err != nil {
		return createResult{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return createResult{code: resp.StatusCode, body: string(b)}
}

// injected reports whether a created pod came back with the status mark.
func (r createResult) injected() bool { return strings.Contains(r.body, `"dynamic-config.rs/status"`) }

// --- a Service in front of several front doors --------------------------------

// balancer stands in for a Service and kube-proxy: the webhook URL points at
// its one loopback address, each new TCP connection goes to the next ready
// backend, and an established connection stays with its backend until one
// side closes it (so the API server's keep-alive connections stick, as they
// do in a cluster). Readiness is polled from each backend's /readyz, like
// the endpoints controller does from the kubelet's probes; a change reaches
// the balancer up to endpointsPropagation late, as it reaches kube-proxy.
type balancer struct {
	ln     net.Listener
	probe  *http.Client
	mu     sync.Mutex
	ends   []*endpoint
	next   int
	closed atomic.Bool
}

type endpoint struct {
	addr  string
	ready bool
}

func startBalancer(t *testing.T, caPEM []byte) *balancer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &balancer{ln: ln, probe: clientTrusting(t, caPEM)}
	b.probe.Timeout = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	go b.accept()
	go b.pollReadiness(ctx)
	t.Cleanup(func() {
		cancel()
		b.closed.Store(true)
		ln.Close()
	})
	return b
}

// url is the webhook base URL (https://127.0.0.1:<port>).
func (b *balancer) url() string { return "https://" + b.ln.Addr().String() }

// add registers a backend (host:port); it gets connections once ready.
func (b *balancer) add(addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ends = append(b.ends, &endpoint{addr: addr})
}

// remove forgets a backend (its pod is gone).
func (b *balancer) remove(addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, e := range b.ends {
		if e.addr == addr {
			b.ends = append(b.ends[:i], b.ends[i+1:]...)
			return
		}
	}
}

// readyCount is the number of ready backends.
func (b *balancer) readyCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, e := range b.ends {
		if e.ready {
			n++
		}
	}
	return n
}

func (b *balancer) isReady(addr string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.ends {
		if e.addr == addr {
			return e.ready
		}
	}
	return false
}

func (b *balancer) pollReadiness(ctx context.Context) {
	tick := time.NewTicker(endpointsPropagation)
	defer tick.Stop()
	for {
		b.mu.Lock()
		addrs := make([]string, len(b.ends))
		for i, e := range b.ends {
			addrs[i] = e.addr
		}
		b.mu.Unlock()
		for _, addr := range addrs {
			ready := httpOK(b.probe, "https://"+addr+"/readyz", "") == nil
			b.mu.Lock()
			for _, e := range b.ends {
				if e.addr == addr {
					e.ready = ready
				}
			}
			b.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (b *balancer) pick() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for range b.ends {
		e := b.ends[b.next%len(b.ends)]
		b.next++
		if e.ready {
			return e.addr
		}
	}
	return ""
}

func (b *balancer) accept() {
	for {
		conn, err := b.ln.Accept()
		if err != nil {
			if b.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		go b.forward(conn)
	}
}

func (b *balancer) forward(client net.Conn) {
	defer client.Close()
	addr := b.pick()
	if addr == "" {
		return // no ready endpoint: the connection is refused, as by kube-proxy's reject rule
	}
	server, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return
	}
	defer server.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(server, client); server.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	go func() { io.Copy(client, server); client.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	<-done
	<-done
}

// --- a fleet: three deciders behind one static target, front doors behind a balancer

type fleet struct {
	t        *testing.T
	ns       string
	deciders []*decider
	target   string // static:///a,b,c
	pair     servingPair
	lb       *balancer
	doors    []*fleetDoor
	started  int
}

type fleetDoor struct {
	name        string
	proc        *process
	addr        string // host:port
	metricsAddr string
}

// Drain settings of the e2e fleet: shorter than the chart's 5s, longer than
// the balancer's endpoint propagation.
const (
	endpointsPropagation = time.Second
	e2eDoorDrain         = "3s"
	e2eDeciderDrain      = "1s"
)

// startFleet starts three deciders on the seed installation, doors front
// doors talking to all three (static:///), a balancer in front of them, and
// registers the chart's mutating webhook (matchConditions included) for a
// fresh namespace, waiting until it injects.
func startFleet(t *testing.T, doors int) *fleet {
	t.Helper()
	path := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, path, seedInstallation(t))
	f := &fleet{t: t, ns: newNamespace(t), pair: newServingPair(t, filepath.Join(testDir(t), "frontdoor-tls"))}
	var addrs []string
	for i := range 3 {
		d := newDecider(t, fmt.Sprintf("decider-%d", i), path)
		d.extra = []string{"--drain-delay", e2eDeciderDrain}
		d.start()
		f.deciders = append(f.deciders, d)
		addrs = append(addrs, d.addr)
	}
	f.target = "static:///" + strings.Join(addrs, ",")
	f.lb = startBalancer(t, f.pair.caPEM)
	for range doors {
		f.startDoor()
	}
	f.waitDoorsReady(doors)
	registerInjection(t, f.ns+"-inject", f.ns, frontDoor{url: f.lb.url(), caPEM: f.pair.caPEM},
		injection{matchConditions: chartMatchConditions(t)})
	waitForEffect(t, "the injection webhook takes effect", pod(f.ns, "webhook-probe", consulAnnotations()), func(r kubectlResult) bool {
		return r.err == nil && strings.Contains(r.stdout, `"dynamic-config.rs/status"`)
	})
	return f
}

// startDoor starts one more front door and adds it to the balancer.
func (f *fleet) startDoor() *fleetDoor {
	t := f.t
	t.Helper()
	f.started++
	name := fmt.Sprintf("frontdoor-%d", f.started)
	metricsAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	proc, door := startFrontdoorWithPair(t, name, f.target, f.pair,
		"--drain-delay", e2eDoorDrain, "--metrics-addr", metricsAddr, "--on-decider-error", "deny")
	d := &fleetDoor{name: name, proc: proc, addr: strings.TrimPrefix(door.url, "https://"), metricsAddr: metricsAddr}
	f.doors = append(f.doors, d)
	f.lb.add(d.addr)
	return d
}

func (f *fleet) waitDoorsReady(n int) {
	f.t.Helper()
	if err := eventually("the balancer sees the front doors ready", productReadyTimeout, 50*time.Millisecond, func() error {
		if got := f.lb.readyCount(); got < n {
			return fmt.Errorf("%d of %d ready", got, n)
		}
		return nil
	}); err != nil {
		f.t.Fatal(err)
	}
}

// askingPod is a pod that asks for injection (the seed consul pod).
func (f *fleet) askingPod(name string) *corev1.Pod { return pod(f.ns, name, consulAnnotations()) }

// --- a steady create loop -------------------------------------------------------

// createLoop creates asking pods back to back from a few workers until
// stopped (or a bound in count and time), counting every create that was not
// stored with its agent.
type createLoop struct {
	created  atomic.Int64
	failed   atomic.Int64
	mu       sync.Mutex
	failures []string
	stop     chan struct{}
	wg       sync.WaitGroup
}

const (
	loopWorkers  = 6
	loopMaxEach  = 4000
	loopMaxTotal = 5 * time.Minute
)

func (f *fleet) startCreateLoop(label string) *createLoop {
	l := &createLoop{stop: make(chan struct{})}
	deadline := time.Now().Add(loopMaxTotal)
	for w := range loopWorkers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; i < loopMaxEach && time.Now().Before(deadline); i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				r := createPod(f.askingPod(fmt.Sprintf("%s-%d-%d", label, w, i)), false)
				l.created.Add(1)
				if !r.ok() || !r.injected() {
					l.failed.Add(1)
					l.mu.Lock()
					if len(l.failures) < 5 {
						l.failures = append(l.failures, fmt.Sprintf("HTTP %d: %s", r.code, r.message()))
					}
					l.mu.Unlock()
				}
			}
		}()
	}
	f.t.Cleanup(l.finish)
	return l
}

func (l *createLoop) finish() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// report stops the loop, prints its counts and fails the test on any
// failed create.
func (l *createLoop) report(t *testing.T, scenario string) {
	t.Helper()
	l.finish()
	created, failed := l.created.Load(), l.failed.Load()
	fmt.Printf("e2e fleet: %s: %d pod creates, %d failed\n", scenario, created, failed)
	t.Logf("%s: %d pod creates, %d failed", scenario, created, failed)
	if created == 0 {
		t.Errorf("%s: no pod was created", scenario)
	}
	if failed != 0 {
		t.Errorf("%s: %d of %d creates failed; first: %q", scenario, failed, created, l.failures)
	}
}

// --- product metrics ---------------------------------------------------------------

// metricSum sums the samples of metric (with every label fragment) at a
// plain-HTTP /metrics endpoint.
func metricSum(t *testing.T, metricsAddr, metric string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatalf("metrics of %s: %v", metricsAddr, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var sum float64
lines:
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, metric+"{") && !strings.HasPrefix(line, metric+" ") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue lines
			}
		}
		fields := strings.Fields(line)
		var v float64
		if _, err := fmt.Sscan(fields[len(fields)-1], &v); err == nil {
			sum += v
		}
	}
	return sum
}

// decideCalls is how many Decide calls a decider has handled.
func decideCalls(t *testing.T, d *decider) float64 {
	return metricSum(t, d.metricsAddr, "grpc_server_handled_total", `grpc_method="Decide"`)
}

// waitServing waits until a (re)started decider answers Decide calls from
// the front doors again; it returns how long that took.
func waitServing(t *testing.T, d *decider, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	base := decideCalls(t, d)
	if err := eventually(d.name+" answers Decide calls again", timeout, 100*time.Millisecond, func() error {
		if decideCalls(t, d) > base {
			return nil
		}
		return errNoEffectYet
	}); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}
