package follower

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
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
// --max-stale counts across a restart (decision); read back, that time is
// clamped to the present, so a file time in the future cannot switch
// --max-stale off (issue 38).
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

// readState reads the state file of dir (errNoState when there is none) as
// of now. The file must be the plain file this follower wrote (issue 38): it
// is opened without following a symbolic link and without blocking (a FIFO
// hung the follower's start), must be a regular file, and is read through
// maxStateBytes (a link to /dev/zero exhausted its memory).
func readState(dir string, now time.Time) (*state, error) {
	p := filepath.Join(dir, StateFile)
	f, err := openState(p, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoState
	}
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read-only
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxStateBytes {
		return nil, fmt.Errorf("%s is %d bytes, above %d", p, fi.Size(), maxStateBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxStateBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxStateBytes {
		return nil, fmt.Errorf("%s is above %d bytes", p, maxStateBytes)
	}
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	s.syncedAt = fi.ModTime()
	if s.syncedAt.After(now) {
		s.syncedAt = now
	}
	return &s, nil
}

// openState opens the state file at p with flag, never following a
// symbolic link and never blocking on a FIFO or a device, and refuses
// anything but a regular file.
func openState(p string, flag int) (*os.File, error) {
	f, err := os.OpenFile(p, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link, not the state file this follower wrote", p)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s), not the state file this follower wrote", p, fi.Mode().Type())
	}
	if err != nil {
		f.Close() //nolint:errcheck,gosec // refused already
		return nil, err
	}
	return f, nil
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
	if err := setStateTime(dir, now); err != nil {
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
// file stays missing, and what is not the plain state file is not touched.
func touchState(dir string, t time.Time) {
	_ = setStateTime(dir, t) //nolint:errcheck // best effort: the next snapshot writes it
}

// setStateTime sets the state file's times to t through the file itself
// (openState): never the target of a link put in its place.
func setStateTime(dir string, t time.Time) error {
	f, err := openState(filepath.Join(dir, StateFile), os.O_RDONLY)
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // read-only
	tv := syscall.NsecToTimeval(t.UnixNano())
	return syscall.Futimes(int(f.Fd()), []syscall.Timeval{tv, tv})
}
