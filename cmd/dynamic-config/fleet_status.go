package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/textcut"
)

// fleetStatusFlags are the flags of `dynamic-config fleet-status` (issue
// 12). The decider connection flags and variables are the front door's, so
// the command runs unchanged inside a front door container.
type fleetStatusFlags struct {
	global        globalFlags
	deciderTarget string
	decider       deciderClientFlags
	timeout       time.Duration
	skewGrace     time.Duration
}

func (f *fleetStatusFlags) register(fs *flagSet) {
	f.global.register(fs, "text")
	fs.stringVar(&f.deciderTarget, "decider-target", "DYNAMIC_CONFIG_DECIDER_TARGET", "", "the deciders: dns:///name:port (every address the name resolves to) or static:///host:port,host:port (required)")
	f.decider.register(fs, "decider", "DYNAMIC_CONFIG_DECIDER_", "the deciders", "the dns:/// name")
	fs.durationVar(&f.timeout, "timeout", "", 5*time.Second, "bound for resolving and for each replica's answer")
	fs.durationVar(&f.skewGrace, "skew-grace", "", 60*time.Second, "a connected follower on another revision than its leader for longer than this is skew (spec 09 §4)")
}

// runFleetStatus is `dynamic-config fleet-status`: one line per decider
// replica (revision, loaded-at, last reload), exit 1 on revision skew or an
// unreachable replica.
func runFleetStatus(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return fleetStatusMain(ctx, args, stdout, stderr)
}

func fleetStatusMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fleet-status", stderr)
	var f fleetStatusFlags
	f.register(fs)
	if _, code, done := parseArgs(fs, &f.global, args, stderr); done {
		return code
	}
	if f.deciderTarget == "" {
		fmt.Fprintln(stderr, "fleet-status: --decider-target is required")
		return exitUsage
	}
	if !allPositive(stderr, "fleet-status", durationFlag("timeout", f.timeout), durationFlag("skew-grace", f.skewGrace)) {
		return exitUsage
	}
	resolveCtx, cancel := context.WithTimeout(ctx, f.timeout)
	addrs, name, err := fleetAddresses(resolveCtx, f.deciderTarget)
	cancel()
	if err != nil {
		fmt.Fprintln(stderr, "fleet-status: "+err.Error())
		return exitUsage
	}
	decider := f.decider
	if decider.serverName == "" {
		decider.serverName = name
	}

	replicas := make([]replicaStatus, len(addrs))
	done := make(chan struct{})
	for i, addr := range addrs {
		go func() {
			defer func() { done <- struct{}{} }()
			replicas[i] = askReplica(ctx, addr, decider.config("passthrough:///"+addr), f.timeout)
		}()
	}
	for range addrs {
		<-done
	}
	code := printFleet(stdout, replicas)
	if followers := printFollowers(stdout, replicas, f.skewGrace, time.Now()); followers != exitOK {
		code = followers
	}
	return code
}

// replicaStatus is what one decider replica said, or why it said nothing.
type replicaStatus struct {
	addr string
	resp *deciderv1.GetInstallationResponse
	err  error
}

func askReplica(ctx context.Context, addr string, cfg client.Config, timeout time.Duration) replicaStatus {
	c, err := client.New(cfg)
	if err != nil {
		return replicaStatus{addr: addr, err: err}
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := c.GetInstallation(ctx, &deciderv1.GetInstallationRequest{})
	return replicaStatus{addr: addr, resp: resp, err: err}
}

// printFleet prints the table and the verdict, and returns the exit code:
// 0 when every replica answered with one revision, 1 otherwise.
func printFleet(w io.Writer, replicas []replicaStatus) int {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REPLICA\tREVISION\tLOADED-AT\tLAST RELOAD")
	revisions := map[string]int{}
	unreachable := 0
	for _, r := range replicas {
		if r.err != nil {
			unreachable++
			fmt.Fprintf(tw, "%s\t-\t-\tunreachable: %s\n", r.addr, oneLine(r.err.Error()))
			continue
		}
		revisions[r.resp.GetRevision()]++
		loaded := "-"
		if ts := r.resp.GetLoadedAt(); ts != nil {
			loaded = ts.AsTime().UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.addr, r.resp.GetRevision(), loaded, reloadText(r.resp.GetLastReload()))
	}
	tw.Flush()

	if len(revisions) <= 1 && unreachable == 0 {
		fmt.Fprintf(w, "in agreement: %d replicas on one revision\n", len(replicas))
		return exitOK
	}
	if len(revisions) > 1 {
		names := make([]string, 0, len(revisions))
		for rev, n := range revisions {
			names = append(names, fmt.Sprintf("%s on %d", rev, n))
		}
		sort.Strings(names)
		fmt.Fprintf(w, "skew: %d replicas answered with %d revisions (%s)\n", len(replicas)-unreachable, len(revisions), strings.Join(names, "; "))
	}
	if unreachable > 0 {
		fmt.Fprintf(w, "incomplete: %d of %d replicas unreachable\n", unreachable, len(replicas))
	}
	return exitRefused
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

// fleetAddresses lists the replicas a target names, and the name to verify
// TLS against: dns:///name:port (or name:port) resolves name to every
// address, static:///a:p,b:p lists them.
func fleetAddresses(ctx context.Context, target string) (addrs []string, serverName string, err error) {
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

// fleetFollower is one follower as a leader replica reports it.
type fleetFollower struct {
	state          *deciderv1.FollowerState
	leaderRevision string
	leaderLoaded   time.Time
}

// printFollowers prints the followers the leader replicas hold (spec 09
// §4) and returns exit 1 when a connected follower is on another revision
// than its leader replica for longer than grace, or its last answer was a
// NACK; 0 otherwise (also with no followers: the table is not printed).
func printFollowers(w io.Writer, replicas []replicaStatus, grace time.Duration, now time.Time) int {
	// A follower streams from one replica at a time; after a reconnect the
	// others remember it disconnected for a while: the connected (else the
	// latest) report wins.
	byID := map[string]fleetFollower{}
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
				byID[k] = fleetFollower{state: fs, leaderRevision: r.resp.GetRevision(), leaderLoaded: r.resp.GetLoadedAt().AsTime()}
			}
		}
	}
	if len(byID) == 0 {
		return exitOK
	}
	keys := make([]string, 0, len(byID))
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
		if s.GetConnected() && s.GetAppliedRevision() != ff.leaderRevision {
			// The follower should have caught up since the later of the
			// leader's revision going in force and its stream opening.
			since := ff.leaderLoaded
			if seen := s.GetLastSeenAt().AsTime(); seen.After(since) {
				since = seen
			}
			if now.Sub(since) > grace {
				skewed = append(skewed, s.GetFollowerId())
			}
		}
	}
	tw.Flush()
	if len(skewed) == 0 && len(nacked) == 0 {
		fmt.Fprintf(w, "followers in agreement: %d followers, none on another revision beyond %s, no NACK\n", len(byID), grace)
		return exitOK
	}
	if len(skewed) > 0 {
		fmt.Fprintf(w, "follower skew: %s on another revision than the leader for longer than --skew-grace %s\n", strings.Join(skewed, ", "), grace)
	}
	if len(nacked) > 0 {
		fmt.Fprintf(w, "follower refused: %s answered the last snapshot with a NACK\n", strings.Join(nacked, ", "))
	}
	return exitRefused
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
