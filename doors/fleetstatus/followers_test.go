package fleetstatus

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func TestFleetStatusListsFollowers(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	const rev, old = "sha256:aaaa", "sha256:bbbb"
	leaderAt := func(loaded time.Time, fs ...*deciderv1.FollowerState) Replica {
		return Replica{addr: "10.0.0.1:9090", resp: &deciderv1.GetInstallationResponse{Revision: rev, LoadedAt: timestamppb.New(loaded), Followers: fs}}
	}
	ts := func(ago time.Duration) *timestamppb.Timestamp { return timestamppb.New(now.Add(-ago)) }
	cases := []struct {
		name   string
		r      Replica
		agreed bool
		want   []string
	}{
		{"followers on the leader's revision agree", leaderAt(now.Add(-time.Hour),
			&deciderv1.FollowerState{FollowerId: "west-0", Cluster: "west", Connected: true, AppliedRevision: rev, LastAckAt: ts(42 * time.Second), LastSeenAt: ts(time.Hour)}),
			true, []string{"west-0    west     yes        sha256:aaaa  42s ago   -", "followers in agreement: 1 followers"}},
		{"a connected follower on an old revision within the grace is not skew yet", leaderAt(now.Add(-30*time.Second),
			&deciderv1.FollowerState{FollowerId: "west-0", Cluster: "west", Connected: true, AppliedRevision: old, LastSeenAt: ts(time.Hour)}),
			true, []string{"followers in agreement"}},
		{"a connected follower on an old revision beyond the grace is skew, named", leaderAt(now.Add(-2*time.Minute),
			&deciderv1.FollowerState{FollowerId: "west-0", Cluster: "west", Connected: true, AppliedRevision: old, LastSeenAt: ts(time.Hour)}),
			false, []string{"follower skew: west-0 on another revision than the leader for longer than --skew-grace 1m0s"}},
		{"a disconnected follower on an old revision is listed, not skew", leaderAt(now.Add(-time.Hour),
			&deciderv1.FollowerState{FollowerId: "west-0", Cluster: "west", Connected: false, AppliedRevision: old, LastSeenAt: ts(time.Hour)}),
			true, []string{"west-0    west     no         sha256:bbbb  never"}},
		{"a follower whose last answer was a NACK fails the check, with its reason", leaderAt(now.Add(-time.Hour),
			&deciderv1.FollowerState{FollowerId: "west-0", Cluster: "west", Connected: true, AppliedRevision: rev, LastSeenAt: ts(time.Hour),
				LastNack: &deciderv1.FollowerNack{Revision: old, ErrorDetail: "revision mismatch: x\nmore", At: ts(5 * time.Second)}}),
			false, []string{"sha256:bbbb 5s ago: revision mismatch: x", "follower refused: west-0 answered the last snapshot with a NACK"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if agreed := WriteFollowers(&out, []Replica{c.r}, time.Minute, now); agreed != c.agreed {
				t.Errorf("agreed %v, want %v:\n%s", agreed, c.agreed, out.String())
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
