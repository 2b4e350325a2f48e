package service

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// watch opens a revision watch on s until the test ends.
func watch(t *testing.T, s *served) grpc.ServerStreamingClient[deciderv1.WatchRevisionResponse] {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	stream, err := s.client.WatchRevision(ctx, &deciderv1.WatchRevisionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return stream
}

func next(t *testing.T, stream grpc.ServerStreamingClient[deciderv1.WatchRevisionResponse]) *deciderv1.WatchRevisionResponse {
	t.Helper()
	a, err := stream.Recv()
	if err != nil {
		t.Fatalf("the watch ended: %v", err)
	}
	return a
}

// otherInstallation is an installation whose revision differs from the empty one's.
func otherInstallation(t *testing.T) *installation.Installation {
	t.Helper()
	return loadInstallation(t, `watchSeconds: "30"`)
}

func TestTheWatchAnnouncesTheRevisionsAtOnceAndEveryChangeWithoutWaitingForAHeartbeat(t *testing.T) {
	store := installationloader.NewStore(installation.Empty())
	s := serve(t, store)
	cs := classes.NewStore(serviceClasses)
	s.svc.WithClasses(cs).WithRevisionHeartbeat(time.Hour) // a change must not wait for it
	stream := watch(t, s)

	first := next(t, stream)
	if first.GetInstallationRevision() != installation.Empty().Revision || first.GetClassesRevision() != serviceClasses.Revision ||
		first.GetRollout() != "" || first.GetHeartbeat() || first.GetHeartbeatInterval().AsDuration() != time.Hour ||
		first.GetDeciderBuild() != processBuild {
		t.Fatalf("first announcement %v", first)
	}

	other := otherInstallation(t)
	store.Swap(other)
	if a := next(t, stream); a.GetInstallationRevision() != other.Revision || a.GetClassesRevision() != serviceClasses.Revision || a.GetHeartbeat() {
		t.Fatalf("after the installation swap: %v, want %s", a, other.Revision)
	}

	fewer := classes.NewSet(nil)
	cs.Swap(fewer)
	if a := next(t, stream); a.GetClassesRevision() != fewer.Revision || a.GetInstallationRevision() != other.Revision || a.GetHeartbeat() {
		t.Fatalf("after the classes swap: %v, want %s", a, fewer.Revision)
	}
}

func TestAStoreSwapToTheSameRevisionAndAWakeUpWithoutChangeAnnounceNothing(t *testing.T) {
	store := installationloader.NewStore(installation.Empty())
	s := serve(t, store)
	s.svc.WithRevisionHeartbeat(time.Hour)
	stream := watch(t, s)
	next(t, stream)

	store.Swap(installation.Empty()) // a reload of an unchanged document
	s.svc.NotifyRevisions()
	other := otherInstallation(t)
	store.Swap(other)
	if a := next(t, stream); a.GetInstallationRevision() != other.Revision {
		t.Fatalf("the announcement after two non-changes and a change is %v, want only the change (%s)", a, other.Revision)
	}
}

func TestTheWatchCarriesAHeartbeatWithTheSameRevisionsWhenNothingChanges(t *testing.T) {
	s := serve(t, installationloader.NewStore(installation.Empty()))
	s.svc.WithRevisionHeartbeat(20 * time.Millisecond)
	stream := watch(t, s)
	first := next(t, stream)
	for range 3 {
		a := next(t, stream)
		if !a.GetHeartbeat() || a.GetInstallationRevision() != first.GetInstallationRevision() ||
			a.GetHeartbeatInterval().AsDuration() != 20*time.Millisecond {
			t.Fatalf("heartbeat %v after %v", a, first)
		}
	}
}

// staleFollower is a follower that is past --max-stale once stale is set.
type staleFollower struct{ stale atomic.Bool }

func (f *staleFollower) ID() string                      { return "west-0" }
func (f *staleFollower) Stale() bool                     { return f.stale.Load() }
func (f *staleFollower) State() *deciderv1.FollowerState { return &deciderv1.FollowerState{} }

func TestTheWatchEndsAsDecideFailsWhileTheDeciderWouldNotDecide(t *testing.T) {
	cases := []struct {
		name  string
		setup func(*served, *installationloader.Store)
		want  string
	}{
		{"no installation is held yet", func(*served, *installationloader.Store) {}, errNoInstallation.Message},
		{"a follower is past --max-stale", func(s *served, store *installationloader.Store) {
			store.Swap(installation.Empty())
			f := &staleFollower{}
			f.stale.Store(true)
			s.svc.WithFollower(f)
		}, errStale.Message},
		{"classes are on and not synced", func(s *served, store *installationloader.Store) {
			store.Swap(installation.Empty())
			s.svc.WithClasses(classes.NewPendingStore())
		}, errClassesNotSynced.Message},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := installationloader.NewStore(nil)
			s := serve(t, store)
			tc.setup(s, store)
			_, err := watch(t, s).Recv()
			if st := status.Convert(err); st.Code() != codes.Unavailable || st.Message() != tc.want {
				t.Fatalf("got %v, want UNAVAILABLE %q", err, tc.want)
			}
		})
	}
}

func TestAFollowerThatTurnsStaleEndsItsWatchByTheNextHeartbeat(t *testing.T) {
	f := &staleFollower{}
	s := serve(t, installationloader.NewStore(installation.Empty()))
	s.svc.WithFollower(f).WithRevisionHeartbeat(20 * time.Millisecond)
	stream := watch(t, s)
	next(t, stream)
	f.stale.Store(true)
	for {
		_, err := stream.Recv()
		if err == nil {
			continue // a heartbeat sent before it turned stale
		}
		if st := status.Convert(err); st.Code() != codes.Unavailable || st.Message() != errStale.Message {
			t.Fatalf("got %v, want the stale follower's UNAVAILABLE", err)
		}
		return
	}
}

func TestDrainEndsEveryWatchWithUnavailableAndRefusesNewOnes(t *testing.T) {
	s := serve(t, installationloader.NewStore(installation.Empty()))
	s.svc.WithRevisionHeartbeat(time.Hour)
	stream := watch(t, s)
	next(t, stream)
	s.svc.Drain()
	if _, err := stream.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("the open watch got %v, want UNAVAILABLE", err)
	}
	if _, err := watch(t, s).Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("a new watch got %v, want UNAVAILABLE", err)
	}
}

func TestTheWatchRefusesABrokenClusterName(t *testing.T) {
	s := serve(t, installationloader.NewStore(installation.Empty()))
	stream, err := s.client.WatchRevision(context.Background(), &deciderv1.WatchRevisionRequest{Cluster: "Not_A_Name"})
	if err == nil {
		_, err = stream.Recv()
	}
	if st := status.Convert(err); st.Code() != codes.InvalidArgument {
		t.Fatalf("got %v, want INVALID_ARGUMENT", err)
	}
}

func TestTheWatchNamesTheDecidersBuild(t *testing.T) {
	s := serve(t, installationloader.NewStore(installation.Empty()))
	s.svc.WithBuild("v1.2.3")
	if a := next(t, watch(t, s)); a.GetDeciderBuild() != "v1.2.3" {
		t.Fatalf("announcement %v, want the build v1.2.3", a)
	}
	if processBuild == "" {
		t.Error("the Go build information names no build")
	}
}

func TestTheWatchAnnouncesTheRolloutTokenAndItsChangesAtOnce(t *testing.T) {
	s, rs := serveRollout(t, "candidate:\n  environment:\n    DYNAMIC_CONFIG_AGENT_IMAGE: "+newImage+"\n", false)
	s.svc.WithRevisionHeartbeat(time.Hour)
	stream := watch(t, s)
	first := next(t, stream)
	if first.GetRollout() == "" || first.GetRollout() != s.svc.Rollouts().Token() {
		t.Fatalf("announcement %v, want the rollout state's token %q", first, s.svc.Rollouts().Token())
	}
	rs.Swap(nil) // the rollout removed (promoted, or aborted)
	s.svc.Rollouts().RolloutInForce(nil)
	if a := next(t, stream); a.GetRollout() != "" || a.GetHeartbeat() {
		t.Fatalf("after the rollout ended: %v, want an announcement without a token", a)
	}
}
