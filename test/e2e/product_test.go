package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// frontDoor is where the API server reaches one admission front door.
type frontDoor struct {
	url   string // https://127.0.0.1:<port>
	caPEM []byte // the CA that signed its serving certificate (the caBundle)
}

// testDir is a directory of the run's work dir for t's logs and files; it is
// kept when the run fails.
func testDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(theCluster.workDir, "tests", nonName.ReplaceAllString(strings.ToLower(t.Name()), "-"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeInstallation writes an installation document into t's directory and
// returns its path. The write is atomic (rename), as a ConfigMap swap is.
func writeInstallation(t *testing.T, path, document string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(document), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// served is one `dynamic-config serve` process.
type served struct {
	proc        *process
	door        frontDoor
	deciderAddr string
}

// startServe runs `dynamic-config serve --tls-generate` on loopback port 0
// with the installation document at installationPath and waits until its
// front door is ready.
func startServe(t *testing.T, installationPath string, extra ...string) *served {
	t.Helper()
	dir := testDir(t)
	tlsDir := filepath.Join(dir, "serve-tls")
	addrFile := filepath.Join(dir, "serve.addr")
	os.Remove(addrFile)
	args := append([]string{"serve",
		"--tls-generate", tlsDir,
		"--addr", "127.0.0.1:0",
		"--decider-addr", "127.0.0.1:0",
		"--addr-file", addrFile,
		"--installation", installationPath,
		"--reload-interval", "1s",
	}, extra...)
	p := mustStart(t, "serve", filepath.Join(dir, "serve.log"), nil, theCluster.product, args...)

	var addrs map[string]string
	if err := eventually("serve's --addr-file", productReadyTimeout, 100*time.Millisecond, aliveCheck(p, func() error {
		var err error
		addrs, err = readAddrFile(addrFile)
		return err
	})); err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(tlsDir, "ca.crt"))
	if err != nil {
		t.Fatalf("serve --tls-generate wrote no CA: %v", err)
	}
	s := &served{proc: p, door: frontDoor{url: addrs["frontdoor"], caPEM: caPEM}, deciderAddr: addrs["decider"]}
	if !strings.HasPrefix(s.door.url, "https://") {
		t.Fatalf("serve --tls-generate reports front door %q; want an https:// URL", s.door.url)
	}
	waitFrontDoorReady(t, p, s.door)
	return s
}

// readAddrFile parses serve's `frontdoor=<url>` / `decider=<host:port>` lines;
// it fails until both are there.
func readAddrFile(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	addrs := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			addrs[k] = v
		}
	}
	if addrs["frontdoor"] == "" || addrs["decider"] == "" {
		return nil, fmt.Errorf("%s holds %q; want frontdoor= and decider= lines", path, b)
	}
	return addrs, nil
}

func waitFrontDoorReady(t *testing.T, p *process, door frontDoor) {
	t.Helper()
	client := clientTrusting(t, door.caPEM)
	if err := eventually("front door /readyz", productReadyTimeout, 100*time.Millisecond, aliveCheck(p, func() error {
		return httpOK(client, door.url+"/readyz", "")
	})); err != nil {
		t.Fatal(err)
	}
}

// decider is one `dynamic-config decider` process on a fixed loopback port,
// so that it can be restarted at the same address.
type decider struct {
	t            *testing.T
	name         string
	addr         string
	metricsAddr  string
	installation string
	proc         *process
	starts       int
	extra        []string // more decider flags (e.g. --callers, --drain-delay)
}

func newDecider(t *testing.T, name, installationPath string) *decider {
	t.Helper()
	ports, err := reservePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	return &decider{
		t:            t,
		name:         name,
		addr:         "127.0.0.1:" + strconv.Itoa(ports[0]),
		metricsAddr:  "127.0.0.1:" + strconv.Itoa(ports[1]),
		installation: installationPath,
	}
}

// start runs the decider (plaintext gRPC on loopback) and waits for /readyz.
func (d *decider) start() {
	t := d.t
	t.Helper()
	d.starts++
	log := filepath.Join(testDir(t), fmt.Sprintf("%s-%d.log", d.name, d.starts))
	d.proc = mustStart(t, d.name, log, nil, theCluster.product, append([]string{"decider",
		"--addr", d.addr,
		"--metrics-addr", d.metricsAddr,
		"--plaintext",
		"--installation", d.installation,
		"--reload-interval", "1s",
	}, d.extra...)...)
	if err := eventually(d.name+" /readyz", productReadyTimeout, 100*time.Millisecond, aliveCheck(d.proc, func() error {
		return httpOK(http.DefaultClient, "http://"+d.metricsAddr+"/readyz", "")
	})); err != nil {
		t.Fatal(err)
	}
}

// stop ends the decider with SIGTERM and waits for it to exit.
func (d *decider) stop() {
	d.t.Helper()
	if err := d.proc.stop(40 * time.Second); err != nil {
		d.t.Fatalf("%s: %v", d.name, err)
	}
}

// kill ends the decider with SIGKILL (a crash: no drain) and waits for it.
func (d *decider) kill() {
	d.t.Helper()
	if d.proc.exited() {
		return
	}
	_ = d.proc.cmd.Process.Kill()
	<-d.proc.done
}

// startFrontdoor runs `dynamic-config frontdoor` on a loopback port with its
// own serving pair, talking plaintext gRPC to deciderAddr.
func startFrontdoor(t *testing.T, name, deciderAddr string, extra ...string) (*process, frontDoor) {
	t.Helper()
	pair := newServingPair(t, filepath.Join(testDir(t), name+"-tls"))
	return startFrontdoorWithPair(t, name, deciderAddr, pair, extra...)
}

// startFrontdoorWithPair is startFrontdoor with a given serving pair (front
// doors behind one address share one CA, as the chart's replicas do).
func startFrontdoorWithPair(t *testing.T, name, deciderAddr string, pair servingPair, extra ...string) (*process, frontDoor) {
	t.Helper()
	dir := testDir(t)
	port := freePort(t)
	args := append([]string{"frontdoor",
		"--addr", "127.0.0.1:" + strconv.Itoa(port),
		"--tls-cert", pair.certPath,
		"--tls-key", pair.keyPath,
		"--decider-target", deciderAddr,
		"--decider-plaintext",
		"--decider-timeout", "2s",
	}, extra...)
	p := mustStart(t, name, filepath.Join(dir, name+".log"), nil, theCluster.product, args...)
	door := frontDoor{url: "https://127.0.0.1:" + strconv.Itoa(port), caPEM: pair.caPEM}
	waitFrontDoorReady(t, p, door)
	return p, door
}
