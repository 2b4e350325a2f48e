package decisioncache

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/durationpb"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// announcer is a decider that announces what the test tells it, on real
// gRPC streams: every stream gets the current announcement at once, then
// what is sent to it, until ended.
type announcer struct {
	deciderv1.UnimplementedDeciderServiceServer
	mu      sync.Mutex
	current *deciderv1.WatchRevisionResponse
	streams []chan *deciderv1.WatchRevisionResponse
	// silent streams send their first announcement and then nothing.
	silent  bool
	opened  int
	cluster string
	// gate, when set, holds every new stream's first announcement until closed.
	gate chan struct{}
}

// endStream is sent down a stream to end it with UNAVAILABLE.
var endStream = &deciderv1.WatchRevisionResponse{}

func (a *announcer) WatchRevision(req *deciderv1.WatchRevisionRequest, stream grpc.ServerStreamingServer[deciderv1.WatchRevisionResponse]) error {
	ch := make(chan *deciderv1.WatchRevisionResponse, 16)
	a.mu.Lock()
	a.opened++
	a.cluster = req.GetCluster()
	first, gate := a.current, a.gate
	if !a.silent {
		a.streams = append(a.streams, ch)
	}
	a.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if err := stream.Send(first); err != nil {
		return err
	}
	for {
		select {
		case <-stream.Context().Done():
			return nil
		case m := <-ch:
			if m == endStream {
				return status.Error(codes.Unavailable, "this decider is shutting down; reconnect")
			}
			if err := stream.Send(m); err != nil {
				return err
			}
		}
	}
}

// announce makes r current and sends it down every open stream.
func (a *announcer) announce(r Revisions, interval time.Duration) {
	m := &deciderv1.WatchRevisionResponse{InstallationRevision: r.Installation, ClassesRevision: r.Classes, Rollout: r.Rollout,
		HeartbeatInterval: durationpb.New(interval)}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.current = m
	for _, ch := range a.streams {
		ch <- m
	}
}

// end ends every open stream.
func (a *announcer) end() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ch := range a.streams {
		ch <- endStream
	}
	a.streams = nil
}

func (a *announcer) streamsOpened() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.opened
}

// serveAnnouncer serves svc on bufconn and returns a client of it.
func serveAnnouncer(t *testing.T, svc deciderv1.DeciderServiceServer) deciderv1.DeciderServiceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer()
	deciderv1.RegisterDeciderServiceServer(srv, svc)
	go func() { _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///decider",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
	})
	return deciderv1.NewDeciderServiceClient(conn)
}

// syncBuffer is a log sink written from the watch's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// watching runs c.Watch against client until the test ends.
func watching(t *testing.T, c *Cache, client Watcher) *syncBuffer {
	t.Helper()
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Watch(ctx, client, "east", slog.New(slog.NewJSONHandler(logs, nil)))
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return logs
}

// eventually waits up to 5 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// usableWith reports whether c answers fresh under r.
func usableWith(c *Cache, r Revisions) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.up && c.announced == r
}

func TestTheWatchMakesTheCacheUsableAndFollowsEveryAnnouncement(t *testing.T) {
	a := &announcer{}
	a.announce(revA, time.Hour)
	client := serveAnnouncer(t, a)
	c, _, _ := newCache(t, Config{})
	logs := watching(t, c, client)

	eventually(t, "the first announcement", func() bool { return usableWith(c, revA) })
	ask(c, question("web-"), decided("d1", revA))
	a.announce(revB, time.Hour)
	eventually(t, "the second announcement", func() bool { return usableWith(c, revB) })
	if c.Len() != 0 {
		t.Fatal("the entry of the revision before is still held")
	}
	if a.cluster != "east" {
		t.Errorf("the watch named cluster %q, want east", a.cluster)
	}
	if !strings.Contains(logs.String(), `"revision":"sha256:bbb"`) {
		t.Errorf("the new revisions were not logged: %s", logs)
	}
}

func TestAStreamThatEndsStopsTheCacheUntilTheNextStreamAnnounces(t *testing.T) {
	a := &announcer{}
	a.announce(revA, time.Hour)
	client := serveAnnouncer(t, a)
	c, _, _ := newCache(t, Config{})
	watching(t, c, client)
	eventually(t, "the first stream", func() bool { return usableWith(c, revA) })
	ask(c, question("web-"), decided("d1", revA))

	gate := make(chan struct{}) // hold the next stream's first announcement back: the loss must show
	a.mu.Lock()
	a.gate = gate
	a.mu.Unlock()
	a.end()
	eventually(t, "the loss", func() bool { return !c.Usable() })
	if _, result := ask(c, question("web-"), nil); result != ResultBypass {
		t.Fatalf("while the stream is down: %s, want bypass", result)
	}
	close(gate)
	eventually(t, "the second stream", func() bool { return usableWith(c, revA) && a.streamsOpened() == 2 })
	if _, result := ask(c, question("web-"), nil); result != ResultHit {
		t.Fatalf("the decider came back unchanged: %s, want a hit", result)
	}
}

func TestASilentStreamIsLostAfterTwiceItsHeartbeat(t *testing.T) {
	a := &announcer{silent: true}
	a.announce(revA, minHeartbeat)
	client := serveAnnouncer(t, a)
	c, _, _ := newCache(t, Config{})
	watching(t, c, client)
	eventually(t, "the first announcement", func() bool { return c.Usable() })
	start := time.Now()
	a.mu.Lock()
	a.gate = make(chan struct{}) // the next stream stays silent from the start
	a.mu.Unlock()
	t.Cleanup(func() { close(a.gate) })
	eventually(t, "the loss of the silent stream", func() bool { return !c.Usable() })
	if took, want := time.Since(start), 2*minHeartbeat+lossMargin; took < want/2 || took > 2*want {
		t.Errorf("lost after %s, want about %s", took, want)
	}
}

func TestADeciderWithoutWatchRevisionLeavesTheCacheUnusedAndSaysWhy(t *testing.T) {
	client := serveAnnouncer(t, &deciderv1.UnimplementedDeciderServiceServer{})
	c, _, _ := newCache(t, Config{})
	logs := watching(t, c, client)
	eventually(t, "the warning", func() bool { return strings.Contains(logs.String(), "does not announce its revisions") })
	if c.Usable() {
		t.Fatal("the cache is usable without an announcement")
	}
}
