package fleetstatus

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// fleet-status -o json (issue 40 item 9): the verdict and what it was drawn
// from, for scripts; -o table is the tables as before; the exit verdict is
// the same whichever is written.
func TestFleetStatusWritesJSONOrTables(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	leader := Replica{addr: "10.0.0.1:9090", resp: &deciderv1.GetInstallationResponse{
		Revision: "sha256:aaaa", LoadedAt: timestamppb.New(now.Add(-time.Hour)),
		LastReload: &deciderv1.ReloadStatus{Ok: true, At: timestamppb.New(now.Add(-time.Hour))},
		Followers: []*deciderv1.FollowerState{{FollowerId: "west-0", Cluster: "west", Connected: true,
			AppliedRevision: "sha256:bbbb", LastSeenAt: timestamppb.New(now.Add(-time.Hour))}},
	}}
	down := Replica{addr: "10.0.0.2:9090", err: errors.New("connection\nrefused")}

	var out bytes.Buffer
	agreed, err := Write(&out, []Replica{leader, down}, "json", time.Minute, now)
	if err != nil || agreed {
		t.Fatalf("agreed %v, err %v; want a disagreement", agreed, err)
	}
	var doc struct {
		Agreed   bool
		Verdicts []string
		Replicas []struct {
			Address, Revision, Error string
			LoadedAt                 *time.Time
			LastReload               map[string]any
		}
		Followers []struct {
			State          map[string]any
			LeaderRevision string
			Skewed         bool
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if doc.Agreed || strings.Join(doc.Verdicts, "|") != "incomplete: 1 of 2 replicas unreachable|follower skew: west-0 on another revision than the leader for longer than --skew-grace 1m0s" {
		t.Errorf("verdicts %q", doc.Verdicts)
	}
	if len(doc.Replicas) != 2 || doc.Replicas[0].Revision != "sha256:aaaa" || doc.Replicas[0].LoadedAt == nil || doc.Replicas[0].LastReload["ok"] != true ||
		doc.Replicas[1].Error != "connection refused" {
		t.Errorf("replicas %+v", doc.Replicas)
	}
	if len(doc.Followers) != 1 || !doc.Followers[0].Skewed || doc.Followers[0].State["followerId"] != "west-0" || doc.Followers[0].LeaderRevision != "sha256:aaaa" {
		t.Errorf("followers %+v", doc.Followers)
	}

	out.Reset()
	agreed, err = Write(&out, []Replica{leader, down}, "table", time.Minute, now)
	if err != nil || agreed || !strings.HasPrefix(out.String(), "REPLICA") || !strings.Contains(out.String(), "follower skew: west-0") {
		t.Errorf("agreed %v, err %v, table:\n%s", agreed, err, out.String())
	}
	if err := CheckFlags("static:///a:1", "yaml"); err == nil || err.Error() != `-o is "yaml": table or json` {
		t.Errorf("CheckFlags -o yaml: %v", err)
	}
}
