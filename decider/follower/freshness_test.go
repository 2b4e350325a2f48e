package follower_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/follower"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/leader"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func TestAMaxStaleBelowThreeHeartbeatsIsRefusedNamingTheShortestAccepted(t *testing.T) {
	cases := []struct {
		maxStale time.Duration
		want     string // "" = accepted
	}{
		{0, ""},
		{follower.MinMaxStale, ""},
		{time.Hour, ""},
		{4 * time.Second, "--max-stale is 4s: 0 (never) or at least 30s, three of the leader's 10s heartbeats"},
		{10 * time.Second, "--max-stale is 10s: 0 (never) or at least 30s"},
		{follower.MinMaxStale - time.Millisecond, "at least 30s"},
		{-time.Second, "--max-stale is -1s: 0 (never) or at least 30s, three of the leader's 10s heartbeats"},
	}
	for _, c := range cases {
		t.Run(c.maxStale.String(), func(t *testing.T) {
			err := follower.CheckMaxStale(c.maxStale)
			if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
				t.Errorf("CheckMaxStale(%s) = %v, want %q", c.maxStale, err, c.want)
			}
		})
	}
	t.Run("the heartbeat it counts on is the leader's", func(t *testing.T) {
		if follower.LeaderHeartbeat != leader.DefaultHeartbeat {
			t.Errorf("the follower counts on %s, the leader beats every %s", follower.LeaderHeartbeat, leader.DefaultHeartbeat)
		}
	})
}

// Issue 38: freshness counts only word about a revision the follower
// serves. A follower that refused the leader's revision hears heartbeats
// about an installation it does not enforce: it goes stale after
// --max-stale, as docs/followers.md promises.
func TestAFollowerThatRefusedTheLeadersRevisionGoesStaleAfterMaxStale(t *testing.T) {
	l, addr := startFake(t)
	c := &clock{t: time.Now()}
	store := installationloader.NewStore(nil)
	f := follower.New(follower.Config{Conn: dial(t, addr), ID: "west-0", Store: store, MaxStale: time.Minute, Now: c.now})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)
	next(t, l)
	good := inst(t, 50)
	l.send <- snapshot(good, "1")
	if next(t, l).GetAck() == nil {
		t.Fatal("the good snapshot was not acknowledged")
	}
	bad := &deciderv1.InstallationSnapshot{Revision: installation.Revision([]byte(`{"X":"1"}`)), Nonce: "2", Canonical: `{"X":"1"}`}
	l.send <- bad
	if next(t, l).GetNack() == nil {
		t.Fatal("the bad snapshot was not refused")
	}
	for range 3 { // the leader's heartbeats, each about the refused revision
		c.add(30 * time.Second)
		l.send <- &deciderv1.InstallationSnapshot{Revision: bad.GetRevision(), Heartbeat: true}
	}
	// The refused snapshot once more: its answer comes after every heartbeat was read.
	l.send <- &deciderv1.InstallationSnapshot{Revision: bad.GetRevision(), Nonce: "3", Canonical: bad.GetCanonical()}
	if next(t, l).GetNack() == nil {
		t.Fatal("the bad snapshot was not refused again")
	}
	if !f.Stale() {
		t.Fatalf("not stale 90 s after the last word about the revision it serves (max-stale 1m): state %v", f.State())
	}
	t.Run("a heartbeat about the revision it serves makes it fresh again", func(t *testing.T) {
		l.send <- &deciderv1.InstallationSnapshot{Revision: good.Revision, Heartbeat: true}
		deadline := time.Now().Add(5 * time.Second)
		for f.Stale() {
			if time.Now().After(deadline) {
				t.Fatal("still stale")
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	t.Run("the leader's revision is still what it announced", func(t *testing.T) {
		if got := f.State().GetLeaderRevision(); got != good.Revision {
			t.Errorf("leader revision %s", got)
		}
	})
}

// Issue 38: a NACK's detail never carries a value of the refused snapshot
// (it reaches the leader's log, GetInstallation and fleet-status); the
// follower's own last reload keeps the problem whole.
func TestANacksDetailNeverCarriesASettingsValue(t *testing.T) {
	l, addr := startFake(t)
	store := installationloader.NewStore(nil)
	f := follower.New(follower.Config{Conn: dial(t, addr), ID: "west-0", Store: store})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)
	next(t, l)
	cases := []struct{ name, canonical, secret, keep string }{
		{"an invalid value", `{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS":"s3cr3t-v4lue-0042"}`, "s3cr3t-v4lue-0042", "watch-seconds"},
		{"an invalid image", `{"DYNAMIC_CONFIG_AGENT_IMAGE":"registry.example/agent:s3cr3t tag"}`, "s3cr3t", "DYNAMIC_CONFIG_AGENT_IMAGE"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap := &deciderv1.InstallationSnapshot{Revision: installation.Revision([]byte(c.canonical)), Nonce: string(rune('a' + i)), Canonical: c.canonical}
			l.send <- snap
			n := next(t, l).GetNack()
			if n == nil {
				t.Fatal("not refused")
			}
			if strings.Contains(n.GetErrorDetail(), c.secret) || !strings.Contains(n.GetErrorDetail(), c.keep) {
				t.Errorf("NACK detail %q: want %q withheld and %q kept", n.GetErrorDetail(), c.secret, c.keep)
			}
			if lr := store.LastReload(); lr == nil || lr.OK || !strings.Contains(strings.Join(lr.Problems, "\n"), c.secret) {
				t.Errorf("the follower's own last reload lost the problem: %+v", lr)
			}
		})
	}
}
