package main

import (
	"context"
	"os"
	"testing"
	"time"

	deciderd "github.com/dynamic-config-admission/dynamic-config/decider/daemon"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
)

// fleetAge is the connection age of the in-process deciders fleet-status
// asks: short, as a fleet's is compared with the test's bounds.
const fleetAge = time.Second

// startReplica starts one decider (decider/daemon) on a loopback port 0
// holding document, with connection ageing age; the test's end stops it.
func startReplica(t *testing.T, document string, age time.Duration) *deciderd.Decider {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	d, err := deciderd.Start(ctx, deciderd.Config{
		Installation: deciderd.Installation{Load: installationloader.Options{DocumentPath: document, DocumentExplicit: true},
			ReloadInterval: time.Hour},
		Addr:             "127.0.0.1:0",
		MaxConnectionAge: age,
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.Shutdown(time.Second)
		cancel()
	})
	return d
}

// leaderDecider starts a leader decider over an installation document,
// re-read every 20 ms, as `decider --installation` would.
func leaderDecider(ctx context.Context, t *testing.T, doc, addr string) *deciderd.Decider {
	t.Helper()
	d, err := deciderd.Start(ctx, deciderd.Config{
		Installation: deciderd.Installation{Load: installationloader.Options{DocumentPath: doc, DocumentExplicit: true},
			ReloadInterval: 20 * time.Millisecond},
		Addr: addr, Cluster: "east", Reflection: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func eventually(t *testing.T, what string, within time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(start)
}
