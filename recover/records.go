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
	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/internal/statedir"
	"github.com/pantty/pantty/seat/state"
)

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
	return statedir.Bind[Holder](state.HomeTmpDir(home), holderPath(home), state.ReadRegular)
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
		state.ErrUnobservable, e.age.Round(time.Second), stuckIntervals, e.holder)
}

func (e errStuck) Unwrap() error { return state.ErrUnobservable }

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
	start, _ := procid.Start(os.Getpid())
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
