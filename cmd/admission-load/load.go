package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// maxSamples bounds the latencies one worker keeps in a cell.
const maxSamples = 1 << 20

// cell is one measurement: one target at one concurrency.
type cell struct {
	target      string
	concurrency int
	n           int // requests started and finished inside the window
	errors      int
	firstError  string
	window      time.Duration
	latencies   []time.Duration // sorted
	cpu         float64         // CPU seconds of the target's processes in the window
	clientCPU   float64         // CPU seconds of the calling side in the window, when measured (the gRPC floor)
	// mix names the requests (the seed mix when empty; mixes.go), hits how
	// many answers of the window came from the front door's decision cache.
	mix  string
	hits int
}

// hitRate is the share of the window's answers given from the decision cache.
func (c *cell) hitRate() float64 { return ratio(float64(c.hits), float64(c.n)) }

func (c *cell) rate() float64 { return float64(c.n) / c.window.Seconds() }

func (c *cell) quantile(q float64) time.Duration {
	if len(c.latencies) == 0 {
		return 0
	}
	i := int(q * float64(len(c.latencies)-1))
	return c.latencies[i]
}

// cpuPerOp is CPU microseconds per admission.
func (c *cell) cpuPerOp() float64 {
	if c.n == 0 {
		return 0
	}
	return c.cpu / float64(c.n) * 1e6
}

// clientCPUPerOp is the calling side's CPU microseconds per call.
func (c *cell) clientCPUPerOp() float64 {
	if c.n == 0 {
		return 0
	}
	return c.clientCPU / float64(c.n) * 1e6
}

// call is one request of a closed loop: it returns a problem ("" = fine)
// and whether the answer came from the front door's decision cache.
type call func(ctx context.Context, worker, i int) (problem string, hit bool)

// closedLoop runs c workers, each sending its next request as soon as the
// previous answer is read, for warmup and then window; it keeps the requests
// that started inside the window. cpu reads the target's CPU seconds, client
// (nil when not measured) the calling side's.
func closedLoop(ctx context.Context, target string, c int, warmup, window time.Duration, do call, cpu, client func() float64) *cell {
	if client == nil {
		client = func() float64 { return 0 }
	}
	var (
		measuring atomic.Bool
		stop      atomic.Bool
		wg        sync.WaitGroup
		mu        sync.Mutex
		all       []time.Duration
		hits      int
		errs      int
		firstErr  string
		next      atomic.Int64
	)
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 4096)
			var werrs, whits int
			var wfirst string
			for !stop.Load() && ctx.Err() == nil {
				i := int(next.Add(1))
				in := measuring.Load()
				t0 := time.Now()
				problem, hit := do(ctx, w, i)
				d := time.Since(t0)
				if !in || stop.Load() {
					continue // outside the window (a request that ends after it is dropped)
				}
				if problem != "" {
					werrs++
					if wfirst == "" {
						wfirst = problem
					}
					continue
				}
				if len(lat) < maxSamples {
					lat = append(lat, d)
				}
				if hit {
					whits++
				}
			}
			mu.Lock()
			all = append(all, lat...)
			hits += whits
			errs += werrs
			if firstErr == "" {
				firstErr = wfirst
			}
			mu.Unlock()
		}()
	}
	sleep(ctx, warmup)
	cpu0, client0 := cpu(), client()
	start := time.Now()
	measuring.Store(true)
	sleep(ctx, window)
	stop.Store(true)
	elapsed := time.Since(start)
	cpu1, client1 := cpu(), client()
	wg.Wait()
	slices.Sort(all)
	return &cell{target: target, concurrency: c, n: len(all), errors: errs, firstError: firstErr,
		window: elapsed, latencies: all, cpu: cpu1 - cpu0, clientCPU: client1 - client0, hits: hits}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// cacheMark is what an answer from the front door's decision cache carries.
var cacheMark = []byte(`"decision-source":"cache"`)

// httpsCaller posts the mix's requests to url/mutate, one keep-alive
// HTTP/1.1 connection per worker, and checks every answer. done closes the
// connections.
func httpsCaller(url string, tlsConfig *tls.Config, m *mix, workers int) (do call, done func()) {
	clients := make([]*http.Client, workers)
	bufs := make([]*bytes.Buffer, workers)
	bodies := make([][]byte, workers)
	for i := range clients {
		clients[i] = &http.Client{
			Timeout: 10 * time.Second,
			Transport: &http.Transport{
				TLSClientConfig:     tlsConfig.Clone(),
				MaxIdleConnsPerHost: 1,
				IdleConnTimeout:     time.Minute,
				DisableCompression:  true,
			},
		}
		bufs[i] = new(bytes.Buffer)
	}
	pick := m.picker(workers)
	var counter atomic.Uint64
	done = func() {
		for _, c := range clients {
			c.CloseIdleConnections()
		}
	}
	return func(ctx context.Context, worker, i int) (string, bool) {
		r := &m.reqs[pick(worker, i)]
		body := r.body
		if r.counterAt > 0 {
			// A new question: this request's own number in the counter label.
			bodies[worker] = append(bodies[worker][:0], r.body...)
			body = bodies[worker]
			n := counter.Add(1)
			for d := r.counterAt + counterDigits - 1; d >= r.counterAt; d-- {
				body[d] = byte('0' + n%10)
				n /= 10
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mutate", bytes.NewReader(body))
		if err != nil {
			return err.Error(), false
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := clients[worker].Do(req)
		if err != nil {
			return err.Error(), false
		}
		buf := bufs[worker]
		buf.Reset()
		_, err = buf.ReadFrom(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err.Error(), false
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Sprintf("HTTP %d: %.200s", resp.StatusCode, buf.Bytes()), false
		}
		return r.check(buf.Bytes()), bytes.Contains(buf.Bytes(), cacheMark)
	}, done
}

// grpcCaller calls the health service's Check over one connection, as the
// front door shares one connection to the decider.
func grpcCaller(addr string) (call, io.Closer, error) {
	// The front door's transport settings (frontdoor/client).
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(1<<20), grpc.WithInitialConnWindowSize(1<<20))
	if err != nil {
		return nil, nil, err
	}
	hc := healthpb.NewHealthClient(conn)
	req := &healthpb.HealthCheckRequest{}
	return func(ctx context.Context, _, _ int) (string, bool) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		resp, err := hc.Check(ctx, req)
		if err != nil {
			return err.Error(), false
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			return "health status " + resp.GetStatus().String(), false
		}
		return "", false
	}, conn, nil
}
