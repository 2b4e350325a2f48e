package follower

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// StateFile is the name of the snapshot file in the state directory.
const StateFile = "installation.json"

// maxStateBytes bounds the state file read at start.
const maxStateBytes = 16 << 20

var errNoState = errors.New("no state file")

// state is the state file: the last activated snapshot. Its modification
// time is when the leader was last heard (a heartbeat touches it), so that
// --max-stale counts across a restart (decision).
type state struct {
	Revision  string `json:"revision"`
	Canonical string `json:"canonical"`
	Leader    string `json:"leader,omitempty"`
	SavedAt   string `json:"savedAt,omitempty"`
	// Rollout is the snapshot's rollout (spec 10 §6) as protobuf JSON; absent: none.
	Rollout json.RawMessage `json:"rollout,omitempty"`

	syncedAt time.Time
}

func (s *state) transport() installation.Transport {
	return installation.Transport{Revision: s.Revision, Canonical: []byte(s.Canonical)}
}

// readState reads the state file of dir (errNoState when there is none).
func readState(dir string) (*state, error) {
	p := filepath.Join(dir, StateFile)
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoState
	}
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxStateBytes {
		return nil, fmt.Errorf("%s is %d bytes, above %d", p, fi.Size(), maxStateBytes)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	s.syncedAt = fi.ModTime()
	return &s, nil
}

// writeState writes s atomically: a temporary file in dir, fsync, rename,
// fsync of the directory.
func writeState(dir string, s state, now time.Time) error {
	s.SavedAt = now.UTC().Format(time.RFC3339Nano)
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+StateFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after the rename; a leftover on failure
	if _, err := tmp.Write(data); err != nil {
		tmp.Close() //nolint:errcheck,gosec // the write failed already
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close() //nolint:errcheck,gosec // the sync failed already
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, StateFile)); err != nil {
		return err
	}
	if err := os.Chtimes(filepath.Join(dir, StateFile), now, now); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close() //nolint:errcheck // read-only directory handle
	return d.Sync()
}

// touchState marks the state file as heard from the leader at t; a missing
// file stays missing.
func touchState(dir string, t time.Time) {
	_ = os.Chtimes(filepath.Join(dir, StateFile), t, t) //nolint:errcheck // best effort: the next snapshot writes it
}
