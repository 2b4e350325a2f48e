// Command etcd is a minimal single-member etcd for the end-to-end tests: it
// serves clients on one loopback URL, keeps its data in one directory and
// stops cleanly on SIGINT or SIGTERM. It is never shipped.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "directory for the member's data (required)")
	clientURL := flag.String("listen-client-url", "http://127.0.0.1:2379", "loopback URL clients connect to")
	peerURL := flag.String("listen-peer-url", "http://127.0.0.1:2380", "loopback URL for the (unused) peer listener")
	flag.Parse()
	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "etcd: --data-dir is required")
		os.Exit(2)
	}
	if err := run(*dataDir, *clientURL, *peerURL); err != nil {
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		os.Exit(1)
	}
}

func run(dataDir, clientURL, peerURL string) error {
	client, err := url.Parse(clientURL)
	if err != nil {
		return fmt.Errorf("parse client url: %w", err)
	}
	peer, err := url.Parse(peerURL)
	if err != nil {
		return fmt.Errorf("parse peer url: %w", err)
	}
	cfg := embed.NewConfig()
	cfg.Name = "e2e"
	cfg.Dir = dataDir
	cfg.ListenClientUrls = []url.URL{*client}
	cfg.AdvertiseClientUrls = []url.URL{*client}
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	cfg.QuotaBackendBytes = 512 << 20

	server, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer server.Close()
	select {
	case <-server.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		return fmt.Errorf("not ready within 60s")
	}
	fmt.Fprintf(os.Stderr, "etcd: ready on %s\n", clientURL)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-stop:
		return nil
	case err := <-server.Err():
		return fmt.Errorf("serve: %w", err)
	}
}
