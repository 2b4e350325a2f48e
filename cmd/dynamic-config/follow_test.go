package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestFollowRefusals(t *testing.T) {
	doc := foundationEmptyFile(t)
	cases := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"--follow with an installation document is a usage error naming the flag", []string{"--plaintext", "--follow", "127.0.0.1:1", "--installation", doc},
			nil, "decider: --follow excludes --installation: a follower takes its installation from its leader 127.0.0.1:1"},
		{"--follow with an installation variable is a usage error naming the variable", []string{"--plaintext", "--follow", "127.0.0.1:1"},
			[]string{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS", "30"}, "decider: --follow excludes the installation variable DYNAMIC_CONFIG_AGENT_WATCH_SECONDS"},
		{"--follow with the document locator variable is a usage error naming it", []string{"--plaintext", "--follow", "127.0.0.1:1"},
			[]string{"DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE", doc}, "DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE"},
		{"--follow with a rollout document is a usage error naming both flags (spec 10 §6)", []string{"--plaintext", "--follow", "127.0.0.1:1", "--rollout", doc},
			nil, "decider: --follow excludes --rollout: a follower takes the rollout from its leader's snapshots"},
		{"a follower flag without --follow is a usage error", []string{"--plaintext", "--max-stale", "10s"},
			nil, "decider: --max-stale is a follower flag: add --follow LEADER"},
		{"a follower id that is not a DNS name is refused", []string{"--plaintext", "--follow", "127.0.0.1:1", "--follower-id", "West_1"},
			nil, `decider: --follower-id is "West_1": a lower-case DNS name`},
		{"a negative --max-stale is refused", []string{"--plaintext", "--follow", "127.0.0.1:1", "--max-stale", "-1s"},
			nil, "decider: --max-stale is -1s: 0 (never) or at least 30s, three of the leader's 10s heartbeats"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withFoundationEnv(t, nil)
			if c.env != nil {
				t.Setenv(c.env[0], c.env[1])
			}
			var stderr bytes.Buffer
			if code := deciderMain(t.Context(), c.args, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr %q, want %q", stderr.String(), c.want)
			}
		})
	}
}

// Issue 38: a --max-stale below three of the leader's 10 s heartbeats
// flapped a follower with a healthy leader (NOT_SERVING 4 s of every 10 s):
// it is a usage error naming the shortest one accepted.
func TestAMaxStaleBelowThreeHeartbeatsIsAUsageErrorNamingTheShortestAccepted(t *testing.T) {
	withFoundationEnv(t, nil)
	// Bounded: a decider that accepted the flag would run until ctx ends.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	code := deciderMain(ctx, []string{"--plaintext", "--follow", "127.0.0.1:1", "--max-stale", "10s"}, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "decider: --max-stale is 10s: 0 (never) or at least 30s, three of the leader's 10s heartbeats") {
		t.Errorf("exit %d, stderr %q; want a usage error naming 30s", code, stderr.String())
	}
}
