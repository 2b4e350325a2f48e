package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// startTimeout bounds how long a child may take to say where it listens.
const startTimeout = 20 * time.Second

// child is one server process of a target.
type child struct {
	name string
	cmd  *exec.Cmd
	tail *tailBuffer
	// addrs are the addresses the child announced, by what ("listen",
	// "metrics").
	addrs  map[string]string
	exited chan struct{}
	// started is when the process was started (start-up times).
	started time.Time
}

// tailBuffer keeps the last bytes a child wrote (for error reports) and
// drops the rest: the children log a line per admission at info.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 8 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// announce finds a listening address in one output line: the floors'
// "listening ADDR", the dynamic-config JSON log lines "decider listening",
// "frontdoor listening", "metrics listening" and serve's "serving".
type announce func(line string) (what, addr string)

// startChild starts path with args and waits until every address in want
// was announced.
func startChild(name, path string, args []string, want []string, parse announce) (*child, error) {
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the tool
	cmd.Env = childEnv()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	c := &child{name: name, cmd: cmd, tail: &tailBuffer{}, addrs: map[string]string{}, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c.started = time.Now()
	found := make(chan struct{})
	var mu sync.Mutex
	go func() {
		r := bufio.NewReader(out)
		pending := len(want)
		for pending > 0 {
			line, err := r.ReadString('\n')
			_, _ = c.tail.Write([]byte(line)) // the tail is a bounded in-memory buffer
			if what, addr := parse(line); what != "" {
				mu.Lock()
				if _, seen := c.addrs[what]; !seen {
					c.addrs[what] = addr
					for _, w := range want {
						if w == what {
							pending--
						}
					}
				}
				mu.Unlock()
			}
			if err != nil {
				return
			}
		}
		close(found)
		_, _ = io.Copy(c.tail, r) // until the process closes its output
	}()
	go func() {
		_ = cmd.Wait() // how it ended shows in its tail; exited is what matters
		close(c.exited)
	}()
	select {
	case <-found:
		return c, nil
	case <-c.exited:
		return nil, fmt.Errorf("%s exited before it listened: %s", name, c.tail.String())
	case <-time.After(startTimeout):
		c.stop()
		return nil, fmt.Errorf("%s did not listen within %s: %s", name, startTimeout, c.tail.String())
	}
}

// childEnv is the tool's environment without DYNAMIC_CONFIG_* variables, so
// that every target runs with its flags alone.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DYNAMIC_CONFIG_") {
			env = append(env, kv)
		}
	}
	return env
}

// startChildPolled starts path with args and polls find (every 20 ms)
// until it names the child's addresses: for children that log nothing at
// info (-log-level warn or error).
func startChildPolled(name, path string, args []string, find func(pid int) (map[string]string, bool)) (*child, error) {
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Env = childEnv()
	c := &child{name: name, cmd: cmd, tail: &tailBuffer{}, addrs: map[string]string{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = c.tail, c.tail
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c.started = time.Now()
	go func() {
		_ = cmd.Wait() // how it ended shows in its tail; exited is what matters
		close(c.exited)
	}()
	deadline := time.After(startTimeout)
	for {
		if addrs, ok := find(cmd.Process.Pid); ok {
			c.addrs = addrs
			return c, nil
		}
		select {
		case <-c.exited:
			return nil, fmt.Errorf("%s exited before it listened: %s", name, c.tail.String())
		case <-deadline:
			c.stop()
			return nil, fmt.Errorf("%s did not listen within %s: %s", name, startTimeout, c.tail.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// soleListener finds the one IPv4 TCP socket pid listens on, from
// /proc/PID/fd and /proc/net/tcp, and names it key.
func soleListener(key string) func(pid int) (map[string]string, bool) {
	return func(pid int) (map[string]string, bool) {
		fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
		if err != nil {
			return nil, false
		}
		inodes := map[string]bool{}
		for _, fd := range fds {
			link, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name())
			if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
				inodes[strings.TrimSuffix(inode, "]")] = true
			}
		}
		table, err := os.ReadFile("/proc/net/tcp")
		if err != nil {
			return nil, false
		}
		var found []string
		for _, line := range strings.Split(string(table), "\n")[1:] {
			f := strings.Fields(line)
			// sl local_address rem_address st … inode (field 10)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
				continue
			}
			hostHex, portHex, ok := strings.Cut(f[1], ":")
			host, err1 := strconv.ParseUint(hostHex, 16, 32)
			port, err2 := strconv.ParseUint(portHex, 16, 16)
			if !ok || err1 != nil || err2 != nil {
				continue
			}
			// The address is little-endian on the architectures Go runs this on.
			found = append(found, fmt.Sprintf("%d.%d.%d.%d:%d", host&0xff, host>>8&0xff, host>>16&0xff, host>>24, port))
		}
		if len(found) != 1 {
			return nil, false
		}
		return map[string]string{key: found[0]}, true
	}
}

// addrFile reads serve's --addr-file (frontdoor=<url>, decider=<addr>).
func addrFile(path string) func(int) (map[string]string, bool) {
	return func(int) (map[string]string, bool) {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, false
		}
		out := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				out[k] = v
			}
		}
		front, ok := out["frontdoor"]
		if !ok {
			return nil, false
		}
		return map[string]string{"listen": strings.TrimPrefix(front, "https://")}, true
	}
}

// stop sends SIGTERM and kills the child when it has not exited in 5s.
func (c *child) stop() {
	if c == nil || c.cmd.Process == nil {
		return
	}
	select {
	case <-c.exited:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM) // an exited process is the goal either way
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

// alive reports an error when the child has exited.
func (c *child) alive() error {
	select {
	case <-c.exited:
		return fmt.Errorf("%s exited: %s", c.name, c.tail.String())
	default:
		return nil
	}
}

// floorAnnounce reads a floor child's "listening ADDR".
func floorAnnounce(line string) (string, string) {
	if addr, ok := strings.CutPrefix(strings.TrimSpace(line), listeningPrefix); ok {
		return "listen", addr
	}
	return "", ""
}

// jsonAnnounce reads the dynamic-config JSON log lines that name a listener.
func jsonAnnounce(line string) (string, string) {
	var l struct {
		Msg       string `json:"msg"`
		Addr      string `json:"addr"`
		Frontdoor string `json:"frontdoor"`
		Decider   string `json:"decider"`
	}
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &l) != nil {
		return "", ""
	}
	switch l.Msg {
	case "decider listening":
		return "decider", l.Addr
	case "frontdoor listening":
		return "listen", l.Addr
	case "metrics listening":
		return "metrics", l.Addr
	case "serving":
		return "listen", strings.TrimPrefix(l.Frontdoor, "https://")
	}
	return "", ""
}

// cpuSeconds is the user+system CPU time a process has used, from
// /proc/PID/stat (fields 14 and 15, in clock ticks).
func cpuSeconds(pid int) (float64, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		return 0, errors.New("unexpected /proc stat format")
	}
	fields := strings.Fields(string(raw[end+1:]))
	// fields[0] is field 3 (state); utime is field 14, stime field 15.
	if len(fields) < 13 {
		return 0, errors.New("unexpected /proc stat format")
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("unexpected /proc stat format")
	}
	return (utime + stime) / clockTicks, nil
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100
