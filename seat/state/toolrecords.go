package state

import (
	"path/filepath"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/internal/statedir"
)

// LastSweep is $PANTTY_HOME/recover-last.toml, written by recover: the last
// sweep that ran (not a dry run). `recover check` requires it to be younger
// than two intervals; telemetry dates a verdict by its interval and exports its
// figures.
type LastSweep struct {
	At       time.Time       `toml:"at"`
	Took     config.Duration `toml:"took"`
	PID      int             `toml:"pid"`
	Interval config.Duration `toml:"interval"`
	Seats    int             `toml:"seats"`
	OK       int             `toml:"ok"`
	Dead     int             `toml:"dead"`
	Unknown  int             `toml:"unknown"`
	Revived  int             `toml:"revived"`
	Code     int             `toml:"exit_code"`
}

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
func HealthPath(s Seat) string { return filepath.Join(s.Dir, "health.toml") }

// HealthFile is health.toml of s bound to its record (statedir): recover
// alone writes it.
func HealthFile(s Seat) statedir.File[Health] {
	return statedir.Bind[Health](s.TmpDir(), HealthPath(s), ReadRegular)
}

// ReadHealth reads health.toml; a missing file wraps fs.ErrNotExist.
func ReadHealth(s Seat) (Health, error) { return HealthFile(s).Read() }

// LastSweepPath is $PANTTY_HOME/recover-last.toml.
func LastSweepPath(home string) string { return filepath.Join(home, "recover-last.toml") }

// LastSweepFile is recover-last.toml bound to its record.
func LastSweepFile(home string) statedir.File[LastSweep] {
	return statedir.Bind[LastSweep](HomeTmpDir(home), LastSweepPath(home), ReadRegular)
}

// ReadLastSweep reads the last-sweep record.
func ReadLastSweep(home string) (LastSweep, error) { return LastSweepFile(home).Read() }

// MeasureMarker is measure.toml in a throwaway seat's directory: the token proves this
// measurement created the seat.
type MeasureMarker struct {
	Token string `toml:"token"`
}

func MeasureMarkerPath(s Seat) string { return filepath.Join(s.Dir, "measure.toml") }

// MeasureMarkerFile is measure.toml bound to its record: the token that marks a
// throwaway seat as this measurement's own.
func MeasureMarkerFile(s Seat) statedir.File[MeasureMarker] {
	return statedir.Bind[MeasureMarker](s.TmpDir(), MeasureMarkerPath(s), ReadRegular)
}
