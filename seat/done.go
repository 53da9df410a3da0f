package seat

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/pantty/pantty/internal/fsatomic"
)

// Cleanup is cleanup.toml, the finalizer's marker (the polecat pattern): a seat
// that finished its work leaves it, `pantty recover` verifies the workdir (clean,
// nothing unpushed), stops the seat and removes the marker. The marker's
// existence IS the pending cleanup; there is no other queue. A failed check
// leaves it, with the reason, and the next sweep tries again.
type Cleanup struct {
	RequestedAt time.Time `toml:"requested_at"`
	By          string    `toml:"by"`                     // who asked: "seat done" and from where
	Attempts    int       `toml:"attempts"`               // sweeps that tried and failed
	LastAt      time.Time `toml:"last_at,omitempty"`      // the last failed attempt
	LastError   string    `toml:"last_error,omitempty"`   // why it failed
	LastChecked string    `toml:"last_checked,omitempty"` // the checks it ran
}

// CleanupPath is cleanup.toml.
func (s Seat) CleanupPath() string { return s.path("cleanup.toml") }

// MarkDone leaves the cleanup marker for a seat that finished its work. A marker
// already there is kept as it is (its history is the retry record): done is
// idempotent. It reports whether a new marker was written.
func MarkDone(s Seat, by string, now time.Time) (bool, error) {
	if _, err := s.CleanupFile().Read(); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("seat %q: %w", s.Name, err)
	}
	if err := s.Ensure(); err != nil {
		return false, err
	}
	m := Cleanup{RequestedAt: now.UTC(), By: by}
	if err := s.CleanupFile().Write(m); err != nil {
		return false, err
	}
	return true, nil
}

// RemoveCleanup removes the marker once the seat is torn down.
func (s Seat) RemoveCleanup() error {
	err := os.Remove(s.CleanupPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return fsatomic.SyncDir(s.Dir)
}
