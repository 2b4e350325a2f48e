package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// binaryVar names the dynamic-config binary the tier runs (make chaos sets
// it); without it every test skips, so `make test` stays fast.
const binaryVar = "DYNAMIC_CONFIG_CHAOS_BINARY"

// limitVar overrides the memory cgroup's limit (bytes, or a quantity such
// as 2Gi): the figures of an earlier binary, which the chart's limit would
// kill, are measured with a larger one.
const limitVar = "DYNAMIC_CONFIG_CHAOS_MEMORY_LIMIT"

func binaryPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv(binaryVar)
	if path == "" {
		t.Skipf("%s is not set: the chaos tier runs with make chaos", binaryVar)
	}
	return path
}

// proc is one server process of the binary.
type proc struct {
	name string
	cmd  *exec.Cmd
	addr string

	mu     sync.Mutex
	tail   []string // the last lines it wrote
	exited chan struct{}
	state  *os.ProcessState
}

// start runs the binary with args (and env added), moved into cg when set,
// and waits for the line announcing its listener ("decider listening",
// "frontdoor listening").
func start(t *testing.T, name string, cg *cgroup, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binaryPath(t), args...)
	if cg != nil {
		// Into the group before it runs: every page it touches is charged there.
		cmd = exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$CHAOS_CGROUP_PROCS" && exec "$0" "$@"`, binaryPath(t)}, args...)...)
		env = append(env, "CHAOS_CGROUP_PROCS="+filepath.Join(cg.dir, "cgroup.procs"))
	}
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			var l struct {
				Msg, Addr string
			}
			if json.Unmarshal([]byte(line), &l) == nil && strings.HasSuffix(l.Msg, " listening") && l.Msg != "metrics listening" {
				select {
				case addr <- l.Addr:
				default:
				}
			}
			p.mu.Lock()
			p.tail = append(p.tail, line)
			if len(p.tail) > 20 {
				p.tail = p.tail[1:]
			}
			p.mu.Unlock()
		}
	}()
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.state = cmd.ProcessState
		p.mu.Unlock()
		_ = err
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
	})
	select {
	case p.addr = <-addr:
	case <-p.exited:
		t.Fatalf("%s exited at start: %s", name, p.lastLines())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not announce its listener: %s", name, p.lastLines())
	}
	return p
}

func (p *proc) lastLines() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.tail, "\n")
}

// alive reports whether the process still runs, and how it ended if not.
func (p *proc) alive() (bool, string) {
	select {
	case <-p.exited:
		p.mu.Lock()
		defer p.mu.Unlock()
		return false, p.state.String()
	default:
		return true, ""
	}
}

// peakRSS is the process's VmHWM in bytes (0 when unknown).
func (p *proc) peakRSS() int64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// cgroupRoot is the cgroup v1 memory hierarchy the tier creates its groups in.
const cgroupRoot = "/sys/fs/cgroup/memory"

// cgroup is a memory cgroup of this test, removed when it ends.
type cgroup struct {
	dir   string
	limit int64
}

var cgroups sync.Mutex

// newCgroup makes a memory cgroup of limit bytes, swap included; it skips
// the test, saying why, where cgroup v1 memory groups cannot be made.
func newCgroup(t *testing.T, name string, limit int64) *cgroup {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("memory cgroups are Linux's")
	}
	cgroups.Lock()
	defer cgroups.Unlock()
	dir := filepath.Join(cgroupRoot, fmt.Sprintf("dc-test-%d-%s", os.Getpid(), name))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("no memory cgroup here (cgroup v1 at %s, as root): %v", cgroupRoot, err)
	}
	cg := &cgroup{dir: dir, limit: limit}
	t.Cleanup(cg.remove)
	cg.write(t, "memory.limit_in_bytes", limit)
	if _, err := os.Stat(filepath.Join(dir, "memory.memsw.limit_in_bytes")); err == nil {
		cg.write(t, "memory.memsw.limit_in_bytes", limit) // no swap: the limit is the container's
	}
	return cg
}

func (cg *cgroup) write(t *testing.T, file string, v int64) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(cg.dir, file), []byte(strconv.FormatInt(v, 10)), 0o644); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func (cg *cgroup) read(file string) int64 {
	raw, err := os.ReadFile(filepath.Join(cg.dir, file))
	if err != nil {
		return -1
	}
	v, _ := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	return v
}

// peak is the group's peak memory use in bytes.
func (cg *cgroup) peak() int64 { return cg.read("memory.max_usage_in_bytes") }

// oomKills is how many processes the kernel killed in the group.
func (cg *cgroup) oomKills() int64 {
	raw, err := os.ReadFile(filepath.Join(cg.dir, "memory.oom_control"))
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			return n
		}
	}
	return 0
}

// remove kills what is left in the group and removes it.
func (cg *cgroup) remove() {
	raw, _ := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
	for f := range strings.FieldsSeq(string(raw)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	for range 50 {
		if os.Remove(cg.dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// chartLimit is a component's memory limit in the chart's default values
// (what the cgroup holds the process to), or limitVar's override.
func chartLimit(t *testing.T, component string) int64 {
	t.Helper()
	if v := os.Getenv(limitVar); v != "" {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			t.Fatalf("%s: %v", limitVar, err)
		}
		return q.Value()
	}
	raw, err := os.ReadFile("../../charts/dynamic-config/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]json.RawMessage
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	var c struct {
		Resources struct {
			Limits struct {
				Memory string `json:"memory"`
			} `json:"limits"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(values[component], &c); err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	q, err := resource.ParseQuantity(c.Resources.Limits.Memory)
	if err != nil {
		t.Fatalf("%s.resources.limits.memory: %v", component, err)
	}
	return q.Value()
}

// mib is n bytes in MiB, for the figures.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
