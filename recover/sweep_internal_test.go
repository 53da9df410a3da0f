package recover

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat/state"
)

// A revival is judged on the sweep's clock, like the verdict that led to it:
// a new driver's heartbeat one second old on the injected clock is fresh,
// however far that clock is from the wall's (it read the wall clock, and
// called a fresh heartbeat years stale).
func TestARevivalIsJudgedOnTheSweepsClock(t *testing.T) {
	t.Parallel()
	s, err := state.Open(filepath.Join(t.TempDir(), "home"), "clock")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	pid := os.Getpid()
	start, err := procid.Start(pid)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if err := s.OwnerFile().Write(state.Owner{Holder: "h-new", PID: pid, PIDStart: start, Host: host, Started: now.Add(-2 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	hb := state.Heartbeat{At: now.Add(-time.Second), Phase: state.PhaseStarting, Interval: config.Duration{Duration: time.Second}, PID: pid, Holder: "h-new"}
	if err := s.HeartbeatFile().Write(hb); err != nil {
		t.Fatal(err)
	}
	sw := &sweeper{opts: Options{Now: func() time.Time { return now }}, now: now}
	ok, why := sw.revived(&observation{s: s}, now.Add(-2*time.Second))
	if ok || !strings.Contains(why, "not up yet") {
		t.Fatalf("a heartbeat 1s old on the sweep's clock: revived %v, %q; want the harness judged next (not up yet)", ok, why)
	}
}

// The exit code and the revived count read whether a revival was verified
// from the report's typed field, never from the words of its result.
func TestExitCodeReadsTheVerifiedField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		seat SeatReport
		code int
	}{
		{SeatReport{Verdict: Dead, Result: "verified-looking words from a reason", revived: false}, 1},
		{SeatReport{Verdict: Dead, Result: "verified on rung b", revived: true}, 0},
		{SeatReport{Verdict: Dead, Result: "not verified: no live driver yet"}, 1},
		{SeatReport{Verdict: OK}, 0},
		{SeatReport{Verdict: Unknown, revived: true}, 4},
	} {
		if got := exitCode(Report{Seats: []SeatReport{c.seat}}); got != c.code {
			t.Errorf("%+v: exit %d, want %d", c.seat, got, c.code)
		}
	}
}

// A seat judged dead is left alone when, by the time recover would act, the
// person stopped it or another driver holds it: the soak's 'seat stop' and
// 'seat start' during a sweep had recover ask the new driver to release the
// seat, and the start failed with "driver exited before the seat was ready".
func TestASeatThatMovedWhileRecoverLookedIsLeftAlone(t *testing.T) {
	t.Parallel()
	s, err := state.Open(filepath.Join(t.TempDir(), "home"), "moved")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := s.SetIntent(state.IntentRunning, "seat start"); err != nil {
		t.Fatal(err)
	}
	judged := readFiles(s, now, nil)
	if judged.ownerLive {
		t.Fatal("no owner was recorded, and the observation has a live one")
	}
	if why := moved(judged); why != "" {
		t.Fatalf("nothing changed, and moved says %q", why)
	}

	// A person's start: a live driver (this process) now holds the seat.
	pid := os.Getpid()
	start, err := procid.Start(pid)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if err := s.OwnerFile().Write(state.Owner{Holder: "h-started", PID: pid, PIDStart: start, Host: host, Started: now}); err != nil {
		t.Fatal(err)
	}
	if why := moved(judged); !strings.Contains(why, "changed hands") || !strings.Contains(why, "h-started") {
		t.Fatalf("a new live driver since the observation: moved says %q", why)
	}
	if why := moved(readFiles(s, now, nil)); why != "" {
		t.Fatalf("the same live driver as observed: moved says %q", why)
	}
	// The driver this sweep started itself (an unverified revival whose new
	// driver lives on) is not a move: the failure is counted.
	judged.spawned = pid
	if why := moved(judged); why != "" {
		t.Fatalf("the driver recover started itself holds the seat: moved says %q, want it counted", why)
	}
	judged.spawned = 0

	// A person's stop.
	if err := s.SetIntent(state.IntentStopped, "seat stop"); err != nil {
		t.Fatal(err)
	}
	if why := moved(judged); !strings.Contains(why, `"stopped"`) || !strings.Contains(why, "seat stop") {
		t.Fatalf("stopped since the observation: moved says %q", why)
	}
}
