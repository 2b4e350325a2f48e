package server

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// startTokenDecider serves a token-guarded decider with short connection
// bounds (so the test need not wait the defaults).
func startTokenDecider(t *testing.T) *running {
	t.Helper()
	tokenPath := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenPath, []byte("s3cret-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	return start(t, Config{
		TokenFile:         tokenPath,
		ConnectionTimeout: 300 * time.Millisecond,
		MaxConnectionIdle: 500 * time.Millisecond,
	}, installation.Empty())
}

func TestAnOversizedHeaderBlockIsRefusedBeforeAuthentication(t *testing.T) {
	r := startTokenDecider(t)
	cases := []struct {
		name  string
		bytes int
	}{
		{"an authorization of 64 KiB", 64 << 10},
		{"an authorization of 1 MB", 1 << 20},
		{"an authorization of 15 MB", 15 << 20},
	}
	for _, c := range cases {
		t.Run(c.name+" is refused by the transport, never answered by the auth check", func(t *testing.T) {
			if got := rawOversizedCall(t, r.addr, c.bytes); got.answered {
				t.Errorf("the server read the %d-byte header block and answered grpc-status %q", c.bytes, got.grpcStatus)
			}
		})
	}
	t.Run("a header block within the bound still reaches the token check", func(t *testing.T) {
		got := rawOversizedCall(t, r.addr, 4<<10)
		if !got.answered || got.grpcStatus != strconv.Itoa(int(codes.Unauthenticated)) {
			t.Errorf("a 4 KiB authorization: %+v, want an Unauthenticated answer", got)
		}
	})
}

func TestASecondAuthorizationHeaderIsRefusedAsMalformed(t *testing.T) {
	r := startTokenDecider(t)
	client := deciderv1.NewDeciderServiceClient(dial(t, r.addr, nil))
	cases := []struct {
		name   string
		values []string
	}{
		{"a good token then a wrong one", []string{"Bearer s3cret-token", "Bearer wrong"}},
		{"a wrong token then a good one", []string{"Bearer wrong", "Bearer s3cret-token"}},
		{"the good token twice", []string{"Bearer s3cret-token", "Bearer s3cret-token"}},
	}
	for _, c := range cases {
		t.Run(c.name+" is Unauthenticated, naming the two headers", func(t *testing.T) {
			md := metadata.MD{"authorization": c.values}
			_, err := client.Decide(metadata.NewOutgoingContext(ctxTimeout(t), md), mutateRequest("app"))
			if status.Code(err) != codes.Unauthenticated || !strings.Contains(status.Convert(err).Message(), "exactly one authorization header is accepted; this call carries 2") {
				t.Errorf("got %v", err)
			}
		})
	}
}

// peakRSS is VmHWM of /proc/self/status in bytes.
func peakRSS(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmHWM in /proc/self/status")
	return 0
}

func TestAnAnonymousFloodLeavesTheDeciderBoundedAndAGoodCallerAnswered(t *testing.T) {
	r := startTokenDecider(t)
	client := deciderv1.NewDeciderServiceClient(dial(t, r.addr, nil))
	authorized := func() context.Context {
		return metadata.AppendToOutgoingContext(ctxTimeout(t), "authorization", "Bearer s3cret-token")
	}
	if _, err := client.Decide(authorized(), mutateRequest("app")); err != nil {
		t.Fatal(err)
	}
	baseline := peakRSS(t)

	// The good caller asks all through the flood.
	stop := make(chan struct{})
	var good, goodFailed atomic.Int64
	var goodErr atomic.Value
	var goodDone sync.WaitGroup
	goodDone.Add(1)
	go func() {
		defer goodDone.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := client.Decide(authorized(), mutateRequest("app")); err != nil {
				goodFailed.Add(1)
				goodErr.Store(err.Error())
			} else {
				good.Add(1)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	// Idle connections: raw TCP ones that never send a byte, and HTTP/2
	// ones that send their preface and then no call.
	const rawIdle, h2Idle = 200, 20
	limit := 10 * time.Second
	type held struct {
		after  time.Duration
		closed bool
	}
	idle := make(chan held, rawIdle+h2Idle)
	for i := range rawIdle + h2Idle {
		conn, err := net.Dial("tcp", r.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		go func() {
			after, closed := idleUntilClosed(conn, i >= rawIdle, limit)
			idle <- held{after, closed}
		}()
	}

	// Anonymous calls with oversized headers, 16 at a time.
	sizes := []int{1 << 20, 4 << 20, 15 << 20, 8 << 20}
	var flood sync.WaitGroup
	var answered atomic.Int64
	for i := range 32 {
		flood.Add(1)
		go func() {
			defer flood.Done()
			if got := rawOversizedCall(t, r.addr, sizes[i%len(sizes)]); got.answered {
				answered.Add(1)
			}
		}()
		if i%16 == 15 {
			flood.Wait()
		}
	}
	flood.Wait()
	var worst time.Duration
	var open int
	for range rawIdle + h2Idle {
		h := <-idle
		if !h.closed {
			open++
		}
		worst = max(worst, h.after)
	}
	close(stop)
	goodDone.Wait()
	growth := peakRSS(t) - baseline

	t.Run("every flood call is refused before its header block is read", func(t *testing.T) {
		if n := answered.Load(); n != 0 {
			t.Errorf("%d of 32 oversized calls were read and answered", n)
		}
	})
	t.Run("the server closes every idle connection within the bound", func(t *testing.T) {
		if open != 0 {
			t.Errorf("%d of %d idle connections still open after %v (slowest closed after %v)", open, rawIdle+h2Idle, limit, worst)
		}
	})
	t.Run("a good caller is answered during the flood", func(t *testing.T) {
		if good.Load() == 0 || goodFailed.Load() != 0 {
			t.Errorf("%d answered, %d failed (last: %v)", good.Load(), goodFailed.Load(), goodErr.Load())
		}
	})
	t.Run("the peak RSS grows by less than 96 MiB (the old wiring: +280 MiB)", func(t *testing.T) {
		t.Logf("peak RSS %d MiB before, +%d MiB during the flood", baseline>>20, growth>>20)
		if growth > 96<<20 {
			t.Errorf("the peak RSS grew by %d MiB over a baseline of %d MiB", growth>>20, baseline>>20)
		}
	})
}
