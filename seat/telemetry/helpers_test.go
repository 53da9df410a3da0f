package telemetry_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// TestMain fails the package if a test leaves a tmux server, driver or
// simulated harness behind (only the end-to-end test starts any).
func TestMain(m *testing.M) { os.Exit(seattest.Main(m)) }

// t0 is the fixed "now" of the file-built tests.
var t0 = time.Date(2026, 8, 10, 12, 0, 0, 0, time.UTC)

// fixture is a state root whose seats' files are written directly, the way the
// driver, the hooks and recover write them: no tmux, no driver, no harness.
type fixture struct {
	t    *testing.T
	home string
	work string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{t: t, home: filepath.Join(dir, "home"), work: filepath.Join(dir, "work")}
	if err := os.MkdirAll(f.work, 0o700); err != nil {
		t.Fatal(err)
	}
	return f
}

// seat creates a seat with its directories and a seat.toml; extra lines are
// added to seat.toml (e.g. `model = "declared-a"`).
func (f *fixture) seat(name string, extra ...string) state.Seat {
	f.t.Helper()
	s, err := state.Open(f.home, name)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		f.t.Fatal(err)
	}
	f.config(s, extra...)
	return s
}

// bareSeat creates a seat with nothing but its seat.toml.
func (f *fixture) bareSeat(name string) state.Seat {
	f.t.Helper()
	s, err := state.Open(f.home, name)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		f.t.Fatal(err)
	}
	f.config(s)
	return s
}

func (f *fixture) config(s state.Seat, extra ...string) {
	f.t.Helper()
	text := fmt.Sprintf("name = %q\nharness = \"sim\"\nworkdir = %q\n%s\n", s.Name, f.work, strings.Join(extra, "\n"))
	if err := os.WriteFile(s.ConfigPath(), []byte(text), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

// write stores v as the TOML state file path of s, atomically.
func write(t *testing.T, s state.Seat, path string, v any) {
	t.Helper()
	if err := fsatomic.WriteState(s.TmpDir(), path, v); err != nil {
		t.Fatal(err)
	}
}

func contextPath(s state.Seat) string { return filepath.Join(s.Dir, "context.toml") }

func session(t *testing.T, s state.Seat, id string) {
	t.Helper()
	write(t, s, s.SessionPath(), state.Session{Harness: "sim", ID: id, Generation: 1, Why: "first start",
		TmuxName: s.Name, PaneID: "%1", PanePID: 4242, Launches: 1, LaunchedAt: t0.Add(-time.Hour)})
	write(t, s, s.LaunchPath(), state.LaunchFile{Argv: []string{"/bin/pantty", "sim", "--session-id", id}, Dir: "/"})
}

func heartbeat(t *testing.T, s state.Seat, at time.Time, phase string) {
	t.Helper()
	write(t, s, s.HeartbeatPath(), state.Heartbeat{At: at, Phase: phase,
		Interval: config.Duration{Duration: 30 * time.Second}, PID: 4242, Holder: "h-0001"})
}

// event records a hook event the way `pantty hook` does, then (seen) moves it
// to events/seen/ as the driver does once it consumed it.
func event(t *testing.T, s state.Seat, kind string, at time.Time, payload map[string]any, seen bool) string {
	t.Helper()
	b, _ := json.Marshal(payload)
	name, err := s.WriteEvent(kind, b, at)
	if err != nil {
		t.Fatal(err)
	}
	if seen {
		if err := s.MarkSeen(name); err != nil {
			t.Fatal(err)
		}
	}
	return name
}

// asJSON round-trips v through JSON into a generic map.
func asJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
