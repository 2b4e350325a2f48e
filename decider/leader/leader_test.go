package leader_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/decider/callers"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/leader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// inst is a valid installation whose revision depends on n.
func inst(t *testing.T, n int) *installation.Installation {
	t.Helper()
	i, err := installationloader.Load(installationloader.Options{Environ: []string{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=" + strconv.Itoa(n)}})
	if err != nil {
		t.Fatal(err)
	}
	return i
}

type fixture struct {
	conn   *grpc.ClientConn
	store  *installationloader.Store
	leader *leader.Leader
	reg    *prometheus.Registry
}

// startLeader runs the real decider server with the leader's sync service,
// as `decider` serves it; callersFile "" = none.
func startLeader(t *testing.T, callersFile string, cfg leader.Config) *fixture {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := metrics.NewDecider(reg)
	cfg.Metrics = metrics.NewLeader(reg)
	cfg.Cluster = "east"
	store := installationloader.NewStore(inst(t, 30))
	l := leader.New(store, cfg)
	scfg := server.Config{Metrics: m, Sync: l}
	if callersFile != "" {
		path := filepath.Join(t.TempDir(), "callers.yaml")
		if err := os.WriteFile(path, []byte(callersFile), 0o600); err != nil {
			t.Fatal(err)
		}
		cf, err := callers.Open(path, callers.Options{}, nil, m)
		if err != nil {
			t.Fatal(err)
		}
		scfg.Callers = cf
	}
	srv, err := server.New(scfg, store, service.New(store, nil, m).WithCluster("east").WithLeader(l))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { srv.Shutdown(time.Second) })
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &fixture{conn: conn, store: store, leader: l, reg: reg}
}

// open opens a stream and sends the first message.
func (f *fixture) open(t *testing.T, token string, first *deciderv1.SyncRequest) (deciderv1.InstallationSyncService_SyncInstallationClient, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	stream, err := deciderv1.NewInstallationSyncServiceClient(f.conn).SyncInstallation(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := stream.Send(first); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	return stream, cancel
}

func recv(t *testing.T, s deciderv1.InstallationSyncService_SyncInstallationClient) *deciderv1.InstallationSnapshot {
	t.Helper()
	m, err := s.Recv()
	if err != nil {
		t.Fatalf("recv: %v", err)
	}
	return m
}

func ack(m *deciderv1.InstallationSnapshot) *deciderv1.SyncRequest {
	return &deciderv1.SyncRequest{Answer: &deciderv1.SyncRequest_Ack{Ack: &deciderv1.SyncAck{Revision: m.GetRevision(), Nonce: m.GetNonce()}}}
}

func nack(m *deciderv1.InstallationSnapshot, detail string) *deciderv1.SyncRequest {
	return &deciderv1.SyncRequest{Answer: &deciderv1.SyncRequest_Nack{Nack: &deciderv1.SyncNack{Revision: m.GetRevision(), Nonce: m.GetNonce(), ErrorDetail: detail}}}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func state(f *fixture, id string) *deciderv1.FollowerState {
	for _, s := range f.leader.Followers() {
		if s.GetFollowerId() == id {
			return s
		}
	}
	return nil
}

func TestTheStream(t *testing.T) {
	f := startLeader(t, "", leader.Config{})
	current := f.store.Current()

	t.Run("a new follower gets the installation in force at once, its canonical form loading back to the revision", func(t *testing.T) {
		s, _ := f.open(t, "", &deciderv1.SyncRequest{FollowerId: "west-0", Cluster: "west"})
		m := recv(t, s)
		if m.GetHeartbeat() || m.GetRevision() != current.Revision || m.GetNonce() == "" || m.GetLoadedAt() == nil {
			t.Fatalf("first message %v; want a snapshot of %s with a nonce", m, current.Revision)
		}
		back, err := installation.FromTransport(installation.Transport{Revision: m.GetRevision(), Canonical: []byte(m.GetCanonical())})
		if err != nil || back.Revision != current.Revision {
			t.Fatalf("the snapshot does not load back: %v", err)
		}
	})
	t.Run("a follower that already serves the revision gets a heartbeat, not the snapshot again", func(t *testing.T) {
		s, _ := f.open(t, "", &deciderv1.SyncRequest{FollowerId: "west-1", Cluster: "west", KnownRevision: current.Revision})
		m := recv(t, s)
		if !m.GetHeartbeat() || m.GetRevision() != current.Revision || m.GetCanonical() != "" || m.GetNonce() != "" {
			t.Fatalf("first message %v; want a heartbeat of %s", m, current.Revision)
		}
		waitFor(t, "west-1 applied", func() bool { return state(f, "west-1").GetAppliedRevision() == current.Revision })
	})
	t.Run("an ACK sets the applied revision and the last ACK time; a NACK is kept with its reason and counted", func(t *testing.T) {
		s, _ := f.open(t, "", &deciderv1.SyncRequest{FollowerId: "west-2", Cluster: "west"})
		m := recv(t, s)
		if err := s.Send(ack(m)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the ACK", func() bool { return state(f, "west-2").GetLastAckAt() != nil })
		if st := state(f, "west-2"); st.GetAppliedRevision() != m.GetRevision() || !st.GetConnected() || st.GetCluster() != "west" {
			t.Fatalf("state %v", st)
		}
		next := inst(t, 31)
		f.store.Swap(next)
		f.leader.Notify()
		m2 := recv(t, s)
		if err := s.Send(nack(m2, "revision mismatch: the canonical form is sha256:x")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the NACK", func() bool { return state(f, "west-2").GetLastNack() != nil })
		st := state(f, "west-2")
		if st.GetLastNack().GetRevision() != next.Revision || !strings.Contains(st.GetLastNack().GetErrorDetail(), "revision mismatch") || st.GetAppliedRevision() != m.GetRevision() {
			t.Fatalf("state after the NACK %v", st)
		}
		if got := testutil.ToFloat64(mustVec(t, f.reg, "dynamic_config_follower_nacks_total", map[string]string{"follower": "west-2", "cluster": "west"})); got != 1 {
			t.Fatalf("nacks_total = %v, want 1", got)
		}
		f.store.Swap(current)
		f.leader.Notify()
		if m3 := recv(t, s); m3.GetRevision() != current.Revision {
			t.Fatalf("after going back: %v", m3)
		}
	})
	t.Run("an answer naming a nonce the stream did not send is ignored", func(t *testing.T) {
		s, _ := f.open(t, "", &deciderv1.SyncRequest{FollowerId: "west-3", Cluster: "west"})
		m := recv(t, s)
		forged := &deciderv1.InstallationSnapshot{Revision: m.GetRevision(), Nonce: "999"}
		if err := s.Send(ack(forged)); err != nil {
			t.Fatal(err)
		}
		if err := s.Send(nack(m, "real")); err != nil { // a real answer after it, to know both were read
			t.Fatal(err)
		}
		waitFor(t, "the NACK", func() bool { return state(f, "west-3").GetLastNack() != nil })
		if state(f, "west-3").GetLastAckAt() != nil {
			t.Fatal("the forged ACK was recorded")
		}
	})
	t.Run("the first message must name a follower with a DNS name", func(t *testing.T) {
		for _, id := range []string{"", "West_1", strings.Repeat("a", 300)} {
			s, _ := f.open(t, "", &deciderv1.SyncRequest{FollowerId: id})
			if _, err := s.Recv(); status.Code(err) != codes.InvalidArgument {
				t.Errorf("id %q: %v; want InvalidArgument", id, err)
			}
		}
	})
}

func TestEveryRevisionChangeIsSentOnceAndBurstsCoalesce(t *testing.T) {
	f := startLeader(t, "", leader.Config{Heartbeat: time.Hour})
	s, _ := f.open(t, "", &deciderv1.SyncRequest{FollowerId: "west-0"})
	first := recv(t, s)
	var last *installation.Installation
	for n := 1; n <= 50; n++ { // a burst: the stream may see any subset, ending with the last
		last = inst(t, 100+n)
		f.store.Swap(last)
		f.leader.Notify()
	}
	seen := map[string]bool{first.GetRevision(): true}
	for {
		m := recv(t, s)
		if seen[m.GetRevision()] {
			t.Fatalf("revision %s sent twice on one stream", m.GetRevision())
		}
		seen[m.GetRevision()] = true
		if m.GetRevision() == last.Revision {
			break
		}
	}
	if len(seen) > 51 {
		t.Fatalf("%d snapshots for 51 revisions", len(seen))
	}
	t.Logf("a burst of 50 revisions reached the stream as %d snapshots", len(seen)-1)
	// Swapping back to a revision the stream already got is a change, and is sent.
	f.store.Swap(inst(t, 101))
	f.leader.Notify()
	if m := recv(t, s); m.GetRevision() != inst(t, 101).Revision {
		t.Fatalf("got %v", m)
	}
}

func TestHeartbeatsCarryTheRevisionAndNothingElse(t *testing.T) {
	f := startLeader(t, "", leader.Config{Heartbeat: 20 * time.Millisecond})
	s, _ := f.open(t, "", &deciderv1.SyncRequest{FollowerId: "west-0"})
	snap := recv(t, s)
	for range 3 {
		m := recv(t, s)
		if !m.GetHeartbeat() || m.GetRevision() != snap.GetRevision() || m.GetCanonical() != "" || m.GetNonce() != "" {
			t.Fatalf("heartbeat %v", m)
		}
	}
}

func digest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func TestFollowersAreCallersLikeFrontDoors(t *testing.T) {
	const westToken = "west-follower-token-0123"
	file := `callers:
  - name: west-followers
    clusters: [west]
    credentials:
      - tokenSHA256: ` + digest(westToken) + `
`
	f := startLeader(t, file, leader.Config{})
	t.Run("a follower naming its caller's cluster is served", func(t *testing.T) {
		s, _ := f.open(t, westToken, &deciderv1.SyncRequest{FollowerId: "west-0", Cluster: "west"})
		recv(t, s)
		waitFor(t, "the follower's state", func() bool { return state(f, "west-0").GetCaller() == "west-followers" })
	})
	t.Run("a follower naming another cluster, or none (the leader's own), is denied with the Decide text", func(t *testing.T) {
		for _, cluster := range []string{"east", ""} {
			s, _ := f.open(t, westToken, &deciderv1.SyncRequest{FollowerId: "west-1", Cluster: cluster})
			_, err := s.Recv()
			if status.Code(err) != codes.PermissionDenied || status.Convert(err).Message() != callers.NotForThisCluster {
				t.Errorf("cluster %q: %v; want PermissionDenied %q", cluster, err, callers.NotForThisCluster)
			}
		}
	})
	t.Run("a stream without a listed credential is unauthenticated", func(t *testing.T) {
		s, _ := f.open(t, "", &deciderv1.SyncRequest{FollowerId: "west-2", Cluster: "west"})
		if _, err := s.Recv(); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%v; want Unauthenticated", err)
		}
	})
	t.Run("the 65th connected follower of one caller is refused with RESOURCE_EXHAUSTED; a disconnected one makes room", func(t *testing.T) {
		for i := range leader.DefaultMaxPerCaller { // west-0's stream ended with its subtest: it makes room
			s, _ := f.open(t, westToken, &deciderv1.SyncRequest{FollowerId: "w-" + strconv.Itoa(i), Cluster: "west"})
			recv(t, s)
		}
		s, _ := f.open(t, westToken, &deciderv1.SyncRequest{FollowerId: "w-65", Cluster: "west"})
		if _, err := s.Recv(); status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("%v; want ResourceExhausted", err)
		}
	})
}

func TestADisconnectedFollowerIsForgottenWithItsSeries(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	f := startLeader(t, "", leader.Config{Now: clock})
	s, cancel := f.open(t, "", &deciderv1.SyncRequest{FollowerId: "west-0", Cluster: "west"})
	m := recv(t, s)
	if err := s.Send(ack(m)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the ACK", func() bool { return state(f, "west-0").GetLastAckAt() != nil })
	cancel()
	waitFor(t, "the disconnect", func() bool { return !state(f, "west-0").GetConnected() })
	if n, _ := testutil.GatherAndCount(f.reg, "dynamic_config_follower_revision_info"); n != 1 {
		t.Fatalf("revision_info series = %d, want 1", n)
	}
	now = now.Add(leader.DefaultForgetAfter - time.Second)
	if state(f, "west-0") == nil {
		t.Fatal("forgotten too early")
	}
	now = now.Add(2 * time.Second)
	if state(f, "west-0") != nil {
		t.Fatal("not forgotten after 10 minutes")
	}
	for _, name := range []string{"dynamic_config_follower_revision_info", "dynamic_config_follower_connected", "dynamic_config_follower_nacks_total"} {
		if n, _ := testutil.GatherAndCount(f.reg, name); n != 0 {
			t.Errorf("%s has %d series after forgetting", name, n)
		}
	}
}

// mustVec finds the one series of name with labels.
func mustVec(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := true
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					match = false
				}
			}
			if match {
				g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "x"})
				if m.GetCounter() != nil {
					g.Set(m.GetCounter().GetValue())
				} else {
					g.Set(m.GetGauge().GetValue())
				}
				return g
			}
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return nil
}

func TestAStoppingLeaderEndsItsStreamsSoThatTheGracefulStopIsQuick(t *testing.T) {
	f := startLeader(t, "", leader.Config{})
	s, _ := f.open(t, "", &deciderv1.SyncRequest{FollowerId: "west-0"})
	recv(t, s)
	f.leader.Drain()
	if _, err := s.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("after Drain: %v; want UNAVAILABLE", err)
	}
	s2, _ := f.open(t, "", &deciderv1.SyncRequest{FollowerId: "west-1"})
	if _, err := s2.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("a new stream after Drain: %v; want UNAVAILABLE", err)
	}
}
