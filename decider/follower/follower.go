// Package follower is a follower decider's side of SyncInstallation (spec
// 09): it mirrors the leader's installation into the installation store the
// service reads — validate with the leader's own code, check the revision,
// then activate, and answer ACK or NACK — persists each activation
// atomically to its state directory, starts from that state when the leader
// is unreachable, reconnects with jittered exponential backoff, and turns
// stale (the service refuses to decide) when neither a snapshot nor a
// heartbeat came for longer than --max-stale.
package follower

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutstate"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
	"github.com/dynamic-config-admission/dynamic-config/internal/textcut"
)

// Backoff is the reconnect schedule: Initial × Factor^n ± Jitter, at most Max.
type Backoff struct {
	Initial time.Duration
	Factor  float64
	Jitter  float64
	Max     time.Duration
}

// DefaultBackoff is spec 09 §2: 1 s × 1.6 ± 20 % up to 30 s.
var DefaultBackoff = Backoff{Initial: time.Second, Factor: 1.6, Jitter: 0.2, Max: 30 * time.Second}

// Delay is the wait before reconnect attempt n (0 = the first retry).
func (b Backoff) Delay(n int) time.Duration {
	d := float64(b.Initial)
	for i := 0; i < n && d < float64(b.Max); i++ {
		d *= b.Factor
	}
	d = min(d, float64(b.Max))
	d *= 1 + b.Jitter*(2*rand.Float64()-1) //nolint:gosec // jitter, not a secret
	return time.Duration(d)
}

// maxDetail bounds a NACK's error_detail.
const maxDetail = 4096

// LeaderHeartbeat is how often a leader's stream carries word when nothing
// changes (spec 09 §2: every 10 s).
const LeaderHeartbeat = 10 * time.Second

// MinMaxStale is the shortest --max-stale but 0: three of the leader's
// heartbeats, so that a follower of a healthy leader never turns stale
// between two of them — a heartbeat late on a slow link, one lost, or a
// reconnect (after MaxConnectionAge) included (issue 38: a max-stale below
// the heartbeat left a follower NOT_SERVING 4 s of every 10 s).
const MinMaxStale = 3 * LeaderHeartbeat

// CheckMaxStale validates a --max-stale: 0 (never stale) or at least
// MinMaxStale, naming the shortest it accepts.
func CheckMaxStale(d time.Duration) error {
	switch {
	case d < 0:
		return fmt.Errorf("--max-stale is %s: 0 (never) or at least %s, three of the leader's %s heartbeats", d, MinMaxStale, LeaderHeartbeat)
	case d > 0 && d < MinMaxStale:
		return fmt.Errorf("--max-stale is %s: 0 (never) or at least %s, three of the leader's %s heartbeats; a shorter one turns a follower of a healthy leader stale between two heartbeats",
			d, MinMaxStale, LeaderHeartbeat)
	}
	return nil
}

// Config configures a Follower.
type Config struct {
	// Conn reaches the leader.
	Conn grpc.ClientConnInterface
	// Leader is the target followed (--follow), for display.
	Leader string
	// ID is the follower id (--follower-id); Cluster its cluster (--cluster-name).
	ID, Cluster string
	// StateDir is where the last good snapshot is kept ("" = nowhere).
	StateDir string
	// MaxStale is --max-stale (0 = never stale).
	MaxStale time.Duration
	// Store is the installation store the service reads.
	Store *installationloader.Store
	// Observer is told about every activation and refusal as about a
	// leader's reloads (the decider metrics); nil = none.
	Observer installationloader.ReloadObserver
	// Metrics are the follower's own metrics (nil = none).
	Metrics *metrics.Follower
	Logger  *slog.Logger
	// Backoff is the reconnect schedule (zero = DefaultBackoff).
	Backoff Backoff
	// Rollouts and RolloutState are the follower's rollout (spec 10 §6): a
	// snapshot's rollout is validated with its installation and put in
	// Rollouts, RolloutState is told and its counts and halt are reported
	// to the leader. nil = the follower ignores a leader's rollouts.
	Rollouts     *rolloutloader.Store
	RolloutState *rolloutstate.State
	// ReportInterval is how often a changed rollout report is sent at most
	// (0 = 10 s); a halt is sent at once.
	ReportInterval time.Duration
	// OnChange is called when the follower's readiness may have changed (an
	// activation, turning stale or fresh): the server refreshes its health.
	OnChange func()
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// Follower follows one leader.
type Follower struct {
	cfg    Config
	client deciderv1.InstallationSyncServiceClient

	mu             sync.Mutex
	lastSync       time.Time // the last snapshot or heartbeat (or the state file's)
	leaderRevision string
	connected      bool
	lastAck        time.Time
	nack           *deciderv1.FollowerNack
	stale          bool // as last reported (checkStale); Stale() reads the clock itself
	outage         bool // the WARN of this outage was written
}

// New returns the follower of cfg.
func New(cfg Config) *Follower {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Backoff == (Backoff{}) {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Observer == nil {
		cfg.Observer = installationloader.NopObserver{}
	}
	if cfg.OnChange == nil {
		cfg.OnChange = func() {}
	}
	if cfg.ReportInterval <= 0 {
		cfg.ReportInterval = defaultReportInterval
	}
	cfg.Logger = cfg.Logger.With("decider_role", "follower", "follower", cfg.ID, "leader", cfg.Leader)
	f := &Follower{cfg: cfg}
	if cfg.Conn != nil {
		f.client = deciderv1.NewInstallationSyncServiceClient(cfg.Conn)
	}
	return f
}

// ID is the follower id.
func (f *Follower) ID() string { return f.cfg.ID }

// Start serves the state directory's snapshot, if there is a valid one
// (spec 09 §3): its age counts toward --max-stale from the file's time.
// Without one the store stays empty (NOT_SERVING) until the first snapshot.
func (f *Follower) Start() {
	if f.cfg.StateDir == "" {
		return
	}
	st, err := readState(f.cfg.StateDir, f.cfg.Now())
	if errors.Is(err, errNoState) {
		f.cfg.Logger.Info("no state yet: not serving until the first snapshot", "state_dir", f.cfg.StateDir)
		return
	}
	if err != nil {
		f.cfg.Logger.Error("state directory unusable: not serving until the first snapshot", "state_dir", f.cfg.StateDir, "error", err.Error())
		return
	}
	inst, err := installation.FromTransport(st.transport())
	if err != nil {
		f.cfg.Logger.Error("saved snapshot refused: not serving until the first snapshot", "state_dir", f.cfg.StateDir, "revision", st.Revision, "error", err.Error())
		return
	}
	f.activate(inst)
	f.startRollout(st)
	f.mu.Lock()
	f.lastSync, f.leaderRevision = st.syncedAt, st.Revision
	f.mu.Unlock()
	f.cfg.Metrics.Synced(st.syncedAt)
	f.cfg.Logger.Info("serving the saved snapshot", "revision", inst.Revision, "synced_at", st.syncedAt.UTC().Format(time.RFC3339))
	f.checkStale()
}

// activate puts inst in force.
func (f *Follower) activate(inst *installation.Installation) {
	old := f.cfg.Store.Swap(inst)
	oldRev := ""
	if old != nil {
		oldRev = old.Revision
	}
	f.cfg.Store.RecordReload(installationloader.ReloadStatus{OK: true, At: inst.LoadedAt, AttemptedRevision: inst.Revision})
	f.cfg.Observer.ReloadOK(oldRev, inst.Revision)
	f.cfg.Observer.InForce(inst)
	f.cfg.OnChange()
}

// Run follows the leader until ctx ends: one stream at a time, reconnecting
// with backoff (reset after a stream that delivered a message).
func (f *Follower) Run(ctx context.Context) {
	go f.watchStale(ctx)
	attempt := 0
	for ctx.Err() == nil {
		got, err := f.session(ctx)
		f.setConnected(false)
		if ctx.Err() != nil {
			return
		}
		if got {
			attempt = 0
		}
		f.lostLeader(err)
		delay := f.cfg.Backoff.Delay(attempt)
		attempt++
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// lostLeader logs a stream's end: WARN once per outage, then DEBUG.
func (f *Follower) lostLeader(err error) {
	f.mu.Lock()
	first := !f.outage
	f.outage = true
	f.mu.Unlock()
	msg := "leader unreachable: serving the last good installation"
	if f.cfg.Store.Current() == nil {
		msg = "leader unreachable: no installation to serve yet"
	}
	level := slog.LevelDebug
	if first {
		level = slog.LevelWarn
	}
	f.cfg.Logger.Log(context.Background(), level, msg, "error", fmt.Sprint(err), "revision", f.cfg.Store.Revision())
}

func (f *Follower) setConnected(c bool) {
	f.mu.Lock()
	changed := f.connected != c
	f.connected = c
	if c {
		f.outage = false
	}
	f.mu.Unlock()
	f.cfg.Metrics.LeaderConnected(c)
	if changed && c {
		f.cfg.Logger.Info("leader connected")
	}
}

// session runs one stream; got reports whether the leader sent anything.
func (f *Follower) session(ctx context.Context) (got bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := f.client.SyncInstallation(ctx)
	if err != nil {
		return false, err
	}
	if err := stream.Send(&deciderv1.SyncRequest{FollowerId: f.cfg.ID, Cluster: f.cfg.Cluster, KnownRevision: f.cfg.Store.Revision(), KnownRollout: f.knownRollout()}); err != nil {
		return false, recvErr(stream, err)
	}
	send := f.reportRollouts(ctx, stream)
	for {
		msg, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the leader ended the stream")
			}
			return got, err
		}
		if !got {
			got = true
			f.setConnected(true)
		}
		if msg.GetHeartbeat() {
			f.heard(msg.GetRevision())
			continue
		}
		answer := f.apply(msg)
		f.heard(msg.GetRevision())
		if err := send(answer); err != nil {
			return got, recvErr(stream, err)
		}
	}
}

// recvErr is the status of a stream whose Send failed (Send returns io.EOF;
// the reason comes with Recv).
func recvErr(stream deciderv1.InstallationSyncService_SyncInstallationClient, err error) error {
	if errors.Is(err, io.EOF) {
		if _, rerr := stream.Recv(); rerr != nil {
			return rerr
		}
	}
	return err
}

// heard records a snapshot or heartbeat from the leader announcing
// revision. It counts as fresh word only when revision is the one this
// follower serves (issue 38): a follower that refused the leader's
// revision hears heartbeats about an installation it does not enforce, and
// goes stale after --max-stale as this package promises.
func (f *Follower) heard(revision string) {
	now := f.cfg.Now()
	served := ""
	if inst := f.cfg.Store.Current(); inst != nil {
		served = inst.Revision
	}
	fresh := revision != "" && revision == served
	f.mu.Lock()
	f.leaderRevision = revision
	if fresh {
		f.lastSync = now
	}
	f.mu.Unlock()
	if fresh {
		f.cfg.Metrics.Synced(now)
		if f.cfg.StateDir != "" {
			touchState(f.cfg.StateDir, now)
		}
	}
	f.checkStale()
}

// apply validates one snapshot, activates it and says ACK, or says NACK and
// keeps the last good installation (spec 09 §2).
func (f *Follower) apply(msg *deciderv1.InstallationSnapshot) *deciderv1.SyncRequest {
	t := installation.Transport{Revision: msg.GetRevision(), Canonical: []byte(msg.GetCanonical())}
	inst, err := installation.FromTransport(t)
	r, rerr := f.rolloutOf(msg)
	if err != nil || rerr != nil {
		f.refuseRollout(msg, rerr)
		return f.refuse(msg, &refusal{installation: err, rollout: rerr})
	}
	if f.cfg.StateDir != "" {
		if err := writeState(f.cfg.StateDir, state{Revision: t.Revision, Canonical: string(t.Canonical), Leader: f.cfg.Leader, Rollout: f.savedRollout(msg)}, f.cfg.Now()); err != nil {
			// decision: the installation is valid, so it is served; a
			// restart without the leader then starts from the older state.
			f.cfg.Logger.Error("snapshot not saved", "state_dir", f.cfg.StateDir, "revision", t.Revision, "error", err.Error())
		}
	}
	if cur := f.cfg.Store.Current(); cur == nil || cur.Revision != inst.Revision {
		f.activate(inst) // a snapshot of the same revision brings another rollout only
	}
	f.activateRollout(r)
	f.mu.Lock()
	f.lastAck, f.nack = f.cfg.Now(), nil
	f.mu.Unlock()
	f.cfg.Metrics.Snapshot(metrics.SnapshotAck)
	f.cfg.Logger.Info("snapshot activated", "revision", inst.Revision)
	return &deciderv1.SyncRequest{Answer: &deciderv1.SyncRequest_Ack{Ack: &deciderv1.SyncAck{Revision: msg.GetRevision(), Nonce: msg.GetNonce()}}}
}

// refuse answers NACK for a snapshot that did not validate. The NACK's
// detail never carries a value of the snapshot (nackDetail); the problems
// in full go where a leader's reload problems go: this decider's log and
// its GetInstallation.last_reload.
func (f *Follower) refuse(msg *deciderv1.InstallationSnapshot, err error) *deciderv1.SyncRequest {
	lines := problemLines(err)
	detail := textcut.Bytes(nackDetail(err), maxDetail)
	now := f.cfg.Now()
	f.mu.Lock()
	f.nack = &deciderv1.FollowerNack{Revision: msg.GetRevision(), ErrorDetail: detail, At: timestamppb.New(now)}
	f.mu.Unlock()
	f.cfg.Store.RecordReload(installationloader.ReloadStatus{OK: false, At: now, Problems: lines, AttemptedRevision: msg.GetRevision()})
	f.cfg.Observer.ReloadRejected(len(lines))
	f.cfg.Metrics.Snapshot(metrics.SnapshotNack)
	f.cfg.Logger.Warn("snapshot refused: the last good installation stays in force", "revision", msg.GetRevision(), "serving", f.cfg.Store.Revision(),
		"problem_count", len(lines), "problems", lines)
	return &deciderv1.SyncRequest{Answer: &deciderv1.SyncRequest_Nack{Nack: &deciderv1.SyncNack{Revision: msg.GetRevision(), Nonce: msg.GetNonce(), ErrorDetail: detail}}}
}

// nackDetail is what a NACK says of a refused snapshot (issue 38): each
// problem with the value it quotes withheld (its length only, as a callers
// file's identities are), or, where the value cannot be told apart from the
// text, only where the problem is and what was expected there — a setting's
// value (an envPolicy list, a token-shaped value) would otherwise reach the
// leader's log, its GetInstallation and fleet-status. The lines of a
// canonical form that could not be read name keys and kinds only, and a
// revision mismatch its two revisions.
func nackDetail(err error) string {
	if r, ok := errors.AsType[*refusal](err); ok {
		return r.nackDetail()
	}
	var p *installation.Problems
	if !errors.As(err, &p) {
		if errors.Is(err, installation.ErrRevisionMismatch) {
			return err.Error()
		}
		return "the snapshot could not be rebuilt (the follower's log has why)"
	}
	if len(p.Items) == 0 {
		return strings.Join(p.Lines, "; ")
	}
	parts := make([]string, len(p.Items))
	for i, it := range p.Items {
		parts[i] = withheld(it)
	}
	return strings.Join(parts, "; ")
}

// withheld is the problem's line without its value.
func withheld(it installation.Problem) string {
	text := it.String()
	switch {
	case it.Value == "" && it.Expected != "":
		return text // a problem of a value's absence or shape: there is no value to quote
	case it.Value != "":
		for _, quoted := range []string{redact.Quote(it.Value), strconv.Quote(it.Value)} {
			text = strings.ReplaceAll(text, quoted, redact.Withheld(it.Value))
		}
		if !strings.Contains(text, it.Value) {
			return text
		}
	}
	where := it.Path
	if where == "" {
		where = it.Setting
	}
	if where == "" {
		where = "the canonical form"
	}
	if it.Expected != "" {
		return where + ": expected " + it.Expected
	}
	return where + ": invalid (the follower's log has the problem)"
}

// watchStale re-evaluates staleness every second until ctx ends.
func (f *Follower) watchStale(ctx context.Context) {
	if f.cfg.MaxStale <= 0 {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.checkStale()
		}
	}
}

// staleAt reports whether, at now, no snapshot or heartbeat came for longer
// than --max-stale (never with MaxStale 0, nor before the first word). The
// caller holds mu.
func (f *Follower) staleAt(now time.Time) bool {
	return f.cfg.MaxStale > 0 && !f.lastSync.IsZero() && now.Sub(f.lastSync) > f.cfg.MaxStale
}

// checkStale updates the stale flag; a change is logged, counted
// (dynamic_config_follower_stale) and reported to OnChange (the health).
// It runs where staleness changes — every word from the leader, the saved
// state at start, and the follower's own ticker (watchStale) — never on the
// decision path.
func (f *Follower) checkStale() {
	if f.cfg.MaxStale <= 0 {
		return
	}
	f.mu.Lock()
	stale := f.staleAt(f.cfg.Now())
	changed := stale != f.stale
	f.stale = stale
	last := f.lastSync
	f.mu.Unlock()
	if !changed {
		return
	}
	f.cfg.Metrics.Stale(stale)
	if stale {
		f.cfg.Logger.Error("no word from the leader for longer than --max-stale: refusing to decide (NOT_SERVING)",
			"max_stale", f.cfg.MaxStale.String(), "last_sync", last.UTC().Format(time.RFC3339))
	} else {
		f.cfg.Logger.Info("the leader is heard again: deciding")
	}
	f.cfg.OnChange()
}

// Stale reports whether the follower is past --max-stale: it then refuses
// to decide (Decide answers UNAVAILABLE) and is not ready. It reads the
// clock against the last word from the leader and writes nothing: the log
// line, the metric and the health change of a flip are checkStale's, which
// the follower's own ticker runs within a second of it.
func (f *Follower) Stale() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.staleAt(f.cfg.Now())
}

// Serving reports whether the follower holds an installation and is not
// stale (the health and /readyz condition).
func (f *Follower) Serving() bool { return f.cfg.Store.Current() != nil && !f.Stale() }

// State is the follower's own state (GetInstallationResponse.follower).
func (f *Follower) State() *deciderv1.FollowerState {
	stale := f.Stale()
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &deciderv1.FollowerState{
		FollowerId:      f.cfg.ID,
		Cluster:         f.cfg.Cluster,
		Leader:          f.cfg.Leader,
		LeaderRevision:  f.leaderRevision,
		Connected:       f.connected,
		LastNack:        f.nack,
		Stale:           stale,
		AppliedRevision: f.cfg.Store.Revision(),
	}
	if !f.lastAck.IsZero() {
		s.LastAckAt = timestamppb.New(f.lastAck)
	}
	if !f.lastSync.IsZero() {
		s.LastSeenAt = timestamppb.New(f.lastSync)
	}
	s.Rollout = f.cfg.RolloutState.Proto(false)
	return s
}
