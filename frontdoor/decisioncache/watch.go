package decisioncache

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/logsample"
)

// Watcher is what the watch calls: the decider client's WatchRevision.
type Watcher interface {
	WatchRevision(ctx context.Context, in *deciderv1.WatchRevisionRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[deciderv1.WatchRevisionResponse], error)
}

// How the watch keeps its stream.
const (
	// firstAnnouncement bounds the wait for a new stream's first announcement.
	firstAnnouncement = 10 * time.Second
	// A stream is lost after twice the announced heartbeat interval and this
	// margin without an announcement; the interval is held within
	// [minHeartbeat, maxHeartbeat] whatever a decider says.
	lossMargin   = time.Second
	minHeartbeat = 100 * time.Millisecond
	maxHeartbeat = time.Minute
	// A stream that ends after it announced is reopened at once (a decider
	// that stopped, a connection that aged out): the cache is unusable until
	// it is back. One that failed before it announced is retried after a
	// backoff from retryFirst doubling to retryCeiling, with jitter.
	retryFirst   = 100 * time.Millisecond
	retryCeiling = 5 * time.Second
)

// Watch keeps a revision watch open to the decider through client for
// cluster until ctx ends, telling c every announcement (Announce) and every
// loss (Lost): a stream that ends, or that announces nothing for about twice
// its heartbeat interval. It logs the announcements that change the
// revisions, and the failures to open the stream (sampled).
func (c *Cache) Watch(ctx context.Context, client Watcher, cluster string, logger *slog.Logger) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	w := &watch{c: c, client: client, cluster: cluster, log: logger, failures: logsample.New(time.Minute, nil)}
	backoff := retryFirst
	for ctx.Err() == nil {
		announced, err := w.once(ctx)
		c.Lost()
		if ctx.Err() != nil {
			return
		}
		if announced {
			logger.Info("decision cache: the revision watch ended; the cache answers again when the decider announces",
				"grpc_code", status.Code(err).String())
			backoff = retryFirst
			continue
		}
		w.failed(err)
		wait := backoff/2 + rand.N(backoff/2+1)
		backoff = min(2*backoff, retryCeiling)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

type watch struct {
	c        *Cache
	client   Watcher
	cluster  string
	log      *slog.Logger
	failures *logsample.Sampler
	// last is the latest announcement logged.
	last Revisions
}

// stream is one open watch; dead is set when its watchdog gave up on it.
type stream struct{ dead atomic.Bool }

// once runs one stream until it ends, and reports whether it announced.
func (w *watch) once(ctx context.Context) (announced bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &stream{}
	// The watchdog: a stream silent for too long is lost at once (the
	// decider may have changed meanwhile), then cancelled.
	watchdog := time.AfterFunc(firstAnnouncement, func() {
		if s.dead.CompareAndSwap(false, true) {
			w.c.Lost()
		}
		cancel()
	})
	defer watchdog.Stop()
	st, err := w.client.WatchRevision(ctx, &deciderv1.WatchRevisionRequest{Cluster: w.cluster})
	if err != nil {
		return false, err
	}
	for {
		a, err := st.Recv()
		if err != nil {
			return announced, err
		}
		interval := min(max(a.GetHeartbeatInterval().AsDuration(), minHeartbeat), maxHeartbeat)
		watchdog.Reset(2*interval + lossMargin)
		r := Revisions{Installation: a.GetInstallationRevision(), Classes: a.GetClassesRevision(), Rollout: a.GetRollout(), Build: a.GetDeciderBuild()}
		if !w.c.announceFrom(s, r) {
			return announced, context.Canceled
		}
		announced = true
		if r != w.last {
			w.last = r
			w.log.Info("decision cache: the decider announced its revisions",
				"revision", r.Installation, "classes_revision", r.Classes, "rollout", r.Rollout, "decider_build", r.Build)
		}
	}
}

// failed logs a stream that could not be opened or ended before it announced.
func (w *watch) failed(err error) {
	code := status.Code(err)
	ok, suppressed := w.failures.Allow()
	if !ok {
		return
	}
	msg := "decision cache: no revision watch; the decider is asked every time until it announces"
	if code == codes.Unimplemented {
		msg = "decision cache: the decider does not announce its revisions (WatchRevision; an older decider?); the decider is asked every time"
	}
	w.log.Warn(msg, "grpc_code", code.String(), "suppressed", suppressed)
}

// announceFrom is Announce from stream s, unless its watchdog already gave
// up on it (a late message must not make the cache usable again).
func (c *Cache) announceFrom(s *stream, r Revisions) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.dead.Load() {
		return false
	}
	c.announceLocked(r)
	return true
}
