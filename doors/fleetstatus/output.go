package fleetstatus

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/dynamic-config-admission/dynamic-config/internal/prose"
)

// Outputs are fleet-status's -o values; the first is the default.
var Outputs = []string{"table", "json"}

// CheckFlags refuses a missing --decider-target and an -o value
// fleet-status does not write.
func CheckFlags(target, output string) error {
	switch {
	case target == "":
		return errors.New("--decider-target is required")
	case !slices.Contains(Outputs, output):
		return fmt.Errorf("-o is %q: %s", output, prose.Join(Outputs, "or"))
	}
	return nil
}

// Write writes the replicas, the followers and their rollouts as a table
// (WriteReplicas, WriteFollowers) or as one JSON document (issue 40), and
// reports whether the fleet is in agreement: every replica answered with one
// revision, and no follower is skewed beyond grace or refused a snapshot.
func Write(w io.Writer, replicas []Replica, output string, grace time.Duration, now time.Time) (agreed bool, err error) {
	if output != "json" {
		agreed = WriteReplicas(w, replicas)
		return WriteFollowers(w, replicas, grace, now) && agreed, nil
	}
	doc := jsonReport{Replicas: []jsonReplica{}, Followers: []jsonFollower{}}
	doc.Verdicts, doc.Agreed = replicaVerdicts(replicas)
	for _, r := range replicas {
		doc.Replicas = append(doc.Replicas, replicaJSON(r))
	}
	byID, keys := followersByID(replicas)
	var skewed, nacked []string
	for _, k := range keys {
		ff := byID[k]
		f := jsonFollower{State: protoJSON(ff.state), LeaderRevision: ff.leaderRevision, Skewed: ff.skewed(grace, now)}
		if f.Skewed {
			skewed = append(skewed, ff.state.GetFollowerId())
		}
		if ff.state.GetLastNack() != nil {
			nacked = append(nacked, ff.state.GetFollowerId())
		}
		doc.Followers = append(doc.Followers, f)
	}
	if len(keys) > 0 {
		doc.Verdicts = append(doc.Verdicts, followerVerdicts(len(keys), skewed, nacked, grace)...)
		doc.Agreed = doc.Agreed && len(skewed) == 0 && len(nacked) == 0
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return false, err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return doc.Agreed, err
}

// jsonReport is -o json: the verdict first, then what it was drawn from.
type jsonReport struct {
	Agreed    bool           `json:"agreed"`
	Verdicts  []string       `json:"verdicts"`
	Replicas  []jsonReplica  `json:"replicas"`
	Followers []jsonFollower `json:"followers"`
}

// jsonReplica is one replica: its answer's summary, or why it gave none.
// lastReload and rollout are the answer's own messages (protojson).
type jsonReplica struct {
	Address    string          `json:"address"`
	Revision   string          `json:"revision,omitempty"`
	LoadedAt   *time.Time      `json:"loadedAt,omitempty"`
	Role       string          `json:"role,omitempty"`
	LastReload json.RawMessage `json:"lastReload,omitempty"`
	Rollout    json.RawMessage `json:"rollout,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// jsonFollower is one follower as a leader replica reports it.
type jsonFollower struct {
	State          json.RawMessage `json:"state"`
	LeaderRevision string          `json:"leaderRevision"`
	Skewed         bool            `json:"skewed"`
}

func replicaJSON(r Replica) jsonReplica {
	out := jsonReplica{Address: r.addr}
	if r.err != nil {
		out.Error = oneLine(r.err.Error())
		return out
	}
	out.Revision, out.Role = r.resp.GetRevision(), r.resp.GetRole().String()
	if ts := r.resp.GetLoadedAt(); ts != nil {
		t := ts.AsTime().UTC()
		out.LoadedAt = &t
	}
	if s := r.resp.GetLastReload(); s != nil {
		out.LastReload = protoJSON(s)
	}
	if s := r.resp.GetRollout(); s != nil {
		out.Rollout = protoJSON(s)
	}
	return out
}

// protoJSON is m in protojson; a message that cannot be encoded (none of
// the answer's can) is null.
func protoJSON(m proto.Message) json.RawMessage {
	b, err := protojson.Marshal(m)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}
