package follower_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/follower"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

func inst(t *testing.T, n int) *installation.Installation {
	t.Helper()
	i, err := installationloader.Load(installationloader.Options{Environ: []string{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=" + strconv.Itoa(n)}})
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func snapshot(i *installation.Installation, nonce string) *deciderv1.InstallationSnapshot {
	tr := i.Transport()
	return &deciderv1.InstallationSnapshot{Revision: tr.Revision, Nonce: nonce, Canonical: string(tr.Canonical)}
}

// fakeLeader sends what the test puts on its send channel and records
// every message a follower sends.
type fakeLeader struct {
	deciderv1.UnimplementedInstallationSyncServiceServer
	send chan *deciderv1.InstallationSnapshot
	got  chan *deciderv1.SyncRequest
}

func (l *fakeLeader) SyncInstallation(s deciderv1.InstallationSyncService_SyncInstallationServer) error {
	go func() {
		for {
			m, err := s.Recv()
			if err != nil {
				return
			}
			l.got <- m
		}
	}()
	for {
		select {
		case <-s.Context().Done():
			return nil
		case m := <-l.send:
			if err := s.Send(m); err != nil {
				return err
			}
		}
	}
}

func startFake(t *testing.T) (*fakeLeader, string) {
	t.Helper()
	l := &fakeLeader{send: make(chan *deciderv1.InstallationSnapshot), got: make(chan *deciderv1.SyncRequest, 16)}
	srv := grpc.NewServer()
	deciderv1.RegisterInstallationSyncServiceServer(srv, l)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return l, lis.Addr().String()
}

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func next(t *testing.T, l *fakeLeader) *deciderv1.SyncRequest {
	t.Helper()
	select {
	case m := <-l.got:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("the follower sent nothing")
		return nil
	}
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestAFollowerValidatesChecksTheRevisionAndOnlyThenActivates(t *testing.T) {
	l, addr := startFake(t)
	dir := t.TempDir()
	store := installationloader.NewStore(nil)
	f := follower.New(follower.Config{Conn: dial(t, addr), Leader: addr, ID: "west-0", Cluster: "west", StateDir: dir, Store: store})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)

	hello := next(t, l)
	if hello.GetFollowerId() != "west-0" || hello.GetCluster() != "west" || hello.GetKnownRevision() != "" || hello.GetAnswer() != nil {
		t.Fatalf("first message %v", hello)
	}
	good := inst(t, 30)

	t.Run("a valid snapshot is activated, saved and acknowledged with its nonce", func(t *testing.T) {
		l.send <- snapshot(good, "1")
		a := next(t, l).GetAck()
		if a.GetNonce() != "1" || a.GetRevision() != good.Revision {
			t.Fatalf("answer %v; want an ACK of nonce 1", a)
		}
		if store.Current().Revision != good.Revision {
			t.Fatal("not activated")
		}
		data, err := os.ReadFile(filepath.Join(dir, follower.StateFile))
		if err != nil || !strings.Contains(string(data), good.Revision) {
			t.Fatalf("state file: %v %s", err, data)
		}
	})
	tests := []struct {
		name   string
		snap   *deciderv1.InstallationSnapshot
		reason string
	}{
		{
			name:   "a snapshot whose canonical form has another revision is refused as a mismatch naming both",
			snap:   &deciderv1.InstallationSnapshot{Revision: good.Revision[:len(good.Revision)-4] + "0000", Nonce: "2", Canonical: string(inst(t, 31).Canonical)},
			reason: "revision mismatch: the canonical form is " + inst(t, 31).Revision,
		},
		{
			name:   "a snapshot that is not JSON is refused",
			snap:   &deciderv1.InstallationSnapshot{Revision: good.Revision, Nonce: "3", Canonical: `{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS":`},
			reason: "the canonical form is not a JSON object of settings",
		},
		{
			name: "a snapshot with an invalid value is refused by the installation's own checks",
			snap: &deciderv1.InstallationSnapshot{Revision: installation.Revision([]byte(`{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS":"soon"}`)), Nonce: "4",
				Canonical: `{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS":"soon"}`},
			reason: "watch-seconds",
		},
		{
			name:   "a snapshot naming an unknown variable is refused",
			snap:   &deciderv1.InstallationSnapshot{Revision: installation.Revision([]byte(`{"X":"1"}`)), Nonce: "5", Canonical: `{"X":"1"}`},
			reason: `"X" is not an installation variable`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name+"; the last good installation stays in force", func(t *testing.T) {
			l.send <- tt.snap
			n := next(t, l).GetNack()
			if n.GetNonce() != tt.snap.GetNonce() || n.GetRevision() != tt.snap.GetRevision() || !strings.Contains(n.GetErrorDetail(), tt.reason) {
				t.Fatalf("answer %v; want a NACK of nonce %s containing %q", n, tt.snap.GetNonce(), tt.reason)
			}
			if store.Current().Revision != good.Revision {
				t.Fatalf("serving %s after a NACK, want the last good %s", store.Current().Revision, good.Revision)
			}
			if lr := store.LastReload(); lr.OK || lr.AttemptedRevision != tt.snap.GetRevision() {
				t.Fatalf("last reload %+v", lr)
			}
			st := f.State()
			if st.GetLastNack().GetRevision() != tt.snap.GetRevision() || st.GetAppliedRevision() != good.Revision {
				t.Fatalf("state %v", st)
			}
			data, _ := os.ReadFile(filepath.Join(dir, follower.StateFile))
			if !strings.Contains(string(data), good.Revision) {
				t.Fatal("the refused snapshot replaced the saved one")
			}
		})
	}
	t.Run("a heartbeat is not answered", func(t *testing.T) {
		l.send <- &deciderv1.InstallationSnapshot{Revision: good.Revision, Heartbeat: true}
		l.send <- snapshot(inst(t, 32), "6")
		if a := next(t, l).GetAck(); a.GetNonce() != "6" {
			t.Fatalf("answer %v; want the ACK of nonce 6 first (none to the heartbeat)", a)
		}
	})
}

func TestAFollowerStartsFromItsStateDirectoryWhenTheLeaderIsUnreachable(t *testing.T) {
	dir := t.TempDir()
	good := inst(t, 40)
	{ // a first life: the snapshot arrives and is saved
		l, addr := startFake(t)
		store := installationloader.NewStore(nil)
		f := follower.New(follower.Config{Conn: dial(t, addr), ID: "west-0", StateDir: dir, Store: store})
		ctx, cancel := context.WithCancel(context.Background())
		go f.Run(ctx)
		next(t, l)
		l.send <- snapshot(good, "1")
		next(t, l)
		cancel()
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := lis.Addr().String()
	lis.Close()
	store := installationloader.NewStore(nil)
	f := follower.New(follower.Config{Conn: dial(t, dead), ID: "west-0", StateDir: dir, Store: store,
		Backoff: follower.Backoff{Initial: 10 * time.Millisecond, Factor: 1.6, Jitter: 0.2, Max: 50 * time.Millisecond}})
	f.Start()
	if store.Current() == nil || store.Current().Revision != good.Revision {
		t.Fatalf("serving %v, want the saved %s", store.Current(), good.Revision)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	f.Run(ctx) // the leader stays unreachable
	if store.Current().Revision != good.Revision || !f.Serving() {
		t.Fatal("stopped serving the saved installation while the leader is down")
	}

	t.Run("a state file that no longer validates is not served", func(t *testing.T) {
		bad := t.TempDir()
		if err := os.WriteFile(filepath.Join(bad, follower.StateFile), []byte(`{"revision":"sha256:00","canonical":"{}"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		s := installationloader.NewStore(nil)
		follower.New(follower.Config{ID: "west-0", StateDir: bad, Store: s}).Start()
		if s.Current() != nil {
			t.Fatal("served a state file whose revision does not match")
		}
	})
}

func TestAFollowerPastMaxStaleRefusesToDecideAndRecovers(t *testing.T) {
	l, addr := startFake(t)
	c := &clock{t: time.Now()}
	store := installationloader.NewStore(nil)
	f := follower.New(follower.Config{Conn: dial(t, addr), ID: "west-0", Store: store, MaxStale: 10 * time.Second, Now: c.now})
	svc := service.New(store, nil, nil).WithFollower(f)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)
	next(t, l)
	good := inst(t, 50)
	l.send <- snapshot(good, "1")
	next(t, l)

	decide := func() error {
		_, err := svc.Decide(context.Background(), &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE,
			Pod: &deciderv1.PodFacts{Namespace: "default", Name: "p", Operation: deciderv1.Operation_OPERATION_CREATE,
				Annotations: map[string]string{"dynamic-config.rs/inject": "true"}}})
		return err
	}
	if err := decide(); err != nil {
		t.Fatalf("a fresh follower refused: %v", err)
	}
	c.add(11 * time.Second)
	if !f.Stale() || f.Serving() {
		t.Fatal("not stale 11 s after the last word with --max-stale 10s")
	}
	if err := decide(); status.Code(err) != codes.Unavailable {
		t.Fatalf("stale Decide: %v; want UNAVAILABLE", err)
	}
	l.send <- &deciderv1.InstallationSnapshot{Revision: good.Revision, Heartbeat: true}
	deadline := time.Now().Add(5 * time.Second)
	for f.Stale() {
		if time.Now().After(deadline) {
			t.Fatal("a heartbeat did not end the staleness")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := decide(); err != nil {
		t.Fatalf("recovered follower refused: %v", err)
	}
}

func TestAFollowersDecisionsNameTheLeadersRevisionAndTheFollower(t *testing.T) {
	l, addr := startFake(t)
	store := installationloader.NewStore(nil)
	f := follower.New(follower.Config{Conn: dial(t, addr), ID: "west-0", Store: store})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)
	next(t, l)
	good := inst(t, 60)
	l.send <- snapshot(good, "1")
	next(t, l)
	resp, err := service.New(store, nil, nil).WithFollower(f).Decide(context.Background(), &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE,
		Pod: &deciderv1.PodFacts{Namespace: "default", Name: "p", Operation: deciderv1.Operation_OPERATION_CREATE}})
	if err != nil {
		t.Fatal(err)
	}
	a := resp.GetDecision().GetAuditAnnotations()
	if a[annotation.AuditRevision] != good.Revision || a[annotation.AuditDeciderRole] != "follower" || a[annotation.AuditFollowerID] != "west-0" {
		t.Fatalf("audit annotations %v", a)
	}
	gi, err := service.New(store, nil, nil).WithFollower(f).GetInstallation(context.Background(), &deciderv1.GetInstallationRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if gi.GetRole() != deciderv1.DeciderRole_DECIDER_ROLE_FOLLOWER || gi.GetFollower().GetFollowerId() != "west-0" || !gi.GetFollower().GetConnected() || gi.GetFollower().GetLeader() != "" {
		t.Fatalf("GetInstallation role %v follower %v", gi.GetRole(), gi.GetFollower())
	}
}

func TestTheBackoffGrowsBy16WithinTwentyPercentUpTo30s(t *testing.T) {
	b := follower.DefaultBackoff
	want := []float64{1, 1.6, 2.56, 4.096, 6.5536, 10.48576, 16.777216, 26.8435456, 30, 30, 30}
	for n, w := range want {
		for range 50 {
			d := b.Delay(n).Seconds()
			if d < w*0.8-1e-9 || d > w*1.2+1e-9 {
				t.Fatalf("attempt %d: %.3fs, want %.3fs ± 20 %%", n, d, w)
			}
		}
	}
}
