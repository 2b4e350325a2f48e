package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The app's log lines the test reads (test/e2e/node): the first read says
// whether the rendered file was there when the app started; each document
// line carries the time the app saw it (Unix milliseconds) and the document
// on one line.
const (
	firstReadFound   = "app: first read: found"
	firstReadMissing = "app: first read: missing"
	documentPrefix   = "app: document "
)

// runApp reads PATH as an application reads its configuration: `app once
// PATH` waits for it, logs it and exits 0 (a Job's main container); `app
// watch PATH` logs it and every change of it until SIGTERM (a Deployment's).
func runApp(args []string) error {
	if len(args) != 2 || (args[0] != "once" && args[0] != "watch") {
		return errors.New("usage: standin app once|watch PATH")
	}
	mode, path := args[0], args[1]
	log.SetFlags(0)
	log.Print(networkLine())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var last string
	for first := true; ; first = false {
		doc, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if first {
				log.Print(firstReadMissing)
			}
		case err != nil:
			return fmt.Errorf("read %s: %w", path, err)
		default:
			if first {
				log.Print(firstReadFound)
			}
			if text := strings.ReplaceAll(strings.TrimSpace(string(doc)), "\n", " "); text != last {
				last = text
				log.Printf("%s%d %s", documentPrefix, time.Now().UnixMilli(), text)
				if mode == "once" {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// networkLine says what the pod's network offers: its routes (from
// /proc/net/route; "default" for 0.0.0.0/0) and its nameservers. The tier
// asserts that pods have no default route and only the cluster DNS.
func networkLine() string {
	var routes []string
	if data, err := os.ReadFile("/proc/net/route"); err == nil {
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 8 {
				continue
			}
			dst, mask := hexIP(f[1]), hexIP(f[7])
			if dst == "0.0.0.0" && mask == "0.0.0.0" {
				routes = append(routes, "default")
				continue
			}
			ones, _ := net.IPMask(net.ParseIP(mask).To4()).Size()
			routes = append(routes, fmt.Sprintf("%s/%d", dst, ones))
		}
	}
	var servers []string
	if data, err := os.ReadFile("/etc/resolv.conf"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "nameserver" {
				servers = append(servers, f[1])
			}
		}
	}
	return fmt.Sprintf("app: network: routes %s; nameservers %s", strings.Join(routes, " "), strings.Join(servers, " "))
}

// hexIP reads /proc/net/route's little-endian hex IPv4 address.
func hexIP(h string) string {
	v, err := strconv.ParseUint(h, 16, 32)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%d.%d.%d.%d", byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}
