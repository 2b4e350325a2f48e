package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// The agent contract's flags (spec 03 §3.2): those taking a value and the
// bare ones. The stand-in honours the consul store's subset (agentConfig);
// any other contract flag is refused by name, so a plan that asks for more
// than the stand-in does fails loudly instead of rendering something else.
var (
	contractValueFlags = map[string]bool{
		"--source": true, "--endpoint": true, "--key": true, "--out": true, "--section": true,
		"--auth": true, "--auth-mount": true, "--auth-role": true, "--auth-username": true,
		"--auth-token-path": true, "--namespace": true, "--ref": true, "--api-url": true,
		"--startup-policy": true, "--on-delete": true, "--max-document-bytes": true,
		"--max-staleness": true, "--ssh-key": true, "--ca": true, "--tls-server-name": true,
		"--file-mode": true, "--template-inline": true, "--template": true, "--schema": true,
		"--tls-cert": true, "--tls-key": true, "--watch": true, "--also": true,
		"--notify-http": true, "--on-drift": true, "--history": true, "--timeout": true,
		"--canary": true, "--revoke-grace": true, "--metrics-addr": true,
	}
	contractBareFlags = map[string]bool{
		"--tls-skip-verify": true, "--dynamic": true, "--meta": true, "--no-revoke-on-shutdown": true,
		"--no-tls-reload": true, "--require-ack": true, "--events": true,
	}
	honoured = map[string]bool{
		"--source": true, "--endpoint": true, "--key": true, "--out": true,
		"--file-mode": true, "--watch": true, "--metrics-addr": true,
	}
)

// agentConfig is what the stand-in reads from its arguments and environment.
type agentConfig struct {
	endpoint    string        // --endpoint, or DYNAMIC_CONFIG_AGENT_ENDPOINT
	key         string        // --key
	out         string        // --out
	fileMode    os.FileMode   // --file-mode (0640 when not given)
	watch       time.Duration // --watch; 0 = one-shot (the init agent)
	metricsAddr string        // --metrics-addr: /readyz after the first render
	token       string        // DYNAMIC_CONFIG_AGENT_TOKEN: X-Consul-Token
}

func parseAgentArgs(args []string) (agentConfig, error) {
	c := agentConfig{fileMode: 0o640, endpoint: os.Getenv("DYNAMIC_CONFIG_AGENT_ENDPOINT"), token: os.Getenv("DYNAMIC_CONFIG_AGENT_TOKEN")}
	source := ""
	for i := 0; i < len(args); i++ {
		flag := args[i]
		switch {
		case contractBareFlags[flag]:
			return c, fmt.Errorf("%s is a contract flag the stand-in does not honour", flag)
		case !contractValueFlags[flag]:
			return c, fmt.Errorf("%s is not a flag of the agent contract", flag)
		case !honoured[flag]:
			return c, fmt.Errorf("%s is a contract flag the stand-in does not honour", flag)
		case i+1 == len(args):
			return c, fmt.Errorf("%s needs a value", flag)
		}
		i++
		v := args[i]
		switch flag {
		case "--source":
			source = v
		case "--endpoint":
			c.endpoint = v
		case "--key":
			c.key = v
		case "--out":
			c.out = v
		case "--file-mode":
			m, err := strconv.ParseUint(v, 8, 32)
			if err != nil {
				return c, fmt.Errorf("--file-mode %q: %w", v, err)
			}
			c.fileMode = os.FileMode(m)
		case "--watch":
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				return c, fmt.Errorf("--watch %q: %w", v, err)
			}
			c.watch = time.Duration(n) * time.Second
		case "--metrics-addr":
			c.metricsAddr = v
		}
	}
	switch {
	case source != "consul":
		return c, fmt.Errorf("--source is %q: the stand-in serves consul only", source)
	case c.endpoint == "" || c.key == "" || c.out == "":
		return c, errors.New("--endpoint (or DYNAMIC_CONFIG_AGENT_ENDPOINT), --key and --out are required")
	}
	return c, nil
}

// runAgent renders the key's value into --out: once (no --watch, the init
// agent), or again whenever the store's value changes, polling every --watch
// seconds (the watching agent), serving /readyz on --metrics-addr once the
// first render is written.
func runAgent(args []string) error {
	c, err := parseAgentArgs(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var rendered atomic.Bool
	if c.metricsAddr != "" {
		ln, err := net.Listen("tcp", c.metricsAddr)
		if err != nil {
			return fmt.Errorf("metrics listener: %w", err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			if !rendered.Load() {
				http.Error(w, "no render yet", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ok")
		})
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
		go func() { _ = http.Serve(ln, mux) }()
	}
	log.Printf("agent: consul %s key %s -> %s (mode %04o, watch %s)", c.endpoint, c.key, c.out, c.fileMode, c.watch)
	var last []byte
	poll := c.watch
	if poll == 0 {
		poll = time.Second // the one-shot agent retries until its first render
	}
	for {
		value, err := fetch(ctx, c)
		switch {
		case err != nil:
			log.Printf("agent: %v", err)
		case last == nil || string(value) != string(last):
			if err := writeAtomically(c.out, value, c.fileMode); err != nil {
				return err
			}
			last = value
			rendered.Store(true)
			log.Printf("agent: rendered %s (%d bytes)", c.out, len(value))
			if c.watch == 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			log.Print("agent: stopping")
			return nil
		case <-time.After(poll):
		}
	}
}

// fetch reads the key's raw value from consul's KV HTTP API.
func fetch(ctx context.Context, c agentConfig) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint+"/v1/kv/"+c.key+"?raw", nil)
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		req.Header.Set("X-Consul-Token", c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", c.key, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", c.key, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read %s: %s", c.key, resp.Status)
	}
	return body, nil
}

// writeAtomically replaces path with data: a reader sees the old document or
// the new one, never a part.
func writeAtomically(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".render-*")
	if err != nil {
		return fmt.Errorf("render %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("render %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("render %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("render %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("render %s: %w", path, err)
	}
	return nil
}
