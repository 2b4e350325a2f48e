// Command admission-load measures what an admission costs, side by side
// with what it cannot cost less than, in one run on one machine (issue 11,
// docs/performance.md):
//
//   - floor: a bare TLS webhook (a child of this tool) that decodes the whole
//     AdmissionReview and answers allowed;
//   - two-process: `dynamic-config decider` + `dynamic-config frontdoor`, two
//     real processes talking gRPC over loopback (the cluster's shape);
//   - serve: `dynamic-config serve`, both in one process;
//   - grpc-floor: a no-op unary gRPC call (the health service's Check) to a
//     child, so the price of a gRPC hop on this machine is known;
//   - decide-plan: resolve.DecidePlan in this process over the corpus pods
//     that reach the decider, the resolver without any transport.
//
// floor + grpc-floor + decide-plan is the limit of the two-process shape
// (issue 25): the report gives every figure as a ratio to the floor and the
// two-process and serve CPU and p50 as ratios to that limit.
//
// Every HTTPS target is driven by the same closed-loop keep-alive generator
// at each concurrency over the same corpus (corpus.go), every answer is
// checked, and the report gives p50/p90/p99/max, req/s, errors, the CPU
// seconds per admission of the server processes (from /proc/PID/stat), and
// every figure as a ratio to the floor measured in the same run.
//
//	go run ./cmd/admission-load -binary bin/dynamic-config            # make bench-admission
//	go run ./cmd/admission-load -binary bin/dynamic-config -smoke     # a few seconds (CI)
//
// Only 127.0.0.1 and port 0 are used. The exit code is 1 when any answer was
// an error or wrong (or a target missed with -strict), 2 on usage or start-up
// failure.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/certs/certstest"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case childFloorWebhook:
			os.Exit(floorWebhook(os.Args[2:]))
		case childGRPCFloor:
			os.Exit(grpcFloor(os.Args[2:]))
		}
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the flags.
type options struct {
	binary       string
	installation string
	concurrency  []int
	warmup       time.Duration
	window       time.Duration
	logLevel     string
	profileDir   string
	smoke        bool
	strict       bool
	memory       bool
	// baseBinary, with pairs, turns the run into a comparison (compare.go).
	baseBinary string
	pairs      int
	// The serving pair every HTTPS target uses (written at start).
	certFile, keyFile string
}

// Target names, in report order.
const (
	targetFloor      = "floor"
	targetTwoProcess = "two-process"
	targetServe      = "serve"
	targetGRPCFloor  = "grpc-floor"
)

func parseOptions(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("admission-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	var conc string
	fs.StringVar(&o.binary, "binary", "bin/dynamic-config", "the dynamic-config binary to measure (make build)")
	fs.StringVar(&o.installation, "installation", "cmd/dynamic-config/default-installation.yaml", "installation for decider and serve (seed 000, what serve embeds)")
	fs.StringVar(&conc, "c", "1,8,32", "concurrencies (closed-loop workers, one keep-alive connection each)")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "unrecorded load before each cell")
	fs.DurationVar(&o.window, "duration", 4*time.Second, "recorded window of each cell")
	fs.StringVar(&o.logLevel, "log-level", "info", "--log-level of the dynamic-config processes (info is the production default)")
	fs.StringVar(&o.profileDir, "profile", "", "with --pprof on the servers, write CPU and allocation profiles of each process under load (c=8) into DIR")
	fs.BoolVar(&o.memory, "memory", false, "measure memory and start-up instead of load: decider with the seed installation, 1 000 classes, a 1 MiB document; front door idle and after c=32 (make bench-memory)")
	fs.BoolVar(&o.smoke, "smoke", false, "a few seconds in all: c=1,8, short cells; fails only on errors (CI)")
	fs.BoolVar(&o.strict, "strict", false, "exit 1 when a target (issue 11's against the floor, issue 43's for the hit path) is missed, not only on errors")
	fs.StringVar(&o.baseBinary, "base-binary", "", "compare: alternate this build of another revision with -binary, two-process only, and print the CPU-per-admission ratio new/base over -pairs (make bench-admission-compare)")
	fs.IntVar(&o.pairs, "pairs", 5, "with -base-binary: base/new pairs, each run alternating which goes first")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	concSet := false
	fs.Visit(func(f *flag.Flag) { concSet = concSet || f.Name == "c" })
	if o.memory && (o.baseBinary != "" || o.smoke) {
		return nil, fmt.Errorf("-memory excludes -base-binary and -smoke")
	}
	if o.memory && o.logLevel != "info" && o.logLevel != "debug" {
		return nil, fmt.Errorf("-memory needs -log-level info or debug (start-up is timed from the announced listeners)")
	}
	if o.baseBinary != "" {
		if o.pairs < 1 || o.pairs > 100 {
			return nil, fmt.Errorf("-pairs is %d: between 1 and 100 (5 or more for a spread worth reading)", o.pairs)
		}
		if !concSet {
			conc = "8"
		}
	}
	switch o.logLevel {
	case "debug", "info":
	case "warn", "error":
		if o.profileDir != "" {
			return nil, fmt.Errorf("-profile needs -log-level info or debug (the profiles are fetched from the metrics listeners the info lines name)")
		}
	default:
		return nil, fmt.Errorf("-log-level is %q: debug, info, warn or error", o.logLevel)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.smoke {
		conc, o.warmup, o.window = "1,8", 200*time.Millisecond, 500*time.Millisecond
	}
	for _, s := range strings.Split(conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 256 {
			return nil, fmt.Errorf("-c %q: a comma-separated list of concurrencies between 1 and 256", conc)
		}
		o.concurrency = append(o.concurrency, n)
	}
	if o.window < 100*time.Millisecond || o.window > time.Minute || o.warmup < 0 || o.warmup > time.Minute {
		return nil, fmt.Errorf("-duration is %s and -warmup %s: a window between 100ms and 1m, a warm-up up to 1m", o.window, o.warmup)
	}
	for _, f := range []string{o.binary, o.installation, o.baseBinary} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("%w (run from the repository root after make build)", err)
		}
	}
	return o, nil
}

// target is one thing measured: its processes and how to call it.
type target struct {
	name     string
	children []*child
	url      string // https://addr for the HTTPS targets
	grpcAddr string // for the gRPC floor
	local    call   // for the in-process decide-plan cell
}

func (t *target) cpu() float64 {
	if t.local != nil {
		return selfCPU()
	}
	var sum float64
	for _, c := range t.children {
		if s, err := cpuSeconds(c.cmd.Process.Pid); err == nil {
			sum += s
		}
	}
	return sum
}

func (t *target) alive() error {
	for _, c := range t.children {
		if err := c.alive(); err != nil {
			return err
		}
	}
	return nil
}

func (t *target) stop() {
	for i := len(t.children) - 1; i >= 0; i-- {
		t.children[i].stop()
	}
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	if err != nil {
		if err != flag.ErrHelp {
			fmt.Fprintln(stderr, "admission-load:", err)
		}
		return 2
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()

	dir, err := os.MkdirTemp("", "admission-load-")
	if err != nil {
		fmt.Fprintln(stderr, "admission-load:", err)
		return 2
	}
	defer os.RemoveAll(dir)
	tlsFiles, err := certstest.Write(dir, "tls", time.Hour)
	if err != nil {
		fmt.Fprintln(stderr, "admission-load: certificates:", err)
		return 2
	}
	clientTLS := &tls.Config{RootCAs: tlsFiles.Pool(), MinVersion: tls.VersionTLS12}

	fmt.Fprintf(stdout, "machine: %d CPUs, %s, %s, load average %s\n", runtime.NumCPU(), cpuModel(), runtime.Version(), loadAverage())
	fmt.Fprintf(stdout, "method: closed loop, keep-alive HTTPS/1.1, one connection per worker; the seed mix: corpus of %d pods round robin, every request a new question; "+
		"the repeat mix: one ReplicaSet's pod; the fleet mix: %d templates, Zipf s=%.1f; warm-up %s, window %s per cell\n",
		len(corpus), fleetTemplates, fleetZipfS, o.warmup, o.window)

	o.certFile, o.keyFile = tlsFiles.CertFile, tlsFiles.KeyFile
	switch {
	case o.baseBinary != "":
		return compare(ctx, o, clientTLS, stdout, stderr)
	case o.memory:
		return memory(ctx, o, dir, clientTLS, stdout, stderr)
	}
	targets, err := startTargets(o, dir)
	defer func() {
		for _, t := range targets {
			t.stop()
		}
	}()
	if err != nil {
		fmt.Fprintln(stderr, "admission-load:", err)
		return 2
	}

	floorReqs, err := requests(true)
	if err != nil {
		fmt.Fprintln(stderr, "admission-load:", err)
		return 2
	}
	reqs, err := requests(false)
	if err != nil {
		fmt.Fprintln(stderr, "admission-load:", err)
		return 2
	}
	floorSeed, seed := &mix{name: mixSeed, reqs: floorReqs}, &mix{name: mixSeed, reqs: reqs}

	var cells []*cell
	for _, c := range o.concurrency {
		for _, t := range targets {
			if ctx.Err() != nil {
				return 2
			}
			var do call
			var done func()
			var client func() float64
			switch {
			case t.local != nil:
				do, done = t.local, func() {}
			case t.grpcAddr != "":
				caller, conn, err := grpcCaller(t.grpcAddr)
				if err != nil {
					fmt.Fprintln(stderr, "admission-load:", err)
					return 2
				}
				do, done = caller, func() { conn.Close() }
				// This process is the gRPC floor's client: its CPU is the
				// calling half of a hop, which the front door pays too.
				client = selfCPU
			case t.name == targetFloor:
				do, done = httpsCaller(t.url, clientTLS, floorSeed, c)
			default:
				do, done = httpsCaller(t.url, clientTLS, seed, c)
			}
			profiles := startProfiles(o, t, c, t.name)
			cl := closedLoop(ctx, t.name, c, o.warmup, o.window, do, t.cpu, client)
			done()
			if err := profiles(); err != nil {
				fmt.Fprintln(stderr, "admission-load: profile:", err)
			}
			if err := t.alive(); err != nil {
				fmt.Fprintln(stderr, "admission-load:", err)
				cl.errors++
			}
			cells = append(cells, cl)
			fmt.Fprintf(stderr, "  %-12s c=%-3d %8.0f req/s  p50 %-8s p99 %-8s errors %d\n",
				t.name, c, cl.rate(), short(cl.quantile(0.5)), short(cl.quantile(0.99)), cl.errors)
		}
	}
	mixCells, err := runMixes(ctx, o, targets, clientTLS, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "admission-load:", err)
		return 2
	}
	fmt.Fprintf(stdout, "load average after: %s\n\n", loadAverage())
	errors := report(stdout, cells)
	reportShapeLimit(stdout, cells)
	errors += reportMixes(stdout, cells, mixCells)
	missed := checkTargets(stdout, cells)
	checkShapeTargets(stdout, cells) // retired by issue 43: shown, never a miss
	missed = checkCacheTargets(stdout, mixCells) || missed
	switch {
	case errors > 0:
		return 1
	case missed && o.strict:
		return 1
	}
	return 0
}

// startTargets starts every target's processes.
func startTargets(o *options, dir string) ([]*target, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var out []*target
	floor, err := startChild("floor webhook", self, []string{childFloorWebhook, o.certFile, o.keyFile}, []string{"listen"}, floorAnnounce)
	if err != nil {
		return out, err
	}
	out = append(out, &target{name: targetFloor, children: []*child{floor}, url: "https://" + floor.addrs["listen"]})

	two, err := startTwoProcess(o, o.binary)
	if two != nil {
		out = append(out, two)
	}
	if err != nil {
		return out, err
	}

	// serve logs where it listens only at info and debug; at warn and error
	// the address comes from --addr-file.
	quiet := o.logLevel != "info" && o.logLevel != "debug"
	serveArgs := []string{"serve", "--addr", "127.0.0.1:0", "--decider-addr", "127.0.0.1:0",
		"--tls-cert", o.certFile, "--tls-key", o.keyFile, "--installation", o.installation,
		"--log-format", "json", "--log-level", o.logLevel}
	want := []string{"listen"}
	if o.profileDir != "" {
		serveArgs = append(serveArgs, "--metrics-addr", "127.0.0.1:0", "--pprof")
		want = append(want, "metrics")
	}
	var serve *child
	if quiet {
		file := filepath.Join(dir, "serve.addr")
		serve, err = startChildPolled("serve", o.binary, append(serveArgs, "--addr-file", file), addrFile(file))
	} else {
		serve, err = startChild("serve", o.binary, serveArgs, want, jsonAnnounce)
	}
	if err != nil {
		return out, err
	}
	out = append(out, &target{name: targetServe, children: []*child{serve}, url: "https://" + serve.addrs["listen"]})

	gf, err := startChild("gRPC floor", self, []string{childGRPCFloor}, []string{"listen"}, floorAnnounce)
	if err != nil {
		return out, err
	}
	out = append(out, &target{name: targetGRPCFloor, children: []*child{gf}, grpcAddr: gf.addrs["listen"]})

	plan, err := decidePlanCaller(o.installation)
	if err != nil {
		return out, err
	}
	out = append(out, &target{name: targetDecidePlan, local: plan})
	return out, nil
}

// startTwoProcess starts `binary decider` and `binary frontdoor` talking
// gRPC over loopback: the cluster's shape, the front door with the extra
// flags (a --metrics-addr among them is waited for). On error the target
// holds the children already started (stop them).
func startTwoProcess(o *options, binary string, frontdoorExtra ...string) (*target, error) {
	common := []string{"--log-format", "json", "--log-level", o.logLevel}
	quiet := o.logLevel != "info" && o.logLevel != "debug"
	decider, err := startDecider(o, binary, o.installation)
	if err != nil {
		return nil, err
	}
	two := &target{name: targetTwoProcess, children: []*child{decider}}
	frontdoorArgs := append([]string{"frontdoor", "--addr", "127.0.0.1:0", "--tls-cert", o.certFile, "--tls-key", o.keyFile,
		"--decider-target", decider.addrs["decider"], "--decider-plaintext"}, common...)
	want := []string{"listen"}
	if o.profileDir != "" {
		frontdoorArgs = append(frontdoorArgs, "--metrics-addr", "127.0.0.1:0", "--pprof")
		want = append(want, "metrics")
	} else if slices.Contains(frontdoorExtra, "--metrics-addr") {
		want = append(want, "metrics")
	}
	frontdoorArgs = append(frontdoorArgs, frontdoorExtra...)
	var frontdoor *child
	if quiet {
		frontdoor, err = startChildPolled("frontdoor", binary, frontdoorArgs, soleListener("listen"))
	} else {
		frontdoor, err = startChild("frontdoor", binary, frontdoorArgs, want, jsonAnnounce)
	}
	if err != nil {
		return two, err
	}
	two.children = append(two.children, frontdoor)
	two.url = "https://" + frontdoor.addrs["listen"]
	return two, nil
}

// startDecider starts `binary decider` in plaintext on loopback with the
// installation document and extra flags. At warn and error the decider does
// not log where it listens: it then runs without a metrics listener and the
// address is read from /proc (the sole listener).
func startDecider(o *options, binary, installation string, extra ...string) (*child, error) {
	args := append([]string{"decider", "--addr", "127.0.0.1:0", "--plaintext", "--installation", installation,
		"--log-format", "json", "--log-level", o.logLevel}, extra...)
	if o.logLevel != "info" && o.logLevel != "debug" {
		return startChildPolled("decider", binary, append(args, "--metrics-addr", ""), soleListener("decider"))
	}
	args = append(args, "--metrics-addr", "127.0.0.1:0")
	if o.profileDir != "" {
		args = append(args, "--pprof")
	}
	return startChild("decider", binary, args, []string{"decider", "metrics"}, jsonAnnounce)
}

// startProfiles fetches a CPU profile of each of t's processes while the
// cell runs (at c=8 only, with -profile), and returns a function that waits
// for them and then writes the allocation profiles, named after label.
func startProfiles(o *options, t *target, c int, label string) func() error {
	if o.profileDir == "" || c != 8 || (t.name != targetTwoProcess && t.name != targetServe) {
		return func() error { return nil }
	}
	seconds := max(int((o.warmup+o.window)/time.Second)-1, 1)
	var wg sync.WaitGroup
	errs := make(chan error, len(t.children)*2)
	fetch := func(ch *child, kind, query string) {
		addr := ch.addrs["metrics"]
		name := filepath.Join(o.profileDir, fmt.Sprintf("%s-%s-%s.pb.gz", label, strings.ReplaceAll(ch.name, " ", "-"), kind))
		resp, err := http.Get("http://" + addr + "/debug/pprof/" + query)
		if err != nil {
			errs <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			errs <- fmt.Errorf("%s: HTTP %d", name, resp.StatusCode)
			return
		}
		f, err := os.Create(name)
		if err != nil {
			errs <- err
			return
		}
		defer f.Close()
		if _, err := io.Copy(f, resp.Body); err != nil {
			errs <- err
		}
	}
	if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
		return func() error { return err }
	}
	for _, ch := range t.children {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fetch(ch, "cpu", "profile?seconds="+strconv.Itoa(seconds))
		}()
	}
	return func() error {
		wg.Wait()
		for _, ch := range t.children {
			fetch(ch, "allocs", "allocs")
		}
		close(errs)
		return <-errs
	}
}

func cpuModel() string {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
