package recover

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/internal/statedir"
	"github.com/pantty/pantty/seat"
)

// Health is health.toml in a seat's directory: the last verdict recover
// recorded, with what it saw. It is rewritten on every sweep that observes the
// seat (the one write a healthy seat costs); Since and Launches let the next
// sweep tell a lasting condition from a passing one.
type Health struct {
	At       time.Time     `toml:"at"`
	Verdict  string        `toml:"verdict"`         // ok, dead or unknown
	Cause    string        `toml:"cause,omitempty"` // see the Cause* constants
	Class    machine.Class `toml:"class,omitempty"` // means, for a dead seat
	Reason   string        `toml:"reason"`
	Action   string        `toml:"action,omitempty"`
	Result   string        `toml:"result,omitempty"`
	Since    time.Time     `toml:"since,omitempty"` // when this cause was first seen (not ok only)
	Phase    string        `toml:"phase,omitempty"`
	Session  string        `toml:"session,omitempty"`
	Launches int           `toml:"launches"` // session.toml's launch count when observed
	Rung     string        `toml:"rung,omitempty"`
	Floor    string        `toml:"floor,omitempty"`
	Waiting  string        `toml:"waiting,omitempty"`
}

// HealthPath is health.toml of s.
func HealthPath(s seat.Seat) string { return filepath.Join(s.Dir, "health.toml") }

// HealthFile is health.toml of s bound to its record (statedir): recover
// alone writes it.
func HealthFile(s seat.Seat) statedir.File[Health] {
	return statedir.Bind[Health](s.TmpDir(), HealthPath(s), seat.ReadRegular)
}

// ReadHealth reads health.toml; a missing file wraps fs.ErrNotExist.
func ReadHealth(s seat.Seat) (Health, error) { return HealthFile(s).Read() }

// LastSweepPath is $PANTTY_HOME/recover-last.toml.
func LastSweepPath(home string) string { return filepath.Join(home, "recover-last.toml") }

// LastSweepFile is recover-last.toml bound to its record.
func LastSweepFile(home string) statedir.File[seat.LastSweep] {
	return statedir.Bind[seat.LastSweep](seat.HomeTmpDir(home), LastSweepPath(home), seat.ReadRegular)
}

// ReadLastSweep reads the last-sweep record.
func ReadLastSweep(home string) (seat.LastSweep, error) { return LastSweepFile(home).Read() }

// Holder is $PANTTY_HOME/recover-owner.toml: the run holding recover.lock,
// named by pid and start time like a seat's owner, so a second run can say who
// is sweeping and a stuck holder is named precisely.
type Holder struct {
	PID      int       `toml:"pid"`
	PIDStart uint64    `toml:"pid_start"`
	Host     string    `toml:"host"`
	Started  time.Time `toml:"started"`
}

func (h Holder) String() string {
	return fmt.Sprintf("pantty recover pid %d (start %d) on %s since %s", h.PID, h.PIDStart, h.Host, h.Started.Format(time.RFC3339))
}

func holderPath(home string) string { return filepath.Join(home, "recover-owner.toml") }

// holderFile is recover-owner.toml bound to its record.
func holderFile(home string) statedir.File[Holder] {
	return statedir.Bind[Holder](seat.HomeTmpDir(home), holderPath(home), seat.ReadRegular)
}
func lockPath(home string) string { return filepath.Join(home, "recover.lock") }

// sweepLock is the one global lock: one sweep at a time per state root.
type sweepLock struct{ fl *flock.Flock }

// errBusy is returned when another run holds the lock (not stuck): exit 0.
type errBusy struct{ holder string }

func (e errBusy) Error() string { return "another recover run is sweeping: " + e.holder }

// errStuck is returned when the holder has held the lock longer than a few
// intervals: exit 4, naming it, instead of exiting 0 forever.
type errStuck struct {
	holder string
	age    time.Duration
}

func (e errStuck) Error() string {
	return fmt.Sprintf("%v: recover.lock has been held for %s, longer than %d intervals, by %s",
		seat.ErrUnobservable, e.age.Round(time.Second), stuckIntervals, e.holder)
}

func (e errStuck) Unwrap() error { return seat.ErrUnobservable }

// stuckIntervals is how many scheduler intervals a sweep may hold the lock
// before the next run reports it stuck: a sweep that revives several seats can
// legitimately outlast one interval, not five.
const stuckIntervals = 5

// lockSweep takes recover.lock without waiting and records the holder.
func lockSweep(home string, interval time.Duration, now time.Time) (*sweepLock, error) {
	fl := flock.New(lockPath(home), flock.SetPermissions(fsatomic.FileMode))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", lockPath(home), err)
	}
	if !ok {
		name := "an unknown process (recover-owner.toml unreadable)"
		h, herr := holderFile(home).Read()
		if herr == nil {
			name = h.String()
		}
		if herr == nil && now.Sub(h.Started) > stuckIntervals*interval {
			return nil, errStuck{holder: name, age: now.Sub(h.Started)}
		}
		return nil, errBusy{holder: name}
	}
	start, _ := seat.ProcStart(os.Getpid())
	host, _ := os.Hostname()
	h := Holder{PID: os.Getpid(), PIDStart: start, Host: host, Started: now.UTC()}
	if err := holderFile(home).Write(h); err != nil {
		fl.Unlock()
		return nil, err
	}
	return &sweepLock{fl: fl}, nil
}

func (l *sweepLock) release() {
	if l != nil && l.fl != nil {
		l.fl.Unlock()
	}
}

// readOptional reads a state file into v; a missing file is (false, nil).
func readOptional[T any](f statedir.File[T], v *T) (bool, error) {
	var err error
	*v, err = f.Read()
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
