// Package fleetstatus is fleet-status's work (issue 12, spec 09 §4): the
// decider replicas a target names, what each says of its installation, and
// the verdicts — one revision across the replicas (WriteReplicas), and every
// follower caught up with no NACK (WriteFollowers).
package fleetstatus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/textcut"
)

// Replica is what one decider replica said, or why it said nothing.
type Replica struct {
	addr string
	resp *deciderv1.GetInstallationResponse
	err  error
}

// Ask asks the replica at addr for its installation, within timeout.
func Ask(ctx context.Context, addr string, cfg client.Config, timeout time.Duration) Replica {
	c, err := client.New(cfg)
	if err != nil {
		return Replica{addr: addr, err: err}
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := c.GetInstallation(ctx, &deciderv1.GetInstallationRequest{})
	return Replica{addr: addr, resp: resp, err: err}
}

// AskAll asks every replica at once (Ask), each over the client
// configuration config gives for its address, and returns their answers
// in the order of addrs.
func AskAll(ctx context.Context, addrs []string, config func(addr string) client.Config, timeout time.Duration) []Replica {
	replicas := make([]Replica, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() { replicas[i] = Ask(ctx, addr, config(addr), timeout) })
	}
	wg.Wait()
	return replicas
}

// WriteReplicas prints the table and the verdict, and reports whether
// every replica answered, with one revision.
func WriteReplicas(w io.Writer, replicas []Replica) (agreed bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REPLICA\tREVISION\tLOADED-AT\tLAST RELOAD")
	for _, r := range replicas {
		if r.err != nil {
			fmt.Fprintf(tw, "%s\t-\t-\tunreachable: %s\n", r.addr, oneLine(r.err.Error()))
			continue
		}
		loaded := "-"
		if ts := r.resp.GetLoadedAt(); ts != nil {
			loaded = ts.AsTime().UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.addr, r.resp.GetRevision(), loaded, reloadText(r.resp.GetLastReload()))
	}
	tw.Flush()

	verdicts, agreed := replicaVerdicts(replicas)
	for _, v := range verdicts {
		fmt.Fprintln(w, v)
	}
	return agreed
}

// replicaVerdicts are WriteReplicas' verdict lines: one revision across
// every replica, or the skew and the unreachable ones.
func replicaVerdicts(replicas []Replica) (lines []string, agreed bool) {
	revisions := map[string]int{}
	unreachable := 0
	for _, r := range replicas {
		if r.err != nil {
			unreachable++
		} else {
			revisions[r.resp.GetRevision()]++
		}
	}
	if len(revisions) <= 1 && unreachable == 0 {
		return []string{fmt.Sprintf("in agreement: %d replicas on one revision", len(replicas))}, true
	}
	if len(revisions) > 1 {
		names := make([]string, 0, len(revisions))
		for rev, n := range revisions {
			names = append(names, fmt.Sprintf("%s on %d", rev, n))
		}
		sort.Strings(names)
		lines = append(lines, fmt.Sprintf("skew: %d replicas answered with %d revisions (%s)", len(replicas)-unreachable, len(revisions), strings.Join(names, "; ")))
	}
	if unreachable > 0 {
		lines = append(lines, fmt.Sprintf("incomplete: %d of %d replicas unreachable", unreachable, len(replicas)))
	}
	return lines, false
}

func reloadText(s *deciderv1.ReloadStatus) string {
	if s == nil {
		return "none yet"
	}
	at := "-"
	if s.GetAt() != nil {
		at = s.GetAt().AsTime().UTC().Format(time.RFC3339)
	}
	if s.GetOk() {
		return "ok at " + at
	}
	return fmt.Sprintf("failed at %s: %d problems in %s", at, len(s.GetProblems()), s.GetAttemptedRevision())
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Addresses lists the replicas a target names, and the name to verify
// TLS against: dns:///name:port (or name:port) resolves name to every
// address, static:///a:p,b:p lists them.
func Addresses(ctx context.Context, target string) (addrs []string, serverName string, err error) {
	if rest, ok := strings.CutPrefix(target, client.StaticScheme+":///"); ok {
		addrs, err := client.StaticAddresses(rest)
		return addrs, "", err
	}
	hostPort := target
	if scheme, rest, ok := strings.Cut(target, "://"); ok {
		if scheme != "dns" {
			return nil, "", fmt.Errorf("--decider-target %q: the scheme %q is not one of dns:/// and static:///", target, scheme)
		}
		authority, endpoint, _ := strings.Cut(rest, "/")
		if authority != "" {
			return nil, "", fmt.Errorf("--decider-target %q: a DNS server in the target is not supported; write dns:///name:port", target)
		}
		hostPort = endpoint
	}
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil || host == "" || port == "" {
		return nil, "", fmt.Errorf("--decider-target %q: want dns:///name:port or static:///host:port,host:port", target)
	}
	if net.ParseIP(host) != nil {
		return []string{net.JoinHostPort(host, port)}, "", nil
	}
	ips, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return nil, "", fmt.Errorf("--decider-target %q: resolve %s: %w", target, host, err)
	}
	if len(ips) == 0 {
		return nil, "", errors.New("--decider-target " + target + ": " + host + " resolves to no address")
	}
	sort.Strings(ips)
	for _, ip := range ips {
		addrs = append(addrs, net.JoinHostPort(ip, port))
	}
	return addrs, host, nil
}

// follower is one follower as a leader replica reports it.
type follower struct {
	state          *deciderv1.FollowerState
	leaderRevision string
	leaderLoaded   time.Time
}

// WriteFollowers prints the followers the leader replicas hold (spec 09
// §4) and reports false when a connected follower is on another revision
// than its leader replica for longer than grace, or its last answer was a
// NACK; true otherwise (also with no followers: the table is not printed).
// The rollout of every replica and follower follows (WriteRollouts).
func WriteFollowers(w io.Writer, replicas []Replica, grace time.Duration, now time.Time) (agreed bool) {
	agreed = writeFollowers(w, replicas, grace, now)
	WriteRollouts(w, replicas, now)
	return agreed
}

// followersByID are the followers the replicas report, each once: a
// follower streams from one replica at a time; after a reconnect the others
// remember it disconnected for a while, so the connected (else the latest)
// report wins. keys are sorted by follower id, then caller.
func followersByID(replicas []Replica) (byID map[string]follower, keys []string) {
	byID = map[string]follower{}
	for _, r := range replicas {
		if r.err != nil {
			continue
		}
		for _, fs := range r.resp.GetFollowers() {
			k := fs.GetCaller() + "/" + fs.GetFollowerId()
			cur, seen := byID[k]
			newer := !seen || (fs.GetConnected() && !cur.state.GetConnected()) ||
				(fs.GetConnected() == cur.state.GetConnected() && fs.GetLastSeenAt().AsTime().After(cur.state.GetLastSeenAt().AsTime()))
			if newer {
				byID[k] = follower{state: fs, leaderRevision: r.resp.GetRevision(), leaderLoaded: r.resp.GetLoadedAt().AsTime()}
			}
		}
	}
	keys = make([]string, 0, len(byID))
	for k := range byID {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := byID[keys[i]].state, byID[keys[j]].state
		if a.GetFollowerId() != b.GetFollowerId() {
			return a.GetFollowerId() < b.GetFollowerId()
		}
		return a.GetCaller() < b.GetCaller()
	})
	return byID, keys
}

func writeFollowers(w io.Writer, replicas []Replica, grace time.Duration, now time.Time) (agreed bool) {
	byID, keys := followersByID(replicas)
	if len(byID) == 0 {
		return true
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FOLLOWER\tCLUSTER\tCONNECTED\tREVISION\tLAST ACK\tLAST NACK")
	var skewed, nacked []string
	for _, k := range keys {
		ff := byID[k]
		s := ff.state
		ack := "never"
		if ts := s.GetLastAckAt(); ts != nil {
			ack = ageText(now.Sub(ts.AsTime())) + " ago"
		}
		nack := "-"
		if n := s.GetLastNack(); n != nil {
			nack = fmt.Sprintf("%s %s ago: %s", n.GetRevision(), ageText(now.Sub(n.GetAt().AsTime())), textcutLine(n.GetErrorDetail(), 120))
			nacked = append(nacked, s.GetFollowerId())
		}
		connected := "no"
		if s.GetConnected() {
			connected = "yes"
		}
		rev := s.GetAppliedRevision()
		if rev == "" {
			rev = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.GetFollowerId(), s.GetCluster(), connected, rev, ack, nack)
		if ff.skewed(grace, now) {
			skewed = append(skewed, s.GetFollowerId())
		}
	}
	tw.Flush()
	verdicts := followerVerdicts(len(byID), skewed, nacked, grace)
	for _, v := range verdicts {
		fmt.Fprintln(w, v)
	}
	return len(skewed) == 0 && len(nacked) == 0
}

// skewed reports whether a connected follower is on another revision than
// its leader replica for longer than grace: it should have caught up since
// the later of the leader's revision going in force and its stream opening.
func (ff follower) skewed(grace time.Duration, now time.Time) bool {
	s := ff.state
	if !s.GetConnected() || s.GetAppliedRevision() == ff.leaderRevision {
		return false
	}
	since := ff.leaderLoaded
	if seen := s.GetLastSeenAt().AsTime(); seen.After(since) {
		since = seen
	}
	return now.Sub(since) > grace
}

// followerVerdicts are writeFollowers' verdict lines.
func followerVerdicts(n int, skewed, nacked []string, grace time.Duration) []string {
	if len(skewed) == 0 && len(nacked) == 0 {
		return []string{fmt.Sprintf("followers in agreement: %d followers, none on another revision beyond %s, no NACK", n, grace)}
	}
	var lines []string
	if len(skewed) > 0 {
		lines = append(lines, fmt.Sprintf("follower skew: %s on another revision than the leader for longer than --skew-grace %s", strings.Join(skewed, ", "), grace))
	}
	if len(nacked) > 0 {
		lines = append(lines, fmt.Sprintf("follower refused: %s answered the last snapshot with a NACK", strings.Join(nacked, ", ")))
	}
	return lines
}

// ageText is a duration rounded for a table: 42s, 5m3s, 2h4m.
func ageText(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Hour {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// textcutLine is the first line of s, cut to n bytes.
func textcutLine(s string, n int) string {
	line, _, _ := strings.Cut(s, "\n")
	if cut := textcut.Bytes(line, n); cut != line {
		return cut + "…"
	}
	return line
}
