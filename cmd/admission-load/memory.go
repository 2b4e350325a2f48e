package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// memoryRow is one line of the memory and start-up table.
type memoryRow struct {
	process, setup string
	startup        time.Duration // process start to SERVING (0: not measured)
	rss, hwm       int64         // KiB, after the setup
	// anon is RssAnon (KiB): the part of rss a container's memory limit
	// cannot reclaim (the binary's mapped pages are file-backed).
	anon int64
}

// memory measures what the processes hold and how long they take to serve
// (issue 25, docs/performance.md): the decider with the seed installation,
// with 1 000 classes and with a 1 MiB installation document; the front door
// idle and after load at c=32. Start-up is from the exec to the first
// SERVING answer of the gRPC health service (decider) or 200 from /readyz
// (front door), polled every 2 ms; RSS is VmRSS a second after start-up
// (idle) or at the end of the load, with VmHWM (the peak).
func memory(ctx context.Context, o *options, dir string, clientTLS *tls.Config, stdout, stderr io.Writer) int {
	classesFile := filepath.Join(dir, "classes-1000.yaml")
	bigInstallation := filepath.Join(dir, "installation-1mib.yaml")
	if err := writeClasses(classesFile, 1000); err != nil {
		fmt.Fprintln(stderr, "admission-load:", err)
		return 2
	}
	size, err := writeBigInstallation(bigInstallation, o.installation, 1<<20)
	if err != nil {
		fmt.Fprintln(stderr, "admission-load:", err)
		return 2
	}
	var rows []memoryRow
	deciders := []struct {
		setup, installation string
		extra               []string
	}{
		{"seed installation", o.installation, nil},
		{"seed installation + 1 000 classes (--classes-file)", o.installation, []string{"--classes-file", classesFile}},
		{fmt.Sprintf("a %.2f MiB installation document", float64(size)/(1<<20)), bigInstallation, nil},
	}
	for _, d := range deciders {
		row, err := measureDecider(ctx, o, d.installation, d.extra)
		if err != nil {
			fmt.Fprintln(stderr, "admission-load:", err)
			return 2
		}
		row.setup = d.setup
		rows = append(rows, row)
	}
	fd, err := measureFrontDoor(ctx, o, clientTLS)
	if err != nil {
		fmt.Fprintln(stderr, "admission-load:", err)
		return 2
	}
	rows = append(rows, fd...)
	fmt.Fprintln(stdout, "| process | setup | start → SERVING | RSS | anonymous RSS | peak RSS |")
	fmt.Fprintln(stdout, "|---|---|--:|--:|--:|--:|")
	for _, r := range rows {
		startup := "—"
		if r.startup > 0 {
			startup = short(r.startup)
		}
		fmt.Fprintf(stdout, "| %s | %s | %s | %.1f MiB | %.1f MiB | %.1f MiB |\n", r.process, r.setup, startup,
			float64(r.rss)/1024, float64(r.anon)/1024, float64(r.hwm)/1024)
	}
	return 0
}

// measureDecider starts a decider, times it to SERVING and reads its RSS a
// second later.
func measureDecider(ctx context.Context, o *options, installation string, extra []string) (memoryRow, error) {
	d, err := startDecider(o, o.binary, installation, extra...)
	if err != nil {
		return memoryRow{}, err
	}
	defer d.stop()
	conn, err := grpc.NewClient(d.addrs["decider"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return memoryRow{}, err
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	up, err := untilReady(ctx, d, func() bool {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		r, err := hc.Check(cctx, &healthpb.HealthCheckRequest{})
		return err == nil && r.GetStatus() == healthpb.HealthCheckResponse_SERVING
	})
	if err != nil {
		return memoryRow{}, err
	}
	sleep(ctx, time.Second)
	rss, hwm, err := residentKiB(d.cmd.Process.Pid)
	return memoryRow{process: "decider", startup: up, rss: rss, hwm: hwm, anon: anonKiB(d.cmd.Process.Pid)}, err
}

// measureFrontDoor starts the two-process shape, times the front door to
// ready, reads its RSS idle, after a load cell at c=32 under the repeat mix
// (its decision cache holds one answer) and after one under the seed mix
// (every request a new question: the cache full at its default bound, issue
// 43); then the same seed cell against a front door without the cache.
func measureFrontDoor(ctx context.Context, o *options, clientTLS *tls.Config) ([]memoryRow, error) {
	t, err := startTwoProcess(o, o.binary, "--metrics-addr", "127.0.0.1:0")
	if t != nil {
		defer t.stop()
	}
	if err != nil {
		return nil, err
	}
	fd := t.children[len(t.children)-1]
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: clientTLS.Clone()}}
	defer client.CloseIdleConnections()
	up, err := untilReady(ctx, fd, func() bool {
		resp, err := client.Get(t.url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if err != nil {
		return nil, err
	}
	sleep(ctx, time.Second)
	idle, idlePeak, err := residentKiB(fd.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	rows := []memoryRow{{process: "frontdoor", setup: "idle", startup: up, rss: idle, hwm: idlePeak, anon: anonKiB(fd.cmd.Process.Pid)}}
	all, err := mixes(false)
	if err != nil {
		return nil, err
	}
	for _, m := range []*mix{all[mixRepeat], all[mixSeed]} {
		row, err := loadedFrontDoor(ctx, o, t, fd, clientTLS, m)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	off, err := startTwoProcess(o, o.binary, "--metrics-addr", "127.0.0.1:0", "--decision-cache=false")
	if off != nil {
		defer off.stop()
	}
	if err != nil {
		return nil, err
	}
	row, err := loadedFrontDoor(ctx, o, off, off.children[len(off.children)-1], clientTLS, all[mixSeed])
	if err != nil {
		return nil, err
	}
	row.setup += ", --decision-cache=false"
	return append(rows, row), nil
}

// loadedFrontDoor runs a c=32 cell of m against t and reads the front
// door's RSS and its decision cache's entries and bytes (/metrics).
func loadedFrontDoor(ctx context.Context, o *options, t *target, fd *child, clientTLS *tls.Config, m *mix) (memoryRow, error) {
	do, done := httpsCaller(t.url, clientTLS, m, 32)
	cl := closedLoop(ctx, t.name, 32, o.warmup, o.window, do, t.cpu, nil)
	done()
	if cl.errors > 0 {
		return memoryRow{}, fmt.Errorf("front door under c=32: %d errors, the first: %s", cl.errors, cl.firstError)
	}
	rss, peak, err := residentKiB(fd.cmd.Process.Pid)
	if err != nil {
		return memoryRow{}, err
	}
	entries, bytes := cacheSize(fd.addrs["metrics"])
	return memoryRow{process: "frontdoor", rss: rss, hwm: peak, anon: anonKiB(fd.cmd.Process.Pid),
		setup: fmt.Sprintf("after %s at c=32 (%.0f req/s), the %s mix: %s entries, %s MiB estimated in the decision cache",
			o.window, cl.rate(), m.name, entries, bytes)}, nil
}

// cacheSize reads the decision cache's entries and estimated MiB from the
// front door's /metrics ("?" when it cannot be read).
func cacheSize(metricsAddr string) (entries, mib string) {
	entries, mib = "?", "?"
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		return
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(raw), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		switch name {
		case "dynamic_config_decision_cache_entries":
			entries = strconv.FormatFloat(v, 'f', 0, 64)
		case "dynamic_config_decision_cache_bytes":
			mib = strconv.FormatFloat(v/(1<<20), 'f', 1, 64)
		}
	}
	return
}

// untilReady polls ready every 2 ms and returns the time from c's start to
// the first true.
func untilReady(ctx context.Context, c *child, ready func() bool) (time.Duration, error) {
	deadline := time.Now().Add(startTimeout)
	for !ready() {
		if err := c.alive(); err != nil {
			return 0, err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, fmt.Errorf("%s was not ready within %s: %s", c.name, startTimeout, c.tail.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(c.started), nil
}

// anonKiB reads RssAnon of pid from /proc/PID/status (0 when absent).
func anonKiB(pid int) int64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// residentKiB reads VmRSS and VmHWM of pid from /proc/PID/status.
func residentKiB(pid int) (rss, hwm int64, err error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/%d/status: %s: %w", pid, k, err)
		}
		if k == "VmRSS" {
			rss = n
		} else {
			hwm = n
		}
	}
	if rss == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
	}
	return rss, hwm, nil
}

// writeClasses writes n valid classes: half DynamicConfigClass spread over
// 50 namespaces, half ClusterDynamicConfigClass, each naming a store and an
// endpoint (spec 08).
func writeClasses(path string, n int) error {
	var b strings.Builder
	for i := range n {
		if i%2 == 0 {
			fmt.Fprintf(&b, "---\napiVersion: dynamic-config.rs/v1alpha1\nkind: DynamicConfigClass\nmetadata:\n  name: team-%d\n  namespace: team-ns-%d\nspec:\n  source: vault\n  endpoint: https://vault.team-ns-%d.svc:8200\n", i, i%50, i%50)
		} else {
			fmt.Fprintf(&b, "---\napiVersion: dynamic-config.rs/v1alpha1\nkind: ClusterDynamicConfigClass\nmetadata:\n  name: shared-%d\nspec:\n  source: consul\n  endpoint: http://consul-%d.infra.svc:8500\n", i, i)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeBigInstallation writes the seed installation plus a sourceAllow gate
// naming namespaces until the document holds at least size bytes: a large
// fleet's allow-list, the biggest value a real document carries. It returns
// the document's size.
func writeBigInstallation(path, seed string, size int) (int, error) {
	base, err := os.ReadFile(seed)
	if err != nil {
		return 0, err
	}
	var b strings.Builder
	b.Write(base)
	b.WriteString("\nsourceAllow: \"")
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "team-namespace-%06d: consul, vault, git", i)
	}
	b.WriteString("\"\n")
	return b.Len(), os.WriteFile(path, []byte(b.String()), 0o644)
}
