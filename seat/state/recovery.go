package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/statedir"
)

// HarnessExit is harness-exit.toml: the last time the seat's harness exited,
// with the words its pane showed, captured before the pane is respawned (a
// respawn clears them). It is how a person, `status` and `pantty recover` learn
// why a harness will not stay up — "Invalid API key", "ENOTFOUND", "command not
// found" — in the harness's own words instead of a silent relaunch loop.
type HarnessExit struct {
	At          time.Time `toml:"at"`
	Why         string    `toml:"why"`          // how the driver noticed (pane dead, session gone)
	Status      int       `toml:"status"`       // the pane's exit status, when tmux kept the pane
	Launch      int       `toml:"launch"`       // session.toml's launch count at that launch
	BeforeReady bool      `toml:"before_ready"` // the harness never came up on that launch
	InARow      int       `toml:"in_a_row"`     // launches in a row that ended before ready
	GaveUp      bool      `toml:"gave_up"`      // the driver stopped relaunching and exited
	Lines       []string  `toml:"lines"`        // the pane's last non-empty lines
}

// HarnessExitPath is harness-exit.toml.
func (s Seat) HarnessExitPath() string { return s.path("harness-exit.toml") }

// Words is the exit's last lines as one line for a log, status or a report.
func (h HarnessExit) Words() string {
	if len(h.Lines) == 0 {
		return "(the pane showed nothing)"
	}
	return JoinLines(h.Lines)
}

// JoinLines puts a pane's or a log's last lines on one line, " | " between
// them, a line repeated in a row said once with its count: a harness that
// failed the same way at each of three launches showed "failing at start-up"
// six times over in status and recover's report.
func JoinLines(lines []string) string {
	var out []string
	for i := 0; i < len(lines); {
		j := i + 1
		for j < len(lines) && lines[j] == lines[i] {
			j++
		}
		if n := j - i; n > 1 {
			out = append(out, fmt.Sprintf("%s (×%d)", lines[i], n))
		} else {
			out = append(out, lines[i])
		}
		i = j
	}
	return strings.Join(out, " | ")
}

// LastLine is the exit's last line, for a one-line heartbeat.
func (h HarnessExit) LastLine() string {
	if len(h.Lines) == 0 {
		return "(nothing)"
	}
	return h.Lines[len(h.Lines)-1]
}

// MaxLaunchFailures is how many launches in a row may end before the harness
// came up before the driver stops relaunching and exits with the harness's
// words: a missing key, a broken binary or no network do not fix themselves in
// seconds, and a driver that relaunches forever says nothing to anyone. A
// waiting `seat start` exits 1 with the words; `pantty recover` tries again on
// its own schedule, with its backoff.
const MaxLaunchFailures = 3

// Recovery is recovery.toml, written by `pantty recover` only: the demotion
// floor and the failure bookkeeping. The driver reads the floor; the running
// rung is never stored: it is derived from the floor and the provider blocks
// each time (Plan), so a seat that moved to another engine during a provider
// wait comes back by itself when the wait ends.
type Recovery struct {
	Floor         string    `toml:"floor"`                 // the best rung the seat may run ("" = the top)
	FloorSince    time.Time `toml:"floor_since,omitempty"` // good turns are counted from here
	FloorWhy      string    `toml:"floor_why,omitempty"`
	MeansFailures int       `toml:"means_failures"` // unverified means recoveries on this floor
	Failures      int       `toml:"failures"`       // consecutive unverified recoveries (drives the backoff)
	NextAttempt   time.Time `toml:"next_attempt,omitempty"`
	LastCause     string    `toml:"last_cause,omitempty"`
	LastAction    string    `toml:"last_action,omitempty"`
	LastResult    string    `toml:"last_result,omitempty"`
	LastAt        time.Time `toml:"last_at,omitempty"`
	Revived       int       `toml:"revived"` // verified recoveries, ever
}

// RecoveryPath is recovery.toml.
func (s Seat) RecoveryPath() string { return s.path("recovery.toml") }

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

// CleanupFile is cleanup.toml: the marker of a seat that finished its work; its existence is the pending cleanup.
func (s Seat) CleanupFile() statedir.File[Cleanup] { return bind[Cleanup](s, s.CleanupPath()) }

// HarnessExitFile is harness-exit.toml: how the harness last ended, with the words its pane showed.
func (s Seat) HarnessExitFile() statedir.File[HarnessExit] {
	return bind[HarnessExit](s, s.HarnessExitPath())
}

// RecoveryFile is recovery.toml: the ladder's floor and failure bookkeeping (the running rung is derived, never stored).
func (s Seat) RecoveryFile() statedir.File[Recovery] { return bind[Recovery](s, s.RecoveryPath()) }
