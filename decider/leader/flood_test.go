package leader_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/decider/leader"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// lockedBuffer is a log sink for the leader's goroutines.
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

// Issue 38: a follower cannot flood its leader. A snapshot has one answer:
// a replayed NACK changes nothing and writes no line; the "refused a
// snapshot" line is sampled per follower, across its reconnects.
func TestAFollowerCannotFloodItsLeadersStateOrLog(t *testing.T) {
	var log lockedBuffer
	f := startLeader(t, "", leader.Config{Logger: slog.New(slog.NewJSONHandler(&log, nil))})
	first := &deciderv1.SyncRequest{FollowerId: "west-0", Cluster: "west"}
	nacked := func() float64 {
		families, err := f.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, fam := range families {
			if fam.GetName() == "dynamic_config_follower_nacks_total" {
				return testutil.ToFloat64(mustVec(t, f.reg, fam.GetName(), map[string]string{"follower": "west-0", "cluster": "west"}))
			}
		}
		return 0 // no series before the first NACK
	}

	stream, _ := f.open(t, "", first)
	snap := recv(t, stream)
	for range 200 {
		if err := stream.Send(nack(snap, "replayed")); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the first NACK recorded", func() bool { s := state(f, "west-0"); return s != nil && s.GetLastNack() != nil })
	// An ACK after the replays: once it is recorded, every replay before it was handled.
	f.store.Swap(inst(t, 31))
	f.leader.Notify()
	next := recv(t, stream)
	if err := stream.Send(ack(next)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the ACK recorded", func() bool { return state(f, "west-0").GetAppliedRevision() == next.GetRevision() })
	t.Run("200 copies of one NACK are one NACK", func(t *testing.T) {
		if n := nacked(); n != 1 {
			t.Errorf("dynamic_config_follower_nacks_total = %v, want 1", n)
		}
		if n := strings.Count(log.String(), "follower refused a snapshot"); n != 1 {
			t.Errorf("%d refusal lines, want 1", n)
		}
	})
	t.Run("a replayed ACK does not undo a later NACK", func(t *testing.T) {
		f.store.Swap(inst(t, 32))
		f.leader.Notify()
		f.leader.Notify()
		third := recv(t, stream)
		if err := stream.Send(nack(third, "refused")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the NACK recorded", func() bool { return state(f, "west-0").GetLastNack().GetRevision() == third.GetRevision() })
		if err := stream.Send(ack(next)); err != nil {
			t.Fatal(err)
		}
		f.store.Swap(inst(t, 33))
		f.leader.Notify()
		f.leader.Notify()
		fourth := recv(t, stream) // the answers before it were read
		if err := stream.Send(ack(fourth)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the last ACK recorded", func() bool { return state(f, "west-0").GetAppliedRevision() == fourth.GetRevision() })
		if n := nacked(); n != 2 {
			t.Errorf("dynamic_config_follower_nacks_total = %v, want 2", n)
		}
	})
	t.Run("a follower that reconnects to NACK again has its line sampled", func(t *testing.T) {
		before := strings.Count(log.String(), "follower refused a snapshot")
		for range 20 {
			want := nacked() + 1
			s, cancel := f.open(t, "", first)
			m := recv(t, s)
			if err := s.Send(nack(m, "again")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the NACK recorded", func() bool { return nacked() == want })
			cancel()
		}
		if n := strings.Count(log.String(), "follower refused a snapshot") - before; n != 0 {
			t.Errorf("%d more refusal lines within the interval, want 0", n)
		}
	})
}

// Issue 38: a stream that sends no first message is closed within the
// bound, not held.
func TestAStreamWithoutAFirstMessageIsClosed(t *testing.T) {
	f := startLeader(t, "", leader.Config{FirstMessage: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stream, err := deciderv1.NewInstallationSyncServiceClient(f.conn).SyncInstallation(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = stream.Recv()
	if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(status.Convert(err).Message(), "no first message") || time.Since(start) > 3*time.Second {
		t.Fatalf("after %s: %v; want the leader to close the stream", time.Since(start), err)
	}
}
