// Package leader serves InstallationSyncService (spec 09 §2): every
// follower's stream gets the installation in force at once and again on
// every revision change (bursts coalesce; never the same revision twice on
// one stream), a heartbeat every 10 s, and its ACKs and NACKs are kept as
// the follower's state, reported in GetInstallation, metrics and the log.
package leader

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/dynamic-config-admission/dynamic-config/decider/callers"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutloader"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/dnsname"
	"github.com/dynamic-config-admission/dynamic-config/internal/logsample"
	"github.com/dynamic-config-admission/dynamic-config/internal/textcut"
)

// Defaults of spec 09 §2.
const (
	// DefaultHeartbeat is how often a stream carries a heartbeat.
	DefaultHeartbeat = 10 * time.Second
	// DefaultForgetAfter is how long a disconnected follower is remembered.
	DefaultForgetAfter = 10 * time.Minute
	// DefaultMaxPerCaller is how many followers one caller of the callers
	// file may hold connected.
	DefaultMaxPerCaller = 64
	// DefaultMaxWithoutCallers bounds the followers of a leader without a
	// callers file, where every follower is the one anonymous caller
	// (decision: the follower label stays bounded either way).
	DefaultMaxWithoutCallers = 1024
	// maxDetail bounds the NACK text kept and logged per follower.
	maxDetail = 4096
	// nonceWindow is how many of a stream's latest nonces an answer may name.
	nonceWindow = 8
	// DefaultFirstMessage bounds how long a stream may go without its first
	// message (the follower's identity): a stream that says nothing is
	// closed, not held.
	DefaultFirstMessage = 10 * time.Second
	// refusedLogInterval bounds a follower's "refused a snapshot" line: the
	// first, then one per interval with the count suppressed.
	refusedLogInterval = 10 * time.Second
)

// Config configures a Leader; zero fields take the defaults.
type Config struct {
	// Cluster is the leader's own cluster: the cluster of a follower that
	// names none.
	Cluster string
	// Heartbeat, FirstMessage, ForgetAfter, MaxPerCaller and
	// MaxWithoutCallers override the defaults.
	Heartbeat         time.Duration
	FirstMessage      time.Duration
	ForgetAfter       time.Duration
	MaxPerCaller      int
	MaxWithoutCallers int
	Logger            *slog.Logger
	Metrics           *metrics.Leader
	// Rollouts holds the leader's rollout (spec 10 §6): every snapshot
	// carries it, and a change of it alone is a new snapshot. nil = none.
	Rollouts *rolloutloader.Store
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// Leader is the InstallationSyncService of a leader decider. It is also an
// installationloader.ReloadObserver: InForce wakes every stream.
type Leader struct {
	deciderv1.UnimplementedInstallationSyncServiceServer

	store *installationloader.Store
	cfg   Config

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every installation put in force
	followers map[key]*follower

	stopping chan struct{} // closed by Drain
	drain    sync.Once
}

var (
	_ deciderv1.InstallationSyncServiceServer = (*Leader)(nil)
	_ installationloader.ReloadObserver       = (*Leader)(nil)
	_ rolloutloader.Observer                  = (*Leader)(nil)
)

// key identifies a follower: its caller (so that one caller can never
// overwrite another's follower) and its id.
type key struct{ caller, id string }

// follower is one follower's state; guarded by Leader.mu.
type follower struct {
	id, cluster, caller string
	applied             string
	lastAck             time.Time
	nack                *deciderv1.FollowerNack
	streams             int    // open streams (a reconnect can overlap the old stream's end)
	generation          uint64 // of the latest stream
	lastSeen            time.Time
	// refusedLine samples the follower's "refused a snapshot" line across
	// its streams (a follower that reconnects to NACK again is one source).
	refusedLine *logsample.Sampler
	// rollout is the follower's latest rollout report (spec 10 §6); nil: none.
	rollout *deciderv1.RolloutState
}

// New returns the leader over store.
func New(store *installationloader.Store, cfg Config) *Leader {
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.FirstMessage <= 0 {
		cfg.FirstMessage = DefaultFirstMessage
	}
	if cfg.ForgetAfter <= 0 {
		cfg.ForgetAfter = DefaultForgetAfter
	}
	if cfg.MaxPerCaller <= 0 {
		cfg.MaxPerCaller = DefaultMaxPerCaller
	}
	if cfg.MaxWithoutCallers <= 0 {
		cfg.MaxWithoutCallers = DefaultMaxWithoutCallers
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Leader{store: store, cfg: cfg, changed: make(chan struct{}), followers: map[key]*follower{}, stopping: make(chan struct{})}
}

// errStopping ends the streams of a leader that stops; followers reconnect
// (to another replica behind the same target).
var errStopping = status.Error(codes.Unavailable, "the leader decider is shutting down; reconnect")

// Drain ends every stream (UNAVAILABLE) and refuses new ones: a graceful
// stop of the gRPC server waits for open streams, and a follower's never
// ends by itself. The server calls it when it stops accepting calls.
func (l *Leader) Drain() {
	l.drain.Do(func() { close(l.stopping) })
}

// Notify wakes every stream to compare its last sent revision with the
// installation in force.
func (l *Leader) Notify() {
	l.mu.Lock()
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

func (l *Leader) changes() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// ReloadOK implements installationloader.ReloadObserver.
func (l *Leader) ReloadOK(string, string) {}

// ReloadRejected implements installationloader.ReloadObserver.
func (l *Leader) ReloadRejected(int) {}

// ReloadUnchanged implements installationloader.ReloadObserver.
func (l *Leader) ReloadUnchanged() {}

// InForce implements installationloader.ReloadObserver: a new installation
// wakes every stream.
func (l *Leader) InForce(*installation.Installation) { l.Notify() }

// Run forgets followers disconnected for longer than ForgetAfter, with
// their series, until ctx ends.
func (l *Leader) Run(ctx context.Context) {
	t := time.NewTicker(l.cfg.ForgetAfter / 10)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.mu.Lock()
			l.sweepLocked()
			l.mu.Unlock()
		}
	}
}

// sweepLocked forgets the followers disconnected for longer than ForgetAfter.
func (l *Leader) sweepLocked() {
	now := l.cfg.Now()
	for k, f := range l.followers {
		if f.streams == 0 && now.Sub(f.lastSeen) > l.cfg.ForgetAfter {
			l.forgetLocked(k, f)
		}
	}
}

func (l *Leader) forgetLocked(k key, f *follower) {
	delete(l.followers, k)
	l.cfg.Metrics.Forget(f.id, f.cluster)
	l.cfg.Logger.Info("follower forgotten", "follower", f.id, "cluster", f.cluster, "caller", f.caller)
}

// Followers returns every follower held, sorted by id (then caller).
func (l *Leader) Followers() []*deciderv1.FollowerState {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweepLocked()
	out := make([]*deciderv1.FollowerState, 0, len(l.followers))
	for _, f := range l.followers {
		s := &deciderv1.FollowerState{
			FollowerId:      f.id,
			Cluster:         f.cluster,
			Caller:          f.caller,
			AppliedRevision: f.applied,
			LastNack:        f.nack,
			Connected:       f.streams > 0,
			LastSeenAt:      timestamppb.New(f.lastSeen),
			Rollout:         f.rollout,
		}
		if !f.lastAck.IsZero() {
			s.LastAckAt = timestamppb.New(f.lastAck)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GetFollowerId() != out[j].GetFollowerId() {
			return out[i].GetFollowerId() < out[j].GetFollowerId()
		}
		return out[i].GetCaller() < out[j].GetCaller()
	})
	return out
}

// attach registers a stream of follower (caller, id) in cluster; release
// ends it. It refuses a new follower beyond the caller's bound when that
// many are connected; a disconnected one is forgotten to make room.
func (l *Leader) attach(caller, id, cluster, known string, anonymous bool) (*follower, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweepLocked()
	k := key{caller, id}
	f, ok := l.followers[k]
	if !ok {
		limit := l.cfg.MaxPerCaller
		if anonymous {
			limit = l.cfg.MaxWithoutCallers
		}
		var held []*follower
		var oldest *follower
		for _, o := range l.followers {
			if o.caller != caller {
				continue
			}
			held = append(held, o)
			if o.streams == 0 && (oldest == nil || o.lastSeen.Before(oldest.lastSeen)) {
				oldest = o
			}
		}
		if len(held) >= limit {
			if oldest == nil {
				return nil, 0, status.Errorf(codes.ResourceExhausted, "this caller already holds %d connected followers, the most a caller may hold", limit)
			}
			l.forgetLocked(key{oldest.caller, oldest.id}, oldest)
		}
		f = &follower{id: id, caller: caller, refusedLine: logsample.New(refusedLogInterval, l.cfg.Now)}
		l.followers[k] = f
	}
	if f.cluster != "" && f.cluster != cluster {
		l.cfg.Metrics.Forget(f.id, f.cluster)
	}
	f.cluster = cluster
	f.streams++
	f.generation++
	f.lastSeen = l.cfg.Now()
	if known != "" && f.applied == "" {
		f.applied = known // what it serves from its state directory
	}
	l.cfg.Metrics.Connected(id, cluster, true)
	l.cfg.Metrics.Applied(id, cluster, f.applied)
	return f, f.generation, nil
}

func (l *Leader) release(f *follower) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f.streams--
	f.lastSeen = l.cfg.Now()
	if f.streams == 0 {
		l.cfg.Metrics.Connected(f.id, f.cluster, false)
	}
}

// SyncInstallation serves one follower's stream (spec 09 §2).
func (l *Leader) SyncInstallation(stream deciderv1.InstallationSyncService_SyncInstallationServer) error {
	ctx := stream.Context()
	select {
	case <-l.stopping:
		return errStopping
	default:
	}
	first, err := l.firstMessage(stream)
	if err != nil {
		return err
	}
	id, cluster, caller, err := l.identify(ctx, first)
	if err != nil {
		return err
	}
	_, anonymous := callers.FromContext(ctx)
	anonymous = !anonymous
	f, _, err := l.attach(caller, id, cluster, first.GetKnownRevision(), anonymous)
	if err != nil {
		return err
	}
	defer l.release(f)
	log := l.cfg.Logger.With("follower", id, "cluster", cluster, "caller", caller)
	log.Info("follower connected", "known_revision", first.GetKnownRevision())
	defer log.Info("follower disconnected")

	answers := make(chan *deciderv1.SyncRequest)
	received := make(chan error, 1)
	go func() {
		for {
			m, err := stream.Recv()
			if err != nil {
				received <- err
				return
			}
			select {
			case answers <- m:
			case <-ctx.Done():
				return
			}
		}
	}()

	s := &sender{stream: stream, sent: first.GetKnownRevision(), sentRollout: first.GetKnownRollout(), nonces: map[string]string{}}
	heartbeat := time.NewTicker(l.cfg.Heartbeat)
	defer heartbeat.Stop()
	if inst := l.store.Current(); inst != nil && inst.Revision == s.sent && rolloutID(l.cfg.Rollouts.Current()) == s.sentRollout {
		// decision: a stream always starts with a snapshot or, when the
		// follower is current, a heartbeat — it knows at once it is heard.
		if err := stream.Send(&deciderv1.InstallationSnapshot{Revision: s.sent, Heartbeat: true}); err != nil {
			return err
		}
	}
	for {
		changed := l.changes() // before reading the store: a swap after this wakes us
		if inst, r := l.store.Current(), l.cfg.Rollouts.Current(); inst != nil && (inst.Revision != s.sent || rolloutID(r) != s.sentRollout) {
			if err := s.snapshot(inst, r); err != nil {
				return err
			}
			heartbeat.Reset(l.cfg.Heartbeat)
			log.Debug("snapshot sent", "revision", inst.Revision)
		}
		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-l.stopping:
			return errStopping
		case err := <-received:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case m := <-answers:
			l.answer(log, f, s, m)
		case <-changed:
		case <-heartbeat.C:
			if s.sent == "" {
				continue // nothing in force yet: nothing to announce
			}
			if err := stream.Send(&deciderv1.InstallationSnapshot{Revision: s.sent, Heartbeat: true}); err != nil {
				return err
			}
		}
	}
}

// firstMessage receives the stream's first message within FirstMessage: a
// stream that sends none is closed (DEADLINE_EXCEEDED), not held (issue 38).
func (l *Leader) firstMessage(stream deciderv1.InstallationSyncService_SyncInstallationServer) (*deciderv1.SyncRequest, error) {
	type received struct {
		m   *deciderv1.SyncRequest
		err error
	}
	got := make(chan received, 1)
	go func() {
		m, err := stream.Recv() // returns once the handler returns: the stream ends
		got <- received{m, err}
	}()
	timer := time.NewTimer(l.cfg.FirstMessage)
	defer timer.Stop()
	select {
	case r := <-got:
		return r.m, r.err
	case <-timer.C:
		return nil, status.Errorf(codes.DeadlineExceeded, "sync request: no first message (follower_id, cluster, known_revision) within %s", l.cfg.FirstMessage)
	case <-l.stopping:
		return nil, errStopping
	}
}

// identify checks the first message: the follower's id, its cluster and,
// with a callers file, that its caller may speak for that cluster — the
// Decide rules (spec 06, 09 §2).
func (l *Leader) identify(ctx context.Context, first *deciderv1.SyncRequest) (id, cluster, caller string, err error) {
	if first.GetAnswer() != nil {
		return "", "", "", status.Error(codes.InvalidArgument, "sync request: the first message names the follower (follower_id, cluster, known_revision) and answers nothing")
	}
	id = first.GetFollowerId()
	if !dnsname.IsSubdomain(id) {
		return "", "", "", status.Error(codes.InvalidArgument, "sync request: follower_id "+strconv.Quote(textcut.Bytes(id, 80))+" is not a follower id: a lower-case DNS name")
	}
	cluster = first.GetCluster()
	if problem := callers.CheckClusterName(cluster); problem != "" {
		return "", "", "", status.Error(codes.InvalidArgument, "sync request: cluster "+problem)
	}
	if cluster == "" {
		cluster = l.cfg.Cluster
	}
	if rev := first.GetKnownRevision(); rev != "" && !validRevision(rev) {
		return "", "", "", status.Error(codes.InvalidArgument, "sync request: known_revision is not a sha256:<hex> revision")
	}
	c, known := callers.FromContext(ctx)
	if !known {
		return id, cluster, "", nil
	}
	if !c.MaySpeakFor(cluster) {
		l.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "caller denied", slog.String("caller", c.Name), slog.String("cluster", cluster), slog.String("follower", id))
		return "", "", "", status.Error(codes.PermissionDenied, callers.NotForThisCluster)
	}
	return id, cluster, c.Name, nil
}

// validRevision reports whether rev is sha256: and 64 lower-case hex digits.
func validRevision(rev string) bool {
	const prefix = "sha256:"
	if len(rev) != len(prefix)+64 || rev[:len(prefix)] != prefix {
		return false
	}
	for _, c := range rev[len(prefix):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// answer records one ACK or NACK of a snapshot this stream sent, once: the
// nonce is answered, and an answer naming it again — a replay — or naming a
// nonce the stream did not send (lately) changes nothing and is logged at
// DEBUG only (issue 38: replayed NACKs were a WARN line each). The
// "refused a snapshot" line is sampled per follower.
func (l *Leader) answer(log *slog.Logger, f *follower, s *sender, m *deciderv1.SyncRequest) {
	if rep := m.GetRolloutReport(); rep != nil && m.GetAnswer() == nil {
		l.rolloutReport(log, f, rep)
		return
	}
	var nonce, revision string
	switch a := m.GetAnswer().(type) {
	case *deciderv1.SyncRequest_Ack:
		nonce, revision = a.Ack.GetNonce(), a.Ack.GetRevision()
	case *deciderv1.SyncRequest_Nack:
		nonce, revision = a.Nack.GetNonce(), a.Nack.GetRevision()
	default:
		log.Debug("follower message without an answer ignored")
		return
	}
	sent, ok := s.nonces[nonce]
	if !ok || sent != revision {
		log.Debug("answer for a nonce this stream did not send, or answered already, ignored", "nonce", textcut.Bytes(nonce, 40))
		return
	}
	s.answered(nonce)
	now := l.cfg.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	switch a := m.GetAnswer().(type) {
	case *deciderv1.SyncRequest_Ack:
		f.applied, f.lastAck, f.nack = revision, now, nil
		l.cfg.Metrics.Applied(f.id, f.cluster, revision)
		log.Info("follower acknowledged", "revision", revision)
	case *deciderv1.SyncRequest_Nack:
		detail := textcut.Bytes(a.Nack.GetErrorDetail(), maxDetail)
		f.nack = &deciderv1.FollowerNack{Revision: revision, ErrorDetail: detail, At: timestamppb.New(now)}
		l.cfg.Metrics.Nacked(f.id, f.cluster)
		if write, suppressed := f.refusedLine.Allow(); write {
			log.Warn("follower refused a snapshot", "revision", revision, "applied_revision", f.applied, "error_detail", detail, "suppressed", suppressed)
		}
	}
}

// sender is one stream's sending side: the revision last sent and the
// latest nonces (nonce → revision).
type sender struct {
	stream deciderv1.InstallationSyncService_SyncInstallationServer
	sent   string
	// sentRollout is the id of the rollout last sent ("" none).
	sentRollout string
	seq         uint64
	nonces      map[string]string
	order       []string
}

// answered forgets nonce: it has had its one answer.
func (s *sender) answered(nonce string) {
	delete(s.nonces, nonce)
	for i, n := range s.order {
		if n == nonce {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// snapshot sends inst and the rollout r (nil: none) and remembers its nonce.
func (s *sender) snapshot(inst *installation.Installation, r *rollout.Rollout) error {
	s.seq++
	nonce := strconv.FormatUint(s.seq, 10)
	t := inst.Transport()
	msg := &deciderv1.InstallationSnapshot{
		Revision:  t.Revision,
		Nonce:     nonce,
		Canonical: string(t.Canonical),
		LoadedAt:  timestamppb.New(inst.LoadedAt),
		Rollout:   rolloutloader.Snapshot(r),
	}
	if err := s.stream.Send(msg); err != nil {
		return err
	}
	s.sent, s.sentRollout = inst.Revision, rolloutID(r)
	s.nonces[nonce] = inst.Revision
	s.order = append(s.order, nonce)
	if len(s.order) > nonceWindow {
		delete(s.nonces, s.order[0])
		s.order = s.order[1:]
	}
	return nil
}
