package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// process is one child process the harness started. Its combined output goes
// to a log file; stop ends it with SIGTERM and, after a grace period, SIGKILL.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{}

	mu      sync.Mutex
	waitErr error
}

// startProcess starts bin with args; env entries are appended to the
// harness's own environment. The child dies with the test binary
// (Pdeathsig), so a crashed test leaves nothing behind.
func startProcess(name, logPath string, env []string, bin string, args ...string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, logFile: logFile, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// mustStart starts a process that t.Cleanup stops.
func mustStart(t *testing.T, name, logPath string, env []string, bin string, args ...string) *process {
	t.Helper()
	p, err := startProcess(name, logPath, env, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.stop(10 * time.Second); err != nil {
			t.Logf("%s: %v", name, err)
		}
		if t.Failed() {
			t.Logf("last lines of %s (%s):\n%s", name, p.logPath, p.logTail(40))
		}
	})
	return p
}

// pid is the operating-system process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits up to grace before SIGKILL. Stopping an ended
// process is a no-op. It reports a run-time failure other than the signal.
func (p *process) stop(grace time.Duration) error {
	if p.exited() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("did not stop within %s of SIGTERM; killed", grace)
	}
	return nil
}

// exitErr is the error the process ended with (nil while it runs).
func (p *process) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waitErr
}

// logText is the whole log so far.
func (p *process) logText() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	return string(b)
}

// logTail is the last n lines of the log.
func (p *process) logTail(n int) string {
	lines := strings.Split(strings.TrimRight(p.logText(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freePort asks the kernel for an unused loopback port. Another process can
// take it before it is used; the window is short and everything binds to
// 127.0.0.1.
func freePort(t testing.TB) int {
	t.Helper()
	ports, err := reservePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}

// reservePorts returns n distinct unused loopback ports (all held open
// together while choosing, so they differ).
func reservePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("reserve a loopback port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// eventually polls check every interval until it returns nil or timeout
// passes; it returns the last error, wrapped with what was awaited.
func eventually(what string, timeout, interval time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		if last = check(); last == nil {
			return nil
		}
		if errors.Is(last, errExited) {
			return fmt.Errorf("%s: %w", what, last)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s: %w", what, timeout, last)
		}
		time.Sleep(interval)
	}
}

// errExited is returned by readiness checks when the process already ended.
var errExited = errors.New("the process exited")

// aliveCheck wraps a readiness check so that a crashed process fails fast.
func aliveCheck(p *process, check func() error) func() error {
	return func() error {
		if p.exited() {
			return fmt.Errorf("%s: %w (%v); last lines:\n%s", p.name, errExited, p.exitErr(), p.logTail(20))
		}
		return check()
	}
}

// trimmed is b without surrounding whitespace, for messages.
func trimmed(b []byte) string { return string(bytes.TrimSpace(b)) }
