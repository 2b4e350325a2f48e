package rolloutloader

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
)

// observed records the rollouts put in force (their ids; "" for none).
type observed struct {
	mu  sync.Mutex
	ids []string
}

func (o *observed) RolloutInForce(r *rollout.Rollout) {
	o.mu.Lock()
	defer o.mu.Unlock()
	id := ""
	if r != nil {
		id = r.ID
	}
	o.ids = append(o.ids, id)
}

func (o *observed) count() int { o.mu.Lock(); defer o.mu.Unlock(); return len(o.ids) }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestTheRolloutIsReloadedAndABadDocumentKeepsTheLastGoodOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rollout.yaml")
	write(t, path, "candidate: {watchSeconds: 20}\n")
	first, err := Load(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	store := NewStore(first)
	obs := &observed{}
	var log syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Watch(ctx, store, Options{Path: path}, 20*time.Millisecond, slog.New(slog.NewJSONHandler(&log, nil)), obs)
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })

	write(t, path, "candidate: {watchSeconds: 20}\nstage: canary\ncanary: {percent: 5}\n")
	eventually(t, "the canary", func() bool { r := store.Current(); return r != nil && r.Stage == rollout.StageCanary })
	canary := store.Current()

	write(t, path, "candidate: {watchSeconds: soon}\nstage: blue\n")
	eventually(t, "the rejected reload", func() bool { l := store.LastReload(); return l != nil && !l.OK })
	if store.Current() != canary {
		t.Error("a bad document replaced the last good rollout")
	}
	if got := len(store.LastReload().Problems); got != 2 {
		t.Errorf("%d problems recorded, want 2 (every problem at once): %q", got, store.LastReload().Problems)
	}
	if !strings.Contains(log.String(), `"msg":"rollout reload rejected; keeping the last good one"`) || !strings.Contains(log.String(), `"problem_count":2`) {
		t.Errorf("no ERROR line with every problem:\n%s", log.String())
	}

	write(t, path, "")
	eventually(t, "the rollout removed", func() bool { return store.Current() == nil })
	if l := store.LastReload(); !l.OK {
		t.Errorf("removing the rollout is a good reload: %+v", l)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	write(t, path, "candidate: {watchSeconds: 20}\n")
	eventually(t, "the rollout back", func() bool { return store.Current() != nil })
	if n := obs.count(); n != 3 {
		t.Errorf("%d rollouts put in force, want 3 (canary, none, shadow): %q", n, obs.ids)
	}
	if !strings.Contains(log.String(), `"msg":"rollout removed"`) || !strings.Contains(log.String(), `"msg":"rollout loaded"`) {
		t.Errorf("log:\n%s", log.String())
	}
}

func TestARolloutRewrittenInPlaceIsNeverPutInForceAsItsPrefix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rollout.yaml")
	store := NewStore(nil)
	obs := &observed{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Watch(ctx, store, Options{Path: path}, 10*time.Millisecond, slog.New(slog.DiscardHandler), obs)
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })

	// The first chunk alone is a valid rollout (a shadow); the whole is a canary.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []string{"candidate: {watchSeconds: 20}\n", "stage: canary\n", "canary: {percent: 5}\n"} {
		if _, err := f.WriteString(chunk); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond) // less than the settle interval
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the canary", func() bool { r := store.Current(); return r != nil && r.Stage == rollout.StageCanary })
	if n := obs.count(); n != 1 {
		t.Errorf("%d rollouts put in force, want only the whole document's: %q", n, obs.ids)
	}
}
