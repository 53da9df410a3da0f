package telemetry

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/state"
)

// RecoverReader reads recover's health verdict on one seat. This is the seam
// between telemetry and recover/: recover owns health.toml's format (its type
// lives in package recover, which telemetry may not import), so it can hand
// its own reader to telemetry.Reader{Recover: ...}, wired in cmd/pantty. A
// reader must read files only: no lock, no process, no tmux. The ladder floor
// (recovery.toml) and provider blocks (providers.toml) have their types in
// package seat and are read directly.
type RecoverReader func(s state.Seat, now time.Time) Health

func (r Reader) healthOf(s state.Seat, now time.Time) Health {
	if r.Recover != nil {
		return r.Recover(s, now)
	}
	return ReadHealthFile(s, now)
}

// Files recover writes (docs/recover.md, "Files").
const (
	HealthFile    = "health.toml"       // per seat: the last verdict
	LastSweepFile = "recover-last.toml" // per state root: the last sweep, with its interval
)

// healthRecord is the part of health.toml this default reader relies on
// (docs/telemetry.md, "What telemetry reads from recover"); the rest of the
// file is recover's and is left to it.
type healthRecord struct {
	Verdict string        `toml:"verdict"` // ok, dead, unknown
	Reason  string        `toml:"reason"`
	Cause   string        `toml:"cause"`
	Class   machine.Class `toml:"class"`
	Action  string        `toml:"action"`
	Result  string        `toml:"result"`
	At      time.Time     `toml:"at"`
}

// ReadHealthFile is the default RecoverReader. Without health.toml the verdict
// is unknown ("no recover verdict"). With it, the verdict and its reason are
// read leniently (recover validates its own file); a verdict older than twice
// the scheduler interval recorded in recover-last.toml is stale — recover has
// stopped sweeping, so the verdict no longer describes the seat.
func ReadHealthFile(s state.Seat, now time.Time) Health {
	var h healthRecord
	switch err := decodeLenient(filepath.Join(s.Dir, HealthFile), &h); {
	case errors.Is(err, fs.ErrNotExist):
		return Health{Meta: Meta{State: Unknown, Why: "no recover verdict (health.toml absent)"}}
	case err != nil:
		return Health{Meta: Meta{State: Error, Why: err.Error()}}
	case h.Verdict != "ok" && h.Verdict != "dead" && h.Verdict != "unknown":
		return Health{Meta: Meta{State: Error, Why: fmt.Sprintf("health.toml: verdict = %q is not ok, dead or unknown", h.Verdict)}}
	}
	var parts []string
	for _, p := range []struct{ k, v string }{{"", h.Reason}, {"cause", h.Cause}, {"class", string(h.Class)}, {"action", h.Action}, {"result", h.Result}} {
		switch {
		case p.v == "":
		case p.k == "":
			parts = append(parts, p.v)
		default:
			parts = append(parts, p.k+" "+p.v)
		}
	}
	why := strings.Join(parts, "; ")
	judged := Known
	bound := "health.toml of this seat (written by recover)"
	var last state.LastSweep
	if err := decodeLenient(filepath.Join(s.Home, LastSweepFile), &last); err == nil && last.Interval.Duration > 0 {
		bound += fmt.Sprintf(", judged against recover-last.toml's interval of %s", last.Interval.Duration)
		if now.Sub(h.At) > 2*last.Interval.Duration {
			judged = Stale
			why = fmt.Sprintf("verdict %s old, beyond twice recover's interval of %s (recover is not sweeping); it said: %s",
				roundAge(now.Sub(h.At)), last.Interval.Duration, why)
		}
	}
	return Health{Meta: meta(judged, why, bound, h.At, now), Verdict: ptr(h.Verdict),
		revived: h.Verdict == "dead" && strings.HasPrefix(h.Result, "verified")}
}

// decodeLenient reads a TOML file written by another layer, refusing symlinks;
// keys it does not name are ignored (their owner validates them).
func decodeLenient(path string, v any) error {
	data, err := readFileNoLink(path)
	if err != nil {
		return err
	}
	if _, err := toml.Decode(string(data), v); err != nil {
		return fmt.Errorf("%s: %v", filepath.Base(path), err)
	}
	return nil
}

// Sweep is recover's last sweep of a state root as `status --json` shows it
// (`last_sweep`): a fleet's status reads every host's from there, so a host
// whose scheduler stopped is seen from the one terminal that lists them all.
type Sweep struct {
	At              time.Time `json:"at"`
	AgeSeconds      float64   `json:"age_seconds"`
	IntervalSeconds float64   `json:"interval_seconds"`
	ExitCode        int       `json:"exit_code"`
	// Stale: the sweep is older than twice its interval, so the scheduler
	// entry on that host is not running it.
	Stale bool `json:"stale"`
}

// ReadSweep reads recover-last.toml under home; nil when no sweep has run
// (or the record cannot be read), which status prints as null, never as a
// sweep at the epoch.
func ReadSweep(home string, now time.Time) *Sweep {
	var l state.LastSweep
	if decodeLenient(filepath.Join(home, LastSweepFile), &l) != nil || l.At.IsZero() {
		return nil
	}
	age := now.Sub(l.At)
	return &Sweep{At: l.At.UTC(), AgeSeconds: age.Seconds(), IntervalSeconds: l.Interval.Seconds(), ExitCode: l.Code,
		Stale: l.Interval.Duration > 0 && age > 2*l.Interval.Duration}
}
