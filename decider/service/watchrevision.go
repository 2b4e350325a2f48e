package service

// WatchRevision (issue 43): the decider announces what it decides with —
// the installation revision, the classes revision and the rollout state —
// so that a front door may answer a repeated question from its decision
// cache exactly as long as the answer it remembers is still the answer.

import (
	"context"
	"errors"
	"runtime/debug"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/broadcast"
)

// DefaultRevisionHeartbeat is how often a WatchRevision stream carries an
// announcement when nothing changes. A front door takes its stream as lost
// after about twice as long without one, so this bounds how long a front
// door cut off from the decider without a connection error (a network
// partition) keeps answering from its cache as if nothing had changed.
const DefaultRevisionHeartbeat = 5 * time.Second

// revisionWatch is the service's side of the WatchRevision streams. The
// zero value is ready: the default heartbeat, no rollout, not draining.
type revisionWatch struct {
	heartbeat time.Duration
	// build is the decider's build as announced (WithBuild; "" = buildIdentity).
	build string
	// wake is notified by NotifyRevisions and Drain: every stream looks again.
	wake     broadcast.Broadcast
	draining atomic.Bool
}

// errDraining ends the revision streams of a decider that stops; front
// doors reconnect (to another replica behind the same target).
var errDraining = &Error{Code: codes.Unavailable, Message: "this decider is shutting down; reconnect"}

// WithRevisionHeartbeat sets how often a WatchRevision stream carries an
// announcement when nothing changes (0 = DefaultRevisionHeartbeat; tests use
// a short one). It returns s.
func (s *Service) WithRevisionHeartbeat(d time.Duration) *Service {
	s.watch.heartbeat = d
	return s
}

// WithBuild names the decider's build in its announcements (the binary's
// version); "" = what the Go build information says (the module version and
// the source revision). A decider of another build may answer the same
// question differently, so a front door compares it like the revisions. It
// returns s.
func (s *Service) WithBuild(version string) *Service {
	s.watch.build = version
	return s
}

// buildIdentity is the build the Go toolchain recorded: the main module's
// version and, when built from a checkout, the source revision and whether
// it was modified.
func buildIdentity() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	id := bi.Main.Version
	for _, setting := range bi.Settings {
		switch {
		case setting.Key == "vcs.revision":
			id += "+" + setting.Value
		case setting.Key == "vcs.modified" && setting.Value == "true":
			id += ".modified"
		}
	}
	return id
}

// NotifyRevisions makes every WatchRevision stream compare what it last
// announced with what the decider decides with now, and announce a change at
// once. The installation and class stores and the rollout state wake the
// streams themselves; this is for any other change (without it, a change is
// announced with the next heartbeat).
func (s *Service) NotifyRevisions() { s.watch.wake.Notify() }

// Drain ends every WatchRevision stream with UNAVAILABLE and refuses new
// ones. A graceful stop of the gRPC server waits for open streams, and a
// revision stream never ends by itself: the server calls Drain when it
// stops accepting calls.
func (s *Service) Drain() {
	s.watch.draining.Store(true)
	s.watch.wake.Notify()
}

// rolloutToken is the rollout state a WatchRevision announces for cluster:
// an opaque string that changes whenever a rollout (spec 10: the candidate
// revision, the stage and slice, a halt) may change the answers given, ""
// while no rollout can change one (none, or an inert one). It is the rollout
// state's Token (WithRollouts; none: ""), the same for every cluster: a
// front door steps aside while it is not "", whichever cluster it admits for.
func (s *Service) rolloutToken(string) string { return s.rollouts.Token() }

// rolloutChanged is a channel closed at the next change of the rollout
// token (nil, never closed, without a rollout state).
func (s *Service) rolloutChanged() <-chan struct{} {
	if s.rollouts == nil {
		return nil
	}
	return s.rollouts.Changes()
}

// WatchRevision announces the revisions this decider decides with (spec
// changes, issue 43): at once, again on every change, and every heartbeat.
// It ends with the error Decide would give while the decider would not
// decide, and with UNAVAILABLE when the decider stops.
func (s *Service) WatchRevision(req *deciderv1.WatchRevisionRequest, stream grpc.ServerStreamingServer[deciderv1.WatchRevisionResponse]) error {
	ctx := stream.Context()
	_, cluster, err := s.callerFor(ctx, "revision watch", req.GetCluster())
	if err != nil {
		return err
	}
	interval := s.watch.heartbeat
	if interval <= 0 {
		interval = DefaultRevisionHeartbeat
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var last *deciderv1.WatchRevisionResponse
	beat := false
	for {
		// The change channels first, then the state (broadcast.Changed): a
		// swap in between still closes a channel held here.
		installationSwapped, classesSwapped, woken := s.store.Changed(), s.classes.Changed(), s.watch.wake.Changed()
		rolloutChanged := s.rolloutChanged()
		if s.watch.draining.Load() {
			return errDraining
		}
		now, err := s.announcement(cluster)
		if err != nil {
			return err
		}
		changed := last == nil || !sameRevisions(last, now)
		if changed || beat {
			now.Heartbeat = !changed
			now.HeartbeatInterval = durationpb.New(interval)
			if err := stream.Send(now); err != nil {
				return err
			}
			last = now
		}
		select {
		case <-ctx.Done():
			return watchEnded(ctx)
		case <-installationSwapped:
			beat = false
		case <-classesSwapped:
			beat = false
		case <-woken:
			beat = false
		case <-rolloutChanged:
			beat = false
		case <-ticker.C:
			beat = true
		}
	}
}

// announcement is what the decider decides with now for cluster, or the
// error Decide would answer with (no installation, a stale follower,
// classes not synced).
func (s *Service) announcement(cluster string) (*deciderv1.WatchRevisionResponse, error) {
	inst := s.store.Current()
	if inst == nil {
		return nil, errNoInstallation
	}
	if s.follower != nil && s.follower.Stale() {
		return nil, errStale
	}
	a := &deciderv1.WatchRevisionResponse{InstallationRevision: inst.Revision, Rollout: s.rolloutToken(cluster), DeciderBuild: s.build()}
	if s.classes.Enabled() {
		set := s.classes.Current()
		if set == nil {
			return nil, errClassesNotSynced
		}
		a.ClassesRevision = set.Revision
	}
	return a, nil
}

// build is the decider's build as announced.
func (s *Service) build() string {
	if s.watch.build != "" {
		return s.watch.build
	}
	return processBuild
}

// processBuild is buildIdentity, read once.
var processBuild = buildIdentity()

// sameRevisions reports whether a and b announce the same answers.
func sameRevisions(a, b *deciderv1.WatchRevisionResponse) bool {
	return a.GetInstallationRevision() == b.GetInstallationRevision() &&
		a.GetClassesRevision() == b.GetClassesRevision() && a.GetRollout() == b.GetRollout() &&
		a.GetDeciderBuild() == b.GetDeciderBuild()
}

// watchEnded is the status of a stream whose caller went away: nothing to
// report but that it ended (a cancelled front door is not an error here).
func watchEnded(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &Error{Code: codes.DeadlineExceeded, Message: "the revision watch reached its deadline"}
	}
	return &Error{Code: codes.Canceled, Message: "the revision watch was cancelled"}
}
